"""Body poses of an mbspar run against forward kinematics recomputed here, independently of the
engine (issue 11: "body positions from the output equal forward kinematics recomputed
independently").

    python3 check_poses.py DIR [TOL]

DIR holds trajectory.h5 (read with h5py: /q, /bodies/pos, quat, com and the geometry in /model)
or trajectory.csv + bodies.csv. For every output row the world pose of every body is rebuilt from
the joint coordinates q with plain rotation matrices (Rodrigues for axes, the unit-quaternion
formula for spherical and free joints), using only the joint conventions of docs/model.md, and
compared with the output: position, centre of mass and orientation (as rotation matrices, so the
quaternion sign does not matter). Exit 0 and one summary line when every difference is below TOL
(default 1e-12, relative to the model size); exit 1 naming the worst body otherwise.
"""
import csv
import math
import os
import sys

JOINTS = ["fixed", "revolute", "prismatic", "cylindrical", "universal", "spherical", "free"]
NQ = {"fixed": 0, "revolute": 1, "prismatic": 1, "cylindrical": 2, "universal": 2,
      "spherical": 4, "free": 7}


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def matvec(a, v):
    return [sum(a[i][k] * v[k] for k in range(3)) for i in range(3)]


def rot(axis, angle):
    n = math.sqrt(sum(x * x for x in axis))
    x, y, z = (a / n for a in axis)
    c, s, t = math.cos(angle), math.sin(angle), 1 - math.cos(angle)
    return [[c + t * x * x, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, c + t * y * y, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, c + t * z * z]]


def quat(q):
    n = math.sqrt(sum(x * x for x in q))
    w, x, y, z = (a / n for a in q)
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]


def kinematics(model, q):
    """World (R, p, com, R_reported) of every body from the joint coordinates q."""
    out, adr = [], 0
    for b in model:
        jt, n = b["joint"], NQ[b["joint"]]
        qb = q[adr:adr + n]
        adr += n
        if b["parent"] < 0:
            Rp, pp = [[1.0 if i == j else 0.0 for j in range(3)] for i in range(3)], [0.0] * 3
        else:
            Rp, pp = out[b["parent"]][0], out[b["parent"]][1]
        Rj, t = [[1.0 if i == j else 0.0 for j in range(3)] for i in range(3)], [0.0] * 3
        if jt == "revolute":
            Rj = rot(b["axis"], qb[0])
        elif jt == "prismatic":
            t = [a * qb[0] for a in b["axis"]]
        elif jt == "cylindrical":
            Rj, t = rot(b["axis"], qb[0]), [a * qb[1] for a in b["axis"]]
        elif jt == "universal":
            Rj = matmul(rot(b["axis"], qb[0]), rot(b["axis2"], qb[1]))
        elif jt == "spherical":
            Rj = quat(qb)
        elif jt == "free":
            t, Rj = list(qb[:3]), quat(qb[3:7])
        # the joint frame sits at origin in the parent frame with the parent's orientation
        p = [pp[i] + v for i, v in enumerate(matvec(Rp, [b["origin"][k] + t[k] for k in range(3)]))]
        R = matmul(Rp, Rj)
        com = [p[i] + v for i, v in enumerate(matvec(R, b["com"]))]
        out.append((R, p, com, matmul(R, quat(b["framequat"]))))
    if adr != len(q):
        sys.exit("check_poses.py: the model has %d coordinates, the output %d" % (adr, len(q)))
    return out


def read_h5(path):
    import h5py  # Debian python3-h5py
    f = h5py.File(path, "r")
    m = f["model"]
    model = [dict(parent=int(m["parent"][i]), joint=JOINTS[int(m["joint"][i])],
                  origin=list(m["origin"][i]), axis=list(m["axis"][i]), axis2=list(m["axis2"][i]),
                  com=list(m["com"][i]), framequat=list(m["framequat"][i]))
             for i in range(m["parent"].shape[0])]
    rows = []
    for r in range(f["t"].shape[0]):
        rows.append((float(f["t"][r]), list(f["q"][r]), f["bodies/pos"][r].tolist(),
                     f["bodies/quat"][r].tolist(), f["bodies/com"][r].tolist()))
    return model, rows


def read_csv(d):
    model = []
    with open(os.path.join(d, "bodies.csv")) as fh:
        for r in csv.DictReader(fh):
            v = lambda k: [float(r[k + s]) for s in ("_x", "_y", "_z")]
            model.append(dict(parent=int(r["parent"]), joint=r["joint"], origin=v("origin"),
                              axis=v("axis"), axis2=v("axis2"), com=v("com"),
                              framequat=[float(r["frame_q" + s]) for s in "wxyz"]))
    rows = []
    with open(os.path.join(d, "trajectory.csv")) as fh:
        rd = csv.reader(fh)
        head = next(rd)
        qcols = [i for i, h in enumerate(head) if h.startswith("q_")]
        first = next(i for i, h in enumerate(head) if h.startswith("pos_"))
        for r in rd:
            x = [float(v) for v in r]
            pose = x[first:]
            nb = len(pose) // 10
            rows.append((x[0], [x[i] for i in qcols], [pose[10 * b:10 * b + 3] for b in range(nb)],
                         [pose[10 * b + 3:10 * b + 7] for b in range(nb)],
                         [pose[10 * b + 7:10 * b + 10] for b in range(nb)]))
    return model, rows


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    tol = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-12
    h5 = os.path.join(d, "trajectory.h5")
    model, rows = read_h5(h5) if os.path.exists(h5) else read_csv(d)
    scale = max([1.0] + [abs(v) for b in model for v in b["origin"]])
    worst, where = 0.0, ""
    for t, q, pos, qt, com in rows:
        fk = kinematics(model, q)
        for b, (R, p, c, Rr) in enumerate(fk):
            if len(qt[b]) != 4 or abs(math.sqrt(sum(x * x for x in qt[b])) - 1) > 1e-12:
                sys.exit("check_poses.py: body %d at t = %g: quaternion %s is not a unit one"
                         % (b, t, qt[b]))
            Ro = quat(qt[b])
            err = max([abs(p[i] - pos[b][i]) for i in range(3)] +
                      [abs(c[i] - com[b][i]) for i in range(3)] +
                      [scale * abs(Rr[i][j] - Ro[i][j]) for i in range(3) for j in range(3)])
            if err > worst:
                worst, where = err, "body %d at t = %.6g" % (b, t)
    kind = "trajectory.h5" if os.path.exists(h5) else "trajectory.csv"
    ok = worst <= tol * scale
    print("check_poses.py: %s: %d rows x %d bodies, largest difference from recomputed forward "
          "kinematics %.3g m (%s; tolerance %.1g m)" % (kind, len(rows), len(model), worst,
                                                        where or "-", tol * scale))
    sys.exit(0 if ok else 1)


main()
