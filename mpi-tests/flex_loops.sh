#!/bin/sh
# Closed loops through flexible bodies (issue 34; docs/flexible.md 15), configs/flex_fourbar.cfg
# (a four-bar whose coupler is a flexible beam, the revolute cut joint on its tip node):
#  - check reports the loop: the rigid-equivalent tree's closure rank 2 of 5 (the planar four-bar)
#    and, with the beam's modal coordinates, rank 5 of 5 (the beam bends out of the plane), the
#    side on the tip node, in the table and in check.json;
#  - run, dp5 at tol 1e-10 for 0.1 s: the closure error stays at closure_tol (1e-10 m/rad, the
#    projection after every step) and the energy is kept to 1e-8 of E0 (dp5's local error bound
#    is 1e-10 per step and the system is conservative; measured 1e-11 relative), the beam bends;
#  - run, rk4 at dt = 4e-4 for 0.1 s: the projection keeps max |c| <= 1e-10, without it the
#    closure drifts above that;
#  - a run restarted from its checkpoint halfway ends in the same state to the bit;
#  - accel with direct, jcg, gs, sor, jacobi, chebyshev and petsc (if built; the loop rows in the
#    constraint-force system) and schur (the loop layer on the distributed elimination, here one range) prints the
#    oracle's qdd digits (schur over 2 and 3 ranks: flex_loops_par.sh);
#  - jacobi and chebyshev refuse redundant closure equations (a rigid-like coupler: rank 2 of 5);
#  - static (a verb that cannot take flexible loops yet) refuses (one line, exit 8), and node2 on a
#    rigid body is an input error (exit 2).
# usage: flex_loops.sh MBSPAR PYTHON3 CONFIGS
mbspar=$1 py=$2 configs=$3
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_loops
cfg="$configs/flex_fourbar.cfg"
run 0 "$mbspar" check "$cfg" --json "$tmp/check.json"
{ grep -q 'loops (cut joints) *1 (C revolute)' "$tmp/out" && grep -q 'flexible body coupler' "$tmp/out" &&
  grep -q 'closure rank 5 of 5 with the modal coordinates' "$tmp/out" &&
  grep -q 'loop C side 1 on node coupler.tip' "$tmp/out" &&
  "$py" -c 'import json, sys; f = json.load(open(sys.argv[1]))["flexible_loops"]; sys.exit(0 if f["rank"] == 5 and f["nodes"][0]["node"] == "tip" else 1)' "$tmp/check.json"; } ||
  bad "check does not report the loop: $(cat "$tmp/out")"
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/d" --set integrator.t_end=0.1
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/p1" --set integrator.method=rk4 \
  --set integrator.dt=4e-4 --set integrator.t_end=0.1
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/p0" --set integrator.method=rk4 \
  --set integrator.dt=4e-4 --set integrator.t_end=0.1 --set integrator.projection=false
r=$("$py" - "$tmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/d/run.json"))
p1 = json.load(open(sys.argv[1] + "/p1/run.json"))
p0 = json.load(open(sys.argv[1] + "/p0/run.json"))
e0 = abs(d["energy_initial"])
c, c1, c0 = (x["loops"]["closure_max"] for x in (d, p1, p0))
print("dp5: closure %.2e, energy drift %.2e of E0, elastic %.2e J; rk4: closure %.2e with "
      "projection, %.2e without" % (c, d["energy_drift_max"] / e0, d["elastic_energy_max"], c1, c0))
sys.exit(0 if c <= 1e-10 and d["energy_drift_max"] < 1e-8 * e0 and d["elastic_energy_max"] > 1e-5
         and c1 <= 1e-10 and c0 > 2 * c1 and d["solver"]["method"] == "flex_oracle" else 1)
PY
) || bad "flexible four-bar run: $r"
echo "flexible four-bar: $r"
# a restart from the checkpoint halfway continues bitwise (the projected state is checkpointed)
rk='--set integrator.method=rk4 --set integrator.dt=4e-4'
# shellcheck disable=SC2086 # $rk: several options
{ run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/rA" $rk --set integrator.t_end=0.02 &&
  run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/rB" $rk --set integrator.t_end=0.01 &&
  run 0 "$mbspar" run "$cfg" --quiet --restart "$tmp/rB/checkpoint.bin" $rk --set integrator.t_end=0.02; }
"$py" - "$tmp" <<'PY' || bad "restart of a flexible loop run is not bitwise"
import json, sys
a = json.load(open(sys.argv[1] + "/rA/run.json"))
b = json.load(open(sys.argv[1] + "/rB/run.json"))
sys.exit(0 if all(a[k] == b[k] for k in ("q", "eta", "qd", "etad")) and a["t"] == b["t"] else 1)
PY
# the constraint-force methods with the loop rows print the oracle's digits (10 significant)
run 0 "$mbspar" accel "$cfg"
oracle=$(grep 'qdd =' "$tmp/out" | sed 's/.*qdd =//')
# petsc only when built with it (--version says "PETSc -" otherwise)
withpetsc=petsc
"$mbspar" --version | grep -q 'PETSc -,' && withpetsc=
for m in direct jcg gs sor jacobi chebyshev schur $withpetsc; do
  run 0 "$mbspar" accel "$cfg" --set solver.method="$m"
  got=$(grep 'qdd =' "$tmp/out" | sed 's/.*qdd =//')
  { [ -n "$oracle" ] && [ "$got" = "$oracle" ]; } || bad "$m: qdd$got against the oracle's$oracle"
done
echo "accel: the oracle, direct, jcg, gs, sor, jacobi, chebyshev, schur and petsc give qdd =$oracle"
# the verbs that cannot take flexible loops yet refuse (one line, exit 8)
# jacobi and chebyshev need independent closure equations: the same four-bar with a rigid-like
# coupler (m = 0, no node) has the rigid four-bar's 5 equations of rank 2, refused (one line, exit 8)
sed -e 's/modes = 2;/modes = 0;/' \
  -e 's/^ *nodes = ( { name = "tip"; position = \[0.7, 0.0, 0.0\]; } ); }; },/        }; },/' \
  -e 's/node1 = "tip"; frame1 = { origin = \[0.0, 0.0, 0.0\]/frame1 = { origin = [0.7, 0.0, 0.0]/' \
  "$cfg" >"$tmp/fb0.cfg"
for m in jacobi chebyshev; do
  run 8 "$mbspar" accel "$tmp/fb0.cfg" --quiet --set solver.method=$m
  { [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "fb0.cfg:30: .*solver.method = $m needs independent closure equations, and this model's 5 have rank 2 at q0" "$tmp/err"; } ||
    bad "$m on redundant closure rows not refused: $(cat "$tmp/err")"
done
run 0 "$mbspar" accel "$tmp/fb0.cfg" --quiet --set solver.method=direct
run 8 "$mbspar" static "$cfg"
{ [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "accel and undriven run only yet (static" "$tmp/err"; } ||
  bad "static not refused: $(cat "$tmp/err")"
run 2 "$mbspar" check "$cfg" --set 'model.loops.[0].node2="tip"'
grep -q 'node2 = "tip": body2 is not a flexible body' "$tmp/err" || bad "node2 on a rigid body: $(cat "$tmp/err")"
[ "$fail" -eq 0 ] && echo "flex_loops: all checks passed"
exit "$fail"
