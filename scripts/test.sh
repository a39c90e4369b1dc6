#!/usr/bin/env bash
# The test suite: install what is missing (including the lint and fuzz tools and ParaView for the
# viz test), build, run CTest.
#
#   scripts/test.sh [--all] [CTEST ARGS...]     e.g. scripts/test.sh -L unit
#
# Runs every registered test except those labelled `slow` or `pending` (known failures of work
# in progress, named in their cmake file; --all includes both), in parallel
# within the cpus (each test declares its PROCESSORS), with --output-on-failure; that includes
# the 1-minute fuzz smoke (label fuzz, scripts/fuzz.sh --smoke). Without CTEST ARGS it first runs
# the unit tests under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/sanitize.sh, its
# own build in build-asan/; MBS_TEST_SANITIZE=0 skips it, =1 forces it with CTEST ARGS). The
# last line repeats CTest's summary; the exit code is CTest's, or the sanitizer run's when only
# that failed. A `-LE X` among the CTEST ARGS is merged with the `slow` exclusion (`slow|X`:
# CTest 3.25 honours only one -LE). MPI tests get the root/oversubscription settings from CTest
# itself (mpi-tests/CMakeLists.txt), not from the caller's environment.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bdir=${MBS_BUILD_DIR:-$root/build}

lexcl="slow|pending"
if [ "${1:-}" = "--all" ]; then
  lexcl=""
  shift
fi
# CTest 3.25 honours only one -LE: a caller's -LE X joins ours as "slow|X" (else
# `scripts/test.sh -LE slurm` would silently run the slurm tests)
nargs=$#
args=()
while [ $# -gt 0 ]; do
  case "$1" in
  -LE | --label-exclude)
    lexcl="${lexcl:+$lexcl|}${2:-}"
    shift 2 || shift
    ;;
  *)
    args+=("$1")
    shift
    ;;
  esac
done
exclude=()
[ -z "$lexcl" ] || exclude=(-LE "$lexcl")

"$root/scripts/setup.sh" --with-lint --with-fuzz --with-urdf --with-viz
"$root/scripts/build.sh"

# the unit tests under ASan/UBSan (issue 12): a habit, not an afterthought
san_rc=0
san_summary=""
sanitize=${MBS_TEST_SANITIZE:-}
[ -n "$sanitize" ] || { [ "$nargs" -eq 0 ] && sanitize=1 || sanitize=0; }
if [ "$sanitize" != 0 ]; then
  mkdir -p "$bdir"
  slog=$bdir/sanitize.log
  echo "test.sh: scripts/sanitize.sh (unit tests under ASan/UBSan), log $slog"
  s0=$(date +%s)
  "$root/scripts/sanitize.sh" >"$slog" 2>&1 || san_rc=$?
  san_summary=$(grep -E 'tests passed' "$slog" | awk '{f += $4; n += $NF} END {printf "%d tests, %d failed", n, f}')
  echo "test.sh: sanitizers: ${san_summary:-no CTest summary} in $(($(date +%s) - s0)) s (exit code $san_rc)"
  [ "$san_rc" -eq 0 ] || grep -E 'Failed|ERROR: |runtime error' "$slog" | head -n 20 || true
fi

log=$bdir/test.sh.log
cd "$bdir"
set +e
ctest --output-on-failure --no-tests=error -j "$(nproc)" "${exclude[@]}" "${args[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
summary=$(grep -E 'tests passed|No tests were found' "$log" | tail -n 1 || true)
[ -z "$san_summary" ] || echo "test.sh: sanitizers: $san_summary (exit code $san_rc; $bdir/sanitize.log)"
echo "test.sh: ${summary:-no CTest summary (see $log)} (exit code $rc)"
[ "$rc" -ne 0 ] || rc=$san_rc
exit "$rc"
