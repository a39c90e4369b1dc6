#!/usr/bin/env python3
"""Make a mesh-free copy of a URDF for the real-robot corpus (README.md).

usage: strip_urdf.py SOURCE.urdf DEST.urdf "ORIGIN AND LICENCE"

Drops every <visual> and <collision> of the links (their meshes are not in the repository)
and the top-level <material>, <gazebo> and <transmission> elements; keeps links, inertials,
joints (origins, axes, limits, dynamics, mimic, ...) as they are, numbers untouched. Adds a
comment naming the origin and a <mujoco><compiler .../></mujoco> element so that MuJoCo loads
this very file with bodies and inertias as written (mbspar ignores that element).
"""
import sys
import xml.etree.ElementTree as ET


def main():
    src, dst, origin = sys.argv[1], sys.argv[2], sys.argv[3]
    tree = ET.parse(src)
    robot = tree.getroot()
    for tag in ("gazebo", "transmission", "material", "mujoco"):
        for e in robot.findall(tag):
            robot.remove(e)
    for link in robot.findall("link"):
        for tag in ("visual", "collision"):
            for e in link.findall(tag):
                link.remove(e)
    mj = ET.SubElement(robot, "mujoco")
    ET.SubElement(mj, "compiler", {"fusestatic": "false", "inertiafromgeom": "false",
                                   "balanceinertia": "false", "discardvisual": "false"})
    ET.indent(tree, "  ")
    body = ET.tostring(robot, encoding="unicode")
    with open(dst, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n')
        f.write("<!-- mesh-free copy for mbspar's tests (mpi-tests/robots/README.md): %s -->\n"
                % origin)
        f.write(body + "\n")


if __name__ == "__main__":
    main()
