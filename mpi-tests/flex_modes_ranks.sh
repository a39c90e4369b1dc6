#!/bin/sh
# `modes` and `static` over the ranks (issue 34 items 3, 4; docs/flexible.md 7, 8, 13.5): the
# linearisation's columns split over N ranks (mbs_colsplit.h) give the 1-rank results bit for
# bit (every column is the same serial evaluation whichever rank does it; the gather copies
# bits), and so does the flexible static (the drainage replicated, the Newton polish's columns
# split):
#  - modes of configs/flex_chain.cfg (80 coordinates) at q0 and of flex_pendulum.cfg at the
#    static equilibrium (--at static: its Newton polish split too), of the rigid
#    configs/chain.cfg: results equal to 1 rank's except linearisation.column_parts = N (and
#    the wall time linearisation.time_s);
#  - static of flex_pendulum.cfg with auto (the default) and with aba: results equal to 1 rank's
#    (time_s aside), solver.ranks_used = N, auto_idle_ranks false, at least one Newton step.
# usage: flex_modes_ranks.sh N MBSPAR PYTHON3 CONFIGS MPIEXEC NPFLAG [PREFLAGS...]
n=$1 mbspar=$2 py=$3 configs=$4 mpiexec=$5 npflag=$6
shift 6
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_modes_ranks
pend=$configs/flex_pendulum.cfg
for k in 1 "$n"; do
  run 0 "$mpiexec" "$npflag" "$k" "$@" "$mbspar" modes "$configs/flex_chain.cfg" --quiet \
    --json "$tmp/m$k.json"
  run 0 "$mpiexec" "$npflag" "$k" "$@" "$mbspar" modes "$pend" --at static --quiet \
    --json "$tmp/p$k.json"
  run 0 "$mpiexec" "$npflag" "$k" "$@" "$mbspar" modes "$configs/chain.cfg" --quiet \
    --json "$tmp/r$k.json"
  run 0 "$mpiexec" "$npflag" "$k" "$@" "$mbspar" static "$pend" --quiet --json "$tmp/s$k.json"
done
run 0 "$mpiexec" "$npflag" "$n" "$@" "$mbspar" static "$pend" --quiet --set solver.method=aba \
  --json "$tmp/a$n.json"
r=$("$py" - "$tmp" "$n" <<'PY'
import json, sys
t, n = sys.argv[1], int(sys.argv[2])
def load(name):
    return json.load(open("%s/%s.json" % (t, name)))
for c in ("m", "p", "r"):
    a, b = load(c + "1")["results"], load(c + str(n))["results"]
    assert a["linearisation"].pop("column_parts") == 1, c
    assert b["linearisation"].pop("column_parts") == n, c
    a["linearisation"].pop("time_s"), b["linearisation"].pop("time_s")  # wall times
    assert a == b, (c, [k for k in a if a[k] != b[k]])
    assert len(a["omega"]) > 0 and a["linearisation"]["n"] > 1, c
s1 = load("s1")
for name in ("s%d" % n, "a%d" % n):
    s = load(name)
    assert s["solver"]["ranks_used"] == n and not s["solver"].get("auto_idle_ranks"), s["solver"]
    r1, r2 = ({k: v for k, v in x["results"].items() if k != "time_s"} for x in (s1, s))
    assert r1 == r2, (name, [k for k in r1 if r1[k] != r2[k]])
assert s1["results"]["converged"] and s1["results"]["newton_steps"] >= 1, s1["results"]
print("ok")
PY
)
[ "$r" = ok ] || bad "$n ranks against 1: $r"
[ "$fail" -eq 0 ] && echo "flex_modes_ranks: all checks passed at $n ranks"
exit "$fail"
