#!/usr/bin/env python3
"""cpa's per-rank predictions against the engine's own per-rank phase timers (issue 35 item 5).

`mbspar cpa --method schur --procs 2` builds the distributed graph of one evaluation and reports,
per rank, the flops of each engine phase (kinematics = eval.position + eval.velocity, factor =
eval.constraint.factor, interface = eval.constraint.solve, acceleration = eval.acceleration;
mbs_cpaKindPhase). It is priced here with the seconds per flop that `cpa --calibrate` measures on
**serial ABA** (classes kinematics and recursion) — so the schur graphs are predicted by a model
calibrated on another algorithm — and compared with the phase timers of real `mbspar accel
--repeat K` runs of schur at 1 rank (taskset to core 0) and 2 ranks (--bind-to core), each phase
per evaluation, median over R interleaved rounds. The prediction of the evaluation is the largest
rank's sum (the merge's few hundred flops and its messages are below the timers' resolution here).

  bench/cpa_vs_timers.py [--rounds R] [--build DIR] [--allow-dirty]

Writes bench/results/cpa_vs_timers_<UTC>.md and .json. Reports, never asserts.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PHASES = ["kinematics", "factor", "interface", "acceleration"]
TIMERS = {"kinematics": ["eval.position", "eval.velocity"], "factor": ["eval.constraint.factor"],
          "interface": ["eval.constraint.solve"], "acceleration": ["eval.acceleration"]}
CLASS = {"kinematics": "kinematics", "factor": "recursion", "interface": "recursion",
         "acceleration": "recursion"}
MODELS = [("chain 65536 links", "configs/chain.cfg",
           ["--set", "model.chain.n=65536", "--set", "model.chain.q0=0.01", "--set",
            "model.chain.qd0=0.5"]),
          ("binary tree 65535 bodies", "configs/large_tree.cfg", ["--set", "model.tree.depth=16"])]


def run_json(cmd, path):
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(cmd + ["--json", path, "-q"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"cpa_vs_timers.py: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    with open(path) as f:
        return json.load(f)


def per_rank_timers(d, nranks):
    """{rank: {phase: seconds per evaluation}} from an accel report's timers (min/max over ranks
    name their ranks; with 1 or 2 ranks that is every rank)."""
    t = d["timers"]
    out = {r: {} for r in range(nranks)}
    for ph, names in TIMERS.items():
        for r in range(nranks):
            s = 0.0
            for n in names:
                x = t.get(n)
                if not x:
                    continue
                v = x["min"] if x["min_rank"] == r else x["max"] if x["max_rank"] == r else x["avg"]
                s += v / x["count"]
            out[r][ph] = s
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--allow-dirty", action="store_true")
    a = ap.parse_args()
    exe = os.path.join(a.build, "mbspar")
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    if commit.endswith("-dirty") and not a.allow_dirty:
        sys.exit(f"cpa_vs_timers.py: the tree is dirty ({commit}); commit or --allow-dirty")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    load0 = open("/proc/loadavg").read().split()[:3]
    res = {"git": commit, "date": stamp, "rounds": a.rounds, "models": []}
    md = [f"# cpa's per-rank predictions against the engine's phase timers\n",
          f"git {commit}, {stamp}, load average {' '.join(load0)} at the start. "
          "bench/cpa_vs_timers.py: schur's distributed graphs priced with the seconds per flop "
          f"that `cpa --calibrate` measured on serial ABA; measured: medians of {a.rounds} "
          "interleaved rounds of `accel --repeat`, per evaluation.\n"]
    with tempfile.TemporaryDirectory() as w:
        for name, cfg, args in MODELS:
            cfgp = os.path.join(ROOT, cfg)
            cal = run_json([exe, "cpa", cfgp] + args + ["--method", "aba", "--calibrate"],
                           f"{w}/cal.json")["cpa"]["cost_model"]
            rate = {c["class"]: c["s_per_flop"] for c in cal["classes"]}
            g = run_json([exe, "cpa", cfgp] + args + ["--method", "schur", "--procs", "2"],
                         f"{w}/g.json")["cpa"]["schedule"]
            pred = {}
            for s in g:
                pred[s["P"]] = {q["rank"]: {ph: q[f"{ph}_flops"] * rate[CLASS[ph]] for ph in PHASES}
                                for q in s["ranks"]}
            meas = {1: [], 2: []}
            evals = {1: [], 2: [], "aba": []}
            for r in range(a.rounds):
                for P in (1, 2):
                    launch = ["taskset", "-c", "0"] if P == 1 else \
                        ["mpirun", "-n", "2", "--bind-to", "core", "--map-by", "core"]
                    d = run_json(launch + [exe, "accel", cfgp] + args +
                                 ["--set", "solver.method=schur", "--repeat", "20"], f"{w}/a.json")
                    meas[P].append(per_rank_timers(d, P))
                    evals[P].append(d["time_per_eval_s"])
                d = run_json(["taskset", "-c", "0", exe, "accel", cfgp] + args +
                             ["--set", "solver.method=aba", "--repeat", "20"], f"{w}/a.json")
                evals["aba"].append(d["time_per_eval_s"])
            mrec = {"model": name, "rates": rate, "predicted": pred, "measured": meas,
                    "eval_s": evals}
            res["models"].append(mrec)
            md.append(f"\n## {name}\n")
            md.append(f"Calibration on serial ABA: kinematics {rate['kinematics']:.3g} s/flop, "
                      f"recursion {rate['recursion']:.3g} s/flop; measured ABA "
                      f"{statistics.median(evals['aba']) * 1e3:.2f} ms per evaluation (median).\n")
            md.append("| P | rank | phase | predicted [ms] | measured [ms] | measured / predicted |")
            md.append("|---:|---:|---|---:|---:|---:|")
            for P in (1, 2):
                for q in range(P):
                    tot_p = tot_m = 0.0
                    for ph in PHASES:
                        p = pred[P][q][ph]
                        m = statistics.median(x[q][ph] for x in meas[P])
                        tot_p += p
                        tot_m += m
                        if p == 0 and m < 1e-5:
                            continue
                        md.append(f"| {P} | {q} | {ph} | {p * 1e3:.3f} | {m * 1e3:.3f} | "
                                  f"{m / p if p > 0 else float('inf'):.2f} |")
                    md.append(f"| {P} | {q} | **sum** | **{tot_p * 1e3:.3f}** | **{tot_m * 1e3:.3f}**"
                              f" | **{tot_m / tot_p:.2f}** |")
            for P in (1, 2):
                pe = max(sum(pred[P][q].values()) for q in pred[P])
                me = statistics.median(evals[P])
                md.append(f"\nschur at {P} rank(s): predicted evaluation (largest rank) "
                          f"{pe * 1e3:.2f} ms, measured {me * 1e3:.2f} ms (median), "
                          f"measured / predicted {me / pe:.2f}.")
            print(f"cpa_vs_timers.py: {name} done", file=sys.stderr)
    base = os.path.join(HERE, "results", f"cpa_vs_timers_{stamp}")
    with open(base + ".json", "w") as f:
        json.dump(res, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
