#!/bin/sh
# solver.method = auto (issue 32, docs/model.md "Choosing the method"): a tiny chain at 2 ranks
# runs aba on rank 0 (the cost model: schur over 2 ranks is slower), with the same trajectory as
# one rank; the 63-body spherical tree at 2 ranks runs schur when the ranks have cores of their
# own (the model predicts ~1.8x) and aba when they share them; the choice is consistent with the
# predicted times in run.json; an explicit method is not auto.
# usage: auto_cli.sh MBSPAR CONFIGS_DIR PYTHON3 MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1 cfg=$2 py=$3 mpiexec=$4 npflag=$5
shift 5
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_auto
short="--quiet --set integrator.t_end=0.004 --set output.every=1"
loud="--set integrator.t_end=0.004 --set output.every=1"
# solver JSON: METHOD AUTO IDLE, and the choice against the predictions (margin 1.25)
js() {
  "$py" - "$1/run.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["solver"]
p = s.get("predicted_s", {})
if s["auto"]:
    serial = min(v for k, v in p.items() if k in ("aba", "crba", "direct"))
    dist = p.get("schur", float("inf"))
    want = "schur" if dist * 1.25 < serial else min(
        (v, k) for k, v in p.items() if k in ("aba", "crba", "direct"))[1]
    assert s["method"] == want, (s["method"], p)
print(s["method"], int(s["auto"]), int(s.get("auto_idle_ranks", 0)),
      int(s.get("auto_slowdown", 1) > 1))
PY
}
# shellcheck disable=SC2086 # $short and "$@" (mpiexec preflags) are word lists
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg/chain.cfg" $short --set model.chain.n=4 \
  --out "$tmp/c2"
r=$(js "$tmp/c2") || bad "chain n=4 np2: run.json"
[ "${r% *}" = "aba 1 1" ] || bad "chain n=4 at 2 ranks: want aba on rank 0 (auto, idle ranks), got $r"
# shellcheck disable=SC2086
run 0 "$mbspar" run "$cfg/chain.cfg" $loud --set model.chain.n=4 --out "$tmp/c1"
cmp -s "$tmp/c1/trajectory.csv" "$tmp/c2/trajectory.csv" ||
  bad "aba on rank 0 of 2 ranks: trajectory differs from one rank"
grep -q "solver: auto -> aba (model: aba" "$tmp/out" || bad "summary line: $(cat "$tmp/out")"
# shellcheck disable=SC2086
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg/tree.cfg" $short --set model.tree.depth=6 \
  --out "$tmp/t2"
r=$(js "$tmp/t2") || bad "tree np2: run.json"
case "$r" in
"schur 1 0 0" | "aba 1 1 1") ;;
*) bad "tree depth 6 at 2 ranks: want schur (own cores) or aba (shared), got $r" ;;
esac
echo "tree depth 6 at 2 ranks: $r"
# shellcheck disable=SC2086
run 0 "$mbspar" run "$cfg/chain.cfg" $short --set model.chain.n=4 --set solver.method=schur \
  --out "$tmp/s1"
r=$(js "$tmp/s1") || bad "explicit schur: run.json"
[ "$r" = "schur 0 0 0" ] || bad "explicit schur: got $r"
[ "$fail" -eq 0 ] && echo "auto_cli: passed" || echo "auto_cli: $fail failure(s)"
[ "$fail" -eq 0 ]
