# the natural-coordinate formulation of seed 004 (issue 33, docs/natural.md): the dense reference
# against ABA on random chains and trees with every joint type, random loop models and the loop
# configs
mbs_add_test(test_natural SOURCES test_natural.c LIBS mbs_core LABELS unit
             ARGS ${CMAKE_SOURCE_DIR}/configs)
# model.formulation = "natural" in the verbs: accel and run against aba at 1 and 3 ranks
if(MPIEXEC_EXECUTABLE)
  add_test(NAME natural_cli.np3 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/natural_cli.sh
                                        $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs
                                        ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3
                                        ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(natural_cli.np3 PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
# q, q̇ from (p, ṗ) per joint type (round trip) and joint forces in (p, ṗ) runs against ABA
mbs_add_test(test_natural_coords SOURCES test_natural_coords.c LIBS mbs_core LABELS unit)
# mbspar run under model.formulation = natural: (p, ṗ) with projection, the four-bar over 2 s
# (energy, constraints), bitwise restart, trees against aba, a run at 2 ranks; the 10 s of
# issue 33's acceptance in the slow test natural_run_10s
if(MPIEXEC_EXECUTABLE)
  add_test(NAME natural_run.np2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/natural_run.sh
                                        $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs 2
                                        ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
                                        ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(natural_run.np2 PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
add_test(NAME natural_run_10s COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/natural_run.sh
                                      $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs 10)
set_tests_properties(natural_run_10s PROPERTIES LABELS slow TIMEOUT 300)
# the formulation distributed over the ranks (docs/natural.md 13): q̈ against aba and the
# whole-model solve on random trees, chains and loop models with every joint type, and the split
# of the work (each rank factors its range only), at 1 to 4 ranks
mbs_add_test(test_natural_par SOURCES test_natural_par.c LIBS mbs_parallel NPROCS 1 2 3 4
             LABELS mpi ARGS ${CMAKE_SOURCE_DIR}/configs TIMEOUT 120)
# a natural run in O(n) (evaluations and projection by the block elimination) against the dense
# reference of the same run on the loop configs, the URDF arm and a small tree (docs/natural.md 12)
mbs_add_test(test_natural_runon SOURCES test_natural_runon.c LIBS mbs_core LABELS unit
             ARGS ${CMAKE_SOURCE_DIR}/configs)
# mbspar run under natural at 2 and 3 ranks (the evaluations' solve distributed, docs/natural.md
# 13): the trajectories and energies of a chain, a tree, the six-bar and the hexapod against the
# one-rank runs, and a bitwise restart at those rank counts
if(MPIEXEC_EXECUTABLE)
  foreach(np 2 3)
    add_test(NAME natural_run_ranks.np${np}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/natural_run_ranks.sh $<TARGET_FILE:mbspar>
                     ${CMAKE_SOURCE_DIR}/configs ${np} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
                     ${np} ${MPIEXEC_PREFLAGS} --oversubscribe)
    set_tests_properties(natural_run_ranks.np${np} PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2
                         ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  endforeach()
endif()
# static, inverse and check under natural at 3 ranks (rank 0 works; the others wait): the JSON
# results and inverse.csv equal the one-rank ones bit for bit, a refusal is the same one line
# (natural_verbs_ranks.sh also runs by hand at 2 and 4: sh natural_verbs_ranks.sh MBSPAR CONFIGS
# 4 mpiexec -n 4 --oversubscribe)
if(MPIEXEC_EXECUTABLE)
  add_test(NAME natural_verbs_ranks.np3
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/natural_verbs_ranks.sh $<TARGET_FILE:mbspar>
                   ${CMAKE_SOURCE_DIR}/configs 3 ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3
                   ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(natural_verbs_ranks.np3 PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
# mbspar cpa under natural (src/natural_cpa.c): the critical paths of a chain and a binary tree,
# the calibrated one-processor prediction, the refusal on loop models
if(TARGET mbspar)
  add_test(NAME natural_cpa COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/natural_cpa.sh
                                    $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(natural_cpa PROPERTIES LABELS unit TIMEOUT 120 PROCESSORS 1)
endif()
