# the natural-coordinate formulation of seed 004 (issue 33, docs/natural.md): the dense reference
# against ABA on random chains and trees with every joint type, random loop models and the loop
# configs
mbs_add_test(test_natural SOURCES test_natural.c LIBS mbs_core LABELS unit
             ARGS ${CMAKE_SOURCE_DIR}/configs)
