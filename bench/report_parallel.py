#!/usr/bin/env python3
"""Tables (Markdown) and plots (gnuplot PNG) from a bench/run_parallel.sh results file."""
import json
import os
import subprocess
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
imgdir = sys.argv[2]
meta = rows[0]
print(f"Machine: {meta['machine']} ({meta['nproc']} cores), mbspar {meta['git']}, {meta['date']}\n")

cold = [r for r in rows if r.get("mode") == "cold"]
print("| method | ranks | iterations | converged | time per eval [s] | µs per iteration |")
print("|---|---|---|---|---|---|")
for r in cold:
    print(f"| {r['method']} | {r['ranks']} | {r['iterations']} | {'yes' if r['converged'] else 'no (' + r['reason'] + ')'} "
          f"| {r['time_per_eval_s']:.4g} | {r['us_per_iteration']:.1f} |")

warm = [r for r in rows if r.get("mode") == "warm"]
if warm:
    base = next(r for r in warm if r["warm_start"] == "none")["avg_iterations"]
    print("\n| warm start | avg iterations | ratio to none | max | time per eval [s] |")
    print("|---|---|---|---|---|")
    for r in warm:
        print(f"| {r['warm_start']} | {r['avg_iterations']:.2f} | {r['avg_iterations'] / base:.3f} "
              f"| {r['max_iterations']} | {r['time_per_eval_s']:.4g} |")

scale = [r for r in rows if r.get("mode") == "scale"]
if scale:
    t1 = next((r["time_per_eval_s"] for r in scale if r["ranks"] == 1), None)
    print("\n| ranks | iterations | time per eval [s] | speedup vs -n 1 |")
    print("|---|---|---|---|")
    for r in scale:
        sp = t1 / r["time_per_eval_s"] if t1 else float("nan")
        print(f"| {r['ranks']} | {r['iterations']} | {r['time_per_eval_s']:.4g} | {sp:.2f} |")

halo = [r for r in rows if r.get("mode") == "halo"]
if halo:
    print("\n| halo | ranks | iterations | time per eval [s] | µs per iteration |")
    print("|---|---|---|---|---|")
    for r in halo:
        print(f"| {r['halo']} | {r['ranks']} | {r['iterations']} | {r['time_per_eval_s']:.4g} "
              f"| {r['us_per_iteration']:.1f} |")

# plots
def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)

if warm:
    dat = os.path.join(imgdir, "parallel_warm.dat")
    with open(dat, "w") as f:
        for r in warm:
            f.write(f"{r['warm_start']} {r['avg_iterations']}\n")
    gnuplot(f"""set terminal pngcairo size 800,450
set output '{os.path.join(imgdir, 'parallel_warm.png')}'
set title 'J-CG iterations per evaluation along a smooth 1 s trajectory (1024-body chain)'
set ylabel 'average iterations'
set style fill solid 0.6
set boxwidth 0.6
set grid ytics
set yrange [0:*]
plot '{dat}' using 0:2:xtic(1) with boxes notitle, '' using 0:2:(sprintf('%.1f',$2)) with labels offset 0,1 notitle
""")
    os.remove(dat)
if cold:
    dat = os.path.join(imgdir, "parallel_cold.dat")
    with open(dat, "w") as f:
        for r in cold:
            if r["ranks"] == 1:
                f.write(f"{r['method']} {r['time_per_eval_s']} {r['iterations']}\n")
    gnuplot(f"""set terminal pngcairo size 800,450
set output '{os.path.join(imgdir, 'parallel_cold.png')}'
set title 'Cold-start time per evaluation, 1024-body chain, -n 1 (tol 1e-8)'
set ylabel 'seconds (log)'
set logscale y
set style fill solid 0.6
set boxwidth 0.6
set grid ytics
plot '{dat}' using 0:2:xtic(1) with boxes notitle
""")
    os.remove(dat)
