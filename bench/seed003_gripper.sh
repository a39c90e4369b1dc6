#!/usr/bin/env bash
# Seed 003 Fig. 6: the 4-DOF gripper (configs/gripper.cfg) falling under gravity from
# theta11 = -60 deg, the other joints at 0 and at rest, RK4 with a fixed step of 1 ms (the seed's
# integrator and step), 1 s. Plots the four joint angles to docs/img/seed003_gripper.png (Debian's
# python3-matplotlib, /usr/bin/python3) and reports the run's time and its energy balance (the
# model has no damping: total - work stays at its start). The seed's figure is not in its text
# (lost in the OCR), so the angles are compared only in kind. Reports, never asserts.
#   bench/seed003_gripper.sh [BUILD_DIR]     (default <repo>/build; ~3 s)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ -x "$build/mbspar" ] || { echo "seed003_gripper.sh: no $build/mbspar (scripts/build.sh)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/mbspar" run "$root/configs/gripper.cfg" --quiet --out "$tmp/g" --json "$tmp/g.json" \
  --set 'model.bodies[0].joint.q0=[-1.0471975511965976]' --set 'model.bodies[3].joint.q0=[0.0]' \
  --set 'integrator.method="rk4"' --set integrator.dt=0.001 --set integrator.t_end=1.0
/usr/bin/python3 - "$tmp" "$root" <<'PY'
import csv, json, math, os, subprocess, sys
tmp, root = sys.argv[1], sys.argv[2]
j = json.load(open(f"{tmp}/g.json"))
rows = list(csv.DictReader(open(f"{tmp}/g/trajectory.csv")))
en = list(csv.DictReader(open(f"{tmp}/g/energy.csv")))
e0 = float(en[0]["total_minus_work"])
drift = max(abs(float(r["total_minus_work"]) - e0) for r in en) / abs(e0)
commit = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True,
                        text=True).stdout.strip()
print(f"seed 003 gripper fall, commit {commit}: {j['integrator']['steps']} RK4 steps of 1 ms, "
      f"integration {j['timers']['step']['max']:.4f} s; energy balance drift {drift:.1e} (relative)")
names = [("q_link11", "theta11"), ("q_link12", "theta12"), ("q_link22", "theta22"),
         ("q_link13", "theta13")]
for t in (0.25, 0.5, 1.0):
    r = min(rows, key=lambda r: abs(float(r["t"]) - t))
    print(f"  t = {float(r['t']):.2f} s: " + ", ".join(
        f"{lab} {math.degrees(float(r[c])):.1f} deg" for c, lab in names))
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(7, 4.2))
ts = [float(r["t"]) for r in rows]
for c, lab in names:
    ax.plot(ts, [math.degrees(float(r[c])) for r in rows], label=lab)
ax.set_xlabel("t [s]")
ax.set_ylabel("joint angle [deg]")
ax.set_title("seed 003 Fig. 6: gripper falling from theta11 = -60 deg (RK4, 1 ms)", fontsize=10)
ax.grid(True)
ax.legend()
fig.tight_layout()
fig.savefig(f"{root}/docs/img/seed003_gripper.png", dpi=110)
print("  plot: docs/img/seed003_gripper.png")
PY
