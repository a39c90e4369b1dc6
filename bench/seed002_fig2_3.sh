#!/usr/bin/env bash
# seed 002 Figs. 2(a)/(b) and 3: CPU time per evaluation of warm-started J-CG and of ABA on revolute chains vs N, the fitted exponent, J-CG iterations vs 5N, and T_P,i / T_P,r (eqs. 20-21) vs the recursive time.
# Reports, never asserts. Times are CPU seconds (the machine is shared), see bench/seeds_common.py.
#   bench/seed002_fig2_3.sh [build-dir] [N,N,...]      (default build dir: <repo>/build-seeds)
# Writes bench/results/seed002_fig2_3.{txt,csv,json} and docs/img/ plots; docs/seeds.md reads them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-seeds}
if [ ! -x "$build/mbspar" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" -j2 --target mbspar
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
start=$(date +%s)
python3 "$root/bench/seeds_common.py" fig23 "$build/mbspar" "$root" ${2:+"$2"}
echo "# seed002_fig2_3.sh: $(($(date +%s) - start)) s wall"
