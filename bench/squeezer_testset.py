#!/usr/bin/env python3
"""Andrews' squeezer in the test set's own coordinates, independent of mbspar.

The equations of Hairer & Wanner, Solving ODEs II, sec. VII.7 (the Bari Test Set for IVP
Solvers, problem "andrews"), written out here from the published formulas: the 7 x 7 mass
matrix M(q), the forces f(q, q') (driving torque, spring, velocity terms), and the closure
g(q) = 0 (point E of body 2 on E of bodies 3, 4 and 6), solved at the acceleration level,

    [ M   G^T ] [ q''    ]   [ f            ]
    [ G   0   ] [ lambda ] = [ -g_qq(q', q') ],   G = dg/dq,

by Gaussian elimination (pure Python, no numpy). Used to judge the published data
(docs/seeds.md, "Andrews' squeezer"):

  squeezer_testset.py accel        q'' and lambda at the published states t = 0 and t = 0.03
  squeezer_testset.py rk4 N        classical RK4 with N steps to t = 0.03 (index-1 form, no
                                   projection), the final angles against the published ones
                                   (N = 30000: about 25 s)

Coordinates and multipliers in the test set's order (beta, Theta, gamma, Phi, delta, Omega,
epsilon); mpi-tests/squeezer_check.py maps them to mbspar's.
"""
import os
import sys
from math import cos, sin, sqrt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi-tests"))
import squeezer_check as ref  # noqa: E402  (the published values)

M1, M2, M3, M4, M5, M6, M7 = 0.04325, 0.00365, 0.02373, 0.00706, 0.07050, 0.00706, 0.05498
I1, I2, I3, I4, I5, I6, I7 = 2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5
XA, YA, XB, YB, XC, YC = -0.06934, -0.00227, -0.03635, 0.03273, 0.014, 0.072
D, DA, E, EA, RR, RA = 28e-3, 115e-4, 2e-2, 1421e-5, 7e-3, 92e-5
SS, SA, SB, SC, SD = 35e-3, 1874e-5, 1043e-5, 18e-3, 2e-2
TA, TB, U, UA, UB = 2308e-5, 916e-5, 4e-2, 1228e-5, 449e-5
ZF, ZT, FA, MOM, C0, L0 = 2e-2, 4e-2, 1421e-5, 33e-3, 4530.0, 0.07785


def mass(q):
    _, th, _, ph, _, om, _ = q
    m = [[0.0] * 7 for _ in range(7)]
    m[0][0] = M1 * RA**2 + M2 * (RR**2 - 2 * DA * RR * cos(th) + DA**2) + I1 + I2
    m[0][1] = m[1][0] = M2 * (DA**2 - DA * RR * cos(th)) + I2
    m[1][1] = M2 * DA**2 + I2
    m[2][2] = M3 * (SA**2 + SB**2) + I3
    m[3][3] = M4 * (E - EA)**2 + I4
    m[3][4] = m[4][3] = M4 * ((E - EA)**2 + ZT * (E - EA) * sin(ph)) + I4
    m[4][4] = (M4 * (ZT**2 + 2 * ZT * (E - EA) * sin(ph) + (E - EA)**2) + M5 * (TA**2 + TB**2)
               + I4 + I5)
    m[5][5] = M6 * (ZF - FA)**2 + I6
    m[5][6] = m[6][5] = M6 * ((ZF - FA)**2 - U * (ZF - FA) * sin(om)) + I6
    m[6][6] = (M6 * ((ZF - FA)**2 - 2 * U * (ZF - FA) * sin(om) + U**2) + M7 * (UA**2 + UB**2)
               + I6 + I7)
    return m


def forces(q, v):
    _, th, ga, ph, _, om, _ = q
    bp, tp, _, pp, dp, op, ep = v
    # spring from D on body 3 to the fixed point C; its generalized force on gamma
    xd = SD * cos(ga) + SC * sin(ga) + XB
    yd = SD * sin(ga) - SC * cos(ga) + YB
    length = sqrt((xd - XC)**2 + (yd - YC)**2)
    t = -C0 * (length - L0) / length
    fx, fy = t * (xd - XC), t * (yd - YC)
    return [MOM - M2 * DA * RR * tp * (tp + 2 * bp) * sin(th),
            M2 * DA * RR * bp**2 * sin(th),
            fx * (SC * cos(ga) - SD * sin(ga)) + fy * (SD * cos(ga) + SC * sin(ga)),
            M4 * ZT * (E - EA) * dp**2 * cos(ph),
            -M4 * ZT * (E - EA) * pp * (pp + 2 * dp) * cos(ph),
            -M6 * U * (ZF - FA) * ep**2 * cos(om),
            M6 * U * (ZF - FA) * op * (op + 2 * ep) * cos(om)]


def closure(q, v):
    """g (6), G = dg/dq (6 x 7) and the velocity term g_qq(v, v) (6)."""
    be, th, ga, ph, de, om, ep = q
    bp, tp, gp, pp, dp, op, epp = v
    # E as reached through body 2, and through bodies 3, 4, 6: (point, d/dq columns, g_qq(v, v))
    e2 = (RR * cos(be) - D * cos(be + th), RR * sin(be) - D * sin(be + th))
    de2 = {0: (-RR * sin(be) + D * sin(be + th), RR * cos(be) - D * cos(be + th)),
           1: (D * sin(be + th), -D * cos(be + th))}
    a2 = (-RR * cos(be) * bp**2 + D * cos(be + th) * (bp + tp)**2,
          -RR * sin(be) * bp**2 + D * sin(be + th) * (bp + tp)**2)
    e3 = (XB + SS * sin(ga), YB - SS * cos(ga))
    de3 = {2: (SS * cos(ga), SS * sin(ga))}
    a3 = (-SS * sin(ga) * gp**2, SS * cos(ga) * gp**2)
    w = pp + dp
    e4 = (XA + ZT * cos(de) + E * sin(ph + de), YA + ZT * sin(de) - E * cos(ph + de))
    de4 = {3: (E * cos(ph + de), E * sin(ph + de)),
           4: (-ZT * sin(de) + E * cos(ph + de), ZT * cos(de) + E * sin(ph + de))}
    a4 = (-ZT * cos(de) * dp**2 - E * sin(ph + de) * w**2,
          -ZT * sin(de) * dp**2 + E * cos(ph + de) * w**2)
    w = op + epp
    e6 = (XA + U * sin(ep) + ZF * cos(om + ep), YA - U * cos(ep) + ZF * sin(om + ep))
    de6 = {5: (-ZF * sin(om + ep), ZF * cos(om + ep)),
           6: (U * cos(ep) - ZF * sin(om + ep), U * sin(ep) + ZF * cos(om + ep))}
    a6 = (-U * sin(ep) * epp**2 - ZF * cos(om + ep) * w**2,
          U * cos(ep) * epp**2 - ZF * sin(om + ep) * w**2)
    g, jac, h = [], [], []
    for ek, dek, ak in ((e3, de3, a3), (e4, de4, a4), (e6, de6, a6)):
        for c in range(2):
            g.append(e2[c] - ek[c])
            row = [0.0] * 7
            for j, col in de2.items():
                row[j] += col[c]
            for j, col in dek.items():
                row[j] -= col[c]
            jac.append(row)
            h.append(a2[c] - ak[c])
    return g, jac, h


def solve(a, b):
    """Gaussian elimination with partial pivoting (a is n x n, b n)."""
    n = len(b)
    m = [list(a[i]) + [b[i]] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for j in range(c, n + 1):
                m[r][j] -= f * m[c][j]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        x[i] = (m[i][n] - sum(m[i][j] * x[j] for j in range(i + 1, n))) / m[i][i]
    return x


def accel(q, v):
    """q'' (7) and lambda (6) with M q'' + G^T lambda = f, G q'' = -g_qq(v, v)."""
    m = mass(q)
    f = forces(q, v)
    _, jac, h = closure(q, v)
    a = [[0.0] * 13 for _ in range(13)]
    for i in range(7):
        for j in range(7):
            a[i][j] = m[i][j]
        for k in range(6):
            a[i][7 + k] = jac[k][i]
            a[7 + k][i] = jac[k][i]
    x = solve(a, f + [-x for x in h])
    return x[:7], x[7:]


def rk4(n):
    q, v = list(ref.Q0), [0.0] * 7
    h = 0.03 / n

    def rhs(q, v):
        return v, accel(q, v)[0]

    for _ in range(n):
        k1 = rhs(q, v)
        k2 = rhs([q[i] + h / 2 * k1[0][i] for i in range(7)], [v[i] + h / 2 * k1[1][i] for i in range(7)])
        k3 = rhs([q[i] + h / 2 * k2[0][i] for i in range(7)], [v[i] + h / 2 * k2[1][i] for i in range(7)])
        k4 = rhs([q[i] + h * k3[0][i] for i in range(7)], [v[i] + h * k3[1][i] for i in range(7)])
        q = [q[i] + h / 6 * (k1[0][i] + 2 * k2[0][i] + 2 * k3[0][i] + k4[0][i]) for i in range(7)]
        v = [v[i] + h / 6 * (k1[1][i] + 2 * k2[1][i] + 2 * k3[1][i] + k4[1][i]) for i in range(7)]
    return q, v


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "accel":
        for name, q, v, qdd, lam in (("t = 0", ref.Q0, [0.0] * 7, ref.QDD0, ref.LAM0),
                                     ("t = 0.03", ref.Q3, ref.QD3, ref.QDD3, ref.LAM3)):
            a, lam_ = accel(q, v)
            g, jac, _ = closure(q, v)
            gv = [sum(jac[k][j] * v[j] for j in range(7)) for k in range(6)]
            print("%s: |g| %.1e m, |G q'| %.1e m/s at the published state" %
                  (name, max(abs(x) for x in g), max(abs(x) for x in gv)))
            for i in range(7):
                print("  q''[%d] %.17g published %.17g" % (i, a[i], qdd[i]))
            for k in range(6):
                print("  lambda%d %.17g published %.17g" % (k + 1, lam_[k], lam[k]))
        return 0
    if mode == "rk4" and len(sys.argv) == 3:
        q, v = rk4(int(sys.argv[2]))
        g, jac, _ = closure(q, v)
        print("q(0.03) " + " ".join("%.17g" % x for x in q))
        print("q - published " + " ".join("%.2e" % (a - b) for a, b in zip(q, ref.Q3)))
        print("closure |g| %.1e m" % max(abs(x) for x in g))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
