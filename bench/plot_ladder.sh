#!/bin/sh
# Plot a bench/ladder.sh result: time per evaluation of each method and rank count on
# configs/ladder.cfg, log scale (gnuplot-nox).
#   bench/plot_ladder.sh bench/results/ladder_<stamp>.md [docs/img/ladder_methods.png]
set -eu
md=$1
root=$(cd "$(dirname "$0")/.." && pwd)
png=${2:-$root/docs/img/ladder_methods.png}
command -v gnuplot >/dev/null 2>&1 || {
  echo "gnuplot not found (Debian: gnuplot-nox): no plot" >&2
  exit 0
}
stamp=$(basename "$md" .md | sed 's/^ladder_//')
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
# table rows with a time: "label" seconds (the label: method, its loop path, ranks)
awk -F'|' 'NR > 2 && $5 ~ /^ *[0-9.e+-]+ *$/ {
  m = $2; gsub(/^ +| +$/, "", m); sub(/ -ksp_type preonly -pc_type cholesky/, " cholesky", m)
  gsub(/ --set [^ ]*/, "", m)
  r = $3; gsub(/ /, "", r); t = $5; gsub(/ /, "", t)
  printf "\"%s, %s rank%s\" %s\n", m, r, (r == 1 ? "" : "s"), t
}' "$md" >"$dat"
[ -s "$dat" ] || { echo "plot_ladder.sh: no timed rows in $md" >&2; exit 1; }
gnuplot <<GP
set terminal pngcairo size 1000,560 font "sans,10" noenhanced
set output "$png"
set title "configs/ladder.cfg (2100 bodies, 300 closure equations): time per evaluation, $stamp\n(one rank per core; $(getconf _NPROCESSORS_ONLN) cores here, more ranks are oversubscribed; rows / unit / range_space: docs/loops.md 8)"
set logscale y
set ylabel "seconds per evaluation (log)"
set style fill solid 0.6 border -1
set boxwidth 0.7
set xtics rotate by -35 left nomirror
set grid ytics
set bmargin 11
set rmargin 16
unset key
plot "$dat" using 0:2:xtic(1) with boxes lc rgb "#4477aa", \
     "" using 0:(\$2*1.15):(sprintf("%.3g", \$2)) with labels font "sans,8"
GP
echo "plot_ladder.sh: wrote $png" >&2
