#!/usr/bin/env bash
# The exact solver against the fastest serial code, on this machine (issue 9: "mpirun -n 2 mbspar
# accel with schur on a 65536-body chain and on a 65535-body binary tree is at least as fast as
# serial ABA"). Reports, never asserts.
#
#   bench/schur.sh [--quick] [--rounds R] [BUILD_DIR]      (default BUILD_DIR: <repo>/build)
#
# For each model: serial ABA (`--set solver.method=aba`, one rank, one thread), schur on one rank
# with one and with two OpenMP threads, and schur on 2 ranks (one thread each, bound to cores),
# `mbspar accel --repeat K` (time_per_eval_s excludes start-up and model building). The four
# launches alternate, R rounds (default 5), and the report keeps each one's best and median, so a
# passing load spike hits all of them alike. Models: revolute chain (configs/chain.cfg, q0 = 0.01,
# qd0 = 0.5) of N = 4096, 16384, 65536 links, and the binary tree configs/large_tree.cfg of depth
# 12, 14, 16 (4095, 16383, 65535 revolute joints). --quick: N = 65536 and depth 16 only, R = 3.
# Writes bench/results/schur_<UTC>.jsonl and .md (ratio = ABA time / schur time: > 1 is faster).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=5
quick=0
bdir=$here/build
while [ $# -gt 0 ]; do
  case $1 in
  --quick) quick=1 rounds=3 ;;
  --rounds)
    rounds=${2:?--rounds needs a number}
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
if [ ! -x "$bdir/mbspar" ]; then
  cmake -S "$here" -B "$bdir" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$bdir" -j2 --target mbspar >/dev/null
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results"
out=$here/bench/results/schur_$stamp.jsonl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '{"kind":"meta","machine":"%s","cores":%s,"git":"%s","date":"%s","rounds":%s}\n' \
  "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" "$(getconf _NPROCESSORS_ONLN)" \
  "$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)" "$stamp" "$rounds" >"$out"

# one launch: MODEL SIZE VARIANT -> a record
launch() {
  local model=$1 size=$2 variant=$3 cfg args np=1 threads=1 method=schur rep
  if [ "$model" = chain ]; then
    cfg=$here/configs/chain.cfg
    args=(--set "model.chain.n=$size" --set model.chain.q0=0.01 --set model.chain.qd0=0.5)
  else
    cfg=$here/configs/large_tree.cfg
    args=(--set "model.tree.depth=$size")
  fi
  case $variant in
  aba) method=aba ;;
  schur1) ;;
  schur1t2) threads=2 ;;
  schur2) np=2 ;;
  esac
  rep=100
  if [ "$size" -gt 20000 ] || { [ "$model" = tree ] && [ "$size" -ge 15 ]; }; then rep=20; fi
  OMP_NUM_THREADS=$threads mpirun -n "$np" --bind-to "$([ "$threads" = 1 ] && echo core || echo none)" \
    "$bdir/mbspar" accel "$cfg" "${args[@]}" --set "solver.method=$method" --repeat "$rep" \
    --json "$work/a.json" -q
  python3 - "$work/a.json" "$model" "$size" "$variant" "$np" "$threads" "$(cut -d' ' -f1 /proc/loadavg)" >>"$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({"kind": "run", "model": sys.argv[2], "size": int(sys.argv[3]), "variant": sys.argv[4],
                  "ranks": int(sys.argv[5]), "threads": int(sys.argv[6]), "load": float(sys.argv[7]),
                  "bodies": d["model"]["bodies"],
                  "time_per_eval_s": d["time_per_eval_s"], "floored": d["solver"].get("floored_pivots")}))
PY
}

if [ "$quick" = 1 ]; then
  sizes=("chain 65536" "tree 16")
else
  sizes=("chain 4096" "chain 16384" "chain 65536" "tree 12" "tree 14" "tree 16")
fi
for ms in "${sizes[@]}"; do
  read -r model size <<<"$ms"
  for ((r = 0; r < rounds; r++)); do
    for v in aba schur1 schur1t2 schur2; do launch "$model" "$size" "$v"; done
  done
  echo "schur.sh: $model $size done" >&2
done

python3 - "$out" >"${out%.jsonl}.md" <<'PY'
import json, statistics, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
meta = recs[0]
runs = [r for r in recs if r["kind"] == "run"]
print(f"# schur against serial ABA, {meta['machine']} ({meta['cores']} cores), git {meta['git']}, {meta['date']}\n")
print(f"time per evaluation in ms, best (median) of {meta['rounds']} alternating launches; ratio = ABA best / variant best\n")
print("| model | bodies | ABA | schur 1 rank | ratio | schur 1 rank, 2 threads | ratio | schur 2 ranks | ratio |")
print("|---|---|---|---|---|---|---|---|---|")
keys = sorted({(r["model"], r["size"]) for r in runs}, key=lambda k: (k[0], k[1]))
for m, s in keys:
    row = [m, str(next(r["bodies"] for r in runs if (r["model"], r["size"]) == (m, s)))]
    best = {}
    for v in ("aba", "schur1", "schur1t2", "schur2"):
        t = [r["time_per_eval_s"] * 1e3 for r in runs if (r["model"], r["size"], r["variant"]) == (m, s, v)]
        best[v] = (min(t), statistics.median(t)) if t else (float("nan"), float("nan"))
    row.append("%.3f (%.3f)" % best["aba"])
    for v in ("schur1", "schur1t2", "schur2"):
        row.append("%.3f (%.3f)" % best[v])
        row.append("%.2f" % (best["aba"][0] / best[v][0]))
    print("| " + " | ".join(row) + " |")
loads = [r["load"] for r in runs]
print(f"\n1-minute load average during the launches: {min(loads):.2f} ... {max(loads):.2f}")
PY
cat "${out%.jsonl}.md"
