#!/usr/bin/env python3
"""Summary of bench/smpi/issue35.sh (issue 35's SMPI points). Reports, never asserts.

  issue35_report.py RESULTS.jsonl [--md FILE]

Per (mode, N, P): the steady simulated time per evaluation of every pair of launches (--repeat 1
and 1 + K: ((1 + K) t(1 + K) - t(1)) / K), the best and the median pair, the speedup against
serial ABA of the same N (the script's "baseline" record: CPU seconds per steady evaluation), and
the phase timers (mean over the evaluations of
the longer launch, first included) as the slowest rank and the average rank see them.
"""
import argparse
import json
import statistics
import sys

TARGET = {(65536, 64, "flops"): 30, (65536, 64, "cold"): 20, (65536, 64, "warm"): 20,
          (65536, 64, "control"): 20, (65536, 64, "flops-warm"): 20,
          (1048576, 1024, "cold"): 150, (1048576, 1024, "flops-warm"): 150,
          (1048576, 1024, "flops"): 150}
PHASES = [("eval.position", "position"), ("eval.velocity", "velocity"),
          ("eval.constraint.factor", "factor"), ("eval.constraint.solve", "cut-joint solve"),
          ("eval.acceleration", "back-subst."), ("comm.prefix", "prefix"),
          ("comm.interface", "interface"), ("comm.halo", "halo"), ("comm.allreduce", "allreduce")]


def steady(k1, t1, k2, t2):
    d = (k2 * t2 - k1 * t1) / (k2 - k1) if k2 > k1 else t2
    return d if d > 0 else t2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl")
    ap.add_argument("--md")
    a = ap.parse_args()
    recs = [json.loads(x) for x in open(a.jsonl) if x.strip()]
    meta = next((r for r in recs if r.get("kind") == "meta"), {})
    end = next((r for r in recs if r.get("kind") == "end"), {})
    cal = next((r for r in recs if r.get("kind") == "baseline"), {})
    aba = {65536: [cal.get("aba_65536_s") or float("nan")],
           1048576: [cal.get("aba_1048576_s") or float("nan")]}
    pts = {}
    for r in recs:
        if r.get("kind") != "smpi":
            continue
        key = (r["study"], r["size"], r["P"])
        pts.setdefault(key, {}).setdefault(r["note"], []).append(r)
    loads = [r["load"] for r in recs if "load" in r]
    out = []
    w = out.append
    w(f"Issue 35, SMPI points: build {meta.get('git')}, {meta.get('machine')}, {meta.get('simgrid')}, "
      f"{meta.get('date')}; load average {min(loads, default=0):.2f}-{max(loads, default=0):.2f} "
      f"during the launches (start {meta.get('load_start')}, end {end.get('load_end')}); "
      f"{end.get('wall_s')} s of wall time.")
    if cal.get("note"):  # --speeds, --flops64, --cold-only: no real runs in this file
        w(f"No real runs in this file ({cal['note']}); the speedups against ABA are left empty.")
    if "real_schur_p1_s" in cal:
        w(f"Serial ABA here (one thread, CPU seconds per steady evaluation, best of 2 pairs of "
          f"launches): N = 65536 {aba[65536][0] * 1e3:.3g} ms, N = 2^20 {aba[1048576][0] * 1e3:.3g} ms.")
        w(f"Flop modes: real one-rank schur of the 65536 chain {cal['real_schur_p1_s'] * 1e3:.3g} ms per "
          f"evaluation, host speed {cal['host_speed']} (flops); of the 1024 chain "
          f"{cal.get('real_schur_1024_s', float('nan')) * 1e3:.3g} ms, host speed "
          f"{cal.get('host_speed_warm')} (flops-warm).")
    w("")
    w("| mode | N | P | simulated ms/eval (best pair) | median pair | every pair [ms] | ABA(N) here [ms] "
      "| speedup best | speedup median | target | met (best / median) |")
    w("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
    order = {"flops": 0, "flops-warm": 1, "cold": 2, "warm": 3, "control": 4}
    phase_rows = []
    for (mode, n, p) in sorted(pts, key=lambda k: (k[1], k[2], order.get(k[0], 9))):
        ts = []
        for note, lst in pts[(mode, n, p)].items():
            lst = sorted(lst, key=lambda r: r["repeat"])
            if len(lst) < 2:
                continue
            ts.append((steady(lst[0]["repeat"], lst[0]["time_per_eval_s"], lst[-1]["repeat"],
                              lst[-1]["time_per_eval_s"]), lst[-1]))
        if not ts:
            continue
        ts.sort(key=lambda x: x[0])
        best, med = ts[0][0], statistics.median([t for t, _ in ts])
        ab = min(aba.get(n, [float("nan")]))
        tg = TARGET.get((n, p, mode))
        sb, sm = ab / best, ab / med
        met = "" if tg is None or ab != ab else f"{'yes' if sb >= tg else 'no'} / {'yes' if sm >= tg else 'no'}"
        w(f"| {mode} | {n} | {p} | {best * 1e3:.3g} | {med * 1e3:.3g} | "
          f"{', '.join(f'{t * 1e3:.3g}' for t, _ in sorted(ts, key=lambda x: x[1]['note']))} | "
          f"{ab * 1e3:.3g} | {sb:.1f} | {sm:.1f} | {tg if tg else ''} | {met} |")
        rb = ts[0][1]
        k = rb["repeat"]
        phase_rows.append((mode, n, p, rb, k))
    w("")
    w("Phase timers of the best pair's longer launch, ms per evaluation (mean over its evaluations, "
      "the first included): slowest rank / average rank; `eval.constraint.solve` holds the "
      "interface, so `comm.interface` is a part of it.")
    w("")
    w("| mode | N | P | " + " | ".join(h for _, h in PHASES) + " |")
    w("|---|---:|---:|" + "---:|" * len(PHASES))
    for mode, n, p, rb, k in phase_rows:
        cells = []
        for key, _ in PHASES:
            mx, av = rb.get("timers", {}).get(key), rb.get("timers_avg", {}).get(key)
            cells.append("" if mx is None else f"{mx / k * 1e3:.3g} / {(av or 0) / k * 1e3:.3g}")
        w(f"| {mode} | {n} | {p} | " + " | ".join(cells) + " |")
    text = "\n".join(out) + "\n"
    if a.md:
        open(a.md, "w").write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
