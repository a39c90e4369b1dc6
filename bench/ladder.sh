#!/usr/bin/env bash
# The large loop system of issue 10: configs/ladder.cfg (two 1000-link chains joined by a rung
# every 10 links: 2100 bodies, 300 closure equations, 200 independent). Time per `mbspar accel`
# evaluation of aba and crba (the serial baselines, rank 0) and of the constraint-force methods on
# the distributed engine at 1 and 2 ranks: schur with the cut joints and the closure equations as
# separators (solver.loops = auto: each rank's local solves, one sum; docs/loops.md 8.1a), also
# with one OpenMP thread segment per core at one rank, and by unit solves (solver.loops = unit:
# 202 tree solves per evaluation, the 100 zero rows among the 300 closure equations get none; 8.1),
# direct by unit solves, jcg, chebyshev and petsc with the closure equations as rows of the
# system (solver.loops = auto: one solve, 8.4).
# Reports, never asserts; a run that exceeds the time limit is reported as such.
#
#   bench/ladder.sh [--limit SECONDS] [--quick] [BUILD_DIR]   (default <repo>/build, limit 600 s per run)
#
# --quick: the exact methods (aba, crba, direct at 1 rank, schur at 1, 2, 3 ranks and both ways), jcg,
# chebyshev (~22 000 iterations, 8 s at one rank) and petsc's sparse Cholesky (-ksp_type preonly
# -pc_type cholesky) at 1 and 2 ranks, without sor (with the rows it stops at max_iter: 70 s).
# Writes bench/results/ladder_<UTC>.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
limit=600
quick=0
bdir=""
while (($#)); do
  case $1 in
  --limit)
    limit=${2:?--limit SECONDS}
    shift
    ;;
  --quick) quick=1 ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) bdir=$1 ;;
  esac
  shift
done
bdir=${bdir:-$here/build}
[[ -x $bdir/mbspar ]] || { echo "ladder.sh: no $bdir/mbspar (scripts/build.sh)" >&2; exit 2; }
# one thread per rank (the one threaded run sets its own), Open MPI as root and oversubscribed
export OMP_NUM_THREADS=1
# shellcheck source=../scripts/env.sh
. "$here/scripts/env.sh" 3
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results"
md=$here/bench/results/ladder_$stamp.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cfg=$here/configs/ladder.cfg
{
  echo "# configs/ladder.cfg: time per accel evaluation"
  echo
  echo "git $(git -C "$here" describe --always --dirty), $(date -u +%Y-%m-%dT%H:%M:%SZ), $(getconf _NPROCESSORS_ONLN) cores," \
    "load average at the start $(cut -d' ' -f1-3 /proc/loadavg); limit ${limit} s per run."
  echo
  echo "| method | ranks | repeat | time per evaluation [s] | loop rank | total iterations | note |"
  echo "|---|---:|---:|---:|---:|---:|---|"
} >"$md"
# method ranks repeat [extra arguments]
one() {
  local rc=0 launch=() meth=$1 np=$2 rep=$3
  shift 3
  ((np > 1)) && launch=(mpirun -n "$np")
  rm -f "$work/a.json"
  timeout "$limit" "${launch[@]}" "$bdir/mbspar" accel "$cfg" --set solver.method="$meth" \
    --repeat "$rep" --json "$work/a.json" --quiet "$@" >"$work/log" 2>&1 || rc=$?
  if ((rc == 0)) && [[ -s $work/a.json ]]; then
    python3 - "$work/a.json" "$meth${*:+ $*}" "$np" "$rep" >>"$md" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
s, l = a["solver"], a.get("loops", {})
import os
th = int(os.environ.get("OMP_NUM_THREADS", "1"))
meth = sys.argv[2] + (" (%s)" % l["solve"] if l.get("solve") else "")
meth += ", %d threads" % th if th > 1 else ""
print("| %s | %s | %s | %.4g | %s | %s | %s |" % (meth, sys.argv[3], sys.argv[4],
      a["time_per_eval_s"], l.get("rank", ""), s.get("total_iterations", s.get("iterations", "")),
      "" if s.get("converged", True) else "not converged"))
EOF
  elif ((rc == 124)); then
    echo "| $meth | $np | $rep | > $limit | | | not finished within the limit |" >>"$md"
  else
    echo "| $meth | $np | $rep | | | | failed, exit $rc: $(tail -n 1 "$work/log" | tr '|' '/') |" >>"$md"
  fi
  tail -n 1 "$md" >&2
}
one aba 1 20
one crba 1 1
one direct 1 5
one schur 1 20
OMP_NUM_THREADS=$(getconf _NPROCESSORS_ONLN) one schur 1 20
one schur 2 20
one schur 3 20
one schur 1 20 --set solver.loops=unit
one schur 2 20 --set solver.loops=unit
one jcg 1 3
one jcg 2 3
one chebyshev 1 1 --set solver.max_iter=200000
one chebyshev 2 1 --set solver.max_iter=200000
one petsc 1 50 -ksp_type preonly -pc_type cholesky
one petsc 2 50 -ksp_type preonly -pc_type cholesky
if ((!quick)); then
  one sor 1 1
fi
echo >>"$md"
echo "Read with docs/loops.md 8.2 (the body order and the cost of the m - z + 2 tree solves)." >>"$md"
echo "ladder.sh: wrote $md" >&2
sh "$here/bench/plot_ladder.sh" "$md" "${md%.md}.png" || true
