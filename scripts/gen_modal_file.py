#!/usr/bin/python3
"""Write an mbspar modal file (docs/flexible.md 14) by independent means: a uniform cantilever of
N two-node Euler-Bernoulli elements, its modal coordinates the free nodal dofs themselves (no
reduction: Phi is the identity on nodes 1..N), M and K assembled from the textbook element
matrices (Przemieniecki, Theory of Matrix Structural Analysis, 1968: consistent mass), written
out here rather than taken from mbspar. Prints the lowest natural frequencies of K w = w^2 M w
(numpy) and the Euler-Bernoulli closed forms as JSON on standard output.

usage: gen_modal_file.py OUT.h5 [--elements N] [--length L] [--E E] [--rho RHO] [--area A]
                         [--Iy IY] [--Iz IZ] [--G G] [--J J]
Needs Debian's python3-h5py and python3-numpy (/usr/bin/python3).
"""
import argparse
import json

import h5py
import numpy as np


def element(L, E, G, rho, A, Iy, Iz, J):
    """12 x 12 stiffness and consistent mass of one element, dofs [u v w thx thy thz] per node,
    thz = dv/dx and thy = -dw/dx (mbspar's convention)."""
    K = np.zeros((12, 12))
    M = np.zeros((12, 12))
    ax = np.array([[1.0, -1.0], [-1.0, 1.0]])
    lm = np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0
    for d, (k, m) in ((0, (E * A / L, rho * A * L)), (3, (G * J / L, rho * (Iy + Iz) * L))):
        idx = [d, 6 + d]
        K[np.ix_(idx, idx)] += k * ax
        M[np.ix_(idx, idx)] += m * lm
    kb = np.array([[12, 6 * L, -12, 6 * L], [6 * L, 4 * L * L, -6 * L, 2 * L * L],
                   [-12, -6 * L, 12, -6 * L], [6 * L, 2 * L * L, -6 * L, 4 * L * L]]) / L**3
    mb = rho * A * L / 420.0 * np.array(
        [[156, 22 * L, 54, -13 * L], [22 * L, 4 * L * L, 13 * L, -3 * L * L],
         [54, 13 * L, 156, -22 * L], [-13 * L, -3 * L * L, -22 * L, 4 * L * L]])
    # x-y plane: (v, thz); x-z plane: (w, -thy)
    for idx, EI, sgn in (([1, 5, 7, 11], E * Iz, 1.0), ([2, 4, 8, 10], E * Iy, -1.0)):
        S = np.diag([1.0, sgn, 1.0, sgn])
        K[np.ix_(idx, idx)] += EI * S @ kb @ S
        M[np.ix_(idx, idx)] += S @ mb @ S
    return K, M


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--elements", type=int, default=8)
    for k, v in (("length", 1.0), ("E", 2.1e11), ("rho", 7850.0), ("area", 1e-4),
                 ("Iy", 8.3333e-10), ("Iz", 8.3333e-10), ("G", 0.0), ("J", 0.0)):
        ap.add_argument("--" + k, type=float, default=v)
    a = ap.parse_args()
    n, L = a.elements, a.length
    G = a.G or a.E / 2.6
    J = a.J or a.Iy + a.Iz
    h = L / n
    nd = 6 * (n + 1)
    Kf = np.zeros((nd, nd))
    Mf = np.zeros((nd, nd))
    ke, me = element(h, a.E, G, a.rho, a.area, a.Iy, a.Iz, J)
    for e in range(n):
        s = slice(6 * e, 6 * e + 12)
        Kf[s, s] += ke
        Mf[s, s] += me
    free = np.arange(6, nd)  # the root (node 0) clamped
    K = Kf[np.ix_(free, free)]
    M = Mf[np.ix_(free, free)]
    m = len(free)
    Phi = np.zeros((nd, m))
    Phi[6:, :] = np.eye(m)
    # Sbar: the integral of rho A Phi_t, the rigid translations against the consistent mass
    Sbar = np.zeros((3, m))
    for k in range(3):
        r = np.zeros(nd)
        r[k::6] = 1.0
        Sbar[k] = (Mf @ r)[free]
    mass = a.rho * a.area * L
    with h5py.File(a.out, "w") as f:
        f.attrs["mbspar_modal_version"] = np.int64(1)
        f["x"] = np.linspace(0.0, L, n + 1)
        f["M"] = 0.5 * (M + M.T)
        f["K"] = 0.5 * (K + K.T)
        f["Phi"] = Phi
        f["rhoA"] = np.full(n, a.rho * a.area)
        f["rhoJ"] = np.full(n, a.rho * (a.Iy + a.Iz))
        f["Sbar"] = Sbar
        f["omega_fixed"] = np.zeros(0)  # no fixed-interface modes: every coordinate undamped
        f["mass"] = mass
        f["rigid/mass"] = mass
        f["rigid/com"] = np.array([L / 2, 0.0, 0.0])
        f["rigid/inertia"] = np.array([a.rho * L * (a.Iy + a.Iz), mass * L * L / 12,
                                       mass * L * L / 12, 0.0, 0.0, 0.0])
        names = ["tip"] + (["mid"] if n % 2 == 0 else [])
        f["node_names"] = np.array(names, dtype="S64")
        f["node_fe"] = np.array([n] + ([n // 2] if n % 2 == 0 else []), dtype=np.int32)
    w2 = np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real)
    c = np.sqrt(a.E * a.Iz / (a.rho * a.area * L**4))
    print(json.dumps({"omega": [float(np.sqrt(max(v, 0.0))) for v in w2[:10]],
                      "omega_eb_bending": [1.87510407**2 * c, 4.69409113**2 * c],
                      "omega_axial": np.pi / 2 * np.sqrt(a.E / a.rho) / L}))


if __name__ == "__main__":
    main()
