#!/bin/sh
# Geometric stiffening of flexible bodies (issue 34; docs/flexible.md 5.3):
#  - energy: the Kane-Ryan-Banerjee beam (L = 10 m, first bending frequency 3.8 rad/s) on a
#    revolute hub with a torsion spring (400 N m/rad), started spinning at 3 rad/s, no gravity: the
#    hub swings, the beam bends up to 80 J of elastic energy; rk4 over 1 s at dt = 5e-4 and 2.5e-4:
#    the largest |E - E0| falls more than 10 times (RK4's h^4: the shortening's Jacobian, bias and
#    mass terms are consistent) and is below 1e-6 E0 at the smaller step;
#  - the key: flexible.stiffening = false is reported by check, a non-boolean is refused (FILE:LINE,
#    exit 2);
#  - drives (docs/flexible.md 9): configs/spinup.cfg with no modes (the rigid beam) needs the
#    torque (rho A L^3/3) w'(t) of the profile (to 1e-9) and its work is the kinetic energy; a
#    driven rk4 run restarted halfway writes the same bytes; profile = "motion" (a file sampling the
#    spin-up profile at 20 and 80 intervals) approaches the profile's run as h^2, and a file that
#    does not cover t_end is refused (exit 2, nothing written);
#  - the spin-up beam's first 10 s against a lumped model of 20 links, and its divergence without
#    stiffening (below).
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

# driven joints (docs/flexible.md 9): configs/spinup.cfg with m = 0 is the rigid beam spun up about
# its root: the driving torque is (rho A L^3 / 3) w'(t) = 400 (6/15)(1 - cos(2 pi t/15)) N m, at
# t = 2 s 52.939102982582... (to 1e-9), the work is the kinetic energy
cfg="$configs/spinup.cfg"
rk='--set integrator.method=rk4 --set integrator.dt=1e-3'
# shellcheck disable=SC2086 # $rk: several options
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/m0" --set 'model.bodies.[0].flexible.modes=0' \
  --set 'model.bodies.[0].flexible.nodes=()' $rk --set integrator.t_end=2
r=$("$py" - "$tmp/m0" <<'PY'
import json, math, sys
j = json.load(open(sys.argv[1] + "/run.json"))
d = j["solver"]["drives"][0]
want = 400 * 0.4 * (1 - math.cos(2 * math.pi * 2 / 15))
err = abs(d["force_last"] - want) / want
q = 0.4 * (2 * 2 / 2 + (15 / (2 * math.pi)) ** 2 * (math.cos(2 * math.pi * 2 / 15) - 1))
print("torque %.12g against %.12g (rel %.1e), q %.12g against %.12g, E - W drift %.1e J"
      % (d["force_last"], want, err, j["q"][0], q, j["energy_drift_max"]))
sys.exit(0 if err < 1e-9 and abs(j["q"][0] - q) < 1e-12 and j["energy_drift_max"] < 1e-9
         and d["body"] == "beam" and d["profile"] == "spinup" else 1)
PY
) || bad "m = 0 spin-up torque: $r"
echo "m = 0 spin-up, 2 s: $r"
# restart with a drive: the same bytes as one run (the work W is in the checkpointed state)
# shellcheck disable=SC2086
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/d1" $rk --set integrator.t_end=0.2
# shellcheck disable=SC2086
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/d2" $rk --set integrator.t_end=0.1
# shellcheck disable=SC2086
run 0 "$mbspar" run "$cfg" --quiet --restart "$tmp/d2/checkpoint.bin" $rk --set integrator.t_end=0.2
{ cmp -s "$tmp/d1/trajectory.csv" "$tmp/d2/trajectory.csv" &&
  cmp -s "$tmp/d1/energy.csv" "$tmp/d2/energy.csv"; } || bad "driven restart: outputs differ"
head -n 1 "$tmp/d1/energy.csv" | grep -q ',work,total_minus_work,drive_beam$' ||
  bad "energy.csv header: $(head -n 1 "$tmp/d1/energy.csv")"
# motion drives: the spin-up profile sampled (t, q, qd exact) at 20 and 80 intervals over 2 s as a
# motion file drives the beam (4 modes, tip node) as the profile does: the driving torque and the
# tip's deflection approach the profile run's (the cubic Hermite interpolant's q'' error falls as
# h^2: the ratio of the errors is above 4); a file that does not cover t_end is refused (exit 2)
for n in 20 80; do
  "$py" - "$n" >"$tmp/spin$n.csv" <<'PY'
import math, sys
n, w, T = int(sys.argv[1]), 6.0, 15.0
c = T / (2 * math.pi)
print("t,q_beam,qd_beam")
for i in range(n + 1):
    t = 2.0 * i / n
    a = 2 * math.pi * t / T
    print("%.17g,%.17g,%.17g" % (t, w / T * (0.5 * t * t + c * c * (math.cos(a) - 1)), w / T * (t - c * math.sin(a))))
PY
  # shellcheck disable=SC2086
  run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/mo$n" $rk --set integrator.t_end=2 --set output.every=100 \
    --set "drive=({body=\"beam\"; profile=\"motion\"; file=\"$tmp/spin$n.csv\";})"
done
# shellcheck disable=SC2086
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/mop" $rk --set integrator.t_end=2 --set output.every=100
r=$("$py" - "$tmp" <<'PY'
import csv, sys
t = sys.argv[1]
rows = lambda d, f: list(csv.DictReader(open("%s/%s/%s" % (t, d, f))))
ref, reft = rows("mop", "energy.csv"), rows("mop", "trajectory.csv")
scale = max(abs(float(r["drive_beam"])) for r in ref)
tip = max(abs(float(r["node_beam_tip_y"])) for r in reft)
err = {}
for n in (20, 80):
    e, tr = rows("mo%d" % n, "energy.csv"), rows("mo%d" % n, "trajectory.csv")
    assert len(e) == len(ref) == 21 and len(tr) == len(reft)
    assert all(a["t"] == b["t"] for a, b in zip(e, ref))
    et = max(abs(float(a["drive_beam"]) - float(b["drive_beam"])) for a, b in zip(e, ref)) / scale
    ey = max(abs(float(a["node_beam_tip_y"]) - float(b["node_beam_tip_y"])) for a, b in zip(tr, reft)) / tip
    err[n] = (et, ey)
ok = err[80][0] < err[20][0] / 4 and err[80][1] < err[20][1] / 4 and max(err[80]) < 1e-3
print("torque %.1e / %.1e, tip %.1e / %.1e (20 / 80 intervals; largest torque %.4g N m, tip y %.4g m)"
      % (err[20][0], err[80][0], err[20][1], err[80][1], scale, tip))
sys.exit(0 if ok else 1)
PY
) || bad "motion drive: $r"
echo "motion drive against the profile: $r"
# shellcheck disable=SC2086
run 2 "$mbspar" run "$cfg" --quiet --out "$tmp/mo_short" $rk --set integrator.t_end=3 \
  --set "drive=({body=\"beam\"; profile=\"motion\"; file=\"$tmp/spin20.csv\";})"
{ [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'drive: the motion of .* covers t = 0 ... 2 s' "$tmp/err" &&
  [ ! -e "$tmp/mo_short" ]; } || bad "motion drive not covering t_end: $(cat "$tmp/err")"

# the spin-up beam's first 10 s (docs/flexible.md 9; the full 30 s against 100 links is the slow
# test flex_spinup_30s): configs/spinup.cfg with stiffening against the lumped beam of 20 links
# (scripts/gen_spinup_lumped.py 20: joint springs E I / l, 2 E I / l at the root): the tip
# deflections in the hub frame agree within 0.6 % of the peak (measured 0.18 %; the bound is the
# sum of the two models' gap, 0.37 % against 100 links, of the order (v/L)^2 of what the modal
# model leaves out, and the 20 links' own lumping error, 0.32 %; docs/flexible.md 9); the peak is
# near -0.576 m; E - W is kept to 1e-7 of W; without stiffening the deflection passes 10 m by
# t = 10 s (it diverges)
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/on" --set integrator.t_end=10
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/off" --set integrator.t_end=10 \
  --set 'model.bodies.[0].flexible.stiffening=false'
"$py" "$here/../scripts/gen_spinup_lumped.py" 20 >"$tmp/lumped20.cfg" || bad "gen_spinup_lumped.py failed"
run 0 "$mbspar" run "$tmp/lumped20.cfg" --quiet --out "$tmp/l20" --set integrator.t_end=10
run 0 "$py" "$here/../scripts/spinup_compare.py" "$tmp/on" "$tmp/l20" "$tmp/off" --json "$tmp/cmp.json"
cat "$tmp/out"
r=$("$py" - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
on, l20, off = json.load(open(d + "/cmp.json"))
j = json.load(open(d + "/on/run.json"))
rel = j["energy_drift_max"] / j["work"]
print("flexible peak %.5f m, lumped(20) %.5f m, max difference %.2f %% of the peak; without "
      "stiffening |v(10 s)| = %.3g m; E - W drift %.1e of W"
      % (on["peak"], l20["peak"], 100 * l20["max_diff_rel_peak"], abs(off["v_end"]), rel))
sys.exit(0 if l20["max_diff_rel_peak"] < 0.006 and -0.60 < on["peak"] < -0.55
         and abs(off["v_end"]) > 10 and rel < 1e-7 else 1)
PY
) || bad "spin-up beam, 10 s: $r"
echo "spin-up beam, 10 s: $r"
[ "$fail" -eq 0 ] && echo "flex_spin: all checks passed"
exit "$fail"
