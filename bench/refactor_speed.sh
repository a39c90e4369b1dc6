#!/usr/bin/env bash
# Speed before and after a refactoring (issue 31: "bench/schur.sh and ABA's ns per body are within
# noise of before, medians of interleaved rounds, before and after binaries in the same run").
# Reports, never asserts.
#
#   bench/refactor_speed.sh [--ref COMMIT] [--rounds R] [CUR_BUILD_DIR]
#
# The reference is COMMIT's mbspar (default 059b4d4, where issue 31 was filed), built once from
# `git archive` in ${TMPDIR:-/tmp}/mbs_ref_<sha> (as bench/compare_reports.sh, shared with it);
# the current binary is CUR_BUILD_DIR/mbspar (default <repo>/build). Cases, bench/schur.sh's
# quick set: `mbspar accel --repeat K` (time_per_eval_s excludes start-up) of serial ABA (one
# rank, one thread) and schur on 2 ranks (one thread each, bound to cores) on the revolute chain
# of 65536 links (configs/chain.cfg, q0 = 0.01, qd0 = 0.5) and the binary tree of depth 16
# (configs/large_tree.cfg, 65535 joints). Each round runs every case with the reference and the
# current binary one after the other (the order alternating by round), R rounds (default 5).
# Writes bench/results/refactor_speed_<UTC>.jsonl and .md: per case the medians, ABA's ns per
# body, and the ratio current / reference (< 1: the current build is faster), with the load and
# the commits.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ref=059b4d4
rounds=5
cur=$here/build
while [ $# -gt 0 ]; do
  case $1 in
  --ref) ref=${2:?--ref needs a commit} && shift ;;
  --rounds) rounds=${2:?--rounds needs a number} && shift ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) cur=$1 ;;
  esac
  shift
done
[[ -x $cur/mbspar ]] || { echo "refactor_speed.sh: no $cur/mbspar (scripts/build.sh)" >&2; exit 2; }
# shellcheck source=refbuild.sh
. "$here/bench/refbuild.sh"
mbs_refbuild refactor_speed.sh "$here" "$ref"
sha=$(git -C "$here" rev-parse --verify "$ref^{commit}")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MBS_PROGRESS=0
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$cur/CMakeCache.txt" 2>/dev/null || true)
mpiexec=${mpiexec:-mpiexec}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results"
out=$here/bench/results/refactor_speed_$stamp.jsonl
md=$here/bench/results/refactor_speed_$stamp.md
commit=$(git -C "$here" rev-parse --short HEAD)
git -C "$here" status --porcelain --untracked-files=no | grep -q . && commit="$commit (dirty)"
work=$(mktemp -d "${TMPDIR:-/tmp}/mbs_refspeed.XXXXXX")
trap 'rm -rf "$work"' EXIT
: >"$out"

one() { # BUILD(ref|cur) MODEL METHOD NP
  local bin=$refbin
  [ "$1" = cur ] && bin=$cur/mbspar
  local cfg args
  if [ "$2" = chain ]; then
    cfg=$here/configs/chain.cfg
    args=(--set model.chain.n=65536 --set model.chain.q0=0.01 --set model.chain.qd0=0.5)
  else
    cfg=$here/configs/large_tree.cfg
    args=(--set model.tree.depth=16)
  fi
  OMP_NUM_THREADS=1 "$mpiexec" -n "$4" --bind-to core "$bin" accel "$cfg" "${args[@]}" \
    --set "solver.method=$3" --repeat 20 --json "$work/a.json" -q
  python3 - "$work/a.json" "$1" "$2" "$3" "$4" "$(cut -d' ' -f1 /proc/loadavg)" >>"$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({"build": sys.argv[2], "model": sys.argv[3], "method": sys.argv[4],
                  "ranks": int(sys.argv[5]), "load": float(sys.argv[6]),
                  "bodies": d["model"]["bodies"], "time_per_eval_s": d["time_per_eval_s"]}))
PY
}

for r in $(seq 1 "$rounds"); do
  for c in "chain aba 1" "chain schur 2" "tree aba 1" "tree schur 2"; do
    read -r model method np <<<"$c"
    if [ $((r % 2)) -eq 1 ]; then
      one ref "$model" "$method" "$np" && one cur "$model" "$method" "$np"
    else
      one cur "$model" "$method" "$np" && one ref "$model" "$method" "$np"
    fi
  done
  echo "refactor_speed.sh: round $r of $rounds done" >&2
done

python3 - "$out" "$sha" "$commit" "$rounds" >"$md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"# Speed before and after (issue 31)\n\nreference {sys.argv[2][:12]}, current {sys.argv[3]}, "
      f"{sys.argv[4]} interleaved rounds, loads {min(r['load'] for r in rows):.2f}–"
      f"{max(r['load'] for r in rows):.2f}\n")
print("| model | method | ranks | reference median ms | current median ms | current / reference | ns per body (ref → cur) |")
print("|---|---|---|---|---|---|---|")
for key in sorted({(r["model"], r["method"], r["ranks"]) for r in rows}):
    t = {b: statistics.median(r["time_per_eval_s"] for r in rows
                              if (r["model"], r["method"], r["ranks"]) == key and r["build"] == b)
         for b in ("ref", "cur")}
    n = next(r["bodies"] for r in rows if (r["model"], r["method"], r["ranks"]) == key)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {t['ref'] * 1e3:.3f} | {t['cur'] * 1e3:.3f} | "
          f"{t['cur'] / t['ref']:.3f} | {t['ref'] / n * 1e9:.1f} → {t['cur'] / n * 1e9:.1f} |")
PY
cat "$md"
echo "refactor_speed.sh: $md"
