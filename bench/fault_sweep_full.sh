#!/usr/bin/env bash
# The complete fault-injection sweeps of issue 12.1 (docs/hardening.md "12.1"): every distinct
# allocation, checked-write and NaN point that `run`, `accel`, `static` and `inverse` reach on the
# tiny test model, injected once each (at its first occurrence) on every rank, at 1, 2 and 4
# ranks: mpi-tests/fault_sweep.py --mode all --every 1 --ranks all. No sampling; CTest runs the
# sampled sweeps (fault_sweep.*: --every K, --mode grouped) for the CI budget. Checks what CTest
# checks (same exit code on every rank, the fault's code, within 10 s, one stderr line, earlier
# outputs untouched) and reports; exit code 1 if any sweep had a failure.
#
#   bench/fault_sweep_full.sh [--np "1 2 4"] [--verbs "run accel static inverse"]
#                             [--mode all|every] [BUILD_DIR]
#                             (default BUILD_DIR: <repo>/build; ~25 min on a quiet 2-core VM)
#
# --mode every: every occurrence of every point instead of the first (each step, each output
# row): about 5 min at 1 rank, 15 at 2 ranks here.
#
# The sweeps run one after the other (each launch oversubscribes the cores at 4 ranks). Needs
# python3, addr2line (binutils) and the build's mpiexec. Writes bench/results/fault_sweep_<UTC>.md
# (the table, the machine, the commit) and fault_sweep_<UTC>.log (every sweep's full output,
# every FAIL line with the point that failed). MBS_FAULT_TIMEOUT=SEC raises the hang limit
# (default 10 s) when the machine is shared; the table records it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
nps="1 2 4"
verbs="run accel static inverse"
mode=all
bdir=$here/build
while [ $# -gt 0 ]; do
  case $1 in
  --np)
    nps=${2:?--np needs a list of rank counts}
    shift
    ;;
  --verbs)
    verbs=${2:?--verbs needs a list of verbs}
    shift
    ;;
  --mode)
    mode=${2:?--mode needs all or every}
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
[[ -x $bdir/mbspar ]] || { echo "fault_sweep_full.sh: no $bdir/mbspar (scripts/build.sh)" >&2; exit 2; }
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$bdir/CMakeCache.txt" 2>/dev/null || true)
mpiexec=${mpiexec:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results"
md=$here/bench/results/fault_sweep_$stamp.md
log=$here/bench/results/fault_sweep_$stamp.log
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=""
if git -C "$here" status --porcelain --untracked-files=no 2>/dev/null | grep -q .; then
  dirty=" (with uncommitted changes)"
fi
: >"$log"
rows=()
nfail=0
t_all=$(date +%s)
for np in $nps; do
  for verb in $verbs; do
    echo "== fault_sweep_full: $verb at $np rank(s)" | tee -a "$log"
    t0=$(date +%s)
    rc=0
    python3 "$here/mpi-tests/fault_sweep.py" --verb "$verb" --np "$np" --mode "$mode" --every 1 --all-methods \
      --ranks all -- "$bdir/mbspar" "$here/configs" "$mpiexec" -n --oversubscribe \
      >>"$log" 2>&1 || rc=$?
    t1=$(date +%s)
    # fault_sweep VERB npN: P point(s) seen, D distinct to inject, I injection(s) (every 1),
    # R recovered (...), F failure(s), T s
    sum=$(grep "^fault_sweep $verb np$np:" "$log" | tail -1 || true)
    read -r _ distinct inj rec fails < <(echo "$sum" | python3 -c '
import re, sys
s = sys.stdin.read()
m = re.search(r"(\d+) point\(s\) seen, (\d+) distinct to inject, (\d+) injection\(s\).*?(\d+) recovered.*?(\d+) failure", s)
print(*(m.groups() if m else ["?"] * 5))')
    [ "$rc" -ne 0 ] && nfail=$((nfail + 1))
    echo "   $verb np$np: $distinct distinct point(s), $inj injection(s), $rec recovered," \
      "$fails failure(s), $((t1 - t0)) s, exit $rc" | tee -a "$log"
    rows+=("| $verb | $np | $distinct | $inj | $rec | $fails | $((t1 - t0)) s | $rc |")
  done
done
{
  echo "# Complete fault-injection sweeps ($stamp)"
  echo
  echo "commit $commit$dirty, $(uname -n), $(getconf _NPROCESSORS_ONLN) cores, load average at the end:" \
    "$(cut -d' ' -f1-3 /proc/loadavg); $($mpiexec --version 2>/dev/null | head -1)"
  echo
  echo "    bench/fault_sweep_full.sh --np \"$nps\" --verbs \"$verbs\" --mode $mode $bdir"
  echo
  echo "Each sweep: mpi-tests/fault_sweep.py --verb VERB --np N --mode $mode --every 1 --all-methods --ranks all"
  echo "(every distinct allocation/write/NaN point, on every rank; --mode all: at its first"
  echo "occurrence, --mode every: at every occurrence; points of the"
  echo "common setup are injected by the run sweep only). Failures: hang (> ${MBS_FAULT_TIMEOUT:-10} s), different codes"
  echo "on the ranks, a code other than the fault's (alloc 4, write 3, nan 5), not one stderr line,"
  echo "changed earlier outputs, temporaries left. Recovered: exit 0 with complete outputs."
  echo
  echo "| verb | ranks | distinct points | injections | recovered | failures | wall time | exit |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "In all $(($(date +%s) - t_all)) s. FAIL lines, if any:"
  echo
  grep "^FAIL" "$log" | sed 's/^/    /' || echo "    (none)"
} >"$md"
echo "fault_sweep_full.sh: $md, $log"
[ "$nfail" -eq 0 ]
