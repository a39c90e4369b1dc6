# the shipped example configs behave as their comments say (issue 32)
find_program(MBS_EXAMPLES_PY NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME arm_limits COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/arm_limits.sh
                                   $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs ${MBS_EXAMPLES_PY})
  set_tests_properties(arm_limits PROPERTIES LABELS unit PROCESSORS 1 TIMEOUT 120
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# driven joints in run (issue 34 item 5): closed forms, the guard, the energy balance, methods,
# ranks, restart, bad input
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME drive_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/drive_cli.sh $<TARGET_FILE:mbspar>
                                  ${MBS_EXAMPLES_PY} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
                                  ${MPIEXEC_PREFLAGS})
  set_tests_properties(drive_cli PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 180
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# solver.method = auto (issue 32): the choice at 2 ranks, aba on rank 0, the JSON
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME auto_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/auto_cli.sh $<TARGET_FILE:mbspar>
                                 ${CMAKE_SOURCE_DIR}/configs ${MBS_EXAMPLES_PY}
                                 ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS})
  set_tests_properties(auto_cli PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 120
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# auto's serial method at several ranks: rank 1 formats the CSV rows (issue 32): the same bytes
# as one rank, a restart, a failing rank 0, signals to the formatting rank (no hang)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME fmt_offload COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fmt_offload.sh
                                    $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs
                                    ${MBS_EXAMPLES_PY} ${MPIEXEC_EXECUTABLE}
                                    ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS})
  set_tests_properties(fmt_offload PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 180
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# flexible bodies in accel and run (issue 34, docs/flexible.md 6): m = 0 against aba, the energy
# of a conservative flexible pendulum, restart bytes, refusals
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_cli.sh $<TARGET_FILE:mbspar>
                                 ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs ${MPIEXEC_EXECUTABLE}
                                 ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS})
  set_tests_properties(flex_cli PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 120
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# static on the 16-link flexible chain (issue 34 item 3, docs/flexible.md 8): the hanging chain's
# closed form
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_static_chain COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_static_chain.sh
                                          $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(flex_static_chain PROPERTIES TIMEOUT 120)
endif()
# flexible models over the ranks in accel and run: solver.method = schur (docs/flexible.md 11)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_par_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_par_cli.sh
                                     $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs
                                     ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS})
  set_tests_properties(flex_par_cli PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 120
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# modes and static over the ranks: the columns split, the 1-rank bits (docs/flexible.md 7, 8)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  foreach(np 2 3)
    add_test(NAME flex_modes_ranks.np${np}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_modes_ranks.sh ${np} $<TARGET_FILE:mbspar>
                     ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs ${MPIEXEC_EXECUTABLE}
                     ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS})
    set_tests_properties(flex_modes_ranks.np${np} PROPERTIES LABELS mpi PROCESSORS ${np}
                         TIMEOUT 120 ENVIRONMENT "${MBS_MPI_ENV}")
  endforeach()
endif()
# driven runs and inverse of flexible models over the ranks (docs/flexible.md 9, 12)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_drive_par COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_drive_par.sh
                                       $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs
                                       ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS})
  set_tests_properties(flex_drive_par PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 120
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# the recursive flexible algorithm in accel and run of a large chain (docs/flexible.md 10)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_aba_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_aba_cli.sh
                                     $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(flex_aba_cli PROPERTIES LABELS mpi PROCESSORS 1 TIMEOUT 60
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# the outputs of a flexible run: trajectory.h5 against trajectory.csv, the deformed shape, the
# XDMF's references, restart, ParaView's default reader (docs/flexible.md 6, docs/outputs.md)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_h5 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_h5.sh $<TARGET_FILE:mbspar>
                                ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(flex_h5 PROPERTIES LABELS mpi PROCESSORS 1 TIMEOUT 120 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# inverse of flexible models: the rigid limit, against run with the same drives, user motions
# (docs/flexible.md 11)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_inverse COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_inverse.sh
                                     $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(flex_inverse PROPERTIES LABELS mpi PROCESSORS 1 TIMEOUT 120
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# the same pendulum over the issue's 10 s (slow)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_energy_10s COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_slow.sh
                                        $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(flex_energy_10s PROPERTIES LABELS slow PROCESSORS 1 TIMEOUT 300
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# geometric stiffening and drives of flexible bodies (issue 34, docs/flexible.md 5.3, 6, 9)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_spin COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_spin.sh $<TARGET_FILE:mbspar>
                                  ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(flex_spin PROPERTIES LABELS mpi PROCESSORS 1 TIMEOUT 120
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# closed loops through flexible bodies (issue 34, docs/flexible.md 15): the flexible four-bar
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_loops COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_loops.sh $<TARGET_FILE:mbspar>
                                   ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(flex_loops PROPERTIES LABELS mpi PROCESSORS 1 TIMEOUT 120
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# the same loops on schur's distributed elimination at 2 and 3 ranks (docs/flexible.md 15.4)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_loops_par COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_loops_par.sh
                                       $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs
                                       ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS})
  set_tests_properties(flex_loops_par PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 120
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# the spin-up beam over 30 s against 100 lumped links (slow)
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_spinup_30s COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_spinup_slow.sh
                                        $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY} ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(flex_spinup_30s PROPERTIES LABELS slow PROCESSORS 1 TIMEOUT 1500
                       ENVIRONMENT "${MBS_MPI_ENV}")
endif()
# flexible bodies from a modal file (HDF5; docs/flexible.md 14): the round trip from the built-in
# beam (check --modal-out) bit for bit, an independent file of scripts/gen_modal_file.py against
# numpy's and Euler-Bernoulli's frequencies, the refusals of bad files; .np2 adds accel at 2 ranks
# (schur) and a refusal at 2 ranks
if(TARGET mbspar AND MBS_EXAMPLES_PY)
  add_test(NAME flex_modalfile COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_modalfile.sh
                                       $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY}
                                       ${CMAKE_SOURCE_DIR}/configs ${CMAKE_SOURCE_DIR}/scripts)
  set_tests_properties(flex_modalfile PROPERTIES LABELS unit PROCESSORS 1 TIMEOUT 120
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${MBS_MPI_ENV}")
  add_test(NAME flex_modalfile.np2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_modalfile.sh
                                           $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY}
                                           ${CMAKE_SOURCE_DIR}/configs ${CMAKE_SOURCE_DIR}/scripts
                                           ${MPIEXEC_EXECUTABLE})
  set_tests_properties(flex_modalfile.np2 PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 180
                       SKIP_RETURN_CODE 77
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  # the lumped form (points anywhere, version 2): the same beam line and lumped to 1e-12, a node
  # off the axes, a 3-D body against closed-form frequencies, the refusals of its datasets
  add_test(NAME flex_lumped COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/flex_lumped.sh
                                    $<TARGET_FILE:mbspar> ${MBS_EXAMPLES_PY}
                                    ${CMAKE_SOURCE_DIR}/configs ${CMAKE_SOURCE_DIR}/scripts)
  set_tests_properties(flex_lumped PROPERTIES LABELS unit PROCESSORS 1 TIMEOUT 120
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${MBS_MPI_ENV}")
endif()
