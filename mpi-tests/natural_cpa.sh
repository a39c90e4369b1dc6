#!/bin/sh
# `mbspar cpa` under model.formulation = "natural" (issue 33, docs/cpa.md "natural",
# src/natural_cpa.c): the critical-path graph of the O(n) solve at one rank. On a chain of n links
# the critical path holds every body's factor and forward node (the elimination is sequential
# along the chain, parallelism ~1); on a complete binary tree of depth d it holds d of each (one
# root-to-leaf path: the subtrees are independent), so the parallelism grows with the tree; with --calibrate the one-processor prediction is
# the measured evaluation; loop models are refused with one line, exit 8.
# usage: natural_cpa.sh MBSPAR CONFIGS_DIR
mbspar=$1
cfg=$2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_natural_cpa
nat="model.formulation=natural"

run 0 "$mbspar" cpa "$cfg/chain.cfg" --set "$nat" --set model.chain.n=40 --json "$tmp/chain.json"
run 0 "$mbspar" cpa "$cfg/tree.cfg" --set "$nat" --set model.tree.depth=6 --calibrate \
  --json "$tmp/tree.json"
python3 - "$tmp" <<'PY' || bad "natural cpa graphs"
import json, sys
t = sys.argv[1]
def kinds(c):
    return {k["kind"]: k["nodes"] for k in c["critical_path"]["by_kind"]}
ch, tr = (json.load(open(f"{t}/{n}.json"))["cpa"] for n in ("chain", "tree"))
assert ch["method"] == "natural" and tr["method"] == "natural", ch["method"]
kc, kt = kinds(ch), kinds(tr)
print(f"chain 40: {ch['nodes']} nodes, parallelism {ch['parallelism']:.2f}, path {kc}")
print(f"tree depth 6 (63 bodies): {tr['nodes']} nodes, parallelism {tr['parallelism']:.2f}, "
      f"path {kt}")
assert kc.get("natural.factor") == 40 and kc.get("natural.forward") == 40, kc
assert kt.get("natural.factor") == 6 and kt.get("natural.forward") == 6, kt
assert ch["parallelism"] < 1.5 and tr["parallelism"] > 5, (ch["parallelism"], tr["parallelism"])
cm = tr["cost_model"]
s1 = tr["schedule"][0]
assert cm["calibrated"] and s1["P"] == 1, cm
rel = abs(s1["list_s"] - cm["measured_eval_s"]) / cm["measured_eval_s"]
print(f"tree, calibrated: predicted {s1['list_s']:.3e} s on 1 processor, measured "
      f"{cm['measured_eval_s']:.3e} s ({rel:.1e} apart)")
assert rel < 0.05, rel
PY
run 8 "$mbspar" cpa "$cfg/fourbar.cfg" --set "$nat"
grep -q "not yet for natural" "$tmp/err" || bad "loop model: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "more than one line: $(cat "$tmp/err")"

[ "$fail" -eq 0 ] || exit 1
echo "natural_cpa: all checks passed"
