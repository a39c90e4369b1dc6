# constraint-force engine (issue 3): serial core tests
mbs_add_test(test_cfs SOURCES test_cfs.c LIBS mbs_core LABELS unit TIMEOUT 600)
