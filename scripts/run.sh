#!/usr/bin/env bash
# The main job: install what is missing, build, and run mbspar on 4 MPI ranks.
#
#   scripts/run.sh [--np N] [MBSPAR ARGS...]
#
# Without MBSPAR ARGS it runs   mpirun -n 4 build/mbspar configs/chain.cfg
# Arguments that are all options (start with -) are appended after configs/chain.cfg, e.g.
#   scripts/run.sh --json -
# Any positional argument means the arguments are the whole mbspar command line, e.g.
#   scripts/run.sh accel configs/chain.cfg --json -
# --np N (or MBS_NP=N) sets the number of ranks. Running as root and with more ranks than cpus
# works: scripts/env.sh sets what Open MPI needs.
# Standard output belongs to mbspar alone: the package check and the build log go to standard
# error, so `scripts/run.sh accel configs/chain.cfg --json - 2>/dev/null | python3 -m json.tool`
# works on a fresh clone.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
np=${MBS_NP:-4}
if [ "${1:-}" = "--np" ]; then
  [ $# -ge 2 ] || {
    echo "run.sh: --np needs a number" >&2
    exit 2
  }
  np=$2
  shift 2
fi
case "$np" in
'' | *[!0-9]* | 0)
  echo "run.sh: invalid number of ranks '$np'" >&2
  exit 2
  ;;
esac

# MBS_RUN_NO_BUILD=1: use the existing build as it is (tests of this script)
if [ "${MBS_RUN_NO_BUILD:-0}" != 1 ]; then
  "$root/scripts/setup.sh" >&2
  "$root/scripts/build.sh" >&2
fi

exe=${MBS_BUILD_DIR:-$root/build}/mbspar
if [ ! -x "$exe" ]; then
  echo "run.sh: $exe was not built (is parallel/main.c missing?)" >&2
  exit 1
fi

positional=0
for a in "$@"; do
  case "$a" in
  -*) ;;
  *) positional=1 ;;
  esac
done
if [ "$positional" = 1 ]; then
  args=("$@")
else
  args=("$root/configs/chain.cfg" "$@")
  # the default job writes a new output directory each time (mbspar never overwrites a
  # previous run's files without --force)
  has_out=0
  for a in "$@"; do
    case "$a" in --out | --out=*) has_out=1 ;; esac
  done
  if [ "$has_out" = 0 ]; then
    args+=(--out "$root/out/chain-$(date -u +%Y%m%dT%H%M%SZ)")
  fi
fi

# shellcheck source=env.sh
. "$root/scripts/env.sh" "$np"
echo "run.sh: mpirun -n $np $exe ${args[*]}" >&2
exec mpirun -n "$np" "$exe" "${args[@]}"
