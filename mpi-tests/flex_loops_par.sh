#!/bin/sh
# Closed loops through flexible bodies on schur's distributed elimination over the ranks (issue 34
# item 2; docs/flexible.md 15.4), configs/flex_fourbar.cfg (three bodies: at 3 ranks one each, the
# cut joint's sides on two ranks):
#  - accel with solver.method = schur at 2 and 3 ranks prints the dense oracle's qdd digits (10
#    significant) and etadd digits (6);
#  - an rk4 run (dt = 4e-4 s, 100 steps, projection on) with schur at 2 ranks ends in the state of
#    the 1-rank schur run and of the 1-rank oracle run to 1e-10 (q, eta, qd, etad), run.json
#    reports flex_part and the closure error after every step at closure_tol (1e-10).
# usage: flex_loops_par.sh MBSPAR PYTHON3 CONFIGS MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1 py=$2 configs=$3 mpiexec=$4 npflag=$5
shift 5
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_loops_par
cfg="$configs/flex_fourbar.cfg"
run 0 "$mbspar" accel "$cfg"
oracle=$(grep -A1 'qdd =' "$tmp/out" | tr '\n' ' ' | sed 's/.*qdd =//')
for n in 2 3; do
  run 0 "$mpiexec" "$npflag" "$n" "$@" "$mbspar" accel "$cfg" --set solver.method=schur
  got=$(grep -A1 'qdd =' "$tmp/out" | tr '\n' ' ' | sed 's/.*qdd =//')
  { [ -n "$oracle" ] && [ "$got" = "$oracle" ] && grep -q 'flex_part' "$tmp/out"; } ||
    bad "schur at $n ranks: qdd$got against the oracle's$oracle"
done
echo "accel: schur at 2 and 3 ranks gives the oracle's qdd =$oracle"
rk="--set integrator.method=rk4 --set integrator.dt=4e-4 --set integrator.t_end=0.04"
# shellcheck disable=SC2086 # $rk: several options
{ run 0 "$mbspar" run "$cfg" --quiet $rk --out "$tmp/o" &&
  run 0 "$mbspar" run "$cfg" --quiet $rk --set solver.method=schur --out "$tmp/s1" &&
  run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" --quiet $rk --set solver.method=schur \
    --out "$tmp/s2"; } || bad "the runs failed: $(cat "$tmp/err")"
r=$("$py" - "$tmp" <<'PY'
import json, sys
d = {k: json.load(open("%s/%s/run.json" % (sys.argv[1], k))) for k in ("o", "s1", "s2")}
def diff(a, b):
    return max(abs(x - y) for k in ("q", "eta", "qd", "etad") for x, y in zip(a[k], b[k]))
d21, d1o = diff(d["s2"], d["s1"]), diff(d["s1"], d["o"])
c = max(x["loops"]["closure_max"] for x in d.values())
print("rk4, 100 steps: 2 ranks against 1 rank %.2e, schur against the oracle %.2e, closure %.2e"
      % (d21, d1o, c))
sys.exit(0 if d21 <= 1e-10 and d1o <= 1e-10 and c <= 1e-10 and d["s2"]["steps"] == 100
         and d["s2"]["solver"]["method"] == "flex_part" and d["o"]["solver"]["method"] == "flex_oracle"
         else 1)
PY
) || bad "schur runs: $r"
echo "$r"
[ "$fail" -eq 0 ] && echo "flex_loops_par: all checks passed"
exit "$fail"
