#!/bin/sh
# Flexible bodies from a modal file (issue 34 item 1; docs/flexible.md 14):
#  - round trip: `check configs/flex_pendulum.cfg --modal-out` writes beam.h5; configs/
#    flex_modalfile.cfg (the same pendulum, its beam from that file) then gives accel's qdd, etadd
#    and nodes, modes' omega and a 0.01 s rk4 run's trajectory.csv and energy.csv bit for bit equal
#    to the beam's (the file holds the same doubles the dynamics read), and so does the committed
#    configs/flex_modalfile.h5 (all three with modal damping 0.02); accel at 2 ranks (schur) too;
#  - an independent file: scripts/gen_modal_file.py (a cantilever's unreduced FE dofs, textbook
#    element matrices, numpy's eigenvalues): check's omega_body (from the file's M, K) to 1e-9 and
#    modes' omega (the oracle's linearisation, its own mass integration) to 1e-7 of numpy's, the
#    first bending frequency to 1e-4 of Euler-Bernoulli's;
#  - bad input: each refusal is one line naming the config's FILE:LINE, the HDF5 file and the
#    dataset, exit 2, nothing written (one of them at 2 ranks: one line, exit 2).
# usage: flex_modalfile.sh MBSPAR PYTHON3 CONFIGS SCRIPTS [MPIEXEC]
mbspar=$1 py=$2 configs=$3 scripts=$4 mpiexec=${5:-}
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_flex_modalfile
"$py" -c "import h5py, numpy" 2>/dev/null || {
  echo "python3-h5py or python3-numpy not found: skipped"
  exit 77
}

# ---- round trip
run 0 "$mbspar" check "$configs/flex_pendulum.cfg" --quiet --modal-out "$tmp/w"
[ -f "$tmp/w/beam.h5" ] || bad "--modal-out wrote no beam.h5"
run 3 "$mbspar" check "$configs/flex_pendulum.cfg" --quiet --modal-out "$tmp/w"
grep -q "exists (--force" "$tmp/err" || bad "--modal-out over an existing file: $(cat "$tmp/err")"
run 0 "$mbspar" check "$configs/flex_pendulum.cfg" --quiet --modal-out "$tmp/w" --force
# the three configs with modal damping 0.02 (so the run exercises /omega_fixed too)
mkdir "$tmp/rt" "$tmp/configs"
sed 's/damping = 0.0;/damping = 0.02;/' "$configs/flex_modalfile.cfg" >"$tmp/rt/flex_modalfile.cfg"
cp "$tmp/w/beam.h5" "$tmp/rt/flex_modalfile.h5"
sed 's/damping = 0.0;/damping = 0.02;/' "$configs/flex_modalfile.cfg" >"$tmp/configs/flex_modalfile.cfg"
cp "$configs/flex_modalfile.h5" "$tmp/configs/"
sed 's/damping = 0.0;/damping = 0.02;/' "$configs/flex_pendulum.cfg" >"$tmp/configs/flex_pendulum.cfg"
for c in "$tmp/rt/flex_modalfile.cfg" "$tmp/configs/flex_modalfile.cfg"; do
  grep -q "damping = 0.02;" "$c" || bad "$c: no damping = 0.02"
done
for c in "$tmp/configs/flex_pendulum.cfg" "$tmp/rt/flex_modalfile.cfg" \
  "$tmp/configs/flex_modalfile.cfg"; do
  n=$(basename "$(dirname "$c")")_$(basename "$c" .cfg)
  run 0 "$mbspar" accel "$c" --quiet --json "$tmp/a_$n.json"
  run 0 "$mbspar" modes "$c" --quiet --count 6 --json "$tmp/m_$n.json"
  run 0 "$mbspar" run "$c" --quiet --set integrator.method=rk4 --set integrator.dt=1e-4 \
    --set integrator.t_end=0.01 --out "$tmp/r_$n"
  if [ -n "$mpiexec" ]; then
    run 0 "$mpiexec" -n 2 "$mbspar" accel "$c" --quiet --set solver.method=schur \
      --json "$tmp/p_$n.json"
  fi
done
b=configs_flex_pendulum
for n in rt_flex_modalfile configs_flex_modalfile; do
  for f in trajectory.csv energy.csv; do
    cmp -s "$tmp/r_$b/$f" "$tmp/r_$n/$f" || bad "$n: run's $f differs from the beam's"
  done
done
r=$("$py" - "$tmp" "$mpiexec" <<'PY'
import json, sys
t, par = sys.argv[1], sys.argv[2]
L = lambda p: json.load(open(t + "/" + p))
b = "configs_flex_pendulum"
for n in ("rt_flex_modalfile", "configs_flex_modalfile"):
    a0, a1 = L("a_%s.json" % b), L("a_%s.json" % n)
    for k in ("qdd", "etadd", "nodes"):
        assert a0[k] == a1[k], (n, k, a0[k], a1[k])
    m0, m1 = L("m_%s.json" % b)["results"], L("m_%s.json" % n)["results"]
    assert m0["omega"] == m1["omega"], (n, m0["omega"], m1["omega"])
    if par:
        p0, p1 = L("p_%s.json" % b), L("p_%s.json" % n)
        assert p0["qdd"] == p1["qdd"] and p0["etadd"] == p1["etadd"], n
print("ok")
PY
) || bad "round trip: $r"
[ "$r" = ok ] || bad "round trip: $r"

# ---- an independent file
"$py" "$scripts/gen_modal_file.py" "$tmp/cant.h5" --elements 8 >"$tmp/cant.json" ||
  bad "gen_modal_file.py"
cat >"$tmp/cant.cfg" <<'EOF'
model = { gravity = [0, 0, -9.81];
  bodies = ( { name = "beam"; parent = "ground"; joint = { type = "fixed"; };
      flexible = { file = "cant.h5"; nodes = ( { name = "tip"; position = [1, 0, 0]; } ); }; } ); };
EOF
run 0 "$mbspar" check "$tmp/cant.cfg" --quiet --json "$tmp/cant_check.json"
run 0 "$mbspar" modes "$tmp/cant.cfg" --quiet --count 6 --json "$tmp/cant_modes.json"
r=$("$py" - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
ref = json.load(open(t + "/cant.json"))
body = json.load(open(t + "/cant_check.json"))["flexible"][0]
modes = json.load(open(t + "/cant_modes.json"))["results"]["omega"]
rel = lambda a, b: abs(a - b) / abs(b)
e1 = max(rel(a, b) for a, b in zip(body["omega_body"], ref["omega"]))
e2 = max(rel(a, b) for a, b in zip(modes, ref["omega"][:6]))
e3 = rel(modes[0], ref["omega_eb_bending"][0])
assert e1 < 1e-9 and e2 < 1e-7 and e3 < 1e-4, (e1, e2, e3)
print("ok %.2g %.2g %.2g" % (e1, e2, e3))
PY
) || bad "independent file: $r"
case $r in ok*) echo "independent file: check, modes, Euler-Bernoulli: $r" ;; *) bad "independent: $r" ;; esac

# ---- bad input: a copy of cant.h5 changed by one thing; the config's file key is on line 3
"$py" - "$tmp" <<'PY' || bad "making the bad files"
import shutil, sys
import h5py, numpy as np
t = sys.argv[1]
def make(name, fn):
    shutil.copy(t + "/cant.h5", "%s/%s.h5" % (t, name))
    with h5py.File("%s/%s.h5" % (t, name), "r+") as f:
        fn(f)
def put(f, k, v):
    del f[k]
    f[k] = v
make("nodataset", lambda f: f.__delitem__("K"))
make("shape", lambda f: put(f, "K", f["K"][1:, :]))
make("nonfinite", lambda f: put(f, "M", np.where(np.eye(48, dtype=bool) & (np.arange(48) == 3), np.nan, f["M"][()])))
make("notspd", lambda f: put(f, "M", -f["M"][()]))
make("kasym", lambda f: put(f, "K", f["K"][()] + np.triu(np.ones((48, 48)), 1) * 1e3))
make("kneg", lambda f: put(f, "K", -f["K"][()]))
make("version", lambda f: f.attrs.__setitem__("mbspar_modal_version", np.int64(3)))
make("noversion", lambda f: f.attrs.__delitem__("mbspar_modal_version"))
make("mass", lambda f: put(f, "rhoA", f["rhoA"][()] * 1.01))
make("root", lambda f: f["Phi"].__setitem__((0, 0), 1.0))
open(t + "/nothdf5.h5", "w").write("not hdf5\n")
PY
mkdir "$tmp/dir.h5"
mkfifo "$tmp/fifo.h5" 2>/dev/null || echo "mkfifo failed: the FIFO case skipped"
# refuse CASE FILE REGEX [NODE] [KEYS]: the config names FILE (on line 3, NODE on line 4, KEYS
# on line 3); stderr is one line matching REGEX; exit 2; the --out directory is not created
refuse() {
  cat >"$tmp/bad.cfg" <<EOF
model = { gravity = [0, 0, -9.81];
  bodies = ( { name = "beam"; parent = "ground"; joint = { type = "fixed"; };
      flexible = { file = "$2"; $5
                   nodes = ( { name = "${4:-tip}"; } ); }; } ); };
integrator = { method = "rk4"; dt = 1e-4; t_end = 1e-3; };
EOF
  run 2 "$mbspar" run "$tmp/bad.cfg" --quiet --out "$tmp/o_$1"
  [ -e "$tmp/o_$1" ] && bad "$1: --out directory created"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "$1: stderr is not one line: $(cat "$tmp/err")"
  grep -q "$3" "$tmp/err" || bad "$1: message: $(cat "$tmp/err")"
}
# the file's problems: at the file key (line 3), naming the file and the dataset
f3() { echo "bad.cfg:3: body \"beam\": flexible.file: .*$1: $2"; }
refuse missing absent.h5 "$(f3 absent.h5 "cannot open: No such file")"
refuse dir dir.h5 "$(f3 dir.h5 "not a regular file (a directory)")"
if [ -p "$tmp/fifo.h5" ]; then refuse fifo fifo.h5 "$(f3 fifo.h5 "not a regular file (a FIFO)")"; fi
refuse nothdf5 nothdf5.h5 "$(f3 nothdf5.h5 "not an HDF5 file")"
refuse nodataset nodataset.h5 "$(f3 nodataset.h5 "/K: missing dataset")"
refuse shape shape.h5 "$(f3 shape.h5 "/K: shape (47, 48), expected (48, 48)")"
refuse nonfinite nonfinite.h5 "$(f3 nonfinite.h5 "/M: entry 147 is not finite")"
refuse notspd notspd.h5 "$(f3 notspd.h5 "/M: not positive definite")"
refuse kasym kasym.h5 "$(f3 kasym.h5 "/K: not symmetric")"
refuse kneg kneg.h5 "$(f3 kneg.h5 "/K: not positive semidefinite")"
refuse version version.h5 "$(f3 version.h5 "/mbspar_modal_version = 3: this mbspar reads versions 1 (line) and 2")"
refuse noversion noversion.h5 "$(f3 noversion.h5 "/: no attribute mbspar_modal_version")"
refuse mass mass.h5 "$(f3 mass.h5 "/mass: ")"
refuse root root.h5 "$(f3 root.h5 "/Phi: row 0, column 0")"
# the config's problems: at the key at fault
refuse node cant.h5 'bad.cfg:4: .*node "nope" is not in .*cant.h5 (/node_names)' nope
refuse modes cant.h5 "bad.cfg:3: .*flexible.modes: not with flexible.file" tip "modes = 4;"
refuse both cant.h5 "bad.cfg:3: .*beam and file both given" tip \
  "beam = { length = 1.0; E = 2.1e11; rho = 7850.0; area = 1.0e-4; Iy = 1e-9; Iz = 1e-9; };"
if [ -n "$mpiexec" ]; then # every rank reads the file: all agree, rank 0 prints
  run 2 "$mpiexec" -n 2 "$mbspar" check "$tmp/bad.cfg" --quiet
  # (mpiexec adds its own lines about the exit code)
  [ "$(grep -c "bad.cfg:" "$tmp/err")" -eq 1 ] || bad "np 2: not one line: $(cat "$tmp/err")"
  grep -v "bad.cfg:" "$tmp/err" | grep -q "^mbspar\|beam" && bad "np 2: more: $(cat "$tmp/err")"
  refuse_np2=$(cat "$tmp/err")
  case $refuse_np2 in *"bad.cfg:3: "*"beam and file both given"*) ;; *) bad "np 2: $refuse_np2" ;; esac
fi
[ "$fail" -eq 0 ] || exit 1
echo "flex_modalfile: pass"
