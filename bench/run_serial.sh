#!/bin/sh
# Serial baselines: build (if needed), run bench/serial_baselines on the revolute chains and then
# on binary trees of the same links, keep the results and plot them.
#   bench/run_serial.sh [serial_baselines options...]     e.g. --n 8,64,512 --reps 3
# Environment: BUILD_DIR (default <repo>/build-bench); SERIAL_TREE_REPS (repetitions of the tree
# run, default 3; the options above are passed to both runs).
# Writes bench/results/serial_<UTC date>.{json,csv,txt} and serial_tree_<UTC date>.*, and
# docs/img/serial_baselines.png and serial_baselines_tree.png (bench/plot_serial.sh CSV [PNG]
# redraws a plot from an earlier run).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-bench}

# build the benchmark (configure once; the default Release flags)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" -j2 --target serial_baselines

stamp=$(date -u +%Y%m%dT%H%M%SZ)
git=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
out=$root/bench/results
mkdir -p "$out" "$root/docs/img"
base=$out/serial_$stamp
"$build/bench/serial_baselines" --json "$base.json" --csv "$base.csv" --git "$git" "$@" |
  tee "$base.txt"

# plot: time per evaluation vs N, log-log
sh "$root/bench/plot_serial.sh" "$base.csv" "$root/docs/img/serial_baselines.png"
echo "results: $base.json $base.csv $base.txt"

# the same links as binary trees (heap order; bodies 7, 15, ..., 4095)
tbase=$out/serial_tree_$stamp
"$build/bench/serial_baselines" --tree --reps "${SERIAL_TREE_REPS:-3}" --json "$tbase.json" \
  --csv "$tbase.csv" --git "$git" "$@" | tee "$tbase.txt"
sh "$root/bench/plot_serial.sh" "$tbase.csv" "$root/docs/img/serial_baselines_tree.png"
echo "results: $tbase.json $tbase.csv $tbase.txt"
