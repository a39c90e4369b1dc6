#!/bin/sh
# The accuracy guard of `mbspar accel` (docs/formulation.md 4.9): on a tree whose links carry
# light bodies (1e-8 kg, 1e-16 kg m^2) on revolute joints schur misses the equations of motion at
# several ranks unless it takes the light leaves at the rank cuts exactly (full and distributed
# models; MBSPAR_SCHUR_LIGHT=0 turns that off): one warning line names the likely cause and the
# JSON records it (accuracy.exceeded, accuracy.likely_cause). Silent: schur at two threads of one rank (it joins
# the segments across the light joints, docs/formulation.md 4.9), aba on the same model, schur on
# the same tree with the light bodies on fixed joints (the trees of paths of 4.9) and schur on
# configs/chain.cfg. A loop model with closure rows (fourbar.cfg, jcg) is guarded
# with its closure forces counted; a loose solver.tol there is warned. run and static carry the
# same guard (first and last evaluation); at an equilibrium (static of fourbar.cfg under natural)
# the loop forces that cancel gravity do not shrink the residual's scale.
# usage: guard_cli.sh MBSPAR CONFIGS_DIR [LAUNCHER ...]   (LAUNCHER: mpiexec -n 2 ...)
mbspar=$1
cfg=$2
shift 2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_guard

# a tree of 12 links, two hanging from each light body; light.cfg: the light bodies on revolute
# joints (a cut below one still costs schur its accuracy), fixed.cfg: on fixed joints
light="$tmp/light.cfg"
fixed="$tmp/fixed.cfg"
{
  echo 'model = { gravity = [0.0, 0.0, -9.81]; bodies = ('
  k=0
  while [ $k -lt 12 ]; do
    if [ $k -eq 0 ]; then par=ground; else par="s$(((k - 1) / 2))"; fi
    [ $k -gt 0 ] && echo ','
    echo "{ name = \"l$k\"; parent = \"$par\"; joint = { type = \"revolute\"; axis = [0.0, 1.0, 0.0];"
    echo "  origin = [0.0, 0.0, -0.2]; q0 = [0.$((k % 5))]; qd0 = [0.$k]; }; mass = 1.0;"
    echo "  com = [0.0, 0.0, -0.25]; inertia = [0.02, 0.02, 0.001, 0.0, 0.0, 0.0]; },"
    echo "{ name = \"s$k\"; parent = \"l$k\"; joint = { type = \"fixed\"; origin = [0.01, 0.0, -0.3]; };"
    echo "  mass = 1e-8; com = [0.0, 0.0, 0.0]; inertia = [1e-16, 1e-16, 1e-16, 0.0, 0.0, 0.0]; }"
    k=$((k + 1))
  done
  echo '); };'
  echo 'solver = { method = "schur"; };'
} >"$fixed"
sed 's/type = "fixed"; origin/type = "revolute"; axis = [1.0, 0.0, 0.0]; origin/' "$fixed" >"$light"

# warned WHAT [VERB]: exactly one warning line (of VERB, default accel), naming the light body and
# its parent; JSON records it
warned() {
  n=$(grep -c "warning: ${2:-accel}: the result of schur misses the equations of motion" "$tmp/err")
  [ "$n" -eq 1 ] || bad "$1: $n guard warnings (want 1): $(cat "$tmp/err")"
  # besides the layout warning of schur (a light joint at a boundary, printed before the run)
  [ "$(grep -vc 'warning: schur: a rank boundary cuts the light joint' "$tmp/err")" -eq 1 ] ||
    bad "$1: stderr has more than the warning: $(cat "$tmp/err")"
  grep -q 'likely cause: bodies whose masses differ by 8 orders of magnitude: s0 (1e-08 kg) next to l0 (1 kg)' "$tmp/err" ||
    bad "$1: cause not named: $(cat "$tmp/err")"
  grep -q '"exceeded": true' "$tmp/g.json" || bad "$1: JSON accuracy.exceeded not true"
  grep -q '"likely_cause": "bodies whose masses differ by 8 orders' "$tmp/g.json" ||
    bad "$1: JSON likely_cause missing"
}
# silent WHAT: no warning, accuracy.exceeded false
silent() {
  if grep -q 'warning' "$tmp/err"; then bad "$1: unexpected warning: $(cat "$tmp/err")"; fi
  grep -q '"exceeded": false' "$tmp/g.json" || bad "$1: JSON accuracy.exceeded not false"
}

# small WHAT: the model's loop forces solved as rows; the JSON's accuracy.residual (accel: also
# check_residual) below 1e-8
small() {
  python3 - "$tmp/g.json" <<'PY' || bad "$1: residual not below 1e-8 or not rows: $(grep -o '"residual": [^,]*' "$tmp/g.json")"
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["model"]["loops"]["solve"] == "rows" and d["accuracy"]["residual"] < 1e-8
ok = ok and d.get("check_residual", 0) < 1e-8
sys.exit(0 if ok else 1)
PY
}
# loose WHAT VERB: one warning line naming the loose tolerance; the JSON records it (static adds
# its own line when the drainage stops at static.max_iter)
loose() {
  n=$(grep -c "warning: $2: the result of jcg misses the equations of motion" "$tmp/err")
  [ "$n" -eq 1 ] || bad "$1: $n guard warnings (want 1): $(cat "$tmp/err")"
  [ "$(grep -vc 'static did not converge' "$tmp/err")" -eq 1 ] ||
    bad "$1: stderr has more than the warning: $(cat "$tmp/err")"
  grep -q 'likely cause: solver.tol = 0.01 is loose' "$tmp/err" || bad "$1: cause not named: $(cat "$tmp/err")"
  grep -q '"exceeded": true' "$tmp/g.json" || bad "$1: JSON accuracy.exceeded not true"
  grep -q '"likely_cause": "solver.tol = 0.01 is loose' "$tmp/g.json" || bad "$1: JSON likely_cause missing"
}

if [ $# -eq 0 ]; then
  # one rank, two threads: no clean place for a segment boundary, the segments joined: exact
  run 0 env OMP_NUM_THREADS=2 "$mbspar" accel "$light" --json "$tmp/g.json" -q
  silent "schur, 2 threads (segments joined)"
  run 0 env OMP_NUM_THREADS=1 "$mbspar" accel "$light" --set solver.method=aba --json "$tmp/g.json" -q
  silent "aba"
  run 0 env OMP_NUM_THREADS=2 "$mbspar" accel "$fixed" --json "$tmp/g.json" -q
  silent "schur, fixed joints, 2 threads"
  run 0 env OMP_NUM_THREADS=2 "$mbspar" accel "$cfg/chain.cfg" --json "$tmp/g.json" -q
  silent "chain.cfg, schur, 2 threads"
  # a loop model with its closure equations as rows of the system (loops.solve = rows): the
  # residual counts the closure forces (it read 1.1 without them), within 1e-8 and silent
  run 0 env OMP_NUM_THREADS=1 "$mbspar" accel "$cfg/fourbar.cfg" --set solver.method=jcg --json "$tmp/g.json" -q
  silent "fourbar.cfg, jcg (closure rows)"
  small "fourbar.cfg, jcg (closure rows)"
  # the same with a deliberately loose tolerance: the result misses the equations of motion by
  # ~1e-2, above the bound's cap 1e-3: one warning naming the tolerance
  run 0 env OMP_NUM_THREADS=1 "$mbspar" accel "$cfg/fourbar.cfg" --set solver.method=jcg --set solver.tol=1e-2 --json "$tmp/g.json" -q
  loose "fourbar.cfg, jcg, solver.tol 1e-2" accel
  # run and static: the same guard at their first and last evaluation, one warning at most
  short="--set integrator.t_end=2e-3 --out $tmp/r --force"
  # shellcheck disable=SC2086 # $short: several arguments
  run 0 env OMP_NUM_THREADS=2 "$mbspar" run "$light" $short --json "$tmp/g.json" -q
  silent "run, schur, 2 threads (segments joined)"
  grep -q '"last": {' "$tmp/g.json" || bad "run: no last evaluation in accuracy"
  # shellcheck disable=SC2086
  run 0 env OMP_NUM_THREADS=1 "$mbspar" run "$cfg/fourbar.cfg" --set solver.method=jcg $short --json "$tmp/g.json" -q
  silent "run, fourbar.cfg, jcg"
  small "run, fourbar.cfg, jcg"
  # at the equilibrium the loop forces cancel gravity in the bias: the residual's scale keeps
  # gravity's size (it read 2.2e-4 under natural and 1.5e-9 under aba before, warning falsely)
  run 0 env OMP_NUM_THREADS=1 "$mbspar" static "$cfg/fourbar.cfg" --set model.formulation=natural --json "$tmp/g.json" -q
  silent "static, fourbar.cfg, natural (at rest)"
  python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["accuracy"]["residual"] < 1e-10 else 1)' "$tmp/g.json" ||
    bad "static, fourbar.cfg, natural: residual $(grep -o '"residual": [^,]*' "$tmp/g.json" | head -1) not below 1e-10"
  run 0 env OMP_NUM_THREADS=1 "$mbspar" static "$cfg/fourbar.cfg" --set solver.method=jcg --set solver.tol=1e-2 --set static.max_iter=20 --json "$tmp/g.json" -q
  loose "static, fourbar.cfg, jcg, solver.tol 1e-2" static
  run 0 env OMP_NUM_THREADS=1 "$mbspar" static "$light" --set solver.method=aba --set static.max_iter=20 --json "$tmp/g.json" -q
  grep -q '"exceeded": false' "$tmp/g.json" || bad "static, aba: JSON accuracy.exceeded not false"
else
  # distributed-memory model (the default at several ranks): schur takes the light leaves at the
  # rank cut exactly there too (4.9; no layout warning either); with that off it misses: the
  # constraint residual, and the layout warning names the cut
  run 0 env OMP_NUM_THREADS=1 "$@" "$mbspar" accel "$light" --json "$tmp/g.json" -q
  silent "schur, distributed model"
  run 0 env MBSPAR_SCHUR_LIGHT=0 OMP_NUM_THREADS=1 "$@" "$mbspar" accel "$light" --json "$tmp/g.json" -q
  warned "schur, distributed model, light leaves off"
  grep -q 'warning: schur: a rank boundary cuts the light joint' "$tmp/err" ||
    bad "schur, distributed model, light leaves off: no layout warning: $(cat "$tmp/err")"
  grep -q '"constraint_residual"' "$tmp/g.json" || bad "no constraint_residual in the JSON"
  # the replicated model: schur takes the light leaves at the rank cut exactly (4.9); with that
  # off (MBSPAR_SCHUR_LIGHT=0) it misses: the equation-of-motion residual
  # (and the layout warning only where a cut remains that they do not make exact: none here)
  run 0 env MBSPAR_MODEL=full OMP_NUM_THREADS=1 "$@" "$mbspar" accel "$light" --json "$tmp/g.json" -q
  silent "schur, full model"
  run 0 env MBSPAR_MODEL=full MBSPAR_SCHUR_LIGHT=0 OMP_NUM_THREADS=1 "$@" "$mbspar" accel "$light" --json "$tmp/g.json" -q
  warned "schur, full model, light leaves off"
  grep -q 'warning: schur: a rank boundary cuts the light joint' "$tmp/err" ||
    bad "schur, full model, light leaves off: no layout warning: $(cat "$tmp/err")"
  run 0 env OMP_NUM_THREADS=1 "$@" "$mbspar" accel "$fixed" --json "$tmp/g.json" -q
  silent "schur, fixed joints, distributed model"
  run 0 env OMP_NUM_THREADS=1 "$@" "$mbspar" accel "$cfg/chain.cfg" --json "$tmp/g.json" -q
  silent "chain.cfg, schur"
  run 0 env OMP_NUM_THREADS=1 "$@" "$mbspar" accel "$cfg/chain.cfg" --set solver.method=jcg --json "$tmp/g.json" -q
  silent "chain.cfg, jcg"
  # run (a replicated model): the guard at its first and last evaluation
  run 0 env MBSPAR_SCHUR_LIGHT=0 OMP_NUM_THREADS=1 "$@" "$mbspar" run "$light" --set integrator.t_end=2e-3 --out "$tmp/r" --force --json "$tmp/g.json" -q
  warned "run, schur, 2 ranks, light leaves off" run
  # run.json carries schur's interface rounds as accel's report does (the deepest over the ranks)
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["solver"].get("interface_rounds"); sys.exit(0 if isinstance(r, int) and r >= 1 else 1)' "$tmp/g.json" ||
    bad "run, schur, 2 ranks: solver.interface_rounds missing or < 1 in the run report"
fi
[ "$fail" -eq 0 ] && echo "guard_cli: all checks passed"
exit "$fail"
