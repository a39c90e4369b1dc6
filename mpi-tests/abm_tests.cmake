# The Adams core against SUNDIALS CVODE (issue 36; docs/integrator_abm.md section 5):
# bench/abm_cvode.c is the comparison program (work-precision table, bench/abm_cvode.sh) and,
# with --check, the test abm_cvode (the 8-link chain at TOL 1e-6 and 1e-9, about a second).
# SUNDIALS is optional (Debian libsundials-dev, installed by scripts/setup.sh): without it the
# program is not built and the test reports itself skipped.
find_path(SUNDIALS_CVODE_INCLUDE_DIR cvode/cvode.h)
find_library(SUNDIALS_CVODE_LIBRARY sundials_cvode)
if(SUNDIALS_CVODE_INCLUDE_DIR AND SUNDIALS_CVODE_LIBRARY)
  message(STATUS "abm_cvode: SUNDIALS CVODE found (${SUNDIALS_CVODE_LIBRARY})")
  add_executable(abm_cvode ${CMAKE_SOURCE_DIR}/bench/abm_cvode.c)
  target_include_directories(abm_cvode PRIVATE ${SUNDIALS_CVODE_INCLUDE_DIR})
  target_link_libraries(abm_cvode PRIVATE mbs_core ${SUNDIALS_CVODE_LIBRARY})
  mbs_add_test(abm_cvode TARGET abm_cvode ARGS --check LABELS unit TIMEOUT 120)
else()
  message(STATUS "abm_cvode: SUNDIALS CVODE not found (Debian: libsundials-dev); the program "
                 "bench/abm_cvode.c is not built and the test abm_cvode is skipped")
  add_test(NAME abm_cvode COMMAND sh -c "echo 'abm_cvode: SUNDIALS CVODE not found (Debian: libsundials-dev): skipped'; exit 77")
  set_tests_properties(abm_cvode PROPERTIES SKIP_RETURN_CODE 77 LABELS unit)
endif()
