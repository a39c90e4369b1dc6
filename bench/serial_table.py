#!/usr/bin/env python3
"""Markdown table of a serial_baselines JSON report (bench/results/serial_*.json).

    python3 bench/serial_table.py bench/results/serial_<stamp>.json [--cpu]

Prints, per N, microseconds per evaluation and nanoseconds per body of ABA, CRBA, RNEA, MuJoCo
and Simbody ("-" = not measured; --cpu: thread CPU time instead of wall clock), the growth exponents, the run's machine and build, and the
equivalence check (max |q̈ - q̈_ABA| of each method, "-" = not run or model not loaded).
"""
import json
import math
import sys


def cell(t, n):
    if t is None or not math.isfinite(t):
        return "-"
    us = 1e6 * t
    fmt = "%.0f" if us >= 1000 else ("%.1f" if us >= 10 else "%.2f")
    return (fmt % us) + " / %.0f" % (1e9 * t / n)


def main():
    rep = json.load(open([a for a in sys.argv[1:] if not a.startswith("--")][0]))
    cols = [("aba", "ABA"), ("crba", "CRBA"), ("rnea", "RNEA"), ("mujoco", "MuJoCo"),
            ("simbody", "Simbody")]
    meth = rep["methods"]
    key = "cpu_s_per_eval" if "--cpu" in sys.argv else "s_per_eval"
    print("| N | " + " | ".join(name for _, name in cols) + " |")
    print("|---:|" + "---:|" * len(cols))
    for i, n in enumerate(rep["n"]):
        row = [cell(meth[k][key][i], n) for k, _ in cols]
        print("| %d | " % n + " | ".join(row) + " |")
    expo = []
    for k, name in cols:  # least squares of log t vs log N over N >= 64, as the benchmark does
        pts = [(math.log(n), math.log(t)) for n, t in zip(rep["n"], meth[k][key])
               if n >= 64 and t is not None and t > 0]
        if len(pts) < 2:
            expo.append("-")
            continue
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        e = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
        expo.append("%.2f" % e)
    print("| exponent (N ≥ 64) | " + " | ".join(expo) + " |")
    print()
    m, b = rep["machine"], rep["build"]
    print("Machine: %s, %d CPUs, load average %s (start) / %s (end); %s %s, `%s`, git %s; "
          "MuJoCo %s, Simbody %s; date %s." %
          (m["cpu_model"], m["nproc"], m.get("loadavg_start", "?"), m.get("loadavg_end", "?"),
           b["compiler"], b["build_type"], b["c_flags"], b["git"], b["mujoco"], b["simbody"],
           rep["date"]))
    for k, name in cols:
        if meth[k]["note"]:
            print("- %s: %s" % (name, meth[k]["note"]))
    print()
    print("| N | max \\|q̈\\| (rad/s²) | CRBA | MuJoCo (MJCF) | MuJoCo (URDF) | Simbody |")
    print("|---:|---:|---:|---:|---:|---:|")

    for c in rep["check"]:
        cells = []
        for key in ("maxdiff_crba", "maxdiff_mujoco_mjcf", "maxdiff_mujoco_urdf",
                    "maxdiff_simbody"):
            v = c[key]
            cells.append("%.1e" % v if v is not None else "-")
        print("| %d | %.1f | " % (c["n"], c["qdd_max"]) + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
