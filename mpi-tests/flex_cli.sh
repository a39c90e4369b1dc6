#!/bin/sh
# Flexible bodies in `accel` and `run` (issue 34; docs/flexible.md 6): the serial oracle at one
# rank.
#  - m = 0: a flexible link without modes (and a rigid body hanging from it) is the rigid body its
#    beam is: accel's qdd and a 0.2 s rk4 run's final state and body poses (pos, quat) equal aba's
#    on the rigid model to 1e-12 (relative to 1 + |value|);
#  - configs/flex_pendulum.cfg (a beam with a bob on its tip node, conservative) over 0.5 s with
#    dp5 (tol 1e-8): the largest |E(t) - E(0)| <= 1e-8 |E(0)|, the beam bends (elastic energy in
#    energy.csv > 1e-6 J), eta and etad in trajectory.csv;
#  - restart: rk4 to 0.01 s, --restart to 0.02 s gives the same bytes as one run to 0.02 s; a
#    checkpoint of another model of the same size is refused (exit 2, nothing written);
#  - modes (configs/cantilever.cfg): the four lowest bending frequencies within 0.5 % of
#    Euler-Bernoulli (beta_1 L = 1.8751, beta_2 L = 4.6941, both planes), the error shrinking from
#    4 elements / 4 modes to 16 elements / 16 modes;
#  - static (configs/cantilever.cfg): the tip node's deflection within 1e-8 of w L^4 / (8 E I)
#    (the issue asks 1 %; drained and Newton-polished it is exact); modes --at static of the
#    flexible pendulum: at its equilibrium (residual < 1e-9); `static`/`accel --out DIR` write
#    DIR/static.json (equal to --json's) and DIR/accel.json, and refuse to overwrite (exit 3);
#  - the constraint-force methods direct, jcg, gs, sor, jacobi, chebyshev, petsc
#    (docs/flexible.md 13): accel's printed qdd and etadd equal the oracle's (jcg, chebyshev and
#    petsc also at 2 ranks);
#  - crba (the dense oracle) at 1 rank, aba and crba at 2 ranks (rank 0 alone): the oracle's
#    printed qdd and etadd;
#  - refusals: another method (natural) at 1 and 2 ranks, jcg in static: one line, exit 8 (every verb
#    runs flexible models now); -ts_* options (PETSc TS is not used): exit 2, nothing written.
# usage: flex_cli.sh MBSPAR PYTHON3 CONFIGS MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1 py=$2 configs=$3 mpiexec=$4 npflag=$5
shift 5
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex
beam='beam = { length = 1.0; E = 2.1e11; rho = 7850.0; area = 1.0e-4; Iy = 8.3333e-10; Iz = 4.0e-10; elements = 10; };'
eq=$("$py" -c 'r,A,L,Iy,Iz=7850.0,1e-4,1.0,8.3333e-10,4.0e-10
m=r*A*L; print("mass = %.17g; com = [%.17g, 0.0, 0.0]; inertia = [%.17g, %.17g, %.17g, 0.0, 0.0, 0.0];" % (m, L/2, r*L*(Iy+Iz), m*L*L/12, m*L*L/12))')
rest='{ name = "b2"; parent = "link"; joint = { type = "universal"; axis = [0.0, 1.0, 0.0]; axis2 = [1.0, 0.0, 0.0]; origin = [1.0, 0.0, 0.0]; q0 = [0.4, -0.3]; qd0 = [1.1, -0.7]; }; mass = 0.7; com = [0.2, 0.05, -0.1]; inertia = [0.03, 0.02, 0.025, 0.0, 0.0, 0.0]; }'
joint='joint = { type = "revolute"; axis = [0.0, 0.6, 0.8]; q0 = 0.7; qd0 = -1.3; stiffness = 2.0; damping = 0.1; };'
tail='integrator = { method = "rk4"; dt = 1e-3; t_end = 0.2; }; output = { every = 200; };'
printf 'model = { gravity = [0.3, -0.2, -9.81]; bodies = ( { name = "link"; %s flexible = { %s modes = 0; }; },\n %s ); };\n%s\n' \
  "$joint" "$beam" "$rest" "$tail" >"$tmp/flex0.cfg"
printf 'model = { gravity = [0.3, -0.2, -9.81]; bodies = ( { name = "link"; %s %s },\n %s ); };\n%s\nsolver = { method = "aba"; };\n' \
  "$joint" "$eq" "$rest" "$tail" >"$tmp/rigid.cfg"
# the JSON arrays of two reports agree to TOL relative to 1 + |value|
same() { # same A.json B.json TOL KEY...
  "$py" - "$@" <<'PY'
import json, sys
a, b, tol = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), float(sys.argv[3])
worst = 0
for k in sys.argv[4:]:
    for x, y in zip(a[k], b[k]):
        worst = max(worst, abs(x - y) / (1 + abs(y)))
print("%.3e" % worst)
sys.exit(0 if worst <= tol else 1)
PY
}
run 0 "$mbspar" accel "$tmp/flex0.cfg" --quiet --json "$tmp/fa.json"
run 0 "$mbspar" accel "$tmp/rigid.cfg" --quiet --json "$tmp/ra.json"
d=$(same "$tmp/fa.json" "$tmp/ra.json" 1e-12 qdd) || bad "m = 0 accel: qdd differs from aba by $d"
echo "m = 0 accel against aba: $d"
run 0 "$mbspar" run "$tmp/flex0.cfg" --quiet --out "$tmp/f0"
run 0 "$mbspar" run "$tmp/rigid.cfg" --quiet --out "$tmp/r0"
d=$("$py" - "$tmp" <<'PY'
import csv, sys
t = sys.argv[1]
f = list(csv.DictReader(open(t + "/f0/trajectory.csv")))[-1]
r = list(csv.DictReader(open(t + "/r0/trajectory.csv")))[-1]
keys = [k for k in f if k in r]
w = max(abs(float(f[k]) - float(r[k])) / (1 + abs(float(r[k]))) for k in keys)
print("%.3e over %d columns (%s)" % (w, len(keys), " ".join(keys)))
# t, q, qd and the two bodies' poses (pos, quat); the flexible run adds the beam's shape points
sys.exit(0 if w <= 1e-12 and len(keys) == 21 and all(k in r or k.startswith("shape_") for k in f)
         else 1)
PY
) || bad "m = 0 run: final state differs from aba's: $d"
echo "m = 0 run (rk4 0.2 s) against aba: $d"

# energy of the conservative flexible pendulum
run 0 "$mbspar" run "$configs/flex_pendulum.cfg" --quiet --out "$tmp/fp" --set integrator.t_end=0.5 \
  --set integrator.tol=1e-8
r=$("$py" - "$tmp/fp" <<'PY'
import csv, json, math, sys
d = sys.argv[1]
j = json.load(open(d + "/run.json"))
rows = list(csv.DictReader(open(d + "/energy.csv")))
e0 = float(rows[0]["total"])
drift = max(abs(float(x["total"]) - e0) for x in rows)
el = max(float(x["elastic"]) for x in rows)
h = open(d + "/trajectory.csv").readline()
# the last row's tip node is run.json's nodes[0].position
last = list(csv.DictReader(open(d + "/trajectory.csv")))[-1]
tip = [float(last["node_beam_tip_" + c]) for c in "xyz"]
tip_ok = tip == j["nodes"][0]["position"] and abs(math.hypot(tip[0], tip[2]) - 1) < 1e-2
ok = drift <= 1e-8 * abs(e0) and j["energy_drift_max"] <= 1e-8 * abs(e0) and el > 1e-6 \
    and "eta_beam_0" in h and "etad_beam_9" in h and abs(j["t"] - 0.5) < 1e-12 \
    and tip_ok
print("drift %.3e relative (run.json %.3e), largest elastic %.3e J, %d steps" %
      (drift / abs(e0), j["energy_drift_max"] / abs(e0), el, j["steps"]))
sys.exit(0 if ok else 1)
PY
) || bad "flexible pendulum energy: $r"
echo "flexible pendulum, dp5 0.5 s: $r"

# restart bitwise (rk4)
cfg="$configs/flex_pendulum.cfg"
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/full" --set integrator.method=rk4 --set integrator.dt=5e-5 --set integrator.t_end=0.02
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/half" --set integrator.method=rk4 --set integrator.dt=5e-5 --set integrator.t_end=0.01
run 0 "$mbspar" run "$cfg" --quiet --restart "$tmp/half/checkpoint.bin" --set integrator.method=rk4 --set integrator.dt=5e-5 --set integrator.t_end=0.02
[ "$(tail -n 1 "$tmp/full/trajectory.csv")" = "$(tail -n 1 "$tmp/half/trajectory.csv")" ] ||
  bad "restart: the last rows differ"
cmp -s "$tmp/full/trajectory.csv" "$tmp/half/trajectory.csv" || bad "restart: trajectory.csv differs"
cmp -s "$tmp/full/energy.csv" "$tmp/half/energy.csv" || bad "restart: energy.csv differs"
# a checkpoint of another model of the same size (a stiffer beam) is refused: one line, exit 2
run 2 "$mbspar" run "$cfg" --quiet --out "$tmp/other" --restart "$tmp/half/checkpoint.bin" \
  --set integrator.method=rk4 --set integrator.dt=5e-5 --set integrator.t_end=0.03 \
  --set 'model.bodies.[0].flexible.beam.E=2.2e11'
{ [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'not a checkpoint of this flexible model' "$tmp/err" &&
  [ ! -e "$tmp/other" ]; } || bad "restart from another model: $(cat "$tmp/err")"

# modes of the cantilever against Euler-Bernoulli, and their convergence
cant="$configs/cantilever.cfg"
sed 's/elements = 10/elements = 4/; s/modes = 8/modes = 4/' "$cant" >"$tmp/c4.cfg"
sed 's/elements = 10/elements = 16/; s/modes = 8/modes = 16/' "$cant" >"$tmp/c16.cfg"
for c in "$cant" "$tmp/c4.cfg" "$tmp/c16.cfg"; do
  run 0 "$mbspar" modes "$c" --count 4 --quiet --json "$tmp/m_$(basename "$c").json"
done
r=$("$py" - "$tmp" "$(basename "$cant")" <<'PY'
import json, math, sys
t, c = sys.argv[1], sys.argv[2]
w = [b * b * math.sqrt(2.1e11 * 8.3333e-10 / (7850 * 1e-4)) for b in (1.87510407, 4.69409113)]
def err(f):
    om = json.load(open(t + "/m_" + f + ".json"))["results"]["omega"]
    return max(abs(om[i] - w[i // 2]) / w[i // 2] for i in range(4))
e10, e4, e16 = err(c), err("c4.cfg"), err("c16.cfg")
print("worst of the 4 lowest: %.2e (10 el., 8 modes), %.2e (4, 4), %.2e (16, 16)" % (e10, e4, e16))
sys.exit(0 if e10 <= 5e-3 and e16 < e4 and e16 <= 5e-3 else 1)
PY
) || bad "cantilever modes: $r"
echo "cantilever modes: $r"
# static tip deflection under gravity
run 0 "$mbspar" static "$cant" --quiet --json "$tmp/s.json" --out "$tmp/sdir"
# --out DIR: the report goes there (the directory created), and is not overwritten without --force
cmp -s "$tmp/s.json" "$tmp/sdir/static.json" || bad "static --out: no DIR/static.json equal to --json's"
run 3 "$mbspar" static "$cant" --quiet --out "$tmp/sdir"
grep -q 'static.json exists; not overwriting it' "$tmp/err" || bad "static --out again: $(cat "$tmp/err")"
run 0 "$mbspar" accel "$cant" --quiet --out "$tmp/adir"
[ -s "$tmp/adir/accel.json" ] || bad "accel --out: no DIR/accel.json"
r=$("$py" - "$tmp/s.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["results"]
z = -j["nodes"][0]["position"][2]
ref = 7850 * 1e-4 * 9.81 / (8 * 2.1e11 * 8.3333e-10)
print("tip %.10g m, w L^4/(8 E I) = %.10g m, relative error %.2e, %d evaluations" %
      (z, ref, abs(z - ref) / ref, j["iterations"]))
sys.exit(0 if j["converged"] and abs(z - ref) <= 1e-8 * ref else 1)
PY
) || bad "cantilever static: $r"
echo "cantilever static: $r"
# modes at the flexible pendulum's equilibrium (drained and polished): at rest there, the hanging
# bob and beam
run 0 "$mbspar" modes "$cfg" --at static --count 3 --quiet --json "$tmp/ms.json"
r=$("$py" - "$tmp/ms.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["results"]
l = j["linearisation"]
print("residual %.2e, at_equilibrium %s, omega %s" % (l["residual_max"], l["at_equilibrium"],
      " ".join("%.6g" % w for w in j["omega"])))
sys.exit(0 if l["at_equilibrium"] and l["residual_max"] < 1e-9 and j["omega"][0] > 0 else 1)
PY
) || bad "pendulum modes at static: $r"
echo "flexible pendulum modes --at static: $r"

# check reads a flexible model and runs nothing (no run directory appears)
cfgabs="$(cd "$(dirname "$cfg")" && pwd)/$(basename "$cfg")"
mbsabs="$(cd "$(dirname "$mbspar")" && pwd)/$(basename "$mbspar")"
mkdir "$tmp/ck"
(cd "$tmp/ck" && "$mbsabs" check "$cfgabs" --quiet --json "$tmp/check.json") || bad "check failed"
[ ! -e "$tmp/ck/out" ] || bad "check wrote a run directory: $(ls "$tmp/ck/out")"
grep -q '"modal_coordinates": *10' "$tmp/check.json" || bad "check.json lacks the flexible body"

# SIGTERM during a run: exit 10 with a checkpoint after the step, every row flushed, and the
# restart from it ends with the uninterrupted run's bytes (the rigid runs' rule, parallel/sim.c)
sig="--set integrator.method=rk4 --set integrator.dt=1e-4 --set integrator.t_end=2 --set output.every=7"
# shellcheck disable=SC2086 # $sig: the options, split on blanks
run 0 "$mbspar" run "$cfg" --quiet --out "$tmp/sfull" $sig
# shellcheck disable=SC2086
"$mbspar" run "$cfg" --quiet --out "$tmp/sint" $sig 2>"$tmp/serr" &
spid=$!
for _ in $(seq 1 400); do # the run has written rows: its handlers are in place
  [ "$(wc -l <"$tmp/sint/trajectory.csv" 2>/dev/null || echo 0)" -lt 30 ] || break
  sleep 0.05
done
kill -TERM "$spid"
wait "$spid"
src=$?
{ [ "$src" -eq 10 ] && grep -q 'SIGTERM received: stopped at t = ' "$tmp/serr"; } ||
  bad "SIGTERM: exit $src, $(cat "$tmp/serr")"
grep -q '"complete": *false' "$tmp/sint/run.json" || bad "SIGTERM: run.json not marked incomplete"
# the printed command continues the run as printed (it repeats the --set options)
cont=$(sed -n 's/.*(continue with: \(.*\))$/\1/p' "$tmp/serr")
[ -n "$cont" ] || bad "SIGTERM: no continue command in: $(cat "$tmp/serr")"
eval "$cont" >/dev/null 2>"$tmp/err" || bad "SIGTERM: the continue command failed: $(cat "$tmp/err")"
{ cmp -s "$tmp/sfull/trajectory.csv" "$tmp/sint/trajectory.csv" &&
  cmp -s "$tmp/sfull/energy.csv" "$tmp/sint/energy.csv"; } ||
  bad "SIGTERM: the restarted run's outputs differ from the uninterrupted run's"

# refusals: exit 8, one line, on every rank
run 8 "$mbspar" accel "$cfg" --quiet --set solver.method=natural
{ [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'flex_pendulum.cfg:[0-9]*: body "beam" is flexible: solver.method = natural' "$tmp/err"; } ||
  bad "natural refusal: $(cat "$tmp/err")"
run 8 "$mbspar" static "$cfg" --quiet --set solver.method=jcg
{ [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'solver.method = jcg runs flexible bodies in accel and undriven run only' "$tmp/err"; } ||
  bad "jcg static refusal: $(cat "$tmp/err")"
# the constraint-force methods at one rank (docs/flexible.md 13): accel's printed qdd and etadd
# (10 and 6 digits) as the oracle's
run 0 "$mbspar" accel "$cfg" --set solver.method=aba
sed -n 's/.*qdd =//p; s/.*etadd =//p' "$tmp/out" >"$tmp/acc_aba"
# petsc only when built with it (--version says "PETSc -" otherwise)
withpetsc=petsc
"$mbspar" --version | grep -q 'PETSc -,' && withpetsc=
for meth in direct jcg gs sor jacobi chebyshev $withpetsc; do
  run 0 "$mbspar" accel "$cfg" --set solver.method="$meth"
  grep -q 'flex_cfs, constraint forces' "$tmp/out" || bad "$meth: not on flex_cfs: $(cat "$tmp/out")"
  sed -n 's/.*qdd =//p; s/.*etadd =//p' "$tmp/out" >"$tmp/acc_$meth"
  { [ -s "$tmp/acc_aba" ] && cmp -s "$tmp/acc_aba" "$tmp/acc_$meth"; } || bad "$meth: accel differs from the oracle's: $(cat "$tmp/acc_$meth")"
done
# crba (the dense oracle) at 1 rank, aba and crba at 2 ranks (rank 0 runs it alone)
run 0 "$mbspar" accel "$cfg" --set solver.method=crba
sed -n 's/.*qdd =//p; s/.*etadd =//p' "$tmp/out" >"$tmp/acc_crba"
cmp -s "$tmp/acc_aba" "$tmp/acc_crba" || bad "crba: accel differs from the oracle's: $(cat "$tmp/out")"
for meth in aba crba; do
  run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" accel "$cfg" --set solver.method="$meth"
  sed -n 's/.*qdd =//p; s/.*etadd =//p' "$tmp/out" >"$tmp/acc2s_$meth"
  cmp -s "$tmp/acc_aba" "$tmp/acc2s_$meth" || bad "$meth at 2 ranks: accel differs: $(cat "$tmp/out")"
done
# ... and jcg, chebyshev and petsc over 2 ranks (the body ranges of flex_cfs_par.c, rank 0 serving the verb)
for meth in jcg chebyshev $withpetsc; do
  run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" accel "$cfg" --set solver.method="$meth"
  sed -n 's/.*qdd =//p; s/.*etadd =//p' "$tmp/out" >"$tmp/acc2_$meth"
  cmp -s "$tmp/acc_aba" "$tmp/acc2_$meth" || bad "$meth at 2 ranks: accel differs from the oracle's: $(cat "$tmp/out")"
done
# a degenerate beam (valid numbers, matrices that cannot be factored): FILE:LINE, exit 2
sed 's/length = 1.0;/length = 1e-200;/; s/position = \[1.0, 0.0, 0.0\]/position = [1e-200, 0.0, 0.0]/' "$cant" >"$tmp/degen.cfg"
run 2 "$mbspar" check "$tmp/degen.cfg" --quiet
{ [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'degen.cfg:[0-9]*: body "beam": flexible beam: .*a degenerate beam' "$tmp/err"; } ||
  bad "degenerate beam: $(cat "$tmp/err")"
# PETSc TS options would not reach the flexible run's own steppers: refused, nothing written
run 2 "$mbspar" run "$cfg" --quiet --out "$tmp/tsopt" -ts_monitor
grep -q -- '-ts_monitor: a model with flexible bodies steps' "$tmp/err" || bad "-ts_monitor not refused: $(cat "$tmp/err")"
[ ! -e "$tmp/tsopt" ] || bad "the refused run wrote $tmp/tsopt"
run 8 "$mpiexec" "$npflag" 2 "$@" "$mbspar" accel "$cfg" --quiet --set solver.method=natural
grep -q 'at several ranks with solver.method = aba, crba, schur, direct, jcg, gs, sor, jacobi, chebyshev, petsc or auto only (got natural at 2 ranks' "$tmp/err" ||
  bad "2-rank refusal: $(cat "$tmp/err")"
[ "$fail" -eq 0 ] && echo "flex_cli: all checks passed"
exit "$fail"
