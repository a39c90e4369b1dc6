#!/bin/sh
# Closed loops through flexible bodies on schur's distributed elimination over the ranks (issue 34
# item 2; docs/flexible.md 15.4), configs/flex_fourbar.cfg (three bodies: at 3 ranks one each, the
# cut joint's sides on two ranks):
#  - accel with solver.method = schur at 2 and 3 ranks prints the dense oracle's qdd digits (10
#    significant) and etadd digits (6);
#  - an rk4 run (dt = 4e-4 s, 100 steps, projection on) with schur at 2 ranks ends in the state of
#    the 1-rank schur run and of the 1-rank oracle run to 1e-10 (q, eta, qd, etad), run.json
#    reports flex_part and the closure error after every step at closure_tol (1e-10);
#  - solver.method = auto at 2 ranks on a 128-link chain of flex_chain.cfg's links closed by a
#    revolute cut joint from the last link's tip to the 64th link's (64 bodies per rank) takes
#    the distributed elimination (flex_part, rule flexible) and equals schur at 1 rank to 1e-9
#    relative (the dense oracle is about 1e-7 away on these thin links: conditioning,
#    docs/flexible.md 10).
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
"$py" - "$configs/flex_chain.cfg" >"$tmp/c128.cfg" <<'PY'
import re, sys
link = re.search(r"flexible = \{ beam = .*?modes = 4; \}", open(sys.argv[1]).read(), re.S).group(0)
b = []
for i in range(128):
    par, org = ("ground", "") if i == 0 else ("l%d" % (i - 1), " origin = [0.25, 0, 0];")
    b.append('{ name = "l%d"; parent = "%s"; joint = { type = "revolute"; axis = [0, 1, 0];%s };'
             ' %s; }' % (i, par, org, link))
print("model = { gravity = [0, 0, -9.81]; bodies = (\n" + ",\n".join(b) + ");\n"
      'loops = ({ name = "C"; type = "revolute"; body1 = "l127"; frame1 = { origin = [0.25, 0, 0];'
      ' axis = [0, 1, 0]; }; body2 = "l63"; frame2 = { origin = [16.25, 0, 0]; axis = [0, 1, 0]; };'
      " }); };")
PY
{ run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" accel "$tmp/c128.cfg" --quiet \
    --set solver.method=auto --json "$tmp/c2.json" &&
  run 0 "$mbspar" accel "$tmp/c128.cfg" --quiet --set solver.method=schur --json "$tmp/c1.json"; } ||
  bad "the 128-link loop failed: $(cat "$tmp/err")"
r=$("$py" - "$tmp" <<'PY'
import json, sys
a, b = (json.load(open("%s/c%d.json" % (sys.argv[1], n))) for n in (2, 1))
s = a["solver"]
ya, yb = a["qdd"] + a["etadd"], b["qdd"] + b["etadd"]
d = max(abs(u - v) for u, v in zip(ya, yb)) / max(abs(v) for v in yb)
print("auto at 2 ranks on the closed 128-link chain: %s (rule %s), %.2e of schur at 1 rank"
      % (s["method"], s.get("auto_rule"), d))
sys.exit(0 if s["method"] == "flex_part" and s.get("auto_rule") == "flexible" and d < 1e-9 else 1)
PY
) || bad "auto with loops: $r"
echo "$r"
[ "$fail" -eq 0 ] && echo "flex_loops_par: all checks passed"
exit "$fail"
