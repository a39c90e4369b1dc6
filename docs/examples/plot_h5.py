"""Read an mbspar HDF5 run with h5py into numpy arrays and plot it (docs/outputs.md).

    python3 docs/examples/plot_h5.py out/chain [out.png]

Needs Debian's python3-h5py, python3-numpy and python3-matplotlib (scripts/setup.sh --with-viz);
with pyenv or a virtualenv first in PATH, run /usr/bin/python3. The run must have been written
with output.format = "hdf5". Four panels: energies against time, the first joint coordinates,
the path of the last body in the x-z plane, and the force in the first joint.
"""
import sys

import h5py
import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    run = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else run + "/plot_h5.png"
    with h5py.File(run + "/trajectory.h5", "r") as f:
        # every dataset is an array of rows: row i belongs to t[i]
        t = f["t"][:]                          # (nrow,) s
        q = f["q"][:]                          # (nrow, nq) joint coordinates
        names = [s.decode() for s in f["q_names"][:]]
        energy = f["energy"][:]                # (nrow, 4) kinetic, potential, total, work
        pos = f["bodies/pos"][:]               # (nrow, nbody, 3) m, world frame
        body = [s.decode() for s in f["model/names"][:]]
        force = f["joints/force_norm"][:] if "joints" in f else None  # (nrow, nbody) N
    print("%s: %d rows, t = %g .. %g s, %d coordinates, %d bodies"
          % (run, len(t), t[0], t[-1], q.shape[1], pos.shape[1]))

    fig, ax = plt.subplots(2, 2, figsize=(10, 7))
    for k, label in enumerate(["kinetic", "potential", "total", "work"]):
        ax[0, 0].plot(t, energy[:, k], label=label)
    ax[0, 0].set(xlabel="t [s]", ylabel="energy [J]", title="energies")
    ax[0, 0].legend()
    for i in range(min(4, q.shape[1])):
        ax[0, 1].plot(t, q[:, i], label=names[i])
    ax[0, 1].set(xlabel="t [s]", ylabel="q", title="first joint coordinates")
    ax[0, 1].legend()
    ax[1, 0].plot(pos[:, -1, 0], pos[:, -1, 2])
    ax[1, 0].set(xlabel="x [m]", ylabel="z [m]", title="path of " + body[-1], aspect="equal")
    if force is not None:
        ax[1, 1].plot(t, force[:, 0])
        ax[1, 1].set(xlabel="t [s]", ylabel="|f| [N]", title="force in the joint of " + body[0])
    else:
        ax[1, 1].axis("off")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    print("wrote", out, "(largest |x| of the last body: %.4g m)" % np.abs(pos[:, -1, 0]).max())


main()
