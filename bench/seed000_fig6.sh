#!/usr/bin/env bash
# seed 000 Fig. 6(b-d): the breakpoint N where the recursive method (ABA) overtakes the nonrecursive one (CRBA + LTDL) on serial chains of revolute, prismatic and spherical joints.
# Reports, never asserts. Times are CPU seconds (the machine is shared), see bench/seeds_common.py.
#   bench/seed000_fig6.sh [build-dir] [N,N,...]      (default build dir: <repo>/build-seeds)
# Writes bench/results/seed000_fig6.{txt,csv,json} and docs/img/ plots; docs/seeds.md reads them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-seeds}
if [ ! -x "$build/mbspar" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" -j2 --target mbspar
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
start=$(date +%s)
python3 "$root/bench/seeds_common.py" fig6 "$build/mbspar" "$root" ${2:+"$2"}
echo "# seed000_fig6.sh: $(($(date +%s) - start)) s wall"
