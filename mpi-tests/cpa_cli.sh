#!/bin/sh
# End-to-end tests of `mbspar cpa` (docs/cpa.md): exit codes, table, JSON, --dot, --calibrate.
# usage: cpa_cli.sh MBSPAR CONFIGS_DIR [LAUNCHER ...]   (LAUNCHER: mpiexec -n 2 ...)
mbspar=$1
cfg=$2
shift 2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_cpa
jcheck() { # jcheck FILE PYTHON-EXPRESSION-ON-c (c = the cpa section)
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d['cpa']; sys.exit(0 if ($2) else 1)" "$1" ||
    bad "JSON check failed: $2"
}

# ABA on the one-link pendulum (a revolute joint about y: the axis-specialised kernels): T1 is
# the hand count of docs/cpa.md's flops.h constants (pos.joint 3 + vel.joint 1 + vel.c 4 +
# vel.bias 72 + vel.force 5 + aba.U 3 + pass 3: a 28, qdd 71, f 18)
run 0 "$@" "$mbspar" cpa "$cfg/pendulum.cfg" --method aba --json "$tmp/p.json"
grep -q 'T1/T_inf (max speedup)' "$tmp/out" || bad "cpa table"
jcheck "$tmp/p.json" "c['work_flops'] == 205 and c['method'] == 'aba' and c['nodes'] == 9"
jcheck "$tmp/p.json" "all(k in d for k in ('schema', 'build', 'run', 'config', 'model'))"
jcheck "$tmp/p.json" "c['schedule'][0]['P'] == 1 and abs(c['schedule'][0]['list_s'] - c['work_s']) < 1e-15"

# a 64-link chain: ABA's parallelism is a small constant; block grain keeps T1
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=64 --method aba --json "$tmp/a.json" --quiet
jcheck "$tmp/a.json" "1.6 < c['parallelism'] < 1.8"
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=64 --method aba --grain block --json "$tmp/b.json" --quiet
python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['cpa']; b=json.load(open(sys.argv[2]))['cpa']; sys.exit(0 if a['work_flops']==b['work_flops'] and b['nodes']<a['nodes'] else 1)" "$tmp/a.json" "$tmp/b.json" ||
  bad "block grain T1 or node count"

# J-CG: given iterations, distributed predictions on P <= bodies, Brent bound only at flop grain
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=32 --method jcg --iterations 3 --procs 4 --json "$tmp/j.json" --quiet
jcheck "$tmp/j.json" "c['iterations'] == 3 and c['iterations_source'] == 'given' and len(c['schedule']) == 3"
jcheck "$tmp/j.json" "c['schedule'][2]['distributed_s'] is not None and c['schedule'][2]['distributed_messages'] > 0"
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=32 --method jcg --iterations 3 --grain flop --procs 2 --json "$tmp/f.json" --quiet
jcheck "$tmp/f.json" "c['schedule'][1]['list_s'] is None and c['span_s'] > 0"
# measured iterations
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=16 --method jcg --procs 1 --json "$tmp/m.json" --quiet
jcheck "$tmp/m.json" "c['iterations_source'] == 'measured' and c['iterations'] > 0"

# --dot: small graphs only
run 0 "$@" "$mbspar" cpa "$cfg/pendulum.cfg" --method crba --dot "$tmp/g.dot" --quiet
grep -q '^digraph cpa' "$tmp/g.dot" || bad "dot file"
run 2 "$@" "$mbspar" cpa "$cfg/chain.cfg" --method jcg --iterations 5 --dot "$tmp/big.dot"
grep -q 'more than 2000' "$tmp/err" || bad "dot size message"

# the stationary solvers and the spectrum estimate (Jacobi on a branched tree, Chebyshev
# without solver.rho): measured iterations, the estimate's CG steps reported
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=8 --method gs --procs 2 --json "$tmp/gs.json" --quiet
jcheck "$tmp/gs.json" "c['method'] == 'gs' and c['converged'] and c['iterations'] > 0 and c['spectrum_estimate_iterations'] == 0"
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=8 --method sor --iterations 4 --procs 4 --json "$tmp/sor.json" --quiet
jcheck "$tmp/sor.json" "c['schedule'][2]['distributed_messages'] > 0"
run 0 "$@" "$mbspar" cpa "$cfg/tree.cfg" --set model.tree.depth=4 --method jacobi --procs 2 --json "$tmp/jt.json" --quiet
jcheck "$tmp/jt.json" "c['converged'] and c['spectrum_estimate_iterations'] >= 2"
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=8 --method chebyshev --iterations 40 --procs 1 --json "$tmp/ch.json" --quiet
jcheck "$tmp/ch.json" "c['spectrum_estimate_iterations'] == 30 and not c['spectrum_estimate_converged']"

# the exact distributed solver: one rank is ABA plus the lambdas; distributed rows are the graphs
# built for P ranks (their own work, messages); no calibration (it runs on the engine only)
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=64 --method schur --procs 8 --json "$tmp/sc.json" --quiet
jcheck "$tmp/sc.json" "c['method'] == 'schur' and c['schedule'][0]['distributed_messages'] == 0"
# per-rank work by engine phase (issue 35 item 5): at P = 1 the phases add up to T1, every schur
# kind has a phase, and at P = 8 every rank has kinematics, elimination and back-substitution
ph="['kinematics', 'factor', 'interface', 'acceleration', 'other']"
jcheck "$tmp/sc.json" "sum(c['schedule'][0]['ranks'][0][p + '_flops'] for p in $ph) == c['work_flops'] and all(r['other_flops'] == 0 and r['kinematics_flops'] > 0 and r['factor_flops'] > 0 and r['acceleration_flops'] > 0 for s in c['schedule'] for r in s['ranks']) and [len(s['ranks']) for s in c['schedule']] == [1, 2, 4, 8]"
jcheck "$tmp/sc.json" "all(s['distributed_messages'] > 0 and s['distributed_s'] > 0 for s in c['schedule'][1:])"
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=64 --method aba --procs 1 --json "$tmp/sa.json" --quiet
python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['cpa']; b=json.load(open(sys.argv[2]))['cpa']; sys.exit(0 if b['work_flops'] - a['work_flops'] == 10 * 64 else 1)" "$tmp/sa.json" "$tmp/sc.json" ||
  bad "schur on one rank: ABA plus 10 flops of lambda per revolute body"
run 8 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=16 --method schur --calibrate --quiet
# ... and on a model with closed loops: the m + 2 schur solves of the loop evaluation (the
# four-bar: 5 closure equations), more work than one tree solve, messages on 2 ranks
run 0 "$@" "$mbspar" cpa "$cfg/fourbar.cfg" --method schur --procs 2 --json "$tmp/sl.json" --quiet
jcheck "$tmp/sl.json" "c['method'] == 'schur' and c['schedule'][1]['distributed_messages'] > 0 and c['schedule'][1]['distributed_s'] > 0"

# the direct solver: serial elimination along a chain (T_inf linear in N), data-flow only
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=32 --method direct --procs 2 --json "$tmp/d32.json" --quiet
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=64 --method direct --procs 2 --json "$tmp/d64.json" --quiet
python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['cpa']; b=json.load(open(sys.argv[2]))['cpa']; r=b['span_s']/a['span_s']; sys.exit(0 if 1.8 < r < 2.2 and b['schedule'][1]['distributed_s'] is None else 1)" "$tmp/d32.json" "$tmp/d64.json" ||
  bad "direct: T_inf(64)/T_inf(32) not ~2, or a distributed schedule"

# errors
run 8 "$@" "$mbspar" cpa "$cfg/pendulum.cfg" --method petsc
grep -q -- '--method petsc has no critical-path graph (graphs exist for aba' "$tmp/err" ||
  bad "no-graph message"
run 2 "$@" "$mbspar" cpa "$cfg/pendulum.cfg" --grain fine
run 2 "$@" "$mbspar" cpa "$cfg/pendulum.cfg" --iterations -1
run 2 "$@" "$mbspar" cpa "$cfg/pendulum.cfg" --latency abc

# calibration of the kernel classes (one rank is enough): the classes' measured seconds add up to
# the measured evaluation, and the calibrated graph's T1 predicts it
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=64 --method jcg --iterations 20 --calibrate --procs 2 --json "$tmp/cj.json" --quiet
jcheck "$tmp/cj.json" "sorted(k['class'] for k in c['cost_model']['classes']) == ['constraint.blocks', 'constraint.finish', 'constraint.solve', 'kinematics']"
jcheck "$tmp/cj.json" "all(k['measured_s'] > 0 and k['s_per_flop'] > 0 for k in c['cost_model']['classes'])"
jcheck "$tmp/cj.json" "abs(sum(k['measured_s'] for k in c['cost_model']['classes']) - c['cost_model']['measured_eval_s']) <= 0.25 * c['cost_model']['measured_eval_s']"
jcheck "$tmp/cj.json" "abs(c['work_s'] - c['cost_model']['measured_eval_s']) <= 0.25 * c['cost_model']['measured_eval_s']"
run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=64 --method sor --iterations 5 --calibrate --procs 1 --json "$tmp/cs.json" --quiet
jcheck "$tmp/cs.json" "'constraint.solve' in [k['class'] for k in c['cost_model']['classes']]"

# calibration (messages need two ranks)
if [ $# -gt 0 ]; then
  run 0 "$@" "$mbspar" cpa "$cfg/chain.cfg" --set model.chain.n=16 --method aba --calibrate --json "$tmp/c.json" --quiet
  jcheck "$tmp/c.json" "c['cost_model']['calibrated'] and c['cost_model']['latency_s'] != 1.5e-6 and c['cost_model']['measured_allreduce_s'] > 0"
  jcheck "$tmp/c.json" "sorted(k['class'] for k in c['cost_model']['classes']) == ['kinematics', 'recursion']"
fi

if [ "$fail" -gt 0 ]; then
  echo "cpa_cli: $fail failure(s)"
  exit 1
fi
echo "cpa_cli: all checks passed"
