"""mbspar runs as ParaView reads and draws them (run by pvbatch, under xvfb-run without a display).

    pvbatch check_paraview.py SRCDIR PNGDIR DIR:NBODY:MINPIXELS [...]

For each run directory DIR: DIR/trajectory.xmf opened with ParaView's default reader
(OpenDataFile, what `paraview trajectory.xmf` picks: Xdmf3ReaderS) and DIR/trajectory.xdmf2 with
its default (the legacy XdmfReader) both give NBODY cells (one polyline per body), 3 NBODY
points, the cell arrays body, speed, velocity, angular_velocity, force, torque, every time step,
and at the last one the points of /bodies/points (bounds) and the body index; then
scripts/render_paraview.py draws the last frame to PNGDIR/NAME.png and the bodies alone must
cover at least MINPIXELS pixels. An empty view must count 0 pixels (the check can fail).
Exit 0 with one line per run, 1 with every problem found (os._exit: pvbatch's teardown
sometimes crashes after a script).
"""
import os
import sys

from paraview.simple import CreateView, OpenDataFile, SaveScreenshot

import h5py  # Debian python3-h5py (pvbatch runs Debian's python3)
import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from paraview import servermanager

src, pngdir = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "scripts"))
import render_paraview  # noqa: E402

ARRAYS = ["angular_velocity", "body", "force", "speed", "torque", "velocity"]
bad = []


def check_reader(path, want_reader, nbody, h5):
    r = OpenDataFile(path)
    name = r.GetXMLName() if r else None
    if name != want_reader:
        bad.append("%s: the default reader is %s, want %s" % (path, name, want_reader))
        return
    times = list(r.TimestepValues)
    t = h5["t"][()]
    if len(times) != len(t) or abs(times[-1] - t[-1]) > 1e-12:
        bad.append("%s: %d time steps up to %s, the HDF5 file %d up to %g"
                   % (path, len(times), times[-1] if times else None, len(t), t[-1]))
    r.UpdatePipeline(times[-1] if times else 0)
    info = r.GetDataInformation()
    arrays = sorted(r.CellData.keys())
    if info.GetNumberOfCells() != nbody or info.GetNumberOfPoints() != 3 * nbody:
        bad.append("%s (%s): %d cells, %d points; want %d bodies, %d points"
                   % (path, name, info.GetNumberOfCells(), info.GetNumberOfPoints(), nbody,
                      3 * nbody))
    if arrays != ARRAYS:
        bad.append("%s (%s): cell arrays %s, want %s" % (path, name, arrays, ARRAYS))
    # the data of the last step: bounds of its points, the body index
    pts = h5["bodies/points"][-1].reshape(-1, 3)
    want = [f(pts[:, k]) for k in range(3) for f in (np.min, np.max)]
    got = info.GetBounds()
    if max(abs(a - b) for a, b in zip(got, want)) > 1e-12:
        bad.append("%s (%s): bounds %s, /bodies/points[-1] spans %s" % (path, name, got, want))
    data = servermanager.Fetch(r)
    if data.IsA("vtkMultiBlockDataSet"):
        data = data.GetBlock(0)
    body = vtk_to_numpy(data.GetCellData().GetArray("body")) if "body" in arrays else None
    if body is None or not np.array_equal(body.ravel(), np.arange(nbody)):
        bad.append("%s (%s): cell array body is not 0 .. %d" % (path, name, nbody - 1))
    print("check_paraview.py: %s: %s: %d bodies, %d points, %d steps, arrays %s"
          % (path, name, info.GetNumberOfCells(), info.GetNumberOfPoints(), len(times),
             ",".join(arrays)))


# the pixel count sees an empty picture as empty
view = CreateView("RenderView")
view.ViewSize = [320, 240]
view.OrientationAxesVisibility = 0
try:
    view.UseColorPaletteForBackground = 0
except AttributeError:
    pass
view.Background = [1, 1, 1]
empty = os.path.join(pngdir, "empty.png")
SaveScreenshot(empty, view, ImageResolution=[320, 240])
n0 = render_paraview.drawn_pixels(empty)[0]
if n0 != 0:
    bad.append("an empty view counts %d drawn pixels" % n0)
render_paraview.clear()

for case in sys.argv[3:]:
    d, nbody, need = case.rsplit(":", 2)
    nbody, need = int(nbody), int(need)
    with h5py.File(os.path.join(d, "trajectory.h5"), "r") as h5:
        check_reader(os.path.join(d, "trajectory.xmf"), "Xdmf3ReaderS", nbody, h5)
        render_paraview.clear()
        check_reader(os.path.join(d, "trajectory.xdmf2"), "XdmfReader", nbody, h5)
        render_paraview.clear()
    png = os.path.join(pngdir, os.path.basename(d.rstrip("/")) + ".png")
    opts = dict(render_paraview.OPTS, size="640x480", check=str(need))
    try:
        res = render_paraview.render(os.path.join(d, "trajectory.xmf"), png, opts)
        if res["bodies"] != nbody:
            bad.append("%s: rendered %d bodies, want %d" % (png, res["bodies"], nbody))
    except RuntimeError as e:
        bad.append(str(e))
    render_paraview.clear()

for b in bad:
    print("check_paraview.py: " + b)
print("check_paraview.py: %d problem(s)" % len(bad))
sys.stdout.flush()
# pvbatch's own teardown crashes now and then (SIGSEGV after the script): leave at once
os._exit(1 if bad else 0)
