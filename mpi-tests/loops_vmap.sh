#!/bin/sh
# The velocity transformation that `mbspar check` reports for closed loops (docs/loops.md 5,
# seed 000 eqs. 15-18: qd_dep = E qd_ind at the assembled q0) against closed forms:
# - seed 000's Fig. 4 (configs/seed000_fig4.cfg, a parallelogram): the seed's own choice, theta2
#   independent, theta3 = -theta2 and theta4 = theta2 (rates), the slider independent of the loop;
# - the slider-crank at its dead centre (crank a = 0.1 m, rod b = 0.3 m, crank angle 0): the rod's
#   relative rate -(1 + a/b) times the crank's, the slider's 0;
# - the text lines of check for the parallelogram.
# usage: loops_vmap.sh MBSPAR CONFIGS_DIR
mbspar=$1
cfg=$2
shift 2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_loops_vmap

run 0 "$mbspar" check "$cfg/seed000_fig4.cfg" --json "$tmp/f4.json"
cp "$tmp/out" "$tmp/f4.txt"
grep -q 'qd(coupler) = -1 qd(crank)' "$tmp/f4.txt" || bad "check's text: $(grep -A1 'velocity map' "$tmp/f4.txt")"
grep -q 'qd(rocker) = 1 qd(crank)' "$tmp/f4.txt" || bad "check's text: $(grep -A1 'velocity map' "$tmp/f4.txt")"
run 0 "$mbspar" check "$cfg/slider_crank.cfg" --json "$tmp/sc.json"
python3 - "$tmp" <<'PY' || bad "velocity map against the closed forms"
import json, sys
t = sys.argv[1]
def vmap(f):
    return json.load(open(f"{t}/{f}.json"))["model"]["loops"]["velocity_map"]
def near(x, y, tol=1e-12):
    return all(abs(a - b) <= tol for a, b in zip(x, y)) and len(x) == len(y)
v = vmap("f4")
assert v["independent"] == ["slider", "crank"], v
assert v["dependent"] == ["coupler", "rocker"], v
assert near(v["E"][0], [0, -1]) and near(v["E"][1], [0, 1]), v["E"]
print("seed000_fig4:", v["dependent"], "=", v["E"], "x", v["independent"])
v = vmap("sc")
a, b = 0.1, 0.3
assert v["independent"] == ["crank"], v
assert v["dependent"] == ["rod", "slider"], v
assert near(v["E"][0], [-(1 + a / b)]) and near(v["E"][1], [0]), v["E"]
print("slider_crank:", v["dependent"], "=", v["E"], "x", v["independent"])
PY

[ "$fail" -eq 0 ] || exit 1
echo "loops_vmap: all checks passed"
