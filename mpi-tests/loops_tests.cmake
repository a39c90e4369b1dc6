# closed loops (issue 10, docs/loops.md): the closure equations, the serial loop baseline (aba vs
# crba on the configs and on random loop models), redundancy, assembly and projection
mbs_add_test(test_loops SOURCES test_loops.c LIBS mbs_core LABELS unit TIMEOUT 600
             ARGS ${CMAKE_SOURCE_DIR}/configs)
