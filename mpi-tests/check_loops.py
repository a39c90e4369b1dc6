"""Closed-loop runs of mbspar against closed-form kinematics and their energy (issue 10).

    python3 check_loops.py KIND DIR [ENERGY_TOL] [CLOSURE_TOL]

KIND names the mechanism of the run in DIR (trajectory.csv, energy.csv, run.json of
`mbspar run --out DIR --json DIR/run.json`): fourbar, slider_crank, rssr, sixbar, bricard (the
configs of configs/ with their geometry). For every output row the joint coordinates are checked
against the mechanism's closed-form kinematics computed here from the crank (or first) angle alone,
independently of mbspar; the total energy of energy.csv against its first row (relative,
ENERGY_TOL, default 1e-8); the closure error of run.json against CLOSURE_TOL (m, default 1e-9).
Prints one summary line; exit 1 naming the failure otherwise. Pure Python (no numpy).
"""
import csv
import json
import math
import os
import sys


def wrap(a):
    return (a + math.pi) % (2 * math.pi) - math.pi


def fourbar(row, st):
    # crank a about y at the origin, coupler b on its tip, rocker c about y at (d, 0, 0);
    # rotation by th about +y maps x to (cos th, 0, -sin th): in (x, z) a point is r(cos, -sin)
    a, b, c, d = 0.2, 0.7, 0.5, 0.6
    th = row["q_crank"]
    bx, bz = a * math.cos(th), -a * math.sin(th)
    ux, uz = d - bx, -bz
    L = math.hypot(ux, uz)
    s = (b * b - c * c + L * L) / (2 * L)
    h = math.sqrt(max(b * b - s * s, 0.0))
    ex, ez = ux / L, uz / L
    sols = [(bx + s * ex - sg * h * ez, bz + s * ez + sg * h * ex) for sg in (1, -1)]
    if "branch" not in st:  # the assembly mode of the first row, kept along the motion
        phi0 = row["q_crank"] + row["q_coupler"]
        st["branch"] = min((0, 1), key=lambda k: abs(wrap(math.atan2(-(sols[k][1] - bz),
                                                                     sols[k][0] - bx) - phi0)))
    cx, cz = sols[st["branch"]]
    phi = math.atan2(-(cz - bz), cx - bx)
    psi = math.atan2(-cz, cx - d)
    return max(abs(wrap(row["q_coupler"] - (phi - th))), abs(wrap(row["q_rocker"] - psi)))


def slider_crank(row, st):
    # slider x = r cos th + sqrt(l^2 - r^2 sin^2 th); the rod's absolute angle phi (rotation about
    # y, direction (cos phi, 0, -sin phi)) has sin phi = -r sin th / l, cos phi > 0
    r, l = 0.1, 0.3
    th = row["q_crank"]
    x = r * math.cos(th) + math.sqrt(l * l - (r * math.sin(th)) ** 2)
    phi = math.asin(-r * math.sin(th) / l)
    return max(abs(row["q_slider"] - x), abs(wrap(row["q_rod"] - (phi - th))))


def rssr(row, st):
    # crank a about z at the origin, rocker c about x at D (its tip along y at angle 0),
    # coupler b: P cos psi + Q sin psi = K
    a, b, c, D = 0.05, 0.277308492477241, 0.2, (0.2, 0.0, 0.12)
    th = row["q_crank"]
    B = (a * math.cos(th), a * math.sin(th), 0.0)
    DB = [D[i] - B[i] for i in range(3)]
    P, Q = DB[1], DB[2]
    K = (b * b - sum(x * x for x in DB) - c * c) / (2 * c)
    R = math.hypot(P, Q)
    base, w = math.atan2(Q, P), math.acos(max(-1.0, min(1.0, K / R)))
    sols = [base + w, base - w]
    prev = st.get("psi", row["q_rocker"])
    psi = min(sols, key=lambda p: abs(wrap(p - prev)))
    st["psi"] = psi
    return abs(wrap(row["q_rocker"] - psi))


def sixbar(row, st):
    a = row["q_leg1a"]
    return max(abs(row["q_leg1b"] + 2 * a), abs(row["q_plate"] - a), abs(row["q_leg2a"] - a),
               abs(row["q_leg2b"] + 2 * a))


def bricard(row, st):
    p, s = row["q_link1"], row["q_link2"]
    return max(abs(wrap(row["q_link3"] - p)), abs(wrap(row["q_link5"] - p)),
               abs(wrap(row["q_link4"] - s)),
               abs(math.cos(p) + math.cos(s) + math.cos(p) * math.cos(s)))


KINDS = {"fourbar": fourbar, "slider_crank": slider_crank, "rssr": rssr, "sixbar": sixbar,
         "bricard": bricard}


def main():
    kind, d = sys.argv[1], sys.argv[2]
    etol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-8
    ctol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-9
    with open(os.path.join(d, "trajectory.csv")) as f:
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    with open(os.path.join(d, "energy.csv")) as f:
        en = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    rep = json.load(open(os.path.join(d, "run.json")))
    loops = rep["results"]["loops"]
    st, kin, worst_t = {}, 0.0, 0.0
    for r in rows:
        e = KINDS[kind](r, st)
        if e > kin:
            kin, worst_t = e, r["t"]
    e0 = en[0]["total"]
    scale = max(abs(e0), max(abs(r["kinetic"]) for r in en), 1e-300)
    de = max(abs(r["total"] - e0) for r in en) / scale
    clo = max(loops["closure_pos_max"], loops["closure_rot_max"])
    print("%s: %d rows to t = %g s: kinematics %.2e (worst at t = %g), energy %.2e relative, "
          "closure %.2e (m/rad), projection %s" % (kind, len(rows), rows[-1]["t"], kin, worst_t,
                                                  de, clo, loops["projection"]))
    fail = []
    if not kin <= 1e-7:
        fail.append("kinematics %.3e > 1e-7" % kin)
    if not de <= etol:
        fail.append("energy %.3e > %g" % (de, etol))
    if not clo <= ctol:
        fail.append("closure %.3e > %g" % (clo, ctol))
    if fail:
        print("FAIL: " + "; ".join(fail))
        sys.exit(1)


if __name__ == "__main__":
    main()
