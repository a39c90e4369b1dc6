#!/bin/sh
# The ladder generator (model.ladder, docs/model.md "Ladder generator") against the explicit
# ladder of scripts/gen_ladder.py, 2 x 64 links and a rung every 8 (8 loops):
# - one rank: the generated and the explicit form give bitwise the same model report (bodies,
#   loops, closure rank, assembly) and the same accel, qdd and loop multipliers (aba, and schur);
# - schur at 2 and 4 ranks on the generated form: qdd and the loop multipliers equal to one rank's
#   to 1e-12 (relative to the largest entry).
# usage: ladder_gen.sh MBSPAR SCRIPTS_DIR PYTHON MPIEXEC NPFLAG [MPI_PREFLAGS...]
mbspar=$1
scripts=$2
py=$3
mpiexec=$4
npflag=$5
shift 5
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_ladder_gen

"$py" "$scripts/gen_ladder.py" 64 8 >"$tmp/explicit.cfg" || bad "gen_ladder.py"
"$py" "$scripts/gen_ladder.py" --generated 64 8 >"$tmp/gen.cfg" || bad "gen_ladder.py --generated"
for form in explicit gen; do
  run 0 "$mbspar" accel "$tmp/$form.cfg" --quiet --json "$tmp/$form.aba.json"
  run 0 "$mbspar" accel "$tmp/$form.cfg" --set 'solver.method="schur"' --quiet \
    --json "$tmp/$form.schur.json"
done
for np in 2 4; do
  run 0 "$mpiexec" "$npflag" "$np" "$@" "$mbspar" accel "$tmp/gen.cfg" \
    --set 'solver.method="schur"' --quiet --json "$tmp/gen.schur$np.json"
done
"$py" - "$tmp" <<'PY' || bad "generated ladder against the explicit one"
import json, sys
t = sys.argv[1]
def load(f):
    return json.load(open(f"{t}/{f}.json"))
for meth in ("aba", "schur"):
    e, g = load(f"explicit.{meth}"), load(f"gen.{meth}")
    assert e["model"]["bodies"] == g["model"]["bodies"] == 136, (e["model"], g["model"])
    # the whole model section (counts, mass, depth, loops: rank, redundant rows, velocity
    # map, assembly) bitwise, but for the storage line
    assert e["model"] == g["model"], meth
    for k in ("qdd", "loop_lambda"):
        assert e[k] == g[k], (meth, k)  # bitwise: the same doubles
    assert len(e["qdd"]) == 136 and max(abs(x) for x in e["qdd"]) > 1
one = load("gen.schur")
for np in (2, 4):
    d = load(f"gen.schur{np}")
    assert d["ranks"] == np or d["ranks"].get("count", np) == np, d["ranks"]
    for k in ("qdd", "loop_lambda"):
        a, b = one[k], d[k]
        scale = max(abs(x) for x in a)
        err = max(abs(x - y) for x, y in zip(a, b))
        assert len(a) == len(b) and err <= 1e-12 * scale, (np, k, err, scale)
print("ladder_gen: ok")
PY
[ "$fail" -eq 0 ] || exit 1
