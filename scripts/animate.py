"""Write the gnuplot input of an animation of an mbspar run (used by scripts/animate.sh).

    python3 animate.py DIR OUT FRAMES WIDTH HEIGHT VIEW_ROT_X VIEW_ROT_Z TITLE > anim.gp

Reads the run with python/mbspar (load_run): DIR/trajectory.h5 (h5py) or DIR/trajectory.csv +
DIR/bodies.csv (speed then by finite differences between rows). Picks at most FRAMES rows
evenly, writes every body's polyline (its parent's origin, its origin, centre of mass and shape
end) to OUT.dat (one gnuplot data block per frame) and prints a gnuplot script that draws every
frame as a projected 3-D view with fixed, equal axes, the bodies coloured by speed and the time
in a label, to OUT (an animated GIF; or PNG frames OUT.dir/frame_NNNNN.png when OUT ends in
.mp4, which animate.sh joins with ffmpeg).
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from mbspar import load_run  # noqa: E402


def read(d):
    r = load_run(d)
    if r.speed is not None:
        return r, r.speed
    # CSV: speed of the body origins by finite differences between rows
    n = r.nrow
    sp = []
    for i in range(n):
        j = i - 1 if i > 0 else min(1, n - 1)
        dt = abs(r.t[i] - r.t[j]) or 1.0
        sp.append([math.dist(a, b) / dt for a, b in zip(r.pos[i], r.pos[j])])
    return r, sp


def main():
    if len(sys.argv) != 9:
        sys.exit(__doc__)
    d, out, nframes, w, h, rx, rz, title = sys.argv[1:]
    nframes = max(1, int(nframes))
    r, speed = read(d)
    t, parent, n = r.t, list(r.parent), r.nrow
    if n == 0:
        sys.exit("animate.py: %s: no output rows" % d)
    m = min(nframes, n)
    pick = sorted({round(k * (n - 1) / max(m - 1, 1)) for k in range(m)})
    lo, hi, vmax = [math.inf] * 3, [-math.inf] * 3, 0.0
    dat = out + ".dat"
    with open(dat, "w") as f:
        for i in pick:
            p, v = r.points[i], speed[i]
            vmax = max(vmax, max(v))
            for b, pb in enumerate(parent):
                # parent's origin (own on the ground), origin, centre of mass, shape end
                line = [p[pb][0] if pb >= 0 else p[b][0], p[b][0], p[b][1], p[b][2]]
                for x in line:
                    lo = [min(lo[k], x[k]) for k in range(3)]
                    hi = [max(hi[k], x[k]) for k in range(3)]
                    f.write("%.9g %.9g %.9g %.6g\n" % (x[0], x[1], x[2], v[b]))
                f.write("\n")
            f.write("\n")
    # equal axes: a cube around the whole motion
    c = [(lo[k] + hi[k]) / 2 for k in range(3)]
    half = max(max(hi[k] - lo[k] for k in range(3)) / 2 * 1.05, 1e-6)
    mp4 = out.endswith(".mp4")
    print("set encoding utf8")
    if mp4:
        print("set terminal pngcairo size %s,%s" % (w, h))
    else:
        print("set terminal gif animate delay 6 loop 0 optimize size %s,%s" % (w, h))
        print('set output "%s"' % out)
    print("set view %s,%s,1,1" % (rx, rz))
    print("set view equal xyz")
    print("set xyplane 0")
    for k, a in enumerate("xyz"):
        print("set %srange [%.9g:%.9g]" % (a, c[k] - half, c[k] + half))
        print('set %slabel "%s [m]"' % (a, a))
    print("set cbrange [0:%.6g]" % (vmax if vmax > 0 else 1))
    print('set cblabel "speed [m/s]"')
    print("set palette rgbformulae 33,13,10")
    print("set key off")
    for k, i in enumerate(pick):
        if mp4:
            print('set output "%s.dir/frame_%05d.png"' % (out, k))
        print('set title "%s   t = %.4f s"' % (title.replace('"', "'"), t[i]))
        print('splot "%s" index %d using 1:2:3:4 with lines lw 2 lc palette, '
              '"" index %d using 1:2:3:4 with points pt 7 ps 0.6 lc palette' % (dat, k, k))
    print("unset output")
    sys.stderr.write("animate.py: %d of %d rows (t = %.6g .. %.6g s), %d bodies, from %s\n"
                     % (len(pick), n, t[pick[0]], t[pick[-1]], len(parent),
                        "trajectory.h5" if r.format == "hdf5" else "trajectory.csv"))


main()
