#!/bin/sh
# `inverse` of flexible models (issue 34 item 3; docs/flexible.md 12): the joints follow the
# motion, the modal coordinates are integrated from the undeformed beams at rest.
#  - rigid limit: a flexible link with m = 0 (a revolute joint with spring and damper, a universal
#    joint child, gravity off-axis) against the rigid inverse (aba's RNEA) of its rigid equivalent:
#    tau, q, qd, qdd to 1e-12 relative to 1 + |value|, with the cycloid profile and with a user
#    motion (inverse.motion: the profile run's inverse.csv fed back), and with a spherical child
#    (held at q_start at rest, as the rigid verb holds it; a user motion with it: exit 8);
#  - against `run` with the same drive: configs/flex_pendulum.cfg (beam and bob on revolute
#    joints, 10 modal coordinates), inverse along the cycloid to q_end = [0.9, 0.4] over T =
#    0.02 s in 4 samples, rk4 dt = 1e-4, against a run with two cycloidal drives at the same dt:
#    tau against energy.csv's drive_beam, drive_bob and the last sample's eta against
#    trajectory.csv's, to 1e-9 relative to the largest |tau| (|eta|);
#  - a user motion sampling the same cycloid at 8 and 32 intervals: tau at the common samples
#    approaches the profile's inverse (the Hermite interpolant's q'' error falls as h^2: the ratio
#    of the two errors is above 4).
# usage: flex_inverse.sh MBSPAR PYTHON3 CONFIGS
mbspar=$1 py=$2 configs=$3
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_inverse
beam='beam = { length = 1.0; E = 2.1e11; rho = 7850.0; area = 1.0e-4; Iy = 8.3333e-10; Iz = 4.0e-10; elements = 10; };'
eq=$("$py" -c 'r,A,L,Iy,Iz=7850.0,1e-4,1.0,8.3333e-10,4.0e-10
m=r*A*L; print("mass = %.17g; com = [%.17g, 0.0, 0.0]; inertia = [%.17g, %.17g, %.17g, 0.0, 0.0, 0.0];" % (m, L/2, r*L*(Iy+Iz), m*L*L/12, m*L*L/12))')
rest='{ name = "b2"; parent = "link"; joint = { type = "universal"; axis = [0.0, 1.0, 0.0]; axis2 = [1.0, 0.0, 0.0]; origin = [1.0, 0.0, 0.0]; q0 = [0.4, -0.3]; qd0 = [1.1, -0.7]; }; mass = 0.7; com = [0.2, 0.05, -0.1]; inertia = [0.03, 0.02, 0.025, 0.0, 0.0, 0.0]; }'
joint='joint = { type = "revolute"; axis = [0.0, 0.6, 0.8]; q0 = 0.7; stiffness = 2.0; damping = 0.1; };'
tail='inverse = { T = 0.5; steps = 10; q_end = [1.5, 0.9, 0.2]; };'
printf 'model = { gravity = [0.3, -0.2, -9.81]; bodies = ( { name = "link"; %s flexible = { %s modes = 0; }; },\n %s ); };\n%s\n' \
  "$joint" "$beam" "$rest" "$tail" >"$tmp/flex0.cfg"
printf 'model = { gravity = [0.3, -0.2, -9.81]; bodies = ( { name = "link"; %s %s },\n %s ); };\n%s\nsolver = { method = "aba"; };\n' \
  "$joint" "$eq" "$rest" "$tail" >"$tmp/rigid.cfg"
# the same with a spherical child (held at q_start at rest, as the rigid verb holds it)
sph='joint = { type = "spherical"; origin = [1.0, 0.0, 0.0]; q0 = [0.92338051687663869, 0.10259783520851541, -0.30779350562554619, 0.20519567041703082]; };'
for f in flex0 rigid; do
  sed "s/joint = { type = \"universal\";[^}]*};/$sph/; s/q_end = \[1.5, 0.9, 0.2\]/q_end = 1.5/" \
    "$tmp/$f.cfg" >"$tmp/${f}s.cfg"
done
grep -q spherical "$tmp/flex0s.cfg" || bad "the spherical variant was not written"
run 0 "$mbspar" inverse "$tmp/flex0s.cfg" --quiet --json "$tmp/f0s.json"
run 0 "$mbspar" inverse "$tmp/rigids.cfg" --quiet --json "$tmp/r0s.json"
# a user motion cannot drive a spherical joint of a flexible model (exit 8)
printf 't,q_link\n0,0.7\n1,0.8\n' >"$tmp/m.csv"
run 8 "$mbspar" inverse "$tmp/flex0s.cfg" --quiet --set "inverse.motion=\"$tmp/m.csv\""
grep -q 'inverse.motion drives flexible models whose joints have scalar coordinates' "$tmp/err" ||
  bad "motion with a spherical joint: $(cat "$tmp/err")"
run 0 "$mbspar" inverse "$tmp/flex0.cfg" --quiet --out "$tmp/f0" --json "$tmp/f0.json"
run 0 "$mbspar" inverse "$tmp/rigid.cfg" --quiet --out "$tmp/r0" --json "$tmp/r0.json"
run 0 "$mbspar" inverse "$tmp/flex0.cfg" --quiet --set "inverse.motion=\"$tmp/r0/inverse.csv\"" \
  --json "$tmp/f0m.json"
run 0 "$mbspar" inverse "$tmp/rigid.cfg" --quiet --set "inverse.motion=\"$tmp/r0/inverse.csv\"" \
  --json "$tmp/r0m.json"
# the flexible pendulum: inverse along the cycloid, and run with the same two drives
cfg="$configs/flex_pendulum.cfg"
set -- --quiet --set integrator.method=rk4 --set integrator.dt=1e-4
run 0 "$mbspar" inverse "$cfg" "$@" --set inverse.T=0.02 --set inverse.steps=4 \
  --set 'inverse.q_end=[0.9, 0.4]' --json "$tmp/p4.json"
run 0 "$mbspar" run "$cfg" "$@" --set integrator.t_end=0.02 --set output.every=50 --out "$tmp/run" \
  --set 'drive=({ body = "beam"; profile = "cycloidal"; q_end = 0.9; T = 0.02; }, { body = "bob"; profile = "cycloidal"; q_end = 0.4; T = 0.02; })'
for n in 8 32; do # the profile sampled at n intervals as a user motion, and its own inverse
  run 0 "$mbspar" inverse "$cfg" "$@" --set inverse.T=0.02 --set "inverse.steps=$n" \
    --set 'inverse.q_end=[0.9, 0.4]' --json "$tmp/p$n.json" --out "$tmp/m$n"
  run 0 "$mbspar" inverse "$cfg" "$@" --set "inverse.motion=\"$tmp/m$n/inverse.csv\"" \
    --json "$tmp/u$n.json"
done
r=$("$py" - "$tmp" <<'PY'
import csv, json, sys
t = sys.argv[1]
inv = lambda n: json.load(open("%s/%s.json" % (t, n)))["inverse"]
def rel(a, b):
    return max(abs(x - y) / (1 + abs(y)) for ra, rb in zip(a, b) for x, y in zip(ra, rb))
out = []
for f, r in (("f0", "r0"), ("f0m", "r0m"), ("f0s", "r0s")):  # profile, user motion, spherical
    a, b = inv(f), inv(r)
    assert a["eta"] == [[] for _ in a["t"]] and a["method"] == "flex_oracle", a.get("method")
    assert a["t"] == b["t"] and len(a["t"]) == 11
    w = max(rel(a[k], b[k]) for k in ("q", "qd", "qdd", "tau"))
    assert w <= 1e-12, (f, w)
    out.append("m = 0 %s %.1e" % ({"f0": "profile", "f0m": "motion", "f0s": "spherical"}[f], w))
# inverse against run with the same drives
a = inv("p4")
rows = list(csv.DictReader(open(t + "/run/energy.csv")))
assert len(rows) == 5 and len(a["t"]) == 5, (len(rows), len(a["t"]))
scale = max(abs(x) for r in a["tau"] for x in r)
w = 0
for i, r in enumerate(rows):
    assert abs(float(r["t"]) - a["t"][i]) < 1e-15, (r["t"], a["t"][i])
    w = max(w, abs(float(r["drive_beam"]) - a["tau"][i][0]), abs(float(r["drive_bob"]) - a["tau"][i][1]))
w /= scale
traj = list(csv.DictReader(open(t + "/run/trajectory.csv")))[-1]
eta = [float(traj["eta_beam_%d" % k]) for k in range(10)]
we = max(abs(x - y) for x, y in zip(eta, a["eta"][-1])) / max(abs(x) for x in eta)
assert w <= 1e-9 and we <= 1e-9, (w, we)
assert max(abs(x) for x in eta) > 1e-9  # the beam deforms
out.append("vs run with drives: tau %.1e, eta %.1e (largest |tau| %.4g)" % (w, we, scale))
# a user motion converges to the profile
err = {}
for n in (8, 32):
    p, u = inv("p%d" % n), inv("u%d" % n)
    assert p["t"] == u["t"]
    err[n] = max(abs(x - y) for rp, ru in zip(p["tau"], u["tau"]) for x, y in zip(rp, ru)) / scale
assert err[32] < err[8] / 4 and err[32] < 0.05, err
out.append("motion vs profile %.2e (8), %.2e (32)" % (err[8], err[32]))
print("; ".join(out))
PY
) || bad "flexible inverse: $r"
echo "flex_inverse: $r"
[ "$fail" -eq 0 ] && echo "flex_inverse: all checks passed"
exit "$fail"
