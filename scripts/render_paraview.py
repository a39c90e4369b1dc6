# Render one frame of an mbspar HDF5 run with ParaView (pvbatch): the bodies of
# DIR/trajectory.xmf as spheres coloured by speed, the joints as tubes coloured by the joint
# force (or by speed when the run has no joint wrenches), the time in a corner.
#
#   pvbatch scripts/render_paraview.py XMF OUT.png [--time T|last] [--size WxH]
#                                      [--view x|y|z|iso] [--title TEXT] [--check N]
#
# --check N: read the PNG back and fail (exit 1) unless at least N pixels differ from the
# background (the picture is not empty). Run through scripts/render.sh, which finds pvbatch and
# a display (xvfb-run) for it.
import sys

import math

from paraview import servermanager
from paraview.simple import (ColorBy, ExtractSurface, GetActiveViewOrCreate, GetAnimationScene,
                             GetColorTransferFunction, GetScalarBar, Glyph, Render,
                             SaveScreenshot, Show, Text, Tube, XDMFReader)


def typical_joint_length(reader):
    # median length of the line cells (parent, body): sizes the tubes and spheres
    data = servermanager.Fetch(reader)
    if data.IsA("vtkMultiBlockDataSet"):
        data = data.GetBlock(0)
    lens = []
    for c in range(data.GetNumberOfCells()):
        ids = data.GetCell(c).GetPointIds()
        if ids.GetNumberOfIds() == 2 and ids.GetId(0) != ids.GetId(1):
            a, b = data.GetPoint(ids.GetId(0)), data.GetPoint(ids.GetId(1))
            lens.append(math.sqrt(sum((a[k] - b[k]) ** 2 for k in range(3))))
    lens.sort()
    return lens[len(lens) // 2] if lens else 0.0


def black_bar(array, view, title):
    bar = GetScalarBar(GetColorTransferFunction(array), view)
    bar.Title = title
    bar.ComponentTitle = ""
    bar.TitleColor = [0, 0, 0]
    bar.LabelColor = [0, 0, 0]
    bar.TitleFontSize = 14
    bar.LabelFontSize = 12


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__ if __doc__ else "usage: render_paraview.py XMF OUT.png [options]")
    xmf, out = argv[0], argv[1]
    opts = dict(time="last", size="1000x750", view="y", title="", check="0")
    rest = argv[2:]
    while rest:
        key = rest.pop(0)
        if not key.startswith("--") or not rest or key[2:] not in opts:
            sys.exit("render_paraview.py: bad option %s" % key)
        opts[key[2:]] = rest.pop(0)
    w, h = (int(x) for x in opts["size"].split("x"))

    reader = XDMFReader(FileNames=[xmf])
    times = list(reader.TimestepValues) or [0.0]
    t = times[-1] if opts["time"] == "last" else min(times, key=lambda x: abs(x - float(opts["time"])))
    scene = GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    scene.AnimationTime = t
    reader.UpdatePipeline(t)
    info = reader.GetDataInformation()
    b = info.GetBounds()
    size = max(b[1] - b[0], b[3] - b[2], b[5] - b[4], 1e-9)
    nbody = info.GetNumberOfPoints()
    has_force = "force" in reader.CellData.keys()
    seg = typical_joint_length(reader) if nbody <= 20000 else 0.0
    radius = min(max(0.15 * seg, 0.004 * size), 0.008 * size)

    view = GetActiveViewOrCreate("RenderView")
    view.ViewSize = [w, h]
    try:  # ParaView >= 5.10: the palette would override the background
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    view.Background = [1, 1, 1]
    view.OrientationAxesVisibility = 1

    # joints: tubes along the line cells (parent, body)
    tube = Tube(Input=ExtractSurface(Input=reader))
    tube.Radius = radius
    tube.NumberofSides = 12
    td = Show(tube, view)
    ColorBy(td, ("CELLS", "force") if has_force else ("POINTS", "speed"))
    td.RescaleTransferFunctionToDataRange(True, False)
    td.SetScalarBarVisibility(view, True)
    black_bar("force" if has_force else "speed", view,
              "joint force [N]" if has_force else "speed [m/s]")
    # bodies: spheres at the body frame origins, where they do not merge into a sausage (short
    # links of a long chain) and there are not too many
    if nbody <= 5000 and seg > 3 * radius:
        glyph = Glyph(Input=reader, GlyphType="Sphere")
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
    print("render_paraview.py: %s: t = %.6g s (%d of %d frames), %d bodies -> %s"
          % (xmf, t, times.index(t) + 1, len(times), nbody, out))

    need = int(opts["check"])
    if need > 0:
        from vtkmodules.vtkIOImage import vtkPNGReader
        png = vtkPNGReader()
        png.SetFileName(out)
        png.Update()
        img = png.GetOutput()
        arr = img.GetPointData().GetScalars()
        nc = arr.GetNumberOfComponents()
        bg = tuple(arr.GetComponent(0, k) for k in range(min(3, nc)))
        n = arr.GetNumberOfTuples()
        drawn = sum(1 for i in range(n) if tuple(arr.GetComponent(i, k) for k in range(min(3, nc))) != bg)
        print("render_paraview.py: %d of %d pixels differ from the background %s" % (drawn, n, bg))
        if drawn < need:
            sys.exit("render_paraview.py: %s looks empty (%d < %d drawn pixels)" % (out, drawn, need))


main(sys.argv[1:])
