#!/usr/bin/python3
"""Write mbspar modal files in the lumped form (docs/flexible.md 14, version 2) by independent
means (numpy), for the tests of mpi-tests/flex_lumped.sh.

usage: gen_lumped_file.py from-line IN.h5 OUT.h5
         the line-form body of IN.h5 (version 1) as lumped points: its 4 Gauss points per element
         (positions, masses rhoA w, rotary inertia diag(rhoJ w, 0, 0), the shapes interpolated as
         docs/flexible.md 5.2 says: linear axial and torsion, cubic Hermite bending) and its FE
         nodes as massless points (so the named nodes stay points); M, K, Sbar, the modes, the
         rigid properties and the node names copied
       gen_lumped_file.py plate OUT.h5
         a 3-D body with closed-form frequencies: a rigid plate (mass, a full rotary inertia
         tensor) at [0.3, 0.2, 0.1] on translational and rotational springs to the body frame and
         three point masses off the axes, each on its own isotropic spring; the modal
         coordinates are the points' own displacements (and the plate's rotation), so
         K w = w^2 M w has w = sqrt(k/m) per translation and sqrt(k_rot/lambda_i(J)) per
         principal axis of J. Prints them (JSON, ascending, rad/s) on standard output.
Needs Debian's python3-h5py and python3-numpy (/usr/bin/python3).
"""
import json
import sys

import h5py
import numpy as np

# the 4-point Gauss-Legendre rule on [0, 1] (abscissae (1 -+ sqrt((3 +- 2 sqrt(6/5)) / 7)) / 2)
_s = [np.sqrt((3 - 2 * np.sqrt(6 / 5)) / 7), np.sqrt((3 + 2 * np.sqrt(6 / 5)) / 7)]
_w = [(18 + np.sqrt(30)) / 36, (18 - np.sqrt(30)) / 36]
GX = [(1 - _s[1]) / 2, (1 - _s[0]) / 2, (1 + _s[0]) / 2, (1 + _s[1]) / 2]
GW = [_w[1] / 2, _w[0] / 2, _w[0] / 2, _w[1] / 2]


def write(out, pos, mass, inertia, Phi, M, K, omega_fixed, nodes):
    """The lumped file: inertia (n, 6) [Jxx Jyy Jzz Jxy Jxz Jyz] or None; nodes [(name, point)]."""
    pos = np.asarray(pos, float)
    mass = np.asarray(mass, float)
    tot = mass.sum()
    com = mass @ pos / tot
    Ir = np.zeros((3, 3))
    for p, mp in zip(pos, mass):
        r = p - com
        Ir += mp * (r @ r * np.eye(3) - np.outer(r, r))
    if inertia is not None:
        for J in np.asarray(inertia, float):
            Ir += np.array([[J[0], J[3], J[4]], [J[3], J[1], J[5]], [J[4], J[5], J[2]]])
    m = Phi.shape[1]
    Sbar = np.zeros((3, m))
    for i in range(len(mass)):
        Sbar += mass[i] * Phi[6 * i:6 * i + 3]
    with h5py.File(out, "w") as f:
        f.attrs["mbspar_modal_version"] = np.int64(2)
        f["points/pos"] = pos
        f["points/mass"] = mass
        if inertia is not None:
            f["points/inertia"] = np.asarray(inertia, float)
        f["Phi"] = Phi
        f["M"] = 0.5 * (M + M.T)
        f["K"] = 0.5 * (K + K.T)
        f["Sbar"] = Sbar
        f["omega_fixed"] = np.asarray(omega_fixed, float)
        f["mass"] = tot
        f["rigid/mass"] = tot
        f["rigid/com"] = com
        f["rigid/inertia"] = np.array([Ir[0, 0], Ir[1, 1], Ir[2, 2], Ir[0, 1], Ir[0, 2], Ir[1, 2]])
        if nodes:
            f["node_names"] = np.array([n for n, _ in nodes], dtype="S64")
            f["node_fe"] = np.array([p for _, p in nodes], dtype=np.int32)


def from_line(src, out):
    with h5py.File(src, "r") as f:
        x = f["x"][()]
        rhoA = f["rhoA"][()]
        rhoJ = f["rhoJ"][()]
        Phi = f["Phi"][()]
        M, K, om = f["M"][()], f["K"][()], f["omega_fixed"][()]
        names = [n.decode() for n in f["node_names"][()]] if "node_names" in f else []
        fes = list(f["node_fe"][()]) if "node_fe" in f else []
    nfe, m = len(x), Phi.shape[1]
    pos, mass, inertia, rows = [], [], [], []
    for e in range(nfe - 1):
        h = x[e + 1] - x[e]
        Pi, Pj = Phi[6 * e:6 * e + 6], Phi[6 * e + 6:6 * e + 12]
        for xi, wg in zip(GX, GW):
            w = wg * h
            N1, N2 = 1 - 3 * xi**2 + 2 * xi**3, (xi - 2 * xi**2 + xi**3) * h
            N3, N4 = 3 * xi**2 - 2 * xi**3, (-xi**2 + xi**3) * h
            D1, D2 = (-6 * xi + 6 * xi**2) / h, 1 - 4 * xi + 3 * xi**2
            D3, D4 = (6 * xi - 6 * xi**2) / h, -2 * xi + 3 * xi**2
            r = np.zeros((6, m))
            r[0] = (1 - xi) * Pi[0] + xi * Pj[0]
            r[1] = N1 * Pi[1] + N2 * Pi[5] + N3 * Pj[1] + N4 * Pj[5]
            r[2] = N1 * Pi[2] - N2 * Pi[4] + N3 * Pj[2] - N4 * Pj[4]
            r[3] = (1 - xi) * Pi[3] + xi * Pj[3]
            r[4] = -(D1 * Pi[2] - D2 * Pi[4] + D3 * Pj[2] - D4 * Pj[4])  # thy = -w'
            r[5] = D1 * Pi[1] + D2 * Pi[5] + D3 * Pj[1] + D4 * Pj[5]  # thz = v'
            pos.append([x[e] + xi * h, 0.0, 0.0])
            mass.append(rhoA[e] * w)
            inertia.append([rhoJ[e] * w, 0, 0, 0, 0, 0])
            rows.append(r)
    base = len(pos)
    for i in range(nfe):  # the FE nodes, massless
        pos.append([x[i], 0.0, 0.0])
        mass.append(0.0)
        inertia.append([0.0] * 6)
        rows.append(Phi[6 * i:6 * i + 6])
    write(out, pos, mass, inertia, np.vstack(rows), M, K, om,
          [(n, base + int(p)) for n, p in zip(names, fes)])


def plate(out):
    mp, kt, kr = 2.0, 800.0, 50.0
    c, s = np.cos(0.4), np.sin(0.4)
    Q = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ np.array([[1, 0, 0], [0, c, s], [0, -s, c]])
    Jp = Q @ np.diag([0.05, 0.08, 0.11]) @ Q.T
    pts = [[0.3, 0.2, 0.1], [1.0, 0.0, 0.0], [-0.5, 0.866, 0.2], [-0.5, -0.866, -0.3]]
    masses = [mp, 0.5, 0.7, 0.9]
    ks = [300.0, 400.0, 500.0]
    m = 6 + 9
    Phi = np.zeros((6 * len(pts), m))
    Phi[0:6, 0:6] = np.eye(6)  # the plate: translation and rotation
    for i in range(3):
        Phi[6 * (i + 1):6 * (i + 1) + 3, 6 + 3 * i:9 + 3 * i] = np.eye(3)
    M = np.zeros((m, m))
    M[0:3, 0:3] = mp * np.eye(3)
    M[3:6, 3:6] = Jp
    Kd = [kt] * 3 + [kr] * 3
    for i in range(3):
        M[6 + 3 * i:9 + 3 * i, 6 + 3 * i:9 + 3 * i] = masses[i + 1] * np.eye(3)
        Kd += [ks[i]] * 3
    K = np.diag(Kd)
    inertia = [[Jp[0, 0], Jp[1, 1], Jp[2, 2], Jp[0, 1], Jp[0, 2], Jp[1, 2]]] + [[0.0] * 6] * 3
    write(out, pts, masses, inertia, Phi, M, K, [], [])
    om = [np.sqrt(kt / mp)] * 3 + [np.sqrt(kr / j) for j in (0.05, 0.08, 0.11)]
    for i in range(3):
        om += [np.sqrt(ks[i] / masses[i + 1])] * 3
    print(json.dumps({"omega": sorted(float(v) for v in om)}))


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "from-line":
        from_line(a[1], a[2])
    elif len(a) == 2 and a[0] == "plate":
        plate(a[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
