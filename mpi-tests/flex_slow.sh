#!/bin/sh
# Issue 34's energy figure (slow: about 20 s of compute): configs/flex_pendulum.cfg, a
# conservative flexible pendulum with a bob on its tip node, over 10 s with dp5 (tol 1e-9):
# the largest |E(t) - E(0)| <= 1e-8 |E(0)| (docs/flexible.md 6).
# usage: flex_slow.sh MBSPAR PYTHON3 CONFIGS
mbspar=$1 py=$2 configs=$3
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_slow
run 0 "$mbspar" run "$configs/flex_pendulum.cfg" --quiet --out "$tmp/p" --set integrator.t_end=10 \
  --set integrator.tol=1e-9
r=$("$py" - "$tmp/p" <<'PY'
import json, sys
j = json.load(open(sys.argv[1] + "/run.json"))
rel = j["energy_drift_max"] / abs(j["energy_initial"])
print("10 s: drift %.3e relative, %d steps, largest elastic %.3e J" % (rel, j["steps"], j["elastic_energy_max"]))
sys.exit(0 if rel <= 1e-8 and abs(j["t"] - 10) < 1e-9 else 1)
PY
) || bad "$r"
echo "$r"
[ "$fail" -eq 0 ] && echo "flex_slow: all checks passed"
exit "$fail"
