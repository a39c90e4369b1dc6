#!/usr/bin/env bash
# Constraint-force solver study of the parallel engine (issue 3). Reports, never asserts.
#   cold : iterations and time per evaluation of every solver on a 1024-body revolute chain,
#          no warm start, at -n 1 and -n 2 (tol 1e-8, stationary methods capped at 5000
#          iterations, reported as not converged when they hit the cap);
#   warm : average J-CG iterations along a prescribed smooth 1 s trajectory (1000 evaluations,
#          tol 1e-10) for every warm start, -n 1;
#   scale: J-CG on a 16384-body chain at -n 1 and -n 2 with a fixed budget of 300 iterations
#          (the same CG sequence at both rank counts), best of 3.
# Usage: bench/run_parallel.sh [build-dir]   (default: build). Writes bench/results/parallel_<date>.jsonl
# and docs/img/parallel_*.png, and prints Markdown tables for docs/performance.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
bin=$build/bench_parallel
[ -x "$bin" ] || { echo "run_parallel.sh: $bin not built (cmake --build $build)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mkdir -p "$here/bench/results" "$here/docs/img"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=$here/bench/results/parallel_$stamp.jsonl
{
  printf '{"machine":"%s","nproc":%s,"git":"%s","date":"%s"}\n' \
    "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" "$(nproc --all)" \
    "$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)" "$stamp"
  mpirun -n 1 --bind-to core "$bin" cold 1024 1e-8 3
  mpirun -n 2 --bind-to core "$bin" cold 1024 1e-8 3
  mpirun -n 1 --bind-to core "$bin" warm 1024 1e-10 1 0 1000
  mpirun -n 1 --bind-to core "$bin" scale 16384 1e-12 3 300
  mpirun -n 2 --bind-to core "$bin" scale 16384 1e-12 3 300
  # halo implementations: persistent point-to-point vs MPI_Neighbor_alltoallv (1024 chain,
  # 300 iterations; at 2 ranks and, oversubscribed, 4)
  for np in 2 4; do
    for h in p2p neighbor; do
      MBSPAR_HALO=$h mpirun -n $np --oversubscribe -x MBSPAR_HALO -x OMPI_MCA_mpi_yield_when_idle=1 \
        "$bin" scale 1024 1e-12 3 300 | sed "s/\"mode\":\"scale\"/\"mode\":\"halo\"/"
    done
  done
} | tee "$out"
python3 "$here/bench/report_parallel.py" "$out" "$here/docs/img"
