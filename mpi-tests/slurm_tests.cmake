# SLURM tests (label `slurm`, run in CI by scripts/test.sh): mpi-tests/test_slurm.sh starts a
# real single-node slurmctld/slurmd on this machine (temporary directory, free ports, auth/none),
# submits slurm/single.sbatch, strong.sbatch and weak.sbatch with sbatch, checks their outputs
# and always stops the daemons it started. Without the SLURM packages the test FAILS with a message
# naming scripts/setup.sh (which installs them); it is never skipped silently.
if(TARGET mbspar)
  add_test(NAME slurm_batch
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_slurm.sh ${CMAKE_SOURCE_DIR}
                   $<TARGET_FILE:mbspar>)
  # the jobs use 2 cpus; RUN_SERIAL keeps other tests from competing with the daemons and ranks
  set_tests_properties(slurm_batch PROPERTIES LABELS "slurm" TIMEOUT 300 PROCESSORS 2
                       RUN_SERIAL TRUE)
endif()

# shellcheck of the batch scripts and the test (the `shellcheck` test covers scripts/*.sh)
find_program(MBS_SHELLCHECK NAMES shellcheck)
if(MBS_SHELLCHECK)
  file(GLOB MBS_SLURM_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/slurm/*.sbatch)
  add_test(NAME shellcheck_slurm
           COMMAND ${MBS_SHELLCHECK} -s bash ${MBS_SLURM_SCRIPTS}
                   ${CMAKE_CURRENT_SOURCE_DIR}/test_slurm.sh)
  set_tests_properties(shellcheck_slurm PROPERTIES LABELS "unit;lint;slurm" TIMEOUT 60
                       PROCESSORS 1)
endif()
