#!/usr/bin/env bash
# Seed 003 Fig. 7: the 100-DOF rope (configs/rope.cfg: 50 links of 50 mm, 4 g, universal joints)
# falling freely for 1.75 s, pinned at its first joint; its snapshots and the time it takes
# (the seed: 3.44 s with ReDySim on an E8400 at 3 GHz, 4.54 s with Featherstone's algorithm).
# Three runs (serial ABA, dp5 at the config's tol 1e-8); reports the median wall time of the
# whole run, of the integration alone (the `step` timer) and of the output rows, and plots the
# rope at t = 0, 0.25, ..., 1.75 s (x-z plane) to docs/img/seed003_rope.png with Debian's
# python3-matplotlib (/usr/bin/python3). Reports, never asserts.
#   bench/seed003_rope.sh [BUILD_DIR]     (default <repo>/build; ~10 s)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ -x "$build/mbspar" ] || { echo "seed003_rope.sh: no $build/mbspar (scripts/build.sh)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in 1 2 3; do
  t0=$(date +%s.%N)
  "$build/mbspar" run "$root/configs/rope.cfg" --set solver.method=aba --out "$tmp/r$i" \
    --json "$tmp/r$i.json" --quiet
  t1=$(date +%s.%N)
  echo "$t0 $t1" >"$tmp/wall$i"
done
/usr/bin/python3 - "$tmp" "$root" <<'PY'
import csv, json, os, statistics, subprocess, sys
tmp, root = sys.argv[1], sys.argv[2]
wall, step, out = [], [], []
for i in (1, 2, 3):
    a, b = map(float, open(f"{tmp}/wall{i}").read().split())
    wall.append(b - a)
    j = json.load(open(f"{tmp}/r{i}.json"))
    step.append(j["timers"]["step"]["max"])
    out.append(j["timers"]["output"]["max"])
integ = j["integrator"]
commit = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True,
                        text=True).stdout.strip()
print(f"seed 003 rope, 1.75 s of free fall, commit {commit}, load {os.getloadavg()[0]:.2f}:")
print(f"  {integ['method']} tol {integ['tol']}: {integ['steps']} steps, {j['timers']['eval']['count']} "
      f"evaluations")
print(f"  wall (median of 3): whole run {statistics.median(wall):.2f} s, integration "
      f"{statistics.median(step):.3f} s, output rows {statistics.median(out):.3f} s")
print("  seed 003: 3.44 s (ReDySim, E8400 3 GHz), 4.54 s with Featherstone's algorithm")
rows = list(csv.DictReader(open(f"{tmp}/r1/trajectory.csv")))
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(7, 5))
for k, tt in enumerate([0.25 * i for i in range(8)]):
    r = min(rows, key=lambda r: abs(float(r["t"]) - tt))
    xs = [0.0] + [float(r[f"pos_seg{b}_x"]) for b in range(2, 51)]
    zs = [0.0] + [float(r[f"pos_seg{b}_z"]) for b in range(2, 51)]
    ax.plot(xs, zs, "-", lw=1.5, label=f"t = {float(r['t']):.2f} s")
ax.set_aspect("equal")
ax.set_xlabel("x [m]")
ax.set_ylabel("z [m]")
ax.set_title("seed 003 Fig. 7: 100-DOF rope, free fall (mbspar, ABA, dp5)")
ax.legend(fontsize=7, loc="lower left")
fig.tight_layout()
fig.savefig(f"{root}/docs/img/seed003_rope.png", dpi=110)
print(f"  plot: docs/img/seed003_rope.png")
PY
