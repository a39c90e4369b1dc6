#!/usr/bin/env python3
"""Write ROBOT.cfg for a corpus URDF (README.md): model.urdf with q0 and qd0 for every moving
joint in the FILE order of the <joint> elements, varied values well inside the limits (a fixed
seed), solver.method = schur. usage: make_cfg.py ROBOT.urdf SEED"""
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
           "# written by make_cfg.py %s %d)" % (name, seed),
           "model = {", "  urdf = {", '    file = "%s";' % name, "    q0 = ["]
    out += ["      %.12f%s # %s" % (q, "," if i + 1 < len(rows) else "", n)
            for i, (n, q, _) in enumerate(rows)]
    out += ["    ];", "    qd0 = ["]
    out += ["      %.12f%s # %s" % (qd, "," if i + 1 < len(rows) else "", n)
            for i, (n, _, qd) in enumerate(rows)]
    out += ["    ];", "  };", "};", 'solver = { method = "schur"; };', ""]
    open(urdf[:-5] + ".cfg", "w").write("\n".join(out))


if __name__ == "__main__":
    main()
