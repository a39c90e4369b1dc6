#!/usr/bin/env bash
# Seed 000 Fig. 4's figure: the parallelogram loop's velocity map (E matrix) over a run. Runs
# configs/seed000_fig4.cfg (dp5, tol 1e-10) for 3 s and keeps t, q and qd of the four joints with
# the deviations from the seed's map, qd(coupler) + qd(crank) and qd(rocker) - qd(crank) (the seed:
# theta3' = -theta2', theta4' = theta2'), computed at full precision, in
# bench/results/seed000_fig4.csv (commit and load in its header). Then plots it beside the newest
# bench/results/seed000_claim_*.json (bench/seed000_claim.sh: joint against absolute coordinates)
# to docs/img/seed000_fig4.png (bench/plot_seeds.py fig4). Reports, never asserts.
#   bench/seed000_fig4.sh [BUILD_DIR]     (default <repo>/build; ~2 s)
#   bench/seed000_fig4.sh --plot-only     (the plot from the committed results)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
plot_only=0
for a in "$@"; do
  case $a in
  --plot-only) plot_only=1 ;;
  *) build=$a ;;
  esac
done
if [ "$plot_only" = 0 ]; then
  [ -x "$build/mbspar" ] || { echo "seed000_fig4.sh: no $build/mbspar (scripts/build.sh)" >&2; exit 2; }
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$build/mbspar" run "$root/configs/seed000_fig4.cfg" --quiet --out "$tmp/f4" --json "$tmp/f4.json" \
    --set integrator.t_end=3
  python3 - "$tmp" "$root" <<'PY'
import csv, json, os, subprocess, sys
tmp, root = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(f"{tmp}/f4/trajectory.csv")))
j = json.load(open(f"{tmp}/f4.json"))
commit = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True,
                        text=True).stdout.strip()
names = ["slider", "crank", "coupler", "rocker"]
out = os.path.join(root, "bench", "results", "seed000_fig4.csv")
dev = 0.0
with open(out, "w") as f:
    f.write(f"# commit {commit}, load {os.getloadavg()[0]:.2f}\n")
    f.write("# bench/seed000_fig4.sh: mbspar run configs/seed000_fig4.cfg --set integrator.t_end=3 "
            f"(dp5 tol 1e-10, {j['integrator']['steps']} steps, one row per step)\n")
    f.write(",".join(["t"] + [f"q_{n}" for n in names] + [f"qd_{n}" for n in names] +
                     ["dev_coupler", "dev_rocker"]) + "\n")
    for r in rows:
        q = [float(r[f"q_{n}"]) for n in names]
        qd = [float(r[f"qd_{n}"]) for n in names]
        d3, d4 = qd[2] + qd[1], qd[3] - qd[1]
        dev = max(dev, abs(d3), abs(d4))
        f.write(",".join(["%.6g" % float(r["t"])] + ["%.8g" % x for x in q + qd] +
                         ["%.3e" % d3, "%.3e" % d4]) + "\n")
print(f"seed 000 Fig. 4, commit {commit}: {len(rows)} rows over 3 s; max |qd3 + qd2|, "
      f"|qd4 - qd2| = {dev:.1e} rad/s; {out}")
PY
fi
python3 "$root/bench/plot_seeds.py" fig4 "$root"
