#!/bin/sh
# `mbspar run` under model.formulation = "natural" (issue 33, docs/natural.md 12): the natural
# coordinates (p, ṗ) integrated with projection after each step, outputs in joint coordinates.
# The conservative four-bar over T seconds with rk4 (energy <= 1e-8 relative, every constraint
# <= 1e-10 after the projection, the closure of the recovered q <= 1e-10), restarted from its
# last checkpoint: the same files byte for byte; on trees (every joint
# type; the URDF arm with joint springs and dampers) the natural run's end state equals aba's to
# the integrator's tolerance; other rank counts were refused with one line and exit 8, writing
# nothing (until 2026-11-29; they run now, natural_run_ranks.sh).
# usage: natural_run.sh MBSPAR CONFIGS_DIR T [LAUNCHER ...]   (LAUNCHER: mpiexec -n 2)
mbspar=$1
cfg=$2
T=$3
shift 3
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_natural_run
nat="model.formulation=natural"

# (the last checkpoint of the run at a step that is a multiple of 700; a restart from it rewrites
# the rows after it: bitwise the uninterrupted run's)
run 0 "$mbspar" run "$cfg/fourbar.cfg" --set "$nat" --set integrator.method=rk4 \
  --set integrator.t_end="$T" --set output.every=50 --set output.checkpoint_every=700 \
  --out "$tmp/fb" --quiet
cp "$tmp/fb/energy.csv" "$tmp/fb/trajectory.csv" "$tmp/fb/run.json" "$tmp"
run 0 "$mbspar" run "$cfg/fourbar.cfg" --set "$nat" --set integrator.method=rk4 \
  --set integrator.t_end="$T" --set output.every=50 --set output.checkpoint_every=700 \
  --out "$tmp/fb" --restart "$tmp/fb/checkpoint.bin" --quiet
{ cmp -s "$tmp/energy.csv" "$tmp/fb/energy.csv" &&
  cmp -s "$tmp/trajectory.csv" "$tmp/fb/trajectory.csv"; } ||
  bad "natural restart: energy.csv or trajectory.csv differ from the uninterrupted run"
# dp5 (the step size in the checkpoint) on the hexapod (6 loops, spring-dampers, O(n) with the
# closure rows in the range space): the restart from step 80 rewrites the files bit for bit
hx="--set $nat --set integrator.method=dp5 --set integrator.tol=1e-8 --set integrator.t_end=0.3"
# shellcheck disable=SC2086 # (hx: several words)
run 0 "$mbspar" run "$cfg/hexapod.cfg" $hx --set output.every=5 --set output.checkpoint_every=40 \
  --out "$tmp/hx" --quiet
mkdir -p "$tmp/hx0" && cp "$tmp/hx/energy.csv" "$tmp/hx/trajectory.csv" "$tmp/hx0"
# shellcheck disable=SC2086
run 0 "$mbspar" run "$cfg/hexapod.cfg" $hx --set output.every=5 --set output.checkpoint_every=40 \
  --out "$tmp/hx" --restart "$tmp/hx/checkpoint.bin" --quiet
{ cmp -s "$tmp/hx0/energy.csv" "$tmp/hx/energy.csv" &&
  cmp -s "$tmp/hx0/trajectory.csv" "$tmp/hx/trajectory.csv"; } ||
  bad "natural dp5 restart (hexapod): energy.csv or trajectory.csv differ"
# trees: natural against the joint formulation (aba), dp5 at tol 1e-10 both
for c in tree urdf_arm; do # (tree: depth 3, 7 bodies: the comparison is at dp5 tol 1e-10)
  for f in aba natural; do
    if [ $f = aba ]; then how=solver.method=aba; else how=$nat; fi
    size=integrator.t_end=0.5
    [ $c = tree ] && size=model.tree.depth=3
    run 0 "$mbspar" run "$cfg/$c.cfg" --set "$how" --set integrator.method=dp5 --set integrator.tol=1e-10 \
      --set integrator.t_end=0.5 --set "$size" --out "$tmp/${c}_$f" --quiet
  done
done
python3 - "$tmp" <<'PY' || bad "natural run checks"
import csv, json, sys
t = sys.argv[1]
j = json.load(open(f"{t}/run.json"))
assert j["formulation"] == "natural", j.get("formulation")
rows = list(csv.DictReader(open(f"{t}/fb/energy.csv")))
E0 = float(rows[0]["total"])
dE = max(abs(float(r["total"]) - E0) for r in rows) / abs(E0)
clo = max(max(float(r["closure_pos"]), float(r["closure_rot"])) for r in rows)
viol = j["natural"]["violation_max"]
print(f"fourbar rk4 {j['results']['t']} s, {len(rows)} rows: energy {dE:.2e} relative, "
      f"constraints after projection {viol:.2e}, closure of q {clo:.2e}")
assert j["results"]["complete"] and dE <= 1e-8 and viol <= 1e-10 and clo <= 1e-10, (dE, viol, clo)
for c in ("tree", "urdf_arm"):
    a, n = (json.load(open(f"{t}/{c}_{f}/run.json")) for f in ("aba", "natural"))
    assert n["formulation"] == "natural" and a["formulation"] == "joint"
    x = a["results"]["q"] + a["results"]["qd"]
    y = n["results"]["q"] + n["results"]["qd"]
    err = max(abs(u - v) for u, v in zip(x, y)) / max(abs(v) for v in x)
    ea = a["results"]["energy"]["total"] - a["results"]["energy"]["work"]
    en = n["results"]["energy"]["total"] - n["results"]["energy"]["work"]
    print(f"{c}: natural vs aba at t = 0.5 s (dp5 1e-10): q, qd {err:.2e} relative, "
          f"energy - work {abs(ea - en):.2e} J apart")
    assert len(x) == len(y) and err <= 1e-7, (c, err)
PY

# other rank counts: the run over ranks (since 2026-11-29, ninth session; its figures against one
# rank are natural_run_ranks.np2/np3's): the pendulum at the launcher's rank count completes
if [ $# -gt 0 ]; then
  run 0 "$@" "$mbspar" run "$cfg/pendulum.cfg" --set "$nat" --set integrator.t_end=0.01 \
    --out "$tmp/np" --quiet
  grep -q '"solve_ranks"' "$tmp/np/run.json" || bad "no solve_ranks in the run over ranks"
fi
run 2 "$mbspar" run "$cfg/pendulum.cfg" --set "$nat" --set integrator.method=euler --quiet
grep -q "integrator.method = euler: model.formulation = natural runs rk4 or dp5" "$tmp/err" ||
  bad "$(cat "$tmp/err")"
# a model the dense run refused (more than 128 bodies until 2026-11-29): tree.cfg's 255 bodies,
# 5 rk4 steps in O(n), every constraint after the projection <= 1e-10
run 0 "$mbspar" run "$cfg/tree.cfg" --set "$nat" --set integrator.method=rk4 \
  --set integrator.t_end=0.005 --out "$tmp/big" --quiet
python3 - "$tmp/big/run.json" <<'PY' || bad "tree.cfg natural run"
import json, sys
j = json.load(open(sys.argv[1]))
n = j["natural"]
print(f"tree.cfg (255 bodies) rk4 5 steps: {n['coordinates']} coordinates, "
      f"violation_max {n['violation_max']:.2e}")
assert j["results"]["complete"] and n["coordinates"] == 12 * 255 and n["violation_max"] <= 1e-10
PY
# PETSc TS options would not reach the natural steppers: refused (before, -ts_type rk
# -ts_rk_type 3 was consumed by an unused TS and the summary said "natural + rk3" of a dp5 run)
run 2 "$mbspar" run "$cfg/pendulum.cfg" --set "$nat" --out "$tmp/tsopt" --quiet -ts_type rk -ts_rk_type 3
grep -q -- '-ts_type: model.formulation = natural steps' "$tmp/err" || bad "-ts_type not refused: $(cat "$tmp/err")"
[ ! -e "$tmp/tsopt" ] || bad "the refused run wrote $tmp/tsopt"

[ "$fail" -eq 0 ] || exit 1
echo "natural_run: all checks passed"
