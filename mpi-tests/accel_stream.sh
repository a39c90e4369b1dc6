#!/bin/sh
# accel on a distributed-memory model streams q̈, λ and the joint wrenches to rank 0 chunk by
# chunk while it writes (parallel/accel_stream.c, docs/scaling.md "Memory"). A chain of 20000
# links with schur at NP ranks: rank 0's slices and the others' cross the 49152-double chunk
# (the wrenches: 60000 doubles a rank at 2 ranks). Against the replicated model
# (MBSPAR_MODEL=full: the engine's results gathered whole, mbsp_engineGather) the report's qdd,
# lambda and joint_wrench must be equal to the last bit (the same engine and decomposition), in
# both targets (--json FILE and --out DIR's accel.json), and the table's |qdd| and first values
# the same. A write failure while streaming (--json /dev/full) fails with exit 3 and one line,
# no hang (the other ranks are released), no file left.
# usage: accel_stream.sh MBSPAR CONFIGS MPIEXEC NPFLAG NP [PREFLAGS ...]; a few seconds
mbspar=$1
cfgdir=$2
mpiexec=$3
npflag=$4
np=$5
shift 5
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_accel_stream
pre="$*" # the launcher's own flags (word-split on purpose)
set -- "$cfgdir/chain.cfg" --set model.chain.n=20000 --set 'solver.method="schur"'

for mode in local full; do
  # shellcheck disable=SC2086
  run 0 env MBSPAR_MODEL=$mode "$mpiexec" "$npflag" "$np" $pre -x MBSPAR_MODEL "$mbspar" accel \
    "$@" --json "$tmp/$mode.json" --out "$tmp/out_$mode"
  # shellcheck disable=SC2086
  run 0 env MBSPAR_MODEL=$mode "$mpiexec" "$npflag" "$np" $pre -x MBSPAR_MODEL "$mbspar" accel "$@"
  grep -E '^  (\|qdd\||qdd) ' "$tmp/out" >"$tmp/table_$mode"
  [ "$(wc -l <"$tmp/table_$mode")" -eq 2 ] || bad "$mode: no |qdd| and qdd lines: $(cat "$tmp/out")"
done
cmp -s "$tmp/table_local" "$tmp/table_full" ||
  bad "the tables differ: $(cat "$tmp/table_local") against $(cat "$tmp/table_full")"

python3 - "$tmp" <<'PY' || bad "the reports differ (above)"
import json, sys
t = sys.argv[1]
def load(p):
    return json.load(open(p))
ref = load(f"{t}/full.json")
if ref["model"]["storage"] != "replicated":
    sys.exit(f"MBSPAR_MODEL=full: storage {ref['model']['storage']}")
ok = True
for p in (f"{t}/local.json", f"{t}/out_local/accel.json", f"{t}/out_full/accel.json"):
    d = load(p)
    if "out_full" not in p and d["model"]["storage"] != "distributed":
        print(f"{p}: storage {d['model']['storage']}, not distributed"); ok = False
    for k, n in (("qdd", 20000), ("lambda", 100000), ("joint_wrench", 20000)):
        if len(d[k]) != n or d[k] != ref[k]:
            bad = next((i for i, (u, v) in enumerate(zip(d[k], ref[k])) if u != v), None)
            print(f"{p}: {k}: {len(d[k])} values, first difference at {bad}"); ok = False
    if any(len(r) != 6 for r in d["joint_wrench"]):
        print(f"{p}: a joint_wrench row without 6 values"); ok = False
print("qdd, lambda, joint_wrench: distributed = replicated, both targets" if ok else "")
sys.exit(0 if ok else 1)
PY

# a write failure on rank 0 while the others serve: exit 3, one line, nothing left behind
# shellcheck disable=SC2086
run 3 "$mpiexec" "$npflag" "$np" $pre "$mbspar" accel "$@" --json /dev/full --out "$tmp/out_fail"
n=$(wc -l <"$tmp/err")
[ "$n" -eq 1 ] || bad "--json /dev/full: $n lines on stderr: $(cat "$tmp/err")"
grep -q "/dev/full" "$tmp/err" || bad "--json /dev/full: $(cat "$tmp/err")"
left=$(find "$tmp/out_fail" -type f 2>/dev/null | wc -l)
[ "$left" -eq 0 ] || bad "--json /dev/full: $left file(s) left in --out: $(ls "$tmp/out_fail")"
[ "$fail" -eq 0 ] && echo "accel_stream: all checks passed at $np ranks"
exit "$fail"
