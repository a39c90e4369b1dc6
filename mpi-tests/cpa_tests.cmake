# critical-path analyser (issue 5). test_cpa links an instrumented copy of the serial core:
# MBS_COUNT_FLOPS turns the MBS_FLOPS(n) call-site counters of src/flops.h on, so the test can
# compare the counted flops of real evaluations with the graphs' total work T1.
add_library(mbs_core_flops STATIC EXCLUDE_FROM_ALL ${MBS_CORE_SOURCES})
target_include_directories(mbs_core_flops PUBLIC ${CMAKE_SOURCE_DIR}/include
                           ${CMAKE_BINARY_DIR}/generated PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(mbs_core_flops PUBLIC ${MATH_LIB} OpenMP::OpenMP_C PkgConfig::LIBCONFIG LAPACK::LAPACK)
target_compile_definitions(mbs_core_flops PRIVATE MBS_COUNT_FLOPS)
mbs_add_test(test_cpa SOURCES test_cpa.c LIBS mbs_core_flops LABELS unit TIMEOUT 600)
# the recursive flexible algorithm's graph (docs/cpa.md "Flexible models"): T1 == counted flops
mbs_add_test(test_flex_cpa SOURCES test_flex_cpa.c LIBS mbs_core_flops LABELS unit TIMEOUT 60)

# the cpa verb end to end (serial, and with two ranks for --calibrate's message timing)
if(TARGET mbspar)
  add_test(NAME cpa_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cpa_cli.sh $<TARGET_FILE:mbspar>
                                ${CMAKE_SOURCE_DIR}/configs)
  set_tests_properties(cpa_cli PROPERTIES LABELS unit TIMEOUT 300 PROCESSORS 1
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  add_test(NAME cpa_cli.np2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cpa_cli.sh $<TARGET_FILE:mbspar>
                                    ${CMAKE_SOURCE_DIR}/configs ${MPIEXEC_EXECUTABLE}
                                    ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} --oversubscribe)
  set_tests_properties(cpa_cli.np2 PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2
                       ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
endif()

# the exact distributed solver's graph (issue 9): the parallel layer instrumented too, the
# counted flops of a real mbsp_engineForward on 1-4 ranks (and 2 segments per rank) against the
# graph on as many ranks
if(TARGET mbs_parallel)
  add_library(mbs_parallel_flops STATIC EXCLUDE_FROM_ALL ${MBS_PAR_SOURCES})
  target_include_directories(mbs_parallel_flops PUBLIC ${CMAKE_SOURCE_DIR}/include
                             PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/parallel)
  get_target_property(MBS_PAR_LIBS mbs_parallel LINK_LIBRARIES)
  list(REMOVE_ITEM MBS_PAR_LIBS mbs_core)
  target_link_libraries(mbs_parallel_flops PUBLIC mbs_core_flops ${MBS_PAR_LIBS})
  get_target_property(MBS_PAR_DEFS mbs_parallel COMPILE_DEFINITIONS)
  if(MBS_PAR_DEFS)
    target_compile_definitions(mbs_parallel_flops PUBLIC ${MBS_PAR_DEFS})
  endif()
  target_compile_definitions(mbs_parallel_flops PRIVATE MBS_COUNT_FLOPS)
  mbs_add_test(test_cpa_schur SOURCES test_cpa_schur.c LIBS mbs_parallel_flops NPROCS 1 2 3 4
               LABELS mpi TIMEOUT 300 ARGS ${CMAKE_CURRENT_SOURCE_DIR})
  foreach(np 1 2 3 4)
    set_property(TEST test_cpa_schur.np${np} APPEND PROPERTY ENVIRONMENT OMP_NUM_THREADS=1)
  endforeach()
  add_test(NAME test_cpa_schur.threads2.np2
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                   --oversubscribe -x OMP_NUM_THREADS=2 $<TARGET_FILE:test_cpa_schur>
                   ${CMAKE_CURRENT_SOURCE_DIR})
  set_tests_properties(test_cpa_schur.threads2.np2 PROPERTIES PROCESSORS 2 TIMEOUT 300
                       LABELS mpi ENVIRONMENT "${MBS_MPI_ENV}")
endif()

# loop models (issue 10 point 6): the loop evaluation's graph against the counted flops of one
# real evaluation (the engine at one rank: direct, jcg; the serial baseline aba)
if(TARGET mbs_parallel)
  mbs_add_test(test_cpa_loops SOURCES test_cpa_loops.c LIBS mbs_parallel_flops NPROCS 1
               LABELS mpi TIMEOUT 600 ARGS ${CMAKE_SOURCE_DIR}/configs ${CMAKE_SOURCE_DIR}/mpi-tests)
  set_property(TEST test_cpa_loops.np1 APPEND PROPERTY ENVIRONMENT OMP_NUM_THREADS=1)
endif()

# solver.method = auto's choice on fixed jobs (issue 32; docs/model.md "Choosing the method")
mbs_add_test(test_auto SOURCES test_auto.c LIBS mbs_core LABELS unit TIMEOUT 60)
