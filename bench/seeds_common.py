#!/usr/bin/env python3
"""Seed reproductions (docs/seeds.md): seed 002 Table 2, seed 002 Figs. 2(a)/(b) and 3, seed 000
Fig. 6. Driven by bench/seed002_table2.sh, bench/seed002_fig2_3.sh and bench/seed000_fig6.sh;
reports, never asserts.

    seeds_common.py table2 MBSPAR ROOT
    seeds_common.py fig23  MBSPAR ROOT [N,N,...]
    seeds_common.py fig6   MBSPAR ROOT [N,N,...]

Timing. The machine is shared (load averages of 5-10 on 2 cpus are common), so wall-clock
timers inside mbspar are inflated by preemption. Every time reported here is CPU time
(user + system) of the mbspar process from wait4(2), minus the CPU time of a baseline process
that does the same set-up without the measured work (t_end = 0 for `run`, --repeat 1 for
`accel`), divided by the number of evaluations. The in-process wall-clock timers are used only
for ratios (which part of an evaluation is serial).
"""
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1", OMPI_MCA_rmaps_base_oversubscribe="1")


def run_cpu(cmd):
    """Run cmd; return (returncode, cpu seconds of the child tree, wall seconds, stderr)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime + ru.ru_stime, time.monotonic() - t0, err


def machine(root):
    model = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    git = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip() or "unknown"
    return {"cpu": model, "ncpu": os.cpu_count(), "host": platform.node(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "git": git,
            "loadavg_start": os.getloadavg()[0]}


def header(info):
    return ("# machine: %s, %d cpus, host %s; git %s; %s; load average %.1f at start, %.1f at end"
            % (info["cpu"], info["ncpu"], info["host"], info["git"], info["date"],
               info["loadavg_start"], info.get("loadavg_end", float("nan"))))


def gnuplot(script):
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode:
        print("gnuplot failed: " + r.stderr, file=sys.stderr)


def lsq_slope(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    n = len(lx)
    mx, my = sum(lx) / n, sum(ly) / n
    sxx = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sxx


# ------------------------------------------------------------------ seed 002 Table 2

SPATIAL = ["model.bodies[0].joint.springref=[1.5]", "model.bodies[0].joint.qd0=[1.0]",
           "model.bodies[1].joint.springref=[-0.6,0.8]", "model.bodies[1].joint.qd0=[0.5,2.0]",
           "model.bodies[2].joint.springref=[1.0,-0.5]", "model.bodies[2].joint.qd0=[-1.0,3.0]"]
# IIb: manoeuvre II with a light upper arm (0.2 kg instead of 5 kg), which makes the Jacobi
# iteration matrix's spectral radius approach 1 - the seed's manoeuvre-II situation
MANOEUVRES = {"I": [], "II": SPATIAL, "IIb": SPATIAL + ["model.bodies[1].mass=0.2"]}
# repetitions (best CPU of) and scan grids per manoeuvre (IIb is costly: fewer)
REPS = {"I": 3, "II": 3, "IIb": 1}
OMEGAS = {"I": [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9],
          "II": [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9],
          "IIb": [1.3, 1.5, 1.6, 1.7, 1.8, 1.9]}
RHOS = {"I": [0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98],
        "II": [0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98],
        "IIb": [0.9, 0.95, 0.97, 0.98, 0.99, 0.995]}
SCHEMES = [("Jacobi", "jacobi"), ("J-SI", "chebyshev"), ("J-CG", "jcg"),
           ("Gauss-Seidel", "gs"), ("SOR", "sor")]


def mbs_run(binary, cfg, sets, tmp, tag):
    out = os.path.join(tmp, tag)
    cmd = [binary, "run", cfg, "--out", out, "--force", "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    rc, cpu, wall, err = run_cpu(cmd)
    if rc:
        return {"rc": rc, "err": err.strip().splitlines()[-1:] or [""], "cpu": cpu}
    d = json.load(open(os.path.join(out, "run.json")))
    d["cpu"], d["wall"], d["rc"] = cpu, wall, 0
    return d


def table2(binary, root):
    info = machine(root)
    cfg = os.path.join(root, "configs", "seed002_manipulator.cfg")
    tmp = tempfile.mkdtemp(prefix="seed002_t2_")
    base = ["integrator.method=dp5", "integrator.tol=1e-6", "integrator.t_end=10",
            "solver.tol=1e-7", "solver.criterion=change", "solver.warm_start=cubic"]
    res = {"machine": info, "manoeuvres": {}}
    for man, extra in MANOEUVRES.items():
        print("# manoeuvre %s" % man, flush=True)
        reps = REPS[man]
        r = {}
        # reference: ABA (exact forward dynamics) with dp5 at TOL 1e-12
        ref = mbs_run(binary, cfg, extra + ["solver.method=aba", "integrator.method=dp5",
                                            "integrator.tol=1e-12"], tmp, "ref" + man)
        qref = ref["results"]["q"]
        nref = math.sqrt(sum(x * x for x in qref))
        # baseline process CPU: the same set-up, t_end = 0
        b = [mbs_run(binary, cfg, extra + base + ["solver.method=jcg", "integrator.t_end=0"],
                     tmp, "base%s_%d" % (man, k))["cpu"] for k in range(reps)]
        cpu0 = min(b)
        # nearly optimal SOR omega and J-SI rho: scans on the full manoeuvre (fewest iterations)
        scan = {"omega": {}, "rho": {}}
        for om in OMEGAS[man]:
            d = mbs_run(binary, cfg, extra + base + ["solver.method=sor", "solver.omega=%g" % om],
                        tmp, "scan")
            scan["omega"][om] = d["solver"]["avg_iterations"] if d["rc"] == 0 and \
                d["solver"]["nonconverged"] == 0 else None
        for rho in RHOS[man]:
            d = mbs_run(binary, cfg, extra + base + ["solver.method=chebyshev",
                                                     "solver.rho=%g" % rho], tmp, "scan")
            scan["rho"][rho] = d["solver"]["avg_iterations"] if d["rc"] == 0 and \
                d["solver"]["nonconverged"] == 0 else None
        best_om = min((v, k) for k, v in scan["omega"].items() if v is not None)[1]
        best_rho = min((v, k) for k, v in scan["rho"].items() if v is not None)[1]
        print("#   scans: SOR avg iterations by omega %s -> %g; J-SI by rho %s -> %g" % (
            {k: (round(v, 1) if v else "fail") for k, v in scan["omega"].items()}, best_om,
            {k: (round(v, 1) if v else "fail") for k, v in scan["rho"].items()}, best_rho),
            flush=True)
        rows = []
        for name, meth in [("ABA (exact)", "aba")] + SCHEMES + [("J-SI (rho auto)",
                                                                "chebyshev-auto")]:
            sets = extra + base + ["solver.method=%s" % meth.replace("-auto", "")]
            if meth == "sor":
                sets.append("solver.omega=%g" % best_om)
            if meth == "chebyshev":
                sets.append("solver.rho=%g" % best_rho)
            runs = [mbs_run(binary, cfg, sets, tmp, "%s%s_%d" % (meth, man, k))
                    for k in range(reps)]
            ok = [d for d in runs if d["rc"] == 0]
            if not ok:
                rows.append({"scheme": name, "method": meth, "failed": runs[0].get("err")})
                continue
            d = ok[0]
            q = d["results"]["q"]
            acc = 100 * math.sqrt(sum((a - c) ** 2 for a, c in zip(q, qref))) / nref
            s = d["solver"]
            cpu = min(x["cpu"] for x in ok) - cpu0
            tev = min(x["timers"]["eval"]["avg"] for x in ok)
            rows.append({"scheme": name, "method": meth, "accuracy_pct": acc,
                         "evaluations": s["evaluations"], "avg_iterations": s["avg_iterations"],
                         "nonconverged": s["nonconverged"], "steps": d["integrator"]["steps"],
                         "cpu_s": cpu, "eval_wall_s": tev,
                         "cpu_us_per_eval": 1e6 * cpu / max(1, s["evaluations"]),
                         "omega": best_om if meth == "sor" else None,
                         "rho": best_rho if meth == "chebyshev" else None})
            print("#   %-20s done" % name, flush=True)
        r = {"rows": rows, "scan": {k: {str(a): b for a, b in v.items()} for k, v in scan.items()},
             "reference": {"q": qref, "steps": ref["integrator"]["steps"],
                           "evaluations": ref["solver"]["evaluations"]},
             "baseline_cpu_s": cpu0, "sets": extra, "reps": reps}
        res["manoeuvres"][man] = r
    info["loadavg_end"] = os.getloadavg()[0]

    out = os.path.join(root, "bench", "results", "seed002_table2")
    lines = [header(info),
             "# seed 002 Table 2: 3-link 5-dof manipulator (configs/seed002_manipulator.cfg), "
             "T = 10 s, dp5 TOL = 1e-6, eps = 1e-7 (relative change), cubic warm start",
             "# accuracy: 100 |q(T) - q_ref(T)| / |q_ref(T)|, reference ABA with dp5 TOL 1e-12; "
             "CPU: process CPU minus the t_end = 0 baseline, best of 3 (IIb: 1 run)",
             "# manoeuvres: I planar, II spatial, IIb = II with a 0.2 kg upper arm "
             "(Jacobi spectral radius near 1)", ""]
    mans = list(MANOEUVRES)
    lines.append("| scheme | " + " | ".join("%s: %% acc. at T | %s: avg it. | %s: CPU s | "
                                            "%s: us/eval" % (x, x, x, x) for x in mans) + " |")
    lines.append("|---|" + "---|---|---|---|" * len(mans))
    csv = ["scheme,manoeuvre,accuracy_pct,avg_iterations,evaluations,steps,cpu_s,"
           "cpu_us_per_eval,nonconverged,omega,rho"]
    names = [x["scheme"] for x in res["manoeuvres"]["I"]["rows"]]
    for nm in names:
        cells = [nm]
        for man in mans:
            row = next(x for x in res["manoeuvres"][man]["rows"] if x["scheme"] == nm)
            if "failed" in row:
                cells += ["failed"] * 4
                continue
            label = ""
            if row["omega"]:
                label = " (w=%g)" % row["omega"]
            if row["rho"]:
                label = " (rho=%g)" % row["rho"]
            cells += ["%.2g" % row["accuracy_pct"], "%.1f%s" % (row["avg_iterations"], label),
                      "%.3f" % row["cpu_s"] if row["cpu_s"] > 0.005 else "< 0.005",
                      "%.1f" % row["cpu_us_per_eval"] if row["cpu_s"] > 0.005 else "-"]
            csv.append("%s,%s,%.6g,%.4g,%d,%d,%.6g,%.6g,%d,%s,%s" % (
                nm, man, row["accuracy_pct"], row["avg_iterations"], row["evaluations"],
                row["steps"], row["cpu_s"], row["cpu_us_per_eval"], row["nonconverged"],
                row["omega"] or "", row["rho"] or ""))
        lines.append("| " + " | ".join(cells) + " |")
    for man in mans:
        m = res["manoeuvres"][man]
        lines.append("")
        lines.append("manoeuvre %s: reference %d steps / %d evaluations; integration with TOL "
                     "1e-6: %d steps; baseline CPU %.3f s" % (
                         man, m["reference"]["steps"], m["reference"]["evaluations"],
                         m["rows"][0]["steps"], m["baseline_cpu_s"]))
        lines.append("  SOR omega scan (avg it.): " + ", ".join(
            "%s:%s" % (k, "%.1f" % v if v else "fail") for k, v in m["scan"]["omega"].items()))
        lines.append("  J-SI rho scan (avg it.):  " + ", ".join(
            "%s:%s" % (k, "%.1f" % v if v else "fail") for k, v in m["scan"]["rho"].items()))
    text = "\n".join(lines) + "\n"
    open(out + ".txt", "w").write(text)
    open(out + ".csv", "w").write("\n".join(csv) + "\n")
    json.dump(res, open(out + ".json", "w"), indent=1)
    print(text)

    # bar plot: avg iterations and CPU us/eval per scheme, both manoeuvres
    dat = os.path.join(tmp, "t2.dat")
    with open(dat, "w") as f:
        for nm in names[1:]:
            rr = [next(x for x in res["manoeuvres"][mn]["rows"] if x["scheme"] == nm)
                  for mn in mans]
            if any("failed" in x for x in rr):
                continue
            f.write('"%s" %s %s\n' % (nm.replace(" (rho auto)", "\\n(rho auto)"),
                                      " ".join("%g" % x["avg_iterations"] for x in rr),
                                      " ".join("%g" % x["cpu_us_per_eval"] for x in rr)))
    png = os.path.join(root, "docs", "img", "seed002_table2.png")
    gnuplot("""set terminal pngcairo size 1100,450 font ",10"
set output '%s'
set multiplot layout 1,2 title "seed 002 Table 2 reproduction: 3-link 5-dof arm, T = 10 s, TOL 1e-6, eps 1e-7 (%s)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -25 font ",9"
set grid ytics
set key top left
set logscale y
set yrange [1:*]
set ylabel "average iterations per evaluation"
plot '%s' using 2:xtic(1) title "manoeuvre I (planar)", '' using 3 title "manoeuvre II (spatial)", '' using 4 title "IIb (II, 0.2 kg upper arm)"
set yrange [10:*]
set ylabel "CPU time per evaluation [us]"
plot '%s' using 5:xtic(1) title "manoeuvre I (planar)", '' using 6 title "manoeuvre II (spatial)", '' using 7 title "IIb (II, 0.2 kg upper arm)"
unset multiplot
""" % (png, info["date"], dat, dat))
    print("results: %s.{txt,csv,json}, %s" % (out, png))


# ------------------------------------------------------------------ seed 002 Figs. 2 and 3

LATENCY = 1.5e-6  # s per message, mbspar's cpa.latency default (docs/cpa.md)

CHAIN = """model = { gravity = [0, 0, -9.81];
  chain = { n = %d; joint = "%s"; axis = [0, 1, 0]; direction = [1, 0, 0];
            length = 0.1; mass = 0.1; shape = "rod"; radius = 0.005; q0 = 0.01; }; };
solver = { method = "jcg"; tol = 1e-7; criterion = "change"; warm_start = "cubic"; };
integrator = { method = "rk4"; dt = 1e-4; t_end = %g; };
output = { every = 100000; };
"""


def fig23(binary, root, ns):
    # MBS_SEED002_JOINT=universal: the seed's "two degrees of freedom per joint" (alpha 1.17),
    # results and plots with the suffix _universal
    joint = os.environ.get("MBS_SEED002_JOINT", "revolute")
    suffix = "" if joint == "revolute" else "_" + joint
    seed_alpha = 1.12 if joint == "revolute" else 1.17
    info = machine(root)
    tmp = tempfile.mkdtemp(prefix="seed002_f23_")
    dt = 1e-4
    rows = []
    target = 0.4  # s of measured CPU work per data point (small N: longer trajectories)
    sfix = 100  # rk4 steps of the trajectory on which iterations are counted (0.01 s)
    for n in ns:
        cfg = os.path.join(tmp, "chain%d.cfg" % n)
        open(cfg, "w").write(CHAIN % (n, joint, 0.0))
        row = {"N": n, "dim": (6 - (2 if joint == "universal" else 1)) * n}
        for meth in ("jcg", "aba"):
            # run 1: the first S1 = 4 rk4 steps (16 evaluations: the cubic warm-start history of
            # every stage fills up); run 2: S2 steps of the same trajectory. Per-evaluation
            # figures are the differences (run 2 - run 1) / (evaluations 2 - 1): the warm-started
            # steady state, without the start-up (process, model, cold first solves).
            sets = ["solver.method=" + meth]
            d1 = mbs_run(binary, cfg, sets + ["integrator.t_end=%.10g" % (4 * dt)], tmp, "f1")
            if d1["rc"]:
                row[meth] = {"failed": d1["err"]}
                continue
            steps = sfix
            dfix = None
            while True:
                d = mbs_run(binary, cfg, sets + ["integrator.t_end=%.10g" % (steps * dt)],
                            tmp, "f")
                if d["rc"]:
                    break
                if dfix is None:
                    dfix = d
                work = d["cpu"] - d1["cpu"]
                if work >= target or steps >= 200000:
                    break
                # scale up the trajectory until the work dominates the start-up noise
                steps = int(steps * min(50.0, max(1.5, 1.2 * target / max(work, 0.005))))
            if d["rc"]:
                row[meth] = {"failed": d["err"]}
                continue
            t, t1 = d["timers"], d1["timers"]

            def dtim(key, field="avg"):
                return t.get(key, {field: 0})[field] - t1.get(key, {field: 0})[field]
            ev = d["solver"]["evaluations"] - d1["solver"]["evaluations"]
            # iterations: always on the same trajectory (S = sfix steps) for every N
            evf = dfix["solver"]["evaluations"] - d1["solver"]["evaluations"]
            it = dfix["solver"]["total_iterations"] - d1["solver"]["total_iterations"]
            teval = dtim("eval")
            ser = dtim("eval.velocity") + dtim("comm.allreduce")
            row[meth] = {"steps": steps, "evaluations": ev, "avg_iterations": it / evf,
                         "avg_iterations_incl_start": dfix["solver"]["avg_iterations"],
                         "cold_iterations_first16": d1["solver"]["avg_iterations"],
                         "cpu_per_eval_s": (d["cpu"] - d1["cpu"]) / ev,
                         "wall_per_eval_s": teval / ev,
                         "serial_fraction": ser / teval,
                         "velocity_fraction": dtim("eval.velocity") / teval,
                         "allreduce_fraction": dtim("comm.allreduce") / teval,
                         "allreduce_calls_per_eval": dtim("comm.allreduce", "count") / ev,
                         "solve_fraction": dtim("eval.constraint.solve") / teval}
        if "jcg" in row and "cpu_per_eval_s" in row["jcg"]:
            j = row["jcg"]
            tcpu = j["cpu_per_eval_s"]
            tser = tcpu * j["serial_fraction"]
            row["T_CPU"] = tcpu
            row["T_serial"] = tser
            row["T_Pi"] = (tcpu - tser) / n + tser
            row["T_Pr"] = 1.3 * (tcpu - tser) / n + tser
            # T_P,r with the reductions and halo exchanges priced on a network: every allreduce
            # costs log2(N) message latencies (recursive doubling), every J-CG iteration one
            # neighbour exchange (up and down concurrently); latency = cpa.latency default
            tnet = j["allreduce_calls_per_eval"] * LATENCY * max(1.0, math.log2(n)) + \
                j["avg_iterations"] * LATENCY
            row["T_Pnet"] = row["T_Pr"] + tnet
        if "aba" in row and "cpu_per_eval_s" in row["aba"]:
            row["T_R"] = row["aba"]["cpu_per_eval_s"]
        rows.append(row)
        print("# N=%5d  J-CG %s  ABA %s" % (
            n, "%.3e s/eval, %.1f it" % (row["jcg"]["cpu_per_eval_s"],
                                         row["jcg"]["avg_iterations"])
            if "cpu_per_eval_s" in row.get("jcg", {}) else "failed",
            "%.3e s/eval" % row["T_R"] if "T_R" in row else "failed"), flush=True)
    info["loadavg_end"] = os.getloadavg()[0]
    good = [r for r in rows if "T_CPU" in r and "T_R" in r]
    fitn = [r for r in good if r["N"] >= 64]
    a_jcg = lsq_slope([r["N"] for r in fitn], [r["T_CPU"] for r in fitn]) if len(fitn) > 1 \
        else float("nan")
    a_aba = lsq_slope([r["N"] for r in fitn], [r["T_R"] for r in fitn]) if len(fitn) > 1 \
        else float("nan")
    a_it = lsq_slope([r["N"] for r in fitn], [r["jcg"]["avg_iterations"] for r in fitn]) \
        if len(fitn) > 1 else float("nan")
    out = os.path.join(root, "bench", "results", "seed002_fig2_3" + suffix)
    lines = [header(info),
             "# seed 002 Figs. 2(a)/(b), 3: %s chains (link 0.1 m, 0.1 kg, horizontal, "
             "falling), rk4 dt = 1e-4 s, J-CG eps = 1e-7 (relative change), cubic warm start"
             % joint,
             "# per evaluation = (run of S steps - run of 4 steps) / their difference in "
             "evaluations: warm-started steady state; time = process CPU time;",
             "# iterations: on the same trajectory for every N (S = %d steps = %g s); CPU: S = "
             "%d steps too, longer (column S) where that is under %.1f s of CPU" % (
                 sfix, sfix * dt, sfix, target),
             "# T_serial = T_CPU x (eval.velocity + comm.allreduce) / eval (in-process timers); "
             "'it. all' = average over the whole S-step run incl. the cold start",
             "",
             "| N | dim A | S | J-CG avg it. | it. all | J-CG CPU us/eval | ABA CPU us/eval | J-CG/ABA |"
             " serial frac. | T_serial us | T_P,i us (20) | T_P,r us (21) | T_R/T_P,r | T_P,net us |"
             " T_R/T_P,net |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    csv = ["N,dim,steps,jcg_avg_iterations,jcg_cpu_s,aba_cpu_s,serial_fraction,velocity_fraction,"
           "allreduce_fraction,T_serial_s,T_Pi_s,T_Pr_s,T_Pnet_s,allreduce_calls_per_eval"]
    for r in good:
        j = r["jcg"]
        lines.append("| %d | %d | %d | %.1f | %.1f | %.2f | %.2f | %.0f | %.3f | %.3f | %.3f | "
                     "%.3f | %.1f | %.1f | %.2f |" % (r["N"], r["dim"], j["steps"],
                                                    j["avg_iterations"],
                                        j["avg_iterations_incl_start"], 1e6 * r["T_CPU"],
                                 1e6 * r["T_R"], r["T_CPU"] / r["T_R"], j["serial_fraction"],
                                 1e6 * r["T_serial"], 1e6 * r["T_Pi"], 1e6 * r["T_Pr"],
                                 r["T_R"] / r["T_Pr"], 1e6 * r["T_Pnet"],
                                 r["T_R"] / r["T_Pnet"]))
        csv.append("%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g" % (
            r["N"], r["dim"], j["steps"], j["avg_iterations"], r["T_CPU"], r["T_R"],
            j["serial_fraction"], j["velocity_fraction"], j["allreduce_fraction"], r["T_serial"],
            r["T_Pi"], r["T_Pr"], r["T_Pnet"], j["allreduce_calls_per_eval"]))
    lines.append("")
    lines.append("fitted exponents (least squares of log t vs log N, N >= 64): J-CG alpha = %.2f "
                 "(seed: 1.12), ABA = %.2f (seed: ~1), J-CG iterations ~ N^%.2f" %
                 (a_jcg, a_aba, a_it))
    text = "\n".join(lines) + "\n"
    open(out + ".txt", "w").write(text)
    open(out + ".csv", "w").write("\n".join(csv) + "\n")
    json.dump({"machine": info, "rows": rows, "alpha_jcg": a_jcg, "alpha_aba": a_aba,
               "alpha_iterations": a_it}, open(out + ".json", "w"), indent=1)
    print(text)

    dat = os.path.join(tmp, "f23.dat")
    with open(dat, "w") as f:
        for r in good:
            f.write("%d %g %g %g %g %g %g %g\n" % (r["N"], 1e6 * r["T_CPU"], 1e6 * r["T_R"],
                                                   r["jcg"]["avg_iterations"], 5 * r["N"],
                                                   1e6 * r["T_Pi"], 1e6 * r["T_Pr"],
                                                   1e6 * r["T_Pnet"]))
    png2 = os.path.join(root, "docs", "img", "seed002_fig2%s.png" % suffix)
    png3 = os.path.join(root, "docs", "img", "seed002_fig3%s.png" % suffix)
    gnuplot("""set terminal pngcairo size 1100,450 font ",10"
set output '%s'
set multiplot layout 1,2 title "seed 002 Fig. 2 reproduction (%s chains, CPU time, %s)"
set logscale xy
set grid
set key top left
set xlabel "N (bodies)"
set ylabel "CPU time per evaluation [us]"
set title "(a) J-CG alpha = %.2f (seed %.2f), ABA %.2f"
plot '%s' using 1:2 with linespoints pt 7 title "J-CG (warm-started)", '' using 1:3 with linespoints pt 5 title "recursive (ABA)"
set ylabel "iterations"
set title "(b) J-CG average iterations vs matrix dimension"
plot '%s' using 1:4 with linespoints pt 7 title "J-CG average iterations", '' using 1:5 with lines dt 2 title "dimension of A"
unset multiplot
set output '%s'
set multiplot layout 1,1
set title "seed 002 Fig. 3 reproduction: estimated parallel time of J-CG (N processors) vs recursive"
set ylabel "time per evaluation [us]"
plot '%s' using 1:6 with linespoints pt 6 title "T_{P,i} (eq. 20)", '' using 1:7 with linespoints pt 7 title "T_{P,r} (eq. 21)", '' using 1:8 with linespoints pt 9 title "T_{P,r} + network latency (1.5 us/message)", '' using 1:3 with linespoints pt 5 title "T_R (ABA, serial)", '' using 1:2 with lines dt 3 lw 2 lc rgb "#444444" title "T_{CPU} (J-CG, serial)"
unset multiplot
""" % (png2, joint, info["date"], a_jcg, seed_alpha, a_aba, dat, dat, png3, dat))
    print("results: %s.{txt,csv,json}, %s, %s" % (out, png2, png3))


# ------------------------------------------------------------------ seed 000 Fig. 6

def cpu_per_eval(base, cpu0, target, k):
    """CPU seconds per evaluation of `base --repeat K` (an accel command), the baseline process
    cpu0 subtracted: K grows from k until the work reaches 0.7 target (or 10^8 repeats).
    Returns (seconds per evaluation or None if the command failed, K, its stderr)."""
    while True:
        rc, cpu, _, err = run_cpu(base + ["--repeat", str(k)])
        if rc:
            return None, k, err
        work = cpu - cpu0
        if work >= 0.7 * target or k >= 10 ** 8:
            return work / k, k, err
        k = int(k * min(100.0, max(1.5, 1.2 * target / max(work, 0.002))))


FIG6 = """model = { gravity = [0, 0, -9.81];
  chain = { n = %d; joint = "%s"; axis = [0, 1, 0]; direction = [1, 0, 0];
            length = 0.1; mass = 0.1; shape = "rod"; radius = 0.005; %s }; };
solver = { method = "aba"; };
"""
JOINTS = {"revolute": ("q0 = 0.3; qd0 = 0.5;", 1), "prismatic": ("q0 = 0.01; qd0 = 0.1;", 1),
          "spherical": ("q0 = [0.9950041652780258, 0.0, 0.09983341664682815, 0.0]; "
                        "qd0 = [0.1, 0.2, 0.3];", 3)}


def fig6(binary, root, ns):
    info = machine(root)
    tmp = tempfile.mkdtemp(prefix="seed000_f6_")
    target = 0.25
    res = {}
    for jt, (init, nv) in JOINTS.items():
        res[jt] = []
        for n in ns:
            cfg = os.path.join(tmp, "%s%d.cfg" % (jt, n))
            open(cfg, "w").write(FIG6 % (n, jt, init))
            row = {"N": n, "dofs": n * nv}
            cpu0 = min(run_cpu([binary, "accel", cfg, "--quiet", "--repeat", "1"])[1]
                       for _ in range(2))
            row["baseline_cpu_s"] = cpu0
            for meth in ("aba", "crba"):
                base = [binary, "accel", cfg, "--quiet", "--set", "solver.method=" + meth]
                row[meth], k, _ = cpu_per_eval(base, cpu0, target, 20000)
                if row[meth] is not None:
                    row[meth + "_repeat"] = k
            res[jt].append(row)
            print("# %-9s N=%3d  aba %.3g us  crba %.3g us" % (
                jt, n, 1e6 * (row["aba"] or float("nan")), 1e6 * (row["crba"] or float("nan"))),
                flush=True)
    info["loadavg_end"] = os.getloadavg()[0]

    def breakpoint(rows):
        """Smallest N from which ABA stays faster than CRBA (linear interpolation of the
        difference between the last N where CRBA wins and the next)."""
        ok = [r for r in rows if r["aba"] and r["crba"]]
        last = None
        for i, r in enumerate(ok):
            if r["aba"] >= r["crba"]:
                last = i
        if last is None:
            return ok[0]["N"] if ok else None, "ABA faster at every N measured"
        if last == len(ok) - 1:
            return None, "CRBA faster up to the largest N measured"
        a, b = ok[last], ok[last + 1]
        da, db = a["aba"] - a["crba"], b["aba"] - b["crba"]
        x = a["N"] + (b["N"] - a["N"]) * da / (da - db)
        return b["N"], "crossing at N = %.1f (interpolated)" % x

    seed = {"revolute": 6, "prismatic": 9, "spherical": 5}
    out = os.path.join(root, "bench", "results", "seed000_fig6")
    lines = [header(info),
             "# seed 000 Fig. 6: serial chains, time per forward-dynamics evaluation, recursive "
             "(ABA) vs nonrecursive (CRBA + LTDL); CPU time (process CPU minus --repeat 1 "
             "baseline) / repeats", ""]
    hdr = "| N |" + "".join(" %s ABA us | %s CRBA us |" % (j[:3], j[:3]) for j in JOINTS)
    lines += [hdr, "|---|" + "---|---|" * len(JOINTS)]
    csv = ["joint,N,dofs,aba_s,crba_s"]
    for i, n in enumerate(ns):
        cells = ["%d" % n]
        for jt in JOINTS:
            r = res[jt][i]
            cells += ["%.3f" % (1e6 * r["aba"]) if r["aba"] else "-",
                      "%.3f" % (1e6 * r["crba"]) if r["crba"] else "-"]
            csv.append("%s,%d,%d,%s,%s" % (jt, n, r["dofs"], r["aba"], r["crba"]))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| joint | breakpoint (first N where ABA wins for good) | detail | seed 000 |")
    lines.append("|---|---|---|---|")
    bps = {}
    for jt in JOINTS:
        bp, why = breakpoint(res[jt])
        bps[jt] = {"N": bp, "detail": why}
        lines.append("| %s | %s | %s | %d |" % (jt, bp if bp else "-", why, seed[jt]))
    text = "\n".join(lines) + "\n"
    open(out + ".txt", "w").write(text)
    open(out + ".csv", "w").write("\n".join(csv) + "\n")
    json.dump({"machine": info, "rows": res, "breakpoints": bps, "seed": seed},
              open(out + ".json", "w"), indent=1)
    print(text)

    plots = []
    for i, jt in enumerate(JOINTS):
        dat = os.path.join(tmp, jt + ".dat")
        with open(dat, "w") as f:
            for r in res[jt]:
                if r["aba"] and r["crba"]:
                    f.write("%d %g %g\n" % (r["N"], 1e6 * r["aba"], 1e6 * r["crba"]))
        plots.append("""set title "(%s) %s joints: breakpoint %s (seed: %d)"
plot '%s' using 1:2 with linespoints pt 7 title "recursive (ABA)", '' using 1:3 with linespoints pt 5 title "nonrecursive (CRBA + LTDL)"
""" % ("bcd"[i], jt, bps[jt]["N"] or "none", seed[jt], dat))
    png = os.path.join(root, "docs", "img", "seed000_fig6.png")
    gnuplot("""set terminal pngcairo size 1300,420 font ",10"
set output '%s'
set multiplot layout 1,3 title "seed 000 Fig. 6(b-d) reproduction: CPU time per evaluation, serial chains (%s)"
set grid
set key top left
set xlabel "number of joints n"
set ylabel "CPU time per evaluation [us]"
%s
unset multiplot
""" % (png, info["date"], "".join(plots)))
    print("results: %s.{txt,csv,json}, %s" % (out, png))


# ------------------------------------------------------------------ seed 000 Fig. 6(a), loops

def star_cfg(n):
    """seed 000 Fig. 5's highly parallel system: n rods hinged to the ground at one point about
    y, fanned out in the x-z plane"""
    bodies = []
    for k in range(n):
        a = 2 * math.pi * k / max(n, 1)
        bodies.append('{ name = "r%d"; parent = "ground"; joint = { type = "revolute"; axis = [0, 1, 0]; '
                      'q0 = [%r]; qd0 = [0.5]; }; mass = 0.1; shape = "rod"; length = 0.1; '
                      'direction = [1, 0, 0]; radius = 0.005; }' % (k, a))
    return "model = { gravity = [0, 0, -9.81]; bodies = (%s); };\n" % ",\n".join(bodies)


def loop_cfg(n):
    """a closed planar loop of n links (revolute joints about y) from the ground at the origin
    to the ground at (2 r, 0, 0), the links' ends on a half circle of radius r (link length l =
    2 r sin(pi / 2n)), cut at the last revolute: mobility n - 2"""
    r = 0.5
    l = 2 * r * math.sin(math.pi / (2 * n))
    pts = [(r - r * math.cos(math.pi * k / n), -r * math.sin(math.pi * k / n)) for k in range(n + 1)]
    phis = [math.atan2(-(pts[k + 1][1] - pts[k][1]), pts[k + 1][0] - pts[k][0]) for k in range(n)]
    bodies = []
    for k in range(n):
        q = phis[k] - (phis[k - 1] if k else 0.0)
        bodies.append('{ name = "l%d"; parent = "%s"; joint = { type = "revolute"; axis = [0, 1, 0]; '
                      'origin = [%r, 0, 0]; q0 = [%r]; }; mass = 0.1; shape = "rod"; length = %r; '
                      'direction = [1, 0, 0]; radius = 0.005; }'
                      % (k, "l%d" % (k - 1) if k else "ground", l if k else 0.0, q, l))
    loop = ('{ name = "cut"; type = "revolute"; body1 = "l%d"; frame1 = { origin = [%r, 0, 0]; '
            'axis = [0, 1, 0]; }; body2 = "ground"; frame2 = { origin = [%r, 0, 0]; axis = [0, 1, 0]; }; }'
            % (n - 1, l, 2 * r))
    return ("model = { gravity = [0, 0, -9.81]; bodies = (%s); loops = (%s); };\n"
            % (",\n".join(bodies), loop))


def fig6a(binary, root, ns):
    info = machine(root)
    tmp = tempfile.mkdtemp(prefix="seed000_f6a_")
    target = 0.25
    res = {"star": [], "loop": []}
    for kind, make in (("star", star_cfg), ("loop", loop_cfg)):
        for n in ns:
            if kind == "loop" and n < 3:
                continue
            cfg = os.path.join(tmp, "%s%d.cfg" % (kind, n))
            open(cfg, "w").write(make(n))
            row = {"N": n}
            cpu0 = min(run_cpu([binary, "accel", cfg, "--quiet", "--repeat", "1",
                                "--set", "solver.method=aba"])[1] for _ in range(2))
            for meth in ("aba", "crba"):
                base = [binary, "accel", cfg, "--quiet", "--set", "solver.method=" + meth]
                row[meth], _, err = cpu_per_eval(base, cpu0, target, 5000)
                if row[meth] is None:
                    row[meth + "_err"] = err.strip()[-200:]
            res[kind].append(row)
            print("# %-5s N=%3d  aba %.3g us  crba %.3g us" % (
                kind, n, 1e6 * (row["aba"] or float("nan")), 1e6 * (row["crba"] or float("nan"))),
                flush=True)
    info["loadavg_end"] = os.getloadavg()[0]
    out = os.path.join(root, "bench", "results", "seed000_fig6a")
    lines = [header(info),
             "# seed 000 Fig. 6(a) and its closed-loop breakpoint: time per forward-dynamics "
             "evaluation, recursive (ABA; loops: ABA's articulated sweeps for G H^-1 G^T) vs "
             "nonrecursive (CRBA + LTDL; loops: H^-1 G^T from the factor); CPU time (process CPU "
             "minus a --repeat 1 baseline) / repeats", "",
             "| N | star ABA us | star CRBA us | loop ABA us | loop CRBA us |", "|---|---|---|---|---|"]
    loops = {r["N"]: r for r in res["loop"]}
    for r in res["star"]:
        lr = loops.get(r["N"], {})
        f = lambda v: "%.3f" % (1e6 * v) if v else "-"
        lines.append("| %d | %s | %s | %s | %s |" % (r["N"], f(r["aba"]), f(r["crba"]),
                                                     f(lr.get("aba")), f(lr.get("crba"))))
    lines.append("")
    for kind in ("star", "loop"):
        ok = [r for r in res[kind] if r["aba"] and r["crba"]]
        wins = [r["N"] for r in ok if r["aba"] < r["crba"]]
        last_crba = max([r["N"] for r in ok if r["aba"] >= r["crba"]] or [0])
        lines.append("%s: ABA faster at N = %s; CRBA faster up to N = %d" % (kind, wins, last_crba))
    text = "\n".join(lines) + "\n"
    open(out + ".txt", "w").write(text)
    json.dump({"machine": info, "rows": res}, open(out + ".json", "w"), indent=1)
    print(text)
    dats = {}
    for kind in ("star", "loop"):
        dats[kind] = os.path.join(tmp, kind + ".dat")
        with open(dats[kind], "w") as f:
            for r in res[kind]:
                if r["aba"] and r["crba"]:
                    f.write("%d %g %g\n" % (r["N"], 1e6 * r["aba"], 1e6 * r["crba"]))
    png = os.path.join(root, "docs", "img", "seed000_fig6a.png")
    gnuplot("""set terminal pngcairo size 1100,420 font ",10"
set output '%s'
set multiplot layout 1,2 title "seed 000 Fig. 6(a) and the closed-loop breakpoint (%s)"
set grid
set key top left
set xlabel "number of bodies n"
set ylabel "CPU time per evaluation [us]"
set title "(a) star: n rods hinged to the ground (seed: nonrecursive always faster)"
plot '%s' using 1:2 with linespoints pt 7 title "recursive (ABA)", '' using 1:3 with linespoints pt 5 title "nonrecursive (CRBA + LTDL)"
set title "closed planar loop of n links (seed: recursive from about 12)"
plot '%s' using 1:2 with linespoints pt 7 title "recursive (ABA + loop)", '' using 1:3 with linespoints pt 5 title "nonrecursive (CRBA + loop)"
unset multiplot
""" % (png, info["date"], dats["star"], dats["loop"]))
    print("results: %s.{txt,json}, %s" % (out, png))


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    verb, binary, root = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    os.makedirs(os.path.join(root, "bench", "results"), exist_ok=True)
    os.makedirs(os.path.join(root, "docs", "img"), exist_ok=True)
    ns = [int(x) for x in sys.argv[4].split(",")] if len(sys.argv) > 4 else None
    if verb == "table2":
        table2(binary, root)
    elif verb == "fig23":
        fig23(binary, root, ns or [8, 16, 32, 64, 128, 256, 512, 1024, 2048])
    elif verb == "fig6a":
        fig6a(binary, root, ns or [1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24])
    elif verb == "fig6":
        fig6(binary, root, ns or [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
