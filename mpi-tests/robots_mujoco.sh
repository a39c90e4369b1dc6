#!/bin/sh
# One robot of the real-robot corpus (robots/README.md) against MuJoCo at one rank count:
# `mbspar accel ROBOT.cfg` (q0/qd0 in the file order of the joints) writes q̈, then
# test_robots_mujoco loads the same URDF into MuJoCo and compares (1e-10).
# usage: robots_mujoco.sh MBSPAR CHECKER ROBOT.cfg METHOD [LAUNCHER ...]
mbspar=$1
checker=$2
cfg=$3
method=$4
shift 4
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_robot
run 0 "$@" "$mbspar" accel "$cfg" --set "solver.method=$method" --json "$tmp/accel.json" --quiet
if [ "$fail" -eq 0 ]; then
  "$checker" "$cfg" "$tmp/accel.json" || bad "q̈ against MuJoCo"
fi
[ "$fail" -eq 0 ] || exit 1
