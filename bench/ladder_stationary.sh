#!/usr/bin/env bash
# The stationary methods (jacobi, gs) on configs/ladder.cfg, run to convergence: issue 10's
# acceptance ("every solver ... equals the serial loop baseline to 1e-9") on the full ladder, which
# the default CTest run cannot afford; the slow CTest test_loops_par_ladder_stationary.np1-4
# asserts it (test_loops_par --ladder-stationary), this script reports it from the command line.
# One evaluation takes 1-2.5 x 10^7 sweeps (docs/loops.md 8.4: jacobi's residual falls by 1 - 9e-7
# per sweep, gs's by 1 - 2e-6). Each method runs `mbspar accel` once at tol 1e-11 (the test's;
# max_iter 3e7) beside aba (the oracle), and the report gives sweeps, time, the final residual
# and the relative 2-norm differences to aba of q'', the tree's lambda, the joint wrenches and the
# loop lambda (test_loops_par's measure).
# Reports, never asserts.
#
#   bench/ladder_stationary.sh [--np P] [--methods "jacobi gs"] [--parallel] [BUILD_DIR]
#   bench/ladder_stationary.sh --report DIR     (the table from an earlier run's JSON files)
#
# --np P: ranks per run (default 1; the jacobi iterates do not depend on P, gs's multicolour
# ones neither). --parallel: run the methods at the same time (P x #methods must not exceed the
# cores). Writes bench/results/ladder_stationary_<UTC>.md and keeps the JSON files in
# bench/results/ladder_stationary_<UTC>/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
np=1
methods="jacobi gs"
par=0
bdir=""
report=""
while (($#)); do
  case $1 in
  --np)
    np=${2:?--np P}
    shift
    ;;
  --methods)
    methods=${2:?--methods LIST}
    shift
    ;;
  --parallel) par=1 ;;
  --report)
    report=${2:?--report DIR}
    shift
    ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) bdir=$1 ;;
  esac
  shift
done

table() { # DIR: one row per METHOD.json beside aba.json
  python3 - "$1" <<'EOF'
import glob, json, math, os, sys
d = sys.argv[1]
ref = json.load(open(os.path.join(d, "aba.json")))
def flat(v):
    out = []
    for x in v:
        out.extend(flat(x) if isinstance(x, list) else [x])
    return out
def rel(a, b, floor=1e-9):
    a, b = flat(a), flat(b)
    num = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    den = math.sqrt(sum(y * y for y in b))
    return num / max(den, floor)
print("| method | ranks | sweeps | residual | reason | time [s] | q'' | tree lambda | joint wrench | loop lambda |")
print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
print("| aba | 1 | | | direct | %.4g | | | | |" % ref["time_per_eval_s"])
for f in sorted(glob.glob(os.path.join(d, "*.json"))):
    name = os.path.basename(f)[:-5]
    if name == "aba":
        continue
    a = json.load(open(f))
    s = a["solver"]
    print("| %s | %s | %s | %.3g | %s | %.1f | %.2e | %.2e | %.2e | %.2e |" % (
        s["method"], a["ranks"],
        s.get("iterations", ""), s.get("residual", float("nan")), s.get("reason", ""),
        a["time_per_eval_s"], rel(a["qdd"], ref["qdd"]), rel(a["lambda"], ref["lambda"]),
        rel(a["joint_wrench"], ref["joint_wrench"]), rel(a["loop_lambda"], ref["loop_lambda"])))
EOF
}

if [[ -n $report ]]; then
  table "$report"
  exit 0
fi

bdir=${bdir:-$here/build}
[[ -x $bdir/mbspar ]] || { echo "ladder_stationary.sh: no $bdir/mbspar (scripts/build.sh)" >&2; exit 2; }
# one thread per rank; Open MPI as root and oversubscribed for the ranks of every run at once
export OMP_NUM_THREADS=1
nmeth=$(wc -w <<<"$methods")
# shellcheck source=../scripts/env.sh
. "$here/scripts/env.sh" "$((np * (par ? nmeth : 1)))"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=$here/bench/results/ladder_stationary_$stamp
md=$out.md
mkdir -p "$out"
cfg=$here/configs/ladder.cfg
launch=()
((np > 1)) && launch=(mpirun -n "$np")
start="git $(git -C "$here" describe --always --dirty), $(date -u +%Y-%m-%dT%H:%M:%SZ), $(getconf _NPROCESSORS_ONLN) cores, load average at the start $(cut -d' ' -f1-3 /proc/loadavg)"
"$bdir/mbspar" accel "$cfg" --set solver.method=aba --json "$out/aba.json" --quiet
pids=()
for meth in $methods; do
  echo "ladder_stationary.sh: $meth at $np rank(s), tol 1e-11 (1-2 hours at one rank)" >&2
  "${launch[@]}" "$bdir/mbspar" accel "$cfg" --set solver.method="$meth" \
    --set solver.max_iter=30000000 --set solver.tol=1e-11 --json "$out/$meth.json" \
    >"$out/$meth.log" 2>&1 &
  pids+=($!)
  ((par)) || wait "${pids[-1]}" || true
done
((par)) && { wait "${pids[@]}" || true; }
{
  echo "# configs/ladder.cfg: $methods run to convergence"
  echo
  echo "$start; methods run $( ((par)) && echo "at the same time" || echo "one after the other")."
  echo
  table "$out"
  echo
  echo "Relative 2-norm differences to aba (test_loops_par's measure; acceptance 1e-9)."
  echo "Read with docs/loops.md 8.4."
} >"$md"
cat "$md"
echo "ladder_stationary.sh: wrote $md" >&2
