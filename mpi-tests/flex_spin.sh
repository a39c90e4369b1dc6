#!/bin/sh
# Geometric stiffening of flexible bodies (issue 34; docs/flexible.md 5.3):
#  - energy: the Kane-Ryan-Banerjee beam (L = 10 m, first bending frequency 3.8 rad/s) on a
#    revolute hub with a torsion spring (400 N m/rad), started spinning at 3 rad/s, no gravity: the
#    hub swings, the beam bends up to 80 J of elastic energy; rk4 over 1 s at dt = 5e-4 and 2.5e-4:
#    the largest |E - E0| falls more than 10 times (RK4's h^4: the shortening's Jacobian, bias and
#    mass terms are consistent) and is below 1e-6 E0 at the smaller step;
#  - the key: flexible.stiffening = false is reported by check, a non-boolean is refused (FILE:LINE,
#    exit 2).
# usage: flex_spin.sh MBSPAR PYTHON3 CONFIGS
mbspar=$1 py=$2 configs=$3
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_spin
cat >"$tmp/swing.cfg" <<'CFG'
model = {
  gravity = [0, 0, 0];
  bodies = (
    { name = "beam"; parent = "ground";
      joint = { type = "revolute"; axis = [0, 0, 1]; qd0 = [3.0]; stiffness = [400.0]; };
      flexible = {
        beam = { length = 10.0; E = 7.0e10; rho = 3000.0; area = 4.0e-4;
                 Iy = 2.0e-7; Iz = 2.0e-7; elements = 10; };
        modes = 4;
        nodes = ( { name = "tip"; position = [10.0, 0.0, 0.0]; } ); }; }
  );
};
integrator = { method = "rk4"; dt = 5e-4; t_end = 1.0; };
output = { every = 100; };
CFG
run 0 "$mbspar" run "$tmp/swing.cfg" --quiet --out "$tmp/s1"
run 0 "$mbspar" run "$tmp/swing.cfg" --quiet --out "$tmp/s2" --set integrator.dt=2.5e-4
r=$("$py" - "$tmp" <<'PY'
import json, sys
a = json.load(open(sys.argv[1] + "/s1/run.json"))
b = json.load(open(sys.argv[1] + "/s2/run.json"))
e0 = abs(b["energy_initial"])
d1, d2 = a["energy_drift_max"], b["energy_drift_max"]
print("drift %.3e J at dt 5e-4, %.3e J at 2.5e-4 (ratio %.1f), E0 %.6g J, largest elastic %.3g J"
      % (d1, d2, d1 / d2, e0, b["elastic_energy_max"]))
sys.exit(0 if d1 > 10 * d2 and d2 < 1e-6 * e0 and b["elastic_energy_max"] > 10 else 1)
PY
) || bad "stiffened swing energy: $r"
echo "stiffened swinging beam, rk4 1 s: $r"
run 0 "$mbspar" check "$tmp/swing.cfg" --set 'model.bodies.[0].flexible.stiffening=false'
grep -q 'stiffening off' "$tmp/out" || bad "check does not report stiffening off: $(cat "$tmp/out")"
run 2 "$mbspar" check "$tmp/swing.cfg" --set 'model.bodies.[0].flexible.stiffening=1'
{ [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'flexible.stiffening: wrong type' "$tmp/err"; } ||
  bad "stiffening = 1 not refused: $(cat "$tmp/err")"
[ "$fail" -eq 0 ] && echo "flex_spin: all checks passed"
exit "$fail"
