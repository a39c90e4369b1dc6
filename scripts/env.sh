# shellcheck shell=bash
# Environment for launching mbspar with Open MPI on this machine. Sourced by the scripts:
#
#   . scripts/env.sh [NRANKS]
#
# - as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (mpirun refuses root
#   without them); nothing for other users.
# - NRANKS > logical cpus: OMPI_MCA_rmaps_base_oversubscribe=1 (the environment form of
#   mpirun --oversubscribe) and OMPI_MCA_mpi_yield_when_idle=1 (idle ranks yield the cpu;
#   without it oversubscribed runs are ~1000x slower), and OMP_NUM_THREADS=1 unless set.
# - NRANKS <= cpus: OMP_NUM_THREADS = cpus / NRANKS unless set, so ranks x threads fit the cpus.
# - no Omni-Path/InfiniPath device (/dev/hfi1*, /dev/ipath*): OMPI_MCA_mtl=^ofi,psm,psm2 unless
#   set. Open MPI 4.1's psm and psm2 components probe for that hardware in every MPI_Init and
#   spend about 0.1 s each doing so here (a bare MPI_Init/Finalize: 0.31 s, 0.11 s without them;
#   docs/cluster.md). ofi stays excluded as in Debian's openmpi-mca-params.conf.
# Variables the caller already set are kept. Nothing here is needed by hand: run.sh, test.sh and
# CTest (mpi-tests/CMakeLists.txt) apply it themselves.

mbs_env_ncpu=$(nproc 2>/dev/null || echo 1)
mbs_env_np=${1:-0}
case "$mbs_env_np" in
'' | *[!0-9]*) mbs_env_np=0 ;;
esac

if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT="${OMPI_ALLOW_RUN_AS_ROOT:-1}"
  export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}"
fi
if [ "$mbs_env_np" -gt "$mbs_env_ncpu" ]; then
  export OMPI_MCA_rmaps_base_oversubscribe="${OMPI_MCA_rmaps_base_oversubscribe:-1}"
  export OMPI_MCA_mpi_yield_when_idle="${OMPI_MCA_mpi_yield_when_idle:-1}"
  export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
elif [ "$mbs_env_np" -gt 0 ]; then
  export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$((mbs_env_ncpu / mbs_env_np))}"
fi
if ! ls /dev/hfi1* /dev/ipath* >/dev/null 2>&1; then
  export OMPI_MCA_mtl="${OMPI_MCA_mtl:-^ofi,psm,psm2}"
fi
unset mbs_env_ncpu mbs_env_np
