#!/bin/sh
# Serial baselines: build (if needed), run bench/serial_baselines, keep the results and plot them.
#   bench/run_serial.sh [serial_baselines options...]     e.g. --n 8,64,512 --reps 3
# Environment: BUILD_DIR (default <repo>/build-bench).
# Writes bench/results/serial_<UTC date>.{json,csv,txt} and docs/img/serial_baselines.png.
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
if command -v gnuplot >/dev/null 2>&1; then
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
  gnuplot <<GP
set terminal pngcairo size 1000,700 enhanced font "DejaVu Sans,11"
set output "$root/docs/img/serial_baselines.png"
set datafile separator comma
set logscale xy
set xrange [6:5500]
set xtics (8,16,32,64,128,256,512,1024,2048,4096)
set format y "10^{%L}"
set xlabel "chain length N (revolute joints)"
set ylabel "time per evaluation (µs)"
set title "Serial dynamics on a revolute chain: time per evaluation vs N\n{/*0.8 $cpu, 1 core, $stamp, git $git}"
set key bottom right box opaque
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
plot "$base.csv" using 1:(\$2*1e6) skip 1 with linespoints lw 2 pt 7 lc rgb "#d62728" title "mbspar ABA (fwdPosition+fwdVelocity+aba)", \
     "" using 1:(\$3*1e6) skip 1 with linespoints lw 2 pt 5 lc rgb "#ff7f0e" title "mbspar CRBA + LTDL", \
     "" using 1:(\$4*1e6) skip 1 with linespoints lw 2 pt 9 lc rgb "#2ca02c" title "mbspar RNEA (inverse dynamics)", \
     "" using 1:(\$5*1e6) skip 1 with linespoints lw 2 pt 4 lc rgb "#1f77b4" title "MuJoCo mj\\\\_forward", \
     "" using 1:(\$6*1e6) skip 1 with linespoints lw 2 pt 6 lc rgb "#9467bd" title "Simbody realize(Acceleration)", \
     0.2*x with lines dt 2 lc rgb "#555555" title "200 ns per body"
GP
  echo "plot: $root/docs/img/serial_baselines.png"
else
  echo "gnuplot not found (Debian: gnuplot-nox): no plot" >&2
fi
echo "results: $base.json $base.csv $base.txt"
