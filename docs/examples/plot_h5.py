"""Read an mbspar run with python/mbspar (load_run) into numpy arrays and plot it
(docs/visualisation.md).

    python3 docs/examples/plot_h5.py out/chain [out.png]

Needs Debian's python3-numpy and python3-matplotlib (scripts/setup.sh --with-viz), and
python3-h5py for HDF5 runs; with pyenv or a virtualenv first in PATH, run /usr/bin/python3.
HDF5 or CSV runs. Four panels: energies against time, the first joint coordinates, the path of
the last body's end (its shape's end, else its centre of mass) in the x-z plane, and the force
in the first joint (HDF5 runs with joint wrenches).
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from mbspar import load_run  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    run = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else run + "/plot_h5.png"
    r = load_run(run)
    # every array is a sequence of rows: row i belongs to t[i]
    t, q, names = r.t, r.q, r.q_names          # (nrow,) s, (nrow, nq) joint coordinates
    energy = np.stack([r.energy[k] for k in ("kinetic", "potential", "total", "work")], axis=1)
    end = r.points[:, :, 2]                    # (nrow, nbody, 3) m, shape ends, world frame
    body, force = r.body_names, r.force        # force: (nrow, nbody) N, or None
    print("%s: %d rows, t = %g .. %g s, %d coordinates, %d bodies"
          % (run, len(t), t[0], t[-1], q.shape[1], r.nbody))

    fig, ax = plt.subplots(2, 2, figsize=(10, 7))
    for k, label in enumerate(["kinetic", "potential", "total", "work"]):
        ax[0, 0].plot(t, energy[:, k], label=label)
    ax[0, 0].set(xlabel="t [s]", ylabel="energy [J]", title="energies")
    ax[0, 0].legend()
    for i in range(min(4, q.shape[1])):
        ax[0, 1].plot(t, q[:, i], label=names[i])
    ax[0, 1].set(xlabel="t [s]", ylabel="q", title="first joint coordinates")
    ax[0, 1].legend()
    ax[1, 0].plot(end[:, -1, 0], end[:, -1, 2])
    ax[1, 0].set(xlabel="x [m]", ylabel="z [m]", title="path of the end of " + body[-1],
                 aspect="equal")
    if force is not None:
        ax[1, 1].plot(t, force[:, 0])
        ax[1, 1].set(xlabel="t [s]", ylabel="|f| [N]", title="force in the joint of " + body[0])
    else:
        ax[1, 1].axis("off")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    print("wrote", out, "(largest |x| of the last body's end: %.4g m)" % np.abs(end[:, -1, 0]).max())


main()
