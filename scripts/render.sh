#!/usr/bin/env bash
# Render the last frame (or time T) of an mbspar HDF5 run with ParaView to a PNG.
#
#   scripts/render.sh [-o OUT.png] [-t T] [-s WxH] [-v x|y|z|iso] [-T TITLE] [--check N] DIR
#
# DIR is a `mbspar run` output directory written with output.format = "hdf5" (it holds
# trajectory.xmf and trajectory.h5), opened with ParaView's default reader. Default OUT:
# DIR/render.png. Exit code 1 when nothing was read or the bodies cover fewer than N pixels of
# the picture (--check N, default 200; 0: no check). Needs Debian's paraview and
# python3-paraview (scripts/setup.sh --with-viz); runs pvbatch under xvfb-run when there is no
# display. Exit code 77 when ParaView is missing (CTest counts it as skipped).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="" args=()
while [ $# -gt 1 ]; do
  case "$1" in
  -o) out=$2 ;;
  -t) args+=(--time "$2") ;;
  -s) args+=(--size "$2") ;;
  -v) args+=(--view "$2") ;;
  -T) args+=(--title "$2") ;;
  --check) args+=(--check "$2") ;;
  *) break ;;
  esac
  shift 2
done
[ $# -eq 1 ] || {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
dir=$1
[ -f "$dir/trajectory.xmf" ] || {
  echo "render.sh: $dir/trajectory.xmf not found (run with --set output.format=hdf5)" >&2
  exit 2
}
[ -n "$out" ] || out=$dir/render.png
if ! command -v pvbatch >/dev/null 2>&1 || ! pvbatch --help >/dev/null 2>&1; then
  echo "render.sh: pvbatch not found: install ParaView (scripts/setup.sh --with-viz: Debian" \
    "paraview python3-paraview xvfb); skipped" >&2
  exit 77
fi
xmf=$(cd "$(dirname "$dir/trajectory.xmf")" && pwd)/trajectory.xmf
run=(pvbatch)
if [ -z "${DISPLAY:-}" ]; then
  command -v xvfb-run >/dev/null 2>&1 || {
    echo "render.sh: no display and no xvfb-run (Debian xvfb); skipped" >&2
    exit 77
  }
  # -a searches a free server number from -n: a number of our own makes two renders started at
  # once (parallel tests) less likely to race for the same one
  run=(xvfb-run -a -n $((100 + $$ % 400)) -s "-screen 0 1920x1080x24" pvbatch)
fi
# pvbatch prints its own banner lines: keep them out of the way, show ours and errors
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# a fresh Xvfb now and then refuses pvbatch's connection on this loaded machine ("bad X server
# connection"): up to three attempts for that failure alone
for attempt in 1 2 3; do
  rc=0
  "${run[@]}" "$root/scripts/render_paraview.py" "$xmf" "$out" "${args[@]}" >"$log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ] || [ ${#run[@]} -eq 1 ] || ! grep -q 'bad X server connection' "$log"; then
    break
  fi
  echo "render.sh: Xvfb refused the connection (attempt $attempt of 3)" >&2
done
if [ "$rc" -ne 0 ]; then
  cat "$log" >&2
  exit 1
fi
grep '^render_paraview.py:' "$log" || true
