#!/bin/sh
# Issue 34: time per evaluation of a chain of flexible links (m = 4) by the distributed
# elimination at 1 and 2 ranks (or RANKS...) against the serial recursive algorithm at one rank
# (bench/flex_chain_ranks.c; docs/flexible.md 11). Builds the target, prints a Markdown table.
#   bench/flex_chain_ranks.sh [N [RANKS...]]        (defaults: 4096, 1 2)
# MPIEXEC (default mpiexec) and MPIEXEC_FLAGS (default --oversubscribe --bind-to core) may be set.
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
n=${1:-4096}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 1 2
cmake --build "$build" --target flex_chain_ranks >/dev/null
echo "| links n | coordinates N | ranks | interface unknowns | distributed (s/eval) | serial recursive (s/eval) | distributed / serial | max \\|diff\\| / max \\|ydd\\| |"
echo "|---|---|---|---|---|---|---|---|"
for p in "$@"; do
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 ${MPIEXEC:-mpiexec} -n "$p" ${MPIEXEC_FLAGS:---oversubscribe --bind-to core} \
    "$build/bench/flex_chain_ranks" "$n"
done
