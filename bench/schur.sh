#!/usr/bin/env bash
# The exact solver against the fastest serial code on this machine (issue 9: "mpirun -n 2 mbspar
# accel with schur ... at least as fast as serial ABA"; issue 35: >= 1.3x by medians), run by the
# benchmark protocol bench/protocol.py (docs/scaling.md "Benchmark protocol"). Reports, never
# asserts.
#
#   bench/schur.sh [--quick] [--rounds R] [--allow-dirty] [BUILD_DIR]   (default: <repo>/build)
#
# For each model: serial ABA (the baseline; `--set solver.method=aba`, one rank, one thread,
# taskset to core 0), schur on one rank with one and with two OpenMP threads, and schur on 2 ranks
# (one thread each, --bind-to core), each `mbspar accel --repeat K --json` (time_per_eval_s
# excludes start-up and model building). The protocol interleaves the four launches over R rounds
# (default 10, after a warm-up round), reports medians with their spread and the best, and the
# median of the per-round ratios ABA / variant (> 1: faster than ABA). Models: revolute chain
# (configs/chain.cfg, q0 = 0.01, qd0 = 0.5) of N = 4096, 16384, 65536 links, and the binary tree
# configs/large_tree.cfg of depth 12, 14, 16 (4095, 16383, 65535 bodies). --quick: N = 65536 and
# depth 16 only. Writes bench/results/schur_<UTC>.jsonl and .md. A dirty tree is refused unless
# --allow-dirty (the report then says so).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=10
quick=0
dirty=()
bdir=$here/build
while [ $# -gt 0 ]; do
  case $1 in
  --quick) quick=1 ;;
  --rounds)
    rounds=${2:?--rounds needs a number}
    shift
    ;;
  --allow-dirty) dirty=(--allow-dirty) ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) bdir=$1 ;;
  esac
  shift
done
if [ ! -x "$bdir/mbspar" ]; then
  cmake -S "$here" -B "$bdir" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$bdir" -j2 --target mbspar >/dev/null
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the protocol's spec: per model, serial ABA (the baseline) and schur on 1 rank, 1 rank x 2
# threads and 2 ranks, every one `mbspar accel --repeat K --json`
spec=$work/spec.json
python3 - "$bdir/mbspar" "$here" "$quick" "$(command -v mpirun)" >"$spec" <<'PY'
import json, sys
exe, here, quick, mpirun = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
sizes = [("chain", 65536), ("tree", 16)] if quick else [
    ("chain", 4096), ("chain", 16384), ("chain", 65536), ("tree", 12), ("tree", 14), ("tree", 16)]
cases = []
for model, size in sizes:
    if model == "chain":
        cfg = f"{here}/configs/chain.cfg"
        args = ["--set", f"model.chain.n={size}", "--set", "model.chain.q0=0.01", "--set",
                "model.chain.qd0=0.5"]
        name = f"chain {size} links"
    else:
        cfg = f"{here}/configs/large_tree.cfg"
        args = ["--set", f"model.tree.depth={size}"]
        name = f"binary tree depth {size} ({2**size - 1} bodies)"
    rep = "20" if size > 20000 or (model == "tree" and size >= 15) else "100"
    def acc(method):
        return [exe, "accel", cfg] + args + ["--set", f"solver.method={method}", "--repeat", rep,
                                              "--json", "@JSON@", "-q"]
    cases.append({"case": name, "variants": [
        {"label": "aba", "ranks": 1, "threads": 1,
         "cmd": ["env", "OMP_NUM_THREADS=1", "taskset", "-c", "0"] + acc("aba")},
        {"label": "schur 1 rank", "ranks": 1, "threads": 1,
         "cmd": ["env", "OMP_NUM_THREADS=1", "taskset", "-c", "0"] + acc("schur")},
        {"label": "schur 1 rank x 2 threads", "ranks": 1, "threads": 2,
         "cmd": ["env", "OMP_NUM_THREADS=2", "taskset", "-c", "0,1"] + acc("schur")},
        {"label": "schur 2 ranks", "ranks": 2, "threads": 1,
         "cmd": ["env", "OMP_NUM_THREADS=1", mpirun, "-n", "2", "--bind-to", "core", "--map-by",
                 "core"] + acc("schur")}]})
print(json.dumps({"title": "schur against serial ABA (time per evaluation, mbspar accel --repeat)",
                  "baseline": "aba", "cases": cases}))
PY
python3 "$here/bench/protocol.py" --name schur --spec "$spec" --rounds "$rounds" "${dirty[@]}"
