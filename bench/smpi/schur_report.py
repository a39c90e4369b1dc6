#!/usr/bin/env python3
"""SMPI study of solver.method = schur (bench/smpi/schur.sh). Reports, never asserts.

  schur_report.py record JSON --kind smpi|real|cpa --study S --family F --size N --P P --time "w u s rss_kB"
  schur_report.py report RESULTS.jsonl --img DIR [--prefix smpi_schur] --md FILE
  schur_report.py bestreal RESULTS.jsonl P [--family F]   (best steady real schur time at P, s)
  schur_report.py bestsim RESULTS.jsonl STUDY FAMILY P    (best pair's simulated time, s)

Definitions (docs/scaling.md, "Exact solver (schur) on simulated clusters"):
  T_sim(P)   SMPI's simulated time per evaluation without the first (cold) one: launches with
             --repeat 1 and 1 + K, ((1 + K) t(1 + K) - t(1)) / K of their time_per_eval_s (the mean
             of the timed evaluations, MPI_Wtime inside the simulation; startup excluded)
  T_ABA(N)   serial ABA per evaluation, for real here: best of 3 launches of --repeat 30
  speedup    T_ABA(N) / T_sim(P)
  cpa        mbspar cpa --method schur: owner-computes schedule with messages (distributed_s),
             kernel costs calibrated here, message latency/bandwidth measured in the simulation
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile


def cmd_record(a):
    with open(a.json) as f:
        d = json.load(f)
    t = (a.time.split() + ["0"] * 4)[:4]
    wall, user, sysm, rss = float(t[0]), float(t[1]), float(t[2]), int(float(t[3]))
    r = {"kind": a.kind, "study": a.study, "family": a.family, "size": a.size, "P": a.P,
         "bodies": d.get("model", {}).get("bodies"), "storage": d.get("model", {}).get("storage"),
         "launch_wall_s": wall, "launch_user_s": user, "launch_sys_s": sysm,
         "launch_maxrss_kB": rss, "load": a.load, "note": a.note}
    pr = d.get("peak_rss_bytes")
    if isinstance(pr, dict):
        r["mbspar_peak_rss_bytes_max"] = pr.get("max")
    if a.kind == "cpa":
        c = d["cpa"]
        kinds = [k.get("kind", "") for k in c.get("critical_path", {}).get("by_kind", [])]
        sched = {str(s["P"]): [s.get("list_s"), s.get("distributed_s")] for s in c["schedule"]}
        cm = c.get("cost_model", {})
        r.update({"method": c.get("method"), "work_s": c.get("work_s"), "span_s": c.get("span_s"),
                  "schedule": sched,
                  "cost_model": {k: cm.get(k) for k in ("flop_time_s", "latency_s", "bandwidth_Bps",
                                                        "calibrated", "measured_eval_s")},
                  "critical_path_kinds": kinds})
        why = None
        if c.get("method") != "schur":
            why = f"cpa built a {c.get('method')} graph"
        elif any(k.startswith("cg.") for k in kinds):
            why = "this build's cpa has no schur graph (it falls back to the J-CG graph)"
        elif not any(v[1] is not None for p, v in sched.items() if int(p) > 1):
            why = "no distributed (owner-computes) schedule in cpa's output"
        r["available"] = why is None
        if why:
            r["unavailable_reason"] = why
    else:
        r["repeat"] = d.get("repeat", 1)
        r["time_per_eval_s"] = d["time_per_eval_s"]
        s = d.get("solver", {})
        r["method"] = s.get("method")
        r["iterations"] = s.get("iterations")
        r["timers"] = {k: v["max"] for k, v in d.get("timers", {}).items()}
        r["timers_avg"] = {k: v.get("avg") for k, v in d.get("timers", {}).items()}
        r["timers_max_rank"] = {k: v.get("max_rank") for k, v in d.get("timers", {}).items()}
    print(json.dumps(r))


def steady_pair(k1, t1, k2, t2):
    """time per evaluation without the first one from launches of k1 < k2 evaluations; the longer
    launch's mean when the difference is not positive (noise in the single evaluation: flagged by
    unreliable())."""
    if k2 > k1:
        d = (k2 * t2 - k1 * t1) / (k2 - k1)
        if d > 0:
            return d
    return t2


def unreliable(k1, t1, k2, t2):
    return k2 > k1 and (k2 * t2 - k1 * t1) <= 0


def cmd_steady(a):
    d = [json.load(open(f)) for f in (a.k1, a.k2)]
    if unreliable(d[0]['repeat'], d[0]['time_per_eval_s'], d[1]['repeat'], d[1]['time_per_eval_s']):
        print("schur_report.py: the single evaluation took longer than the other launch: its mean",
              file=sys.stderr)
    print(f"{steady_pair(d[0]['repeat'], d[0]['time_per_eval_s'], d[1]['repeat'], d[1]['time_per_eval_s']):.6g}")


def merge(lst):
    """one record per P from the pairs of launches with --repeat 1 and 1 + K (notes "pair i"; older
    files: one pair): t = the best pair's steady time per evaluation, t_pairs = every pair's,
    t_mean = that pair's longer launch's mean, t_first = its single evaluation."""
    out = []
    for p in sorted({r["P"] for r in lst}):
        allp = [r for r in lst if r["P"] == p]
        groups = {}
        for r in allp:
            note = r.get("note") or ""
            key = note if note.startswith("pair") else "pair 1"
            groups.setdefault(key, []).append(r)
        cands = []
        for key, g in groups.items():
            ls = sorted(g, key=lambda r: r["repeat"])
            r1, r2 = ls[0], ls[-1]
            if r1 is r2:
                continue
            t = steady_pair(r1["repeat"], r1["time_per_eval_s"], r2["repeat"], r2["time_per_eval_s"])
            cands.append((t, r1, r2))
        if not cands:
            continue
        cands.sort(key=lambda c: c[0])
        t, r1, r2 = cands[0]
        r = dict(r2)
        r["t"] = t
        r["t_pairs"] = [c[0] for c in cands]
        r["t_median"] = sorted(r["t_pairs"])[len(cands) // 2]
        r["t_mean"] = r2["time_per_eval_s"]
        r["t_first"] = r1["time_per_eval_s"] if r1["repeat"] == 1 else None
        r["unreliable"] = unreliable(r1["repeat"], r1["time_per_eval_s"], r2["repeat"], r2["time_per_eval_s"])
        r["launch_wall_s"] = sum(x["launch_wall_s"] for x in allp)
        r["launch_maxrss_kB"] = max(x["launch_maxrss_kB"] for x in allp)
        r["repeat"] = r2["repeat"] - (r1["repeat"] if r2["repeat"] > r1["repeat"] else 0)
        out.append(r)
    return out


def load(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.strip()]


def fmt(x, nd=3):
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "n/a"
    if isinstance(x, str):
        return x
    if x != 0 and (abs(x) >= 1e4 or abs(x) < 1e-3):
        return f"{x:.{nd - 1}e}"
    return f"{x:.{nd}g}"


def ms(x):
    return "n/a" if x is None else f"{x * 1e3:.3g}"


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def best_real(ok, p, fam="chain"):
    """The best steady pair of the real schur runs (calibration) of a model at P ranks."""
    re = [r for r in ok if r["kind"] == "real" and r["study"] == "calib" and r["P"] == p
          and r["family"] == fam]
    pairs = []
    for note in sorted({r["note"] for r in re}):
        ls = sorted([r for r in re if r["note"] == note], key=lambda r: r["repeat"])
        if len(ls) >= 2:
            pairs.append(steady_pair(ls[0]["repeat"], ls[0]["time_per_eval_s"],
                                     ls[-1]["repeat"], ls[-1]["time_per_eval_s"]))
    return (min(pairs) if pairs else None), re


def cmd_bestreal(a):
    ok = [r for r in load(a.results) if r.get("kind") == "real" and not r.get("failed")]
    t, _ = best_real(ok, a.P, a.family)
    if t is None:
        sys.exit("schur_report.py: no real schur pair at P = %d" % a.P)
    print("%.9g" % t)


def cmd_bestsim(a):
    """The best pair's steady simulated time of one point (what the report shows)."""
    recs = [r for r in load(a.results) if r.get("kind") == "smpi" and not r.get("failed")
            and r["study"] == a.study and r["family"] == a.family]
    m = next((r for r in merge(recs) if r["P"] == a.P), None)
    if m is None:
        sys.exit("schur_report.py: no SMPI point %s %s P = %d" % (a.study, a.family, a.P))
    print("%.9g" % m["t"])


def cmd_report(a):
    recs = load(a.results)
    meta = next((r for r in recs if r.get("kind") == "meta"), {})
    end = next((r for r in recs if r.get("kind") == "end"), {})
    net = next((r for r in recs if r.get("kind") == "network"), None)
    cun = next((r for r in recs if r.get("kind") == "cpa_unavailable"), None)
    ok = [r for r in recs if r.get("kind") in ("smpi", "real", "cpa") and not r.get("failed")]
    bad = [r for r in recs if r.get("failed")]
    loads = [r["load"] for r in ok if "load" in r]

    def aba(fam, size):
        ls = [r for r in ok if r["kind"] == "real" and r["study"] == "aba" and r["family"] == fam
              and r["size"] == size]
        return min(ls, key=lambda r: r["time_per_eval_s"]) if ls else None

    def smpi(study, fam):
        return merge([r for r in ok if r["kind"] == "smpi" and r["study"] == study
                      and r["family"] == fam])

    def cpa(fam):
        return next((r for r in ok if r["kind"] == "cpa" and r["family"] == fam), None)

    flops = meta.get("mode") == "flops"
    if flops:
        def per(fam, key, fkey):
            spd = float(str(meta.get(key, "0")).rstrip("f") or 0)
            return (f"{fam} {meta.get(key)} ({fmt(1 / spd if spd else None)} s per flop, "
                    f"{(meta.get(fkey) or 0):.0f} flops per evaluation)")
        how = ("compute charged by counted flops (mbspar_smpi_flops, "
               "smpi/simulate-computation:no) at a host speed per model that makes the simulated "
               "P = 1 equal the real one-rank schur time of this run: "
               + per("chain", "host_speed", "flops_per_eval") + ", "
               + per("tree", "host_speed_tree", "flops_per_eval_tree"))
    else:
        how = (f"host speed {meta.get('host_speed')} (compute blocks timed, 1:1 with this "
               f"machine)")
    L = [f"Machine: {meta.get('machine')} ({meta.get('nproc')} cores); SimGrid "
         f"{meta.get('simgrid')}; build {meta.get('git')} (SMPI: smpicc {meta.get('build_flags')}; "
         f"real: {meta.get('real_build')}); {how}; "
         f"{'quick' if meta.get('quick') else 'full'} run {meta.get('date')}, "
         f"{end.get('wall_s', '?')} s of wall time; load average "
         + (f"{min(loads):.2f}–{max(loads):.2f} during the launches" if loads else "n/a")
         + f" (start {meta.get('load_start')}, end {end.get('load_end', '?')}). "
         f"SMPI: --repeat {meta.get('repeat_smpi')} evaluations per launch; ABA: best of 3 "
         f"launches of --repeat {meta.get('repeat_aba')}.", ""]

    # serial ABA
    fams = {"chain": "chain", "tree": "binary tree"}
    L += ["#### Serial ABA here (the baseline)", "",
          "| model | N | ABA time/eval [ms] (best of 3) | the 3 launches [ms] | first evaluation "
          "alone [ms] | steady (without the first) [ms] | peak RSS [MB] |",
          "|---|---:|---:|---|---:|---:|---:|"]
    seen = sorted({(r["family"], r["size"]) for r in ok if r["kind"] == "real" and r["study"] == "aba"})
    for fam, size in seen:
        ls = [r for r in ok if r["kind"] == "real" and r["study"] == "aba" and r["family"] == fam
              and r["size"] == size]
        b = aba(fam, size)
        a1 = next((r for r in ok if r["kind"] == "real" and r["study"] == "aba1"
                   and r["family"] == fam and r["size"] == size), None)
        st = steady_pair(1, a1["time_per_eval_s"], b["repeat"], b["time_per_eval_s"]) if a1 else None
        L.append(f"| {fams[fam]} | {b['bodies']} | {ms(b['time_per_eval_s'])} | "
                 + ", ".join(ms(r["time_per_eval_s"]) for r in ls)
                 + f" | {ms(a1 and a1['time_per_eval_s'])} | {ms(st)} | "
                 f"{max(r['launch_maxrss_kB'] for r in ls) / 1024:.0f} |")
    L.append("")

    # calibration
    calib = {}
    L += ["#### Calibration: schur on the chain (N = 65536), real against simulated", "",
          "Real: `mpirun -n P --bind-to core mbspar accel ... --set solver.method=schur`, launches of "
          "--repeat 1 and 31, the steady time per evaluation from their difference, best of 2 pairs. "
          "SMPI: the strong-scaling point at the same P (the same difference).", "",
          "| P | real time/eval [ms] | SMPI simulated time/eval [ms] | SMPI / real | load |",
          "|---:|---:|---:|---:|---:|"]
    st_chain = smpi("strong", "chain")
    for p in (1, 2):
        sm = next((r for r in st_chain if r["P"] == p), None)
        rb, re = best_real(ok, p)
        ratio = sm["t"] / rb if rb and sm else None
        calib[p] = ratio
        L.append(f"| {p} | {ms(rb)} | {ms(sm and sm['t'])} | "
                 f"{fmt(ratio)} | {fmt(max((r['load'] for r in re), default=None))} |")
    if flops:
        tr, _ = best_real(ok, 1, "tree")
        L.append(f"\nFlop-cost mode: P = 1 agrees by construction (the host speed is set from it; "
                 f"the tree's from its own one-rank run, {ms(tr)} ms real); P = 2 compares the "
                 f"model with a real two-rank run.")
    if calib.get(1) and calib.get(2):
        print(f"schur_report.py: calibration SMPI/real = {calib[1]:.3f} at P = 1, "
              f"{calib[2]:.3f} at P = 2", file=sys.stderr)
    L.append("")
    if net:
        if net.get("halo_latency_s") is not None:  # since 2026-11-26: 16 hosts, alpha per allreduce round
            L += [f"Simulated network as cpa --calibrate measures it on {net.get('hosts', 16)} simulated "
                  f"hosts: allreduce of 2 doubles {fmt(net.get('allreduce_s'))} s, i.e. "
                  f"{fmt(net['latency_s'])} s per round (cpa's message latency alpha), halo exchange "
                  f"of ranks 0 and 1 {fmt(net['halo_latency_s'])} s, bandwidth "
                  f"{fmt(net['bandwidth_Bps'])} B/s; cpa uses alpha and the bandwidth.", ""]
        else:
            L += [f"Simulated network as cpa --calibrate measures it on 2 simulated hosts: latency "
                  f"{fmt(net['latency_s'])} s, bandwidth {fmt(net['bandwidth_Bps'])} B/s"
                  + (f", allreduce of 2 doubles {fmt(net.get('allreduce_s'))} s" if net.get("allreduce_s") else "")
                  + (" (nominal values: the measurement failed)" if net.get("nominal") else "")
                  + "; cpa uses these.", ""]

    # strong scaling
    plots = {}
    for fam in ("chain", "tree"):
        rs = smpi("strong", fam)
        if not rs:
            continue
        b = aba(fam, rs[0]["size"])
        tab = b["time_per_eval_s"] if b else None
        c = cpa(fam)
        cav = c and c.get("available")
        t1 = next((r["t"] for r in rs if r["P"] == 1), None)
        L += [f"#### Strong scaling, {fams[fam]} N = {rs[0]['bodies']} "
              f"(ABA here: {ms(tab)} ms per evaluation)", "",
              "| P | N/host | simulated time/eval [ms] (best pair) | every pair [ms] | first evaluation alone [ms] | speedup vs ABA | speedup vs SMPI P=1 | "
              "interface steps | prefix [ms]* | interface [ms]* | halo [ms]* | cpa T_P [ms] | "
              "SMPI/cpa − 1 | real time of the simulation [s] | peak RSS [MB] |",
              "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        pts = []
        for r in rs:
            t = r["t"]
            tm = r["timers"]
            k = (r["repeat"] + 1) if r.get("t_first") is not None else r["repeat"]
            cp = None
            if cav:
                cp = (c["schedule"].get(str(r["P"])) or [None, None])[1]
                if r["P"] == 1 and cp is None:
                    cp = c["schedule"].get("1", [None])[0]
            rel = (t / cp - 1) if cp else None
            L.append(f"| {r['P']} | {r['bodies'] // r['P']} | {ms(t)}{' †' if r['unreliable'] else ''} | {', '.join(ms(x) for x in r.get('t_pairs', [t]))} | {ms(r.get('t_first'))} | {fmt(tab / t if tab else None)} | "
                     f"{fmt(t1 / t if t1 else None)} | {r.get('iterations')} | "
                     f"{ms(tm.get('comm.prefix', 0) / k)} | {ms(tm.get('comm.interface', 0) / k)} | "
                     f"{ms(tm.get('comm.halo', 0) / k)} | {ms(cp)} | "
                     f"{(f'{rel * 100:+.0f} %') if rel is not None else 'n/a'} | "
                     f"{r['launch_wall_s']:.1f} | {r['launch_maxrss_kB'] / 1024:.0f} |")
            pts.append((r["P"], t, tab / t if tab else None, cp))
        fails = [r for r in bad if r.get("study") == "strong" and r["family"] == fam]
        for r in fails:
            L.append(f"| {r['P']} | FAILED | exit {r['rc']}: {r['reason']} |||||||||||")
        L.append("\n\\* phase timers of the slowest rank per evaluation, mean over the 1 + K "
                 "evaluations of the longer launch (the first included).")
        if c is None:
            cf = next((r for r in bad if r["kind"] == "cpa" and r["family"] == fam), None)
            L.append(f"\ncpa: n/a ({cun['reason'] if cun else ('failed: ' + cf['reason']) if cf else 'cpa did not run'}).")
        elif not cav:
            L.append(f"\ncpa: n/a ({c.get('unavailable_reason')}).")
        else:
            cm = c["cost_model"]
            L.append(f"\ncpa: owner-computes schedule (distributed_s) of `mbspar cpa --method schur`; "
                     f"{fmt(cm.get('flop_time_s'))} s per flop ({c.get('note') or 'default'}; so P = 1 "
                     f"agrees by construction), latency {fmt(cm.get('latency_s'))} s, "
                     f"bandwidth {fmt(cm.get('bandwidth_Bps'))} B/s; one-rank T1 {ms(c.get('work_s'))} ms.")
            within = [abs(p[1] / p[3] - 1) <= 0.25 for p in pts if p[3] and p[0] > 1]
            if within:
                L.append(f"cpa within 25 % of SMPI at {sum(within)} of {len(within)} P > 1.")
        p64 = next((r for r in rs if r["P"] == 64), None)
        if p64 and tab:
            s = tab / p64["t"]
            smed = tab / p64.get("t_median", p64["t"])
            L.append(f"\nTarget at P = 64 (>= 20x serial ABA): {s:.1f}x with the best of "
                     f"{len(p64.get('t_pairs', [0]))} pair(s), {smed:.1f}x with their median — "
                     f"{'met' if s >= 20 else 'NOT met'}"
                     f"{'' if (s >= 20) == (smed >= 20) else ' (by the best pair only)'}.")
        L.append("")
        plots[fam] = (pts, tab, rs[0]["bodies"])

    # weak scaling
    rs = smpi("weak", "chain")
    wpts = []
    if rs:
        t1 = next((r["t"] for r in rs if r["P"] == 1), None)
        L += [f"#### Weak scaling, chain with {rs[0]['bodies'] // rs[0]['P']} bodies per host", "",
              "| P | N | simulated time/eval [ms] (best pair) | every pair [ms] | ABA(N) here [ms] | speedup vs ABA(N) | "
              "efficiency T(1)/T(P) | interface steps | real time of the simulation [s] | "
              "peak RSS [MB] |",
              "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
        for r in rs:
            t = r["t"]
            b = aba("chain", r["size"])
            tab = b["time_per_eval_s"] if b else None
            L.append(f"| {r['P']} | {r['bodies']} | {ms(t)}{' †' if r['unreliable'] else ''} | {', '.join(ms(x) for x in r.get('t_pairs', [t]))} | {ms(tab)} | "
                     f"{fmt(tab / t if tab else None)} | {fmt(t1 / t if t1 else None)} | "
                     f"{r.get('iterations')} | {r['launch_wall_s']:.1f} | "
                     f"{r['launch_maxrss_kB'] / 1024:.0f} |")
            wpts.append((r["P"], t, tab / t if tab else None, t1 / t if t1 else None))
        for r in bad:
            if r.get("study") == "weak":
                L.append(f"| {r['P']} | {r['size']} | FAILED: exit {r['rc']}: {r['reason']} ||||||")
        L.append("")
    big = next((r for r in rs if r["size"] == 1 << 20 and r["P"] == 1024), None)
    bigfail = next((r for r in bad if r.get("study") == "weak" and r.get("size") == 1 << 20), None)
    if big:
        b = aba("chain", 1 << 20)
        tab = b["time_per_eval_s"] if b else None
        s = tab / big["t"] if tab else None
        L += [f"#### Chain N = 2^20 = {big['bodies']} on 1024 simulated hosts", "",
              f"Simulated time per evaluation {ms(big['t'])} ms (first evaluation alone "
              f"{ms(big.get('t_first'))} ms); serial ABA(2^20) here "
              f"{ms(tab)} ms (peak RSS {max((r['launch_maxrss_kB'] for r in ok if r['kind'] == 'real' and r['study'] == 'aba' and r['size'] == 1 << 20), default=0) / 1024:.0f} MB)"
              f"; speedup {fmt(s)} (target >= 100x: {'met' if s and s >= 100 else 'NOT met'}). "
              f"Peak RSS of the smpirun process (all 1024 simulated ranks in one process, "
              f"/usr/bin/time %M): {big['launch_maxrss_kB'] / 1024:.0f} MB "
              f"({big['launch_maxrss_kB'] * 1024 / big['bodies']:.0f} bytes per body); "
              f"real time of the simulation {big['launch_wall_s']:.0f} s.", ""]
    elif bigfail:
        L += [f"#### Chain N = 2^20 on 1024 simulated hosts: FAILED (exit {bigfail['rc']}: "
              f"{bigfail['reason']})", ""]
    if any(r.get("unreliable") for st in ("strong", "weak") for f in ("chain", "tree") for r in smpi(st, f)):
        L += ["† the single evaluation took longer than the 1 + K of the other launch (noise): "
              "the mean of the 1 + K evaluations instead.", ""]
    if bad:
        L += ["Failed configurations: " + "; ".join(
            f"{r['kind']} {r.get('study')} {r['family']} size={r['size']} P={r['P']}: exit {r['rc']}"
            for r in bad), ""]
    text = "\n".join(L) + "\n"
    with open(a.md, "w") as f:
        f.write(text)
    print(text)
    if a.img:
        os.makedirs(a.img, exist_ok=True)
        if have_matplotlib():
            plot_mpl(a.img, plots, wpts, a.prefix, flops)
        else:
            plot_gnuplot(a.img, plots, wpts, a.prefix, flops)


def plot_mpl(img, plots, wpts, prefix, flops):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    col = {"chain": "tab:blue", "tree": "tab:green"}
    if plots:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
        for fam, (pts, tab, n) in plots.items():
            P = [p[0] for p in pts]
            ax1.loglog(P, [p[1] * 1e3 for p in pts], "o-", color=col[fam], label=f"{fam} N={n}: SMPI")
            cp = [(p[0], p[3]) for p in pts if p[3]]
            if cp:
                ax1.loglog([x[0] for x in cp], [x[1] * 1e3 for x in cp], "x--", color=col[fam],
                           label=f"{fam}: cpa prediction")
            if tab:
                ax1.axhline(tab * 1e3, color=col[fam], ls=":", label=f"{fam}: serial ABA here")
                ax2.loglog(P, [p[2] for p in pts], "o-", color=col[fam], label=f"{fam} N={n}")
        allp = sorted({p[0] for pts, _, _ in plots.values() for p in pts})
        ax2.axhline(20, color="gray", ls="--", label="target 20x at P=64")
        ax2.axhline(1, color="black", lw=0.8)
        ax2.loglog(allp, allp, color="gray", lw=0.6, ls=":", label="P")
        for ax in (ax1, ax2):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("simulated hosts P")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        ax1.set_ylabel("simulated time per evaluation [ms]")
        ax2.set_ylabel("speedup vs serial ABA (real, this machine)")
        fig.suptitle("schur, strong scaling on a simulated InfiniBand-like cluster (SimGrid SMPI"
                     + (", compute by counted flops)" if flops else ", compute blocks timed)"))
        fig.tight_layout()
        fig.savefig(f"{img}/{prefix}_strong.png", dpi=90)
        plt.close(fig)
    if wpts:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
        P = [p[0] for p in wpts]
        ax1.loglog(P, [p[1] * 1e3 for p in wpts], "o-", label="SMPI schur")
        ax1.set_ylabel("simulated time per evaluation [ms]")
        ax2.loglog(P, [p[2] for p in wpts], "o-", label="speedup vs serial ABA(N) here")
        ax2.loglog(P, [p[3] for p in wpts], "s--", label="efficiency T(1)/T(P)")
        ax2.axhline(100, color="gray", ls="--", label="target 100x at 2^20 / 1024")
        ax2.axhline(1, color="black", lw=0.8)
        for ax in (ax1, ax2):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("simulated hosts P (N = 1024 P)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle("schur, weak scaling: chain with 1024 bodies per host (SimGrid SMPI"
                     + (", compute by counted flops)" if flops else ", compute blocks timed)"))
        fig.tight_layout()
        fig.savefig(f"{img}/{prefix}_weak.png", dpi=90)
        plt.close(fig)


def plot_gnuplot(img, plots, wpts, prefix, flops=False):
    mode = "compute by counted flops" if flops else "compute blocks timed"
    def run(script):
        try:
            subprocess.run(["gnuplot"], input=script, text=True, check=True, stdout=subprocess.DEVNULL)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"schur_report.py: no matplotlib, gnuplot failed: {e}", file=sys.stderr)
    files = []
    for fam, (pts, tab, n) in plots.items():
        with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as f:
            for p in pts:
                f.write(f"{p[0]} {p[1] * 1e3} {p[2] or 'NaN'} {p[3] * 1e3 if p[3] else 'NaN'}\n")
            files.append((fam, f.name))
    if files:
        run(f"""set terminal pngcairo size 1100,450
set output '{img}/{prefix}_strong.png'
set multiplot layout 1,2 title 'schur, strong scaling on a simulated InfiniBand-like cluster (SimGrid SMPI, {mode})'
set logscale xy; set grid; set xlabel 'simulated hosts P'; set xrange [1:1024]; set key top right
set ylabel 'simulated time per evaluation [ms]'
plot {', '.join(f"'{fn}' u 1:2 w lp lc {i + 1} t '{fam}: SMPI', '{fn}' u 1:4 w lp dt 2 lc {i + 1} t '{fam}: cpa'" for i, (fam, fn) in enumerate(files))}
set ylabel 'speedup vs serial ABA (real, this machine)'; set key top left
plot {', '.join(f"'{fn}' u 1:3 w lp lc {i + 1} t '{fam}'" for i, (fam, fn) in enumerate(files))}, 20 dt 3 lc 0 t 'target 20x at P = 64'
unset multiplot
""")
    if wpts:
        with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as f:
            for p in wpts:
                f.write(f"{p[0]} {p[1] * 1e3} {p[2] or 'NaN'} {p[3] or 'NaN'}\n")
            files.append(("weak", f.name))
        run(f"""set terminal pngcairo size 1100,450
set output '{img}/{prefix}_weak.png'
set multiplot layout 1,2 title 'schur, weak scaling: chain with 1024 bodies per host (SimGrid SMPI, {mode})'
set logscale xy; set grid; set xlabel 'simulated hosts P'; set xrange [1:1024]; set key top left
set ylabel 'simulated time per evaluation [ms]'
plot '{f.name}' u 1:2 w lp t 'SMPI'
set ylabel 'speedup / efficiency'
plot '{f.name}' u 1:3 w lp t 'speedup vs ABA(N)', '{f.name}' u 1:4 w lp t 'T(1)/T(P)', 100 dt 3 lc 0 t 'target 100x at N = 2^{20}'
unset multiplot
""")
    for _, fn in files:
        os.unlink(fn)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("json")
    r.add_argument("--kind", required=True)
    r.add_argument("--study", required=True)
    r.add_argument("--family", required=True)
    r.add_argument("--size", type=int, required=True)
    r.add_argument("--P", type=int, required=True)
    r.add_argument("--time", default="0 0 0 0")
    r.add_argument("--load", type=float, default=0.0)
    r.add_argument("--note", default="")
    q = sub.add_parser("steady")
    q.add_argument("k1")
    q.add_argument("k2")
    p = sub.add_parser("report")
    p.add_argument("results")
    p.add_argument("--img", default=None)
    p.add_argument("--md", required=True)
    p.add_argument("--prefix", default="smpi_schur")
    b = sub.add_parser("bestreal")
    b.add_argument("results")
    b.add_argument("P", type=int)
    b.add_argument("--family", default="chain")
    c = sub.add_parser("bestsim")
    c.add_argument("results")
    c.add_argument("study")
    c.add_argument("family")
    c.add_argument("P", type=int)
    a = ap.parse_args()
    if a.cmd == "record":
        cmd_record(a)
    elif a.cmd == "steady":
        cmd_steady(a)
    elif a.cmd == "bestreal":
        cmd_bestreal(a)
    elif a.cmd == "bestsim":
        cmd_bestsim(a)
    else:
        cmd_report(a)


if __name__ == "__main__":
    main()
