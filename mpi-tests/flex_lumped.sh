#!/bin/sh
# Modal files in the lumped form (issue 34 item 1; docs/flexible.md 14, version 2):
#  - the same beam twice (its joints' axes tilted, a joint rate): configs/flex_modalfile.h5 (the
#    line form) and its lumped form written by scripts/gen_lumped_file.py from-line (the Gauss points with their masses, polar inertias and
#    interpolated shapes, the FE nodes as massless points) give accel's qdd, etadd and nodes,
#    modes' omega and a 0.01 s rk4 run's positions and energies equal to 1e-12 (stiffening off:
#    the lumped form has none; damping 0.02);
#  - a node off the body's axes: a child on a point of the plate file that no mode moves moves as
#    the same child on the body frame with the node's position added to its joint origin;
#  - an independent 3-D body (gen_lumped_file.py plate: a plate with a full rotary inertia tensor
#    and three point masses off the axes, on springs): check's omega_body (the file's M, K) and
#    modes' omega (the oracle's linearisation with its own mass from the points) against the
#    closed forms sqrt(k/m), sqrt(k_rot/lambda_i(J)) to 1e-9; spinning with a child on a rim node
#    for 0.3 s of rk4, its energy to 1e-9;
#  - the HDF5 drawing: a lumped body's points a cloud (no segments between them);
#  - check --modal-out writes a lumped body back: read again, accel's numbers bit for bit;
#  - bad input in the new datasets: one line FILE:LINE naming the HDF5 file and the dataset,
#    exit 2, nothing written.
# usage: flex_lumped.sh MBSPAR PYTHON3 CONFIGS SCRIPTS
mbspar=$1 py=$2 configs=$3 scripts=$4
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_lumped
"$py" -c "import h5py, numpy" 2>/dev/null || {
  echo "python3-h5py or python3-numpy not found: skipped"
  exit 77
}

# ---- the same beam, line and lumped
mkdir "$tmp/line" "$tmp/lump"
# the joints' axes tilted (torsion and both bending planes move) and a joint rate
sed -e 's/damping = 0.0;/damping = 0.02; stiffening = false;/' \
  -e 's/axis = \[0, 1, 0\]; q0 = \[0.3\]/axis = [0.6, 0.8, 0]; q0 = [0.3]; qd0 = [2]/' \
  -e 's/axis = \[0, 1, 0\]/axis = [0, 0.8, 0.6]/' "$configs/flex_modalfile.cfg" >"$tmp/line/b.cfg"
grep -q "qd0 = \[2\]" "$tmp/line/b.cfg" || bad "no qd0 in b.cfg"
grep -q "stiffening = false;" "$tmp/line/b.cfg" || bad "no stiffening = false in b.cfg"
cp "$configs/flex_modalfile.h5" "$tmp/line/"
sed 's/flex_modalfile.h5/lumped.h5/' "$tmp/line/b.cfg" >"$tmp/lump/b.cfg"
"$py" "$scripts/gen_lumped_file.py" from-line "$configs/flex_modalfile.h5" "$tmp/lump/lumped.h5" ||
  bad "gen_lumped_file.py from-line"
for n in line lump; do
  run 0 "$mbspar" accel "$tmp/$n/b.cfg" --quiet --json "$tmp/a_$n.json"
  run 0 "$mbspar" modes "$tmp/$n/b.cfg" --quiet --count 6 --json "$tmp/m_$n.json"
  run 0 "$mbspar" run "$tmp/$n/b.cfg" --quiet --set integrator.method=rk4 \
    --set integrator.dt=1e-4 --set integrator.t_end=0.01 --out "$tmp/r_$n"
done
r=$("$py" - "$tmp" <<'PY'
import csv, json, sys
t = sys.argv[1]
L = lambda p: json.load(open(t + "/" + p))
def flat(v):
    if isinstance(v, dict):
        return [x for k in sorted(v) for x in flat(v[k])]
    if isinstance(v, list):
        return [x for e in v for x in flat(e)]
    return [v] if isinstance(v, (int, float)) else []
def diff(a, b):
    a, b = flat(a), flat(b)
    assert len(a) == len(b) and a, (len(a), len(b))
    s = max(abs(x) for x in a) or 1.0
    return max(abs(x - y) for x, y in zip(a, b)) / s
worst = 0.0
a0, a1 = L("a_line.json"), L("a_lump.json")
for k in ("qdd", "etadd", "nodes"):
    worst = max(worst, diff(a0[k], a1[k]))
worst = max(worst, diff(L("m_line.json")["results"]["omega"], L("m_lump.json")["results"]["omega"]))
def table(n, f):
    rows = list(csv.DictReader(open("%s/r_%s/%s" % (t, n, f))))
    return {k: [float(r[k]) for r in rows] for k in rows[0] if not k.startswith("shape_")}
for f in ("trajectory.csv", "energy.csv"):
    t0, t1 = table("line", f), table("lump", f)
    assert sorted(t0) == sorted(t1), (f, sorted(t0), sorted(t1))
    for k in t0:
        worst = max(worst, diff(t0[k], t1[k]))
assert worst < 1e-12, worst
print("ok %.2g" % worst)
PY
) || bad "line vs lumped: $r"
case $r in ok*) echo "line vs lumped beam: accel, modes, run: largest relative difference $r" ;; *) bad "line vs lumped: $r" ;; esac

# ---- an independent 3-D body: the plate and three masses on springs
"$py" "$scripts/gen_lumped_file.py" plate "$tmp/plate.h5" >"$tmp/plate.json" ||
  bad "gen_lumped_file.py plate"
cat >"$tmp/plate.cfg" <<'EOF'
model = { gravity = [0, 0, 0];
  bodies = ( { name = "plate"; parent = "ground"; joint = { type = "fixed"; };
      flexible = { file = "plate.h5"; }; } ); };
EOF
run 0 "$mbspar" check "$tmp/plate.cfg" --quiet --json "$tmp/plate_check.json"
run 0 "$mbspar" modes "$tmp/plate.cfg" --quiet --count 15 --json "$tmp/plate_modes.json"
r=$("$py" - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
ref = json.load(open(t + "/plate.json"))["omega"]
body = json.load(open(t + "/plate_check.json"))["flexible"][0]
modes = json.load(open(t + "/plate_modes.json"))["results"]["omega"]
rel = lambda a, b: abs(a - b) / abs(b)
assert len(body["omega_body"]) >= 6 and len(modes) == 15, (body["omega_body"], modes)
e1 = max(rel(a, b) for a, b in zip(body["omega_body"], ref))
e2 = max(rel(a, b) for a, b in zip(modes, ref))
assert e1 < 1e-9 and e2 < 1e-9, (e1, e2)
print("ok %.2g %.2g" % (e1, e2))
PY
) || bad "plate: $r"
case $r in ok*) echo "plate: check's omega_body, modes' omega vs closed form: $r" ;; *) bad "plate: $r" ;; esac

# ---- no modal coordinates: a lumped body of 3 points (a full rotary inertia tensor on two of
# them) spinning on a spherical joint is the rigid body of its totals (the file's /rigid), the
# rigid dynamics' q'' to 1e-13 (positions off the axes, the rotary inertias' gyroscopic terms)
"$py" - "$tmp" "$scripts" <<'PY' || bad "making rig.h5"
import sys
import numpy as np
import h5py
t = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import gen_lumped_file as g
c, s = np.cos(0.7), np.sin(0.7)
Q = np.array([[1, 0, 0], [0, c, -s], [0, s, c]]) @ np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
J = Q @ np.diag([0.02, 0.05, 0.09]) @ Q.T
g.write(t + "/rig.h5", [[0.3, 0.2, 0.1], [1.0, 0.0, -0.2], [-0.5, 0.866, 0.2]], [2.0, 0.5, 0.7],
        [[J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]],
         [0.01, 0.02, 0.03, 0.001, 0, 0.002], [0.0] * 6],
        np.zeros((18, 0)), np.zeros((0, 0)), np.zeros((0, 0)), [], [])
with h5py.File(t + "/rig.h5", "r") as f:
    m, com, inert = f["rigid/mass"][()], f["rigid/com"][()], f["rigid/inertia"][()]
v = lambda a: "[" + ", ".join(repr(float(x)) for x in a) + "]"
b = ('{ name = "b"; parent = "ground"; joint = { type = "spherical"; qd0 = [3, -2, 5]; '
     'q0 = [0.9, 0.3, 0.1, 0.3]; };')
open(t + "/rig_flex.cfg", "w").write(
    'model = { gravity = [0, 0, -9.81]; bodies = ( %s flexible = { file = "rig.h5"; }; } ); };\n' % b)
open(t + "/rig_rigid.cfg", "w").write(
    'model = { gravity = [0, 0, -9.81]; bodies = ( %s mass = %r; com = %s; inertia = %s; } ); };\n'
    % (b, float(m), v(com), v(inert)))
PY
for w in flex rigid; do run 0 "$mbspar" accel "$tmp/rig_$w.cfg" --quiet --json "$tmp/rig_$w.json"; done
r=$("$py" - "$tmp" <<'PY'
import json, sys
a, b = (json.load(open("%s/rig_%s.json" % (sys.argv[1], w)))["qdd"] for w in ("flex", "rigid"))
s = max(abs(x) for x in b)
d = max(abs(x - y) for x, y in zip(a, b)) / s
assert len(a) == 3 and s > 1 and d < 1e-13, (a, b, d)
print("ok %.2g" % d)
PY
) || bad "lumped m = 0 vs rigid: $r"
case $r in ok*) echo "lumped body without modes vs the rigid body: $r" ;; *) bad "rigid: $r" ;; esac

# ---- a node off the axes: a child on point "rim" (no mode moves it) = the child on the frame
"$py" - "$tmp" <<'PY' || bad "making rim.h5"
import shutil, sys
import h5py, numpy as np
t = sys.argv[1]
shutil.copy(t + "/plate.h5", t + "/rim.h5")
with h5py.File(t + "/rim.h5", "r+") as f:
    def grow(k, row):
        v = f[k][()]
        del f[k]
        f[k] = np.vstack([v, row]) if v.ndim == 2 else np.append(v, row)
    grow("points/pos", [[0.2, -0.4, 0.3]])
    grow("points/mass", 0.0)
    grow("points/inertia", [[0.0] * 6])
    grow("Phi", np.zeros((6, f["Phi"].shape[1])))
    f["node_names"] = np.array(["rim"], dtype="S64")
    f["node_fe"] = np.array([4], dtype=np.int32)
PY
for w in node frame; do
  if [ "$w" = node ]; then j='node = "rim"; origin = [0.1, 0, 0];'; else j='origin = [0.3, -0.4, 0.3];'; fi
  cat >"$tmp/rim_$w.cfg" <<EOF
model = { gravity = [0, 0, -9.81];
  bodies = ( { name = "plate"; parent = "ground"; joint = { type = "revolute"; axis = [0, 0, 1]; q0 = [0.4]; qd0 = [1.5]; };
      flexible = { file = "rim.h5"; }; },
    { name = "arm"; parent = "plate"; joint = { type = "revolute"; $j axis = [1, 0, 0]; q0 = [0.7]; qd0 = [-2]; };
      mass = 0.4; com = [0, 0.2, 0]; inertia = [1e-3, 1e-3, 1e-3, 0, 0, 0]; } ); };
EOF
  run 0 "$mbspar" accel "$tmp/rim_$w.cfg" --quiet --json "$tmp/rim_$w.json"
done
# the recursive algorithm (flex_part under schur; flex_aba's body terms) on the same model
run 0 "$mbspar" accel "$tmp/rim_node.cfg" --quiet --set solver.method=schur --json "$tmp/rim_aba.json"
r=$("$py" - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
a, b, c = (json.load(open("%s/rim_%s.json" % (t, w))) for w in ("node", "frame", "aba"))
d = max(abs(x - y) for k in ("qdd", "etadd") for x, y in zip(a[k], b[k]))
e = max(abs(x - y) for k in ("qdd", "etadd") for x, y in zip(a[k], c[k]))
s = max(abs(x) for k in ("qdd", "etadd") for x in a[k])
assert s > 0.1 and d < 1e-12 * s and e < 1e-12 * s, (d, e, s, a["qdd"], b["qdd"], c["qdd"])
print("ok %.2g, recursive algorithm vs oracle %.2g" % (d / s, e / s))
PY
) || bad "node off the axes: $r"
case $r in ok*) echo "node off the axes vs the frame: $r" ;; *) bad "node off the axes: $r" ;; esac
# --modal-out writes the lumped body back (version 2): read again, accel bit for bit
run 0 "$mbspar" check "$tmp/rim_node.cfg" --quiet --modal-out "$tmp/w"
sed 's|"rim.h5"|"w/plate.h5"|' "$tmp/rim_node.cfg" >"$tmp/rim_back.cfg"
run 0 "$mbspar" accel "$tmp/rim_back.cfg" --quiet --json "$tmp/rim_back.json"
r=$("$py" -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
print("ok" if all(a[k] == b[k] for k in ("qdd", "etadd", "nodes")) else "differ")' \
  "$tmp/rim_node.json" "$tmp/rim_back.json")
[ "$r" = ok ] || bad "--modal-out of a lumped body read back: $r"
# the drawing: the plate's 5 points a cloud (no segment joins them), the arm's 3 points
# (origin, com, shape end) joined, hanging from the rim node's point (4)
run 0 "$mbspar" run "$tmp/rim_node.cfg" --quiet --set output.format=hdf5 \
  --set integrator.method=rk4 --set integrator.dt=1e-3 --set integrator.t_end=0.002 --out "$tmp/h5"
r=$("$py" -c 'import sys, h5py
f = h5py.File(sys.argv[1], "r")
print(f["/points"].shape[1:], f["/model/segments"][()].tolist())' "$tmp/h5/trajectory.h5")
[ "$r" = "(8, 3) [[4, 5], [5, 6], [6, 7]]" ] || bad "the drawing of a lumped body: $r"
run 0 "$mbspar" check "$tmp/rim_node.cfg"
grep -q "node rim .*at \[0.2, -0.4, 0.3\]" "$tmp/out" || bad "check's node line: $(cat "$tmp/out")"

# energy: the plate spinning on a spherical joint, the arm on the rim node, gravity; 0.3 s of rk4
# at 1e-4: the total stays to 1e-9 while about 1.3 J go into the springs (the rotary inertia's
# gyroscopic terms h agree with its mass terms M)
sed -e 's/type = "revolute"; axis = \[0, 0, 1\]; q0 = \[0.4\]; qd0 = \[1.5\];/type = "spherical"; qd0 = [3, -2, 5];/' \
  "$tmp/rim_node.cfg" >"$tmp/spin.cfg"
echo 'integrator = { method = "rk4"; dt = 1e-4; t_end = 0.3; }; output = { every = 100; };' \
  >>"$tmp/spin.cfg"
grep -q spherical "$tmp/spin.cfg" || bad "no spherical joint in spin.cfg"
run 0 "$mbspar" run "$tmp/spin.cfg" --quiet --out "$tmp/r_spin"
r=$("$py" - "$tmp/r_spin/energy.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = [float(r["total"]) for r in rows]
el = max(float(r["elastic"]) for r in rows)
d = max(abs(x - tot[0]) for x in tot) / abs(tot[0])
assert el > 0.1 and d < 1e-9, (el, d)
print("ok %.2g (elastic up to %.2g J)" % (d, el))
PY
) || bad "spinning plate energy: $r"
case $r in ok*) echo "spinning plate: energy drift $r" ;; *) bad "spinning plate: $r" ;; esac

# ---- bad input: a copy of plate.h5 (or rim.h5) changed by one thing; the file key on line 3
"$py" - "$tmp" <<'PY' || bad "making the bad files"
import shutil, sys
import h5py, numpy as np
t = sys.argv[1]
def make(name, fn, src="plate"):
    shutil.copy("%s/%s.h5" % (t, src), "%s/%s.h5" % (t, name))
    with h5py.File("%s/%s.h5" % (t, name), "r+") as f:
        fn(f)
def put(f, k, v):
    del f[k]
    f[k] = v
def setat(k, i, v):
    def fn(f):
        a = f[k][()]
        a[i] = v
        put(f, k, a)
    return fn
make("posshape", lambda f: put(f, "points/pos", f["points/pos"][:, :2]))
make("massshape", lambda f: put(f, "points/mass", f["points/mass"][1:]))
make("inshape", lambda f: put(f, "points/inertia", f["points/inertia"][:, :3]))
make("phishape", lambda f: put(f, "Phi", f["Phi"][1:]))
make("nomass", lambda f: f.__delitem__("points/mass"))
make("negmass", setat("points/mass", 2, -0.1))
make("nanpos", setat("points/pos", (1, 2), np.nan))
make("infj", setat("points/inertia", (0, 3), np.inf))
make("jneg", setat("points/inertia", (0, 0), -1.0))
make("nodeout", lambda f: put(f, "node_fe", np.array([9], dtype=np.int32)), "rim")
make("massdiff", setat("M", (0, 0), 2.02))
make("version", lambda f: f.attrs.__setitem__("mbspar_modal_version", np.int64(3)))
PY
refuse() {
  cat >"$tmp/bad.cfg" <<EOF
model = { gravity = [0, 0, -9.81];
  bodies = ( { name = "plate"; parent = "ground"; joint = { type = "fixed"; };
      flexible = { file = "$2"; $4 }; } ); };
integrator = { method = "rk4"; dt = 1e-4; t_end = 1e-3; };
EOF
  run 2 "$mbspar" run "$tmp/bad.cfg" --quiet --out "$tmp/o_$1"
  [ -e "$tmp/o_$1" ] && bad "$1: --out directory created"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "$1: stderr is not one line: $(cat "$tmp/err")"
  grep -q "$3" "$tmp/err" || bad "$1: message: $(cat "$tmp/err")"
}
f3() { echo "bad.cfg:3: body \"plate\": flexible.file: .*$1: $2"; }
refuse posshape posshape.h5 "$(f3 posshape.h5 "/points/pos: shape (4, 2), expected (\*, 3)")"
refuse massshape massshape.h5 "$(f3 massshape.h5 "/points/mass: shape (3), expected (4)")"
refuse inshape inshape.h5 "$(f3 inshape.h5 "/points/inertia: shape (4, 3), expected (4, 6)")"
refuse phishape phishape.h5 "$(f3 phishape.h5 "/Phi: shape (23, 15), expected (24, 15)")"
refuse nomass nomass.h5 "$(f3 nomass.h5 "/points/mass: missing dataset")"
refuse negmass negmass.h5 "$(f3 negmass.h5 "/points/mass: point 2 has a negative mass")"
refuse nanpos nanpos.h5 "$(f3 nanpos.h5 "/points/pos: entry 5 is not finite")"
refuse infj infj.h5 "$(f3 infj.h5 "/points/inertia: entry 3 is not finite")"
refuse jneg jneg.h5 "$(f3 jneg.h5 "/points/inertia: point 0: not positive semidefinite")"
refuse nodeout nodeout.h5 "$(f3 nodeout.h5 "/node_fe: entry 0 is 9, not an FE node index")"
refuse massdiff massdiff.h5 "$(f3 massdiff.h5 "/M: differs from the mass of the points")"
refuse version version.h5 "$(f3 version.h5 "/mbspar_modal_version = 3: this mbspar reads versions 1")"
refuse stiff plate.h5 'bad.cfg:3: .*flexible.stiffening: a lumped modal file .* has no geometric stiffness' \
  "stiffening = true;"
[ "$fail" -eq 0 ] || exit 1
echo "flex_lumped: pass"
