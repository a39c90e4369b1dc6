# parallel HDF5 trajectory output (issue 4, deliverable 2): index-encoded slices written with
# collective MPI-IO and read back exactly, resume after a cut, abandon, failing creates agreed by
# all ranks (without HDF5 the test checks the MBS_ERR_UNSUPPORTED fallback)
mbs_add_test(test_h5 SOURCES test_h5.c LIBS mbs_parallel NPROCS 1 2 3 LABELS mpi TIMEOUT 300)

# outputs end to end: scripts/plot_run.sh on a pendulum run, and output.format = hdf5 at 2 ranks
# equal (bitwise) to the CSV output; the hdf5 part is skipped (exit 77) while parallel/sim.c does
# not write trajectory.h5 or h5dump (hdf5-tools) is missing
if(TARGET mbspar)
  add_test(NAME plot_run COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_h5.sh plot $<TARGET_FILE:mbspar>
                                 ${CMAKE_SOURCE_DIR}/configs ${CMAKE_SOURCE_DIR}/scripts/plot_run.sh)
  set_tests_properties(plot_run PROPERTIES LABELS unit TIMEOUT 120 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV}")
  add_test(NAME run_h5 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_h5.sh hdf5 $<TARGET_FILE:mbspar>
                               ${CMAKE_SOURCE_DIR}/configs ${CMAKE_SOURCE_DIR}/scripts/plot_run.sh
                               ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS}
                               --oversubscribe)
  set_tests_properties(run_h5 PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
