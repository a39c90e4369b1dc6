#!/usr/bin/env bash
# Install the Debian 12 packages mbspar needs, and only those that are missing.
#
#   scripts/setup.sh [--with-lint|--with-tools] [--with-fuzz] [--with-peers] [--with-urdf]
#                    [--with-viz] [--with-smpi] [--check] [--quiet]
#
#   (default)     compiler, CMake, pkg-config, Open MPI, hwloc, PETSc, parallel HDF5 + h5dump,
#                 libconfig, libxml2 (URDF input), gnuplot, python3 with h5py and numpy (the
#                 XDMF/pose checks, scripts/animate.sh on HDF5 runs), SLURM + munge (the
#                 local-SLURM test, test_slurm.sh), SUNDIALS (CVODE: the reference integrator
#                 of bench/abm_cvode.c and the abm_cvode test; optional in CMake), LAPACK
#                 (liblapack-dev: the eigen solve of mbspar modes)
#   --with-lint   also clang-format, shellcheck (the lint tests; scripts/test.sh uses this)
#   --with-tools  --with-lint plus valgrind (scripts/valgrind.sh)
#   --with-fuzz   also clang and its sanitizer/libFuzzer runtime (scripts/fuzz.sh, the fuzz
#                 smoke test; scripts/test.sh uses this)
#   --with-peers  also libmujoco-dev, libsimbody-dev (peer engines for the benchmarks)
#   --with-urdf   also libmujoco-dev and dart-doc (the URDF-vs-MuJoCo test and the real robot
#                 descriptions it loads; scripts/test.sh uses this)
#   --with-viz    also paraview, python3-paraview, xvfb (scripts/render.sh, the `viz` test),
#                 python3-matplotlib (docs/examples/plot_h5.py), ffmpeg (animate.sh MP4)
#   --with-smpi   also libsimgrid-dev (SimGrid SMPI: bench/smpi/, simulated clusters)
#   --check       install nothing; list what is missing and exit 1 if anything is
#   --quiet       print nothing when everything is present
#
# Each package is checked with dpkg-query first: on a prepared machine no apt command runs at
# all. Missing packages are installed (as root) with
#   apt-get install -y --no-install-recommends
# after one `apt-get update`. Without root, missing packages are an error that names them.
set -euo pipefail

core_pkgs=(build-essential cmake pkg-config libopenmpi-dev openmpi-bin libhwloc-dev hwloc
  petsc-dev libhdf5-openmpi-dev hdf5-tools libconfig-dev libxml2-dev gnuplot-nox python3
  python3-h5py python3-numpy)
# the `slurm` test runs a real single-node slurmctld/slurmd (docs/cluster.md)
core_pkgs+=(slurmctld slurmd slurm-client munge)
# CVODE (Adams) as the reference of the Adams integrator (abm_cvode; skipped when absent)
core_pkgs+=(libsundials-dev)
# LAPACK (dsygv: the eigen solve of `mbspar modes`, docs/modes.md)
core_pkgs+=(liblapack-dev)
lint_pkgs=(clang-format shellcheck)
peer_pkgs=(libmujoco-dev libsimbody-dev)
urdf_pkgs=(libmujoco-dev dart-doc)
viz_pkgs=(paraview python3-paraview xvfb xauth python3-matplotlib ffmpeg)
smpi_pkgs=(libsimgrid-dev)
fuzz_pkgs=(clang libclang-rt-14-dev)

want=("${core_pkgs[@]}")
check_only=0
quiet=0
for arg in "$@"; do
  case "$arg" in
  --with-lint) want+=("${lint_pkgs[@]}") ;;
  --with-tools) want+=("${lint_pkgs[@]}" valgrind) ;;
  --with-fuzz) want+=("${fuzz_pkgs[@]}") ;;
  --with-peers) want+=("${peer_pkgs[@]}") ;;
  --with-urdf) want+=("${urdf_pkgs[@]}") ;;
  --with-viz) want+=("${viz_pkgs[@]}") ;;
  --with-smpi) want+=("${smpi_pkgs[@]}") ;;
  --check) check_only=1 ;;
  --quiet) quiet=1 ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "setup.sh: unknown option '$arg' (see --help)" >&2
    exit 2
    ;;
  esac
done

say() { echo "setup.sh: $*"; }

# a package counts as present when dpkg reports it fully installed
installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = "installed" ]
}

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup.sh: dpkg-query not found: this script supports Debian 12 (bookworm) only;" >&2
  echo "          install the equivalents of: ${want[*]}" >&2
  exit 1
fi

missing=()
for p in "${want[@]}"; do
  installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  [ "$quiet" = 1 ] || say "all packages present (${#want[@]} checked, nothing to install)"
  exit 0
fi

say "missing packages: ${missing[*]}"
if [ "$check_only" = 1 ]; then
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: cannot install them: not running as root. Run as root:" >&2
  echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  echo "or: sudo $0${*:+ $*}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
say "apt-get update"
apt-get update -q
say "apt-get install -y --no-install-recommends ${missing[*]}"
apt-get install -y -q --no-install-recommends "${missing[@]}"

still=()
for p in "${missing[@]}"; do
  installed "$p" || still+=("$p")
done
if [ ${#still[@]} -ne 0 ]; then
  echo "setup.sh: still missing after apt-get install: ${still[*]}" >&2
  exit 1
fi
say "installed ${#missing[@]} package(s); all packages present"
