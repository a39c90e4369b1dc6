#!/usr/bin/env bash
# Seed 000's claim (its section 6): simulating its Fig. 4 system (a slider with a parallelogram
# loop and force elements) for 10 s took 352 s with the absolute coordinate formulation and 75 s
# with the joint coordinate formulation, "about five times or more efficiency". Measured here with
# mbspar's two formulations on the same models: model.formulation = "natural" (absolute, seed
# 004's natural coordinates, solved in O(n)) against "joint" (the serial baseline ABA with the
# loop layer's range-space solve), the same integrator and steps, at one rank.
# Reports, never asserts. Interleaved rounds; per model the medians of the run's `step` timer
# (integration: evaluations, projection; no output) and of its `eval` timer.
#   bench/seed000_claim.sh [--rounds K] [BUILD_DIR]   (default 5 rounds, <repo>/build; ~2 min)
#   bench/seed000_claim.sh --plot-only                (only the plot, from the committed results)
# Writes bench/results/seed000_claim_<UTC>.{md,json} (table, commit, load) and, with
# bench/results/seed000_fig4.csv (bench/seed000_fig4.sh), docs/img/seed000_fig4.png
# (bench/plot_seeds.py fig4: the newest claim file); docs/seeds.md quotes them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=5
build=$root/build
while [ $# -gt 0 ]; do
  case $1 in
  --rounds)
    rounds=${2:?--rounds needs a count}
    shift
    ;;
  --plot-only) exec python3 "$root/bench/plot_seeds.py" fig4 "$root" ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) build=$1 ;;
  esac
  shift
done
[ -x "$build/mbspar" ] || { echo "seed000_claim.sh: no $build/mbspar (scripts/build.sh)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
python3 - "$build/mbspar" "$root" "$rounds" <<'PY'
import json, os, statistics, subprocess, sys, tempfile, time
mbspar, root, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
# (label, config, extra --set): the seed's system for 10 s, the shipped loop mechanisms, and two
# trees (no loops) for contrast
models = [
    ("seed 000 Fig. 4, 10 s", "seed000_fig4", []),
    ("four-bar, 2 s", "fourbar", []),
    ("slider-crank, 2 s", "slider_crank", ["integrator.t_end=2"]),
    ("RSSR, 2 s", "rssr", ["integrator.t_end=2"]),
    ("six-bar, 2 s", "sixbar", []),
    ("Bricard, 1 s", "bricard", ["integrator.t_end=1"]),
    ("chain 256, 0.1 s", "chain", ["integrator.t_end=0.1"]),
    ("tree, 0.1 s", "tree", ["integrator.t_end=0.1"]),
]
forms = ("joint", "natural")
res = {m[0]: {f: {"step": [], "eval": [], "evals": None, "E": None} for f in forms} for m in models}
with tempfile.TemporaryDirectory() as tmp:
    for r in range(rounds):
        for label, cfg, sets in models:
            for f in (forms if r % 2 == 0 else forms[::-1]):  # interleaved, alternating order
                out = os.path.join(tmp, f"{cfg}_{f}_{r}")
                js = out + ".json"
                cmd = [mbspar, "run", os.path.join(root, "configs", cfg + ".cfg"), "--quiet",
                       "--out", out, "--json", js, "--set", f'model.formulation="{f}"']
                if f == "joint":
                    cmd += ["--set", "solver.method=aba"]
                for s in sets:
                    cmd += ["--set", s]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                j = json.load(open(js))
                d = res[label][f]
                d["step"].append(j["timers"]["step"]["max"])
                # the natural run's O(n) path (since 2026-11-29) records no "eval" timer: the
                # evaluation column then reads n/a; the evaluations are the report's count
                ev = j["timers"].get("eval")
                d["eval"].append(ev["max"] if ev else None)
                d["evals"] = ev["count"] if ev else j["solver"]["evaluations"]
                d["E"] = j["results"]["energy"]["total"]
commit = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True,
                        text=True).stdout.strip()
load = os.getloadavg()
stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
lines = [f"# Seed 000's claim: joint against absolute (natural) coordinates ({stamp})", "",
         f"commit {commit}, {rounds} interleaved rounds, medians; load average at the end "
         f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; one rank, one thread", "",
         "    bench/seed000_claim.sh --rounds " + str(rounds), "",
         "| model | evaluations | joint: step [s] | natural: step [s] | natural / joint (step) "
         "| natural / joint (eval) | energy at the end, joint - natural |",
         "|---|---|---|---|---|---|---|"]
for label, _, _ in models:
    a, b = res[label]["joint"], res[label]["natural"]
    sa, sb = statistics.median(a["step"]), statistics.median(b["step"])
    have = all(x is not None for x in a["eval"] + b["eval"])
    ev = "%.2f" % (statistics.median(b["eval"]) / statistics.median(a["eval"])) if have else "n/a"
    lines.append(f"| {label} | {a['evals']} | {sa:.4f} | {sb:.4f} | {sb / sa:.2f} | {ev} "
                 f"| {a['E'] - b['E']:.1e} |")
lines += ["", "Seed 000: 352 s (absolute) against 75 s (joint) for its Fig. 4 system over 10 s, 4.7x."]
txt = "\n".join(lines) + "\n"
print(txt)
os.makedirs(os.path.join(root, "bench", "results"), exist_ok=True)
base = os.path.join(root, "bench", "results", f"seed000_claim_{stamp}")
open(base + ".md", "w").write(txt)
json.dump({"commit": commit, "rounds": rounds, "load": load, "results": res}, open(base + ".json", "w"))
PY
python3 "$root/bench/plot_seeds.py" fig4 "$root"
