#!/bin/sh
# Plot the joint forces of `mbspar inverse` against time (gnuplot, PNG).
#
# usage: scripts/plot_inverse.sh DIR|inverse.csv [OUT.png] [TITLE]
#   DIR          an `mbspar inverse ... --out DIR` directory (reads DIR/inverse.csv)
#   OUT.png      default: DIR/inverse_tau.png (next to the CSV)
#   TITLE        plot title (default: the CSV path)
# Every tau_* column of inverse.csv (t, q..., qd..., qdd..., tau...) becomes one curve, named after
# its body. Needs gnuplot (Debian: gnuplot-nox). Example (docs/gripper.md):
#   mbspar inverse configs/gripper.cfg --out out/gripper
#   scripts/plot_inverse.sh out/gripper docs/img/gripper_torques.png "seed 003 gripper"
set -eu

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,11s/^# \{0,1\}//p' "$0"
  [ $# -ge 1 ] && exit 0
  exit 2
fi
csv=$1
[ -d "$csv" ] && csv=$csv/inverse.csv
if [ ! -r "$csv" ]; then
  echo "plot_inverse.sh: $csv: cannot read (expected the inverse.csv of mbspar inverse --out DIR)" >&2
  exit 2
fi
out=${2:-$(dirname "$csv")/inverse_tau.png}
title=${3:-$csv}
command -v gnuplot >/dev/null 2>&1 || {
  echo "plot_inverse.sh: gnuplot not found (Debian: apt-get install gnuplot-nox)" >&2
  exit 2
}

# the tau_* columns: "index name" per line
cols=$(head -n 1 "$csv" | tr -d '\r' | awk -F, '{ for (i = 1; i <= NF; i++) if ($i ~ /^tau_/) print i, substr($i, 5) }')
if [ -z "$cols" ]; then
  echo "plot_inverse.sh: $csv: no tau_* columns in the header" >&2
  exit 2
fi
[ "$(head -n 1 "$csv" | cut -d, -f1)" = "t" ] || {
  echo "plot_inverse.sh: $csv: the first column is not t" >&2
  exit 2
}

# one "plot" clause per column
plot=$(printf '%s\n' "$cols" | awk -v f="$csv" '
  { printf "%s\"%s\" using 1:%d with lines lw 2 title \"%s\"", (NR > 1 ? ", " : ""), f, $1, $2 }')

gnuplot <<GP
set terminal pngcairo size 900,560 font "DejaVu Sans,11" noenhanced
set output "$out"
set datafile separator ","
set key autotitle columnhead
set title "$title"
set xlabel "time t [s]"
set ylabel "joint torque tau [N m]"
set grid
set key outside right top
set zeroaxis lt 1 lc rgb "#888888"
plot $plot
GP
echo "wrote $out"
