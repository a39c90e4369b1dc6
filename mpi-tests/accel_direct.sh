#!/bin/sh
# A direct solve reports no iterations and the accel check residual has one name at every rank
# count (issue 32): schur at 1 rank (full model) and under LAUNCHER (2 ranks: distributed model);
# schur's J-CG interface (iterative) still counts its iterations.
# usage: accel_direct.sh MBSPAR CONFIGS_DIR [LAUNCHER ...]   (LAUNCHER: mpiexec -n 2)
mbspar=$1
cfg=$2
shift 2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_accel_direct

run 0 "$@" "$mbspar" accel "$cfg/chain.cfg" --set solver.method=schur --set model.chain.n=16 --json "$tmp/d.json"
grep -q '^  method  *schur (direct)$' "$tmp/out" || bad "table: $(grep method "$tmp/out")"
grep -q '^  check residual ' "$tmp/out" || bad "table lacks 'check residual'"
grep -q 'iterations' "$tmp/out" && bad "a direct solve printed iterations: $(cat "$tmp/out")"
run 0 "$@" "$mbspar" accel "$cfg/chain.cfg" --set solver.method=schur --set model.chain.n=16 --set solver.interface=jcg \
  --json "$tmp/j.json" --quiet
python3 - "$tmp/d.json" "$tmp/j.json" <<'PY' || bad "JSON reports"
import json, sys
d, j = (json.load(open(f)) for f in sys.argv[1:3])
assert d["solver"]["iterations"] == 0 and d["solver"]["reason"] == "direct", d["solver"]
assert d["check_residual"] < 1e-10, d["check_residual"]
assert d["check_residual_kind"] == ("eom" if d["ranks"] == 1 else "newton_euler"), d
if j["ranks"] > 1:  # J-CG on the interface: an iterative solve with its iterations
    assert j["solver"]["iterations"] > 0, j["solver"]
PY

[ "$fail" -eq 0 ] || exit 1
echo "accel_direct: all checks passed"
