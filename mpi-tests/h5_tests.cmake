# parallel HDF5 trajectory output (issue 4, deliverable 2): index-encoded slices written with
# collective MPI-IO and read back exactly, resume after a cut, abandon, failing creates agreed by
# all ranks (without HDF5 the test checks the MBS_ERR_UNSUPPORTED fallback)
mbs_add_test(test_h5 SOURCES test_h5.c LIBS mbs_parallel NPROCS 1 2 3 LABELS mpi TIMEOUT 300)
