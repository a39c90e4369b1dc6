# closed loops (issue 10, docs/loops.md): the closure equations, the serial loop baseline (aba vs
# crba on the configs and on random loop models), redundancy, assembly and projection
mbs_add_test(test_loops SOURCES test_loops.c LIBS mbs_core LABELS unit TIMEOUT 600
             ARGS ${CMAKE_SOURCE_DIR}/configs)

# the constraint-force methods on the distributed engine against the serial loop baseline, 1-4 ranks
# (3 ranks, an uneven partition, and since 2026-11-28 4 ranks, 73 s oversubscribed, labelled slow
# for the CI budget; loops at 2-4 ranks stay in the default run through test_loops_par_iterates
# and loops_run.np2)
mbs_add_test(test_loops_par SOURCES test_loops_par.c LIBS mbs_parallel NPROCS 1 2 LABELS mpi
             TIMEOUT 600 ARGS ${CMAKE_SOURCE_DIR}/configs)
mbs_add_test(test_loops_par TARGET test_loops_par NPROCS 3 4 LABELS mpi slow TIMEOUT 600
             ARGS ${CMAKE_SOURCE_DIR}/configs)

# ... and jacobi, gs, sor on the stiff configs (the four-bar, the six-bar, Bricard's linkage), whose
# tree solves take up to 2,000,000 sweeps: labelled slow at every rank count (1 rank 47 s; 2-4
# ranks one halo exchange and one allreduce per sweep, long, oversubscribed here) for the CI
# budget since 2026-11-28; sor on the loop configs stays in the default run (test_loops_par_sor)
mbs_add_test(test_loops_par_stationary TARGET test_loops_par NPROCS 1 2 3 4 LABELS mpi slow
             TIMEOUT 7200 ARGS ${CMAKE_SOURCE_DIR}/configs --stationary)

# ... and jcg with unit solves (solver.loops = unit) on the full configs/ladder.cfg (2100 bodies,
# 300 closure equations: 202 tree solves of ~2000 CG iterations, about 2.3 minutes per evaluation
# at one rank), labelled slow; with the closure rows in the system (the default) jcg on the full
# ladder is in test_loops_par (0.4 s per evaluation)
mbs_add_test(test_loops_par_krylov TARGET test_loops_par NPROCS 1 2 LABELS mpi slow TIMEOUT 3600
             ARGS ${CMAKE_SOURCE_DIR}/configs --ladder-krylov)

# ... and sor on the full ladder with the closure rows at omega 1.994 and tol 1e-10 (~36 000
# multicolour sweeps per evaluation: 25, 14, 22 and 20 s at 1-4 ranks here)
# (3 and 4 ranks labelled slow for the CI budget)
mbs_add_test(test_loops_par_sor TARGET test_loops_par NPROCS 1 2 LABELS mpi TIMEOUT 900
             ARGS ${CMAKE_SOURCE_DIR}/configs --ladder-sor)
mbs_add_test(test_loops_par_sor TARGET test_loops_par NPROCS 3 4 LABELS mpi slow TIMEOUT 900
             ARGS ${CMAKE_SOURCE_DIR}/configs --ladder-sor)

# ... and jacobi and gs on the full ladder with the closure rows at tol 1e-11: about 2.6e7 and
# 1.2e7 sweeps per evaluation, hours at one rank here (jacobi: 1 h 51 min beside another run),
# labelled slow (docs/loops.md 8.4)
mbs_add_test(test_loops_par_ladder_stationary TARGET test_loops_par NPROCS 1 2 3 4 LABELS mpi slow
             TIMEOUT 43200 ARGS ${CMAKE_SOURCE_DIR}/configs --ladder-stationary)

# ... and the same jacobi and gs on the full ladder for 5000 sweeps at 2-4 ranks against one rank in
# the same process (gs to the bit, jacobi to 1e-13): the distributed sweeps are the one-rank ones,
# so the one-rank runs above carry to every rank count (docs/loops.md 8.4); 6-9 s each here
mbs_add_test(test_loops_par_iterates TARGET test_loops_par NPROCS 2 3 4 LABELS mpi TIMEOUT 900
             ARGS ${CMAKE_SOURCE_DIR}/configs --ladder-iterates)

# end to end: the loop configs against closed forms, energy and closure over 10 s with dp5, drift
# control, restart, exit 8 for the constraint-force methods, inverse, static, 2 ranks
find_program(MBS_LOOPS_PY NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT MBS_LOOPS_PY)
  find_program(MBS_LOOPS_PY NAMES python3)
endif()
if(TARGET mbspar AND MBS_LOOPS_PY)
  # the velocity transformation of `check` against closed forms (seed 000 Fig. 4, slider-crank)
  add_test(NAME loops_vmap COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/loops_vmap.sh
                                   $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(loops_vmap PROPERTIES LABELS unit TIMEOUT 60 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  # the three ladder scripts take the same arguments (mbspar, scripts/, python, the launcher)
  function(mbs_ladder_test name script timeout)
    add_test(NAME ${name}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/${script} $<TARGET_FILE:mbspar>
                     ${CMAKE_SOURCE_DIR}/scripts ${MBS_LOOPS_PY} ${MPIEXEC_EXECUTABLE}
                     ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS} --oversubscribe)
    set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT ${timeout} PROCESSORS 2
                         ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  endfunction()
  # the ladder generator: the same model as the explicit ladder (bitwise at one rank), schur at
  # 2 and 4 ranks equal to one rank's to 1e-12 (2 x 64 links, 8 loops; a few seconds)
  mbs_ladder_test(ladder_gen ladder_gen.sh 300)
  # accel schur on the distributed loop model (MBSPAR_LOOPS_LOCAL=1) against the replicated model
  # (MBSPAR_LOOPS_LOCAL=0) at 2, 3, 4 ranks to 1e-12 (the generated ladder, and with a loop to the ground and one the
  # generator cannot make); run and an unclosed q0 refused (exit 8); a few seconds
  mbs_ladder_test(ladder_local_verb ladder_local.sh 300)
  # the default build of a loop model for accel with schur at 2 ranks (parallel/loops_local.c):
  # distributed for the generated ladder (closed at q0), replicated where the replicated model
  # assembles q0 or projects qd0; bitwise the results of MBSPAR_LOOPS_LOCAL=0; a few seconds
  mbs_ladder_test(ladder_default ladder_default.sh 120)
  add_test(NAME loops_run COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/loops_run.sh
                                  $<TARGET_FILE:mbspar> ${CMAKE_SOURCE_DIR}/configs ${MBS_LOOPS_PY})
  set_tests_properties(loops_run PROPERTIES LABELS unit TIMEOUT 600 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  add_test(NAME loops_run.np2
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/loops_run.sh $<TARGET_FILE:mbspar>
                   ${CMAKE_SOURCE_DIR}/configs ${MBS_LOOPS_PY} ${MPIEXEC_EXECUTABLE}
                   ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(loops_run.np2 PROPERTIES LABELS mpi TIMEOUT 900 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()
