#!/usr/bin/env python3
"""Speedup study helper (bench/speedup.sh, bench/smpi/run.sh). Reports, never asserts.

  speedup_report.py timeit OUTFILE CMD...                       run CMD; OUTFILE <- "wall user sys"
  speedup_report.py record JSON --kind accel|run|cpa|smpi ...   one compact JSONL record
  speedup_report.py report RESULTS.jsonl --img DIR --md FILE    tables (Markdown) + gnuplot PNGs
  speedup_report.py smpi RESULTS.jsonl --img DIR --md FILE      SMPI tables + PNGs

Definitions used in the tables (docs/scaling.md explains them):
  T_wall  best-of-launches wall time per evaluation (accel: time_per_eval_s)
  T_cpu   T_wall x min(1, (user+sys) / (min(P, nproc) x launch wall)): the wall time scaled by
          the share of the cores the launch actually got (other work loads this machine)
  T_serial (seed 002's non-parallelisable part of one J-CG evaluation) = what no number of
          processors removes: per CG iteration the latency of 2 allreduces and 2 halo exchanges,
          per evaluation the velocity prefix pipeline; measured from the 2-rank run's timers as
          the minimum over ranks (the rank that waited least) of comm.allreduce + comm.halo +
          comm.prefix, per evaluation, scaled to the full iteration count for capped runs
  T_P,i = (T_CPU - T_serial)/P + T_serial      (eq. 20)   T_CPU = J-CG at one rank (T_cpu)
  T_P,r = 1.3 (T_CPU - T_serial)/P + T_serial  (eq. 21)
  cpa     mbspar cpa's owner-computes schedule with messages ("distributed_s"), cost model
          calibrated on this machine; J-CG graphs built with 1 and 2 iterations and extrapolated
          linearly to the iteration count used (measured, or estimated for capped chains)
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

TIMERS = ("eval", "eval.velocity", "eval.constraint.solve", "comm.halo", "comm.allreduce",
          "comm.prefix")


def cmd_timeit(argv):
    """run argv[1:], write "wall user sys" (children's rusage, microseconds) to argv[0]."""
    import resource
    import time
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    rc = subprocess.call(argv[1:])
    t1 = time.monotonic()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(argv[0], "w") as f:
        f.write(f"{t1 - t0:.6f} {r1.ru_utime - r0.ru_utime:.6f} {r1.ru_stime - r0.ru_stime:.6f}\n")
    return rc


def cmd_record(a):
    with open(a.json) as f:
        d = json.load(f)
    wall, user, sysm = (float(x) for x in a.time.split())
    r = {"kind": a.kind, "family": a.family, "size": a.size, "P": a.P,
         "bodies": d.get("model", {}).get("bodies"),
         "method": d.get("config", {}).get("solver", {}).get("method"),
         "launch_wall_s": wall, "launch_user_s": user, "launch_sys_s": sysm, "load": a.load,
         "note": a.note, "oversubscribed": a.P > a.nproc}
    tm = d.get("timers", {})
    r["timers"] = {k: {"min": tm[k]["min"], "avg": tm[k]["avg"], "max": tm[k]["max"],
                       "count": tm[k]["count"]} for k in TIMERS if k in tm}
    if a.kind in ("accel", "smpi", "real"):
        r["repeat"] = d.get("repeat", 1)
        r["time_per_eval_s"] = d["time_per_eval_s"]
        s = d["solver"]
        r["iterations"] = s.get("iterations")
        r["converged"] = s.get("converged")
        r["reason"] = s.get("reason")
    elif a.kind == "run":
        s = d["solver"]
        r["evaluations"] = s.get("evaluations")
        r["avg_iterations"] = s.get("avg_iterations")
        r["t"] = d.get("results", {}).get("t")
        r["steps"] = d.get("integrator", {}).get("steps")
    elif a.kind == "cpa":
        c = d["cpa"]
        r["method"] = c["method"]
        r["iterations"] = c.get("iterations")
        r["work_s"] = c["work_s"]
        r["span_s"] = c["span_s"]
        r["parallelism"] = c["parallelism"]
        r["schedule"] = {str(s["P"]): [s["list_s"], s["distributed_s"]] for s in c["schedule"]}
        r["cost_model"] = c["cost_model"]
    if a.kind == "smpi":
        r["simulated_s"] = a.simtime
        r["hosts"] = a.P
    print(json.dumps(r))


def load(path):
    recs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                recs.append(json.loads(line))
    return recs


def cpu_factor(r, nproc):
    w = r["launch_wall_s"]
    if w <= 0:
        return 1.0
    return min(1.0, (r["launch_user_s"] + r["launch_sys_s"]) / (min(r["P"], nproc) * w))


def fmt(x, nd=3):
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "—"
    if isinstance(x, str):
        return x
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.{nd - 1}e}"
    return f"{x:.{nd}g}"


def gnuplot(script):
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True,
                       stdout=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"speedup_report.py: gnuplot failed: {e}", file=sys.stderr)


ITERATIVE = ("jcg", "chebyshev", "jacobi", "gs", "sor")


def iter_fit(points):
    """least squares iterations = a N + b over (N, iterations)."""
    if len(points) < 2:
        return None
    n = len(points)
    sx = sum(p[0] for p in points)
    sy = sum(p[1] for p in points)
    sxx = sum(p[0] ** 2 for p in points)
    sxy = sum(p[0] * p[1] for p in points)
    den = n * sxx - sx * sx
    if den == 0:
        return None
    a = (n * sxy - sx * sy) / den
    return a, (sy - a * sx) / n


def cmd_report(a):
    recs = load(a.results)
    meta = next((r for r in recs if r.get("kind") == "meta"), {})
    nproc = meta.get("nproc", 2)
    acc = defaultdict(list)   # (fam, size, method, P) -> accel records
    runs = defaultdict(list)
    cpa = defaultdict(dict)   # (fam, size, method) -> {iters: rec}
    for r in recs:
        if r.get("failed"):
            continue
        k = r.get("kind")
        if k == "accel":
            acc[(r["family"], r["size"], r["method"], r["P"])].append(r)
        elif k == "run":
            runs[(r["family"], r["size"], r["method"], r["P"])].append(r)
        elif k == "cpa":
            it = int(r["note"].split("=")[1])
            cpa[(r["family"], r["size"], r["method"])][it] = r

    def best(lst):
        """(record with the smallest wall time, T_wall, T_cpu or None).
        T_cpu = per-rank CPU time per evaluation from two launches with different repeat counts:
        (user+sys of the longer - of the shorter) / (difference of repeats) / P."""
        if not lst:
            return None
        def tw(r):
            if "time_per_eval_s" in r:
                return r["time_per_eval_s"]
            return r["timers"]["eval"]["max"] / max(1, r.get("evaluations") or 1)
        rb = min(lst, key=tw)
        tc = None
        reps = sorted(lst, key=lambda r: r.get("repeat", 1))
        if len(reps) >= 2 and reps[-1].get("repeat", 1) > reps[0].get("repeat", 1):
            r1, r2 = reps[0], reps[-1]
            dc = (r2["launch_user_s"] + r2["launch_sys_s"]) - (r1["launch_user_s"] + r1["launch_sys_s"])
            # /usr/bin/time (older records) has 10 ms resolution: need >= 50 ms of difference
            if dc >= 0.05:
                tc = dc / (r2["repeat"] - r1["repeat"]) / r1["P"]
        return (rb, tw(rb), tc)

    # iteration counts of J-CG (cold) per chain size, measured where converged
    fits = {}
    for fam in ("chain", "tree"):
        for m in ITERATIVE:
            pts = sorted({(r["bodies"], r["iterations"]) for (f, s, mm, p), lst in acc.items()
                          if f == fam and mm == m for r in lst if r.get("converged")})
            # linear extrapolation of the iteration count for the Krylov-like methods only (the
            # stationary ones grow like N^2 on chains: their capped runs are shown as such)
            fits[(fam, m)] = (iter_fit(pts) if m in ("jcg", "chebyshev") else None, pts)

    def full_iters(fam, m, bodies, rec):
        if rec.get("converged"):
            return rec["iterations"], False
        meas = [it for (n, it) in fits[(fam, m)][1] if n == bodies]
        if meas:
            return meas[0], False
        f = fits[(fam, m)][0]
        if f is None:
            return None, True
        return max(rec["iterations"], f[0] * bodies + f[1]), True

    lines = []
    lines.append(f"Machine: {meta.get('machine')} ({nproc} cores); build {meta.get('git')} "
                 f"{meta.get('build_flags')}; date {meta.get('date')}; "
                 f"{'quick' if meta.get('quick') else 'full'} run.")
    cal = next((r for r in recs if r.get("kind") == "calibration"), None)
    if cal:
        lines.append(f"cpa cost model (calibrated, `mpirun -n 2 mbspar cpa --calibrate`): "
                     f"{cal['flop_time_s']:.3g} s/flop"
                     + (f" (ABA: {cal['flop_time_aba_s']:.3g} s/flop)" if "flop_time_aba_s" in cal else
                        " (also used for ABA)")
                     + f", latency {cal['latency_s']:.3g} s, "
                     f"bandwidth {cal['bandwidth_Bps']:.3g} B/s.")
    for fam in ("chain", "tree"):
        f = fits[(fam, "jcg")][0]
        if f:
            lines.append(f"J-CG iterations ({fam}, cold, measured): "
                         + ", ".join(f"N={n}: {it}" for n, it in fits[(fam, 'jcg')][1])
                         + f"; fit iterations = {f[0]:.4f} N + {f[1]:.1f}.")
    lines.append("")

    plot = defaultdict(list)   # series name -> [(x, y)]
    est = {}                   # (fam, size) -> dict for plotting speedups
    for fam in ("chain", "tree"):
        sizes = sorted({k[1] for k in acc if k[0] == fam})
        if not sizes:
            continue
        lines.append(f"### {fam}")
        lines.append("")
        lines.append("| N | method | P | iters | T_wall/eval [s] | T_cpu/eval/rank [s] | S_wall vs ABA | "
                     "T_wall/sim-s [s] | T_P,i eq20 | T_P,r eq21 | cpa T_P [s] | cpa S vs ABA |")
        lines.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for s in sizes:
            ab = best(acc.get((fam, s, "aba", 1), []))
            if not ab:
                continue
            bodies = ab[0]["bodies"]
            t_aba = ab[1]
            t_aba_cpu = ab[2] or ab[1]
            cpa_aba = cpa.get((fam, s, "aba"), {}).get(0)
            # seed-002 estimates from J-CG at 1 and 2 ranks
            j1 = best(acc.get((fam, s, "jcg", 1), []))
            j2 = best(acc.get((fam, s, "jcg", 2), []))
            tcpu = tser = None
            if j1:
                k1, _ = full_iters(fam, "jcg", bodies, j1[0])
                if k1:
                    t1 = j1[2] or j1[1]
                    tcpu = t1 / j1[0]["iterations"] * k1 if not j1[0].get("converged") else t1
                if j2 and k1:
                    tm = j2[0]["timers"]
                    rep = j2[0].get("repeat", 1)
                    ser = sum(tm[t]["min"] for t in ("comm.allreduce", "comm.halo", "comm.prefix")
                              if t in tm) / rep
                    tser = ser * k1 / j2[0]["iterations"]
            est[(fam, s)] = {"bodies": bodies, "t_aba": t_aba, "tcpu": tcpu, "tser": tser}
            order = ["aba", "crba"] + list(ITERATIVE)
            methods = sorted({k[2] for k in acc if k[0] == fam and k[1] == s},
                             key=lambda m: order.index(m) if m in order else 99)
            for m in methods:
                for p in sorted({k[3] for k in acc if k[:3] == (fam, s, m)}):
                    b = best(acc[(fam, s, m, p)])
                    rec, tw, tc = b
                    iters = rec.get("iterations") if m not in ("aba", "crba") else None
                    itxt = "—"
                    if iters is not None:
                        k, extrap = full_iters(fam, m, bodies, rec)
                        if not rec.get("converged") and k:
                            # time to convergence from the measured time per iteration
                            tw = tw / iters * k
                            tc = tc / iters * k if tc else None
                            itxt = f"{iters} cap → ~{k:.0f}{' (est)' if extrap else ''}"
                        elif not rec.get("converged"):
                            itxt = f"{iters} (not conv.)"
                        else:
                            itxt = str(iters)
                    sp = t_aba / tw if tw else None
                    rr = best(runs.get((fam, s, m, p), []))
                    if rr:
                        r0 = rr[0]
                        tsim = r0["timers"]["eval"]["max"] / r0["t"]
                        simtxt = fmt(tsim)
                    elif itxt.endswith("(not conv.)"):
                        simtxt = "—"  # a capped, unconverged evaluation says nothing per second
                    else:
                        tsim = 4000 * tw
                        simtxt = fmt(tsim) + " est"
                    pi = pr = None
                    if m == "jcg" and tcpu and tser is not None and p > 1:
                        pi = (tcpu - tser) / p + tser
                        pr = 1.3 * (tcpu - tser) / p + tser
                    cpred = csp = None
                    if m == "aba" and cpa_aba:
                        cpred = cpa_aba["work_s"]
                    if m in ITERATIVE:
                        c = cpa.get((fam, s, m), {})
                        if 1 in c and 2 in c and str(p) in c[1]["schedule"]:
                            k, _ = full_iters(fam, m, bodies, rec)
                            k = k or iters  # capped and not extrapolated: the same iterations
                            t1 = c[1]["schedule"][str(p)][1]
                            t2 = c[2]["schedule"][str(p)][1]
                            cpred = t1 + (k - 1) * (t2 - t1) if k else None
                            if cpred and cpa_aba:
                                csp = cpa_aba["work_s"] / cpred
                    ptxt = f"{p}{' (oversub.)' if p > nproc else ''}"
                    lines.append(f"| {bodies} | {m} | {ptxt} | {itxt} | {fmt(tw)} | {fmt(tc)} | "
                                 f"{fmt(sp)} | {simtxt} | {fmt(pi)} | {fmt(pr)} | {fmt(cpred)} | "
                                 f"{fmt(csp)} |")
                    key = f"{fam} {m} P={p}" if m in ITERATIVE else f"{fam} {m}"
                    if not itxt.endswith("(not conv.)"):  # capped runs are not evaluations
                        plot[key].append((bodies, tw))
                    if m == "jcg":
                        plot[f"S {fam} N={bodies} measured"].append((p, sp))
                        if pi:
                            plot[f"S {fam} N={bodies} eq20"].append((p, t_aba / pi))
                        if csp:
                            plot[f"S {fam} N={bodies} cpa"].append((p, csp))
        lines.append("")
    # the T_serial and T_CPU used
    lines.append("| family | N | T_CPU = J-CG at P=1 [s] | T_serial [s] | serial fraction |")
    lines.append("|---|---:|---:|---:|---:|")
    for (fam, s), e in sorted(est.items(), key=lambda x: (x[0][0], x[1]["bodies"])):
        if e["tcpu"] and e["tser"] is not None:
            lines.append(f"| {fam} | {e['bodies']} | {fmt(e['tcpu'])} | {fmt(e['tser'])} | "
                         f"{fmt(e['tser'] / e['tcpu'])} |")
    text = "\n".join(lines) + "\n"
    with open(a.md, "w") as f:
        f.write(text)
    print(text)
    # plots
    if a.img:
        os.makedirs(a.img, exist_ok=True)
        with tempfile.TemporaryDirectory() as td:
            for fam in ("chain", "tree"):
                series = [k for k in plot if k.startswith(fam + " ")]
                if not series:
                    continue
                pl = []
                # one colour per method, one dash and point type per rank count
                colour = {"aba": "black", "crba": "#8c564b", "jcg": "#1f77b4", "chebyshev": "#2ca02c",
                          "jacobi": "#d62728", "gs": "#ff7f0e", "sor": "#9467bd"}
                dash = {1: (1, 7), 2: (2, 5), 4: (3, 9), 8: (4, 11)}
                order = ["aba", "crba"] + list(ITERATIVE)

                def skey(k):
                    w = k.split()
                    pr = int(w[2][2:]) if len(w) > 2 else 1
                    return (order.index(w[1]) if w[1] in order else 99, pr)
                for i, k in enumerate(sorted(series, key=skey)):
                    fn = os.path.join(td, f"t{fam}{i}.dat")
                    with open(fn, "w") as f:
                        for x, y in sorted(plot[k]):
                            f.write(f"{x} {y}\n")
                    w = k.split()
                    dt, pt = dash.get(int(w[2][2:]) if len(w) > 2 else 1, (1, 7))
                    pl.append(f"'{fn}' w lp lw 2 dt {dt} pt {pt} lc rgb '{colour.get(w[1], 'gray')}' "
                              f"t '{k[len(fam) + 1:]}'")
                gnuplot(f"""set terminal pngcairo size 1000,600
set output '{a.img}/speedup_time_{fam}.png'
set logscale xy; set grid; set key outside right
set format y '10^{{%L}}'
set xlabel 'bodies N'; set ylabel 'wall time per evaluation, best of launches [s]'
set title '{fam}: time per forward-dynamics evaluation (cold start), this machine'
plot {', '.join(pl)}
""")
                series = [k for k in plot if k.startswith(f"S {fam} ")]
                pl = []
                for i, k in enumerate(sorted(series, key=lambda k: (int(k.split()[2][2:]), k))):
                    fn = os.path.join(td, f"s{fam}{i}.dat")
                    with open(fn, "w") as f:
                        for x, y in sorted(plot[k]):
                            f.write(f"{x} {y}\n")
                    style = "lp lw 2" if k.endswith("measured") else "l dt 2"
                    pl.append(f"'{fn}' w {style} t '{k[len(fam) + 3:]}'")
                if pl:
                    gnuplot(f"""set terminal pngcairo size 900,600
set output '{a.img}/speedup_vs_aba_{fam}.png'
set logscale xy; set grid; set key outside right
set xlabel 'ranks P (4, 8 oversubscribed on 2 cores)'; set ylabel 'T_ABA / T_J-CG(P)'
set title '{fam}: J-CG speedup over serial ABA (measured, eq. 20, cpa)'
plot {', '.join(pl)}, 1 w l lc rgb 'black' t 'ABA'
""")


def cmd_smpi(a):
    recs = load(a.results)
    meta = next((r for r in recs if r.get("kind") == "meta"), {})
    lines = [f"Machine: {meta.get('machine')}; SimGrid {meta.get('simgrid')}; build "
             f"{meta.get('git')} ({meta.get('build_flags')}); host speed "
             f"{meta.get('host_speed')}; date {meta.get('date')}.", ""]
    cal = [r for r in recs if r.get("study") == "calib" and not r.get("failed")]
    if cal:
        lines += ["Calibration (chain N = 16384, J-CG, no warm start). Real runs: two launches capped "
                  "at 100 and 200 iterations; per iteration = difference / 100 (wall: the "
                  "in-process evaluation timer; CPU: user+sys of the launch, per rank).", "",
                  "| P | real wall/iteration [s] | real CPU/iteration/rank [s] | SMPI simulated "
                  "time/iteration [s] | SMPI / real CPU | SMPI / real wall | load avg |",
                  "|---:|---:|---:|---:|---:|---:|---:|"]
        for p in sorted({r["P"] for r in cal}):
            re = sorted([r for r in cal if r["P"] == p and r["kind"] == "real"],
                        key=lambda r: r["iterations"])
            sm = [r for r in cal if r["P"] == p and r["kind"] == "smpi"]
            rw = rc = None
            if len(re) >= 2 and re[-1]["iterations"] > re[0]["iterations"]:
                di = re[-1]["iterations"] - re[0]["iterations"]
                rw = (re[-1]["time_per_eval_s"] - re[0]["time_per_eval_s"]) / di
                rc = ((re[-1]["launch_user_s"] + re[-1]["launch_sys_s"])
                      - (re[0]["launch_user_s"] + re[0]["launch_sys_s"])) / di / p
            st = sm[0]["time_per_eval_s"] / sm[0]["iterations"] if sm else None
            ld = max((r["load"] for r in re), default=None)
            lines.append(f"| {p} | {fmt(rw)} | {fmt(rc)} | {fmt(st)} | "
                         f"{fmt(st / rc) if st and rc and rc > 0 else '—'} | "
                         f"{fmt(st / rw) if st and rw and rw > 0 else '—'} | {fmt(ld)} |")
        lines.append("")
    titles = {"strong": "strong scaling, chain N = 16384",
              "strong4096": "strong scaling, chain N = 4096",
              "weak": "weak scaling, 64 bodies per host",
              "tree14": "strong scaling, binary tree of depth 14 (16383 bodies), whole J-CG evaluations"}
    for study in ("strong", "strong4096", "weak", "tree14"):
        rs = sorted([r for r in recs if r.get("study") == study and r.get("kind") == "smpi"
                     and not r.get("failed")], key=lambda r: r["P"])
        failed = [r["P"] for r in recs if r.get("study") == study and r.get("failed")]
        if not rs:
            continue
        base = rs[0]

        def per_it(r):
            """simulated time per CG iteration: the solve timer (slowest rank) / iterations;
            for the tree study the whole evaluation (it converges)."""
            if study == "tree14":
                return r["time_per_eval_s"]
            t = r["timers"].get("eval.constraint.solve", {}).get("max")
            return (t if t else r["time_per_eval_s"]) / r["iterations"]
        tb = per_it(base)
        lines += [f"### SMPI {titles[study]}", "",
                  f"Speedup and efficiency relative to {base['P']} simulated host(s)"
                  + (" (weak: efficiency = T(1)/T(P))." if study == "weak" else "."), "",
                  "| hosts | N | N/host | iters | simulated time/"
                  + ("evaluation" if study == "tree14" else "iteration") + " [s] | speedup | "
                  "efficiency | allreduce share | halo share | velocity prefix [s] | "
                  "time/eval [s] | real time of the simulation [s] |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        pts = []
        for r in rs:
            ti = per_it(r)
            if study == "weak":
                eff = tb / ti
                sp = eff * r["P"] / base["P"]
            else:
                sp = tb / ti
                eff = sp / (r["P"] / base["P"])
            ev = r["timers"]["eval"]["max"]
            ar = r["timers"].get("comm.allreduce", {}).get("max", 0) / ev if ev else 0
            ha = r["timers"].get("comm.halo", {}).get("max", 0) / ev if ev else 0
            lines.append(f"| {r['P']} | {r['bodies']} | {r['bodies'] // r['P']} | "
                         f"{r['iterations']} | {fmt(ti)} | {fmt(sp)} | {fmt(eff)} | {fmt(ar)} | "
                         f"{fmt(ha)} | {fmt(r['timers'].get('comm.prefix', {}).get('max'))} | "
                         f"{fmt(r['time_per_eval_s'])} | {fmt(r['launch_wall_s'])} |")
            pts.append((r["P"], ti, sp, eff))
        if failed:
            lines.append(f"\nFailed (see the run log): hosts {failed}.")
        lines.append("")
        if a.img and pts:
            os.makedirs(a.img, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as f:
                for p in pts:
                    f.write(" ".join(str(x) for x in p) + "\n")
                fn = f.name
            if study == "weak":
                right = f"set ylabel 'efficiency T(1)/T(P)'; unset logscale y; set yrange [0:1.1]\n" \
                        f"plot '{fn}' u 1:4 w lp lw 2 t 'simulated', 1 w l dt 2 t 'ideal'"
            else:
                right = f"set ylabel 'speedup vs {base['P']} host(s)'; set logscale y\n" \
                        f"plot '{fn}' u 1:3 w lp lw 2 t 'simulated', x/{base['P']} w l dt 2 t 'ideal'"
            gnuplot(f"""set terminal pngcairo size 1000,450
set output '{a.img}/smpi_{study}.png'
set multiplot layout 1,2 title 'SMPI {titles[study]}: J-CG, simulated InfiniBand-like cluster'
set logscale x 2; set grid; set xlabel 'simulated hosts'
set logscale y; set ylabel 'simulated time per {"evaluation" if study == "tree14" else "CG iteration"} [s]'
plot '{fn}' u 1:2 w lp lw 2 t 'J-CG'
{right}
unset multiplot
""")
            os.unlink(fn)
    text = "\n".join(lines) + "\n"
    with open(a.md, "w") as f:
        f.write(text)
    print(text)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "timeit":
        sys.exit(cmd_timeit(sys.argv[2:]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("json")
    r.add_argument("--kind", required=True)
    r.add_argument("--family", default="chain")
    r.add_argument("--size", type=int, required=True)
    r.add_argument("--P", type=int, required=True)
    r.add_argument("--time", default="0 0 0")
    r.add_argument("--load", type=float, default=0.0)
    r.add_argument("--note", default="")
    r.add_argument("--nproc", type=int, default=2)
    r.add_argument("--simtime", type=float, default=None)
    r.add_argument("--study", default=None)
    for name in ("report", "smpi"):
        p = sub.add_parser(name)
        p.add_argument("results")
        p.add_argument("--img", default=None)
        p.add_argument("--md", required=True)
    a = ap.parse_args()
    if a.cmd == "record":
        import io
        import contextlib
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            cmd_record(a)
        rec = json.loads(buf.getvalue())
        if a.study:
            rec["study"] = a.study
        print(json.dumps(rec))
    elif a.cmd == "report":
        cmd_report(a)
    else:
        cmd_smpi(a)


if __name__ == "__main__":
    main()
