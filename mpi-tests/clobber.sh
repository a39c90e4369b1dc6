#!/bin/sh
# Never clobber a file (issue 30): a --restart into another model's output directory is refused
# before anything in it changes (CSV and HDF5); --json PATH never replaces what is not a regular
# file (a device node is written to, a FIFO too, a directory is refused); a run's file name that
# is not a regular file is never opened or renamed over, even with --force.
#
#   clobber.sh MBSPAR CONFIGS_DIR
mbspar=$1
cfg=$2/chain.cfg
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_clobber
small="--quiet --set model.chain.n=8 --set integrator.t_end=0.02 --set output.checkpoint_every=10"

# sums DIR: the names and checksums of DIR's files
sums() { (cd "$1" && find . -type f | sort | xargs md5sum); }

# refused_restart NAME FORMAT ARGS-OF-THE-OTHER-MODEL...: run A of the chain in $tmp/NAME.a, run B
# of another model in $tmp/NAME.b, then B's checkpoint with --out A: exit 2, one line naming
# another run's outputs, A byte for byte unchanged
refused_restart() {
  name=$1
  fmt=$2
  shift 2
  a=$tmp/$name.a
  b=$tmp/$name.b
  # shellcheck disable=SC2086
  "$mbspar" run "$cfg" $small --set output.format="$fmt" --out "$a" || bad "$name: run A"
  # shellcheck disable=SC2086
  "$mbspar" run "$cfg" $small --set output.format="$fmt" --out "$b" "$@" || bad "$name: run B"
  sums "$a" >"$tmp/$name.before"
  # shellcheck disable=SC2086
  "$mbspar" run "$cfg" $small --set output.format="$fmt" --set integrator.t_end=0.03 \
    --out "$a" --restart "$b/checkpoint.bin" "$@" 2>"$tmp/$name.err"
  rc=$?
  echo "clobber: $name: exit $rc: $(cat "$tmp/$name.err")"
  [ $rc -eq 2 ] || bad "$name: exit $rc (want 2)"
  [ "$(grep -c . "$tmp/$name.err")" -eq 1 ] || bad "$name: stderr not one line"
  grep -q "holds another run's outputs" "$tmp/$name.err" || bad "$name: message"
  sums "$a" >"$tmp/$name.after"
  cmp -s "$tmp/$name.before" "$tmp/$name.after" || bad "$name: run A's files changed"
}
# the same sizes, another mass: only the energies at the checkpoint's step tell them apart (A's
# checkpoint is of another fingerprint too: remove it so that the energies are what is checked)
refused_restart csv_mass csv --set model.chain.mass=0.02
refused_restart h5_mass hdf5 --set model.chain.mass=0.02
rm "$tmp/csv_mass.a/checkpoint.bin"
# shellcheck disable=SC2086
"$mbspar" run "$cfg" $small --set integrator.t_end=0.03 --out "$tmp/csv_mass.a" \
  --restart "$tmp/csv_mass.b/checkpoint.bin" --set model.chain.mass=0.02 2>"$tmp/e.err"
rc=$?
grep -q "energy.csv holds other energies" "$tmp/e.err" || bad "energies: exit $rc $(cat "$tmp/e.err")"
# other sizes (HDF5 refused before energy.csv is cut: issue 30)
refused_restart h5_n hdf5 --set model.chain.n=9
refused_restart csv_n csv --set model.chain.n=9
# ... and the run's own directory is continued as before
# shellcheck disable=SC2086
"$mbspar" run "$cfg" $small --set integrator.t_end=0.03 --restart "$tmp/csv_n.a/checkpoint.bin" ||
  bad "restart into the run's own directory"

# --json PATH
"$mbspar" check "$cfg" --quiet --json "$tmp" 2>"$tmp/j.err"
rc=$?
if [ $rc -ne 2 ] || [ "$(grep -c . "$tmp/j.err")" -ne 1 ]; then
  bad "--json DIR: exit $rc $(cat "$tmp/j.err")"
fi
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.out" &
reader=$!
"$mbspar" check "$cfg" --quiet --json "$tmp/fifo" || bad "--json FIFO with a reader"
wait $reader
[ -p "$tmp/fifo" ] || bad "--json FIFO: the FIFO was replaced"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/fifo.out" ||
  bad "--json FIFO: the reader got no JSON"
"$mbspar" check "$cfg" --quiet --json "$tmp/fifo" 2>"$tmp/f.err"
rc=$?
echo "clobber: --json FIFO without a reader: exit $rc: $(cat "$tmp/f.err")"
if [ $rc -ne 3 ] || [ ! -p "$tmp/fifo" ]; then bad "--json FIFO without a reader: exit $rc"; fi
# a character device (as root: a node of /dev/null's numbers in the scratch directory, so that a
# regression destroys that one, not the machine's /dev/null)
if [ "$(id -u)" -eq 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then
  "$mbspar" check "$cfg" --quiet --json "$tmp/null" || bad "--json device"
  [ -c "$tmp/null" ] || bad "--json device: the device node was replaced"
  for f in "$tmp"/null.*; do
    [ -e "$f" ] && bad "--json device: a temporary was left: $f"
  done
else
  echo "clobber: not root: the device-node case is skipped"
fi
# a run whose run.json is a FIFO: refused, even with --force, without hanging
mkdir "$tmp/fifodir"
mkfifo "$tmp/fifodir/run.json"
# shellcheck disable=SC2086
"$mbspar" run "$cfg" $small --out "$tmp/fifodir" --force 2>"$tmp/d.err"
rc=$?
echo "clobber: run.json a FIFO: exit $rc: $(cat "$tmp/d.err")"
if [ $rc -ne 3 ] || [ ! -p "$tmp/fifodir/run.json" ]; then bad "run.json a FIFO: exit $rc"; fi

echo "clobber: $fail failure(s)"
[ $fail -eq 0 ]
