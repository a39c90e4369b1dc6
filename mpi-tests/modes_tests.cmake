# natural frequencies and mode shapes (src/modes.c, the `modes` verb; docs/modes.md)
mbs_add_test(test_modes SOURCES test_modes.c LIBS mbs_core LABELS unit
             ARGS ${CMAKE_SOURCE_DIR}/configs)

if(TARGET mbspar)
  # closed forms through the command line, files and refusals; under mpiexec at 2 ranks the same
  # answers (rank 0 computes, the other rank waits at the agreements)
  add_test(NAME modes_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/modes_cli.sh
                                  $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(modes_cli PROPERTIES LABELS unit TIMEOUT 120 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  add_test(NAME modes_cli.np2
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/modes_cli.sh $<TARGET_FILE:mbspar>
                   ${CMAKE_SOURCE_DIR}/configs ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
                   ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(modes_cli.np2 PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
