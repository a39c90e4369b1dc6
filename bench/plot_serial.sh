#!/bin/sh
# Plot a serial_baselines CSV: time per evaluation vs N, log-log (gnuplot-nox).
#   bench/plot_serial.sh bench/results/serial_<stamp>.csv [docs/img/serial_baselines.png]
set -eu
csv=$1
root=$(cd "$(dirname "$0")/.." && pwd)
png=${2:-$root/docs/img/serial_baselines.png}
stamp=$(basename "$csv" .csv | sed 's/^serial_//; s/^tree_//')
json=${csv%.csv}.json
git=$(sed -n 's/.*"git": "\([^"]*\)".*/\1/p' "$json" 2>/dev/null | head -n 1)
load=$(sed -n 's/.*"loadavg_end": "\([^"]*\)".*/\1/p' "$json" 2>/dev/null | head -n 1)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
# the model family recorded by serial_baselines ("revolute chain" or "revolute binary tree")
family=$(sed -n 's/.*"type": "\([^,"]*\).*/\1/p' "$json" 2>/dev/null | head -n 1)
family=${family:-revolute chain}
command -v gnuplot >/dev/null 2>&1 || {
  echo "gnuplot not found (Debian: gnuplot-nox): no plot" >&2
  exit 0
}
# CSV columns: n, 7 wall-clock columns (aba crba rnea mujoco simbody aba_kernel rnea_kernel),
# then the same 7 in thread CPU time
gnuplot <<GP
set terminal pngcairo size 1000,700 enhanced font "DejaVu Sans,11"
set output "$png"
set datafile separator comma
set logscale xy
set xrange [6:5500]
set xtics (8,16,32,64,128,256,512,1024,2048,4096)
set format y "10^{%L}"
set xlabel "bodies N ($family)"
set ylabel "time per evaluation (µs)"
set title "Serial dynamics on a $family: time per evaluation vs N\n{/*0.8 $cpu, 1 core, run $stamp, git ${git:-?}, load average at end ${load:-?}}"
set key top left box opaque
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
plot "$csv" using 1:(\$2*1e6) skip 1 with linespoints lw 2 pt 7 lc rgb "#d62728" title "mbspar ABA (fwdPosition+fwdVelocity+aba)", \
     "" using 1:(\$9*1e6) skip 1 with lines lw 1 dt 3 lc rgb "#d62728" title "mbspar ABA, thread CPU time", \
     "" using 1:(\$3*1e6) skip 1 with linespoints lw 2 pt 5 lc rgb "#ff7f0e" title "mbspar CRBA + LTDL", \
     "" using 1:(\$4*1e6) skip 1 with linespoints lw 2 pt 9 lc rgb "#2ca02c" title "mbspar RNEA (inverse dynamics)", \
     "" using 1:(\$5*1e6) skip 1 with linespoints lw 2 pt 4 lc rgb "#1f77b4" title "MuJoCo mj\\\\_forward", \
     "" using 1:(\$6*1e6) skip 1 with linespoints lw 2 pt 6 lc rgb "#9467bd" title "Simbody realize(Acceleration)", \
     0.2*x with lines dt 2 lc rgb "#555555" title "200 ns per body"
GP
echo "plot: $png"
