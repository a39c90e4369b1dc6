#!/bin/sh
# integrator.method = abm in `mbspar run` (issue 36, docs/integrator_abm.md): accuracy against a
# tight dp5 reference and proportional to the tolerance, fewer evaluations than dp5 at equal or
# better accuracy, orders of 8 or more on a smooth run, 1 and 2 ranks alike to the tolerance's
# scale, a bitwise restart from a mid-run checkpoint at 2 ranks, closed loops without a restart
# per projection, and a Runge-Kutta checkpoint refused with one line.
# usage: abm_run.sh MBSPAR CONFIGS_DIR MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1
cfg=$2
mpiexec=$3
npflag=$4
shift 4
pre="$*"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_abm
mpi() { # mpi NP ARGS...
  np=$1
  shift
  # shellcheck disable=SC2086
  "$mpiexec" "$npflag" "$np" $pre "$@"
}
chain="$cfg/chain.cfg"
# an 8-link chain released from a bent pose (smooth: no support acceleration besides gravity's)
c8="--quiet --set model.chain.n=8 --set model.chain.q0=0.3 --set integrator.t_end=0.5"

# shellcheck disable=SC2086
"$mbspar" run "$chain" --out "$tmp/ref" $c8 --set integrator.method=dp5 --set integrator.tol=1e-12 \
  --set solver.method=aba || bad "reference run"
for tol in 1e-6 1e-9; do
  # shellcheck disable=SC2086
  "$mbspar" run "$chain" --out "$tmp/a$tol" $c8 --set integrator.method=abm \
    --set integrator.tol=$tol --set solver.method=aba || bad "abm run at $tol"
  # shellcheck disable=SC2086
  "$mbspar" run "$chain" --out "$tmp/d$tol" $c8 --set integrator.method=dp5 \
    --set integrator.tol=$tol --set solver.method=aba || bad "dp5 run at $tol"
done
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/b" $c8 --set integrator.method=abm \
  --set integrator.tol=1e-9 --set solver.method=schur || bad "abm at 2 ranks"
python3 - "$tmp" <<'PY' || bad "abm accuracy, work or rank agreement"
import csv, json, sys
d = sys.argv[1]
def final(run):
    rows = list(csv.reader(open(f"{d}/{run}/trajectory.csv")))
    return [float(x) for x in rows[-1]]
def integ(run):
    return json.load(open(f"{d}/{run}/run.json"))["integrator"]
def ev(run):
    return json.load(open(f"{d}/{run}/run.json"))["solver"]["evaluations"]
ref = final("ref")
def err(run):
    x = final(run)
    assert x[0] == ref[0] == 0.5, (run, x[0])
    return max(abs(a - b) for a, b in zip(x[1:], ref[1:]))
ok = True
for tol in ("1e-6", "1e-9"):
    ea, ed = err("a" + tol), err("d" + tol)
    i = integ("a" + tol)
    print(f"tol {tol}: abm error {ea:.3e} with {ev('a' + tol)} evaluations (orders up to "
          f"{i['max_order']}, {i['rejected']} rejected, {i['restarts']} restarts); dp5 error "
          f"{ed:.3e} with {ev('d' + tol)} evaluations")
    ok &= ea <= 1e3 * float(tol)
eratio = err("a1e-9") / err("a1e-6")
print(f"error(1e-9) / error(1e-6) = {eratio:.2e} (proportional: below 1e-2)")
ok &= eratio < 1e-2
# at 1e-9: abm at least as accurate as dp5 with fewer evaluations; order 8 or more
ok &= err("a1e-9") <= err("d1e-9") and ev("a1e-9") < ev("d1e-9")
ok &= integ("a1e-9")["max_order"] >= 8
diff = max(abs(a - b) for a, b in zip(final("a1e-9"), final("b")))
print(f"1 rank (aba) and 2 ranks (schur) at tol 1e-9: final states differ by {diff:.3e} (error "
      f"against the reference {err('a1e-9'):.3e})")
ok &= diff <= 100 * 1e-9 and diff <= err("a1e-9")
sys.exit(0 if ok else 1)
PY

# bitwise restart: a 2-rank run to 0.5 s with a checkpoint every 40 steps, and a copy of its
# directory continued from the last checkpoint, end in the same state and energy rows
rs="$c8 --set integrator.method=abm --set integrator.tol=1e-8 --set solver.method=schur"
rs="$rs --set output.every=10 --set output.checkpoint_every=40"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/full" $rs || bad "abm run with checkpoints"
cp -r "$tmp/full" "$tmp/cont"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/cont" $rs --restart "$tmp/cont/checkpoint.bin" ||
  bad "abm restart"
python3 - "$tmp/full" "$tmp/cont" <<'PY' || bad "abm restart not bitwise"
import json, sys
a, b = (json.load(open(d + "/run.json")) for d in sys.argv[1:3])
ra, rb = a["results"], b["results"]
same = ra["t"] == rb["t"] and ra["q"] == rb["q"] and ra["qd"] == rb["qd"]
same &= a["integrator"]["steps_per_order"] == b["integrator"]["steps_per_order"]
rows_a, rows_b = (open(d + "/energy.csv").read().splitlines() for d in sys.argv[1:3])
print(f"abm restart at 2 ranks from a mid-run checkpoint: final state and order counts bitwise equal: {same}; energy.csv rows equal: {rows_a == rows_b}")
sys.exit(0 if same and rows_a == rows_b else 1)
PY

# closed loops: the projection after every step keeps the history (no restart per step)
"$mbspar" run "$cfg/fourbar.cfg" --out "$tmp/loop" --quiet --set integrator.method=abm \
  --set integrator.tol=1e-8 --set integrator.t_end=1 || bad "fourbar with abm"
python3 - "$tmp/loop/run.json" <<'PY' || bad "abm restarts at projections"
import json, sys
i = json.load(open(sys.argv[1]))["integrator"]
print(f"fourbar, abm at 1e-8 with projection: {i['steps']} steps, {i['restarts']} restarts, "
      f"orders up to {i['max_order']}")
sys.exit(0 if i["restarts"] <= 2 and i["max_order"] >= 6 else 1)
PY

# a checkpoint of another integrator: one line, exit 2, nothing written
# shellcheck disable=SC2086
"$mbspar" run "$chain" --out "$tmp/rk" $c8 --set integrator.method=rk4 \
  --set output.checkpoint_every=100 || bad "rk4 run"
# shellcheck disable=SC2086
"$mbspar" run "$chain" --out "$tmp/x" $c8 --set integrator.method=abm \
  --restart "$tmp/rk/checkpoint.bin" 2>"$tmp/x.err"
rc=$?
if ! { [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/x.err")" = 1 ] &&
  grep -q "checkpoint.bin:0: .*another integrator" "$tmp/x.err" && [ ! -e "$tmp/x" ]; }; then
  bad "rk4 checkpoint into abm: exit $rc, $(cat "$tmp/x.err")"
fi
cat "$tmp/x.err"
if [ $fail -eq 0 ]; then
  echo "abm_run: all checks passed"
else
  echo "abm_run: $fail failure(s)"
fi
[ $fail -eq 0 ]
