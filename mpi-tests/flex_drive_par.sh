#!/bin/sh
# Driven joints and `inverse` of flexible models over the ranks (issue 34; docs/flexible.md 9, 11,
# 12): solver.method = schur runs them on the distributed elimination (flex_part) with the driven
# joints' accelerations prescribed in the recursive passes (src/flex_hybrid.c):
#  - run: configs/flex_chain.cfg (16 flexible links) with three drives (sine on the root link l0,
#    cycloidal on l8, sine on l10: l8 is the second part's root at 2 ranks, l10 the third's at 3),
#    rk4, 100 steps of 1e-5 s; at 1, 2 and 3 ranks: run.json says flex_part with the parts and
#    the drives; trajectory.csv (q, qd, eta, etad, each group relative to its largest entry) and
#    energy.csv (every column: energies, work, E - W, the driving forces) equal the 1-rank run's
#    to 1e-10, and the 1-rank run equals the serial oracle's (aba, the dense M) to 1e-9; the
#    2-rank run stopped halfway and restarted from its checkpoint writes the same bytes;
#  - inverse: configs/flex_pendulum.cfg (the bob on the beam's tip node: at 2 ranks the cut joint
#    is on a node) along the cycloid (T = 0.02 s, 4 intervals, rk4 dt 1e-4) at 1, 2, 3 ranks:
#    method flex_part, tau and eta equal the 1-rank ones to 1e-10 and the oracle's to 1e-9; a
#    flexible link (2 modes) with a spherical child on its tip node (held at q_start) at 2 ranks
#    against the oracle to 1e-9;
#  - above the dense limit (a 256-link chain, 1280 coordinates) one rank runs the serial
#    recursive algorithm with the drives prescribed (flex_aba): a driven run (10 rk4 steps) and an
#    inverse (every joint on the cycloid) equal the 2-rank flex_part ones to 1e-10.
# usage: flex_drive_par.sh MBSPAR PYTHON3 CONFIGS MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1 py=$2 configs=$3 mpiexec=$4 npflag=$5
shift 5
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_drive_par
cfg="$tmp/chain.cfg"
cp "$configs/flex_chain.cfg" "$cfg"
cat >>"$cfg" <<'CFG'
drive = ( { body = "l0"; profile = "sine"; amplitude = 0.3; frequency = 2.0; },
          { body = "l8"; profile = "cycloidal"; q_end = 0.5; T = 0.01; },
          { body = "l10"; profile = "sine"; amplitude = -0.2; frequency = 3.0; } );
CFG
steps='integrator={method="rk4";dt=1e-5;t_end=0.001;}'
run 0 "$mbspar" run "$cfg" --quiet --set solver.method=aba --set "$steps" --set output.every=10 \
  --out "$tmp/ra"
for n in 1 2 3; do
  run 0 "$mpiexec" "$npflag" "$n" "$@" "$mbspar" run "$cfg" --quiet --set solver.method=schur \
    --set "$steps" --set output.every=10 --out "$tmp/r$n"
done
# a 2-rank driven run stopped halfway and restarted writes the 2-rank run's bytes
half='integrator={method="rk4";dt=1e-5;t_end=0.0005;}'
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" --quiet --set solver.method=schur \
  --set "$half" --set output.every=10 --out "$tmp/h2"
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" --quiet --set solver.method=schur \
  --set "$steps" --set output.every=10 --restart "$tmp/h2/checkpoint.bin"
{ cmp -s "$tmp/r2/trajectory.csv" "$tmp/h2/trajectory.csv" &&
  cmp -s "$tmp/r2/energy.csv" "$tmp/h2/energy.csv"; } || bad "driven 2-rank restart: outputs differ"
pend=$configs/flex_pendulum.cfg
pinv() { # RANKS METHOD JSON [PREFLAGS...]
  n=$1 meth=$2 js=$3
  shift 3
  run 0 "$mpiexec" "$npflag" "$n" "$@" "$mbspar" inverse "$pend" --quiet --set integrator.method=rk4 \
    --set integrator.dt=1e-4 --set inverse.T=0.02 --set inverse.steps=4 \
    --set 'inverse.q_end=[0.9, 0.4]' --set solver.method="$meth" --json "$js"
}
pinv 1 aba "$tmp/ia.json" "$@"
for n in 1 2 3; do pinv "$n" schur "$tmp/i$n.json" "$@"; done
cat >"$tmp/sph.cfg" <<'CFG'
model = { gravity = [0.3, -0.2, -9.81]; bodies = (
  { name = "link"; parent = "ground";
    joint = { type = "revolute"; axis = [0.0, 0.6, 0.8]; q0 = 0.7; stiffness = 2.0; damping = 0.1; };
    flexible = { beam = { length = 1.0; E = 2.1e11; rho = 7850.0; area = 1.0e-4; Iy = 8.3333e-10;
                          Iz = 4.0e-10; elements = 6; };
                 modes = 2; nodes = ( { name = "tip"; position = [1.0, 0.0, 0.0]; } ); }; },
  { name = "b2"; parent = "link";
    joint = { type = "spherical"; node = "tip";
              q0 = [0.92338051687663869, 0.10259783520851541, -0.30779350562554619, 0.20519567041703082]; };
    mass = 0.7; com = [0.2, 0.05, -0.1]; inertia = [0.03, 0.02, 0.025, 0.0, 0.0, 0.0]; } ); };
inverse = { T = 0.02; steps = 4; q_end = 1.5; };
integrator = { method = "rk4"; dt = 1e-4; };
CFG
run 0 "$mbspar" inverse "$tmp/sph.cfg" --quiet --set solver.method=aba --json "$tmp/sa.json"
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" inverse "$tmp/sph.cfg" --quiet --set solver.method=schur \
  --json "$tmp/s2.json"
# above the dense limit (1000 coordinates) one rank takes the serial recursive algorithm with the
# drives prescribed (flex_aba): 256 links, two drives / every joint on the cycloid, against 2 ranks
"$py" - "$tmp" <<'PY'
import sys
links = []
for i in range(256):
    par = "ground" if i == 0 else "l%d" % (i - 1)
    org = "" if i == 0 else " origin = [0.25, 0, 0];"
    links.append('{ name = "l%d"; parent = "%s"; joint = { type = "revolute"; axis = [0, 1, 0];%s }; '
                 'flexible = { beam = { length = 0.25; E = 7.0e10; rho = 2700.0; area = 2.0e-5; '
                 'Iy = 3.0e-11; Iz = 3.0e-11; elements = 4; }; modes = 4; }; }' % (i, par, org))
model = "model = { gravity = [0, 0, -9.81]; bodies = (\n" + ",\n".join(links) + "\n); };\n"
open(sys.argv[1] + "/d256.cfg", "w").write(
    model + 'drive = ( { body = "l0"; profile = "sine"; amplitude = 0.3; frequency = 2.0; },\n'
    '  { body = "l128"; profile = "cycloidal"; q_end = 0.5; T = 0.01; } );\n'
    'integrator = { method = "rk4"; dt = 1e-5; t_end = 0.0001; };\noutput = { every = 5; };\n')
open(sys.argv[1] + "/i256.cfg", "w").write(
    model + "inverse = { T = 0.0004; steps = 2; q_end = [%s]; };\n" % ", ".join(["0.001"] * 256) +
    'integrator = { method = "rk4"; dt = 1e-5; };\n')
PY
run 0 "$mbspar" run "$tmp/d256.cfg" --quiet --out "$tmp/b1"
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$tmp/d256.cfg" --quiet --set solver.method=schur \
  --out "$tmp/b2"
run 0 "$mbspar" inverse "$tmp/i256.cfg" --quiet --json "$tmp/j1.json"
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" inverse "$tmp/i256.cfg" --quiet \
  --set solver.method=schur --json "$tmp/j2.json"
r=$("$py" - "$tmp" <<'PY'
import csv, json, sys
t = sys.argv[1]
def load(d, f):
    r = list(csv.reader(open("%s/%s/%s" % (t, d, f))))
    return r[0], [[float(x) for x in row] for row in r[1:]]
def runs(a, b):  # the largest group difference, each group relative to its largest entry
    worst = 0
    for f, group in (("trajectory.csv", lambda h: h.split("_")[0]), ("energy.csv", lambda h: h)):
        h, x = load(a, f)
        h2, y = load(b, f)
        assert h == h2 and len(x) == len(y) > 2, (f, len(x), len(y))
        sc, df = {}, {}
        for j in range(1, len(h)):
            g = group(h[j])
            if g.split("_")[0] in ("pos", "quat", "shape"):
                continue  # derived from q and eta
            if g.startswith("drive_"):
                g = "drive"  # the driving forces relative to the largest of them
            sc[g] = max(sc.get(g, 0), max(abs(r[j]) for r in x))
            df[g] = max(df.get(g, 0), max(abs(p[j] - q[j]) for p, q in zip(x, y)))
        worst = max([worst] + [df[g] / sc[g] for g in sc if sc[g] > 0])
    return worst
out = []
for n in (1, 2, 3):
    s = json.load(open("%s/r%d/run.json" % (t, n)))["solver"]
    assert s["method"] == "flex_part" and s["parts"] == n and len(s["drives"]) == 3, s
    assert s["cut_joints"] == n - 1, s
d_or = runs("ra", "r1")
d_rk = max(runs("r1", "r%d" % n) for n in (2, 3))
assert d_or < 1e-9 and d_rk < 1e-10, (d_or, d_rk)
out.append("run: 1 rank vs oracle %.1e, 2-3 ranks vs 1 %.1e" % (d_or, d_rk))
inv = lambda f: json.load(open("%s/%s.json" % (t, f)))["inverse"]
def idiff(a, b):
    w = 0
    for key in ("tau", "eta"):
        sc = max(abs(v) for r in a[key] for v in r)
        w = max(w, max(abs(p - q) for r, s in zip(a[key], b[key]) for p, q in zip(r, s)) / sc)
    return w
ia, i1 = inv("ia"), inv("i1")
assert ia["method"] == "flex_oracle" and i1["method"] == "flex_part", (ia["method"], i1["method"])
d_or, d_rk = idiff(ia, i1), max(idiff(i1, inv("i%d" % n)) for n in (2, 3))
assert d_or < 1e-9 and d_rk < 1e-10, (d_or, d_rk)
sa, s2 = inv("sa"), inv("s2")
a = max(abs(v) for r in sa["tau"] for v in r)
d_s = max(abs(p - q) for r, s in zip(sa["tau"], s2["tau"]) for p, q in zip(r, s)) / a
assert s2["method"] == "flex_part" and d_s < 1e-9, (s2["method"], d_s)
out.append("inverse: 1 rank vs oracle %.1e, 2-3 ranks vs 1 %.1e; spherical child 2 ranks %.1e"
           % (d_or, d_rk, d_s))
s1 = json.load(open(t + "/b1/run.json"))["solver"]
assert s1["method"] == "flex_aba" and len(s1["drives"]) == 2, s1
d_b = runs("b1", "b2")
j1, j2 = inv("j1"), inv("j2")
assert j1["method"] == "flex_aba" and j2["method"] == "flex_part", (j1["method"], j2["method"])
d_j = idiff(j1, j2)
assert d_b < 1e-10 and d_j < 1e-10, (d_b, d_j)
out.append("256 links: flex_aba against 2 ranks: run %.1e, inverse %.1e" % (d_b, d_j))
print("; ".join(out))
PY
) || bad "flexible drives over the ranks: $r"
echo "flex_drive_par: $r"
[ "$fail" -eq 0 ] && echo "flex_drive_par: all checks passed"
