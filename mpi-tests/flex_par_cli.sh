#!/bin/sh
# Flexible models over the ranks in the verbs (issue 34; docs/flexible.md 11):
#  - `accel` of configs/flex_chain.cfg with solver.method = schur at 1, 2 and 3 ranks reports
#    solver.method = flex_part (requested schur, the parts and cut joints) and its qdd and etadd
#    equal the serial recursive algorithm's (1 rank, aba) to 1e-9 relative;
#  - an rk4 `run` (100 steps) at 2 ranks: run.json reports flex_part over 2 parts, its final q and
#    eta equal the 1-rank run's to 1e-9 and energy.csv has the 1-rank run's rows;
#  - the refusal, one line and exit 8 on every rank: static with schur (driven runs and inverse:
#    flex_drive_par);
#  - solver.method = auto (the default) at 2 ranks: on flex_chain.cfg (16 bodies, fewer than 64
#    per rank) the serial algorithm on rank 0 alone, its qdd those of 1 rank bit for bit, and
#    `static` of flex_pendulum.cfg the 1-rank equilibrium on both ranks (not idle); on a 128-link
#    chain of the same links the distributed elimination (flex_part, requested auto, rule flexible);
#  - cpa --procs 4 of flex_chain.cfg: the distributed columns are flex_part's graph, their
#    predicted times fall from 1 to 2 to 4 ranks; --method direct: the constraint-force direct
#    method's graphs (flex_cfs_direct).
# usage: flex_par_cli.sh MBSPAR PYTHON3 CONFIGS MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1 py=$2 configs=$3 mpiexec=$4 npflag=$5
shift 5
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_par_cli
cfg=$configs/flex_chain.cfg
run 0 "$mbspar" accel "$cfg" --quiet --set solver.method=aba \
  --json "$tmp/a0.json"
for n in 1 2 3; do
  run 0 "$mpiexec" "$npflag" "$n" "$@" "$mbspar" accel "$cfg" --quiet --set solver.method=schur \
    --json "$tmp/a$n.json"
done
steps="--set integrator.method=rk4 --set integrator.dt=1e-5 --set integrator.t_end=0.001"
# shellcheck disable=SC2086
run 0 "$mbspar" run "$cfg" --quiet $steps --out "$tmp/r1"
# shellcheck disable=SC2086
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" --quiet $steps --set solver.method=schur \
  --out "$tmp/r2"
r=$("$py" - "$tmp" <<'PY'
import csv, json, sys
t = sys.argv[1]
a0 = json.load(open(t + "/a0.json"))
for n in (1, 2, 3):
    a = json.load(open("%s/a%d.json" % (t, n)))
    s = a["solver"]
    assert s["method"] == "flex_part" and s["requested"] == "schur", s
    assert s["parts"] == n and s["cut_joints"] == n - 1, s
    for key in ("qdd", "etadd"):
        ref = max(abs(v) for v in a0[key])
        d = max(abs(x - y) for x, y in zip(a[key], a0[key])) / ref
        assert d < 1e-9, (n, key, d)
r1 = json.load(open(t + "/r1/run.json"))
r2 = json.load(open(t + "/r2/run.json"))
assert r2["solver"]["method"] == "flex_part" and r2["solver"]["parts"] == 2, r2["solver"]
assert r2["steps"] == r1["steps"] == 100, (r1["steps"], r2["steps"])
for key in ("q", "eta"):
    ref = max(abs(v) for v in r1[key])
    d = max(abs(x - y) for x, y in zip(r2[key], r1[key])) / ref
    assert d < 1e-9, (key, d)
rows = [list(csv.reader(open(t + "/r%d/energy.csv" % n))) for n in (1, 2)]
assert len(rows[1]) == len(rows[0]) > 2, (len(rows[0]), len(rows[1]))
print("ok")
PY
)
[ "$r" = ok ] || bad "flex_part against the serial algorithm: $r"
run 8 "$mpiexec" "$npflag" 2 "$@" "$mbspar" static "$cfg" --quiet --set solver.method=schur
{ [ "$(grep -c 'is flexible' "$tmp/err")" -eq 1 ] &&
  grep -q 'solver.method = schur runs flexible bodies in accel, run and inverse only' "$tmp/err"; } ||
  bad "static refusal: $(cat "$tmp/err")"
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" accel "$cfg" --quiet --json "$tmp/auto2.json"
run 0 "$mbspar" accel "$cfg" --quiet --json "$tmp/auto1.json"
pend=$configs/flex_pendulum.cfg
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" static "$pend" --quiet --json "$tmp/st2.json"
run 0 "$mbspar" static "$pend" --quiet --json "$tmp/st1.json"
# 128 links of flex_chain.cfg's kind: 64 per rank at 2 ranks, auto takes the distributed method
"$py" - "$cfg" >"$tmp/c128.cfg" <<'PY'
import re, sys
link = re.search(r"flexible = \{ beam = .*?modes = 4; \}", open(sys.argv[1]).read(), re.S).group(0)
b = []
for i in range(128):
    par, org = ("ground", "") if i == 0 else ("l%d" % (i - 1), " origin = [0.25, 0, 0];")
    b.append('{ name = "l%d"; parent = "%s"; joint = { type = "revolute"; axis = [0, 1, 0];%s };'
             ' %s; }' % (i, par, org, link))
print("model = { gravity = [0, 0, -9.81]; bodies = (\n" + ",\n".join(b) + "); };")
PY
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" accel "$tmp/c128.cfg" --quiet --json "$tmp/c2.json"
# the reference: the same elimination in one part (the recursive algorithm; at 640 coordinates
# auto's serial choice would be the dense oracle, 1e-7 away on these thin links: conditioning,
# docs/flexible.md 10)
run 0 "$mbspar" accel "$tmp/c128.cfg" --quiet --set solver.method=schur --json "$tmp/c1.json"
r=$("$py" - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
a1, a2 = (json.load(open("%s/auto%d.json" % (t, n))) for n in (1, 2))
s = a2["solver"]
assert s["method"] == a1["solver"]["method"] and s["auto"] and s["auto_rule"] == "flexible", s
assert s["auto_idle_ranks"], s
assert a2["qdd"] == a1["qdd"] and a2["etadd"] == a1["etadd"], "auto at 2 ranks differs"
s1, s2 = (json.load(open("%s/st%d.json" % (t, n))) for n in (1, 2))
assert s2["solver"]["auto_rule"] == "flexible" and not s2["solver"]["auto_idle_ranks"], s2["solver"]
assert s2["solver"]["ranks_used"] == 2, s2["solver"]  # every rank (docs/flexible.md 8)
r1, r2 = ({k: v for k, v in s["results"].items() if k != "time_s"} for s in (s1, s2))
assert r2 == r1, "static at 2 ranks differs"
c1, c2 = (json.load(open("%s/c%d.json" % (t, n))) for n in (1, 2))
s = c2["solver"]
assert s["method"] == "flex_part" and s["requested"] == "auto" and s["parts"] == 2, s
assert s["auto_rule"] == "flexible" and not s["auto_idle_ranks"], s
for key in ("qdd", "etadd"):
    ref = max(abs(v) for v in c1[key])
    d = max(abs(x - y) for x, y in zip(c2[key], c1[key])) / ref
    assert d < 1e-9, (key, d)
print("ok")
PY
)
[ "$r" = ok ] || bad "auto at 2 ranks: $r"
# cpa --procs: the distributed columns are flex_part's graph (docs/cpa.md "Flexible models")
run 0 "$mbspar" cpa "$cfg" --procs 4 --quiet --json "$tmp/cpa.json"
r=$("$py" - "$tmp/cpa.json" <<'PY'
import json, math, sys
c = json.load(open(sys.argv[1]))["cpa"]
assert c["method"] == "flex_aba" and c["distributed_method"] == "flex_part", c["method"]
s = c["schedule"]
assert [x["P"] for x in s] == [1, 2, 4], s
assert all(math.isfinite(x["distributed_s"]) for x in s), s
assert s[0]["distributed_s"] > s[1]["distributed_s"] > s[2]["distributed_s"], s
assert len(s[1]["ranks"]) == 2, s[1]
print("ok")
PY
)
[ "$r" = ok ] || bad "cpa --procs of a flexible model: $r"
run 0 "$mbspar" cpa "$cfg" --method direct --procs 2 --quiet --json "$tmp/cpad.json"
r=$("$py" - "$tmp/cpad.json" <<'PY'
import json, math, sys
c = json.load(open(sys.argv[1]))["cpa"]
assert c["method"] == c["distributed_method"] == "flex_cfs_direct", c["method"]
assert all(math.isfinite(x["distributed_s"]) for x in c["schedule"]), c["schedule"]
print("ok")
PY
)
[ "$r" = ok ] || bad "cpa --method direct of a flexible model: $r"
[ "$fail" -eq 0 ] && echo "flex_par_cli: all checks passed"
exit "$fail"
