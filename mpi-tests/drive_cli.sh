#!/bin/sh
# Driven joints in `run` (issue 34 item 5, docs/model.md "Driven joints"): the config's `drive`
# list makes a revolute or prismatic joint follow a profile while the rest moves freely.
#  - closed forms: a single rod held by a cycloidal drive at q_end needs m g (l/2) sin(q_end);
#    a rod spun up in zero gravity needs I q'' (largest 2 I w / T at t = T/2);
#  - a 3-link chain shaken at its top joint (sine): the driving force meets the equations of
#    motion (the accuracy guard's RNEA residual <= 1e-12), the energy balance E - W holds to
#    second order in dt (the work of the drive by the trapezoid rule, as for dampers), crba and
#    natural give aba's trajectory, 2 ranks (auto: aba on rank 0) the same bytes, a restart from a
#    checkpoint the same bytes;
#  - profile motion (a CSV of t, q): against the analytic cycloid it samples, second order in
#    the sample spacing;
#  - bad input: one line FILE:LINE, exit 2, nothing written.
# usage: drive_cli.sh MBSPAR PYTHON3 MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1 py=$2 mpiexec=$3 npflag=$4
shift 4
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_drive
cat >"$tmp/rod.cfg" <<'EOF'
model = {
  gravity = [0, 0, -9.81];
  chain = { n = 1; joint = "revolute"; axis = [0, 1, 0]; direction = [0, 0, -1]; length = 0.5;
            mass = 1.0; shape = "rod"; radius = 0.01; q0 = 0.0; qd0 = 0.0; };
};
drive = ( { body = "link1"; profile = "cycloidal"; q_end = 0.5; T = 0.5; } );
integrator = { method = "rk4"; dt = 1e-3; t_end = 0.6; };
output = { every = 100; };
EOF
# JSON field of run.json's solver.drives[0]
drv() {
  "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["solver"]["drives"][0][sys.argv[2]])' \
    "$1/run.json" "$2"
}
near() { # near A B RELTOL
  "$py" -c 'import sys; a,b,t=map(float,sys.argv[1:]); sys.exit(0 if abs(a-b)<=t*abs(b) else 1)' "$@"
}
run 0 "$mbspar" run "$tmp/rod.cfg" --quiet --out "$tmp/hold"
f=$(drv "$tmp/hold" force_last)
want=$("$py" -c 'import math; print(1.0*9.81*0.25*math.sin(0.5))')
near "${f#-}" "$want" 1e-9 || bad "rod held at 0.5 rad: driving force $f, want +-$want"
# energy.csv's column drive_link1: the force of the last row is run.json's force_last
head -n 1 "$tmp/hold/energy.csv" | grep -q ',drive_link1$' || bad "energy.csv lacks drive_link1"
near "$(tail -n 1 "$tmp/hold/energy.csv" | awk -F, '{print $NF}')" "$f" 0 ||
  bad "energy.csv's last drive_link1 is not force_last $f: $(tail -n 1 "$tmp/hold/energy.csv")"
run 0 "$mbspar" run "$tmp/rod.cfg" --quiet --out "$tmp/spin" --set 'model.gravity=[0.0,0.0,0.0]' \
  --set 'drive=({body="link1";profile="spinup";speed=10.0;T=0.4;})'
f=$(drv "$tmp/spin" force_max_abs)
want=$("$py" -c 'print((0.01**2/4 + 0.5**2/3) * 2 * 10.0 / 0.4)')
near "$f" "$want" 1e-9 || bad "rod spun up: largest driving force $f, want $want"
echo "closed forms: held $(drv "$tmp/hold" force_last), spun up $f (want $want)"

cat >"$tmp/d3.cfg" <<'EOF'
model = {
  gravity = [0, 0, -9.81];
  chain = { n = 3; joint = "revolute"; axis = [0, 1, 0]; direction = [0, 0, -1]; length = 0.5;
            mass = 1.0; shape = "rod"; radius = 0.01; q0 = 0.3; qd0 = 0.0; };
};
drive = ( { body = "link1"; profile = "sine"; amplitude = 0.5; frequency = 1.0; } );
integrator = { method = "rk4"; dt = 1e-3; t_end = 1.0; };
output = { every = 10; };
EOF
run 0 "$mbspar" run "$tmp/d3.cfg" --quiet --out "$tmp/a1"
run 0 "$mbspar" run "$tmp/d3.cfg" --quiet --out "$tmp/a2" --set integrator.dt=5e-4 \
  --set output.every=20
# the guard residual and the energy balance: drift relative to the largest |E|, and its order
r=$("$py" - "$tmp" <<'PY'
import csv, json, sys
t = sys.argv[1]
def drift(d):
    r = list(csv.DictReader(open(d + "/energy.csv")))
    e0 = float(r[0]["total_minus_work"])
    return (max(abs(float(x["total_minus_work"]) - e0) for x in r) /
            max(abs(float(x["total"])) for x in r))
g = json.load(open(t + "/a1/run.json"))["accuracy"]["residual"]
d1, d2 = drift(t + "/a1"), drift(t + "/a2")
print("%.3e %.3e %.3e %.2f" % (g, d1, d2, d1 / d2))
ok = g <= 1e-12 and d1 <= 5e-5 and d1 / d2 >= 3
sys.exit(0 if ok else 1)
PY
) || bad "sine-driven chain: guard residual, E-W drift (dt, dt/2), ratio: $r"
echo "sine-driven chain: guard residual, E-W drift at dt and dt/2, ratio: $r"
for meth in crba natural; do
  if [ $meth = natural ]; then set_m="model.formulation=\"natural\""; else set_m="solver.method=\"$meth\""; fi
  run 0 "$mbspar" run "$tmp/d3.cfg" --quiet --out "$tmp/m_$meth" --set "$set_m"
  "$py" - "$tmp/a1/trajectory.csv" "$tmp/m_$meth/trajectory.csv" <<'PY' || bad "$meth: trajectory differs from aba's"
import csv, sys
a, b = (list(csv.reader(open(f))) for f in sys.argv[1:3])
m = max(abs(float(x) - float(y)) for ra, rb in zip(a[1:], b[1:]) for x, y in zip(ra[1:], rb[1:]))
print("  %s: largest difference to aba %.2e" % (sys.argv[2].split("/")[-2], m))
sys.exit(0 if len(a) == len(b) and m <= 1e-10 else 1)
PY
done
# shellcheck disable=SC2086 # "$@": the launcher's preflags
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$tmp/d3.cfg" --quiet --out "$tmp/p2"
cmp -s "$tmp/a1/trajectory.csv" "$tmp/p2/trajectory.csv" || bad "2 ranks: trajectory differs"
run 0 "$mbspar" run "$tmp/d3.cfg" --quiet --out "$tmp/r" --set integrator.t_end=0.5 \
  --set output.checkpoint_every=500
run 0 "$mbspar" run "$tmp/d3.cfg" --quiet --out "$tmp/r" --restart "$tmp/r/checkpoint.bin"
{ cmp -s "$tmp/a1/energy.csv" "$tmp/r/energy.csv" && cmp -s "$tmp/a1/trajectory.csv" "$tmp/r/trajectory.csv"; } ||
  bad "restart: energy.csv or trajectory.csv differ from the uninterrupted run"

# bad input: KEY=VALUE of the drive entry, the expected message part
n=0
while IFS="|" read -r drive pat; do
  n=$((n + 1))
  run 2 "$mbspar" run "$tmp/d3.cfg" --out "$tmp/bad$n" --set "drive=($drive)"
  [ -e "$tmp/bad$n" ] && bad "bad drive $n: $tmp/bad$n was created"
  { [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "$pat" "$tmp/err"; } ||
    bad "bad drive $n ($drive): want one line with '$pat', got: $(cat "$tmp/err")"
done <<'EOF'
{body="link1";profile="wobble";amplitude=1.0;frequency=1.0;}|unknown value "wobble"
{body="link1";profile="spinup";T=1.0;}|needs speed
{body="link1";profile="spinup";speed=1.0;T=1.0;amplitude=2.0;}|amplitude
{body="link1";profile="cycloidal";q_end=1.0;T=0.0;}|drive.T must be a finite number > 0
{body="link9";profile="sine";amplitude=1.0;frequency=1.0;}|unknown body "link9"
{body="link1";profile="sine";amplitude=1.0;frequency=1.0;},{body="link1";profile="sine";amplitude=1.0;frequency=2.0;}|driven twice
{profile="sine";amplitude=1.0;frequency=1.0;}|has no body
EOF
run 2 "$mbspar" run "$tmp/d3.cfg" --out "$tmp/bad_schur" --set solver.method=\"schur\"
{ [ ! -e "$tmp/bad_schur" ] && grep -q "d3.cfg:6: drive: solver.method = schur" "$tmp/err"; } ||
  bad "drive with schur: $(cat "$tmp/err")"
sed 's/joint = "revolute"/joint = "spherical"/; s/q0 = 0.3; qd0 = 0.0;/q0 = [1.0, 0.0, 0.0, 0.0]; qd0 = [0.0, 0.0, 0.0];/' \
  "$tmp/d3.cfg" >"$tmp/sph.cfg"
run 2 "$mbspar" run "$tmp/sph.cfg" --out "$tmp/bad_sph"
grep -q "sph.cfg:6: drive: the spherical joint of \"link1\" cannot be driven" "$tmp/err" ||
  bad "spherical drive: $(cat "$tmp/err")"
# profile motion: a CSV of the cycloid sampled at 240 and 960 intervals against the cycloid
# itself on a 3-link chain: the spline's q'' is second order in the sample spacing
for ns in 240 960; do
  "$py" -c 'import math, sys
n = int(sys.argv[1]); T, qe = 0.5, 0.5
print("t,q_link1")
for i in range(n + 1):
    t = i * 0.6 / n; tt = min(t, T); w = 2 * math.pi / T
    print("%.17g,%.17g" % (t, qe / T * (tt - math.sin(w * tt) / w)))' "$ns" >"$tmp/cyc$ns.csv"
  run 0 "$mbspar" run "$tmp/d3.cfg" --quiet --out "$tmp/mo$ns" --set integrator.t_end=0.6 \
    --set model.chain.q0=0.0 --set "drive=({body=\"link1\";profile=\"motion\";file=\"cyc$ns.csv\";})"
done
run 0 "$mbspar" run "$tmp/d3.cfg" --quiet --out "$tmp/mocy" --set integrator.t_end=0.6 \
  --set model.chain.q0=0.0 --set 'drive=({body="link1";profile="cycloidal";q_end=0.5;T=0.5;})'
r=$("$py" - "$tmp" <<'PY'
import csv, sys
t = sys.argv[1]
def diff(a, b):
    a, b = (list(csv.reader(open(t + "/" + f + "/trajectory.csv"))) for f in (a, b))
    return max(abs(float(x) - float(y)) for ra, rb in zip(a[1:], b[1:]) for x, y in zip(ra[1:], rb[1:]))
d1, d2 = diff("mo240", "mocy"), diff("mo960", "mocy")
print("%.2e %.2e %.1f" % (d1, d2, d1 / d2))
sys.exit(0 if d1 <= 5e-5 and d1 / d2 >= 10 else 1)
PY
) || bad "motion drive against its cycloid (240, 960 samples, ratio): $r"
echo "motion drive against its cycloid at 240 and 960 samples, ratio: $r"
run 2 "$mbspar" run "$tmp/d3.cfg" --out "$tmp/bad_mo1" --set integrator.t_end=0.7 \
  --set 'drive=({body="link1";profile="motion";file="cyc240.csv";})'
{ grep -q "covers t = 0 ... 0.6 s, the run needs 0 ... 0.7 s" "$tmp/err" && [ ! -e "$tmp/bad_mo1" ]; } ||
  bad "motion too short: $(cat "$tmp/err")"
run 2 "$mbspar" run "$tmp/d3.cfg" --out "$tmp/bad_mo2" --set integrator.t_end=0.5 \
  --set 'drive=({body="link2";profile="motion";file="cyc240.csv";})'
{ grep -q "has no column q_link2" "$tmp/err" && [ ! -e "$tmp/bad_mo2" ]; } ||
  bad "motion without the column: $(cat "$tmp/err")"
# check validates the drives too (and the other verbs say they ignore them)
run 2 "$mbspar" check "$tmp/d3.cfg" --set 'drive=({body="linkX";profile="sine";amplitude=1.0;frequency=1.0;})'
grep -q 'drive: unknown body "linkX"' "$tmp/err" || bad "check with an unknown drive body: $(cat "$tmp/err")"
run 0 "$mbspar" check "$tmp/d3.cfg"
grep -q "d3.cfg:6: drive applies to .run. only; check ignores it" "$tmp/err" ||
  bad "check's note: $(cat "$tmp/err")"
[ "$fail" -eq 0 ] && echo "drive_cli: passed" || echo "drive_cli: $fail failure(s)"
[ "$fail" -eq 0 ]
