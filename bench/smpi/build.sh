#!/usr/bin/env bash
# Build the real mbspar sources (src/*.c, parallel/*.c) with SimGrid's smpicc into a separate
# binary for simulated clusters: bench/smpi/build.sh [--flops-only] [OUTDIR]   (default
# <repo>/build-smpi; --flops-only: mbspar_smpi_flops alone, for the flop-mode points)
#
# Differences from the CMake build, all on the command line (no source is changed):
#   * no PETSc (MBS_HAVE_PETSC undefined: petsc_ref.c / petsc_ts.c compile their stubs, so the
#     `run` verb and solver.method=petsc are unavailable; `accel` and `cpa` work),
#   * no hwloc (MBS_HAVE_HWLOC undefined: affinity.c uses its sched_getaffinity fallback),
#   * no OpenMP (SMPI simulates one thread per rank; the `omp` pragmas are ignored),
#   * no allocation fault points (parallel/faultwrap.c needs the linker's --wrap=malloc),
#   * smpicc builds a shared object that smpirun loads once per simulated rank.
# Writes OUTDIR/mbspar_smpi (compute blocks timed: SMPI charges each the time it took here),
# OUTDIR/mbspar_smpi_flops (compute charged by counted flops, below), OUTDIR/mbspar_smpi_warm
# (compute blocks timed with the rank's own data re-read first, below) and OUTDIR/build_flags.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
only=0
if [[ ${1:-} == --flops-only ]]; then
  only=1
  shift
fi
out=${1:-$here/build-smpi}
command -v smpicc >/dev/null 2>&1 || {
  echo "smpi/build.sh: smpicc not found: install libsimgrid-dev (scripts/setup.sh --with-smpi)" >&2
  exit 2
}
mkdir -p "$out/generated"
sha=$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)
version=$(sed -n 's/^project(mbspar VERSION \([0-9.]*\).*/\1/p' "$here/CMakeLists.txt")
cflags="-std=c11 -O3 -DNDEBUG -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE"
sgver=$(smpicc --version 2>/dev/null | head -1 || true)
lcver=$(pkg-config --modversion libconfig 2>/dev/null || echo unknown)
sed -e "s/@PROJECT_VERSION@/${version:-0}/" -e "s/@MBS_GIT_SHA@/$sha/" \
  -e "s/@CMAKE_C_COMPILER_ID@ @CMAKE_C_COMPILER_VERSION@/smpicc ($sgver)/" \
  -e "s/@CMAKE_BUILD_TYPE@/Release-SMPI/" -e "s|@CMAKE_C_FLAGS@ @CMAKE_C_FLAGS_RELEASE@|$cflags|" \
  -e "s/@PETSC_VERSION@//" -e "s/@HWLOC_VERSION@//" -e "s/@LIBCONFIG_VERSION@/$lcver/" \
  "$here/src/build_info.h.in" >"$out/generated/build_info.h"

# parallel/faultwrap.c (the allocation fault points) needs -Wl,--wrap=malloc,...: left out, the
# fault points (MBS_FAULT=alloc:N) do not exist in the SMPI binary
srcs=("$here"/src/*.c "$here"/src/schur/*.c)
for f in "$here"/parallel/*.c; do
  [[ $f == */faultwrap.c ]] || srcs+=("$f")
done
read -r -a libs < <(pkg-config --libs libconfig)
libs+=(-llapack) # flex_beam.c and modes.c call LAPACK (dsygv, dsbgvx), as the CMake build does
# shellcheck disable=SC2086 # cflags is a list of flags
((only)) || smpicc $cflags -Wall -Wno-unknown-pragmas -I"$here/include" -I"$here/src" \
  -I"$here/parallel" -I"$out/generated" "${srcs[@]}" -o "$out/mbspar_smpi" "${libs[@]}" -lm
# the flop-cost binary: the kernels count their flops (MBS_COUNT_FLOPS, the counts cpa's graphs
# use) and every MPI call first charges the flops counted since the last one to the simulated
# clock (MBS_SMPI_FLOPS, src/flops.h); run it with --cfg=smpi/simulate-computation:no
# shellcheck disable=SC2086 # cflags is a list of flags
smpicc $cflags -DMBS_COUNT_FLOPS -DMBS_SMPI_FLOPS -Wall -Wno-unknown-pragmas -I"$here/include" \
  -I"$here/src" -I"$here/parallel" -I"$out/generated" "${srcs[@]}" -o "$out/mbspar_smpi_flops" \
  "${libs[@]}" -lm
# the warm-cache timed binary: compute blocks timed by SMPI as in mbspar_smpi, but after every MPI
# call the rank re-reads its own live heap blocks before its next block is timed (MBS_SMPI_WARM,
# parallel/comm.c; the allocation table and the re-read in bench/smpi/warmwrap.c): a real node's
# cache holds its own rank's data, not the other simulated ranks'. MBS_SMPI_WARM=0 at run time
# turns the re-read off (the control)
# shellcheck disable=SC2086 # cflags is a list of flags
((only)) || smpicc $cflags -DMBS_SMPI_WARM -Wall -Wno-unknown-pragmas -I"$here/include" -I"$here/src" \
  -I"$here/parallel" -I"$out/generated" "${srcs[@]}" "$here/bench/smpi/warmwrap.c" \
  -Wl,--wrap=smpi_shared_malloc_intercept,--wrap=smpi_shared_calloc_intercept \
  -Wl,--wrap=smpi_shared_realloc_intercept,--wrap=smpi_shared_free -o "$out/mbspar_smpi_warm" \
  "${libs[@]}" -lm
{
  echo "git $sha"
  echo "compiler smpicc ($sgver) on $(cc --version | head -1)"
  echo "flags $cflags (no PETSc, no hwloc, no OpenMP)"
  echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$out/build_flags.txt"
if ((only)); then
  echo "smpi/build.sh: built $out/mbspar_smpi_flops"
else
  echo "smpi/build.sh: built $out/mbspar_smpi, $out/mbspar_smpi_flops and $out/mbspar_smpi_warm"
fi
