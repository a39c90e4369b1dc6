#!/usr/bin/env bash
# Issue 32's acceptance point for solver.method = auto: the main job `mpirun -n 4 mbspar
# configs/chain.cfg` (auto) against the serial baseline `mbspar configs/chain.cfg --set
# solver.method=aba`, whole commands timed with /usr/bin/time in interleaved rounds (A B A B ...,
# one warm-up pair first), medians of the wall and CPU seconds and the median of the per-round
# ratios A/B (a ratio per pair holds when the machine's speed drifts). Also the method auto chose
# and its summary line. Each round also times the launches alone (`mpirun -n P mbspar --version`
# and `mbspar --version`), so the report separates the launcher's start-up of P processes from the
# run, and A0, the job A without rank 1 formatting the rows (MBSPAR_FMT_RANK=0, docs/model.md), so
# it shows what that offload gains; and rank 0's run.json timers (output rows, steps) of A and B.
# Reports, never asserts.
#
#   bench/auto_main.sh [--rounds N] [--np P] [BUILD_DIR]     (default 10 rounds, 4 ranks)
#
# Writes bench/results/auto_main_<UTC>.md (commit, load before and after, every round).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=10
np=4
bdir=""
while (($#)); do
  case $1 in
  --rounds)
    rounds=${2:?--rounds N}
    shift
    ;;
  --np)
    np=${2:?--np P}
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
bdir=${bdir:-$here/build}
[[ -x $bdir/mbspar ]] || { echo "auto_main.sh: no $bdir/mbspar (scripts/build.sh)" >&2; exit 2; }
# Open MPI as root, and oversubscribed when the ranks outnumber the cpus (as README's command)
# shellcheck source=../scripts/env.sh
. "$here/scripts/env.sh" "$np"
mpiexec=${MPIEXEC:-mpirun}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results"
md=$here/bench/results/auto_main_$stamp.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cfg=$here/configs/chain.cfg
load0=$(cut -d' ' -f1-3 /proc/loadavg)
cmd_a=("$mpiexec" -n "$np" "$bdir/mbspar" "$cfg" --out "$work/a" --force)
cmd_b=("$bdir/mbspar" "$cfg" --set solver.method=aba --out "$work/b" --force)
# one timed run: wall user sys into $work/t.$1.$2 (label, round)
timed() {
  local label=$1 r=$2
  shift 2
  /usr/bin/time -f "%e %U %S" -o "$work/t.$label.$r" "$@" >"$work/o.$label.$r" 2>"$work/e.$label.$r" ||
    echo "auto_main.sh: $label round $r exited $?" >&2
}
for r in $(seq 0 "$rounds"); do # round 0: warm-up, not counted
  timed A "$r" "${cmd_a[@]}"
  cp "$work/a/run.json" "$work/j.A.$r" 2>/dev/null || true
  timed B "$r" "${cmd_b[@]}"
  cp "$work/b/run.json" "$work/j.B.$r" 2>/dev/null || true
  MBSPAR_FMT_RANK=0 timed A0 "$r" "${cmd_a[@]}"
  timed LA "$r" "$mpiexec" -n "$np" "$bdir/mbspar" --version
  timed LB "$r" "$bdir/mbspar" --version
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$work" "$rounds" "$md" "$(git -C "$here" describe --always --dirty)" "$load0" "$load1" \
  "$np" "$(getconf _NPROCESSORS_ONLN)" "$(grep -h 'solver: auto' "$work"/o.A.* | head -1)" <<'PY'
import statistics as st, sys, datetime
work, rounds, md, commit, load0, load1, np, ncpu, summary = sys.argv[1:10]
rounds = int(rounds)
def t(label, r):
    return [float(x) for x in open(f"{work}/t.{label}.{r}").read().split()[-3:]]
A = [t("A", r) for r in range(1, rounds + 1)]
B = [t("B", r) for r in range(1, rounds + 1)]
ratio = [a[0] / b[0] for a, b in zip(A, B)]
LA = [t("LA", r) for r in range(1, rounds + 1)]
LB = [t("LB", r) for r in range(1, rounds + 1)]
A0 = [t("A0", r) for r in range(1, rounds + 1)]
ratio0 = [a[0] / b[0] for a, b in zip(A0, B)]
def timer(label, r, name):
    try:
        import json
        return json.load(open(f"{work}/j.{label}.{r}"))["timers"][name]["max"]
    except Exception:
        return float("nan")
net = [(a[0] - la[0]) / max(b[0] - lb[0], 1e-9) for a, b, la, lb in zip(A, B, LA, LB)]
med = lambda v: st.median(v)
out = []
out.append("# The main job with solver.method = auto against serial aba (issue 32)\n")
out.append(f"git {commit}, {datetime.datetime.utcnow():%Y-%m-%dT%H:%M:%SZ}, {ncpu} cpus, load average "
           f"{load0} at the start, {load1} at the end (a shared machine: a measurement under load; "
           f"re-run on a quiet machine for the figure to quote).\n")
out.append(f"- A: `mpirun -n {np} mbspar configs/chain.cfg` (auto; scripts/env.sh {np} for "
           "oversubscription)\n- B: `mbspar configs/chain.cfg --set solver.method=aba`\n")
out.append(f"- auto's choice (A's summary): `{summary.strip()}`\n")
out.append(f"{rounds} interleaved rounds A B after one warm-up pair; whole commands, /usr/bin/time.\n")
out.append("| | wall median [s] | wall min..max [s] | user+sys median [s] |")
out.append("|---|---:|---:|---:|")
for name, v in (("A (auto, np %s)" % np, A), ("B (aba, 1 rank)", B),
                ("A0: A with `MBSPAR_FMT_RANK=0` (rank 0 formats its rows)", A0),
                ("launch A: `mpirun -n %s mbspar --version`" % np, LA),
                ("launch B: `mbspar --version`", LB)):
    out.append(f"| {name} | {med([x[0] for x in v]):.2f} | {min(x[0] for x in v):.2f}..{max(x[0] for x in v):.2f} "
               f"| {med([x[1] + x[2] for x in v]):.2f} |")
out.append("")
out.append(f"Wall ratio A/B per round: median **{med(ratio):.3f}** (min {min(ratio):.3f}, max {max(ratio):.3f}); "
           "below 1 means the auto job was faster.\n")
out.append(f"A0/B (the job without rank 1 formatting the rows) per round: median "
           f"**{med(ratio0):.3f}** (min {min(ratio0):.3f}, max {max(ratio0):.3f}).\n")
out.append("Rank 0's run.json timers, medians [s]: "
           + ", ".join(f"{lab} output {med([timer(lab, r, 'output') for r in range(1, rounds + 1)]):.3f}"
                       f" steps {med([timer(lab, r, 'step') for r in range(1, rounds + 1)]):.3f}"
                       for lab in ("A", "B")) + ".\n")
out.append(f"Without the launches ((A - launch A) / (B - launch B) per round): median "
           f"**{med(net):.3f}** (min {min(net):.3f}, max {max(net):.3f}).\n")
out.append("| round | A wall [s] | B wall [s] | A/B |")
out.append("|---:|---:|---:|---:|")
for r, (a, b, q) in enumerate(zip(A, B, ratio), 1):
    out.append(f"| {r} | {a[0]:.2f} | {b[0]:.2f} | {q:.3f} |")
open(md, "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
echo "auto_main.sh: wrote $md"
