#!/usr/bin/env bash
# Seed 003 Table 4 against mbspar's counted flops (docs/seeds.md section 5): runs the counting
# program bench/seed003_counts.c (target seed003_counts, the instrumented library mbs_core_flops;
# built here if missing), writes its table to bench/results/seed003_counts.txt and plots it with
# the seed's formulas to docs/img/seed003_counts.png (bench/plot_seeds.py counts). The counts are
# deterministic (no timing). Reports, never asserts.
#   bench/seed003_counts.sh [BUILD_DIR]     (default <repo>/build; 0.1 s once built)
#   bench/seed003_counts.sh --plot-only     (only the plot, from the committed results)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
plot_only=0
for a in "$@"; do
  case $a in
  --plot-only) plot_only=1 ;;
  *) build=$a ;;
  esac
done
if [ "$plot_only" = 0 ]; then
  [ -d "$build" ] || { echo "seed003_counts.sh: no build directory $build (scripts/build.sh)" >&2; exit 2; }
  [ -x "$build/bench/seed003_counts" ] || cmake --build "$build" -j1 --target seed003_counts
  "$build/bench/seed003_counts" >"$root/bench/results/seed003_counts.txt"
  cat "$root/bench/results/seed003_counts.txt"
fi
python3 "$root/bench/plot_seeds.py" counts "$root"
