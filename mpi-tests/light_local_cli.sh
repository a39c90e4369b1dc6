#!/bin/sh
# Light leaves at rank cuts on distributed-memory models (issue 30 item 3, docs/formulation.md
# 4.9): `mbspar accel` with schur on models whose every moving link carries a light body
# (1e-8 kg, 1e-16 kg m^2) on a revolute joint, the next link hanging from it (no clean place for
# a rank boundary: a light leaf at every cut): a chain of 10 links and a breadth-first tree of 14
# links from a cfg, and a URDF robot of the tree's shape (light moving links on a general-axis
# revolute or a prismatic joint, q0 in file order).
# At 2 ranks of one thread and 3 ranks of 2 threads (CONFS="2:1 3:2", RANKS:THREADS; the
# thread segments of a rank are joined on such models, "mixed" of test_schur_light keeps them),
# the distributed-memory model (the
# default at 2+ ranks) and the replicated one (MBSPAR_MODEL=full) must give the same qdd and
# lambda to 1e-12 (relative, normwise) and both must match aba at one rank to 1e-10. Before the
# light leaves were taken on distributed-memory models and thread segments: off by 0.1-1.2.
# usage: light_local_cli.sh MBSPAR MPIEXEC NPFLAG [PREFLAGS ...]; about 15 s under load
# (LIGHT_URDF=0: without the robot)
mbspar=$1
mpiexec=$2
npflag=$3
shift 3
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_light_local
pre="$*" # the launcher's own flags (word-split on purpose)

python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
def link(k, par, light):
    m, i = ("1e-8", "1e-16") if light else ("0.5", "0.01")
    return (f'{{ name = "l{k}"; parent = "{par}"; joint = {{ type = "revolute"; '
            f'axis = [0.0, 1.0, 0.0]; origin = [0.0, 0.0, -0.2]; q0 = [{0.1 * (k % 5)}]; '
            f'qd0 = [{0.05 * k}]; }}; mass = 1.0; com = [0.0, 0.0, -0.25]; '
            f'inertia = [0.02, 0.02, 0.001, 0.0, 0.0, 0.0]; }},\n'
            f'{{ name = "s{k}"; parent = "l{k}"; joint = {{ type = "revolute"; '
            f'axis = [1.0, 0.0, 0.0]; origin = [0.01, 0.0, -0.3]; q0 = [0.1]; qd0 = [0.2]; }}; '
            f'mass = {m}; com = [0.0, 0.0, 0.0]; inertia = [{i}, {i}, {i}, 0.0, 0.0, 0.0]; }}')
for name, n, tree in (("chain", 10, 0), ("tree", 14, 1)):
    bodies = [link(k, "ground" if k == 0 else f"s{(k - 1) // 2 if tree else k - 1}", 1)
              for k in range(n)]
    with open(f"{d}/{name}.cfg", "w") as f:
        f.write("model = { gravity = [0.0, 0.0, -9.81]; bodies = (\n" + ",\n".join(bodies)
                + "); };\nsolver = { method = \"schur\"; };\n")
# the URDF robot: base (fixed to the world), l_k on a revolute about y from s_((k-1)/2) (base for
# k = 0), s_k (1e-8 kg) from l_k on a revolute about [0.6, 0.8, 0] (k even) or a prismatic joint
# along [0, 0.6, 0.8] (k odd)
n = 14
x = ['<robot name="light">', '<link name="base"><inertial><mass value="1"/>'
     '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>']
q0 = []
for k in range(n):
    par = "base" if k == 0 else f"s{(k - 1) // 2}"
    x.append(f'<link name="l{k}"><inertial><origin xyz="0 0 -0.25"/><mass value="1"/>'
             '<inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    x.append(f'<link name="s{k}"><inertial><mass value="1e-8"/>'
             '<inertia ixx="1e-16" iyy="1e-16" izz="1e-16" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    x.append(f'<joint name="j{k}" type="revolute"><parent link="{par}"/><child link="l{k}"/>'
             '<origin xyz="0 0 -0.2"/><axis xyz="0 1 0"/>'
             '<limit lower="-10" upper="10" effort="100" velocity="100"/></joint>')
    # the light links on joints without the axis-specialised kernels (generic ABA record)
    jt, ax = ("revolute", "0.6 0.8 0") if k % 2 == 0 else ("prismatic", "0 0.6 0.8")
    x.append(f'<joint name="k{k}" type="{jt}"><parent link="l{k}"/><child link="s{k}"/>'
             f'<origin xyz="0.01 0 -0.3"/><axis xyz="{ax}"/>'
             '<limit lower="-10" upper="10" effort="100" velocity="100"/></joint>')
    q0 += [0.1 * (k % 5), 0.01]
x.append("</robot>")
with open(f"{d}/light.urdf", "w") as f:
    f.write("\n".join(x) + "\n")
qd0 = [0.05 * (i // 2) if i % 2 == 0 else 0.2 for i in range(2 * n)]
with open(f"{d}/urdf.cfg", "w") as f:
    f.write(f'model = {{ urdf = {{ file = "light.urdf"; q0 = {q0}; qd0 = {qd0}; }}; }};\n'
            'solver = { method = "schur"; };\n')
PY

# cmp A.json B.json TOL WHAT: qdd and lambda of two reports, relative normwise, at most TOL
cmp() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, math, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
worst = 0.0
for key in ("qdd", "lambda"):
    x, y = a[key], b[key]
    if len(x) != len(y):
        print(f"{key}: {len(x)} against {len(y)} values"); sys.exit(1)
    n = math.sqrt(sum(v * v for v in y)) or 1.0
    worst = max(worst, math.sqrt(sum((u - v) ** 2 for u, v in zip(x, y))) / n)
print(f"{worst:.2e}")
sys.exit(0 if worst <= float(sys.argv[3]) else 1)
PY
}

storage() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["model"]["storage"])' "$1"
}

models="chain tree urdf"
[ "${LIGHT_URDF:-1}" = 0 ] && models="chain tree" # a build without URDF input
for model in $models; do
  cfg="$tmp/$model.cfg"
  run 0 "$mbspar" accel "$cfg" --set solver.method=aba --json "$tmp/ref.json"
  for conf in ${CONFS:-2:1 3:2}; do
    np=${conf%:*} nt=${conf#*:}
    for mode in local full; do
      # shellcheck disable=SC2086
      run 0 env MBSPAR_MODEL=$mode OMP_NUM_THREADS=$nt "$mpiexec" "$npflag" "$np" $pre \
        -x MBSPAR_MODEL -x OMP_NUM_THREADS "$mbspar" accel "$cfg" --json "$tmp/$mode.json"
    done
    s=$(storage "$tmp/local.json")
    [ "$s" = distributed ] || bad "$model np=$np: the default model is $s, not distributed"
    d=$(cmp "$tmp/local.json" "$tmp/full.json" 1e-12) ||
      bad "$model np=$np threads=$nt: distributed against full: $d"
    a=$(cmp "$tmp/local.json" "$tmp/ref.json" 1e-10) ||
      bad "$model np=$np threads=$nt: distributed against aba: $a"
    echo "$model np=$np threads=$nt: distributed against full $d, against aba $a"
  done
done
[ "$fail" -eq 0 ] && echo "light_local_cli: all checks passed"
exit "$fail"
