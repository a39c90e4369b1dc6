#!/usr/bin/env python3
"""Compare the spin-up beam's tip deflection in the hub frame (docs/flexible.md 9).

    python3 scripts/spinup_compare.py RUN_DIR...

Each RUN_DIR is an `mbspar run` of configs/spinup.cfg (flexible: the tip node's world position
node_beam_tip_x, _y and the hub angle q_beam; v = -sin(q) x + cos(q) y) or of
configs/spinup_lumped.cfg with any number of links (v = sum_i l sin(sum_{j<=i} q_seg_j), l = L/N,
L = 10 m). Prints per run: the peak deflection (most negative v) and its time, the largest |v|
after the spin-up (t > 15 s) and at the end; for every run after the first, the largest
|v - v_first| over the common times (linear interpolation of v_first) and that over the peak
|v_first|. With --json FILE the figures are written there too.
"""
import csv
import json
import math
import sys

LENGTH = 10.0


def deflection(d):
    rows = list(csv.DictReader(open(d + "/trajectory.csv")))
    out = []
    if "node_beam_tip_x" in rows[0]:
        for r in rows:
            th = float(r["q_beam"])
            x, y = float(r["node_beam_tip_x"]), float(r["node_beam_tip_y"])
            out.append((float(r["t"]), -math.sin(th) * x + math.cos(th) * y))
    else:
        segs = [k for k in rows[0] if k.startswith("q_seg")]
        segs.sort(key=lambda k: int(k[5:]))
        ell = LENGTH / len(segs)
        for r in rows:
            phi, v = 0.0, 0.0
            for k in segs:
                phi += float(r[k])
                v += ell * math.sin(phi)
            out.append((float(r["t"]), v))
    return out


def interp(series, t):
    lo, hi = 0, len(series) - 1
    if t <= series[0][0]:
        return series[0][1]
    if t >= series[-1][0]:
        return series[-1][1]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if series[mid][0] <= t:
            lo = mid
        else:
            hi = mid
    (t0, v0), (t1, v1) = series[lo], series[hi]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def summary(dirs):
    res = []
    ref = None
    for d in dirs:
        s = deflection(d)
        tp, vp = min(s, key=lambda p: p[1])
        after = [abs(v) for t, v in s if t > 15]
        r = {"run": d, "t_end": s[-1][0], "peak": vp, "t_peak": tp,
             "after_max_abs": max(after) if after else None, "v_end": s[-1][1],
             "max_abs": max(abs(v) for t, v in s)}
        if ref is None:
            ref = s
        else:
            diff = max(abs(v - interp(ref, t)) for t, v in s if t <= ref[-1][0])
            r["max_diff"] = diff
            r["max_diff_rel_peak"] = diff / max(abs(v) for t, v in ref)
        res.append(r)
    return res


def main(argv):
    js = None
    if "--json" in argv:
        i = argv.index("--json")
        js = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    res = summary(argv)
    for r in res:
        line = "%-40s t_end %6.2f  peak %9.5f m at %5.2f s" % (r["run"], r["t_end"], r["peak"],
                                                            r["t_peak"])
        if r["after_max_abs"] is not None:
            line += "  |v| after 15 s <= %.3e m" % r["after_max_abs"]
        if "max_diff" in r:
            line += "  max|v - v_1| %.4f m (%.2f %% of the peak)" % (r["max_diff"],
                                                                   100 * r["max_diff_rel_peak"])
        print(line)
    if js:
        json.dump(res, open(js, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
