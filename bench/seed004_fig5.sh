#!/usr/bin/env bash
# Seed 004's Fig. 5 (Kraus, Winckler & Bock 2001, section 9): "runtime (in secs) vs integration
# tolerance (-log(err))" of the 6-bar mechanism over 10 s, one curve per projection tolerance
# (the tolerance of the norm of the constraint residual); the seed: "with a more strict
# projection tolerance the runtime is reduced". Here: configs/sixbar.cfg (the Sarrus linkage with
# its spring, docs/seeds.md section 10) in natural coordinates (p, pdot), adaptive Dormand-Prince
# 5(4) with projection when max|g| or max|G pdot| exceeds the projection tolerance
# (mbs_naturalSimAdvance, docs/natural.md 7.1), integration tolerances 1e-3 .. 1e-10, projection
# tolerances 1e-2, 1e-4, 1e-6, 1e-8, 1e-12; CPU time (thread clock) the median of ROUNDS
# interleaved rounds (default 3); the achieved error max|p(10) - p_ref(10)| against a run at
# tolerance 1e-12 with projection tolerance 1e-12. Reports, never asserts.
#   bench/seed004_fig5.sh [BUILD_DIR] [ROUNDS]   (default <repo>/build, 3; about 2 min)
#   bench/seed004_fig5.sh --plot-only            (only the plot, from the committed results)
# Writes bench/results/seed004_fig5.{csv,md} and docs/img/seed004_fig5.png
# (bench/plot_seeds.py fig5); docs/seeds.md section 10 quotes them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
plot_only=0
build=$root/build
rounds=3
for a in "$@"; do
  case $a in
  --plot-only) plot_only=1 ;;
  [0-9]*) rounds=$a ;;
  *) build=$a ;;
  esac
done
if [ "$plot_only" = 1 ]; then
  exec python3 "$root/bench/plot_seeds.py" fig5 "$root"
fi
[ -d "$build" ] || { echo "seed004_fig5.sh: no build directory $build (scripts/build.sh)" >&2; exit 2; }
cmake --build "$build" -j1 --target seed004_fig5 >/dev/null
tols=1e-3,1e-4,1e-5,1e-6,1e-7,1e-8,1e-9,1e-10
ptols=1e-2,1e-4,1e-6,1e-8,1e-12
res=$root/bench/results
mkdir -p "$res"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
commit=$(git -C "$root" rev-parse --short HEAD)
git -C "$root" diff --quiet HEAD -- src include bench/seed004_fig5.c || commit="$commit-dirty"
load0=$(cut -d' ' -f1 /proc/loadavg)
start=$(date +%s)
OMP_NUM_THREADS=1 "$build/bench/seed004_fig5" "$root/configs/sixbar.cfg" 10 "$rounds" "$tols" "$ptols" >"$out"
wall=$(($(date +%s) - start))
load1=$(cut -d' ' -f1 /proc/loadavg)
stamp=$(date -u +%Y-%m-%dT%H:%MZ)
{
  echo "# seed 004 Fig. 5: bench/seed004_fig5.sh, commit $commit, $stamp, $(nproc) cores, load $load0 -> $load1, $rounds rounds, $wall s wall"
  grep '^#' "$out"
  grep -v '^#' "$out"
} >"$res/seed004_fig5.csv"
python3 - "$res/seed004_fig5.csv" >"$res/seed004_fig5.md" <<'PY'
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
meta = [l[2:] for l in lines if l.startswith("# ")]
rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
print("# Seed 004 Fig. 5: the 6-bar (configs/sixbar.cfg) over 10 s in natural coordinates\n")
for m in meta:
    print("- " + m)
print("\nCPU s: median over the rounds (thread CPU time, under load); err: max |p(10) - p_ref(10)|;"
      " proj.: projections triggered; g, Gv: the largest max |g| and max |G pdot| seen after a step.\n")
print("| proj. tol | int. tol | CPU s | steps | rejected | evaluations | proj. | err | max g | max Gv | energy drift |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %s | %.3f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        r["ptol"], r["tol"], float(r["cpu_median"]), r["steps"], r["rejected"], r["evals"],
        r["projections"], r["err"], r["gmax"], r["gvmax"], r["energy_drift"]))
PY
echo "seed004_fig5.sh: $wall s; bench/results/seed004_fig5.{csv,md}"
python3 "$root/bench/plot_seeds.py" fig5 "$root"
