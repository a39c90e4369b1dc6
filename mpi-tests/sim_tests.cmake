# simulation (issue 4): energy, integrators, pendulum period, rank independence, restart,
# signals, bad checkpoints
if(TARGET mbspar)
  add_test(NAME sim COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_sim.sh $<TARGET_FILE:mbspar>
                            ${CMAKE_SOURCE_DIR}/configs ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
                            ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(sim PROPERTIES LABELS mpi TIMEOUT 900 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
# integrator.method = abm (issue 36): accuracy, work against dp5, orders, ranks, bitwise restart
if(TARGET mbspar)
  add_test(NAME abm_run COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/abm_run.sh $<TARGET_FILE:mbspar>
                                ${CMAKE_SOURCE_DIR}/configs ${MPIEXEC_EXECUTABLE}
                                ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(abm_run PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
