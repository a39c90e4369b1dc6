# Infrastructure tests: placement/binding (parallel/affinity.c) with hwloc and with the
# sched_getaffinity fallback, and the lint checks (clang-format, shellcheck) when the tools are
# installed (scripts/setup.sh --with-tools). A lint test whose tool is missing is not registered:
# it is never reported as passed without having run.

mbs_add_test(test_affinity SOURCES test_affinity.c LIBS mbs_parallel LABELS unit)
target_include_directories(test_affinity PRIVATE ${CMAKE_SOURCE_DIR}/parallel)

# the same test against affinity.c built without MBS_HAVE_HWLOC
mbs_add_test(test_affinity_nohwloc SOURCES test_affinity.c ${CMAKE_SOURCE_DIR}/parallel/affinity.c
             LIBS mbs_core LABELS unit)
target_include_directories(test_affinity_nohwloc PRIVATE ${CMAKE_SOURCE_DIR}/parallel)

find_program(MBS_CLANG_FORMAT NAMES clang-format clang-format-14)
if(MBS_CLANG_FORMAT)
  mbs_add_test(format_check ARGS ${CMAKE_SOURCE_DIR}/scripts/format.sh --check LABELS unit lint)
else()
  message(STATUS "clang-format not found: test format_check not registered (scripts/setup.sh --with-tools)")
endif()

find_program(MBS_SHELLCHECK NAMES shellcheck)
if(MBS_SHELLCHECK)
  file(GLOB MBS_SHELL_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/scripts/*.sh
       ${CMAKE_SOURCE_DIR}/mpi-tests/*.sh ${CMAKE_SOURCE_DIR}/mpi-tests/bad/*.sh
       ${CMAKE_SOURCE_DIR}/bench/*.sh ${CMAKE_SOURCE_DIR}/bench/smpi/*.sh)
  mbs_add_test(shellcheck ARGS ${MBS_SHELLCHECK} -x -P SCRIPTDIR
               ${MBS_SHELL_SCRIPTS} ${CMAKE_SOURCE_DIR}/.ci/run ${CMAKE_SOURCE_DIR}/bench/run_all LABELS unit lint)
else()
  message(STATUS "shellcheck not found: test shellcheck not registered (scripts/setup.sh --with-tools)")
endif()

# the structure checks of issue 31 (scripts/check_structure.py: include cycles, method ids, the
# body interface, joint types, file lengths reported), without --objects and --strict: a second
add_test(NAME check_structure COMMAND python3 ${CMAKE_SOURCE_DIR}/scripts/check_structure.py)
set_tests_properties(check_structure PROPERTIES LABELS unit TIMEOUT 60)
