"""trajectory.xmf and trajectory.xdmf2 against trajectory.h5 with real readers: Python's XML
parser and h5py.

    python3 check_xdmf.py DIR

Checks that DIR/trajectory.xmf (XDMF 3 selections, "FILE:/DS|START:STRIDE:COUNT:DATASPACE") and,
when the run ended, DIR/trajectory.xdmf2 (XDMF 2 HyperSlab items) are well-formed XDMF
describing DIR/trajectory.h5: a temporal collection with one uniform grid per HDF5 row, each
grid's time equal to /t of its row; every HDF item names an existing dataset whose shape matches
its declared size (the final file declares the final row count); every selection (start, stride,
count) lies inside its dataset, selects the grid's own row and has the shape the item declares;
the topology is one 4-node polyline per body, (parent's origin, origin, centre of mass, shape
end) as point indices of /bodies/points (3 per body), the parent from /model/parent; the
geometry of row i is /bodies/points[i], whose points are /bodies/pos[i], /bodies/com[i] and the
shape end pos + R tip (R the body frame's orientation: /bodies/quat times the inverse of
/model/framequat; the centre of mass where /model/tip is 0); the cell attributes have one value
(or vector) per body. Exit 0 with a summary line, 1 with the first problem found.
"""
import os
import sys
import xml.etree.ElementTree as ET

import h5py  # Debian python3-h5py
import numpy as np


def fail(msg):
    sys.exit("check_xdmf.py: " + msg)


def dims(item):
    return tuple(int(x) for x in item.get("Dimensions").split())


def dataset(text, h5, h5name):
    fname, _, path = text.strip().partition(":")
    if fname != h5name:
        fail("DataItem refers to %s, not %s" % (fname, h5name))
    path = path.lstrip("/")
    if path not in h5:
        fail("dataset %s is not in %s" % (path, h5name))
    return h5[path]


def select(ds, start, stride, count, what):
    start, stride, count = (np.array(v) for v in (start, stride, count))
    if len(start) != len(ds.shape) or np.any(start < 0) or np.any(stride < 1) or \
            np.any(start + stride * (count - 1) >= ds.shape):
        fail("selection %s %s %s outside %s %s" % (start, stride, count, what, ds.shape))
    idx = tuple(slice(a, a + s * (c - 1) + 1, s) for a, s, c in zip(start, stride, count))
    return ds[idx], start


def values(item, h5, h5name):
    """the array an XDMF DataItem stands for, and the start of its selection (None: whole)"""
    if item.get("ItemType") == "HyperSlab":  # XDMF 2
        sel, src = list(item.findall("DataItem"))
        if src.get("Format") != "HDF":
            fail("a DataItem of format %s, expected HDF" % src.get("Format"))
        ds = dataset(src.text, h5, h5name)
        if tuple(ds.shape) != dims(src):
            fail("%s has shape %s, the XDMF declares %s" % (ds.name, ds.shape, dims(src)))
        n = len(ds.shape)
        if dims(sel) != (3, n):
            fail("hyperslab selection of %s has Dimensions %s" % (ds.name, dims(sel)))
        start, stride, count = np.array([int(x) for x in sel.text.split()]).reshape(3, n)
    else:
        if item.get("Format") != "HDF":
            fail("a DataItem of format %s, expected HDF" % item.get("Format"))
        text, bar, sel = item.text.strip().partition("|")
        ds = dataset(text, h5, h5name)
        if not bar:
            if tuple(ds.shape) != dims(item):
                fail("%s has shape %s, the XDMF declares %s" % (ds.name, ds.shape, dims(item)))
            return ds[()], None
        parts = [[int(x) for x in p.split()] for p in sel.split(":")]
        if len(parts) != 4:
            fail("selection %s of %s is not START:STRIDE:COUNT:DATASPACE" % (sel, ds.name))
        start, stride, count, space = parts
        if tuple(space) != tuple(ds.shape):
            fail("%s has shape %s, the XDMF declares %s" % (ds.name, ds.shape, tuple(space)))
    if tuple(count) != dims(item):
        fail("selection of %s selects %s, the item declares %s" % (ds.name, tuple(count),
                                                                 dims(item)))
    return select(ds, start, stride, count, ds.name)


def rotation(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def check(xmf, h5, h5name, dialect):
    root = ET.parse(xmf).getroot()
    if root.tag != "Xdmf":
        fail("root element %s" % root.tag)
    t = h5["t"][()]
    parent = h5["model/parent"][()]
    nbody = parent.shape[0]
    own = np.where(parent >= 0, parent, np.arange(nbody))
    want = np.stack([3 * own, 3 * np.arange(nbody), 3 * np.arange(nbody) + 1,
                     3 * np.arange(nbody) + 2], axis=1)
    if not np.array_equal(h5["model/cells"][()], want):
        fail("/model/cells is not (3 parent, 3 b, 3 b + 1, 3 b + 2) per body")
    # the drawing points against the poses: origin, centre of mass, shape end
    pts = h5["bodies/points"][()]
    tip, fq = h5["model/tip"][()], h5["model/framequat"][()]
    if not (np.array_equal(pts[:, :, 0:3], h5["bodies/pos"][()]) and
            np.array_equal(pts[:, :, 3:6], h5["bodies/com"][()])):
        fail("/bodies/points: origin or centre of mass differs from /bodies/pos, /bodies/com")
    quat = h5["bodies/quat"][()]
    err = 0.0
    for i in range(len(t)):
        for b in range(nbody):
            if not tip[b].any():
                end = pts[i, b, 3:6]
            else:  # body frame = reported frame turned back by the frame quaternion
                R = rotation(quat[i, b]) @ rotation(fq[b]).T
                end = pts[i, b, 0:3] + R @ tip[b]
            err = max(err, abs(pts[i, b, 6:9] - end).max())
    if err > 1e-12:
        fail("/bodies/points: shape ends differ from pos + R tip by %.3g m" % err)
    coll = root.find("Domain/Grid")
    if coll is None or coll.get("GridType") != "Collection" or coll.get("CollectionType") != "Temporal":
        fail("no temporal collection")
    grids = coll.findall("Grid")
    if len(grids) != len(t):
        fail("%d grids for %d rows of /t" % (len(grids), len(t)))
    nattr = 0
    for i, g in enumerate(grids):
        for item in g.iter("DataItem"):
            slab = item.get("ItemType") == "HyperSlab"
            if (dialect == 3 and slab) or (dialect == 2 and item.text and "|" in item.text):
                fail("grid %d: a %s item in the XDMF %d file" % (i, "HyperSlab" if slab else "|",
                                                                 dialect))
        if float(g.find("Time").get("Value")) != t[i]:
            fail("grid %d: time %s, /t = %.17g" % (i, g.find("Time").get("Value"), t[i]))
        topo = g.find("Topology")
        if (topo.get("TopologyType") != "Polyline" or topo.get("NodesPerElement") != "4" or
                int(topo.get("NumberOfElements")) != nbody):
            fail("grid %d: topology %s" % (i, topo.attrib))
        conn, _ = values(topo.find("DataItem"), h5, h5name)
        if not np.array_equal(conn, want):
            fail("grid %d: connectivity differs from /model/cells" % i)
        geo = g.find("Geometry")
        if geo.get("GeometryType") != "XYZ":
            fail("grid %d: geometry %s" % (i, geo.get("GeometryType")))
        pos, start = values(geo.find("DataItem"), h5, h5name)
        if start is None or start[0] != i:
            fail("grid %d: geometry does not select row %d" % (i, i))
        if not np.array_equal(pos.reshape(nbody, 9), pts[i]):
            fail("grid %d: geometry differs from /bodies/points[%d]" % (i, i))
        for a in g.findall("Attribute"):
            v, start = values(a.find("DataItem"), h5, h5name)
            ncomp = 3 if a.get("AttributeType") == "Vector" else 1
            if a.get("Center") != "Cell" or v.size != nbody * ncomp:
                fail("grid %d: attribute %s (%s) has %d values for %d bodies" %
                     (i, a.get("Name"), a.get("Center"), v.size, nbody))
            if a.get("Name") != "body" and (start is None or start[0] != i):
                fail("grid %d: attribute %s does not read row %d" % (i, a.get("Name"), i))
            if a.get("Name") == "body" and not np.array_equal(v.ravel(), np.arange(nbody)):
                fail("grid %d: attribute body is not the body index" % i)
            nattr += 1
    print("check_xdmf.py: %s: %d grids = %d rows of %s, %d bodies, %d attributes checked against "
          "the HDF5 datasets; shape ends within %.2g m" % (xmf, len(grids), len(t), h5name, nbody,
                                                          nattr, err))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    h5name = "trajectory.h5"
    h5 = h5py.File(os.path.join(d, h5name), "r")
    check(os.path.join(d, "trajectory.xmf"), h5, h5name, 3)
    legacy = os.path.join(d, "trajectory.xdmf2")
    if not os.path.exists(legacy):
        fail("%s: missing (written at the end of the run)" % legacy)
    check(legacy, h5, h5name, 2)


main()
