#!/usr/bin/env bash
# Animate an mbspar run: a projected 3-D view of the bodies (each a polyline from its parent's
# origin through its origin and centre of mass to its shape's end, dots at the points, coloured
# by speed) with the time, as an animated GIF (or MP4), from Debian packages only:
# python3 (+ python3-h5py for HDF5 runs) and gnuplot; MP4 also needs ffmpeg.
#
#   scripts/animate.sh [-o OUT.gif|OUT.mp4] [-n FRAMES] [-s WxH] [-v ROTX,ROTZ] [-T TITLE] DIR
#
# DIR is a `mbspar run` output directory (trajectory.h5, or trajectory.csv with bodies.csv).
# Defaults: OUT = DIR/animation.gif, FRAMES = 100 (rows picked evenly), 640x480, view 70,20
# (gnuplot's `set view`), TITLE = the run's description.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="" frames=100 size=640x480 view=70,20 title=""
while [ $# -gt 1 ]; do
  case "$1" in
  -o) out=$2 ;;
  -n) frames=$2 ;;
  -s) size=$2 ;;
  -v) view=$2 ;;
  -T) title=$2 ;;
  *) break ;;
  esac
  shift 2
done
[ $# -eq 1 ] || {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
dir=$1
[ -f "$dir/trajectory.h5" ] || [ -f "$dir/trajectory.csv" ] || {
  echo "animate.sh: $dir has no trajectory.h5 or trajectory.csv" >&2
  exit 2
}
[ -n "$out" ] || out=$dir/animation.gif
# Debian's python3 has h5py; a python3 earlier in PATH may not
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
command -v gnuplot >/dev/null 2>&1 || {
  echo "animate.sh: gnuplot not found (Debian gnuplot-nox; scripts/setup.sh installs it)" >&2
  exit 1
}
case "$out" in
*.mp4) command -v ffmpeg >/dev/null 2>&1 || {
  echo "animate.sh: MP4 needs ffmpeg (Debian ffmpeg); or write a .gif" >&2
  exit 1
} ;;
esac
if [ -z "$title" ] && [ -f "$dir/run.json" ]; then # the description, by python/mbspar
  title=$(PYTHONPATH="$root/python" "$py" -m mbspar "$dir" title 2>/dev/null | head -n 1 || true)
fi
w=${size%x*} h=${size#*x}
rx=${view%,*} rz=${view#*,}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base=$tmp/anim
case "$out" in *.mp4) base=$tmp/anim.mp4 && mkdir -p "$base.dir" ;; esac
"$py" "$root/scripts/animate.py" "$dir" "$base" "$frames" "$w" "$h" "$rx" "$rz" "$title" \
  >"$tmp/anim.gp"
# gnuplot writes to a temporary name; the result is renamed into place
case "$out" in
*.mp4)
  gnuplot "$tmp/anim.gp"
  ffmpeg -loglevel error -y -framerate 15 -i "$base.dir/frame_%05d.png" -pix_fmt yuv420p \
    -vf "pad=ceil(iw/2)*2:ceil(ih/2)*2" "$tmp/out.mp4"
  mv "$tmp/out.mp4" "$out"
  ;;
*)
  sed -i "s|^set output \"$base\"|set output \"$tmp/out.gif\"|" "$tmp/anim.gp"
  gnuplot "$tmp/anim.gp"
  mv "$tmp/out.gif" "$out"
  ;;
esac
echo "animate.sh: wrote $out"
