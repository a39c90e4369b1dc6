# physics validation tests: closed forms, power balance and energy drift, spatial kernels
mbs_add_test(test_spatial SOURCES test_spatial.c LIBS mbs_core LABELS unit)
mbs_add_test(test_closedform SOURCES test_closedform.c LIBS mbs_core LABELS unit)
mbs_add_test(test_energy SOURCES test_energy.c LIBS mbs_core LABELS unit)
