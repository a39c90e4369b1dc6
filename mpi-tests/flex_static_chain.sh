#!/bin/sh
# `mbspar static` on configs/flex_chain.cfg (issue 34 item 3; docs/flexible.md 8): 16 thin flexible
# aluminium links (m = 4 each) released horizontal. Before the quasi-static elastic coordinates
# this failed at once ("the mass matrix is not positive definite", exit 5: the pseudo-time step
# 0.5 / 2201 rad/s from the clamped-root bound against the coupled system's 11668 rad/s).
# Checked against the closed form of the hanging chain: every link vertical (q = (pi/2, 0, ...)),
# no bending (gravity along each link; no axial modes kept), so eta = 0 and the potential energy
# -rho A L g L sum_i (i - 1/2) = -rho A L^2 g 16^2 / 2; the force residual at rounding.
# usage: flex_static_chain.sh MBSPAR PYTHON3 CONFIGS
mbspar=$1 py=$2 configs=$3
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flexstatic
run 0 "$mbspar" static "$configs/flex_chain.cfg" --quiet --json "$tmp/s.json"
r=$("$py" - "$tmp/s.json" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))["results"]
q, eta = r["q"], r["eta"]
m, g, L, n = 2700.0 * 2.0e-5 * 0.25, 9.81, 0.25, 16
pe = -m * g * L * n * n / 2
e = [abs(q[0] - math.pi / 2), max(abs(v) for v in q[1:]), max(abs(v) for v in eta),
     abs(r["potential_energy"] - pe) / abs(pe), r["qdd_residual"]]
ok = (r["converged"] and r["elastic_coordinates"] == "quasi_static" and len(q) == n
      and len(eta) == 4 * n and max(e) < 1e-9)
print("q0 - pi/2 %.2e, max |q_i| %.2e, max |eta| %.2e, PE rel %.2e, residual %.2e; "
      "%d evaluations, %d steps" % tuple(e + [r["iterations"], r["drainage_steps"]]))
sys.exit(0 if ok else 1)
PY
) || bad "flex_chain static: $r $(cat "$tmp/err")"
echo "flex_chain static: $r"
[ "$fail" -eq 0 ] && echo "flex_static_chain: all checks passed"
exit "$fail"
