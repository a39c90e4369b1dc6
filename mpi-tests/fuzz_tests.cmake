# Fuzz smoke (issue 12): the libFuzzer targets of fuzz/ (config reader, checkpoint reader) for
# 30 s each from the seed corpus, fixed seed, nothing kept; any crash, leak, timeout, sanitizer
# report or broken promise fails. Built and run by scripts/fuzz.sh with clang (scripts/setup.sh
# --with-fuzz installs it; scripts/test.sh does). The long campaign: docs/hardening.md.
find_program(MBS_CLANG clang)
if(MBS_CLANG AND TARGET mbspar)
  add_test(NAME fuzz_smoke
           COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/fuzz.sh --smoke --no-setup --nice 0
                   --build-dir ${CMAKE_BINARY_DIR}/fuzz)
  set_tests_properties(fuzz_smoke PROPERTIES LABELS fuzz TIMEOUT 900 PROCESSORS 1
                       ENVIRONMENT "MBS_FUZZ_BUILD_JOBS=1;MBS_MBSPAR=$<TARGET_FILE:mbspar>;${MBS_MPI_ENV}")
else()
  message(STATUS "clang not found: no fuzz_smoke test (scripts/setup.sh --with-fuzz installs it)")
endif()
