# command line: help texts and PETSc's conventions (issue 32; included by mpi-tests/CMakeLists.txt)
if(TARGET mbspar)
  add_test(NAME cli_help COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli_help.sh $<TARGET_FILE:mbspar>)
  set_tests_properties(cli_help PROPERTIES LABELS unit TIMEOUT 120 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  if(MBS_ENABLE_PETSC)
    add_test(NAME cli_petsc COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli_petsc.sh
                                    $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs)
    set_tests_properties(cli_petsc PROPERTIES LABELS unit TIMEOUT 120 PROCESSORS 1
                         ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
    add_test(NAME cli_petsc.np2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli_petsc.sh
                                        $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs
                                        ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
                                        ${MPIEXEC_PREFLAGS} --oversubscribe)
    set_tests_properties(cli_petsc.np2 PROPERTIES LABELS mpi TIMEOUT 180 PROCESSORS 2
                         ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  endif()
endif()

# scripts/run.sh: README's option pass-through and the set-up stamps (2 ranks)
if(TARGET mbspar AND MBS_ENABLE_PETSC)
  add_test(NAME run_sh COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_sh.sh $<TARGET_FILE:mbspar>
                               ${CMAKE_SOURCE_DIR})
  set_tests_properties(run_sh PROPERTIES LABELS mpi TIMEOUT 180 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()

# cmake --install, then a program built against the installed package with pkg-config and with
# find_package(mbspar) (docs/cluster.md)
if(TARGET mbspar)
  add_test(NAME install COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install_test.sh ${CMAKE_BINARY_DIR}
                                   ${CMAKE_SOURCE_DIR})
  set_tests_properties(install PROPERTIES LABELS "unit;install" TIMEOUT 300 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()

# a direct solve reports no iterations; one name for accel's check residual at 1 and 2 ranks
if(TARGET mbspar)
  add_test(NAME accel_direct COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/accel_direct.sh
                                     $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(accel_direct PROPERTIES LABELS unit TIMEOUT 120 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  add_test(NAME accel_direct.np2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/accel_direct.sh
                                         $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs
                                         ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
                                         ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(accel_direct.np2 PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  # a distributed-memory model's results streamed to rank 0 chunk by chunk (accel_stream.c):
  # equal to the last bit to the replicated model's gathered ones in both targets, the same
  # table, a write failure while the others serve exits 3 with one line; ~6 s each under load
  foreach(np 2 3)
    add_test(NAME accel_stream.np${np}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/accel_stream.sh $<TARGET_FILE:mbspar>
                     ${CMAKE_SOURCE_DIR}/configs ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                     ${MPIEXEC_PREFLAGS} --oversubscribe)
    set_tests_properties(accel_stream.np${np} PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2
                         ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  endforeach()
endif()
