#!/bin/sh
# The outputs of a flexible run (issue 34 item 3; docs/flexible.md 6, docs/outputs.md "Flexible
# runs"): configs/flex_pendulum.cfg (a beam of 10 elements with a bob on its tip node), rk4
# dt = 1e-4 s to 0.01 s, every 10th step, once with output.format = csv and once with hdf5:
#  - energy.csv is the same bytes in both formats;
#  - trajectory.h5's /t, /q, /qd, /eta, /etad, /nodes/pos, /bodies/pos, /bodies/quat and the
#    flexible body's points of /points equal trajectory.csv's columns bit for bit;
#  - the deformed shape: the beam's last FE node of /points (its tip) equals the named tip node
#    (computed by the oracle's node frame) to 1e-12 m in every row, consecutive FE nodes stay
#    0.1 m apart (the element length, to 1e-6: the beam bends, it does not stretch), the bob's
#    drawing segment starts at the tip, and the beam is bent: its interior nodes leave the
#    floating frame's x axis (by more than 1e-9 m);
#  - trajectory.xmf names only datasets trajectory.h5 has, with their shapes (h5ls -r);
#  - --restart of an HDF5 run halfway (0.005 s) gives the same /t and /points as one run;
#  - ParaView (pvpython, when installed: else that part is skipped) opens trajectory.xmf with its
#    default reader: every row, and the last row's points are /points' last row.
# usage: flex_h5.sh MBSPAR PYTHON3 CONFIGS
mbspar=$1 py=$2 configs=$3
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_h5
command -v h5dump >/dev/null 2>&1 || {
  echo "h5dump not found (Debian: hdf5-tools): skipped"
  exit 77
}
cfg="$configs/flex_pendulum.cfg"
set -- --quiet --set integrator.method=rk4 --set integrator.dt=1e-4 --set output.every=10
run 0 "$mbspar" run "$cfg" "$@" --set integrator.t_end=0.01 --out "$tmp/csv"
run 0 "$mbspar" run "$cfg" "$@" --set integrator.t_end=0.01 --out "$tmp/h5" --set output.format=hdf5
run 0 "$mbspar" run "$cfg" "$@" --set integrator.t_end=0.005 --out "$tmp/half" --set output.format=hdf5
run 0 "$mbspar" run "$cfg" "$@" --set integrator.t_end=0.01 --set output.format=hdf5 \
  --restart "$tmp/half/checkpoint.bin"
{ [ -f "$tmp/h5/trajectory.h5" ] && [ -f "$tmp/h5/trajectory.xmf" ]; } || bad "no trajectory.h5/.xmf"
[ -e "$tmp/h5/trajectory.h5.tmp" ] && bad "trajectory.h5.tmp left behind"
[ -e "$tmp/h5/trajectory.csv" ] && bad "trajectory.csv written with format hdf5"
cmp -s "$tmp/csv/energy.csv" "$tmp/h5/energy.csv" || bad "energy.csv differs between formats"
# every dataset as text: DIR/DS.txt, one value per line (%.17g)
for d in h5 half; do
  for ds in t q qd eta etad nodes/pos bodies/pos bodies/quat points model/point_offset \
    model/segments; do
    f="$tmp/$d/$(echo "$ds" | tr / _).txt"
    h5dump -m "%.17g" -y -w 0 -d "/$ds" -o "$f.raw" "$tmp/$d/trajectory.h5" >/dev/null ||
      bad "h5dump /$ds of $d"
    tr ',' '\n' <"$f.raw" | tr -d ' \t' | grep -v '^$' >"$f"
  done
  h5ls -r "$tmp/$d/trajectory.h5" >"$tmp/$d/header.txt" || bad "h5ls -r of $d"
done
r=$("$py" - "$tmp" <<'PY'
import csv, math, re, sys, xml.etree.ElementTree as ET
t = sys.argv[1]
def ds(d, name):
    return [float(v) for v in open("%s/%s/%s.txt" % (t, d, name.replace("/", "_")))]
rows = list(csv.reader(open(t + "/csv/trajectory.csv")))
hdr, rows = rows[0], rows[1:]
col = {n: i for i, n in enumerate(hdr)}
nrow = len(rows)
T = ds("h5", "t")
assert len(T) == nrow, (len(T), nrow)
def cols(prefix):
    return [i for i, n in enumerate(hdr) if n.startswith(prefix)]
# the state, nodes and poses bit for bit (CSV %.17g reads back exactly)
checks = [("t", [0]), ("q", cols("q_")), ("qd", cols("qd_")), ("eta", cols("eta_")),
          ("etad", cols("etad_")), ("nodes/pos", cols("node_"))]
pos = [i for i, n in enumerate(hdr) if n.startswith("pos_")]
quat = [i for i, n in enumerate(hdr) if n.startswith("quat_")]
checks += [("bodies/pos", pos), ("bodies/quat", quat)]
for name, ci in checks:
    v = ds("h5", name)
    assert len(v) == nrow * len(ci) and ci, (name, len(v))
    for r in range(nrow):
        for k, c in enumerate(ci):
            assert v[r * len(ci) + k] == float(rows[r][c]), (name, r, k)
off = [int(x) for x in ds("h5", "model/point_offset")]
npt = off[-1]
P = ds("h5", "points")
assert len(P) == nrow * npt * 3
pt = lambda r, i: P[3 * (r * npt + i):3 * (r * npt + i) + 3]
nfe = off[1] - off[0]  # the beam is body 0
assert nfe == 11, nfe
shape = cols("shape_beam_")
assert len(shape) == 3 * nfe
tipc = [col["node_beam_tip_" + c] for c in "xyz"]
bent = stretch = tiperr = 0.0
for r in range(nrow):
    for i in range(nfe):
        for c in range(3):
            assert pt(r, i)[c] == float(rows[r][shape[3 * i + c]]), ("shape", r, i)
    tiperr = max(tiperr, max(abs(pt(r, nfe - 1)[c] - float(rows[r][tipc[c]])) for c in range(3)))
    for i in range(nfe - 1):
        stretch = max(stretch, abs(math.dist(pt(r, i), pt(r, i + 1)) - 0.1))
    # the floating frame's x axis in the world: from the body's quaternion
    w, x, y, z = [float(rows[r][col["quat_beam_q" + c]]) for c in "wxyz"]
    ex = [1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)]
    o = [float(rows[r][col["pos_beam_" + c]]) for c in "xyz"]
    for i in range(1, nfe):
        d = [pt(r, i)[c] - o[c] for c in range(3)]
        a = sum(d[c] * ex[c] for c in range(3))
        bent = max(bent, math.sqrt(max(0.0, sum(v * v for v in d) - a * a)))
assert tiperr < 1e-12, tiperr
assert stretch < 1e-6, stretch
assert bent > 1e-9, bent
seg = [int(v) for v in ds("h5", "model/segments")]
assert [seg[2 * (nfe - 1)], seg[2 * (nfe - 1) + 1]] == [nfe - 1, off[1]], seg  # bob hangs at the tip
# the XDMF names only datasets that exist, with their shapes
shapes = {}  # h5ls -r: "/points   Dataset {114/Inf, 14/Inf, 3/Inf}"
for line in open(t + "/h5/header.txt"):
    m = re.match(r"(\S+)\s+Dataset \{([^}]*)\}", line)
    if m:
        shapes[m.group(1)] = [int(v.split("/")[0]) for v in m.group(2).split(",")]
grids = ET.parse(t + "/h5/trajectory.xmf").getroot().findall(".//Grid[@GridType='Uniform']")
assert len(grids) == nrow, len(grids)
nref = 0
for it in ET.parse(t + "/h5/trajectory.xmf").getroot().iter("DataItem"):
    if it.get("Format") != "HDF":
        continue
    f, rest = it.text.strip().split(":", 1)
    assert f == "trajectory.h5", f
    name, _, sel = rest.partition("|")
    name = "/" + name.lstrip("/")
    assert name in shapes, (name, sorted(shapes))
    dims = [int(v) for v in it.get("Dimensions").split()]
    if sel:
        start, stride, count, space = [[int(v) for v in s.split()] for s in sel.split(":")]
        assert space == shapes[name] and count == dims, (name, space, count, shapes[name])
        assert all(0 <= a and a + c <= s for a, c, s in zip(start, count, space)), (name, start)
    else:
        assert dims == shapes[name], (name, dims, shapes[name])
    nref += 1
# restart halfway: the same rows as one run
assert ds("half", "t") == T and ds("half", "points") == P, "restart differs"
print("%d rows, %d points; tip node %.1e m, stretch %.1e m, bending %.2e m; %d XDMF references"
      % (nrow, npt, tiperr, stretch, bent, nref))
PY
) || bad "flexible HDF5 output: $r"
echo "flex_h5: $r"
# ParaView's default reader (Xdmf3ReaderS for .xmf); no rendering, so no X display
if command -v pvpython >/dev/null 2>&1; then
  cat >"$tmp/pv.py" <<'PY'
import sys
from paraview.simple import OpenDataFile
from paraview import servermanager as sm
r = OpenDataFile(sys.argv[1])
ts = list(r.TimestepValues)
r.UpdatePipeline(ts[-1])
d = sm.Fetch(r)
print(r.GetXMLName(), len(ts), d.GetNumberOfPoints(), d.GetNumberOfCells())
for i in range(d.GetNumberOfPoints()):
    print("%.17g %.17g %.17g" % d.GetPoint(i))
PY
  pvpython "$tmp/pv.py" "$tmp/h5/trajectory.xmf" >"$tmp/pv.out" 2>"$tmp/pv.err" ||
    bad "pvpython: $(tail -n 3 "$tmp/pv.err")"
  p=$("$py" - "$tmp" <<'PY'
import sys
t = sys.argv[1]
out = open(t + "/pv.out").read().split("\n")
reader, nts, npt, ncell = out[0].split()
off = [int(v) for v in open(t + "/h5/model_point_offset.txt")]
nseg = len(open(t + "/h5/model_segments.txt").read().split()) // 2
P = [float(v) for v in open(t + "/h5/points.txt")]
T = open(t + "/h5/t.txt").read().split()
assert reader == "Xdmf3ReaderS", reader
assert int(nts) == len(T) and int(npt) == off[-1] and int(ncell) == nseg, out[0]
last = P[len(P) - 3 * off[-1]:]
got = [float(v) for line in out[1:1 + off[-1]] for v in line.split()]
assert got == last, "the points ParaView reads are not /points' last row"
print("ParaView %s: %s rows, %s points, %s cells; the last row's points equal /points" % tuple(out[0].split()))
PY
) || bad "ParaView: $p"
  echo "flex_h5: $p"
else
  echo "flex_h5: pvpython not found: the ParaView check is skipped"
fi
[ "$fail" -eq 0 ] && echo "flex_h5: all checks passed"
exit "$fail"
