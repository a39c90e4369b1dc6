#!/bin/sh
# Which build `accel` with solver.method = schur uses for a loop model at 2 ranks by default
# (docs/loops.md 9, parallel/loops_local.c; the report's model.storage):
# - the generated ladder (2 x 64 links, a rung every 8: 8 loops, closed at q0, qd0 = 0): the
#   distributed loop model, and qdd, lambda, joint_wrench, loop_lambda, loop_wrench bitwise those
#   of the replicated model (MBSPAR_LOOPS_LOCAL=0);
# - the explicit ladder with qd0 = 0.5 rad/s on left1 (off the loops' velocity equations: the
#   replicated model projects it) and configs/fourbar.cfg (a rounded q0 that the replicated model
#   assembles): the replicated model, exit 0, bitwise the results of MBSPAR_LOOPS_LOCAL=0.
# usage: ladder_default.sh MBSPAR SCRIPTS_DIR PYTHON MPIEXEC NPFLAG [MPI_PREFLAGS...]
mbspar=$1
scripts=$2
py=$3
mpiexec=$4
npflag=$5
shift 5
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_ladder_default
unset MBSPAR_LOOPS_LOCAL MBSPAR_MODEL

"$py" "$scripts/gen_ladder.py" --generated 64 8 >"$tmp/gen.cfg" || bad "gen_ladder.py --generated"
"$py" "$scripts/gen_ladder.py" 64 8 >"$tmp/exp.cfg" || bad "gen_ladder.py"
"$py" - "$tmp" <<'PY' || bad "the ladder with qd0"
import sys
t = sys.argv[1]
s = open(f"{t}/exp.cfg").read()
old = "origin = [0.0, 0.0, 0.0]; q0 = [0.3]; }"
assert s.count(old) == 1, "left1's joint not found"
open(f"{t}/qd.cfg", "w").write(s.replace(old, old[:-1] + "qd0 = [0.5]; }"))
PY
cp "$(dirname "$scripts")/configs/fourbar.cfg" "$tmp/fourbar.cfg"
for cfg in gen qd fourbar; do
  run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" accel "$tmp/$cfg.cfg" \
    --set 'solver.method="schur"' --quiet --json "$tmp/$cfg.dflt.json"
  export MBSPAR_LOOPS_LOCAL=0
  run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" accel "$tmp/$cfg.cfg" \
    --set 'solver.method="schur"' --quiet --json "$tmp/$cfg.whole.json"
  unset MBSPAR_LOOPS_LOCAL
done
"$py" - "$tmp" <<'PY' || bad "the default build against the replicated one"
import json, sys
t = sys.argv[1]
for cfg, want in (("gen", "distributed"), ("qd", "replicated"), ("fourbar", "replicated")):
    a = json.load(open(f"{t}/{cfg}.dflt.json"))
    b = json.load(open(f"{t}/{cfg}.whole.json"))
    assert a["model"]["storage"] == want, (cfg, "default", a["model"]["storage"], want)
    assert b["model"]["storage"] == "replicated", (cfg, "MBSPAR_LOOPS_LOCAL=0", b["model"]["storage"])
    for k in ("qdd", "lambda", "joint_wrench", "loop_lambda", "loop_wrench"):
        assert a[k] == b[k], (cfg, k, "not bitwise the replicated model's")
    assert len(a["loop_lambda"]) > 0, cfg
    print(cfg, a["model"]["storage"], "ok")
print("ladder_default: ok")
PY
[ "$fail" -eq 0 ] || exit 1
