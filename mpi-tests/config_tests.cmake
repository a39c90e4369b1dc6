# config, report and CLI tests (included by mpi-tests/CMakeLists.txt)
mbs_add_test(test_config SOURCES test_config.c LIBS mbs_core LABELS unit
             ARGS ${CMAKE_SOURCE_DIR}/configs)
mbs_add_test(test_report SOURCES test_report.c LIBS mbs_core LABELS unit)
# loop models built distributed (the model side: every loop, its sides' global bodies, depths and
# nearest owned ancestors against the whole model; docs/scaling.md "Memory")
mbs_add_test(test_ladder_local SOURCES test_ladder_local.c LIBS mbs_core LABELS unit)

if(TARGET mbspar)
  # bad-input corpus: exit code 2, one stderr line FILE:LINE: ..., expected fragment; serially
  # and under mpiexec -n 2 (orte_execute_quiet keeps mpiexec's own exit-status banner off stderr)
  set(MBS_BAD_DIR ${CMAKE_CURRENT_SOURCE_DIR}/bad)
  add_test(NAME bad_input COMMAND sh ${MBS_BAD_DIR}/run_bad.sh $<TARGET_FILE:mbspar> ${MBS_BAD_DIR})
  set_tests_properties(bad_input PROPERTIES LABELS unit TIMEOUT 300 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  add_test(NAME bad_input.np2
           COMMAND sh ${MBS_BAD_DIR}/run_bad.sh $<TARGET_FILE:mbspar> ${MBS_BAD_DIR}
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(bad_input.np2 PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")

  # the second corpus (issue 30), class by class, each case also checked to write no file
  set(MBS_BAD2_DIR ${CMAKE_CURRENT_SOURCE_DIR}/bad2)
  add_test(NAME bad_input2
           COMMAND sh ${MBS_BAD2_DIR}/run_bad2.sh $<TARGET_FILE:mbspar> ${MBS_BAD2_DIR})
  set_tests_properties(bad_input2 PROPERTIES LABELS unit TIMEOUT 300 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  add_test(NAME bad_input2.np2
           COMMAND sh ${MBS_BAD2_DIR}/run_bad2.sh $<TARGET_FILE:mbspar> ${MBS_BAD2_DIR}
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(bad_input2.np2 PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")

  # the CLI verbs end to end (JSON validated by test_report --validate)
  add_test(NAME cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_cli.sh $<TARGET_FILE:mbspar>
                            $<TARGET_FILE:test_report> ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(cli PROPERTIES LABELS unit TIMEOUT 300 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  add_test(NAME cli.np2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_cli.sh $<TARGET_FILE:mbspar>
                                $<TARGET_FILE:test_report> ${CMAKE_SOURCE_DIR}/configs
                                ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                                --oversubscribe)
  set_tests_properties(cli.np2 PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()

# the checkpoint reader and the size admission (issue 12); the seeds of fuzz/ are its inputs
mbs_add_test(test_checkpoint SOURCES test_checkpoint.c LIBS mbs_core LABELS unit
             ARGS ${CMAKE_SOURCE_DIR}/fuzz)
