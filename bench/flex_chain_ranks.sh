#!/bin/sh
# Issue 34: time per evaluation of a chain of flexible links (m = 4) by the distributed
# elimination at 1 and 2 ranks (or RANKS...) against the serial recursive algorithm at one rank
# (bench/flex_chain_ranks.c; docs/flexible.md 11). Builds the target, prints a Markdown table.
#   bench/flex_chain_ranks.sh [N [RANKS...]]        (defaults: 4096, 1 2; one launch each)
#   ROUNDS=K bench/flex_chain_ranks.sh [N [RANKS...]]
#       K interleaved rounds (the rank counts in alternating order), then the medians (min..max)
#       of every column, the commit and the load average: the figures docs/flexible.md quotes.
# MPIEXEC (default mpiexec) and MPIEXEC_FLAGS (default --oversubscribe --bind-to core) may be set.
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
n=${1:-4096}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 1 2
cmake --build "$build" --target flex_chain_ranks >/dev/null
head="| links n | coordinates N | ranks | interface unknowns | distributed (s/eval) | serial recursive (s/eval) | distributed / serial | max \\|diff\\| / max \\|ydd\\| |"
one() {
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 ${MPIEXEC:-mpiexec} -n "$1" ${MPIEXEC_FLAGS:---oversubscribe --bind-to core} \
    "$build/bench/flex_chain_ranks" "$n"
}
if [ -z "${ROUNDS:-}" ]; then
  echo "$head"
  echo "|---|---|---|---|---|---|---|---|"
  for p in "$@"; do one "$p"; done
  exit 0
fi
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)
r=0
while [ "$r" -lt "$ROUNDS" ]; do
  if [ $((r % 2)) -eq 0 ]; then order="$*"; else order=$(printf '%s\n' "$@" | tac | tr '\n' ' '); fi
  for p in $order; do one "$p" >>"$rows"; done
  r=$((r + 1))
done
python3 - "$rows" "$ROUNDS" "$(git -C "$here" describe --always --dirty)" "$load0" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import statistics, sys
rows, rounds, git, l0, l1 = sys.argv[1:]
by = {}
for line in open(rows):
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    if len(c) == 8 and c[0].isdigit():
        by.setdefault(int(c[2]), []).append(c)
def med(v):
    v = [float(x) for x in v if x not in ("—", "-")]
    return (statistics.median(v), min(v), max(v)) if v else None
print("git %s, %s interleaved rounds, load average %s at the start, %s at the end\n" % (git, rounds, l0, l1))
print("| ranks | interface unknowns | distributed s/eval: median (min..max) | serial recursive s/eval: median (min..max) | max \\|diff\\| / max \\|ydd\\| |")
print("|---|---|---|---|---|")
ser = None
for p in sorted(by):
    c = by[p]
    d, s = med([x[4] for x in c]), med([x[5] for x in c])
    if s: ser = s
    fmt = lambda t: "%.3e (%.3e..%.3e)" % t if t else "—"
    print("| %d | %s | %s | %s | %s |" % (p, c[0][3], fmt(d), fmt(s), max(c, key=lambda x: x[7])[7]))
if ser:
    print("\nserial recursive / distributed, medians:", ", ".join(
        "%d ranks %.2fx" % (p, ser[0] / med([x[4] for x in by[p]])[0]) for p in sorted(by)))
PY
