# issue 12 (hardening): collective failure paths under fault injection, outputs that survive
# kills, no silent NaN, signals (docs/hardening.md)
if(TARGET mbspar)
  set(MBS_HARDEN_ARGS $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs ${MPIEXEC_EXECUTABLE}
                      ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS} --oversubscribe)
  # 12.1: every write/allocation/NaN point of run, accel, static, inverse injected (sampled: every
  # k-th distinct point; multi-rank: one point per function and stretch between agreements)
  foreach(verb run accel static inverse)
    add_test(NAME fault_sweep.${verb}
             COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/fault_sweep.py --verb ${verb} --np 1
                     --every 4 -- ${MBS_HARDEN_ARGS})
    set_tests_properties(fault_sweep.${verb} PROPERTIES PROCESSORS 1)
    add_test(NAME fault_sweep.${verb}.np2
             COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/fault_sweep.py --verb ${verb} --np 2
                     --mode grouped --every 2 -- ${MBS_HARDEN_ARGS})
    set_tests_properties(fault_sweep.${verb}.np2 PROPERTIES PROCESSORS 2)
    add_test(NAME fault_sweep.${verb}.np4
             COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/fault_sweep.py --verb ${verb} --np 4
                     --mode grouped --every 5 -- ${MBS_HARDEN_ARGS})
    set_tests_properties(fault_sweep.${verb}.np4 PROPERTIES PROCESSORS 2)
    set_tests_properties(fault_sweep.${verb} fault_sweep.${verb}.np2 fault_sweep.${verb}.np4
                         PROPERTIES LABELS "mpi;fault" TIMEOUT 600 ENVIRONMENT "${MBS_MPI_ENV}")
  endforeach()
  # 12.2: kill -9 of one rank at a random step, twice, then restart: CSVs bitwise equal
  add_test(NAME kill_restart.np2 COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/kill_restart.sh
                                         ${MBS_HARDEN_ARGS})
  # 12.3: non-finite results give exit 5 in every method and verb
  add_test(NAME nan_exit COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/nan_exit.sh ${MBS_HARDEN_ARGS})
  # 12.4: SIGTERM/SIGUSR1 to a rank or to mpirun
  add_test(NAME signals.np2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/signals.sh ${MBS_HARDEN_ARGS})
  set_tests_properties(kill_restart.np2 signals.np2 PROPERTIES LABELS mpi TIMEOUT 300
                       PROCESSORS 2 ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  # nan_exit starts mbspar as a singleton too: also under scripts/sanitize.sh (label unit)
  set_tests_properties(nan_exit PROPERTIES LABELS unit TIMEOUT 300
                       PROCESSORS 2 ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
