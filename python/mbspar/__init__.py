"""Read the output directory of `mbspar run` into numpy arrays (docs/visualisation.md).

    import sys; sys.path.insert(0, "python")      # or PYTHONPATH=python
    from mbspar import load_run
    r = load_run("out/chain")
    r.t, r.q, r.qd                 # (nrow,), (nrow, nq), (nrow, nv)
    r.energy["total"]              # the columns of energy.csv, (nrow,) each
    r.pos, r.quat, r.com           # (nrow, nbody, 3 | 4 | 3), world frame
    r.points                       # (nrow, nbody, 3, 3): origin, centre of mass, shape end
    r.info["model"]["bodies"]      # run.json, parsed

Both output formats: `trajectory.h5` (h5py, Debian python3-h5py; also `trajectory.h5.tmp` of a
run that is still going or was killed) or `trajectory.csv` with `bodies.csv`. HDF5 runs also
give the velocities and joint wrenches (`vel`, `omega`, `speed`, `wrench`, `force`, `torque`;
None for CSV runs, `force`/`torque`/`wrench` also None with output.joint_wrench = false).
Needs numpy only for CSV runs.
"""
import csv
import json
import os

import numpy as np

__all__ = ["Run", "load_run", "JOINT_TYPES"]

# /model/joint codes (docs/outputs.md) and the names bodies.csv uses
JOINT_TYPES = ["fixed", "revolute", "prismatic", "cylindrical", "universal", "spherical", "free"]


def _rotation(q):
    """rotation matrices (..., 3, 3) of unit quaternions (..., 4) in w, x, y, z order"""
    w, x, y, z = (q[..., k] for k in range(4))
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)
    R[..., 1, 0], R[..., 1, 1], R[..., 1, 2] = 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)
    R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)
    return R


def shape_ends(pos, quat, com, framequat, tip):
    """world positions (nrow, nbody, 3) of the bodies' shape ends: pos + R tip, R the body
    frame's orientation (the reported frame `quat` turned back by `framequat`); the centre of
    mass where the tip is 0 (the model gives no length)"""
    R = _rotation(quat) @ np.swapaxes(_rotation(framequat), -1, -2)[None]
    end = pos + np.einsum("rbij,bj->rbi", R, tip)
    known = np.any(tip != 0, axis=1)
    return np.where(known[None, :, None], end, com)


class Run:
    """one `mbspar run` output directory as arrays; see the module docstring"""

    def __init__(self):
        self.dir = self.format = self.info = None
        self.t = self.q = self.qd = None
        self.q_names, self.qd_names = [], []
        self.energy = {}
        self.body_names, self.parent, self.joint = [], None, []
        self.mass = self.com_body = self.tip = self.framequat = None
        self.pos = self.quat = self.com = self.points = None
        self.vel = self.omega = self.speed = self.wrench = self.force = self.torque = None

    @property
    def nrow(self):
        return len(self.t)

    @property
    def nbody(self):
        return len(self.body_names)

    def __repr__(self):
        return "<mbspar.Run %s (%s): %d rows, t = %g .. %g s, %d bodies, nq = %d>" % (
            self.dir, self.format, self.nrow, self.t[0] if self.nrow else 0,
            self.t[-1] if self.nrow else 0, self.nbody, self.q.shape[1])


def _rows(path):
    """the complete rows of a CSV file: a last line without its newline (a run killed while
    writing it) is left out, as are rows of the wrong length"""
    with open(path, newline="") as fh:
        text = fh.read()
    lines = text.split("\n")
    lines = lines[:-1]  # "" after the last newline, or the cut last row
    rows = list(csv.reader(lines))
    return rows[:1] + [r for r in rows[1:] if rows and len(r) == len(rows[0])]


def _energy(path):
    rows = _rows(path)
    if not rows:
        raise ValueError("%s: empty" % path)
    head, data = rows[0], rows[1:]
    a = np.array(data, dtype=float).reshape(len(data), len(head))
    return {h: a[:, k] for k, h in enumerate(head)}


def _load_h5(r, path):
    import h5py  # Debian python3-h5py

    def strings(ds):
        return [s.decode() if isinstance(s, bytes) else str(s) for s in ds[()]]

    with h5py.File(path, "r") as f:
        n = f["t"].shape[0]
        r.t, r.q, r.qd = f["t"][()], f["q"][()], f["qd"][()]
        r.q_names = strings(f["q_names"]) if "q_names" in f else []
        r.qd_names = strings(f["qd_names"]) if "qd_names" in f else []
        r.body_names = strings(f["model/names"])
        r.parent = f["model/parent"][()].astype(int)
        r.joint = [JOINT_TYPES[k] for k in f["model/joint"][()]]
        r.mass, r.com_body = f["model/mass"][()], f["model/com"][()]
        r.framequat = f["model/framequat"][()]
        r.tip = f["model/tip"][()] if "model/tip" in f else np.zeros((len(r.body_names), 3))
        # the row datasets may be one row ahead of /t in a file still being written
        get = {k: f[k][:n] for k in ("bodies/pos", "bodies/quat", "bodies/com", "bodies/vel",
                                      "bodies/omega", "bodies/speed", "bodies/points",
                                      "joints/wrench", "joints/force_norm",
                                      "joints/torque_norm") if k in f}
    r.pos, r.quat, r.com = get["bodies/pos"], get["bodies/quat"], get["bodies/com"]
    r.vel, r.omega, r.speed = get.get("bodies/vel"), get.get("bodies/omega"), get.get("bodies/speed")
    r.wrench, r.force = get.get("joints/wrench"), get.get("joints/force_norm")
    r.torque = get.get("joints/torque_norm")
    if "bodies/points" in get:
        r.points = get["bodies/points"].reshape(n, -1, 3, 3)
    else:  # files of mbspar before /bodies/points
        r.points = np.stack([r.pos, r.com, shape_ends(r.pos, r.quat, r.com, r.framequat, r.tip)],
                            axis=2)


def _load_csv(r, traj, bodies):
    with open(bodies, newline="") as fh:
        b = list(csv.DictReader(fh))
    r.body_names = [x["name"] for x in b]
    r.parent = np.array([int(x["parent"]) for x in b])
    r.joint = [x["joint"] for x in b]
    r.mass = np.array([float(x["mass"]) for x in b])

    def cols(*names):
        return np.array([[float(x[k]) for k in names] for x in b]).reshape(len(b), len(names))
    r.com_body = cols("com_x", "com_y", "com_z")
    r.framequat = cols("frame_qw", "frame_qx", "frame_qy", "frame_qz")
    r.tip = cols("tip_x", "tip_y", "tip_z") if b and "tip_x" in b[0] else np.zeros((len(b), 3))
    rows = _rows(traj)  # a killed run may leave a cut last row: complete rows only
    if not rows:
        raise ValueError("%s: empty" % traj)
    head, data = rows[0], rows[1:]
    a = np.array(data, dtype=float).reshape(len(data), len(head))
    iq = [k for k, h in enumerate(head) if h.startswith("q_")]
    iv = [k for k, h in enumerate(head) if h.startswith("qd_")]
    r.t, r.q, r.qd = a[:, 0], a[:, iq], a[:, iv]
    r.q_names, r.qd_names = [head[k] for k in iq], [head[k] for k in iv]
    first = head.index("pos_%s_x" % r.body_names[0]) if r.body_names else len(head)
    P = a[:, first:first + 10 * len(b)].reshape(len(a), len(b), 10)
    r.pos, r.quat, r.com = P[:, :, 0:3], P[:, :, 3:7], P[:, :, 7:10]
    r.points = np.stack([r.pos, r.com, shape_ends(r.pos, r.quat, r.com, r.framequat, r.tip)],
                        axis=2)


def load_run(d):
    """read the `mbspar run --out DIR` directory \\p d (see the module docstring)"""
    r = Run()
    r.dir = d
    js = os.path.join(d, "run.json")
    if os.path.exists(js):
        with open(js) as fh:
            r.info = json.load(fh)
    h5 = os.path.join(d, "trajectory.h5")
    if not os.path.exists(h5) and os.path.exists(h5 + ".tmp"):
        h5 += ".tmp"  # a run still going, or killed
    traj, bodies = os.path.join(d, "trajectory.csv"), os.path.join(d, "bodies.csv")
    if os.path.exists(h5):
        r.format = "hdf5"
        _load_h5(r, h5)
    elif os.path.exists(traj) and os.path.exists(bodies):
        r.format = "csv"
        _load_csv(r, traj, bodies)
    else:
        raise FileNotFoundError("%s: no trajectory.h5 or trajectory.csv with bodies.csv (the --out "
                                "DIR of mbspar run)" % d)
    en = os.path.join(d, "energy.csv")
    if os.path.exists(en):
        r.energy = {k: v[:len(r.t)] for k, v in _energy(en).items()}
    return r
