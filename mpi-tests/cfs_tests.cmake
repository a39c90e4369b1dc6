# constraint-force engine (issue 3): serial core tests
mbs_add_test(test_cfs SOURCES test_cfs.c LIBS mbs_core LABELS unit TIMEOUT 600)
# the distributed engine vs ABA at several rank counts (oversubscribed on 2 cores)
mbs_add_test(test_engine SOURCES test_engine.c LIBS mbs_parallel NPROCS 1 2 3 4 8 LABELS mpi TIMEOUT 300)
# the exact elimination (schur) serially: any segmentation against ABA
mbs_add_test(test_schur SOURCES test_schur.c LIBS mbs_core LABELS unit TIMEOUT 300)
# the exact distributed solver against ABA at several rank counts (scan and component tree)
mbs_add_test(test_schur_par SOURCES test_schur_par.c LIBS mbs_parallel NPROCS 1 2 3 4 8 LABELS mpi TIMEOUT 300)
