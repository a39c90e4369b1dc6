# Render one frame of an mbspar HDF5 run with ParaView (pvbatch): DIR/trajectory.xmf opened
# with ParaView's default reader (what `paraview trajectory.xmf` picks), every body's polyline
# (parent's origin, origin, centre of mass, shape end) as a tube coloured by the joint force (or
# by speed when the run has no joint wrenches), spheres at its points, the time in a corner.
#
#   pvbatch scripts/render_paraview.py XMF OUT.png [--time T|last] [--size WxH]
#                                      [--view x|y|z|iso] [--title TEXT] [--check N]
#
# --check N: read the PNG back and fail (exit 1) unless at least N pixels differ from the
# background (the picture is not empty; default 200, 0: no check). Run through scripts/render.sh, which finds pvbatch and
# a display (xvfb-run) for it.
import math
import os
import sys

from paraview import servermanager
from paraview.simple import (CellDatatoPointData, ColorBy, CreateView, Delete, ExtractSurface,
                             GetAnimationScene, GetColorTransferFunction, GetScalarBar,
                             GetSources, GetViews, Glyph, OpenDataFile, Render, SaveScreenshot,
                             SetActiveView, Show, Text, Tube)


def clear():
    # delete every view and pipeline object: the next render starts from nothing
    for v in list(GetViews()):
        Delete(v)
    srcs = list(GetSources().values())
    while srcs:  # consumers before their inputs
        for p in list(srcs):
            try:
                Delete(p)
                srcs.remove(p)
            except Exception:
                pass


def typical_segment_length(reader):
    # median length of the non-degenerate segments of the body polylines: sizes tubes and spheres
    data = servermanager.Fetch(reader)
    if data.IsA("vtkMultiBlockDataSet"):
        data = data.GetBlock(0)
    lens = []
    for c in range(data.GetNumberOfCells()):
        ids = data.GetCell(c).GetPointIds()
        for k in range(ids.GetNumberOfIds() - 1):
            a, b = data.GetPoint(ids.GetId(k)), data.GetPoint(ids.GetId(k + 1))
            d = math.sqrt(sum((a[j] - b[j]) ** 2 for j in range(3)))
            if d > 0:
                lens.append(d)
    lens.sort()
    return lens[len(lens) // 2] if lens else 0.0


def drawn_pixels(png):
    # pixels of the PNG that differ from its corner pixel (the background)
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOImage import vtkPNGReader
    r = vtkPNGReader()
    r.SetFileName(png)
    r.Update()
    a = vtk_to_numpy(r.GetOutput().GetPointData().GetScalars())[:, :3]
    return int((a != a[0]).any(axis=1).sum()), len(a), tuple(int(v) for v in a[0])


def black_bar(array, view, title):
    bar = GetScalarBar(GetColorTransferFunction(array), view)
    bar.Title = title
    bar.ComponentTitle = ""
    bar.TitleColor = [0, 0, 0]
    bar.LabelColor = [0, 0, 0]
    bar.TitleFontSize = 14
    bar.LabelFontSize = 12


OPTS = dict(time="last", size="1000x750", view="y", title="", check="200")


def render(xmf, out, opts):
    """render xmf to out (opts: OPTS); returns a dict of what was read and drawn, or raises
    RuntimeError: no reader, no bodies read, or (check > 0) fewer drawn pixels than check"""
    w, h = (int(x) for x in opts["size"].split("x"))

    reader = OpenDataFile(xmf)  # ParaView's default reader for the file (Xdmf3ReaderS for .xmf)
    if reader is None:
        raise RuntimeError("ParaView has no reader for %s" % xmf)
    times = list(reader.TimestepValues) or [0.0]
    t = times[-1] if opts["time"] == "last" else min(times, key=lambda x: abs(x - float(opts["time"])))
    scene = GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    scene.AnimationTime = t
    reader.UpdatePipeline(t)
    info = reader.GetDataInformation()
    b = info.GetBounds()
    size = max(b[1] - b[0], b[3] - b[2], b[5] - b[4], 1e-9)
    nbody = info.GetNumberOfCells()
    if nbody == 0 or info.GetNumberOfPoints() == 0:
        raise RuntimeError("%s: %s read %d bodies, %d points" %
                           (xmf, reader.GetXMLName(), nbody, info.GetNumberOfPoints()))
    has_force = "force" in reader.CellData.keys()
    seg = typical_segment_length(reader) if nbody <= 20000 else 0.0
    radius = min(max(0.15 * seg, 0.004 * size), 0.008 * size)

    view = CreateView("RenderView")
    SetActiveView(view)
    view.ViewSize = [w, h]
    try:  # ParaView >= 5.10: the palette would override the background
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    view.Background = [1, 1, 1]
    view.OrientationAxesVisibility = 1

    # bodies and joints: tubes along the polylines
    tube = Tube(Input=ExtractSurface(Input=reader))
    tube.Radius = radius
    tube.NumberofSides = 12
    td = Show(tube, view)
    ColorBy(td, ("CELLS", "force") if has_force else ("CELLS", "speed"))
    td.RescaleTransferFunctionToDataRange(True, False)
    td.SetScalarBarVisibility(view, True)
    black_bar("force" if has_force else "speed", view,
              "joint force [N]" if has_force else "speed [m/s]")
    # spheres at the points (joints, centres of mass, ends), where they do not merge into a
    # sausage (short links of a long chain) and there are not too many
    gd = None
    if nbody <= 5000 and seg > 3 * radius:
        glyph = Glyph(Input=CellDatatoPointData(Input=reader), GlyphType="Sphere")
        glyph.ScaleArray = ["POINTS", "No scale array"]
        glyph.ScaleFactor = 2.2 * radius
        glyph.GlyphMode = "All Points"
        gd = Show(glyph, view)
        ColorBy(gd, ("POINTS", "speed"))
        gd.RescaleTransferFunctionToDataRange(True, False)
        gd.SetScalarBarVisibility(view, True)
        black_bar("speed", view, "body speed [m/s]")
    label = Text(Text="%st = %.4g s, %d bodies" % (opts["title"] + "  " if opts["title"] else "", t, nbody))
    ld = Show(label, view)
    ld.Color = [0, 0, 0]
    ld.FontSize = 14
    ld.WindowLocation = "Upper Left Corner"

    # camera: looking along -y (the x-z plane), -x, -z, or from an oblique direction
    c = [(b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2]
    d = {"x": (1, 0, 0), "y": (0, -1, 0), "z": (0, 0, 1), "iso": (1, -1, 0.6)}[opts["view"]]
    view.CameraFocalPoint = c
    view.CameraPosition = [c[k] + 10 * size * d[k] for k in range(3)]
    view.CameraViewUp = [0, 1, 0] if opts["view"] == "z" else [0, 0, 1]
    view.ResetCamera()
    Render(view)
    SaveScreenshot(out, view, ImageResolution=[w, h])
    print("render_paraview.py: %s (%s): t = %.6g s (%d of %d frames), %d bodies, %d points, "
          "cell arrays %s -> %s" % (xmf, reader.GetXMLName(), t, times.index(t) + 1, len(times),
                                    nbody, info.GetNumberOfPoints(),
                                    ",".join(sorted(reader.CellData.keys())), out))

    res = dict(reader=reader.GetXMLName(), bodies=nbody, points=info.GetNumberOfPoints(),
               cell_arrays=sorted(reader.CellData.keys()), times=len(times), t=t, drawn=-1)
    need = int(opts["check"])
    if need > 0:
        # the bodies alone: the same view without the label, colour bars and axes, which are
        # drawn also when no body is
        ld.Visibility = 0
        view.OrientationAxesVisibility = 0
        for rep in (td, gd):
            if rep is not None:
                rep.SetScalarBarVisibility(view, False)
        bare = out + ".bodies.png"
        SaveScreenshot(bare, view, ImageResolution=[w, h])
        drawn, n, bg = drawn_pixels(bare)
        os.remove(bare)
        res["drawn"] = drawn
        print("render_paraview.py: the bodies cover %d of %d pixels (background %s)" % (drawn, n, bg))
        if drawn < need:
            raise RuntimeError("%s looks empty (%d < %d drawn pixels)" % (out, drawn, need))
    return res


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__ if __doc__ else "usage: render_paraview.py XMF OUT.png [options]")
    xmf, out = argv[0], argv[1]
    opts = dict(OPTS)
    rest = argv[2:]
    while rest:
        key = rest.pop(0)
        if not key.startswith("--") or not rest or key[2:] not in opts:
            sys.exit("render_paraview.py: bad option %s" % key)
        opts[key[2:]] = rest.pop(0)
    try:
        render(xmf, out, opts)
    except RuntimeError as e:
        sys.exit("render_paraview.py: %s" % e)


if __name__ == "__main__":
    main(sys.argv[1:])
