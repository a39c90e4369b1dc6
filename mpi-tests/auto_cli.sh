#!/bin/sh
# solver.method = auto (issue 32, docs/model.md "Choosing the method"): a tiny chain at 2 ranks
# runs aba on rank 0 (the cost model: schur over 2 ranks is slower), with the same trajectory as
# one rank; the 63-body spherical tree at 2 ranks runs schur when the ranks have cores of their
# own (the model predicts ~1.8x) and aba when they share them; at 4 ranks on fewer cores schur on
# one rank per core while the others wait (and relay a signal); the choice is consistent with
# the predicted times in run.json; an explicit method is not auto.
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
# 4 ranks: on a machine of fewer cores (CI's 2) schur runs on one rank per core and the others
# wait (the same trajectory as schur forced at that many ranks, byte for byte); a SIGTERM to a
# waiting rank stops the run with a checkpoint (exit 10); with 4 cores or more, all 4 run it
# shellcheck disable=SC2086
run 0 "$mpiexec" "$npflag" 4 "$@" "$mbspar" run "$cfg/tree.cfg" $short --set model.tree.depth=6 \
  --out "$tmp/t4"
act=$("$py" -c 'import json,sys; s=json.load(open(sys.argv[1]))["solver"]
print(s["method"], s["auto_active_ranks"], s["auto_ranks"])' "$tmp/t4/run.json") ||
  bad "tree np4: run.json"
echo "tree depth 6 at 4 ranks: method, active ranks, ranks predicted: $act"
case "$act" in
"schur 4 4") ;;
schur\ [23]\ [23])
  a=${act#schur }
  a=${a% *}
  # shellcheck disable=SC2086
  run 0 "$mpiexec" "$npflag" "$a" "$@" "$mbspar" run "$cfg/tree.cfg" $short \
    --set model.tree.depth=6 --set solver.method=schur --out "$tmp/t4s"
  cmp -s "$tmp/t4/trajectory.csv" "$tmp/t4s/trajectory.csv" ||
    bad "tree np4, schur on $a active ranks: trajectory differs from schur at $a ranks"
  # a signal to a waiting rank (the last) reaches the run through rank 0
  # shellcheck disable=SC2086
  "$mpiexec" "$npflag" 4 "$@" "$mbspar" run "$cfg/tree.cfg" --quiet --set model.tree.depth=6 \
    --set output.every=1 --set integrator.t_end=100 --out "$tmp/t4g" 2>"$tmp/t4g.err" &
  launcher=$!
  n=0
  while [ "$(wc -l 2>/dev/null <"$tmp/t4g/energy.csv" || echo 0)" -lt 5 ] && [ $n -lt 600 ]; do
    sleep 0.1
    n=$((n + 1))
  done
  for p in $(pgrep -P "$launcher"); do
    r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    [ "$r" = 3 ] && kill -TERM "$p"
  done
  wait "$launcher"
  rc=$?
  { [ "$rc" -eq 10 ] && [ -s "$tmp/t4g/checkpoint.bin" ] && grep -q "SIGTERM received" "$tmp/t4g.err"; } ||
    bad "tree np4: SIGTERM to waiting rank 3: exit $rc, $(cat "$tmp/t4g.err")"
  ;;
*) bad "tree depth 6 at 4 ranks: want schur on 2-4 ranks, got $act" ;;
esac
# shellcheck disable=SC2086
run 0 "$mbspar" run "$cfg/chain.cfg" $short --set model.chain.n=4 --set solver.method=schur \
  --out "$tmp/s1"
r=$(js "$tmp/s1") || bad "explicit schur: run.json"
[ "$r" = "schur 0 0 0" ] || bad "explicit schur: got $r"
[ "$fail" -eq 0 ] && echo "auto_cli: passed" || echo "auto_cli: $fail failure(s)"
[ "$fail" -eq 0 ]
