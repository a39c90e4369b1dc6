#!/usr/bin/env bash
# Seed 002's rule for the constraint-force solver's tolerance: J-CG's epsilon about a tenth of the
# integrator's TOL (its Table 2: TOL = 1e-6, epsilon = 1e-7), scanned on two models: the Table 2
# manipulator (configs/seed002_manipulator.cfg: 3 links, 5 DOF, 10 s) and the 128-link revolute
# chain of its Fig. 2 (0.1 m, 0.1 kg links, horizontal, falling, 0.2 s), both dp5 at TOL = 1e-6,
# J-CG with the relative-change criterion and the cubic warm start, epsilon / TOL from 10 down to
# 1e-4; for each: the final state's error against a reference (ABA, the exact solve, with dp5 at
# TOL 1e-12), the steps and rejected steps, J-CG's iterations in all, and the wall time of the
# integration (the run's `step` timer, median of 3). Reports, never asserts.
#   bench/seed002_eps.sh [BUILD_DIR]     (default <repo>/build; ~1 min)
#   bench/seed002_eps.sh --plot-only     (only the plot, from the committed results)
# Writes bench/results/seed002_eps.{md,json} and docs/img/seed002_eps.png (bench/plot_seeds.py
# eps); docs/seeds.md quotes them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
plot_only=0
build=$root/build
for a in "$@"; do
  case $a in
  --plot-only) plot_only=1 ;;
  *) build=$a ;;
  esac
done
if [ "$plot_only" = 1 ]; then
  exec python3 "$root/bench/plot_seeds.py" eps "$root"
fi
[ -x "$build/mbspar" ] || { echo "seed002_eps.sh: no $build/mbspar (scripts/build.sh)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
python3 - "$build/mbspar" "$root" <<'PY'
import json, os, statistics, subprocess, sys, tempfile
mbspar, root = sys.argv[1], sys.argv[2]
TOL = 1e-6
CHAIN = """model = { gravity = [0, 0, -9.81];
  chain = { n = 128; joint = "revolute"; axis = [0, 1, 0]; direction = [1, 0, 0];
            length = 0.1; mass = 0.1; shape = "rod"; radius = 0.005; q0 = 0.01; }; };
solver = { method = "jcg"; tol = 1e-7; criterion = "change"; warm_start = "cubic"; };
integrator = { method = "dp5"; tol = 1e-6; dt = 1e-4; t_end = 0.2; };
"""


def run(tmp, cfg, tag, sets):
    out = os.path.join(tmp, tag)
    cmd = [mbspar, "run", cfg, "--quiet", "--out", out, "--json", out + ".json"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.load(open(out + ".json"))


results = []
with tempfile.TemporaryDirectory() as tmp:
    chain = os.path.join(tmp, "chain128.cfg")
    open(chain, "w").write(CHAIN)
    models = (("seed 002 Table 2 manipulator, 10 s",
               os.path.join(root, "configs", "seed002_manipulator.cfg")),
              ("128-link revolute chain (seed 002 Fig. 2), 0.2 s", chain))
    for mi, (label, cfg) in enumerate(models):
        ref = run(tmp, cfg, f"ref{mi}", ["solver.method=aba", "integrator.tol=1e-12"])
        qref = ref["results"]["q"] + ref["results"]["qd"]
        rows = []
        for ratio in (10, 3, 1, 0.3, 0.1, 0.03, 0.01, 1e-3, 1e-4):
            eps = ratio * TOL
            wall = []
            for k in range(3):
                j = run(tmp, cfg, f"m{mi}_e{ratio}_{k}", [f"solver.tol={eps:g}"])
                wall.append(j["timers"]["step"]["max"])
            q = j["results"]["q"] + j["results"]["qd"]
            err = max(abs(a - b) for a, b in zip(q, qref)) / max(abs(b) for b in qref)
            sv = j["solver"]
            rows.append({"ratio": ratio, "eps": eps, "error": err,
                         "steps": j["integrator"]["steps"], "rejected": j["integrator"]["rejected"],
                         "iterations": sv.get("total_iterations"),
                         "evaluations": sv.get("evaluations"), "wall_s": statistics.median(wall)})
        results.append((label, rows))
commit = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True,
                        text=True).stdout.strip()
load = os.getloadavg()[0]
lines = ["# Seed 002's epsilon = TOL / 10, scanned (dp5 TOL = 1e-6, J-CG)", "",
         f"commit {commit}, load {load:.2f}; reference: ABA, dp5 TOL 1e-12", "",
         "    bench/seed002_eps.sh", ""]
for label, rows in results:
    lines += [f"{label}:", "",
              "| epsilon / TOL | epsilon | error of the final state | steps | rejected | "
              "J-CG iterations | per evaluation | integration wall [s] |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        per = r["iterations"] / r["evaluations"] if r["evaluations"] else float("nan")
        lines.append(f"| {r['ratio']:g} | {r['eps']:.0e} | {r['error']:.2e} | {r['steps']} | "
                     f"{r['rejected']} | {r['iterations']} | {per:.1f} | {r['wall_s']:.3f} |")
    lines.append("")
txt = "\n".join(lines)
print(txt)
open(os.path.join(root, "bench", "results", "seed002_eps.md"), "w").write(txt)
json.dump({"commit": commit, "load": load, "models": results},
          open(os.path.join(root, "bench", "results", "seed002_eps.json"), "w"), indent=1)
PY
python3 "$root/bench/plot_seeds.py" eps "$root"
