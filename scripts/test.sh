#!/usr/bin/env bash
# The test suite: install what is missing (including the lint tools), build, run CTest.
#
#   scripts/test.sh [--all] [CTEST ARGS...]     e.g. scripts/test.sh -L unit
#
# Runs every registered test except those labelled `slow` (--all includes them), in parallel
# within the cpus (each test declares its PROCESSORS), with --output-on-failure. The last line
# repeats CTest's summary; the exit code is CTest's. MPI tests get the root/oversubscription
# settings from CTest itself (mpi-tests/CMakeLists.txt), not from the caller's environment.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bdir=${MBS_BUILD_DIR:-$root/build}

exclude=(-LE slow)
if [ "${1:-}" = "--all" ]; then
  exclude=()
  shift
fi

"$root/scripts/setup.sh" --with-lint --with-urdf
"$root/scripts/build.sh"

log=$bdir/test.sh.log
cd "$bdir"
set +e
ctest --output-on-failure --no-tests=error -j "$(nproc)" "${exclude[@]}" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
summary=$(grep -E 'tests passed|No tests were found' "$log" | tail -n 1 || true)
echo "test.sh: ${summary:-no CTest summary (see $log)} (exit code $rc)"
exit "$rc"
