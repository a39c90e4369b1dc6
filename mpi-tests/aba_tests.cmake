# the optimised ABA (src/aba.c) against the reference kernel
mbs_add_test(test_aba SOURCES test_aba.c LIBS mbs_core LABELS unit)
