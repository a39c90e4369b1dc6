#!/usr/bin/env python3
"""The SMPI compute modes against real runs they were not calibrated on (issue 35, item 5).

    python3 bench/smpi/validate.py [--build DIR] [--rounds N] [--pairs N] [--shares 1024,4096]
                                   [--grow 4,16,64] [--allow-dirty] [--no-build]

Issue 35 asks for a timed SMPI figure corrected for the distortion of all simulated ranks sharing
one process and cache, "documented and defended". The correction bench/smpi/issue35.sh reports is
flops-warm: each rank's counted flops at the time per flop of a real, warm one-rank run of a rank's
share. This script checks it, and SMPI's own timed mode ("cold"), against the one multi-rank
configuration this 2-core machine can run for real, `mpirun -n 2` with one core per rank:

  1. real runs by bench/protocol.py (interleaved pinned launches, medians of `time_per_eval_s`,
     ten rounds by default): for each share s (bodies per rank, default 1024 and 4096) the s-link
     chain on one rank and the 2s-link chain on two;
  2. W(s) = the counted flops of one evaluation of the s-link chain on one simulated host / its real
     one-rank median: the flops-warm speed, calibrated on the one-rank run only;
  3. the predictions for the 2s-link chain on 2 hosts: flops-warm at W(s) (deterministic, one pair)
     and the cold timed mode (`mbspar_smpi`, SMPI times every compute block; the median of --pairs
     pairs), each against the real 2-rank median: the 2-rank run is what neither was fitted to;
  4. with --grow, how the two modes part as P grows at the share of the 64-host point (the 1024s-link
     chain on P hosts, flops-warm at W(1024) against cold timed): the growth of cold over flops-warm
     is the simulation's distortion where no real run exists to compare.

SMPI steady times per evaluation are pairs of launches (--repeat 1 and 1 + K), as everywhere in
bench/smpi. Needs a quiet machine (the protocol's rounds and the timed launches are the figure).
Writes bench/results/smpi_validate_<UTC>.{jsonl,md}. Reports, never asserts.
"""
import argparse
import datetime
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from calibrate import chain, flops_per_eval, medians  # noqa: E402
from schur_report import steady_pair  # noqa: E402


def real_variant(label, mbspar, n, ranks, repeat):
    return {"label": label, "ranks": ranks, "threads": 1,
            "cmd": ["env", "OMP_NUM_THREADS=1", "/usr/bin/mpirun", "-n", str(ranks), "--bind-to",
                    "core", "--map-by", "core", mbspar, "accel"] + chain(n) +
                   ["--set", "solver.method=schur", "--repeat", str(repeat), "--json", "@JSON@",
                    "-q"]}


def smpi_steady(binary, n, p, speed, cfg, work, k2):
    """Steady simulated seconds per evaluation of the n-link chain on p hosts (one pair)."""
    plat = os.path.join(work, f"plat_{speed}")
    if not os.path.exists(os.path.join(plat, f"cluster_{p}.xml")):
        subprocess.run(["bash", os.path.join(HERE, "platform.sh"), str(p), speed, plat], check=True,
                       stdout=subprocess.DEVNULL)
    t = {}
    for k in (1, k2):
        js = os.path.join(work, f"s_{k}.json")
        subprocess.run(["smpirun", "-np", str(p), "-platform",
                        os.path.join(plat, f"cluster_{p}.xml"), "-hostfile",
                        os.path.join(plat, f"hosts_{p}.txt"), f"--cfg=smpi/host-speed:{speed}"] +
                       cfg + [binary, "accel"] + chain(n) +
                       ["--set", "solver.method=schur", "--repeat", str(k), "--quiet", "--json",
                        js], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t[k] = json.load(open(js))["time_per_eval_s"]
    return steady_pair(1, t[1], k2, t[k2])


def load():
    return float(open("/proc/loadavg").read().split()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--pairs", type=int, default=5, help="pairs of cold timed launches per point")
    ap.add_argument("--shares", default="1024,4096")
    ap.add_argument("--grow", default="4,16,64", help="host counts of item 4 ('' for none)")
    ap.add_argument("--allow-dirty", action="store_true")
    ap.add_argument("--no-build", action="store_true", help="use build/ and build-smpi/ as they are")
    a = ap.parse_args()
    shares = [int(x) for x in a.shares.split(",") if x]
    grow = [int(x) for x in a.grow.split(",") if x]
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMP_NUM_THREADS="1")
    sbuild = os.path.join(REPO, "build-smpi")
    if not a.no_build:
        subprocess.run(["cmake", "--build", a.build, "-j2", "--target", "mbspar"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["bash", os.path.join(HERE, "build.sh"), sbuild], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mbspar = os.path.join(os.path.abspath(a.build), "mbspar")
    # ~0.2-0.5 s of evaluations per launch: the start-up is outside time_per_eval_s
    cases = [{"case": f"share {s}",
              "variants": [real_variant("P1", mbspar, s, 1, max(50, 2048 * 1024 // s)),
                           real_variant("P2", mbspar, 2 * s, 2, max(50, 2048 * 1024 // s))]}
             for s in shares]
    spec = {"title": "Real one- and two-rank schur runs, the check of the SMPI compute modes "
                     "(bench/smpi/validate.py)", "baseline": "P1", "cases": cases}
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = os.path.join(REPO, "bench", "results", f"smpi_validate_{stamp}")
    recs = []
    with tempfile.TemporaryDirectory() as work:
        sp = os.path.join(work, "spec.json")
        json.dump(spec, open(sp, "w"))
        before = set(glob.glob(os.path.join(REPO, "bench", "results", "smpi_validate_real_*.jsonl")))
        rc = subprocess.run([sys.executable, os.path.join(REPO, "bench", "protocol.py"), "--name",
                             "smpi_validate_real", "--spec", sp, "--rounds", str(a.rounds)] +
                            (["--allow-dirty"] if a.allow_dirty else []),
                            stdout=subprocess.DEVNULL).returncode
        if rc:
            return rc
        realfile = sorted(set(glob.glob(os.path.join(REPO, "bench", "results",
                                                     "smpi_validate_real_*.jsonl"))) - before)[-1]
        med = medians(realfile)
        fl = os.path.join(sbuild, "mbspar_smpi_flops")
        cold = os.path.join(sbuild, "mbspar_smpi")
        nofl = ["--cfg=smpi/simulate-computation:no"]
        rows = []
        for s in shares:
            r1, r2 = med[(f"share {s}", "P1")], med[(f"share {s}", "P2")]
            w = flops_per_eval(fl, s, work) / r1
            ws = f"{w:.0f}f"
            k2 = max(11, min(101, 200 * 1024 // s))
            fw1 = smpi_steady(fl, s, 1, ws, nofl, work, k2)
            fw2 = smpi_steady(fl, 2 * s, 2, ws, nofl, work, k2)
            c1 = [smpi_steady(cold, s, 1, "1Gf", [], work, k2) for _ in range(a.pairs)]
            c2 = [smpi_steady(cold, 2 * s, 2, "1Gf", [], work, k2) for _ in range(a.pairs)]
            row = {"kind": "share", "share": s, "real_p1_s": r1, "real_p2_s": r2, "W": ws,
                   "flops_warm_p1_s": fw1, "flops_warm_p2_s": fw2, "cold_p1_s": c1, "cold_p2_s": c2,
                   "load": load()}
            rows.append(row)
            recs.append(row)
        growth = []
        if grow and 1024 in shares:
            ws = next(r["W"] for r in rows if r["share"] == 1024)
            for p in grow:
                fw = smpi_steady(fl, 1024 * p, p, ws, nofl, work, 11)
                c = [smpi_steady(cold, 1024 * p, p, "1Gf", [], work, 11)
                     for _ in range(max(1, a.pairs // 2 + 1))]
                g = {"kind": "grow", "P": p, "W": ws, "flops_warm_s": fw, "cold_s": c, "load": load()}
                growth.append(g)
                recs.append(g)
    git = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip()
    with open(out + ".jsonl", "w") as f:
        f.write(json.dumps({"kind": "meta", "git": git, "date": stamp, "real": realfile,
                            "rounds": a.rounds, "pairs": a.pairs}) + "\n")
        for r in recs:
            f.write(json.dumps(r) + "\n")
    ms = lambda x: f"{x * 1e3:.4g}"  # noqa: E731
    lines = [f"SMPI compute modes against real runs (bench/smpi/validate.py), build {git}, {stamp}; "
             f"real runs: {os.path.relpath(realfile, REPO)} ({a.rounds} interleaved rounds, "
             f"medians); cold timed: median of {a.pairs} pairs.", "",
             "| share (bodies/rank) | real P=1 [ms] | W (flops-warm speed) | real P=2 [ms] | "
             "flops-warm P=2 [ms] | error | cold timed P=1 [ms] | error | cold timed P=2 [ms] | "
             "error | load |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        c1, c2 = statistics.median(r["cold_p1_s"]), statistics.median(r["cold_p2_s"])
        lines.append(f"| {r['share']} | {ms(r['real_p1_s'])} | {r['W']} | {ms(r['real_p2_s'])} | "
                     f"{ms(r['flops_warm_p2_s'])} | {100 * (r['flops_warm_p2_s'] / r['real_p2_s'] - 1):+.1f} % | "
                     f"{ms(c1)} | {100 * (c1 / r['real_p1_s'] - 1):+.1f} % | {ms(c2)} | "
                     f"{100 * (c2 / r['real_p2_s'] - 1):+.1f} % | {r['load']:.2f} |")
    if growth:
        lines += ["", "The two modes as P grows, share 1024 (the 64-host point's), no real run to "
                  "compare:", "", "| P | flops-warm [ms] | cold timed, median [ms] | every pair [ms] "
                  "| cold / flops-warm | load |", "|---:|---:|---:|---|---:|---:|"]
        for g in growth:
            c = statistics.median(g["cold_s"])
            lines.append(f"| {g['P']} | {ms(g['flops_warm_s'])} | {ms(c)} | "
                         f"{', '.join(ms(x) for x in g['cold_s'])} | {c / g['flops_warm_s']:.2f} | "
                         f"{g['load']:.2f} |")
    open(out + ".md", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"validate.py: {out}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
