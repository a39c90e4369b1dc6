#!/usr/bin/env bash
# What solver.check_every saves: the same number of jacobi sweeps (the iterates are the same for
# every K, test_cfs) with the convergence test, and its allreduce, on every K-th sweep only.
# For each case and K the solve's wall time per sweep and the allreduce share (the JSON timers
# eval.constraint.solve and comm.allreduce, max over the ranks) of one `mbspar accel` with tol
# 1e-14 and a fixed max_iter (no case converges: the same sweeps for every K). Reports, never
# asserts; run it on a quiet machine (the ranks must not share cores with other jobs).
#
#   bench/check_every.sh [--np P] [--sweeps N] [--ks "1 10 100"] [BUILD_DIR]
#
# Cases: configs/chain.cfg with 1024 links (jacobi; no other global operation per sweep) and
# configs/ladder.cfg (jacobi on the closure rows: two more allreduces per sweep in the operator,
# docs/loops.md 8.4). Writes bench/results/check_every_<UTC>_np<P>.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
np=2
sweeps=20000
ks="1 10 100"
bdir=""
while (($#)); do
  case $1 in
  --np)
    np=${2:?--np P}
    shift
    ;;
  --sweeps)
    sweeps=${2:?--sweeps N}
    shift
    ;;
  --ks)
    ks=${2:?--ks LIST}
    shift
    ;;
  -h | --help)
    sed -n '2,13p' "$0"
    exit 0
    ;;
  -*)
    echo "check_every.sh: unknown option $1" >&2
    exit 2
    ;;
  *) bdir=$1 ;;
  esac
  shift
done
bdir=${bdir:-$here/build}
mbspar=$bdir/mbspar
[[ -x $mbspar ]] || {
  echo "check_every.sh: $mbspar not found (build first: scripts/build.sh)" >&2
  exit 2
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=$here/bench/results/check_every_${stamp}_np$np.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo "# solver.check_every, jacobi, $sweeps sweeps, $np rank(s) ($stamp, $(nproc --all) cores)"
  echo
  echo "Command: \`bench/check_every.sh --np $np --sweeps $sweeps --ks \"$ks\"\`"
  echo
  echo "| case | K | residual after the sweeps | ms per sweep | allreduce ms per sweep | vs K = 1 |"
  echo "|---|---:|---:|---:|---:|---:|"
} >"$out"
for case in chain ladder; do
  if [[ $case == chain ]]; then
    args=("$here/configs/chain.cfg" --set model.chain.n=1024)
  else
    args=("$here/configs/ladder.cfg")
  fi
  for k in $ks; do
    j=$tmp/$case-$k.json
    mpirun --bind-to none -n "$np" "$mbspar" accel "${args[@]}" --set solver.method=jacobi \
      --set solver.tol=1e-14 --set solver.max_iter="$sweeps" --set solver.check_every="$k" \
      --json "$j" >/dev/null 2>"$tmp/err" || {
      # max_iter reached is the expected outcome: exit 0 or 1 with a JSON report
      [[ -s $j ]] || {
        cat "$tmp/err" >&2
        exit 1
      }
    }
    python3 - "$j" "$sweeps" "$case" "$k" "$tmp/base-$case" >>"$out" <<'EOF'
import json, os, sys
j, n, case, k, basef = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
d = json.load(open(j))
t = d["timers"]
solve = t["eval.constraint.solve"]["max"] / (n + 1) * 1e3  # n + 1 sweeps (it = 0..max_iter)
red = t.get("comm.allreduce", {"max": 0})["max"] / (n + 1) * 1e3
if not os.path.exists(basef):
    open(basef, "w").write(repr(solve))
base = float(open(basef).read())
print("| %s | %s | %.6g | %.4f | %.4f | %.2fx |" % (case, k, d["solver"]["residual"], solve, red,
                                                 base / solve))
EOF
  done
done
cat "$out"
echo "check_every.sh: wrote $out" >&2
