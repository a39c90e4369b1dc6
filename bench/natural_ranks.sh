#!/usr/bin/env bash
# Issue 33's timing point: time per evaluation of model.formulation = natural (the O(n) block
# elimination; at 2 ranks the distributed solve of docs/natural.md 13) against serial aba and
# schur at 2 ranks, on the 65536-link chain and on the ladder (configs/ladder.cfg, closed loops),
# by the benchmark protocol (bench/protocol.py: interleaved, pinned, >= 10 rounds, medians).
# Reports, never asserts.
#
#   bench/natural_ranks.sh [--rounds N] [--allow-dirty] [BUILD_DIR]
#
# Writes bench/results/natural_ranks_<UTC>.md and .jsonl, then docs/img/natural_ranks.png from the
# newest results (bench/plot_seeds.py natranks; alone: bench/natural_ranks.sh --plot-only).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=10
dirty=()
bdir=""
while [ $# -gt 0 ]; do
  case $1 in
  --rounds)
    rounds=$2
    shift 2
    ;;
  --allow-dirty)
    dirty=(--allow-dirty)
    shift
    ;;
  --plot-only) exec python3 "$here/bench/plot_seeds.py" natranks "$here" ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    bdir=$1
    shift
    ;;
  esac
done
bdir=${bdir:-$here/build}
[ -x "$bdir/mbspar" ] || {
  echo "natural_ranks.sh: no $bdir/mbspar (scripts/build.sh)" >&2
  exit 2
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
spec=$work/spec.json
python3 - "$bdir/mbspar" "$here" "$(command -v mpirun)" >"$spec" <<'PY'
import json, sys
exe, here, mpirun = sys.argv[1], sys.argv[2], sys.argv[3]
models = [("chain 65536 links", f"{here}/configs/chain.cfg",
           ["--set", "model.chain.n=65536", "--set", "model.chain.q0=0.01", "--set",
            "model.chain.qd0=0.5"]),
          ("ladder (configs/ladder.cfg, 2100 bodies, closed loops)", f"{here}/configs/ladder.cfg", [])]
cases = []
for name, cfg, args in models:
    def acc(method, rep, natural=False):
        f = ["--set", "model.formulation=natural"] if natural else ["--set", f"solver.method={method}"]
        return [exe, "accel", cfg] + args + f + ["--repeat", rep, "--json", "@JSON@", "-q"]
    one = ["env", "OMP_NUM_THREADS=1", "taskset", "-c", "0"]
    two = ["env", "OMP_NUM_THREADS=1", mpirun, "-n", "2", "--bind-to", "core", "--map-by", "core"]
    cases.append({"case": name, "variants": [
        {"label": "aba", "ranks": 1, "threads": 1, "cmd": one + acc("aba", "20")},
        {"label": "schur 2 ranks", "ranks": 2, "threads": 1, "cmd": two + acc("schur", "20")},
        {"label": "natural 1 rank", "ranks": 1, "threads": 1, "cmd": one + acc("", "5", True)},
        {"label": "natural 2 ranks", "ranks": 2, "threads": 1, "cmd": two + acc("", "5", True)}]})
print(json.dumps({"title": "natural coordinates against aba and schur (time per evaluation, "
                  "mbspar accel --repeat)", "baseline": "aba", "cases": cases}))
PY
python3 "$here/bench/protocol.py" --name natural_ranks --spec "$spec" --rounds "$rounds" "${dirty[@]}"
python3 "$here/bench/plot_seeds.py" natranks "$here"
