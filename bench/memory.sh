#!/usr/bin/env bash
# Memory per rank of distributed-memory models (issue 9, point 4): peak resident memory of every
# rank (the report's peak_rss_bytes, from getrusage) for `mbspar accel` with the default exact
# solver on a chain of N bodies at 1, 2, 4 and 8 ranks (oversubscribed beyond the cores: memory
# does not care), and the same with the replicated model (MBSPAR_MODEL=full) for comparison.
# Reports, never asserts. Target of the issue: at N = 2^20, every rank's peak at -n 8 <= 0.2 x
# the -n 1 peak.
#
#   bench/memory.sh [--quick] [--no-replicated] [BUILD_DIR]
#                         (default <repo>/build; --quick: N = 2^17; --no-replicated: skip the
#                          replicated comparison, which needs ranks x ~2.6 GB at N = 2^20)
#
# Writes bench/results/memory_<UTC>.jsonl and .md, docs/img/memory_rss.png (gnuplot).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
n=1048576
bdir=""
storages=(distributed replicated)
for a in "$@"; do
  case $a in
  --quick) n=131072 ;;
  --no-replicated) storages=(distributed) ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) bdir=$a ;;
  esac
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
printf '{"kind":"meta","git":"%s","date":"%s","n":%d,"machine":"%s","mem_total_kb":%s}\n' \
  "$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)" "$stamp" "$n" \
  "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" \
  "$(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)" >"$out"
for storage in "${storages[@]}"; do
  for np in 1 2 4 8; do
    env=()
    [[ $storage == replicated ]] && env=(-x MBSPAR_MODEL=full)
    rm -f "$work/a.json"
    if ! mpirun -n "$np" --oversubscribe "${env[@]}" "$bdir/mbspar" accel \
      "$here/configs/chain.cfg" --set "model.chain.n=$n" --quiet --json "$work/a.json" \
      --force 2>"$work/err"; then
      echo "memory.sh: $storage np=$np failed: $(head -c 300 "$work/err")" >&2
      continue
    fi
    python3 - "$work/a.json" "$storage" "$np" "$n" >>"$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["peak_rss_bytes"]
print(json.dumps({"kind": "run", "storage": sys.argv[2], "ranks": int(sys.argv[3]),
                  "n": int(sys.argv[4]), "rss_min": r["min"], "rss_avg": r["avg"],
                  "rss_max": r["max"], "max_rank": r["max_rank"],
                  "model_storage": d["model"].get("storage"),
                  "time_per_eval_s": d["time_per_eval_s"]}))
PY
    echo "memory.sh: $storage np=$np done" >&2
  done
done
python3 - "$out" "$md" "$here/docs/img/memory_rss.dat" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
meta = rows[0]
runs = [r for r in rows if r["kind"] == "run"]
mb = 2.0 ** 20
with open(sys.argv[2], "w") as f:
    f.write(f"# Peak resident memory per rank, `mbspar accel`, chain of {meta['n']} bodies\n\n")
    f.write(f"git {meta['git']}, {meta['date']}, {meta['machine']}\n\n")
    f.write("| storage | ranks | min MiB | avg MiB | max MiB (rank) | max / max at 1 rank |\n")
    f.write("|---|---:|---:|---:|---:|---:|\n")
    for st in ("distributed", "replicated"):
        base = [r for r in runs if r["storage"] == st and r["ranks"] == 1]
        b = base[0]["rss_max"] if base else float("nan")
        for r in (x for x in runs if x["storage"] == st):
            f.write(f"| {st} | {r['ranks']} | {r['rss_min'] / mb:.0f} | {r['rss_avg'] / mb:.0f} | "
                    f"{r['rss_max'] / mb:.0f} ({r['max_rank']}) | {r['rss_max'] / b:.3f} |\n")
with open(sys.argv[3], "w") as f:
    for st in ("distributed", "replicated"):
        f.write(f"# {st}\n")
        for r in (x for x in runs if x["storage"] == st):
            f.write(f"{r['ranks']} {r['rss_max'] / mb:.1f} {r['rss_min'] / mb:.1f}\n")
        f.write("\n\n")
print(open(sys.argv[2]).read())
PY
if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal pngcairo size 760,460
set output "$here/docs/img/memory_rss.png"
set title "peak resident memory per rank, accel, chain of $n bodies"
set xlabel "MPI ranks"; set ylabel "MiB (largest rank)"
set logscale xy 2; set key top right; set grid
plot "$here/docs/img/memory_rss.dat" index 0 using 1:2 with linespoints lw 2 title "distributed model", \
     "" index 1 using 1:2 with linespoints lw 2 title "replicated model (MBSPAR_MODEL=full)"
GP
fi
rm -f "$here/docs/img/memory_rss.dat"
echo "memory.sh: $out, $md"
