#!/usr/bin/env bash
# seed 002 Table 2: the five iterative schemes on the 3-link 5-dof manipulator
# (configs/seed002_manipulator.cfg), manoeuvres I (planar), II (spatial) and IIb (II with a light
# upper arm), T = 10 s, dp5 TOL 1e-6, eps 1e-7 (relative change).
# Reports, never asserts. Times are CPU seconds (the machine is shared), see bench/seeds_common.py.
#   bench/seed002_table2.sh [build-dir] [N,N,...]      (default build dir: <repo>/build-seeds)
# Writes bench/results/seed002_table2.{txt,csv,json} and docs/img/ plots; docs/seeds.md reads them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-seeds}
if [ ! -x "$build/mbspar" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" -j2 --target mbspar
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
start=$(date +%s)
python3 "$root/bench/seeds_common.py" table2 "$build/mbspar" "$root" ${2:+"$2"}
echo "# seed002_table2.sh: $(($(date +%s) - start)) s wall"
