#!/bin/sh
# Issue 11 end to end: body poses against recomputed forward kinematics, the XDMF file against
# the HDF5 file (h5py + an XML parser), a ParaView rendering that is not empty, PETSc monitors
# and -log_view, exact fixed-step times, pure JSON on standard output.
# usage: viz_tests.sh PART MBSPAR SRCDIR PYTHON MPIEXEC NPFLAG [PREFLAGS...]
#   PART: poses | xdmf | paraview | petsc | json | animate | inverse | example | progress |
#         reader
# Exit 77 (skipped) when a part's tool is missing (h5py, ParaView), with the reason.
part=$1 mbspar=$2 src=$3 py=$4 mpiexec=$5 npflag=$6
shift 6
pre="$*"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init "mbs_viz_$part"
mpi() { # mpi NP ARGS...
  np=$1
  shift
  # shellcheck disable=SC2086
  "$mpiexec" "$npflag" "$np" $pre "$@"
}
need_h5py() {
  "$py" -c "import h5py, numpy" 2>/dev/null || {
    echo "$py has no h5py/numpy (Debian python3-h5py; scripts/setup.sh installs it): skipped"
    exit 77
  }
}
cfg=$src/configs
poses=$src/mpi-tests/poses.cfg

case "$part" in
poses)
  # every joint type; CSV at 3 ranks and with the serial baseline, HDF5 at 4 ranks
  need_h5py
  mpi 3 "$mbspar" run "$poses" --out "$tmp/c3" --quiet || bad "CSV run at 3 ranks"
  "$mbspar" run "$poses" --out "$tmp/c1" --quiet --set solver.method=aba || bad "CSV run, aba"
  mpi 4 "$mbspar" run "$poses" --out "$tmp/h4" --quiet --set output.format=hdf5 || bad "HDF5 run"
  # the joint wrenches of HDF5 row 0 (the extra evaluation at the row's state) equal those of
  # `mbspar accel` at the initial state (another run, 2 ranks)
  mpi 2 "$mbspar" accel "$poses" --json "$tmp/accel.json" --quiet || bad "accel"
  "$py" - "$tmp/accel.json" "$tmp/h4/trajectory.h5" <<'PY' || bad "joint wrenches of row 0 vs accel"
import json, sys
import h5py, numpy as np
a = np.array(json.load(open(sys.argv[1]))["joint_wrench"])
f = h5py.File(sys.argv[2], "r")
w = f["joints/wrench"][0]
d = abs(w - a).max() / abs(a).max()
n = abs(np.linalg.norm(w[:, 3:], axis=1) - f["joints/force_norm"][0]).max()
print("joint wrenches, row 0 vs accel: relative difference %.3g; |force| column %.3g" % (d, n))
sys.exit(0 if d < 1e-9 and n < 1e-12 else 1)
PY
  # a URDF robot (rpy origins: the reported frames are the link frames), given directly and
  # through a cfg
  mpi 2 "$mbspar" run "$cfg/arm.urdf" --out "$tmp/u1" --quiet --set integrator.t_end=0.05 \
    2>"$tmp/u1.err" || bad "run arm.urdf"
  grep -q 'not modelled: joint limits' "$tmp/u1.err" || bad "no not-modelled warning for arm.urdf"
  [ "$(grep -c 'not modelled' "$tmp/u1.err")" -eq 1 ] || bad "the not-modelled warning is not one line"
  mpi 3 "$mbspar" run "$cfg/urdf_arm.cfg" --out "$tmp/u2" --quiet --set integrator.t_end=0.05 \
    2>/dev/null || bad "run urdf_arm.cfg"
  for d in c3 c1 h4 u1 u2; do
    "$py" "$src/mpi-tests/check_poses.py" "$tmp/$d" 1e-12 || bad "poses of $d"
  done
  # the pose columns of the CSV at 3 ranks equal the HDF5 ones at 4 (same model, schur is exact)
  "$py" - "$tmp/c3/trajectory.csv" "$tmp/h4/trajectory.h5" <<'PY' || bad "CSV vs HDF5 poses"
import csv, sys
import h5py, numpy as np
rows = list(csv.reader(open(sys.argv[1])))
head, data = rows[0], np.array([[float(x) for x in r] for r in rows[1:]])
f = h5py.File(sys.argv[2], "r")
nb = f["bodies/pos"].shape[1]
i = head.index("pos_base_x")
P = data[:, i:].reshape(len(data), nb, 10)
d = max(abs(P[:, :, 0:3] - f["bodies/pos"][()]).max(), abs(P[:, :, 7:10] - f["bodies/com"][()]).max())
print("CSV (3 ranks) vs HDF5 (4 ranks) poses: largest difference %.3g m" % d)
sys.exit(0 if d < 1e-12 else 1)
PY
  ;;
xdmf)
  # XDMF vs HDF5 on a chain, a tree and every joint type, fresh and continued by --restart
  need_h5py
  mpi 2 "$mbspar" run "$cfg/chain.cfg" --out "$tmp/chain" --quiet --set model.chain.n=24 \
    --set integrator.t_end=0.02 --set output.format=hdf5 || bad "chain run"
  mpi 3 "$mbspar" run "$cfg/tree.cfg" --out "$tmp/tree" --quiet --set model.tree.depth=4 \
    --set integrator.t_end=0.01 --set output.format=hdf5 || bad "tree run"
  mpi 2 "$mbspar" run "$poses" --out "$tmp/all" --quiet --set output.format=hdf5 \
    --set output.joint_wrench=false || bad "run without joint wrenches"
  mpi 2 "$mbspar" run "$poses" --out "$tmp/rs" --quiet --set output.format=hdf5 \
    --set integrator.t_end=0.02 --set output.every=2 --set output.checkpoint_every=7 ||
    bad "run to be continued"
  mpi 2 "$mbspar" run "$poses" --out "$tmp/rs" --quiet --set output.format=hdf5 \
    --set integrator.t_end=0.04 --set output.every=2 --restart "$tmp/rs/checkpoint.bin" ||
    bad "restart"
  for d in chain tree all rs; do
    "$py" "$src/mpi-tests/check_xdmf.py" "$tmp/$d" || bad "XDMF of $d"
  done
  # the extra evaluation for the joint wrenches leaves an iterative run unchanged: energy.csv
  # (energies, evaluations, iterations) of a J-CG run is bitwise the same with CSV output
  mpi 3 "$mbspar" run "$cfg/tree.cfg" --out "$tmp/treecsv" --quiet --set model.tree.depth=4 \
    --set integrator.t_end=0.01 || bad "tree run (CSV)"
  cmp -s "$tmp/tree/energy.csv" "$tmp/treecsv/energy.csv" ||
    bad "J-CG run: energy.csv differs between HDF5 (with joint wrenches) and CSV output"
  grep -q 'Name="force"' "$tmp/all/trajectory.xmf" && bad "force attribute without joint wrenches"
  n=$(grep -c '<Grid Name="row' "$tmp/rs/trajectory.xmf")
  [ "$n" -eq 21 ] || bad "continued run: $n grids, want 21 (t = 0, 0.002, ... 0.04)"
  ;;
paraview)
  # ParaView's default readers (Xdmf3 for .xmf, the legacy one for .xdmf2): body count, arrays,
  # data of the last step, and a rendered picture the bodies cover, for a chain, a tree, a URDF
  # robot and a single pendulum (one pvbatch for all: it takes ~10 s to start here). CI must
  # have ParaView (scripts/test.sh installs it): there a missing pvbatch fails the test.
  if ! command -v pvbatch >/dev/null 2>&1 || ! command -v xvfb-run >/dev/null 2>&1; then
    echo "pvbatch or xvfb-run not found (ParaView: scripts/setup.sh --with-viz)"
    [ "${CI:-}" = true ] && exit 1
    echo "skipped"
    exit 77
  fi
  mpi 2 "$mbspar" run "$cfg/chain.cfg" --out "$tmp/chain" --quiet --set model.chain.n=32 \
    --set integrator.t_end=0.02 --set output.every=5 --set output.format=hdf5 || bad "chain run"
  mpi 2 "$mbspar" run "$cfg/tree.cfg" --out "$tmp/tree" --quiet --set model.tree.depth=4 \
    --set integrator.t_end=0.02 --set output.every=5 --set solver.method=schur \
    --set output.format=hdf5 || bad "tree run"
  mpi 2 "$mbspar" run "$cfg/arm.urdf" --out "$tmp/arm" --quiet --set integrator.t_end=0.02 \
    --set output.every=5 --set output.format=hdf5 2>/dev/null || bad "arm.urdf run"
  "$mbspar" run "$cfg/pendulum.cfg" --out "$tmp/pendulum" --quiet --set integrator.t_end=0.02 \
    --set output.every=5 --set output.format=hdf5 || bad "pendulum run"
  mkdir -p "$tmp/png"
  # a fresh Xvfb now and then refuses pvbatch's connection on a loaded machine: up to three
  # attempts for that failure alone (as scripts/render.sh)
  for attempt in 1 2 3; do
    rc=0
    xvfb-run -a -n $((100 + $$ % 400 + attempt)) -s "-screen 0 1280x1024x24" pvbatch \
      "$src/mpi-tests/check_paraview.py" "$src" "$tmp/png" "$tmp/chain:32:500" \
      "$tmp/tree:15:500" "$tmp/arm:5:500" "$tmp/pendulum:1:500" >"$tmp/pv.out" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ] || ! grep -q 'bad X server connection' "$tmp/pv.out"; then
      break
    fi
    echo "Xvfb refused the connection (attempt $attempt of 3)"
  done
  [ "$rc" -eq 0 ] || bad "ParaView checks (exit code $rc)"
  grep '^check_paraview.py\|^render_paraview.py' "$tmp/pv.out"
  [ "$rc" -eq 0 ] || grep -v '^check_paraview.py\|^render_paraview.py' "$tmp/pv.out" | tail -n 20
  for d in chain tree arm pendulum; do
    [ -s "$tmp/png/$d.png" ] || bad "no $d.png"
  done
  ;;
petsc)
  # -ts_monitor: one line per step (and one for the initial state, as TSSolve prints)
  run 0 "$mbspar" run "$cfg/pendulum.cfg" --out "$tmp/m" --quiet --set integrator.t_end=0.01 \
    -ts_monitor
  n=$(grep -c ' TS dt ' "$tmp/out")
  [ "$n" -eq 11 ] || bad "-ts_monitor printed $n lines for 10 steps, want 11"
  # -ts_type euler: the summary and the report name the method TS really ran
  run 0 mpi 2 "$mbspar" run "$cfg/pendulum.cfg" --out "$tmp/e" --set integrator.t_end=0.005 \
    -ts_type euler
  grep -q 'aba + euler' "$tmp/out" || bad "summary does not name euler: $(head -n 1 "$tmp/out")"
  grep -q '"method": "euler"' "$tmp/e/run.json" || bad "run.json integrator.method is not euler"
  # exact fixed-step times: t = k dt to the last bit
  "$py" - "$tmp/m/energy.csv" <<'PY' || bad "fixed-step times are not k dt"
import csv, sys
bad = [(r["step"], r["t"]) for r in csv.DictReader(open(sys.argv[1]))
       if float(r["t"]) != int(r["step"]) * 1e-3]
print("times k dt: %d mismatches" % len(bad), bad[:3])
sys.exit(1 if bad else 0)
PY
  # -log_view: mbspar's phases as events of their own, on the engine (halo and allreduce at 2
  # ranks with J-CG)
  run 0 mpi 2 "$mbspar" run "$cfg/chain.cfg" --out "$tmp/l" --quiet --set model.chain.n=16 \
    --set integrator.t_end=0.003 --set solver.method=jcg -log_view
  for ev in mbsEval mbsPosition mbsVelocity mbsAssembly mbsSolve mbsAccel mbsHalo mbsAllreduce \
    mbsStep mbsOutput; do
    grep -q "^$ev " "$tmp/out" || bad "-log_view does not list $ev"
  done
  grep -q 'mbspar run' "$tmp/out" || bad "-log_view has no stage 'mbspar run'"
  # -ts_adapt_monitor (adaptive dp5): the step-size control reports every step
  run 0 "$mbspar" run "$cfg/pendulum.cfg" --out "$tmp/am" --quiet --set integrator.t_end=0.05 \
    --set integrator.method=dp5 -ts_adapt_monitor
  grep -q 'TSAdapt basic' "$tmp/out" || bad "-ts_adapt_monitor printed nothing"
  # -ts_view at the end
  run 0 "$mbspar" run "$cfg/pendulum.cfg" --out "$tmp/v" --quiet --set integrator.t_end=0.002 \
    -ts_view
  grep -q 'TS Object' "$tmp/out" || bad "-ts_view printed no TS description"
  # also for a verb that does not need PETSc otherwise
  run 0 "$mbspar" accel "$cfg/chain.cfg" --quiet --set model.chain.n=16 --set solver.method=schur \
    -log_view
  grep -q '^mbsSolve ' "$tmp/out" || bad "accel -log_view does not list mbsSolve"
  ;;
json)
  # --json -: standard output is one JSON document in every verb, at 2 ranks, and through
  # scripts/run.sh (its own lines and the build go to standard error)
  for verb in run accel check static cpa inverse; do
    c=$cfg/chain.cfg extra="--set model.chain.n=8 --set integrator.t_end=0.002"
    [ $verb = inverse ] && c=$cfg/gripper.cfg extra=""
    [ $verb = static ] && extra="$extra --set static.max_iter=50"
    # shellcheck disable=SC2086
    mpi 2 "$mbspar" $verb "$c" $extra --out "$tmp/o_$verb" --json - >"$tmp/$verb.json" \
      2>"$tmp/$verb.err" || bad "$verb --json - failed: $(head -n 2 "$tmp/$verb.err")"
    "$py" -m json.tool "$tmp/$verb.json" >/dev/null || bad "$verb --json -: not pure JSON"
  done
  MBS_RUN_NO_BUILD=1 MBS_BUILD_DIR=$(dirname "$mbspar") MBS_NP=2 "$src/scripts/run.sh" accel \
    "$cfg/chain.cfg" --set solver.method=aba --json - 2>"$tmp/runsh.err" >"$tmp/runsh.json" ||
    bad "scripts/run.sh accel failed: $(head -n 3 "$tmp/runsh.err")"
  "$py" -m json.tool "$tmp/runsh.json" >/dev/null || bad "scripts/run.sh --json -: not pure JSON"
  ;;
animate)
  # scripts/animate.sh: an animated GIF from a CSV run and from an HDF5 run
  need_h5py
  command -v gnuplot >/dev/null 2>&1 || {
    echo "gnuplot not found (Debian gnuplot-nox): skipped"
    exit 77
  }
  mpi 2 "$mbspar" run "$poses" --out "$tmp/c" --quiet || bad "CSV run"
  mpi 2 "$mbspar" run "$poses" --out "$tmp/h" --quiet --set output.format=hdf5 || bad "HDF5 run"
  for d in c h; do
    "$src/scripts/animate.sh" -o "$tmp/$d.gif" -n 8 -s 320x240 "$tmp/$d" >"$tmp/a.out" 2>&1 ||
      bad "animate.sh on $d: $(tail -n 3 "$tmp/a.out")"
    "$py" - "$tmp/$d.gif" <<'PY' || bad "$d.gif is not an animated GIF of 8 frames"
import sys
b = open(sys.argv[1], "rb").read()
frames = b.count(b"\x21\xf9\x04")  # one graphic control extension per frame
print("%s: %d bytes, %d frames" % (sys.argv[1], len(b), frames))
sys.exit(0 if b[:6] == b"GIF89a" and frames == 8 and len(b) > 2000 else 1)
PY
  done
  ;;
inverse)
  # inverse.motion: the profile's own inverse.csv fed back (rates and accelerations given) gives
  # the same forces bitwise; q alone (splines) gives them to the spline's accuracy
  g=$cfg/gripper.cfg
  mpi 2 "$mbspar" inverse "$g" --out "$tmp/a" --quiet || bad "inverse (profile)"
  mpi 2 "$mbspar" inverse "$g" --out "$tmp/b" --quiet --set "inverse.motion=\"$tmp/a/inverse.csv\"" ||
    bad "inverse (motion with qd, qdd)"
  cmp -s "$tmp/a/inverse.csv" "$tmp/b/inverse.csv" || bad "motion fed back: inverse.csv differs"
  grep -q '"given_accelerations": 4' "$tmp/b/inverse.json" || bad "inverse.json: given_accelerations"
  # t and q only: every other column dropped
  "$py" - "$tmp/a/inverse.csv" "$tmp/q.csv" <<'PY' || bad "writing the q-only motion"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
keep = [i for i, h in enumerate(rows[0]) if h == "t" or h.startswith("q_")]
with open(sys.argv[2], "w") as f:
    for r in rows:
        f.write(",".join(r[i] for i in keep) + "\n")
PY
  mpi 2 "$mbspar" inverse "$g" --out "$tmp/c" --quiet --set "inverse.motion=\"$tmp/q.csv\"" ||
    bad "inverse (motion, q only)"
  "$py" - "$tmp/a/inverse.csv" "$tmp/c/inverse.csv" <<'PY' || bad "splines: forces differ"
import csv, sys
a = list(csv.DictReader(open(sys.argv[1])))
c = list(csv.DictReader(open(sys.argv[2])))
cols = [k for k in a[0] if k.startswith("tau_")]
scale = max(abs(float(r[k])) for r in a for k in cols)
# interior samples (the not-a-knot ends are less accurate)
err = max(abs(float(x[k]) - float(y[k])) for x, y in list(zip(a, c))[5:-5] for k in cols)
print("q-only motion (cubic splines, 101 samples): largest tau difference %.3g of max |tau| %.3g"
      " (%.2g)" % (err, scale, err / scale))
sys.exit(0 if err <= 1e-3 * scale and len(a) == len(c) else 1)
PY
  # a bad column: one line FILE:LINE:, exit 2
  printf 't,q_link11,q_nobody\n0,0,0\n1,1,1\n' >"$tmp/bad.csv"
  run 2 "$mbspar" inverse "$g" --set "inverse.motion=\"$tmp/bad.csv\""
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "bad motion: $(wc -l <"$tmp/err") stderr lines"
  grep -q "^$tmp/bad.csv:1: column 3 \"q_nobody\"" "$tmp/err" || bad "bad motion: $(cat "$tmp/err")"
  ;;
progress)
  # a live progress line under mpirun started from a terminal (script(1) gives mpirun a pty):
  # several \r updates with a positive steps/s and an ETA
  command -v script >/dev/null 2>&1 || {
    echo "script (util-linux) not found: skipped"
    exit 77
  }
  # shellcheck disable=SC2086
  # 4000 steps of a 1024-link chain: about 1.7 s here unloaded (2026-11-29), so several 0.2 s
  # updates (the 256-link chain.cfg itself now takes 0.5 s: two updates, the test failed)
  cmd="$mpiexec $npflag 2 $pre $mbspar run $cfg/chain.cfg --out $tmp/p"
  cmd="$cmd --set integrator.t_end=4 --set output.every=1000 --set model.chain.n=1024"
  script -qec "$cmd" "$tmp/typescript" >/dev/null 2>&1 </dev/null || bad "run under script failed"
  "$py" - "$tmp/typescript" <<'PY' || bad "no live progress line under mpirun on a terminal"
import re, sys
s = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
upd = re.findall(r"\r\[\s*([0-9.]+)%\][^\r\n]*?ETA ([0-9.]+ s|-)\s+([0-9.e+-]+) steps/s", s)
print("live updates: %d, last: %s" % (len(upd), upd[-1] if upd else None))
ok = len(upd) >= 3 and all(float(u[2]) > 0 for u in upd if float(u[0]) > 0) and upd[-1][0] == "100.0"
sys.exit(0 if ok else 1)
PY
  # --progress SEC: plain lines (no \r) on the same terminal
  script -qec "$cmd --out $tmp/p2 --progress 0.3" "$tmp/ts2" >/dev/null 2>&1 </dev/null ||
    bad "run --progress under script failed"
  "$py" - "$tmp/ts2" <<'PY' || bad "--progress SEC did not give plain lines"
import re, sys
s = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
plain = re.findall(r"(?m)^\[\s*[0-9.]+%\]", s.replace("\r\n", "\n"))
print("plain lines: %d, carriage returns before '[': %d" % (len(plain), s.count("\r[")))
sys.exit(0 if len(plain) >= 2 and s.count("\r[") == 0 else 1)
PY
  ;;
reader)
  # python/mbspar (load_run) on serial CSV and HDF5 runs: python/tests/test_mbspar.py
  need_h5py
  "$py" "$src/python/tests/test_mbspar.py" "$mbspar" "$cfg" "$tmp" || bad "python/mbspar reader"
  ;;
example)
  # docs/examples/plot_h5.py on an HDF5 run
  need_h5py
  "$py" -c "import matplotlib" 2>/dev/null || {
    echo "$py has no matplotlib (Debian python3-matplotlib: scripts/setup.sh --with-viz): skipped"
    exit 77
  }
  mpi 2 "$mbspar" run "$cfg/chain.cfg" --out "$tmp/h" --quiet --set model.chain.n=16 \
    --set integrator.t_end=0.02 --set output.format=hdf5 || bad "HDF5 run"
  "$py" "$src/docs/examples/plot_h5.py" "$tmp/h" "$tmp/p.png" || bad "plot_h5.py"
  [ -s "$tmp/p.png" ] || bad "no plot"
  ;;
*)
  echo "viz_tests.sh: unknown part $part" >&2
  exit 2
  ;;
esac
[ "$fail" -eq 0 ] && echo "viz_tests.sh $part: all checks passed"
exit "$fail"
