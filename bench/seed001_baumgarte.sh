#!/usr/bin/env bash
# Seed 001 section 5: Baumgarte stabilisation c'' + 2 w_n c' + w_n^2 c = 0 (mbspar:
# solver.baumgarte = [w_n, w_n]), "the maximum value of best w_n is probably near the highest
# system frequencies". Scanned on the slider-crank (configs/slider_crank.cfg: crank 0.1 m, rod
# 0.3 m, slider 2 kg; 1 dof; its crank spins at 8 rad/s at t = 0), without projection
# (integrator.projection = false), dp5 at TOL 1e-4 over 10 s (a loose TOL, so that the closure
# drifts visibly without stabilisation):
#  1. its natural frequency at the static equilibrium (`mbspar static`: the crank hanging), from
#     the linearised acceleration of the crank angle on the closure manifold (slider x and the
#     rod's angle from the crank's in closed form), central differences of `mbspar accel`;
#  2. for w_n / w from 0 to 100: the largest closure violation over the run, the steps
#     (rejected) and evaluations, and the energy balance at the end (total - work, conserved:
#     the model has no damping). Reports, never asserts.
# (Seed 000's Fig. 4 parallelogram is no test of this: its closure is linear in the joint
# coordinates, theta3 = -theta2, theta4 = theta2, which Runge-Kutta methods keep exactly.)
#   bench/seed001_baumgarte.sh [BUILD_DIR]     (default <repo>/build; ~30 s)
#   bench/seed001_baumgarte.sh --plot-only     (only the plot, from the committed results)
# Writes bench/results/seed001_baumgarte.{md,json} and docs/img/seed001_baumgarte.png
# (bench/plot_seeds.py baumgarte); docs/seeds.md quotes them.
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
  exec python3 "$root/bench/plot_seeds.py" baumgarte "$root"
fi
[ -x "$build/mbspar" ] || { echo "seed001_baumgarte.sh: no $build/mbspar (scripts/build.sh)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
python3 - "$build/mbspar" "$root" <<'PY'
import json, math, os, re, subprocess, sys, tempfile
mbspar, root = sys.argv[1], sys.argv[2]
base = open(os.path.join(root, "configs", "slider_crank.cfg")).read()
R, LR = 0.1, 0.3  # crank, rod


def on_loop(th):
    """crank, rod (relative), slider of the closed loop at crank angle th (check_loops.py)"""
    x = R * math.cos(th) + math.sqrt(LR * LR - (R * math.sin(th)) ** 2)
    phi = math.asin(-R * math.sin(th) / LR)
    return [th, phi - th, x]


def cfg_at(q, qd, path):
    it = iter(zip(q, qd))
    def rep(m):
        a, b = next(it)
        return f"q0 = [{a!r}]; qd0 = [{b!r}];"
    s = re.sub(r"q0 = \[[^\]]*\];( qd0 = \[[^\]]*\];)?", rep, base)
    open(path, "w").write(s)


def mbs(args, js):
    subprocess.run([mbspar] + args + ["--json", js, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.load(open(js))


with tempfile.TemporaryDirectory() as tmp:
    cfg = os.path.join(root, "configs", "slider_crank.cfg")
    st = mbs(["static", cfg, "--set", "solver.method=aba"], f"{tmp}/st.json")
    th0 = st["results"]["q"][0]

    def qdd(th):
        cfg_at(on_loop(th), [0, 0, 0], f"{tmp}/lin.cfg")
        return mbs(["accel", f"{tmp}/lin.cfg", "--set", "solver.method=aba"], f"{tmp}/lin.json")["qdd"][0]
    h = 1e-6
    k = -(qdd(th0 + h) - qdd(th0 - h)) / (2 * h)
    wmax = math.sqrt(max(k, 0))
    om = [wmax]
    rows = []
    for ratio in (0, 0.01, 0.1, 0.3, 1, 3, 10, 30, 100):
        wn = ratio * wmax
        out = f"{tmp}/b{ratio}"
        j = mbs(["run", cfg, "--out", out, "--set", "solver.method=aba",
                 "--set", "integrator.projection=false", "--set", "integrator.tol=1e-4",
                 "--set", f"solver.baumgarte=[{wn!r}, {wn!r}]"], f"{out}.json")
        lp, ig = j["results"]["loops"], j["integrator"]
        en = j["results"]["energy"]
        rows.append({"ratio": ratio, "w_n": wn, "closure_pos_max": lp["closure_pos_max"],
                     "closure_vel_max": lp["closure_vel_max"], "steps": ig["steps"],
                     "rejected": ig["rejected"], "evaluations": j["timers"]["eval"]["count"],
                     "step_wall_s": j["timers"]["step"]["max"],
                     "energy_balance": en["total"] - en["work"]})
    with open(f"{tmp}/b0/energy.csv") as fh:  # total - work at t = 0 (conserved: no damping)
        fh.readline()
        e0 = float(fh.readline().split(",")[6])
    for r in rows:
        r["energy_error"] = r["energy_balance"] - e0
commit = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True,
                        text=True).stdout.strip()
load = os.getloadavg()[0]
lines = ["# Seed 001's Baumgarte w_n, scanned (slider-crank, dp5 TOL 1e-4, 10 s, no "
         "projection)", "", f"commit {commit}, load {load:.2f}", "", "    bench/seed001_baumgarte.sh", "",
         f"static equilibrium: crank at {th0:.6g} rad; natural frequency there {wmax:.4g} rad/s "
         f"(w_max); total energy at t = 0: {e0:.9g} J", "",
         "| w_n / w_max | w_n [rad/s] | max closure violation [m] | max velocity violation | steps "
         "(rejected) | evaluations | integration wall [s] | energy error at 10 s [J] |",
         "|---|---|---|---|---|---|---|---|"]
for r in rows:
    lines.append(f"| {r['ratio']:g} | {r['w_n']:.4g} | {r['closure_pos_max']:.2e} | "
                 f"{r['closure_vel_max']:.2e} | {r['steps']} ({r['rejected']}) | {r['evaluations']} "
                 f"| {r['step_wall_s']:.3f} | {r['energy_error']:.2e} |")
txt = "\n".join(lines) + "\n"
print(txt)
open(os.path.join(root, "bench", "results", "seed001_baumgarte.md"), "w").write(txt)
json.dump({"commit": commit, "load": load, "equilibrium": th0, "omega": om, "rows": rows},
          open(os.path.join(root, "bench", "results", "seed001_baumgarte.json"), "w"), indent=1)
PY
python3 "$root/bench/plot_seeds.py" baumgarte "$root"
