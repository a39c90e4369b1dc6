"""trajectory.xmf against trajectory.h5 with real readers: Python's XML parser and h5py.

    python3 check_xdmf.py DIR

Checks that DIR/trajectory.xmf is well-formed XDMF 2 describing DIR/trajectory.h5: a temporal
collection with one uniform grid per HDF5 row, each grid's time equal to /t of its row; every
HDF DataItem names an existing dataset whose shape matches its Dimensions (the final file
declares the final row count); every hyperslab (start, stride, count) lies inside its dataset,
selects the grid's own row and has the shape the item declares; the topology is one line cell
per body, (parent, body) or (body, body) at the ground, equal to /model/parent; the geometry of
row i is /bodies/pos[i]; the point and cell attributes have one value (or vector) per body.
Exit 0 with a summary line, 1 with the first problem found.
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


def heavy(item, h5, h5name):
    """the dataset an HDF DataItem names; its declared Dimensions must equal the shape"""
    if item.get("Format") != "HDF":
        fail("a DataItem of format %s, expected HDF" % item.get("Format"))
    fname, _, path = item.text.strip().partition(":")
    if fname != h5name:
        fail("DataItem refers to %s, not %s" % (fname, h5name))
    if path not in h5:
        fail("dataset %s is not in %s" % (path, h5name))
    ds = h5[path]
    if tuple(ds.shape) != dims(item):
        fail("%s has shape %s, the XDMF declares %s" % (path, ds.shape, dims(item)))
    return ds


def values(item, h5, h5name):
    """the array an XDMF DataItem (HDF, or a HyperSlab of one) stands for"""
    if item.get("ItemType") == "HyperSlab":
        sel, src = list(item.findall("DataItem"))
        ds = heavy(src, h5, h5name)
        n = len(ds.shape)
        if dims(sel) != (3, n):
            fail("hyperslab selection of %s has Dimensions %s" % (src.text.strip(), dims(sel)))
        start, stride, count = (np.array([int(x) for x in sel.text.split()]).reshape(3, n))
        if np.any(start < 0) or np.any(stride < 1) or np.any(start + stride * (count - 1) >= ds.shape):
            fail("hyperslab %s %s %s outside %s %s" % (start, stride, count,
                                                       src.text.strip(), ds.shape))
        if tuple(count) != dims(item):
            fail("hyperslab of %s selects %s, the item declares %s" % (src.text.strip(),
                                                                         tuple(count), dims(item)))
        idx = tuple(slice(a, a + s * (c - 1) + 1, s) for a, s, c in zip(start, stride, count))
        return ds[idx], start
    return heavy(item, h5, h5name)[()], None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    xmf = os.path.join(d, "trajectory.xmf")
    root = ET.parse(xmf).getroot()
    if root.tag != "Xdmf":
        fail("root element %s" % root.tag)
    h5name = "trajectory.h5"
    h5 = h5py.File(os.path.join(d, h5name), "r")
    t = h5["t"][()]
    nbody = h5["model/parent"].shape[0]
    parent = h5["model/parent"][()]
    lines = h5["model/lines"][()]
    want = np.stack([np.where(parent >= 0, parent, np.arange(nbody)), np.arange(nbody)], axis=1)
    if not np.array_equal(lines, want):
        fail("/model/lines is not (parent, body) per body")
    coll = root.find("Domain/Grid")
    if coll is None or coll.get("GridType") != "Collection" or coll.get("CollectionType") != "Temporal":
        fail("no temporal collection")
    grids = coll.findall("Grid")
    if len(grids) != len(t):
        fail("%d grids for %d rows of /t" % (len(grids), len(t)))
    nattr = 0
    for i, g in enumerate(grids):
        if float(g.find("Time").get("Value")) != t[i]:
            fail("grid %d: time %s, /t = %.17g" % (i, g.find("Time").get("Value"), t[i]))
        topo = g.find("Topology")
        if (topo.get("TopologyType") != "Polyline" or topo.get("NodesPerElement") != "2" or
                int(topo.get("NumberOfElements")) != nbody):
            fail("grid %d: topology %s" % (i, topo.attrib))
        conn, _ = values(topo.find("DataItem"), h5, h5name)
        if not np.array_equal(conn, lines):
            fail("grid %d: connectivity differs from /model/lines" % i)
        geo = g.find("Geometry")
        if geo.get("GeometryType") != "XYZ":
            fail("grid %d: geometry %s" % (i, geo.get("GeometryType")))
        pos, start = values(geo.find("DataItem"), h5, h5name)
        if start is None or start[0] != i:
            fail("grid %d: geometry does not select row %d" % (i, i))
        if not np.array_equal(pos.reshape(nbody, 3), h5["bodies/pos"][i]):
            fail("grid %d: geometry differs from /bodies/pos[%d]" % (i, i))
        for a in g.findall("Attribute"):
            v, start = values(a.find("DataItem"), h5, h5name)
            ncomp = 3 if a.get("AttributeType") == "Vector" else 1
            if v.size != nbody * ncomp:
                fail("grid %d: attribute %s has %d values for %d bodies" % (i, a.get("Name"),
                                                                           v.size, nbody))
            if start is not None and len(start) >= 2 and a.get("Name") not in ("body", "joint") \
                    and start[0] != i:
                fail("grid %d: attribute %s reads row %d" % (i, a.get("Name"), start[0]))
            if a.get("Name") in ("body", "joint") and not np.array_equal(v.ravel(), np.arange(nbody)):
                fail("grid %d: attribute %s is not the body index" % (i, a.get("Name")))
            nattr += 1
    print("check_xdmf.py: %s: %d grids = %d rows of %s, %d bodies, %d attributes checked against "
          "the HDF5 datasets" % (xmf, len(grids), len(t), h5name, nbody, nattr))


main()
