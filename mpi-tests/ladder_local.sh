#!/bin/sh
# accel with solver.method = schur on the distributed loop model (MBSPAR_LOOPS_LOCAL=1 forces it:
# each rank its bodies, the bodies of every loop, every loop; docs/scaling.md "Memory",
# docs/loops.md 9; the default for accel with schur since the thirteenth session) against the
# replicated model's accel (MBSPAR_LOOPS_LOCAL=0) at the same rank count, qdd and the loop
# multipliers to 1e-12 (relative to the largest entry), at 2, 3 and 4 ranks, on
# - the generated ladder of 2 x 64 links, a rung every 8 (8 loops, 136 bodies);
# - the same ladder with two loops the generator cannot make (model.loops): a spherical cut joint
#   between the tips of left60 and right60 (no rung there) and one from the tip of left64 to the
#   ground (a ground side), both closed at q0;
# and the refusals (exit 8, one line): accel with another local method (jcg) and a q0 that does
# not close the loops (configs/fourbar.cfg: the distributed model does not assemble q0).
# usage: ladder_local.sh MBSPAR SCRIPTS_DIR PYTHON MPIEXEC NPFLAG [MPI_PREFLAGS...]
mbspar=$1
scripts=$2
py=$3
mpiexec=$4
npflag=$5
shift 5
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_ladder_local

"$py" "$scripts/gen_ladder.py" --generated 64 8 >"$tmp/gen.cfg" || bad "gen_ladder.py --generated"
"$py" - "$tmp" <<'PY' || bad "the second config"
import math, sys
t = sys.argv[1]
s = open(f"{t}/gen.cfg").read()
# both chains straight at the tilt 0.3 about y, 1 m apart in x: left k's tip + [1, 0, 0] (ground
# frame) is right k's tip; left64's tip is 0.64 m from the origin along R_y(0.3) [0, 0, -1]
th = 0.3
c, n = math.cos(th), math.sin(th)
off = [c, 0.0, n]  # R_y(0.3)^T [1, 0, 0]
tip = [-0.64 * n, 0.0, -0.64 * c]
loops = f"""
  loops = (
    {{ name = "X60"; type = "spherical";
      body1 = "left60"; frame1 = {{ origin = [{off[0]!r}, 0.0, {off[2] - 0.01!r}]; }};
      body2 = "right60"; frame2 = {{ origin = [0.0, 0.0, -0.01]; }}; }},
    {{ name = "G64"; type = "spherical";
      body1 = "left64"; frame1 = {{ origin = [0.0, 0.0, -0.01]; }};
      body2 = "ground"; frame2 = {{ origin = [{tip[0]!r}, 0.0, {tip[2]!r}]; }}; }}
  );
"""
i = s.rindex("};\nintegrator")
open(f"{t}/extra.cfg", "w").write(s[:i] + loops + s[i:])
PY
for cfg in gen extra; do
  for np in 2 3 4; do
    export MBSPAR_LOOPS_LOCAL=0
    run 0 "$mpiexec" "$npflag" "$np" "$@" "$mbspar" accel "$tmp/$cfg.cfg" \
      --set 'solver.method="schur"' --quiet --json "$tmp/$cfg.full$np.json"
    export MBSPAR_LOOPS_LOCAL=1
    run 0 "$mpiexec" "$npflag" "$np" "$@" "$mbspar" accel "$tmp/$cfg.cfg" \
      --set 'solver.method="schur"' --quiet --json "$tmp/$cfg.local$np.json"
    unset MBSPAR_LOOPS_LOCAL
  done
done
# the refusals: another local method (jcg: its closure rows need the assembled q0's rank), and a
# q0 off the loops (not assembled on the distributed model)
export MBSPAR_LOOPS_LOCAL=1
run 8 "$mpiexec" "$npflag" 2 "$@" "$mbspar" accel "$tmp/gen.cfg" --set 'solver.method="jcg"' \
  --quiet
grep -q 'MBSPAR_LOOPS_LOCAL: the distributed-memory model with 8 loops is built (bodies held per rank [0-9]* to [0-9]*;.*not .accel. with jcg' "$tmp/err" ||
  bad "jcg refusal: $(head -c 400 "$tmp/err")"
held=$(sed -n 's/.*bodies held per rank [0-9]* to \([0-9]*\);.*/\1/p' "$tmp/err" | head -1)
{ [ -n "$held" ] && [ "$held" -lt 136 ]; } || bad "MBSPAR_LOOPS_LOCAL: a rank holds ${held:-?} of 136 bodies"
run 8 "$mpiexec" "$npflag" 2 "$@" "$mbspar" accel "$(dirname "$scripts")/configs/fourbar.cfg" \
  --set 'solver.method="schur"' --quiet --json "$tmp/fourbar.json"
grep -q 'q0 does not close the loops.*MBSPAR_LOOPS_LOCAL' "$tmp/err" ||
  bad "fourbar refusal: $(head -c 400 "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "fourbar refusal: not one line: $(cat "$tmp/err")"
unset MBSPAR_LOOPS_LOCAL
"$py" - "$tmp" <<'PY' || bad "distributed loop model against the replicated one"
import json, sys
t = sys.argv[1]
def load(f):
    return json.load(open(f"{t}/{f}.json"))
for cfg, nl in (("gen", 8), ("extra", 10)):
    for np in (2, 3, 4):
        a, b = load(f"{cfg}.full{np}"), load(f"{cfg}.local{np}")
        for k in ("qdd", "loop_lambda"):
            x, y = a[k], b[k]
            scale = max(abs(v) for v in x)
            err = max(abs(u - v) for u, v in zip(x, y))
            assert len(x) == len(y) and scale > 0 and err <= 1e-12 * scale, (cfg, np, k, err, scale)
        assert a["model"]["storage"] == "replicated", (cfg, np, a["model"]["storage"])
        assert b["model"]["storage"] == "distributed", (cfg, np, b["model"]["storage"])
        assert len(a["qdd"]) == 136, len(a["qdd"])
        assert len(a["loop_lambda"]) == 3 * nl, len(a["loop_lambda"])
        print(cfg, np, "ok")
print("ladder_local: ok")
PY
[ "$fail" -eq 0 ] || exit 1
