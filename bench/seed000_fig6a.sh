#!/usr/bin/env bash
# seed 000 Fig. 6(a): a highly parallel system (a star: n rods hinged to the ground at one
# point), where the nonrecursive method (CRBA + LTDL) is faster than the recursive one (ABA) at
# every n; and its section 4's closed-loop breakpoint: a closed planar loop of n links cut at a
# revolute, where the recursive method wins only from about 12 bodies (twice the open chain's 6).
# Reports, never asserts. Times are CPU seconds (see bench/seeds_common.py).
#   bench/seed000_fig6a.sh [build-dir] [N,N,...]      (default build dir: <repo>/build)
# Writes bench/results/seed000_fig6a.{txt,json} and docs/img/seed000_fig6a.png; docs/seeds.md
# reads them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ -x "$build/mbspar" ] || { echo "seed000_fig6a.sh: no $build/mbspar (scripts/build.sh)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
start=$(date +%s)
python3 "$root/bench/seeds_common.py" fig6a "$build/mbspar" "$root" ${2:+"$2"}
echo "# seed000_fig6a.sh: $(($(date +%s) - start)) s wall"
