# static equilibrium by energy drainage (src/static.c, the `static` verb; docs/static.md)
mbs_add_test(test_static SOURCES test_static.c LIBS mbs_core LABELS unit
             ARGS ${CMAKE_SOURCE_DIR}/configs)

if(TARGET mbspar)
  # the verb end to end: serially with aba (and the engine on one rank), and under mpiexec with
  # the distributed engine (J-CG) at 1 and 2 ranks: same equilibrium, files, exit codes
  add_test(NAME static_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/static_cli.sh
                                   $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(static_cli PROPERTIES LABELS unit TIMEOUT 300 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  foreach(np 1 2)
    add_test(NAME static_cli.np${np}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/static_cli.sh $<TARGET_FILE:mbspar>
                     ${CMAKE_SOURCE_DIR}/configs ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                     ${MPIEXEC_PREFLAGS} --oversubscribe)
    set_tests_properties(static_cli.np${np} PROPERTIES LABELS mpi TIMEOUT 900 PROCESSORS ${np}
                         ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  endforeach()
endif()
