#!/usr/bin/env python3
"""The SMPI flop modes' host speeds by the benchmark protocol, then the flop points (issue 35).

    python3 bench/smpi/calibrate.py [--build DIR] [--rounds N] [--big] [--no-run] [--allow-dirty]

A flop-mode speedup is serial ABA's time over a simulated time whose compute is counted flops at a
host speed; that speed is the one-rank schur's flops over its time on this machine, so the speedup
scales with the ratio ABA / one-rank schur measured here (docs/scaling.md, "The fourteenth
session"). This script measures both by bench/protocol.py (interleaved pinned launches, medians of
the in-process time per evaluation, `time_per_eval_s`; ten rounds by default) instead of the CPU
time of whole launches that bench/smpi/issue35.sh uses when it calibrates itself (launch-to-launch
noise of the size of the evaluations it times):

  - chain 65536: serial ABA (`taskset -c 0`) and `mpirun -n 1` schur: the flops mode's speed F =
    counted flops per evaluation / the schur median;
  - chain 1024 (one rank's share at 64 hosts), `mpirun -n 1` schur, warm (--repeat 2000): the
    flops-warm mode's speed W;
  - with --big, also chain 2^20: ABA (the 1024-host point's baseline).

The counted flops per evaluation come from one simulated host at 1 Gf (build-smpi's
mbspar_smpi_flops). Then, unless --no-run, `bench/smpi/issue35.sh --speeds F,W [--no-big]` runs the
flop points (deterministic given F and W) and this script prints each point's speedup against the
protocol's ABA median. Needs a quiet machine for the protocol's rounds (they are the figure).
Writes bench/results/smpi_calib_<UTC>.{jsonl,md} (protocol.py) and the issue35.sh results.
"""
import argparse
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
from schur_report import steady_pair  # noqa: E402  (the steady time of a pair, as the reports)


def chain(n):
    return [os.path.join(REPO, "configs", "chain.cfg"), "--set", f"model.chain.n={n}",
            "--set", "model.chain.q0=0.01", "--set", "model.chain.qd0=0.5"]


def variant(label, mbspar, n, method, ranks, repeat):
    run = ["taskset", "-c", "0"] if ranks == 0 else \
        ["/usr/bin/mpirun", "-n", "1", "--bind-to", "core", "--map-by", "core"]
    return {"label": label, "ranks": 1, "threads": 1,
            "cmd": ["env", "OMP_NUM_THREADS=1"] + run + [mbspar, "accel"] + chain(n) +
                   ["--set", f"solver.method={method}", "--repeat", str(repeat),
                    "--json", "@JSON@", "-q"]}


def flops_per_eval(sbin, n, work):
    """Counted flops per evaluation of one-rank schur on the n-link chain (1 host at 1 Gf)."""
    plat = os.path.join(work, "p1")
    subprocess.run(["bash", os.path.join(HERE, "platform.sh"), "1", "1Gf", plat], check=True)
    js = os.path.join(work, f"f{n}.json")
    subprocess.run(["smpirun", "-np", "1", "-platform", os.path.join(plat, "cluster_1.xml"),
                    "-hostfile", os.path.join(plat, "hosts_1.txt"), "--cfg=smpi/host-speed:1Gf",
                    "--cfg=smpi/simulate-computation:no", sbin, "accel"] + chain(n) +
                   ["--set", "solver.method=schur", "--repeat", "3", "--quiet", "--json", js],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.load(open(js))["time_per_eval_s"] * 1e9


def medians(path):
    vals = {}
    for line in open(path):
        d = json.loads(line)
        if d.get("kind") == "launch" and d["round"] >= 0 and d.get("time_per_eval_s"):
            vals.setdefault((d["case"], d["label"]), []).append(d["time_per_eval_s"])
    return {k: statistics.median(v) for k, v in vals.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--big", action="store_true", help="also ABA(2^20) and the 1024-host points")
    ap.add_argument("--no-run", action="store_true", help="calibrate only")
    ap.add_argument("--allow-dirty", action="store_true")
    a = ap.parse_args()
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(["cmake", "--build", a.build, "-j2", "--target", "mbspar"], check=True,
                   stdout=subprocess.DEVNULL)
    sbuild = os.path.join(REPO, "build-smpi")
    subprocess.run(["bash", os.path.join(HERE, "build.sh"), "--flops-only", sbuild], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mbspar = os.path.join(os.path.abspath(a.build), "mbspar")
    cases = [{"case": "chain 65536", "variants": [variant("aba", mbspar, 65536, "aba", 0, 20),
                                                   variant("schur1", mbspar, 65536, "schur", 1, 20)]},
             {"case": "chain 1024", "variants": [variant("aba", mbspar, 1024, "aba", 0, 2000),
                                                  variant("schur1", mbspar, 1024, "schur", 1, 2000)]}]
    if a.big:
        cases.append({"case": "chain 1048576",
                      "variants": [variant("aba", mbspar, 1048576, "aba", 0, 5)]})
    spec = {"title": "Calibration of the SMPI flop modes by the benchmark protocol "
                     "(bench/smpi/calibrate.py)", "baseline": "aba", "cases": cases}
    with tempfile.TemporaryDirectory() as work:
        sp = os.path.join(work, "spec.json")
        json.dump(spec, open(sp, "w"))
        before = set(glob.glob(os.path.join(REPO, "bench", "results", "smpi_calib_*.jsonl")))
        cmd = [sys.executable, os.path.join(REPO, "bench", "protocol.py"), "--name", "smpi_calib",
               "--spec", sp, "--rounds", str(a.rounds)] + (["--allow-dirty"] if a.allow_dirty else [])
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
        if rc:
            return rc
        new = sorted(set(glob.glob(os.path.join(REPO, "bench", "results", "smpi_calib_*.jsonl")))
                     - before)
        med = medians(new[-1])
        sbin = os.path.join(sbuild, "mbspar_smpi_flops")
        f64, f1k = flops_per_eval(sbin, 65536, work), flops_per_eval(sbin, 1024, work)
    aba = med[("chain 65536", "aba")]
    fs = f64 / med[("chain 65536", "schur1")]
    ws = f1k / med[("chain 1024", "schur1")]
    print(f"calibrate.py: {new[-1]}")
    print(f"  chain 65536: ABA {aba * 1e3:.4g} ms, one-rank schur "
          f"{med[('chain 65536', 'schur1')] * 1e3:.4g} ms (medians), ratio "
          f"{aba / med[('chain 65536', 'schur1')]:.3f}; {f64:.4g} flops/eval -> F = {fs / 1e9:.4g} Gf")
    print(f"  chain 1024: one-rank schur {med[('chain 1024', 'schur1')] * 1e3:.4g} ms warm; "
          f"{f1k:.4g} flops/eval -> W = {ws / 1e9:.4g} Gf")
    if a.big:
        print(f"  chain 1048576: ABA {med[('chain 1048576', 'aba')] * 1e3:.4g} ms")
    speeds = f"{fs:.0f}f,{ws:.0f}f"
    print(f"  bash bench/smpi/issue35.sh --speeds {speeds}{'' if a.big else ' --no-big'}")
    if a.no_run:
        return 0
    before = set(glob.glob(os.path.join(REPO, "bench", "results", "smpi_issue35_*.jsonl")))
    rc = subprocess.run(["bash", os.path.join(HERE, "issue35.sh"), "--speeds", speeds] +
                        ([] if a.big else ["--no-big"]), stdout=subprocess.DEVNULL).returncode
    if rc:
        return rc
    out = sorted(set(glob.glob(os.path.join(REPO, "bench", "results", "smpi_issue35_*.jsonl")))
                 - before)[-1]
    pts = {}
    for line in open(out):
        d = json.loads(line)
        if d.get("kind") == "smpi":
            pts.setdefault((d["study"], d["size"], d["P"]), []).append(d)
    print(f"calibrate.py: {out}")
    for (study, n, p), recs in sorted(pts.items()):
        a1, a2 = sorted(recs, key=lambda r: r["repeat"])[:2]
        t = steady_pair(a1["repeat"], a1["time_per_eval_s"], a2["repeat"], a2["time_per_eval_s"])
        base = aba if n == 65536 else med.get(("chain 1048576", "aba"))
        sx = f"{base / t:.1f}x ABA (protocol median)" if base else ""
        print(f"  {study:10s} N={n} P={p}: {t * 1e3:.4g} ms/eval simulated  {sx}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
