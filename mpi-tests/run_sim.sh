#!/bin/sh
# Acceptance tests of `mbspar run` (issue 4): energy drift, integrator agreement, pendulum period,
# rank independence, bitwise restart, signal checkpointing and bad-checkpoint refusal.
# usage: run_sim.sh MBSPAR CONFIGS_DIR MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1
cfg=$2
mpiexec=$3
npflag=$4
shift 4
pre="$*"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_sim
start=$(date +%s)
part() { echo "== part $1 ($(($(date +%s) - start)) s)"; }
mpi() { # mpi NP ARGS...
  np=$1
  shift
  # shellcheck disable=SC2086
  "$mpiexec" "$npflag" "$np" $pre "$@"
}
chain="$cfg/chain.cfg"
# a conservative 64-link chain that dt = 1e-3 resolves: 1 m links, hanging, first joint at 0.2 rad
q0=$(python3 -c "print('[' + ','.join(['0.2'] + ['0.0'] * 63) + ']')")
c64="--set model.chain.n=64 --set model.chain.length=1 --set model.gravity=[0,0,-9.81]"
c64="$c64 --set model.chain.q0=$q0"

part 1
# 1. energy: a conservative 64-body chain with dp5, tol 1e-9, for 10 s (serial ABA dynamics so
#    the integrator is what is measured): relative drift of the total energy below 1e-6
# shellcheck disable=SC2086
"$mbspar" run "$chain" --out "$tmp/e" --quiet $c64 --set integrator.method=dp5 \
  --set integrator.tol=1e-9 --set integrator.t_end=10 --set integrator.dt=1e-4 \
  --set solver.method=aba --set output.every=20 || bad "energy run failed"
python3 - "$tmp/e/energy.csv" <<'PY' || bad "energy drift"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
e0 = float(rows[0]["total"])
drift = max(abs(float(r["total"]) - e0) for r in rows)
kemax = max(float(r["kinetic"]) for r in rows)
print(f"energy: |E0| = {abs(e0):.6g} J, max |E - E0| = {drift:.3e} J "
      f"({drift / abs(e0):.3e} of |E0|, {drift / kemax:.3e} of max KE) over t = {rows[-1]['t']} s")
sys.exit(0 if float(rows[-1]["t"]) == 10 and drift / abs(e0) < 1e-6 and drift / kemax < 1e-6 else 1)
PY

part 2
# 2. RK4 with dt = 1e-3 matches dp5 (tol 1e-9) at t = 1 s to 1e-6, with the parallel engine
for m in rk4 dp5; do
  # shellcheck disable=SC2086
  "$mbspar" run "$chain" --out "$tmp/$m" --quiet $c64 --set integrator.method=$m \
    --set integrator.dt=1e-3 --set integrator.tol=1e-9 --set integrator.t_end=1 \
    --set solver.tol=1e-12 --set output.every=1000 || bad "$m run failed"
done
python3 - "$tmp/rk4/run.json" "$tmp/dp5/run.json" <<'PY' || bad "rk4 vs dp5"
import json, sys
a, b = (json.load(open(f))["results"] for f in sys.argv[1:3])
d = max(abs(x - y) for x, y in zip(a["q"] + a["qd"], b["q"] + b["qd"]))
print(f"rk4 (dt 1e-3) vs dp5 (tol 1e-9) at t = {a['t']}: max |difference| of q, qd = {d:.3e}")
sys.exit(0 if abs(a["t"] - 1) < 1e-12 and abs(b["t"] - 1) < 1e-12 and d <= 1e-6 else 1)
PY

part 3
# 3. small-amplitude pendulum period = 2 pi sqrt(I / (m g d)) to 1e-4
"$mbspar" run "$cfg/pendulum.cfg" --out "$tmp/p" --quiet --set 'model.bodies[0].joint.q0=[0.01]' \
  --set integrator.method=dp5 --set integrator.tol=1e-12 --set integrator.dt=1e-3 \
  --set integrator.t_end=4.0 --set output.every=1 || bad "pendulum run failed"
python3 - "$tmp/p/trajectory.csv" <<'PY' || bad "pendulum period"
import csv, math, sys
rows = [(float(r["t"]), float(r["q_rod"])) for r in csv.DictReader(open(sys.argv[1]))]
# downward zero crossings, linear interpolation
cross = [t0 + (t1 - t0) * q0 / (q0 - q1) for (t0, q0), (t1, q1) in zip(rows, rows[1:]) if q0 > 0 >= q1]
T = (cross[-1] - cross[0]) / (len(cross) - 1)
m, d, Ic = 1.0, 0.5, 0.083358333333333
Tref = 2 * math.pi * math.sqrt((Ic + m * d * d) / (m * 9.81 * d)) * (1 + 0.01 ** 2 / 16)
print(f"pendulum: period {T:.9f} s vs 2 pi sqrt(I/(m g d)) (1 + q0^2/16) = {Tref:.9f} s, "
      f"relative difference {abs(T - Tref) / Tref:.2e} over {len(cross) - 1} periods")
sys.exit(0 if len(cross) >= 2 and abs(T - Tref) / Tref <= 1e-4 else 1)
PY

part 4
# 4. the same run at 1, 2 and 4 ranks gives the same trajectory (J-CG, tol 1e-12)
for np in 1 2 4; do
  mpi $np "$mbspar" run "$chain" --out "$tmp/r$np" --quiet --set model.chain.n=24 \
    --set integrator.t_end=0.05 --set solver.tol=1e-12 --set output.every=10 || bad "np $np run"
done
python3 - "$tmp"/r1/run.json "$tmp"/r2/run.json "$tmp"/r4/run.json <<'PY' || bad "rank independence"
import json, sys
res = [json.load(open(f))["results"] for f in sys.argv[1:]]
ref = res[0]["q"] + res[0]["qd"]
scale = max(abs(x) for x in ref)
worst = max(max(abs(x - y) for x, y in zip(ref, r["q"] + r["qd"])) for r in res[1:])
print(f"ranks 1, 2, 4: max |difference| of the final q, qd = {worst:.3e} (scale {scale:.3g})")
sys.exit(0 if worst <= 1e-8 * max(scale, 1.0) else 1)
PY

part 5
# 5. restart: a run stopped at t = 0.02 by its checkpoint and continued ends bitwise in the
#    state of an uninterrupted run to t = 0.04 (same rank count)
common="--quiet --set model.chain.n=24 --set solver.tol=1e-10 --set output.every=5"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/full" $common --set integrator.t_end=0.04 || bad "full run"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/half" $common --set integrator.t_end=0.02 \
  --set output.checkpoint_every=20 || bad "first half"
[ -f "$tmp/half/checkpoint.bin" ] || bad "no checkpoint written"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/half" $common --set integrator.t_end=0.04 \
  --restart "$tmp/half/checkpoint.bin" || bad "restarted run"
python3 - "$tmp/full/run.json" "$tmp/half/run.json" "$tmp/full/energy.csv" "$tmp/half/energy.csv" <<'PY' || bad "restart not bitwise"
import json, sys
a, b = (json.load(open(f))["results"] for f in sys.argv[1:3])
same = a["t"] == b["t"] and a["q"] == b["q"] and a["qd"] == b["qd"]
rows_a, rows_b = (open(f).read().splitlines() for f in sys.argv[3:5])
print(f"restart: final state bitwise equal: {same}; energy.csv rows equal: {rows_a == rows_b}")
sys.exit(0 if same and rows_a == rows_b else 1)
PY
# ... and with joint damping, constant joint forces and a spring-damper (model.forces): the work
#    column of energy.csv sums the power over the ranks at every step, so the continued run's
#    work equals the uninterrupted run's bitwise too (before issue 30 each rank summed its own
#    power and rank 0 took the checkpoint's total: the last digits of work differed)
sd='model.forces=({name="sd"; type="spring"; body1="ground"; point1=[0.0,0.0,0.0]; body2="link24";'
sd="$sd point2=[0.0,0.0,0.0]; stiffness=0.01; rest_length=0.45; damping=0.0005;})"
damp="$common --set model.chain.damping=1e-6 --set model.chain.force=1e-4"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/dfull" $damp --set "$sd" --set integrator.t_end=0.04 ||
  bad "damped full run"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/dhalf" $damp --set "$sd" --set integrator.t_end=0.02 \
  --set output.checkpoint_every=20 || bad "damped first half"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" $damp --set "$sd" --set integrator.t_end=0.04 \
  --restart "$tmp/dhalf/checkpoint.bin" || bad "damped restarted run"
python3 - "$tmp/dfull" "$tmp/dhalf" <<'PY' || bad "restart with damping, forces, spring-damper not bitwise"
import json, sys
a, b = (json.load(open(d + "/run.json"))["results"] for d in sys.argv[1:3])
same = a["t"] == b["t"] and a["q"] == b["q"] and a["qd"] == b["qd"] and a["energy"] == b["energy"]
rows_a, rows_b = (open(d + "/energy.csv").read().splitlines() for d in sys.argv[1:3])
print(f"restart with damping, joint forces, a spring-damper: final state and energies bitwise "
      f"equal: {same} (work {b['energy']['work']:.17g}); energy.csv rows equal: {rows_a == rows_b}")
sys.exit(0 if same and rows_a == rows_b and a["energy"]["work"] != 0 else 1)
PY
# ... and with chebyshev on a 128-link chain, whose first solve widens the cached interval after a
# stall (docs/formulation.md 3.5): the checkpoint must carry the widened interval
cheb="--quiet --set model.chain.n=128 --set solver.method=chebyshev --set solver.max_iter=50000"
cheb="$cheb --set solver.tol=1e-10 --set output.every=5"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/cfull" $cheb --set integrator.t_end=0.04 || bad "cheb full"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/chalf" $cheb --set integrator.t_end=0.02 \
  --set output.checkpoint_every=20 || bad "cheb first half"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/chalf" $cheb --set integrator.t_end=0.04 \
  --restart "$tmp/chalf/checkpoint.bin" || bad "cheb restarted run"
python3 - "$tmp/cfull/run.json" "$tmp/chalf/run.json" <<'PY' || bad "chebyshev restart not bitwise"
import json, sys
a, b = (json.load(open(f))["results"] for f in sys.argv[1:3])
same = a["t"] == b["t"] and a["q"] == b["q"] and a["qd"] == b["qd"]
print(f"restart with chebyshev's widened interval: final state bitwise equal: {same}")
sys.exit(0 if same else 1)
PY
# ... and the solver's counters: at tol 1e-14 jcg on a 64-link chain stops at the rounding floor
# (stagnated) after restarts from b - A lambda (docs/formulation.md 3.2.1); run.json counts both,
# and a restarted run continues the counts from its checkpoint
stag="--quiet --set model.chain.n=64 --set solver.method=jcg --set solver.tol=1e-14 --set output.every=5"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/sfull" $stag --set integrator.t_end=0.01 2>/dev/null || bad "stagnated full"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/shalf" $stag --set integrator.t_end=0.005 \
  --set output.checkpoint_every=5 2>/dev/null || bad "stagnated first half"
# shellcheck disable=SC2086
mpi 2 "$mbspar" run "$chain" --out "$tmp/shalf" $stag --set integrator.t_end=0.01 \
  --restart "$tmp/shalf/checkpoint.bin" 2>/dev/null || bad "stagnated restarted run"
python3 - "$tmp/sfull/run.json" "$tmp/shalf/run.json" <<'PY' || bad "solver counters"
import json, sys
a, b = (json.load(open(f))["solver"] for f in sys.argv[1:3])
keys = ("evaluations", "total_iterations", "nonconverged", "stagnated", "restarts")
print("jcg at tol 1e-14: " + ", ".join(f"{k} {a[k]}" for k in keys) + f"; after a restart: "
      + ", ".join(f"{b[k]}" for k in keys))
ok = all(a[k] == b[k] for k in keys) and a["restarts"] > 0
ok = ok and 0 < a["stagnated"] <= a["nonconverged"] <= a["evaluations"]
sys.exit(0 if ok else 1)
PY

part 6
# 6. SIGTERM (direct) and SIGUSR1 (through mpiexec): finish the step, checkpoint, exit 10; the
#    checkpoint continues to the end
sig_test() { # sig_test NAME SIGNAL NP
  name=$1
  sig=$2
  np=$3
  out="$tmp/$name"
  # the signal must reach mbspar itself or mpiexec (which forwards SIGUSR1), not a subshell
  if [ "$np" -eq 0 ]; then
    "$mbspar" run "$chain" --out "$out" --quiet --set model.chain.n=24 --set integrator.t_end=100 \
      --set output.every=1 2>"$tmp/$name.err" &
  else
    # shellcheck disable=SC2086
    "$mpiexec" "$npflag" "$np" $pre "$mbspar" run "$chain" --out "$out" --quiet \
      --set model.chain.n=24 --set integrator.t_end=100 --set output.every=1 2>"$tmp/$name.err" &
  fi
  pid=$!
  n=0
  while [ "$(wc -l 2>/dev/null <"$out/energy.csv" || echo 0)" -lt 5 ] && [ $n -lt 600 ]; do
    sleep 0.1
    n=$((n + 1))
  done
  kill "-$sig" $pid
  wait $pid
  rc=$?
  [ $rc -eq 10 ] || bad "$name: exit $rc after SIG$sig (want 10); stderr: $(cat "$tmp/$name.err")"
  [ -f "$out/checkpoint.bin" ] || bad "$name: no checkpoint after SIG$sig"
  grep -q "SIG$sig received: stopped at t = " "$tmp/$name.err" || bad "$name: message"
  [ "$(grep -c . "$tmp/$name.err")" -eq 1 ] || bad "$name: stderr is not one line"
  # continue to a near end time from the checkpoint
  tcut=$(python3 -c "import json;print(json.load(open('$out/run.json'))['results']['t'] + 0.003)")
  if [ "$np" -eq 0 ]; then
    "$mbspar" run "$chain" --out "$out" --quiet --set model.chain.n=24 --set integrator.t_end="$tcut" \
      --set output.every=1 --restart "$out/checkpoint.bin" || bad "$name: restart failed"
  else
    mpi "$np" "$mbspar" run "$chain" --out "$out" --quiet --set model.chain.n=24 \
      --set integrator.t_end="$tcut" --set output.every=1 --restart "$out/checkpoint.bin" ||
      bad "$name: restart failed"
  fi
  python3 - "$out/energy.csv" "$tcut" <<'PY' || bad "$name: continued run"
import csv, sys
t = [float(r["t"]) for r in csv.DictReader(open(sys.argv[1]))]
ok = all(b > a for a, b in zip(t, t[1:])) and abs(t[-1] - float(sys.argv[2])) < 1e-12
print(f"signal restart: {len(t)} rows, strictly increasing times, ends at {t[-1]}: {ok}")
sys.exit(0 if ok else 1)
PY
}
sig_test sigterm TERM 0
sig_test sigusr1 USR1 2

part 7
# 7. bad checkpoints are refused with exit 2 and one FILE:0: line
ck="$tmp/half/checkpoint.bin"
size=$(wc -c <"$ck")
head -c $((size - 100)) "$ck" >"$tmp/trunc.bin"
python3 -c "
import sys; b = bytearray(open('$ck','rb').read()); b[len(b) // 2] ^= 0xFF
open('$tmp/corrupt.bin','wb').write(b)"
printf 'not a checkpoint at all' >"$tmp/garbage.bin"
refuse() { # refuse FILE FRAGMENT [extra args]
  f=$1
  frag=$2
  shift 2
  "$mbspar" run "$chain" --out "$tmp/refuse" --force --quiet --set model.chain.n=24 \
    --set integrator.t_end=0.04 --restart "$f" "$@" 2>"$tmp/refuse.err"
  rc=$?
  [ $rc -eq 2 ] || bad "refuse $f: exit $rc (want 2)"
  grep -q "$frag" "$tmp/refuse.err" || bad "refuse $f: message '$(cat "$tmp/refuse.err")' lacks '$frag'"
  [ "$(grep -c . "$tmp/refuse.err")" -eq 1 ] || bad "refuse $f: not one line"
  grep -q "^$f:0: " "$tmp/refuse.err" || bad "refuse $f: no FILE:0: prefix"
}
refuse "$tmp/trunc.bin" "truncated"
refuse "$tmp/corrupt.bin" "corrupt"
refuse "$tmp/garbage.bin" "not an mbspar checkpoint"
refuse "$ck" "another model" --set model.chain.mass=0.02
refuse "$ck" "another model" --set model.chain.n=25
refuse "$tmp/missing.bin" "cannot open"
# a directory (say the run's --out) is a usage error naming the file meant, at 1 and 2 ranks
# (it was "out of memory", exit 4: issue 12)
for np in 1 2; do
  mpi "$np" "$mbspar" run "$chain" --out "$tmp/refuse" --force --quiet --set model.chain.n=24 \
    --restart "$tmp/half" >"$tmp/refuse.out" 2>"$tmp/refuse.err"
  rc=$?
  [ $rc -eq 2 ] || bad "restart from a directory at $np rank(s): exit $rc (want 2)"
  [ "$(grep -c . "$tmp/refuse.err")" -eq 1 ] || bad "restart from a directory: not one line"
  grep -q "^mbspar: --restart $tmp/half: is a directory, not a checkpoint file" "$tmp/refuse.err" ||
    bad "restart from a directory: message '$(cat "$tmp/refuse.err")'"
  [ ! -s "$tmp/refuse.out" ] || bad "restart from a directory: output on stdout"
done

part end
part quaternions
# the post-step hook renormalises the joint quaternions after every step (TSStep alone does not
# call it): on a spherical-joint tree with large steps their norms stay 1 to rounding, at 2 ranks
mpi 2 "$mbspar" run "$cfg/tree.cfg" --out "$tmp/quat" --quiet --set model.tree.depth=4 \
  --set integrator.t_end=0.5 --set integrator.dt=5e-3 --set output.every=1 || bad "quaternion run failed"
python3 - "$tmp/quat/trajectory.csv" <<'PY' || bad "quaternion norms drift"
import csv, math, sys
rows = list(csv.reader(open(sys.argv[1])))
h = rows[0]
cols = [i for i, n in enumerate(h) if n.endswith("_qw")]
worst = max(abs(math.sqrt(sum(float(r[i + k]) ** 2 for k in range(4))) - 1) for r in rows[1:] for i in cols)
print("quaternion norms: %d rows, %d joints, worst |norm - 1| %.2e" % (len(rows) - 1, len(cols), worst))
sys.exit(0 if len(cols) > 0 and worst < 1e-13 else 1)
PY

if [ $fail -eq 0 ]; then
  echo "run_sim: all checks passed"
else
  echo "run_sim: $fail failure(s)"
fi
[ $fail -eq 0 ]
