#!/usr/bin/env bash
# The main job: install what is missing, build mbspar, and run it on 4 MPI ranks.
#
#   scripts/run.sh [--np N] [MBSPAR ARGS...]
#
# Without MBSPAR ARGS it runs   mpirun -n 4 build/mbspar configs/chain.cfg --out out/chain-TIME
# Options alone (with their values) are appended after configs/chain.cfg, e.g.
#   scripts/run.sh --set integrator.t_end=0.1 --out out/short --json -
# A VERB or CONFIG among the arguments means they are the whole mbspar command line, e.g.
#   scripts/run.sh accel configs/chain.cfg --json -
# A word is a VERB or CONFIG unless it is the value of an option: after an mbspar option that
# takes one (--set, --out, --json, ...) always; after a PETSc option (single dash, e.g.
# -ksp_type cg) unless it names a verb or an existing file (the rule mbspar itself follows).
# --np N (or MBS_NP=N) sets the number of ranks. Running as root and with more ranks than cpus
# works: scripts/env.sh sets what Open MPI needs.
#
# Set-up: the first call runs scripts/setup.sh (packages), configures build/ if it has no
# CMakeCache.txt, and builds the mbspar target only (not the tests and benchmarks). Later calls
# skip the package check while scripts/setup.sh is unchanged, and the build while no source,
# header or CMake file is newer than the last build (stamps in the build directory);
# MBS_RUN_CHECK=1 forces both. MBS_RUN_NO_BUILD=1 uses the existing build as it is.
# Standard output belongs to mbspar alone: the package check and the build log go to standard
# error, so `scripts/run.sh accel configs/chain.cfg --json - 2>/dev/null | python3 -m json.tool`
# works on a fresh clone.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bdir=${MBS_BUILD_DIR:-$root/build}
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

if [ "${MBS_RUN_NO_BUILD:-0}" != 1 ]; then
  force=${MBS_RUN_CHECK:-0}
  setup_stamp=$bdir/.run-setup.stamp
  build_stamp=$bdir/.run-build.stamp
  # packages: once, and again when scripts/setup.sh changes (its package lists)
  if [ "$force" = 1 ] || [ ! -f "$setup_stamp" ] || [ "$root/scripts/setup.sh" -nt "$setup_stamp" ]; then
    "$root/scripts/setup.sh" >&2
    mkdir -p "$bdir"
    touch "$setup_stamp"
  fi
  # build: configure once, then only the mbspar target, and only when something changed
  changed=1
  if [ "$force" != 1 ] && [ -f "$build_stamp" ] && [ -x "$bdir/mbspar" ]; then
    changed=$({ find "$root/CMakeLists.txt" "$root/src" "$root/parallel" "$root/include" \
      -newer "$build_stamp" \( -name '*.[ch]' -o -name '*.in' -o -name CMakeLists.txt \) \
      -print -quit 2>/dev/null || echo error; } | wc -l)
  fi
  if [ "$changed" != 0 ]; then
    if [ ! -f "$bdir/CMakeCache.txt" ]; then
      echo "run.sh: configuring $bdir (Release)" >&2
      cmake -S "$root" -B "$bdir" -DCMAKE_BUILD_TYPE=Release >&2 || {
        echo "run.sh: configure failed (see the message above; scripts/setup.sh installs the packages)" >&2
        exit 1
      }
    fi
    echo "run.sh: building mbspar" >&2
    touch "$build_stamp.new"
    cmake --build "$bdir" -j "$(nproc)" --target mbspar >&2
    mv "$build_stamp.new" "$build_stamp"
  fi
fi

exe=$bdir/mbspar
if [ ! -x "$exe" ]; then
  echo "run.sh: $exe was not built (is parallel/main.c missing?)" >&2
  exit 1
fi

# does the command line name a VERB or CONFIG (a word that is no option's value)?
positional=0
prev=
for a in "$@"; do
  case "$prev" in
  --set | --json | --out | --repeat | --bind | --restart | --progress | --method | --grain | \
    --dot | --iterations | --procs | --latency | --bandwidth | --flop-time)
    prev=
    continue
    ;;
  -[!-]?*) # a PETSc option: the next word is its value unless it names a verb or a file
    prev=
    case "$a" in
    -[0-9.]*) ;; # a negative number: the value
    -*) prev=$a ;;
    run | accel | inverse | static | cpa | check | help) positional=1 ;;
    *) if [ -e "$a" ]; then positional=1; fi ;;
    esac
    continue
    ;;
  esac
  case "$a" in
  -*) ;;
  *) positional=1 ;;
  esac
  prev=$a
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
