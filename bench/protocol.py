#!/usr/bin/env python3
"""The benchmark protocol behind every speed ratio mbspar quotes (issue 35, docs/scaling.md).

A ratio is only quoted from a run of this protocol:

* the variants (the fastest serial code and the contenders) are launched **interleaved**: round r
  runs every variant once, starting at variant r mod k, so neither a drift of the machine's speed
  nor the order within a round favours one side;
* one **warm-up** round first, not counted (page cache, CPU frequency, ccache'd binaries);
* at least **10 counted rounds** (fewer only with --rounds and then the report says so);
* **pinned**: serial variants run under `taskset -c 0`, MPI variants with `--bind-to core
  --map-by core` (one core per rank; never more ranks x threads than cores);
* the statistic is the **median** with its spread (min..max and the interquartile range) and the
  best as a second figure; a ratio is the median of the **per-round ratios** against the baseline
  (paired, so a slow moment hits both sides of the pair), with their min..max;
* the **load average** before every launch and the **commit** (`git describe --dirty`) are
  recorded; a dirty tree is refused unless --allow-dirty, and then the report says "dirty".

A variant's value is read from the run's JSON report (`--json PATH`, key `time_per_eval_s` by
default: the accel verb's mean over `--repeat K` evaluations, start-up excluded) or, with
metric "wall", the whole command's wall time.

Usage (normally through a wrapper such as bench/schur.sh):

  bench/protocol.py --name NAME --spec SPEC.json [--rounds 10] [--allow-dirty]

SPEC.json: {"baseline": "aba", "cases": [{"case": "chain 65536", "variants": [
  {"label": "aba", "cmd": [...], "metric": "json:time_per_eval_s", "ranks": 1, "threads": 1}, ...]}]}
Each "cmd" may contain the token @JSON@, replaced by a per-launch JSON path.
Writes bench/results/NAME_<UTC>.jsonl (every launch) and .md (the tables). Reports, never asserts.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load_avg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def git_describe():
    try:
        return subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def quartiles(v):
    s = sorted(v)
    if len(s) < 4:
        return s[0], s[-1]
    q = statistics.quantiles(s, n=4, method="inclusive")
    return q[0], q[2]


def launch(var, work, tag):
    path = os.path.join(work, tag + ".json")
    cmd = [path if a == "@JSON@" else a for a in var["cmd"]]
    before = load_avg()[0]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    rec = {"label": var["label"], "load1": before, "wall_s": wall, "rc": p.returncode}
    if p.returncode != 0:
        rec["error"] = p.stderr.strip().splitlines()[-1:] or ["(no message)"]
        return rec, None
    metric = var.get("metric", "json:time_per_eval_s")
    if metric == "wall":
        return rec, wall
    key = metric.split(":", 1)[1]
    with open(path) as f:
        d = json.load(f)
    for k in key.split("."):
        d = d[k]
    rec[key] = d
    return rec, float(d)


def fmt(x):
    return "%.4g" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--allow-dirty", action="store_true")
    ap.add_argument("--unit", default="ms", choices=["s", "ms", "us"])
    a = ap.parse_args()
    spec = json.load(open(a.spec))
    commit = git_describe()
    if commit.endswith("-dirty") and not a.allow_dirty:
        print(f"protocol.py: the tree is dirty ({commit}); commit first or pass --allow-dirty",
              file=sys.stderr)
        return 2
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6}[a.unit]
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    base = os.path.join(HERE, "results", f"{a.name}_{stamp}")
    ncpu = os.cpu_count()
    for case in spec["cases"]:
        for v in case["variants"]:
            if v.get("ranks", 1) * v.get("threads", 1) > ncpu:
                print(f"protocol.py: {case['case']} {v['label']}: {v['ranks']} ranks x "
                      f"{v['threads']} threads exceed the {ncpu} cores", file=sys.stderr)
                return 2
    load0 = load_avg()
    results = {}
    with open(base + ".jsonl", "w") as jl, tempfile.TemporaryDirectory() as work:
        jl.write(json.dumps({"kind": "meta", "git": commit, "date": stamp, "rounds": a.rounds,
                             "cores": ncpu, "load_start": load0, "spec": spec}) + "\n")
        for case in spec["cases"]:
            vs = case["variants"]
            vals = {v["label"]: [None] * a.rounds for v in vs}
            for r in range(-1, a.rounds):  # r = -1: warm-up, not counted
                k = len(vs)
                order = [vs[(max(r, 0) + i) % k] for i in range(k)]
                for v in order:
                    rec, val = launch(v, work, f"{v['label']}_{r}")
                    rec.update({"kind": "launch", "case": case["case"], "round": r})
                    jl.write(json.dumps(rec) + "\n")
                    jl.flush()
                    if val is None:
                        print(f"protocol.py: {case['case']} {v['label']} round {r} failed: "
                              f"{rec['error'][0]}", file=sys.stderr)
                    elif r >= 0:
                        vals[v["label"]][r] = val
            results[case["case"]] = vals
            print(f"protocol.py: {case['case']} done", file=sys.stderr)
    load1 = load_avg()
    bl = spec.get("baseline", spec["cases"][0]["variants"][0]["label"])
    out = [f"# {spec.get('title', a.name)}\n",
           f"git {commit}, {stamp}, {ncpu} cores, load average {load0[0]:.2f} {load0[1]:.2f} "
           f"{load0[2]:.2f} at the start, {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} at the end. "
           f"Protocol: bench/protocol.py (docs/scaling.md \"Benchmark protocol\"): {a.rounds} "
           "interleaved rounds after one warm-up round, pinned, medians first.\n"]
    if a.rounds < 10:
        out.append(f"**Fewer than the protocol's 10 rounds ({a.rounds}): not a figure to quote.**\n")
    if commit.endswith("-dirty"):
        out.append("**Measured on a dirty tree: not a figure to quote.**\n")
    for case in spec["cases"]:
        vals = results[case["case"]]
        out.append(f"\n## {case['case']}\n")
        if case.get("note"):
            out.append(case["note"] + "\n")
        out.append(f"| variant | median [{a.unit}] | IQR | min..max | best | ratio {bl}/variant: "
                   "median of rounds (min..max) | n |")
        out.append("|---|---:|---|---|---:|---|---:|")
        b = vals.get(bl)
        bmetric = next((v.get("metric", "json:time_per_eval_s") for v in case["variants"]
                        if v["label"] == bl), None)
        for v in case["variants"]:
            x = [t for t in vals[v["label"]] if t is not None]
            if not x:
                out.append(f"| {v['label']} | failed | | | | | 0 |")
                continue
            lo, hi = quartiles(x)
            rat = ""
            if b is not None and v["label"] != bl and \
                    v.get("metric", "json:time_per_eval_s") == bmetric:
                pr = [bb / t for bb, t in zip(b, vals[v["label"]]) if bb is not None and t is not None]
                if pr:
                    rat = f"**{statistics.median(pr):.3f}** ({min(pr):.3f}..{max(pr):.3f})"
            out.append(f"| {v['label']} | **{fmt(statistics.median(x) * scale)}** | "
                       f"{fmt(lo * scale)}..{fmt(hi * scale)} | {fmt(min(x) * scale)}.."
                       f"{fmt(max(x) * scale)} | {fmt(min(x) * scale)} | {rat} | {len(x)} |")
        out.append("\nCommands (pinned):\n")
        for v in case["variants"]:
            out.append(f"- {v['label']}: `{' '.join(v['cmd'])}`")
    with open(base + ".md", "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))
    print(f"protocol.py: wrote {base}.md and .jsonl", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
