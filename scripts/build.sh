#!/usr/bin/env bash
# Configure and build mbspar (Release) in build/ with all cpus.
#
#   scripts/build.sh [CMAKE OPTIONS...]      e.g. scripts/build.sh -DMBS_NATIVE=ON
#
# MBS_BUILD_DIR overrides the build directory (default: build/ in the repository). Re-running
# only rebuilds what changed. Missing dependencies stop the configure step with the Debian
# package to install (scripts/setup.sh installs them all).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bdir=${MBS_BUILD_DIR:-$root/build}

echo "build.sh: configuring $bdir (Release)"
cmake -S "$root" -B "$bdir" -DCMAKE_BUILD_TYPE=Release "$@" || {
  echo "build.sh: configure failed (see the message above; scripts/setup.sh installs the packages)" >&2
  exit 1
}
echo "build.sh: building with $(nproc) jobs"
cmake --build "$bdir" -j "$(nproc)"
