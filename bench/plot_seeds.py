#!/usr/bin/env python3
"""Plots of four seed items (docs/seeds.md sections 4, 5, 6, 7) from their COMMITTED results
files; python3 standard library writing gnuplot scripts (gnuplot-nox, pngcairo), the style of
bench/seeds_common.py. Run by the items' bench scripts after they write their results, or alone:

    bench/plot_seeds.py fig4      [ROOT]  seed 000 Fig. 4: bench/results/seed000_fig4.csv (the
                                          parallelogram's joint rates) and the newest
                                          bench/results/seed000_claim_*.json (joint against
                                          natural coordinates) -> docs/img/seed000_fig4.png
    bench/plot_seeds.py eps       [ROOT]  seed 002 eps = TOL/10: bench/results/seed002_eps.json
                                          -> docs/img/seed002_eps.png
    bench/plot_seeds.py counts    [ROOT]  seed 003 Table 4: bench/results/seed003_counts.txt
                                          -> docs/img/seed003_counts.png
    bench/plot_seeds.py baumgarte [ROOT]  seed 001 Baumgarte w_n: bench/results/
                                          seed001_baumgarte.json -> docs/img/seed001_baumgarte.png
    bench/plot_seeds.py fig5      [ROOT]  seed 004 Fig. 5: bench/results/seed004_fig5.csv
                                          -> docs/img/seed004_fig5.png
    bench/plot_seeds.py natranks  [ROOT]  issue 33: the newest bench/results/natural_ranks_*.jsonl
                                          (bench/natural_ranks.sh) -> docs/img/natural_ranks.png
    bench/plot_seeds.py all       [ROOT]  all of them

ROOT defaults to the repository this script is in. Reads results, never runs mbspar; a missing
results file or a failing gnuplot is reported on stderr with exit code 1.
"""
import csv
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

HEAD = 'set terminal pngcairo size %d,%d font ",10"\nset output "%s"\n'


def gnuplot(script):
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode:
        raise RuntimeError("gnuplot failed: " + r.stderr.strip())


def write(tmp, name, rows):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        for r in rows:
            f.write(" ".join(r if isinstance(r, str) else "%.10g" % r for r in r) + "\n")
    return path


# ------------------------------------------------------------------ seed 000 Fig. 4

def fig4(root, tmp):
    res = os.path.join(root, "bench", "results")
    traj = os.path.join(res, "seed000_fig4.csv")
    claims = sorted(glob.glob(os.path.join(res, "seed000_claim_*.json")))
    if not claims:
        raise FileNotFoundError(os.path.join(res, "seed000_claim_*.json"))
    lines = open(traj).read().splitlines()
    meta = [x[2:] for x in lines if x.startswith("# ")]  # commit, load
    rows = list(csv.DictReader(x for x in lines if not x.startswith("#")))
    rates = write(tmp, "rates.dat", [
        (float(r["t"]), float(r["qd_crank"]), -float(r["qd_coupler"]), float(r["qd_rocker"]))
        for r in rows])
    # the deviations from the seed's map, at full precision (the bench script's columns)
    dev = max(max(abs(float(r["dev_coupler"])), abs(float(r["dev_rocker"]))) for r in rows)
    cl = json.load(open(claims[-1]))
    stamp = os.path.basename(claims[-1])[len("seed000_claim_"):-len(".json")]
    bars = []
    for label, d in cl["results"].items():
        med = lambda v: sorted(v)[len(v) // 2]
        j, n = med(d["joint"]["step"]), med(d["natural"]["step"])
        short = label.replace("seed 000 ", "").replace("slider-", "slider-\\n")
        bars.append(('"%s"' % short.replace(", ", "\\n"), 1e3 * j, 1e3 * n, n / j))
    bdat = write(tmp, "claim.dat", bars)
    png = os.path.join(root, "docs", "img", "seed000_fig4.png")
    gnuplot(HEAD % (1100, 450, png) + """
set multiplot layout 1,2 title "seed 000 Fig. 4: the parallelogram loop's velocity map (bench/seed000\\\\_fig4.sh) and joint against absolute coordinates (bench/seed000\\\\_claim.sh)"
set title "(a) seed000\\\\_fig4.cfg, dp5 tol 1e-10, 3 s (%s)\\nseed 000: dθ3/dt = -dθ2/dt, dθ4/dt = dθ2/dt; here to within %.1e rad/s" font ",9"
set grid
set key top right font ",9"
set xlabel "t [s]"
set ylabel "joint rate [rad/s]"
plot '%s' using 1:2 with lines lw 4 lc rgb "#bbbbbb" title "dθ2/dt (crank)", \\
     '' using 1:3 with lines lw 1.5 lc rgb "#d62728" title "-dθ3/dt (coupler)", \\
     '' using 1:4 with lines lw 1.5 dt 2 lc rgb "#1f77b4" title "dθ4/dt (rocker)"
set title "(b) seed000\\\\_claim\\\\_%s (commit %s): median step times\\nnatural / joint on the bars; seed 000: 352 s / 75 s = 4.7x on its Fig. 4 system" font ",9"
set bmargin 4
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics norotate font ",8" nomirror
set grid noxtics ytics
set logscale y
set yrange [3:1000]
set xlabel ""
set ylabel "integration (step timer) [ms]"
set key top left
plot '%s' using 2:xtic(1) lc rgb "#2ca02c" title "joint (ABA + loop solve)", \\
     '' using 3 lc rgb "#ff7f0e" title "natural (absolute, O(n))", \\
     '' using ($0):($3*1.6):(sprintf("%%.1fx", $4)) with labels font ",8" notitle
unset multiplot
""" % (meta[0] if meta else "", dev, rates, stamp, cl["commit"], bdat))
    return png


# ------------------------------------------------------------------ seed 002 eps = TOL/10

def eps(root, tmp):
    d = json.load(open(os.path.join(root, "bench", "results", "seed002_eps.json")))
    dats = []
    for label, rows in d["models"]:
        dats.append((label, write(tmp, "eps%d.dat" % len(dats), [
            (r["ratio"], r["error"], r["iterations"], r["steps"], r["rejected"],
             r["iterations"] / r["evaluations"]) for r in rows])))
    (lm, dm), (lc, dc) = dats  # manipulator, chain
    png = os.path.join(root, "docs", "img", "seed002_eps.png")
    marks = """set arrow 1 from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb "#555555"
set arrow 2 from 0.1, graph 0 to 0.1, graph 1 nohead dt 3 lc rgb "#2ca02c" lw 2
"""
    gnuplot(HEAD % (1300, 420, png) + """
set multiplot layout 1,3 title "seed 002: J-CG's ε against dp5's TOL = 1e-6 (bench/seed002\\\\_eps.sh, commit %s, load %.2f); dashed: ε = TOL, green: the seed's ε = TOL/10"
set logscale x
set xrange [5e-5:20]
set format x "10^{%%L}"
set grid
set xlabel "ε / TOL"
%s
set logscale y
set format y "10^{%%L}"
set key top left font ",9"
set title "(a) error of the final state (against ABA, TOL 1e-12)"
set ylabel "max |x - x_{ref}| / max |x_{ref}|"
plot '%s' using 1:2 with linespoints pt 7 lw 2 title "128-link chain, 0.2 s", \\
     '%s' using 1:2 with linespoints pt 5 lw 2 title "Table 2 manipulator, 10 s"
set title "(b) J-CG iterations (in all; per evaluation)"
set ylabel "J-CG iterations in all"
set format y "%%g"
unset logscale y
set yrange [0:*]
set key at graph 0.03, graph 0.66 left top Left reverse font ",9"
set y2tics
set y2label "iterations per evaluation"
set y2range [0:*]
plot '%s' using 1:3 with linespoints pt 7 lw 2 title "chain: in all", \\
     '%s' using 1:3 with linespoints pt 5 lw 2 title "manipulator: in all", \\
     '%s' using 1:6 axes x1y2 with linespoints pt 6 dt 2 lc 1 title "chain: per eval. (right)", \\
     '%s' using 1:6 axes x1y2 with linespoints pt 4 dt 2 lc 2 title "manipulator: per eval. (right)"
unset y2tics
unset y2label
set title "(c) dp5 steps and rejected steps"
set ylabel "steps"
set logscale y
set yrange [1:20000]
set key default
set key top left Left reverse font ",9"
plot '%s' using 1:4 with linespoints pt 7 lw 2 lc 1 title "chain: steps", \\
     '%s' using 1:5 with linespoints pt 6 dt 2 lc 1 title "chain: rejected", \\
     '%s' using 1:4 with linespoints pt 5 lw 2 lc 2 title "manipulator: steps", \\
     '%s' using 1:5 with linespoints pt 4 dt 2 lc 2 title "manipulator: rejected"
unset multiplot
""" % (d["commit"], d["load"], marks, dc, dm, dc, dm, dc, dm, dc, dc, dm, dm))
    return png


# ------------------------------------------------------------------ seed 003 Table 4

def counts(root, tmp):
    txt = os.path.join(root, "bench", "results", "seed003_counts.txt")
    tables, fits, cur = {}, {}, None
    for line in open(txt):
        w = line.split()
        if line.startswith(("general", "coordinate")):
            cur = w[0]
            tables[cur], fits[cur] = [], {}
        elif cur and w and w[0].isdigit():
            tables[cur].append([int(x) for x in w])
        elif cur and line.lstrip().startswith("fit n ="):
            # "fit n = 16..128, kinematics + ABA (forward)   1038.0 n   -694.0"
            key = line.split(",", 1)[1].rsplit(None, 3)[0].strip()
            fits[cur][key] = "%g n - %g" % (float(w[-3]), -float(w[-1]))
    if set(tables) != {"general", "coordinate"}:
        raise ValueError("%s: expected the general and coordinate axes tables" % txt)

    def fit(axes, key):
        return fits[axes].get(key, "?")
    # columns: n kinematics RNEA ABA CRBA+LTDL kin+RNEA kin+ABA
    g = write(tmp, "general.dat", tables["general"])
    c = write(tmp, "coordinate.dat", tables["coordinate"])
    png = os.path.join(root, "docs", "img", "seed003_counts.png")
    gnuplot(HEAD % (1100, 450, png) + """
set multiplot layout 1,2 title "seed 003 Table 4: operations of one evaluation, chains of n = 2..128 revolute joints (seed: M + A; mbspar: every +, -, *, / counted,\\nbuild/bench/seed003\\\\_counts; its least-squares lines over n = 16..128 in the keys)"
set logscale xy
set xrange [1.7:160]
set yrange [2:3e6]
set xtics (2,4,8,16,32,64,128)
set format y "10^{%%L}"
set grid
set xlabel "joints n"
set ylabel "operations per evaluation"
set key bottom right Left reverse font ",9"
set title "(a) forward dynamics (with the kinematics)"
plot '%s' every ::1 using 1:(266*$1-239) with linespoints pt 1 lw 3 lc rgb "#000000" title "seed 003: 266 n - 239", \\
     '%s' every ::1 using 1:(373*$1-371) with linespoints pt 2 lw 2 dt 2 lc rgb "#000000" title "Featherstone 1983: 373 n - 371", \\
     '%s' every ::1 using 1:7 with linespoints pt 7 lw 2 lc rgb "#d62728" title "mbspar kin. + ABA, general axes: %s", \\
     '%s' every ::1 using 1:7 with linespoints pt 5 lw 2 lc rgb "#1f77b4" title "mbspar kin. + ABA, coordinate axes: %s", \\
     '%s' every ::1 using 1:4 with linespoints pt 6 dt 3 lc rgb "#d62728" title "mbspar ABA recursion alone, general: %s", \\
     '%s' every ::1 using 1:5 with linespoints pt 9 lc rgb "#ff7f0e" title "mbspar CRBA + LTDL (quadratic, cubic)"
set title "(b) inverse dynamics (with the kinematics)"
set yrange [2:3e5]
plot '%s' every ::1 using 1:(176*$1-156) with linespoints pt 1 lw 3 lc rgb "#000000" title "seed 003: 176 n - 156", \\
     '%s' every ::1 using 1:(174*$1-134) with linespoints pt 2 lw 2 dt 2 lc rgb "#000000" title "seed 003 ref. [13]: 174 n - 134", \\
     '%s' every ::1 using 1:6 with linespoints pt 7 lw 2 lc rgb "#d62728" title "mbspar kin. + RNEA, general axes: %s", \\
     '%s' every ::1 using 1:6 with linespoints pt 5 lw 2 lc rgb "#1f77b4" title "mbspar kin. + RNEA, coordinate axes: %s", \\
     '%s' every ::1 using 1:3 with linespoints pt 4 dt 3 lc rgb "#2ca02c" title "mbspar RNEA recursion alone: %s"
unset multiplot
""" % (g, g, g, fit("general", "kinematics + ABA (forward)"), c,
       fit("coordinate", "kinematics + ABA (forward)"), g, fit("general", "ABA alone"), g,
       g, g, g, fit("general", "kinematics + RNEA (inverse)"), c,
       fit("coordinate", "kinematics + RNEA (inverse)"), g, fit("general", "RNEA alone")))
    return png


# ------------------------------------------------------------------ seed 001 Baumgarte

def baumgarte(root, tmp):
    d = json.load(open(os.path.join(root, "bench", "results", "seed001_baumgarte.json")))
    w = d["omega"][0]
    rows = [r for r in d["rows"] if r["ratio"] > 0]
    none = next(r for r in d["rows"] if r["ratio"] == 0)
    dat = write(tmp, "bg.dat", [(r["ratio"], r["closure_pos_max"], r["closure_vel_max"],
                                 r["evaluations"], r["steps"], r["rejected"]) for r in rows])
    png = os.path.join(root, "docs", "img", "seed001_baumgarte.png")
    gnuplot(HEAD % (1100, 450, png) + """
set multiplot layout 1,2 title "seed 001: Baumgarte ω_n on the slider-crank, no projection, dp5 TOL 1e-4, 10 s (bench/seed001\\\\_baumgarte.sh, commit %s, load %.2f)"
set logscale xy
set xrange [0.005:200]
set format x "10^{%%L}"
set format y "10^{%%L}"
set grid
set xlabel "ω_n / ω   (ω = %.2f rad/s, the system's frequency at equilibrium)"
set arrow 1 from 1, graph 0 to 1, graph 1 nohead lw 2 dt 2 lc rgb "#555555"
set label 1 "ω_n = ω, the highest\\nsystem frequency" at 1.2, graph 0.93 font ",9"
set key bottom left font ",9"
set title "(a) largest closure violation over the run"
set ylabel "max closure violation"
plot '%s' using 1:2 with linespoints pt 7 lw 2 lc rgb "#d62728" title "position [m]", \\
     %.6g with lines lw 1.5 dt 2 lc rgb "#d62728" title "position, no stabilisation", \\
     '%s' using 1:3 with linespoints pt 5 lw 2 lc rgb "#1f77b4" title "velocity [m/s]", \\
     %.6g with lines lw 1.5 dt 2 lc rgb "#1f77b4" title "velocity, no stabilisation"
set title "(b) cost"
set label 1 at 1.2, graph 0.14
set ylabel "count"
set key top left font ",9"
plot '%s' using 1:4 with linespoints pt 7 lw 2 lc rgb "#2ca02c" title "evaluations", \\
     %d with lines lw 1.5 dt 2 lc rgb "#2ca02c" title "evaluations, no stabilisation", \\
     '%s' using 1:5 with linespoints pt 5 lw 2 lc rgb "#9467bd" title "steps", \\
     '%s' using 1:6 with linespoints pt 4 dt 2 lc rgb "#9467bd" title "rejected steps"
unset multiplot
""" % (d["commit"], d["load"], w, dat, none["closure_pos_max"], dat, none["closure_vel_max"],
       dat, none["evaluations"], dat, dat))
    return png


# ------------------------------------------------------------------ seed 004 Fig. 5

def fig5(root, tmp):
    lines = open(os.path.join(root, "bench", "results", "seed004_fig5.csv")).read().splitlines()
    meta = [x[2:] for x in lines if x.startswith("# ")]
    rows = list(csv.DictReader(x for x in lines if not x.startswith("#")))
    ptols = []
    for r in rows:
        if r["ptol"] not in ptols:
            ptols.append(r["ptol"])
    colors = ["#d62728", "#ff7f0e", "#2ca02c", "#1f77b4", "#9467bd", "#555555"]
    dats = []
    for i, p in enumerate(ptols):
        dats.append(write(tmp, "f5_%d.dat" % i, [
            (-math.log10(float(r["tol"])), float(r["cpu_median"]),
             -math.log10(max(float(r["err"]), 1e-300)), int(r["evals"]), int(r["projections"]))
            for r in rows if r["ptol"] == p]))
    def plot(using, extra=""):
        return "plot " + ", \\\n     ".join(
            "'%s' using %s with linespoints pt %d lw 1.5 lc rgb \"%s\" %s title \"proj. tol %s\"" %
            (d, using, 4 + i, colors[i % len(colors)], extra, p)
            for i, (d, p) in enumerate(zip(dats, ptols))) + "\n"
    png = os.path.join(root, "docs", "img", "seed004_fig5.png")
    head = meta[0].replace("_", "\\\\_") if meta else ""
    gnuplot(HEAD % (1500, 450, png) + """
set multiplot layout 1,3 title "%s" font ",9"
set grid
set key top left font ",8"
set xlabel "-log10(integration tolerance)"
set title "(a) the seed's Fig. 5: CPU time of 10 s"
set ylabel "CPU [s] (median, under load)"
""" % head + plot("1:2") + """
set title "(b) work against achieved accuracy"
set xlabel "-log10(max |p(10) - p_{ref}(10)|)"
""" + plot("3:2") + """
set title "(c) evaluations (solid), projections (dashed)"
set xlabel "-log10(integration tolerance)"
set ylabel "count"
set logscale y
""" + plot("1:4")[:-1] + ", \\\n     " + ", \\\n     ".join(
        "'%s' using 1:($5>0?$5:1/0) with linespoints pt %d dt 2 lc rgb \"%s\" notitle" %
        (d, 4 + i, colors[i % len(colors)]) for i, d in enumerate(dats)) + "\nunset multiplot\n")
    return png


# ------------------------------------------------------------------ issue 33: natural vs aba/schur

def natranks(root, tmp):
    files = sorted(glob.glob(os.path.join(root, "bench", "results", "natural_ranks_*.jsonl")))
    if not files:
        raise FileNotFoundError(os.path.join(root, "bench", "results", "natural_ranks_*.jsonl"))
    recs = [json.loads(x) for x in open(files[-1]) if x.strip()]
    meta = next(r for r in recs if r.get("kind") == "meta")
    labels = [v["label"] for v in meta["spec"]["cases"][0]["variants"]]
    rows = []
    for c in meta["spec"]["cases"]:
        t = {}
        for r in recs:  # the timed rounds (round -1 is the warm-up)
            if r.get("case") == c["case"] and r.get("round", -1) >= 0 and r.get("rc") == 0:
                t.setdefault(r["label"], []).append(1e3 * r["time_per_eval_s"])
        if any(lb not in t for lb in labels):
            raise ValueError("%s: case %s lacks a variant" % (files[-1], c["case"]))
        name = c["case"].split(" (")[0]
        row = ['"%s"' % name]
        for lb in labels:
            v = sorted(t[lb])
            row += [v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2]),
                    v[0], v[-1]]
        rows.append(row)
    dat = write(tmp, "natranks.dat", rows)
    colors = ["#2ca02c", "#1f77b4", "#ff7f0e", "#d62728"]
    png = os.path.join(root, "docs", "img", "natural_ranks.png")
    stamp = os.path.basename(files[-1])[len("natural_ranks_"):-len(".jsonl")]
    plots = []
    for i, lb in enumerate(labels):
        col = 2 + 3 * i
        plots.append("'%s' using %d:%d:%d%s lc rgb \"%s\" title \"%s\"" % (
            dat, col, col + 1, col + 2, ":xtic(1)" if i == 0 else "", colors[i % len(colors)], lb))
    gnuplot(HEAD % (1000, 450, png) + """
set title "natural coordinates against aba and schur: time per evaluation (mbspar accel --repeat)\\n\
bench/natural_ranks.sh, natural_ranks_%s, commit %s, %d interleaved pinned rounds: medians, bars min..max" font ",10" noenhanced
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid noxtics ytics
set logscale y
set yrange [1:1000]
set ylabel "time per evaluation [ms]"
set key top left
plot """ % (stamp, meta["git"], meta["rounds"]) + ", \\\n     ".join(plots) + "\n")
    return png


PLOTS = {"fig4": fig4, "eps": eps, "counts": counts, "baumgarte": baumgarte, "fig5": fig5,
         "natranks": natranks}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in list(PLOTS) + ["all"]:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    names = list(PLOTS) if sys.argv[1] == "all" else [sys.argv[1]]
    rc = 0
    with tempfile.TemporaryDirectory() as tmp:
        for nm in names:
            try:
                print("plot: " + os.path.relpath(PLOTS[nm](root, tmp), root))
            except (OSError, ValueError, KeyError, RuntimeError) as e:
                print("plot_seeds.py %s: %s" % (nm, e), file=sys.stderr)
                rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
