# issue 11: poses, XDMF, ParaView, PETSc monitors, pure JSON (mpi-tests/viz_tests.sh). The
# Python of the checks is Debian's (it has python3-h5py), found before any other python3.
find_program(MBS_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT MBS_PYTHON3)
  find_program(MBS_PYTHON3 NAMES python3)
endif()
if(TARGET mbspar AND MBS_PYTHON3)
  foreach(part poses xdmf paraview petsc json animate inverse example progress reader)
    set(np 4)
    set(lab mpi)
    if(part STREQUAL "paraview")
      set(lab viz)
    endif()
    add_test(NAME viz_${part}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/viz_tests.sh ${part} $<TARGET_FILE:mbspar>
                     ${CMAKE_SOURCE_DIR} ${MBS_PYTHON3} ${MPIEXEC_EXECUTABLE}
                     ${MPIEXEC_NUMPROC_FLAG} ${MPIEXEC_PREFLAGS} --oversubscribe)
    set_tests_properties(viz_${part} PROPERTIES LABELS "${lab}" TIMEOUT 600 PROCESSORS 2
                         SKIP_RETURN_CODE 77
                         ENVIRONMENT "${MBS_MPI_ENV};OMPI_MCA_orte_execute_quiet=1")
  endforeach()
else()
  message(STATUS "python3 not found: the issue-11 tests (viz_*) are not registered")
endif()
