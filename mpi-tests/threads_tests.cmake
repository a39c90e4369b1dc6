# OpenMP thread count per rank (parallel/threads.c): the default never oversubscribes the cores a
# rank shares with the other ranks of its node; OMP_NUM_THREADS wins, with one warning if it does
mbs_add_test(test_threads SOURCES test_threads.c LIBS mbs_parallel NPROCS 1 2 LABELS mpi)

if(TARGET mbspar)
  add_test(NAME threads_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/threads_cli.sh
                                    $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(threads_cli PROPERTIES LABELS unit TIMEOUT 300 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  # two ranks on every core (--bind-to none): each takes half of the cores
  add_test(NAME threads_cli.np2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/threads_cli.sh
                                        $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs
                                        ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
                                        ${MPIEXEC_PREFLAGS} --oversubscribe --bind-to none)
  set_tests_properties(threads_cli.np2 PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
