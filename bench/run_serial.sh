#!/bin/sh
# Serial baselines: build (if needed), run bench/serial_baselines, keep the results and plot them.
#   bench/run_serial.sh [serial_baselines options...]     e.g. --n 8,64,512 --reps 3
# Environment: BUILD_DIR (default <repo>/build-bench).
# Writes bench/results/serial_<UTC date>.{json,csv,txt} and docs/img/serial_baselines.png
# (bench/plot_serial.sh CSV [PNG] redraws a plot from an earlier run).
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
