"""Unit test of the Python reader python/mbspar (CTest viz_reader).

    python3 python/tests/test_mbspar.py MBSPAR CONFIGDIR TMPDIR

Runs a few short serial runs and checks load_run against them: CSV and HDF5 runs of the same
model give the same arrays; the times match energy.csv; a chain's links join (each child's
origin is its parent's shape end); a body without a length ends at its centre of mass; the
shape ends the reader computes from the poses (CSV) equal the ones mbspar wrote (HDF5), also
for a URDF robot whose reported frames differ from the body frames; a cut last CSV row is
dropped; a directory without outputs raises FileNotFoundError. Exit 0 with a summary, 1 with the
problems found.
"""
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mbspar import load_run, shape_ends  # noqa: E402

mbspar, cfg, tmp = sys.argv[1:4]
bad = []


def check(ok, what):
    if not ok:
        bad.append(what)


def run(name, config, *sets, h5=False):
    out = os.path.join(tmp, name)
    cmd = [mbspar, "run", os.path.join(cfg, config), "--out", out, "--quiet"]
    for s in sets + (("output.format=hdf5",) if h5 else ()):
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
    return out


chain = ("model.chain.n=5", "integrator.t_end=0.01", "solver.method=aba")
c, h = run("c", "chain.cfg", *chain), run("h", "chain.cfg", *chain, h5=True)
a, b = load_run(c), load_run(h)
check(a.format == "csv" and b.format == "hdf5", "formats %s, %s" % (a.format, b.format))
check(a.nrow == b.nrow == 3 and a.nbody == b.nbody == 5, "rows/bodies %d/%d, %d/%d"
      % (a.nrow, a.nbody, b.nrow, b.nbody))
check(np.array_equal(a.t, b.t) and np.array_equal(a.t, a.energy["t"]), "times differ")
check(np.array_equal(a.q, b.q) and np.array_equal(a.qd, b.qd), "q, qd: CSV and HDF5 differ")
check(a.q_names == b.q_names == ["q_link%d" % k for k in range(1, 6)], "q names %s" % a.q_names)
check(a.body_names == b.body_names and list(a.parent) == list(b.parent) == [-1, 0, 1, 2, 3],
      "bodies %s %s" % (a.body_names, list(a.parent)))
check(a.joint == b.joint == ["revolute"] * 5, "joints %s" % a.joint)
dp = abs(a.points - b.points).max()
check(dp < 1e-12, "drawing points: CSV (computed) and HDF5 (written) differ by %.3g m" % dp)
check(np.array_equal(b.points[:, :, 0], b.pos) and np.array_equal(b.points[:, :, 1], b.com),
      "points: origin, centre of mass")
join = abs(b.points[:, 1:, 0] - b.points[:, :-1, 2]).max()
check(join < 1e-12, "chain: a child's origin is %.3g m from its parent's end" % join)
check(np.allclose(np.linalg.norm(b.points[:, :, 2] - b.pos, axis=2), 0.02, atol=1e-12),
      "chain: links are not 0.02 m long to their ends")
check(b.info["model"]["bodies"] == 5 and a.info["model"]["bodies"] == 5, "run.json model.bodies")
check(b.force is not None and b.force.shape == (3, 5) and a.force is None, "joint forces")
check(b.vel.shape == (3, 5, 3) and b.speed.shape == (3, 5), "velocities")

# a body given by com and inertia only ends at its centre of mass
p = load_run(run("p", "pendulum.cfg", "integrator.t_end=0.01", h5=True))
check(np.array_equal(p.points[:, :, 2], p.com) and not p.tip.any(), "pendulum: end is not the com")

# URDF: reported frames are the link frames; the reader's ends from the poses equal mbspar's
# (5 bodies: the link tool, on a fixed joint, is merged into the telescope)
u = load_run(run("u", "arm.urdf", "integrator.t_end=0.01", h5=True))
du = abs(shape_ends(u.pos, u.quat, u.com, u.framequat, u.tip) - u.points[:, :, 2]).max()
check(du < 1e-12 and u.nbody == 5, "arm.urdf: ends differ by %.3g m (%d bodies)" % (du, u.nbody))
tipped = u.tip.copy()
tipped[:, 2] = -0.1  # a made-up tip: the turn back by framequat matters
mine = shape_ends(u.pos, u.quat, u.com, u.framequat, tipped)
R = np.array([[[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
               [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
               [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
              for w, x, y, z in u.quat[-1]])
F = np.array([[[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
               [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
               [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
              for w, x, y, z in u.framequat])
ref = u.pos[-1] + np.einsum("bij,bjk,bk->bi", R, np.swapaxes(F, 1, 2), tipped)
check(abs(mine[-1] - ref).max() < 1e-12, "shape_ends: body frame rotation")

# a killed CSV run: the cut last row is left out
k = os.path.join(tmp, "k")
shutil.copytree(c, k)
with open(os.path.join(k, "trajectory.csv"), "rb+") as fh:
    fh.truncate(os.path.getsize(os.path.join(k, "trajectory.csv")) - 20)
kr = load_run(k)
check(kr.nrow == 2 and np.array_equal(kr.q, a.q[:2]), "cut CSV: %d rows" % kr.nrow)

try:
    load_run(tmp)
    bad.append("no FileNotFoundError for a directory without outputs")
except FileNotFoundError:
    pass

for x in bad:
    print("test_mbspar.py: " + x)
print("test_mbspar.py: %d checks failed; CSV vs HDF5 points %.2g m, chain joins %.2g m, URDF ends "
      "%.2g m" % (len(bad), dp, join, du))
sys.exit(1 if bad else 0)
