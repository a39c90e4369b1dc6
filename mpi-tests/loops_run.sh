#!/bin/sh
# Closed loops end to end (issue 10, docs/loops.md): the loop configs run 10 s with dp5 (tol
# 1e-10) against their closed-form kinematics, energy and closure (check_loops.py), with and
# without the projection and with Baumgarte; euler and rk4; checkpoint and restart; the
# constraint-force methods (schur runs like aba's, direct's at one rank, accel of schur, jcg,
# chebyshev and petsc equal to aba, static); cpa builds the loop graph; check's rank report; inverse with actuated joints;
# static; 1 vs 2 ranks.
# usage: loops_run.sh MBSPAR CONFIGS_DIR PYTHON3 [LAUNCHER ...]   (LAUNCHER: mpiexec -n 2)
mbspar=$1
cfg=$2
py=$3
shift 3
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_loops

# the acceptance runs: 10 s, dp5 at tol 1e-10, projection on (the default)
for k in fourbar slider_crank rssr sixbar bricard; do
  run 0 "$@" "$mbspar" run "$cfg/$k.cfg" --set integrator.t_end=10 --set integrator.method=dp5 \
    --set integrator.tol=1e-10 --out "$tmp/$k" --quiet
  "$py" "$here/check_loops.py" "$k" "$tmp/$k" 1e-8 1e-9 || bad "$k: closed form, energy or closure"
done

# without the projection the drift is reported (run.json and energy.csv), energy still conserved
run 0 "$@" "$mbspar" run "$cfg/fourbar.cfg" --set integrator.t_end=10 --set integrator.tol=1e-10 \
  --set integrator.projection=false --out "$tmp/noproj" --quiet
"$py" "$here/check_loops.py" fourbar "$tmp/noproj" 1e-8 1e-6 || bad "fourbar without projection"
"$py" -c "
import json, sys
l = json.load(open(sys.argv[1]))['results']['loops']
print('without projection: closure %.2e m (max), %.2e m/s (rate)' % (l['closure_pos_max'], l['closure_vel_max']))
sys.exit(0 if not l['projection'] and l['projected_steps'] == 0 and 1e-12 < l['closure_pos_max'] < 1e-6 else 1)
" "$tmp/noproj/run.json" || bad "closure without projection not reported"
head -n 1 "$tmp/noproj/energy.csv" | grep -q ',closure_pos,closure_rot,closure_vel$' ||
  bad "energy.csv lacks the closure columns"
# Baumgarte alone keeps the closure (c'' + 2 alpha c' + beta^2 c = 0)
run 0 "$@" "$mbspar" run "$cfg/fourbar.cfg" --set integrator.t_end=10 --set integrator.tol=1e-10 \
  --set integrator.projection=false --set "solver.baumgarte=[10,10]" --out "$tmp/baum" --quiet
"$py" "$here/check_loops.py" fourbar "$tmp/baum" 1e-8 1e-9 || bad "fourbar with Baumgarte"

# every integrator; crba as the method
for im in euler rk4; do
  run 0 "$@" "$mbspar" run "$cfg/slider_crank.cfg" --set integrator.method=$im \
    --set integrator.t_end=0.05 --set integrator.dt=1e-4 --out "$tmp/$im" --quiet
done
run 0 "$@" "$mbspar" run "$cfg/bricard.cfg" --set solver.method=crba --set integrator.t_end=2 \
  --out "$tmp/crba" --quiet
"$py" "$here/check_loops.py" bricard "$tmp/crba" 1e-8 1e-9 || bad "bricard with crba"

# checkpoint and restart: bitwise the uninterrupted run
run 0 "$@" "$mbspar" run "$cfg/fourbar.cfg" --set integrator.t_end=2 --out "$tmp/full" --quiet
run 0 "$@" "$mbspar" run "$cfg/fourbar.cfg" --set integrator.t_end=2 \
  --set output.checkpoint_every=300 --out "$tmp/ck" --quiet
run 0 "$@" "$mbspar" run "$cfg/fourbar.cfg" --set integrator.t_end=2 \
  --set output.checkpoint_every=300 --out "$tmp/ck" --restart "$tmp/ck/checkpoint.bin" --quiet
"$py" -c "
import json, sys
a = json.load(open(sys.argv[1]))['results']; b = json.load(open(sys.argv[2]))['results']
sys.exit(0 if a['q'] == b['q'] and a['qd'] == b['qd'] else 1)
" "$tmp/full/run.json" "$tmp/ck/run.json" || bad "restart is not bitwise the uninterrupted run"
# ... and its files are the uninterrupted run's, byte for byte (energy.csv of a loop model has 12
# fields: before 2026-11-28's sixth session the restart's cut counted 9 and dropped every row)
{ cmp -s "$tmp/full/energy.csv" "$tmp/ck/energy.csv" &&
  cmp -s "$tmp/full/trajectory.csv" "$tmp/ck/trajectory.csv"; } ||
  bad "restart of a loop model: energy.csv or trajectory.csv differ from the uninterrupted run"

# the constraint-force methods (the engine's loop solve, docs/loops.md 8): schur over 10 s with
# dp5 against the closed forms, energy and closure like aba (projection on every rank alike)
for k in fourbar slider_crank rssr sixbar bricard; do
  run 0 "$@" "$mbspar" run "$cfg/$k.cfg" --set solver.method=schur --set integrator.t_end=10 \
    --set integrator.method=dp5 --set integrator.tol=1e-10 --out "$tmp/schur_$k" --quiet
  "$py" "$here/check_loops.py" "$k" "$tmp/schur_$k" 1e-8 1e-9 || bad "$k with schur"
done
# jcg with the closure equations as rows of the system (solver.loops = auto there, docs/loops.md
# 8.4): the same 10 s dp5 checks, and the report says which path ran
for k in fourbar slider_crank rssr; do
  run 0 "$@" "$mbspar" run "$cfg/$k.cfg" --set solver.method=jcg --set integrator.t_end=10 \
    --set integrator.method=dp5 --set integrator.tol=1e-10 --out "$tmp/jcg_$k" --quiet
  "$py" "$here/check_loops.py" "$k" "$tmp/jcg_$k" 1e-8 1e-9 || bad "$k with jcg (closure rows)"
done
run 0 "$@" "$mbspar" accel "$cfg/fourbar.cfg" --set solver.method=jcg --json "$tmp/rows.json" --quiet
grep -q '"solve": "rows"' "$tmp/rows.json" || bad "jcg on the four-bar did not take the closure rows"
run 0 "$@" "$mbspar" accel "$cfg/sixbar.cfg" --set solver.method=jcg --json "$tmp/unit6.json" --quiet
grep -q '"solve": "unit"' "$tmp/unit6.json" || bad "jcg on the six-bar (redundant rows) did not take unit solves"
# direct (one rank): its factor is kept over the loop layer's solves of one evaluation
# (mbsWork.reuse) and redone at every new position; a 10 s dp5 run passes the same checks
if [ $# -eq 0 ]; then
  for k in fourbar slider_crank; do
    run 0 "$mbspar" run "$cfg/$k.cfg" --set solver.method=direct --set integrator.t_end=10 \
      --set integrator.method=dp5 --set integrator.tol=1e-10 --out "$tmp/direct_$k" --quiet
    "$py" "$here/check_loops.py" "$k" "$tmp/direct_$k" 1e-8 1e-9 || bad "$k with direct"
  done
fi
# accel: every method's q̈, loop λ and wrenches equal aba's (1e-9); schur given in the file;
# petsc on a model with a spring-damper only
cmp_json() { # A.json B.json what
  "$py" -c "
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
def flat(v):
    if isinstance(v, list):
        for x in v: yield from flat(x)
    else: yield float(v)
worst = 0
for k in ('qdd', 'lambda', 'joint_wrench', 'loop_lambda', 'loop_wrench'):
    if k not in a: continue
    x, y = list(flat(a[k])), list(flat(b[k]))
    s = max([abs(v) for v in x] + [1e-9])
    worst = max([worst] + [abs(u - v) / s for u, v in zip(x, y)])
print('%s: worst relative difference to aba %.2e' % (sys.argv[3], worst))
sys.exit(0 if worst <= 1e-9 and a.get('loops', {}).get('rank') == b.get('loops', {}).get('rank') else 1)
" "$1" "$2" "$3" || bad "$3 differs from aba"
}
run 0 "$@" "$mbspar" accel "$cfg/sixbar.cfg" --set solver.method=aba --json "$tmp/ref6.json" --quiet
for meth in schur jcg chebyshev petsc; do
  run 0 "$@" "$mbspar" accel "$cfg/sixbar.cfg" --set solver.method=$meth --set solver.tol=1e-13 \
    --json "$tmp/m6.json" --quiet
  cmp_json "$tmp/ref6.json" "$tmp/m6.json" "sixbar accel $meth"
done
# PETSc's direct solve (-ksp_type preonly: no initial guess), factored once per evaluation
for pc in lu cholesky; do
  run 0 "$@" "$mbspar" accel "$cfg/sixbar.cfg" --set solver.method=petsc --json "$tmp/m6.json" \
    --quiet -ksp_type preonly -pc_type $pc
  cmp_json "$tmp/ref6.json" "$tmp/m6.json" "sixbar accel petsc preonly $pc"
done
sed 's/^integrator = .*/solver = { method = "schur"; };/' "$cfg/fourbar.cfg" >"$tmp/schur.cfg"
run 0 "$@" "$mbspar" accel "$cfg/fourbar.cfg" --json "$tmp/ref4.json" --quiet
# the loop layer's own timer (rows, dots, factorization), reported like every phase
python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))['timers']['eval.loops']
sys.exit(0 if t['count'] > 0 and 0 < t['max'] <= json.load(open(sys.argv[1]))['timers']['eval']['max'] else 1)
" "$tmp/ref4.json" || bad "fourbar accel: no eval.loops timer in the report"
run 0 "$@" "$mbspar" accel "$tmp/schur.cfg" --json "$tmp/m4.json" --quiet
cmp_json "$tmp/ref4.json" "$tmp/m4.json" "fourbar accel, schur in the file"
run 0 "$@" "$mbspar" accel "$cfg/sixbar.cfg" '--set' 'model.loops=()' --json "$tmp/refs.json" --quiet
run 0 "$@" "$mbspar" accel "$cfg/sixbar.cfg" '--set' 'model.loops=()' --set solver.method=petsc \
  --set solver.tol=1e-13 --json "$tmp/ms.json" --quiet
cmp_json "$tmp/refs.json" "$tmp/ms.json" "sixbar without loops (a spring-damper), petsc"
# static: schur finds aba's equilibrium
run 0 "$@" "$mbspar" static "$cfg/fourbar.cfg" --json "$tmp/sa.json" --quiet
run 0 "$@" "$mbspar" static "$cfg/fourbar.cfg" --set solver.method=schur --json "$tmp/ss.json" --quiet
"$py" -c "
import json, sys
a = json.load(open(sys.argv[1]))['results']['q']; b = json.load(open(sys.argv[2]))['results']['q']
d = max(abs(x - y) for x, y in zip(a, b))
print('static fourbar: schur vs aba equilibrium %.2e' % d)
sys.exit(0 if d < 1e-9 else 1)
" "$tmp/sa.json" "$tmp/ss.json" || bad "static with schur differs from aba"
# an iterative method on a model with >= 20 closure equations (a 2 x 80-link ladder: 24) with
# solver.loops = unit notes its m - z + 2 tree solves per evaluation (z zero rows need none) before
# the verb; the default (rows, one solve), --quiet and the exact methods do not
"$py" "$here/../scripts/gen_ladder.py" 80 10 >"$tmp/ladder80.cfg"
run 0 "$@" "$mbspar" accel "$tmp/ladder80.cfg" --set solver.method=jcg --set solver.max_iter=3 \
  --set solver.loops=unit
grep -q "note: solver.method = jcg on this model with 24 closure equations (8 zero rows need no solve) runs 18 tree solves" \
  "$tmp/err" || bad "no note on jcg's 18 tree solves: $(cat "$tmp/err")"
run 0 "$@" "$mbspar" accel "$tmp/ladder80.cfg" --set solver.method=jcg --set solver.max_iter=3
grep -q "tree solves" "$tmp/err" && bad "jcg with the closure rows in the system printed the note"
run 0 "$@" "$mbspar" accel "$tmp/ladder80.cfg" --set solver.method=jcg --set solver.max_iter=3 \
  --quiet
grep -q "tree solves" "$tmp/err" && bad "--quiet printed the tree-solve note"
run 0 "$@" "$mbspar" accel "$tmp/ladder80.cfg" --set solver.method=schur
grep -q "tree solves" "$tmp/err" && bad "schur printed the tree-solve note"
# cpa builds the loop evaluation's graph (docs/cpa.md "Loop models"): aba's serial baseline and
# jcg's m + 2 tree solves, a sane JSON (work >= span > 0, the loop nodes on the path)
run 0 "$@" "$mbspar" cpa "$cfg/bricard.cfg" --procs 4 --json "$tmp/cpa_aba.json" --quiet
run 0 "$@" "$mbspar" cpa "$cfg/bricard.cfg" --method jcg --iterations 20 --procs 4 \
  --json "$tmp/cpa_jcg.json" --quiet
for f in cpa_aba cpa_jcg; do
  python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))['cpa']
assert c['work_flops'] > 0 and 0 < c['span_flops'] <= c['work_flops'], c
assert c['parallelism'] >= 1 and c['nodes'] > 0, c
kinds = [k['kind'] for k in c['critical_path']['by_kind']]
assert any(k.startswith('loop.') for k in kinds), kinds
" "$tmp/$f.json" || bad "cpa on the Bricard linkage: bad $f.json"
done
# ... and the closure rows' graph where the engine puts them into the system (the four-bar's
# kept equations are independent: auto takes rows for jcg), measured on that path
run 0 "$@" "$mbspar" cpa "$cfg/fourbar.cfg" --method jcg --procs 2 --json "$tmp/cpa_rows.json" \
  --quiet
python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))['cpa']
assert c['loops_solve'] == 'rows' and c['iterations_source'] == 'measured', c
assert c['work_flops'] > 0 and 0 < c['span_flops'] <= c['work_flops'], c
kinds = [k['kind'] for k in c['critical_path']['by_kind']]
assert any(k.startswith('rows.') for k in kinds), kinds
" "$tmp/cpa_rows.json" || bad "cpa on the four-bar's closure rows: bad cpa_rows.json"
python3 -c "
import json, sys
assert json.load(open(sys.argv[1]))['cpa']['loops_solve'] == 'unit'
" "$tmp/cpa_jcg.json" || bad "cpa on the Bricard linkage: loops_solve is not unit"
# the default method of a loop model is aba, with one note on stderr
run 0 "$@" "$mbspar" accel "$cfg/fourbar.cfg" --json "$tmp/a.json"
grep -q 'note: solver.method = aba' "$tmp/err" || bad "no note on the default method"
grep -q '"method": "aba"' "$tmp/a.json" || bad "loop model not solved with aba"
for key in loop_lambda loop_wrench '"closure_residual"' '"mobility": 1'; do
  grep -q "$key" "$tmp/a.json" || bad "accel JSON lacks $key"
done

# check: closure equations, rank, the redundant ones, mobility
run 0 "$@" "$mbspar" check "$cfg/bricard.cfg" --json "$tmp/c.json"
grep -q 'redundant equations  *1 (J6.rx)' "$tmp/out" || bad "check table: $(cat "$tmp/out")"
"$py" -c "
import json, sys
l = json.load(open(sys.argv[1]))['model']['loops']
sys.exit(0 if (l['closure_equations'], l['rank'], l['redundant'], l['mobility']) == (5, 4, ['J6.rx'], 1) else 1)
" "$tmp/c.json" || bad "check JSON loops section"

# inverse: the crank driven over one turn, rod and slider from the loop (closed form), loop forces
cat "$cfg/slider_crank.cfg" >"$tmp/inv.cfg"
echo 'inverse = { T = 1.0; steps = 100; actuated = ["crank"]; q_end = [6.283185307179586]; };' >>"$tmp/inv.cfg"
run 0 "$@" "$mbspar" inverse "$tmp/inv.cfg" --out "$tmp/inv" --quiet
"$py" -c "
import json, math, sys
d = json.load(open(sys.argv[1]))['inverse']
r, l = 0.1, 0.3
err = max(abs(q[2] - r * math.cos(q[0]) - math.sqrt(l * l - (r * math.sin(q[0])) ** 2)) for q in d['q'])
print('inverse: slider closed form %.2e, unactuated residual %.2e, |tau_crank| <= %.4g' % (err, d['unactuated_residual'], d['tau_max_abs'][0]))
sys.exit(0 if err < 1e-9 and d['unactuated_residual'] < 1e-9 and d['tau_max_abs'][1:] == [0, 0] and len(d['loop_lambda']) == 101 else 1)
" "$tmp/inv/inverse.json" || bad "inverse of the slider-crank"
run 2 "$@" "$mbspar" inverse "$cfg/slider_crank.cfg" --set inverse.T=1 --out "$tmp/inv2"
grep -q 'needs inverse.actuated' "$tmp/err" || bad "inverse without actuated: $(cat "$tmp/err")"

# static equilibrium of the four-bar under gravity (projection inside the drainage)
run 0 "$@" "$mbspar" static "$cfg/fourbar.cfg" --json "$tmp/s.json" --quiet
grep -q '"reason": "converged"' "$tmp/s.json" || bad "static did not converge"

# 2 ranks: the serial baseline runs on rank 0; the same numbers as one rank
if [ $# -gt 0 ]; then
  run 0 "$mbspar" accel "$cfg/rssr.cfg" --json "$tmp/a1.json" --quiet
  run 0 "$@" "$mbspar" accel "$cfg/rssr.cfg" --json "$tmp/a2.json" --quiet
  "$py" -c "
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if all(a[k] == b[k] for k in ('qdd', 'lambda', 'loop_lambda', 'joint_wrench', 'loop_wrench')) else 1)
" "$tmp/a1.json" "$tmp/a2.json" || bad "accel at 1 and 2 ranks differ"
  # check's decomposition report (docs/model.md, body order): side branches listed after both
  # chains are cut by the rank boundary, listed after their links (configs/ladder.cfg) they are not,
  # and the ladder's boundary moves to the right chain's root (a clean cut): no joint cut at all
  cat >"$tmp/order.cfg" <<'CFG'
model = {
  chain = ( { name = "left"; n = 20; length = 0.1; mass = 0.1; },
            { name = "right"; n = 20; length = 0.1; mass = 0.1; origin = [1.0, 0.0, 0.0]; } );
  bodies = (
    { name = "r2"; parent = "left2"; joint = { type = "revolute"; origin = [0.0, 0.0, -0.1]; }; mass = 0.1; shape = "rod"; radius = 0.01; length = 0.5; },
    { name = "r4"; parent = "left4"; joint = { type = "revolute"; origin = [0.0, 0.0, -0.1]; }; mass = 0.1; shape = "rod"; radius = 0.01; length = 0.5; },
    { name = "r6"; parent = "left6"; joint = { type = "revolute"; origin = [0.0, 0.0, -0.1]; }; mass = 0.1; shape = "rod"; radius = 0.01; length = 0.5; },
    { name = "r8"; parent = "left8"; joint = { type = "revolute"; origin = [0.0, 0.0, -0.1]; }; mass = 0.1; shape = "rod"; radius = 0.01; length = 0.5; },
    { name = "r10"; parent = "left10"; joint = { type = "revolute"; origin = [0.0, 0.0, -0.1]; }; mass = 0.1; shape = "rod"; radius = 0.01; length = 0.5; },
    { name = "r12"; parent = "left12"; joint = { type = "revolute"; origin = [0.0, 0.0, -0.1]; }; mass = 0.1; shape = "rod"; radius = 0.01; length = 0.5; } );
};
CFG
  run 0 "$@" "$mbspar" check "$tmp/order.cfg" --json "$tmp/c1.json" --quiet
  run 0 "$@" "$mbspar" check "$cfg/ladder.cfg" --json "$tmp/c2.json" --quiet
  "$py" -c "
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
da, db = a['decomposition'], b['decomposition']
print('check at 2 ranks: side branches last %d cut joints (depth first %d), ladder %d' % (da['cut_joints'], da['cut_joints_depth_first'], db['cut_joints']))
warn = any('body order' in w for w in a['warnings'])
sys.exit(0 if da['ranks'] == 2 and da['cut_joints'] == 7 and da['cut_joints_depth_first'] == 1 and warn
         and db['cut_joints'] == 0 and not any('body order' in w for w in b['warnings']) else 1)
" "$tmp/c1.json" "$tmp/c2.json" || bad "check: decomposition report"
fi

[ "$fail" -eq 0 ] && echo "loops_run: all checks passed"
exit "$fail"
