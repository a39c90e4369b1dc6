#!/usr/bin/env python3
"""Write ROBOT.cfg for a corpus URDF (README.md): model.urdf with q0 and qd0 for every moving
joint in the FILE order of the <joint> elements, varied values well inside the limits (a fixed
seed), solver.method = schur. With a third argument `forces`: also model.urdf.joints on the first
three moving joints (a constant force; a spring with its rest position; a damper replacing the
file's) and model.urdf.torques, ROBOT_tau.csv, driving the fourth (docs/urdf.md "Joint forces").
usage: make_cfg.py ROBOT.urdf SEED [forces]"""
import random
import sys
import xml.etree.ElementTree as ET


def main():
    urdf, seed = sys.argv[1], int(sys.argv[2])
    rng = random.Random(seed)
    robot = ET.parse(urdf).getroot()
    rows = []
    for j in robot.findall("joint"):
        t = j.get("type")
        if t == "fixed":
            continue
        if t not in ("revolute", "continuous", "prismatic"):
            sys.exit("%s: joint %s is %s: not in this corpus" % (urdf, j.get("name"), t))
        lo, hi = (-2.0, 2.0) if t != "prismatic" else (-0.1, 0.1)
        lim = j.find("limit")
        if lim is not None and t != "continuous" and lim.get("lower") and lim.get("upper"):
            lo, hi = float(lim.get("lower")), float(lim.get("upper"))
        q = lo + (hi - lo) * rng.uniform(0.15, 0.85)
        qd = rng.uniform(-1.5, 1.5) * (1 if t != "prismatic" else 0.1)
        rows.append((j.get("name"), q, qd))
    name = urdf.rsplit("/", 1)[-1]
    out = ["# %s with q0 / qd0 in the FILE order of its joints (mpi-tests/robots/README.md;" % name,
           "# written by make_cfg.py %s)" % " ".join([name] + sys.argv[2:]),
           "model = {", "  urdf = {", '    file = "%s";' % name, "    q0 = ["]
    out += ["      %.12f%s # %s" % (q, "," if i + 1 < len(rows) else "", n)
            for i, (n, q, _) in enumerate(rows)]
    out += ["    ];", "    qd0 = ["]
    out += ["      %.12f%s # %s" % (qd, "," if i + 1 < len(rows) else "", n)
            for i, (n, _, qd) in enumerate(rows)]
    out += ["    ];"]
    if len(sys.argv) > 3 and sys.argv[3] == "forces":
        n = [r[0] for r in rows]
        out += ["    joints = (",
                '      { name = "%s"; force = %.6f; },' % (n[0], rng.uniform(-5, 5)),
                '      { name = "%s"; stiffness = %.6f; springref = %.6f; },'
                % (n[1], rng.uniform(5, 50), rng.uniform(-0.5, 0.5)),
                '      { name = "%s"; damping = %.6f; }' % (n[2], rng.uniform(0.1, 2)),
                "    );",
                '    torques = "%s_tau.csv";' % name[:-5]]
        a, b = rng.uniform(-3, 3), rng.uniform(-3, 3)
        open(urdf[:-5] + "_tau.csv", "w").write(
            "# %s driven at t = 0 by %.6f (accel reads the first row)\nt,%s\n0,%.6f\n1,%.6f\n"
            % (n[3], a, n[3], a, b))
    out += ["  };", "};", 'solver = { method = "schur"; };', ""]
    open(urdf[:-5] + ".cfg", "w").write("\n".join(out))


if __name__ == "__main__":
    main()
