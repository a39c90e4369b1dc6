#!/bin/sh
# The recursive flexible algorithm in the run path (issue 34; docs/flexible.md 10):
#  - configs/flex_chain.cfg (16 links, m = 4: 80 coordinates) stays on the dense oracle
#    (accel.json solver.method = flex_oracle);
#  - a chain of 256 such links (1280 coordinates, above the 1000 of MBSP_FLEX_DENSE_MAX) runs
#    `accel` on the recursive algorithm (flex_aba) and its first joint accelerations equal the
#    16-link chain's to 1e-6 relative (released horizontal at rest, the load of the far links
#    decays along the chain: measured 4.9e-11 for the first two);
#  - an rk4 `run` of it (200 steps of 1e-5 s) reports flex_aba, energy.csv comes from the O(n)
#    energies, and the largest |E - E0| is below 1e-9 of the potential energy's size.
# The recursive algorithm's equality with the oracle is test_flex_aba's (random trees, 1e-9).
# usage: flex_aba_cli.sh MBSPAR PYTHON3 CONFIGS
mbspar=$1 py=$2 configs=$3
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_aba_cli
"$py" - "$tmp/c256.cfg" <<'PY'
import sys
b = []
for i in range(256):
    par = "ground" if i == 0 else "l%d" % (i - 1)
    org = "" if i == 0 else " origin = [0.25, 0, 0];"
    b.append('{ name = "l%d"; parent = "%s"; joint = { type = "revolute"; axis = [0, 1, 0];%s }; '
             'flexible = { beam = { length = 0.25; E = 7.0e10; rho = 2700.0; area = 2.0e-5; '
             'Iy = 3.0e-11; Iz = 3.0e-11; elements = 4; }; modes = 4; }; }' % (i, par, org))
open(sys.argv[1], "w").write("model = { gravity = [0, 0, -9.81]; bodies = (\n" + ",\n".join(b) +
                             "\n); };\nintegrator = { method = \"rk4\"; dt = 1e-5; t_end = 0.002; };\n"
                             "output = { every = 50; };\n")
PY
run 0 "$mbspar" accel "$configs/flex_chain.cfg" --quiet --out "$tmp/a16"
run 0 "$mbspar" accel "$tmp/c256.cfg" --quiet --out "$tmp/a256"
run 0 "$mbspar" run "$tmp/c256.cfg" --quiet --out "$tmp/r256"
r=$("$py" - "$tmp" <<'PY'
import csv, json, sys
t = sys.argv[1]
a16 = json.load(open(t + "/a16/accel.json"))
a256 = json.load(open(t + "/a256/accel.json"))
r = json.load(open(t + "/r256/run.json"))
assert a16["solver"]["method"] == "flex_oracle", a16["solver"]
assert a256["solver"]["method"] == "flex_aba", a256["solver"]
assert r["solver"]["method"] == "flex_aba", r["solver"]
d = max(abs(a256["qdd"][i] - a16["qdd"][i]) / abs(a16["qdd"][i]) for i in range(2))
assert d < 1e-6, d
rows = list(csv.DictReader(open(t + "/r256/energy.csv")))
e = [float(x["total"]) for x in rows]
scale = max(abs(float(x["potential"])) for x in rows)
drift = max(abs(x - e[0]) for x in e) / scale
assert drift < 1e-9, drift
print("qdd[0:2] 256 vs 16 links %.1e, run drift %.1e of |V|, %d energy rows" % (d, drift, len(rows)))
PY
) || bad "flex_aba in accel/run: $r"
echo "flex_aba_cli: $r"
# cpa of a flexible model: the recursive algorithm's graph (docs/cpa.md "Flexible models"; its
# T1 against the counted flops is test_flex_cpa's); --method jcg the flexible constraint-force
# CG's with the iterations of a real solve; methods other than aba and the constraint-force
# direct, jcg, gs, sor, jacobi, chebyshev (crba, petsc), and
# --calibrate, refused (exit 8)
run 0 "$mbspar" cpa "$configs/flex_chain.cfg" --quiet --json "$tmp/cpa.json"
"$py" - "$tmp/cpa.json" <<'PY' || bad "cpa of flex_chain.cfg: $(head -c 300 "$tmp/cpa.json")"
import json, sys
c = json.load(open(sys.argv[1]))["cpa"]
kinds = [k["kind"] for k in c["critical_path"]["by_kind"]]
assert c["method"] == "flex_aba" and c["work_flops"] > c["span_flops"] > 0, c["method"]
assert kinds and all(k.startswith("flex.") for k in kinds), kinds
# the 16-link chain: every link's kin, condense and acc on the path (a chain has no parallel pass)
assert c["critical_path"]["by_kind"][0]["nodes"] == 16, c["critical_path"]
PY
run 0 "$mbspar" cpa "$configs/flex_chain.cfg" --quiet --method jcg --procs 2 --json "$tmp/cpaj.json"
"$py" - "$tmp/cpaj.json" <<'PY' || bad "cpa --method jcg: $(head -c 300 "$tmp/cpaj.json")"
import json, sys
c = json.load(open(sys.argv[1]))["cpa"]
assert c["method"] == c["distributed_method"] == "flex_cfs_jcg", c["method"]
assert c["iterations"] > 0 and c["iterations_source"] == "measured", c["iterations"]
assert c["work_flops"] > c["span_flops"] > 0, (c["work_flops"], c["span_flops"])
PY
run 8 "$mbspar" cpa "$configs/flex_chain.cfg" --quiet --method crba
grep -q 'direct, jcg, gs, sor, jacobi and chebyshev (not petsc' "$tmp/err" || bad "cpa --method crba: $(cat "$tmp/err")"
run 8 "$mbspar" cpa "$configs/flex_chain.cfg" --quiet --calibrate
grep -q 'not calibrated yet' "$tmp/err" || bad "cpa --calibrate: $(cat "$tmp/err")"
[ "$fail" -eq 0 ] && echo "flex_aba_cli: all checks passed"
exit "$fail"
