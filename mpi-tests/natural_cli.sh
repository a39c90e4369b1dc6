#!/bin/sh
# model.formulation = "natural" in the verbs (issue 33, docs/natural.md 8): accel equals aba (the
# joint formulation) in q̈, λ and the joint wrenches on the shipped tree configs (revolute chain,
# a tree of every joint type, the URDF arm with joint springs) and on the loop configs (q̈, λ and
# the closure multipliers where the closure equations are independent: rssr, sixbar's independent
# rows, slider_crank, the hexapod of seed 004 with 6 loops, moving; q̈ and the equations of motion
# on the redundant bricard); short runs equal
# aba's (tree, rssr); the formulation's refusals are one FILE:LINE line with exit 2.
# usage: natural_cli.sh MBSPAR CONFIGS_DIR [LAUNCHER ...]   (LAUNCHER: mpiexec -n 3)
mbspar=$1
cfg=$2
shift 2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_natural_cli

for c in chain tree urdf_arm rssr slider_crank bricard seed000_fig4; do
  run 0 "$mbspar" accel "$cfg/$c.cfg" --set solver.method=aba --json "$tmp/a_$c.json" --quiet
  run 0 "$@" "$mbspar" accel "$cfg/$c.cfg" --set model.formulation=natural --json "$tmp/n_$c.json" \
    --quiet
done
# seed 004's hexapod (13 bodies, 6 spherical loops), the platform moving (the assembly projects
# the legs' rates onto the closure)
hexv='model.bodies[0].joint.qd0=[0.1,-0.05,0.2,0.3,-0.2,0.5]'
run 0 "$mbspar" accel "$cfg/hexapod.cfg" --set solver.method=aba --set "$hexv" \
  --json "$tmp/a_hexapod.json" --quiet
run 0 "$@" "$mbspar" accel "$cfg/hexapod.cfg" --set model.formulation=natural --set "$hexv" \
  --json "$tmp/n_hexapod.json" --quiet
# a shipped config's solver.method gives way to the formulation, with one note
run 0 "$mbspar" accel "$cfg/stanford_arm.cfg" --set model.formulation=natural --quiet
grep -q "stanford_arm.cfg:[0-9]*: solver.method = [a-z]* is for the joint" "$tmp/err" ||
  bad "no note on solver.method: $(cat "$tmp/err")"
# runs integrate (p, ṗ) at 1 rank (docs/natural.md 12; natural_run.sh): a small tree against aba
run 0 "$mbspar" run "$cfg/tree.cfg" --set solver.method=aba --set integrator.t_end=0.02 \
  --set model.tree.depth=3 --out "$tmp/ra" --quiet
run 0 "$mbspar" run "$cfg/tree.cfg" --set model.formulation=natural --set integrator.t_end=0.02 \
  --set model.tree.depth=3 --out "$tmp/rn" --quiet
# a loop model: RK4's stage states leave the closure manifold by O(h^4), where the two
# formulations' acceleration-level closures differ by O(drift) (docs/natural.md 8): fixed steps,
# and the runs agree to 1e-8 rather than to the accel's 1e-13
run 0 "$mbspar" run "$cfg/rssr.cfg" --set solver.method=aba --set integrator.t_end=0.02 \
  --set integrator.method=rk4 --out "$tmp/la" --quiet
run 0 "$mbspar" run "$cfg/rssr.cfg" --set model.formulation=natural --set integrator.t_end=0.02 \
  --set integrator.method=rk4 --out "$tmp/ln" --quiet
python3 - "$tmp" <<'PY' || bad "natural against aba"
import csv, json, sys
t = sys.argv[1]
def flat(x):
    return [v for y in x for v in flat(y)] if isinstance(x, list) else [x]
for c in ("chain", "tree", "urdf_arm", "rssr", "slider_crank", "bricard", "seed000_fig4",
          "hexapod"):
    a, n = (json.load(open(f"{t}/{k}_{c}.json")) for k in "an")
    assert n["solver"]["method"] == "natural", n["solver"]
    keys = ("qdd", "lambda", "joint_wrench")
    if "loop_lambda" in a:  # redundant closure equations: λ is one of many (docs/natural.md 8)
        keys = ("qdd",) if a["loops"]["redundant"] and c == "bricard" else keys + ("loop_lambda",)
    for k in keys:
        x, y = flat(a[k]), flat(n[k])
        s = max(max(abs(v) for v in x), 1e-300)
        err = max(abs(u - v) for u, v in zip(x, y)) / s
        print(f"{c} {k}: {err:.2e} relative")
        assert len(x) == len(y) and err < 1e-9, (c, k, err)
    assert n["check_residual"] < 1e-10, n["check_residual"]
for what, pair, tol in (("tree", ("ra", "rn"), 1e-8), ("rssr", ("la", "ln"), 1e-8)):
    rows = [list(csv.reader(open(f"{t}/{d}/trajectory.csv"))) for d in pair]
    assert len(rows[0]) == len(rows[1]) > 2, (len(rows[0]), len(rows[1]))
    last = [[float(v) for v in r[-1]] for r in rows]
    err = max(abs(u - v) for u, v in zip(*last)) / max(abs(v) for v in last[0])
    print(f"{what} run, last trajectory row: {err:.2e} relative")
    assert err < tol, (what, err)
PY

# refusals: one line naming the file (or the --set), exit 2
run 2 "$mbspar" accel "$cfg/chain.cfg" --set model.formulation=nat
grep -q 'model.formulation: unknown value "nat"' "$tmp/err" || bad "value: $(cat "$tmp/err")"
run 2 "$mbspar" accel "$cfg/pendulum.cfg" --set solver.method=natural --set model.formulation=joint
grep -q 'solver.method = natural is the natural formulation' "$tmp/err" || bad "$(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "more than one stderr line: $(cat "$tmp/err")"

[ "$fail" -eq 0 ] || exit 1
echo "natural_cli: all checks passed"
