#!/bin/sh
# Plot the output directory of `mbspar run` (gnuplot, PNG).
#
# usage: scripts/plot_run.sh [-o OUTDIR] [-p PREFIX] [-n N] [-t TITLE] DIR
#   DIR        an `mbspar run ... --out DIR` directory: energy.csv and trajectory.csv (format csv)
#              or trajectory.h5 (format hdf5; read with python/mbspar and h5py, Debian package
#              python3-h5py)
#   -o OUTDIR  where the PNGs go (default DIR/plots)
#   -p PREFIX  file-name prefix (default none): PREFIXq.png, PREFIXenergy.png, PREFIXiterations.png
#   -n N       coordinates to plot: all if the model has at most 2N+2, else the first N and the
#              last N (default 3)
#   -t TITLE   title prefix (default: the run's config description, else DIR)
# Writes
#   q.png           joint coordinates q vs time (rad; m for prismatic and free translations)
#   energy.png      kinetic (left axis), potential, total and total - work (right axis) vs
#                   time, and below the drift of total - work from its first value (zero for an
#                   exact integration)
#   iterations.png  average constraint-solver iterations per evaluation between output rows
# Example (docs/outputs.md):
#   mbspar run configs/pendulum.cfg --set integrator.t_end=5 --out out/pendulum
#   scripts/plot_run.sh out/pendulum          # out/pendulum/plots/*.png
set -eu

prog=plot_run.sh
usage() { sed -n '2,23s/^# \{0,1\}//p' "$0"; }
die() {
  echo "$prog: $*" >&2
  exit 2
}

outdir='' prefix='' nend=3 title=''
while getopts "o:p:n:t:h" opt; do
  case $opt in
  o) outdir=$OPTARG ;;
  p) prefix=$OPTARG ;;
  n) nend=$OPTARG ;;
  t) title=$OPTARG ;;
  h)
    usage
    exit 0
    ;;
  *)
    usage >&2
    exit 2
    ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || {
  usage >&2
  exit 2
}
dir=$1
case $nend in
'' | *[!0-9]*) die "-n $nend: expected a positive integer" ;;
esac
[ "$nend" -ge 1 ] || die "-n $nend: expected a positive integer"
[ -d "$dir" ] || die "$dir: not a directory (expected the --out DIR of mbspar run)"
energy=$dir/energy.csv
[ -r "$energy" ] || die "$energy: cannot read (expected the energy.csv of mbspar run --out DIR)"
command -v gnuplot >/dev/null 2>&1 || die "gnuplot not found (Debian: apt-get install gnuplot-nox)"
# the reader python/mbspar, with Debian's python3 (it has h5py) before any other
root=$(cd "$(dirname "$0")/.." && pwd)
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
reader() { PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" "$py" -m mbspar "$@"; }
[ -n "$outdir" ] || outdir=$dir/plots
mkdir -p "$outdir" || die "$outdir: cannot create"
if [ -z "$title" ]; then
  # the config description from run.json, else the directory
  [ -r "$dir/run.json" ] && title=$(reader "$dir" title 2>/dev/null | head -n 1)
  [ -n "$title" ] || title=$dir
fi
# gnuplot strings are double-quoted: keep titles and paths free of quotes and backslashes
title=$(printf '%s' "$title" | tr -d '"\134')

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plot_run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# ---- the trajectory: t and the chosen q columns into $tmp/q.csv (header: t,name,...), by the
# reader (python/mbspar: trajectory.csv with bodies.csv, or trajectory.h5 with h5py)
traj=
if [ -r "$dir/trajectory.csv" ] || [ -r "$dir/trajectory.h5" ]; then
  if reader "$dir" qcsv "$nend" >"$tmp/q.csv" 2>"$tmp/reader.err"; then
    traj=$dir
    nq=$(reader "$dir" | sed -n 's/.*nq = \([0-9]*\)>$/\1/p')
    [ -n "$nq" ] || die "$dir: the reader gives no coordinate count"
  else
    echo "$prog: $(head -n 1 "$tmp/reader.err"); plotting energies and iterations only" >&2
  fi
else
  echo "$prog: $dir: no trajectory.csv or trajectory.h5; plotting energies and iterations only" >&2
fi

nrows=$(($(wc -l <"$energy") - 1))
[ "$nrows" -ge 1 ] || die "$energy: no rows"
style="lines lw 2"
[ "$nrows" -le 100 ] && style="linespoints lw 2 pt 7 ps 0.6"

common='set terminal pngcairo size 1000,600 font "DejaVu Sans,11" noenhanced
set datafile separator ","
set grid
set key outside right top
set autoscale xfix
set xlabel "t (s)"'

# ---- joint coordinates
if [ -n "$traj" ]; then
  ncol=$(head -n 1 "$tmp/q.csv" | tr ',' '\n' | wc -l)
  plot=$(head -n 1 "$tmp/q.csv" | tr ',' '\n' | awk -v f="$tmp/q.csv" -v s="$style" '
    NR > 1 { printf "%s\"%s\" skip 1 using 1:%d with %s title \"%s\"", (NR > 2 ? ", " : ""), f, NR, s, $1 }')
  sel="all $nq coordinates"
  [ "$nq" -eq 1 ] && sel="the only coordinate"
  [ "$ncol" -lt $((nq + 1)) ] && sel="the first and last $nend of $nq coordinates"
  gnuplot <<GP || die "gnuplot failed on $tmp/q.csv"
$common
set output "$outdir/${prefix}q.png"
set title "$title\njoint coordinates: $sel"
set ylabel "q (rad; m for translations)"
plot $plot
GP
fi

# ---- energies: kinetic 3, potential 4, total 5, total - work 7 (column 2 is t)
e0=$(awk -F, 'NR == 2 { print $7 }' "$energy")
gnuplot <<GP || die "gnuplot failed on $energy"
$common
set terminal pngcairo size 1100,650 font "DejaVu Sans,11" noenhanced
set output "$outdir/${prefix}energy.png"
set multiplot layout 2,1 title "$title\nenergy"
set lmargin 12
set rmargin 46
set ylabel "kinetic energy (J)"
set y2label "potential, total (J)"
set ytics nomirror
set y2tics
set xlabel ""
plot "$energy" skip 1 using 2:3 with $style title "kinetic (left axis)", \
     "" skip 1 using 2:4 axes x1y2 with $style title "potential (right)", \
     "" skip 1 using 2:5 axes x1y2 with $style title "total (right)", \
     "" skip 1 using 2:7 axes x1y2 with $style dt 2 title "total - work (right)"
unset y2tics
unset y2label
set ytics mirror
set xlabel "t (s)"
set ylabel "drift (J)"
set format y "%.2g"
plot "$energy" skip 1 using 2:(\$7 - ($e0)) with $style lc rgb "black" title "(total - work) - initial"
unset multiplot
GP

# ---- iterations per evaluation (the first row, step 0, precedes any evaluation)
itmax=$(awk -F, 'NR > 2 && $9 > m { m = $9 } END { print m + 0 }' "$energy")
note=
yrange="[0:*]"
[ "$itmax" = 0 ] && note=" (all zero: a direct solver: aba, crba, direct or schur)" yrange="[0:1]"
if [ "$nrows" -ge 2 ]; then
  gnuplot <<GP || die "gnuplot failed on $energy"
$common
set output "$outdir/${prefix}iterations.png"
set title "$title\nconstraint-solver iterations per evaluation$note"
set ylabel "iterations (average since the previous output row)"
set yrange $yrange
plot "$energy" skip 2 using 2:9 with $style notitle
GP
fi

for f in q energy iterations; do
  [ -f "$outdir/$prefix$f.png" ] && echo "$outdir/$prefix$f.png"
done
exit 0
