#!/usr/bin/env bash
# Memory per rank of distributed-memory models (issue 9 point 4, issue 35 item 4): peak resident
# memory of every rank (the report's peak_rss_bytes, from getrusage) for `mbspar accel` with the
# model's default method at one rank (aba) and solver.method = schur at several, at 1, 2, 4, 8 and
# 16 ranks (oversubscribed beyond the cores: memory does not care about load), on three models:
#   chain   configs/chain.cfg with model.chain.n = 2^20
#   urdf    a generated URDF binary tree of 2^16 revolute links (scripts/gen_urdf_tree.py)
#   ladder  the 2^16-body ladder of scripts/gen_ladder.py (32514 links per side, a rung every 64:
#           508 loops), written with the ladder generator (gen_ladder.py --generated: O(1) in
#           the config; --explicit-ladder: every left link and rung listed, as before 2026-11-29)
# Reports, never asserts. Target of issue 35 item 4: the largest rank's peak at P ranks
# <= 1.5/P x the one-rank peak plus a documented constant; the table gives the ratio, 1.5/P and
# the excess over 1.5/P in MiB (that constant).
#
#   bench/memory.sh [--quick] [--models LIST] [--ranks LIST] [--replicated] [--explicit-ladder]
#                   [BUILD_DIR]
#       --quick       sizes / 8 (chain 2^17, tree 2^13, ladder 8192 bodies)
#       --models      comma-separated subset of chain,urdf,ladder (default all three)
#       --ranks       comma-separated rank counts (default 1,2,4,8,16)
#       --replicated  also the replicated model (MBSPAR_MODEL=full) for comparison (the chain
#                     needs ranks x ~2.6 GB at 2^20)
#       --explicit-ladder  the ladder's explicit form (bodies listed) instead of the generator
#       (--loops-local: accepted and ignored; the ladder's schur runs at P > 1 are on the
#       distributed loop model by default since the thirteenth session, docs/loops.md 9; before,
#       it added runs with MBSPAR_LOOPS_LOCAL=1)
# The ladder at P > 1 (schur) is built distributed when its q0 closes the loops (the generated
# form's does); the table's "model storage" column is the report's model.storage.
#       BUILD_DIR     the directory holding mbspar (default <repo>/build)
#
# Writes bench/results/memory_<UTC>.jsonl and .md, docs/img/memory_rss.png (gnuplot).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
scale=1
bdir=""
models=chain,urdf,ladder
ranks=1,2,4,8,16
storages=(distributed)
ladform=--generated
while (($#)); do
  case $1 in
  --quick) scale=8 ;;
  --models)
    models=$2
    shift
    ;;
  --ranks)
    ranks=$2
    shift
    ;;
  --replicated) storages=(distributed replicated) ;;
  --explicit-ladder) ladform="" ;;
  --loops-local) ;; # the default now (kept for old command lines)
  --no-replicated) storages=(distributed) ;; # the default; kept for old command lines
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) bdir=$1 ;;
  esac
  shift
done
bdir=${bdir:-$here/build}
[[ -x $bdir/mbspar ]] || { echo "memory.sh: no $bdir/mbspar (scripts/build.sh)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export OMPI_MCA_mpi_yield_when_idle=1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results" "$here/docs/img"
out=$here/bench/results/memory_$stamp.jsonl
md=$here/bench/results/memory_$stamp.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nchain=$((1048576 / scale)) ntree=$((65536 / scale))
# the ladder: 2 L + floor(L / 64) bodies (65536 at L = 32514)
nlad=$((32514 / scale))
python3 "$here/scripts/gen_urdf_tree.py" "$ntree" >"$work/tree.urdf"
python3 "$here/scripts/gen_ladder.py" ${ladform:+"$ladform"} "$nlad" 64 >"$work/ladder.cfg"
printf '{"kind":"meta","git":"%s","date":"%s","chain_n":%d,"tree_n":%d,"ladder_links":%d,' \
  "$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)" "$stamp" "$nchain" \
  "$ntree" "$nlad" >"$out"
printf '"ladder_form":"%s",' "$([[ -n $ladform ]] && echo generated || echo explicit)" >>"$out"
printf '"machine":"%s","mem_total_kb":%s}\n' \
  "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" \
  "$(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)" >>"$out"
IFS=, read -r -a mlist <<<"$models"
IFS=, read -r -a rlist <<<"$ranks"
for model in "${mlist[@]}"; do
  case $model in
  chain) args=("$here/configs/chain.cfg" --set "model.chain.n=$nchain") ;;
  urdf) args=("$work/tree.urdf") ;;
  ladder) args=("$work/ladder.cfg") ;;
  *)
    echo "memory.sh: unknown model $model (chain, urdf, ladder)" >&2
    exit 2
    ;;
  esac
  for storage in "${storages[@]}"; do
    # one rank: the default method (auto: aba), and schur for the same method as at several
    # ranks; several: schur, the distributed method auto picks when every rank has a core (on a
    # machine with fewer cores than ranks auto runs it on one rank per core and the others hold
    # nothing, which would not measure P ranks)
    cases=()
    for np in "${rlist[@]}"; do
      ((np == 1)) && cases+=("1:default")
      cases+=("$np:schur")
    done
    for c in "${cases[@]}"; do
      np=${c%%:*}
      env=()
      [[ $storage == replicated ]] && env=(-x MBSPAR_MODEL=full)
      rm -f "$work/a.json"
      meth=()
      [[ ${c#*:} == schur ]] && meth=(--set 'solver.method="schur"')
      if ! mpirun -n "$np" --oversubscribe "${env[@]}" "$bdir/mbspar" accel "${args[@]}" \
        "${meth[@]}" --quiet --json "$work/a.json" --force 2>"$work/err"; then
        echo "memory.sh: $model $storage np=$np ${c#*:} failed: $(head -c 300 "$work/err")" >&2
        continue
      fi
      python3 - "$work/a.json" "$model" "$storage" "$np" >>"$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["peak_rss_bytes"]
print(json.dumps({"kind": "run", "model": sys.argv[2], "storage": sys.argv[3],
                  "ranks": int(sys.argv[4]), "bodies": d["model"].get("bodies"),
                  "rss_min": r["min"], "rss_avg": r["avg"], "rss_max": r["max"],
                  "max_rank": r["max_rank"], "model_storage": d["model"].get("storage"),
                  "method": d["solver"]["method"], "time_per_eval_s": d["time_per_eval_s"]}))
PY
      echo "memory.sh: $model $storage np=$np ${c#*:} done" >&2
    done
  done
done
python3 - "$out" "$md" "$work/rss.dat" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
meta = rows[0]
runs = [r for r in rows if r["kind"] == "run"]
mb = 2.0 ** 20
names = {"chain": f"chain of {meta['chain_n']} bodies (configs/chain.cfg)",
         "urdf": f"URDF binary tree of {meta['tree_n']} links (scripts/gen_urdf_tree.py)",
         "ladder": f"ladder, {meta['ladder_links']} links per side, a rung every 64 "
                   f"(scripts/gen_ladder.py, {meta.get('ladder_form', 'explicit')} form)"}
with open(sys.argv[2], "w") as f:
    f.write("# Peak resident memory per rank, `mbspar accel` (bench/memory.sh)\n\n")
    f.write(f"git {meta['git']}, {meta['date']}, {meta['machine']}; target: largest rank <= "
            "1.5/P x the one-rank peak plus a constant (the excess column)\n")
    for mo in dict.fromkeys(r["model"] for r in runs):
        for st in ("distributed", "replicated"):
            sel = [r for r in runs if r["model"] == mo and r["storage"] == st]
            if not sel:
                continue
            one = [r for r in sel if r["ranks"] == 1]
            dflt = [r for r in one if r["method"] != "schur"] or one
            sch = [r for r in one if r["method"] == "schur"] or one
            b = dflt[0]["rss_max"] if dflt else float("nan")
            bs = sch[0]["rss_max"] if sch else float("nan")
            how = {"distributed": "the engine's storage (loop models too where q0 closes "
                                  "the loops)", "replicated": "MBSPAR_MODEL=full"}[st]
            f.write(f"\n## {names.get(mo, mo)}, {how}\n\n")
            f.write(f"One-rank peaks: {b / mb:.0f} MiB with {dflt[0]['method'] if dflt else '?'} "
                    f"(the default), {bs / mb:.0f} MiB with schur.\n\n")
            f.write("| P | bodies | method | model storage | min MiB | max MiB (rank) | max / one rank "
                    "(default) | max / one rank (schur) | target 1.5/P | excess over 1.5/P x "
                    "one-rank (default), MiB |\n")
            f.write("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|\n")
            for r in sel:
                p = r["ranks"]
                ex = max(0.0, r["rss_max"] - 1.5 / p * b) / mb if p > 1 else 0.0
                f.write(f"| {p} | {r['bodies']} | {r['method']} | {r['model_storage']} | "
                        f"{r['rss_min'] / mb:.0f} | {r['rss_max'] / mb:.0f} ({r['max_rank']}) | "
                        f"{r['rss_max'] / b:.3f} | {r['rss_max'] / bs:.3f} | "
                        f"{min(1.0, 1.5 / p):.3f} | {ex:.0f} |\n")
with open(sys.argv[3], "w") as f:
    for mo in ("chain", "urdf", "ladder"):
        f.write(f"# {mo}\n")
        for r in (x for x in runs if x["model"] == mo and x["storage"] == "distributed"):
            if r["ranks"] > 1 or r["method"] != "schur":
                f.write(f"{r['ranks']} {r['rss_max'] / mb:.1f}\n")
        f.write("\n\n")
print(open(sys.argv[2]).read())
PY
if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal pngcairo size 760,460
set output "$here/docs/img/memory_rss.png"
set title "peak resident memory of the largest rank, mbspar accel"
set xlabel "MPI ranks"; set ylabel "MiB (largest rank)"
set logscale xy 2; set key top right; set grid
plot "$work/rss.dat" index 0 using 1:2 with linespoints lw 2 title "chain of $nchain", \
     "" index 1 using 1:2 with linespoints lw 2 title "URDF tree of $ntree", \
     "" index 2 using 1:2 with linespoints lw 2 title "ladder (loops)"
GP
fi
echo "memory.sh: $out, $md"
