#!/usr/bin/env bash
# The unit tests under valgrind memcheck.
#
#   scripts/valgrind.sh [CTEST SELECTION ARGS...]     default: -L unit
#
# Builds in build-valgrind/ (Debug at -O1, so reports have lines), asks CTest for the tests'
# command lines (ctest --show-only=json-v1) and runs each compiled test under
#   valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
# with the test's environment and working directory. For MPI tests valgrind goes between mpiexec
# and the program (every rank runs under valgrind), with Open MPI's suppression file. Tests
# that are not compiled programs (the lint scripts) are listed as not run, never as passed.
# Exit code: 0 when every test ran clean, 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bdir=${MBS_VALGRIND_BUILD_DIR:-$root/build-valgrind}

"$root/scripts/setup.sh" --with-tools
echo "valgrind.sh: configuring $bdir (Debug -O1 -g)"
cmake -S "$root" -B "$bdir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" \
  -DMBS_BUILD_PEERS=OFF
cmake --build "$bdir" -j "$(nproc)"

sel=("$@")
[ ${#sel[@]} -ne 0 ] || sel=(-L unit)
cd "$bdir"
ctest --show-only=json-v1 "${sel[@]}" >"$bdir/valgrind-tests.json"
exec python3 "$root/scripts/ctest_valgrind.py" "$bdir/valgrind-tests.json" "$bdir"
