#!/bin/sh
# URDF robots as distributed-memory models (issue 35 item 4, docs/urdf.md "Memory"): a generated
# binary tree of 255 revolute links (scripts/gen_urdf_tree.py) through `accel` at several ranks
# with schur is built locally ("storage": "distributed") and gives the q̈, λ and joint wrenches of
# the one-rank aba (1e-9 relative; the replicated build gave them bitwise, 2026-11-29), and the
# streaming parse still reports a bad link behind many good ones with its line.
#   urdf_local.sh MBSPAR SRCDIR MPIEXEC ARGS...
mbspar=$1
src=$2
shift 2
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_urdf_local
python3 "$src/scripts/gen_urdf_tree.py" 255 >"$tmp/tree.urdf" || bad "gen_urdf_tree.py failed"
run 0 "$mbspar" accel "$tmp/tree.urdf" --quiet --json "$tmp/one.json"
run 0 "$@" "$mbspar" accel "$tmp/tree.urdf" --set 'solver.method="schur"' --quiet --json \
  "$tmp/par.json"
python3 - "$tmp/one.json" "$tmp/par.json" <<'PY' || bad "distributed URDF model: results differ"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert b["model"]["storage"] == "distributed", b["model"]
assert b["model"]["bodies"] == 255 and b["run"]["ranks"] > 1
for k in ("qdd", "lambda"):
    x, y = a[k], b[k]
    assert len(x) == len(y) and len(x) > 0, k
    s = max(abs(v) for v in x)
    d = max(abs(u - v) for u, v in zip(x, y))
    assert d <= 1e-9 * s, (k, d, s)
wa = [v for r in a["joint_wrench"] for v in r]; wb = [v for r in b["joint_wrench"] for v in r]
assert max(abs(u - v) for u, v in zip(wa, wb)) <= 1e-9 * max(abs(v) for v in wa)
print("distributed URDF tree of 255 links: q, lambda, joint wrenches within 1e-9 of one-rank aba")
PY
# a negative mass on the last link: the error names its line (the parse frees what it has read)
sed 's#<link name="l255">#<link name="l255"><inertial><mass value="-1"/></inertial>#' \
  "$tmp/tree.urdf" >"$tmp/bad.urdf"
run 2 "$@" "$mbspar" accel "$tmp/bad.urdf" --quiet
line=$(grep -n '<link name="l255">' "$tmp/bad.urdf" | cut -d: -f1)
grep -q "^$tmp/bad.urdf:$line: link \"l255\": negative mass -1$" "$tmp/err" ||
  bad "bad link: $(cat "$tmp/err")"
[ "$fail" -eq 0 ] && echo "urdf_local: pass"
exit "$fail"
