#!/bin/bash
# Never lose a run (issue 32): SIGINT (Ctrl-C) is handled like SIGTERM (the step is finished, a
# checkpoint, run.json and one stderr line written, exit 10) and a second SIGINT ends the run at
# once.
#
#   interrupt.sh MBSPAR CONFIGS_DIR MPIEXEC NPFLAG [PREFLAGS...]
# absolute paths: one part runs mbspar from another directory
mbspar=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cfg=$(cd "$2" && pwd)/chain.cfg
mpiexec=$3
npflag=$4
shift 4
pre="$*"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_interrupt
export OMPI_MCA_orte_execute_quiet=1

# wait_file FILE PID: until FILE exists and is not empty, while PID runs (at most 60 s)
wait_file() {
  n=0
  while [ ! -s "$1" ] && kill -0 "$2" 2>/dev/null && [ $n -lt 600 ]; do
    sleep 0.1
    n=$((n + 1))
  done
}

# wait_pid PID: its exit code, or 124 after killing it when it runs on for 60 s more (a signal
# that is ignored must fail the test, not hang it)
wait_pid() {
  n=0
  while kill -0 "$1" 2>/dev/null && [ $n -lt 600 ]; do
    sleep 0.1
    n=$((n + 1))
  done
  if kill -0 "$1" 2>/dev/null; then
    kill -9 "$1"
    wait "$1"
    return 124
  fi
  wait "$1"
}

# 0. output.flush_every: seconds or "N rows"; anything else is refused (exit 2, one line)
for v in -1 '"0 rows"' '"3 apples"'; do
  "$mbspar" check "$cfg" --quiet --set output.flush_every="$v" >"$tmp/fe.out" 2>"$tmp/fe.err"
  rc=$?
  if [ $rc -ne 2 ] || [ "$(grep -c . "$tmp/fe.err")" -ne 1 ] ||
    ! grep -q "output.flush_every" "$tmp/fe.err"; then
    bad "flush_every=$v: exit $rc, $(cat "$tmp/fe.err")"
  fi
done
"$mbspar" check "$cfg" --quiet --set 'output.flush_every="10 rows"' || bad "flush_every 10 rows"

# 1. SIGINT to a run without mpirun: checkpoint, run.json stopped "SIGINT", one line, exit 10; the
#    command the line suggests continues the run as printed (issue 32: the hint named --restart
#    alone, which continued into output.dir). A 400-link chain with jcg without warm start, so
#    that the SIGINT, sent when the first row is in energy.csv, lands within the 5 steps.
out=$tmp/int1
set -- --out "$out" --quiet --set model.chain.n=400 --set solver.method=jcg \
  --set solver.warm_start=none --set integrator.t_end=0.005
"$mbspar" run "$cfg" "$@" 2>"$tmp/int1.err" &
pid=$!
wait_file "$out/energy.csv" $pid
kill -INT $pid
wait_pid $pid
rc=$?
echo "interrupt: SIGINT: exit $rc; stderr: $(cat "$tmp/int1.err")"
[ $rc -eq 10 ] || bad "SIGINT: exit $rc (want 10)"
[ -f "$out/checkpoint.bin" ] || bad "SIGINT: no checkpoint"
[ "$(grep -c . "$tmp/int1.err")" -eq 1 ] || bad "SIGINT: stderr is not one line"
grep -q "^mbspar: SIGINT received: stopped at t = " "$tmp/int1.err" || bad "SIGINT: message"
python3 - "$out/run.json" <<'PY' || bad "SIGINT: run.json not marked stopped by SIGINT"
import json, sys
r = json.load(open(sys.argv[1]))["results"]
sys.exit(0 if r["complete"] is False and r["stopped"] == "SIGINT" else 1)
PY
# check_done DIR NAME: DIR/run.json is complete at t = 0.005 and energy.csv ends there
check_done() {
  python3 - "$1" <<'PY' || bad "$2: the run was not continued to its end"
import json, sys
r = json.load(open(sys.argv[1] + "/run.json"))["results"]
last = open(sys.argv[1] + "/energy.csv").read().splitlines()[-1].split(",")
print(f"  run.json complete: {r['complete']} at t = {r['t']}; energy.csv ends at step {last[0]}")
sys.exit(0 if r["complete"] and abs(r["t"] - 0.005) < 1e-12 and last[0] == "5" else 1)
PY
}
cmd=$(sed -n 's/.*(continue with: \(.*\))$/\1/p' "$tmp/int1.err")
echo "interrupt: running the printed command: $cmd"
sh -c "$cmd" || bad "the printed command failed: $cmd"
check_done "$out" "the printed command"
# ... the same command again: the directory holds a run, the message names the command that
# continues it (from its checkpoint), and that command works as printed
"$mbspar" run "$cfg" "$@" 2>"$tmp/exists.err"
rc=$?
echo "interrupt: the same run again: exit $rc; stderr: $(cat "$tmp/exists.err")"
if [ $rc -ne 3 ] || [ "$(grep -c . "$tmp/exists.err")" -ne 1 ]; then bad "exists: exit $rc"; fi
cmd=$(sed -n 's/.*(continue it with: \(.*\); or use --force or another --out)$/\1/p' \
  "$tmp/exists.err")
[ -n "$cmd" ] || bad "exists: no command in the message"
sh -c "$cmd" || bad "the command of the exists message failed: $cmd"
check_done "$out" "the command of the exists message"
# ... and --restart CK alone continues into CK's directory, not output.dir (the cwd stays clean)
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "$mbspar" run "$cfg" --quiet --set model.chain.n=400 --set solver.method=jcg \
  --set solver.warm_start=none --set integrator.t_end=0.005 --restart "$out/checkpoint.bin") ||
  bad "--restart without --out failed"
[ -z "$(ls -A "$tmp/cwd")" ] || bad "--restart without --out wrote into $(ls -A "$tmp/cwd")"
check_done "$out" "--restart without --out"

# 2. a second SIGINT ends at once: a run whose steps take long (jcg without warm start on 1000
#    links to 1e-12: about a second per step) gets two SIGINTs 0.05 s apart within a step; it
#    dies by SIGINT (status 130) without a checkpoint
out=$tmp/int2
"$mbspar" run "$cfg" --out "$out" --quiet --set model.chain.n=1000 --set solver.method=jcg \
  --set solver.warm_start=none --set solver.tol=1e-12 --set integrator.t_end=1000 \
  2>"$tmp/int2.err" &
pid=$!
wait_file "$out/energy.csv" $pid
kill -INT $pid
sleep 0.05
kill -INT $pid
wait_pid $pid
rc=$?
echo "interrupt: two SIGINTs: exit $rc; stderr: $(cat "$tmp/int2.err")"
[ $rc -eq 130 ] || bad "two SIGINTs: exit $rc (want 130: ended by SIGINT)"
[ ! -f "$out/checkpoint.bin" ] || bad "two SIGINTs: a checkpoint was written"
grep -q "second SIGINT: stopping at once" "$tmp/int2.err" || bad "two SIGINTs: message"

# 3. SIGINT and SIGKILL at random moments to serial (no mpirun) and 2-rank runs, CSV and HDF5:
#    after SIGINT a checkpoint, run.json (stopped by SIGINT) and exit 10; after either every
#    output parses to its last complete row (no half rows; the HDF5 file opens, every row dataset
#    has the same length, the XDMF file is XML and lists no row the HDF5 file lacks); the run
#    continued from its checkpoint equals an uninterrupted run bitwise (energy.csv,
#    trajectory.csv or the HDF5 datasets, the final state). The seed is printed
#    (MBS_INTERRUPT_SEED=N repeats it).
seed=${MBS_INTERRUPT_SEED:-$(($(date +%s%N) % 100000))}
RANDOM=$seed
echo "interrupt: seed $seed (MBS_INTERRUPT_SEED=$seed repeats it)"
py=${MBS_PYTHON:-python3}

# launch NP ARGS...: mbspar run in the background (NP 1: without mpirun); $launcher
launch() {
  np=$1
  shift
  if [ "$np" -eq 1 ]; then
    "$mbspar" run "$cfg" "$@" &
  else
    # shellcheck disable=SC2086
    "$mpiexec" "$npflag" "$np" $pre "$mbspar" run "$cfg" "$@" &
  fi
  launcher=$!
}

# runfg NP ARGS...: mbspar run in the foreground
runfg() {
  np=$1
  shift
  if [ "$np" -eq 1 ]; then
    "$mbspar" run "$cfg" "$@"
  else
    # shellcheck disable=SC2086
    "$mpiexec" "$npflag" "$np" $pre "$mbspar" run "$cfg" "$@"
  fi
}

# a small chain, rows every step, a checkpoint every 10
# (every step: a signal stop writes a row at its step, which an uninterrupted run has only if it
# is an output step)
set -- --quiet --set model.chain.n=12 --set output.every=1 --set output.checkpoint_every=10

# rand_case NP FORMAT SIGNAL
rand_case() {
  np=$1
  fmt=$2
  sig=$3
  shift 3
  name=np${np}_${fmt}_$sig
  out=$tmp/$name
  launch "$np" "$@" --out "$out" --set output.format="$fmt" --set integrator.t_end=1000 \
    2>"$tmp/$name.err"
  wait_file "$out/checkpoint.bin" "$launcher"
  ms=$((RANDOM % 1500))
  sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
  victim=$launcher
  vrank=0
  if [ "$np" -gt 1 ]; then # a random rank (the ranks are the launcher's children)
    vrank=$((RANDOM % np))
    victim=
    for p in $(pgrep -P "$launcher"); do
      r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
      [ "$r" = "$vrank" ] && victim=$p
    done
  fi
  if [ -z "$victim" ]; then
    bad "$name: no process of rank $vrank; stderr: $(cat "$tmp/$name.err")"
    kill -9 "$launcher"
    return
  fi
  kill "-$sig" "$victim"
  wait_pid "$launcher"
  rc=$?
  echo "interrupt: $name: SIG$sig to rank $vrank after ${ms} ms: exit $rc"
  if [ "$sig" = INT ]; then
    [ $rc -eq 10 ] || bad "$name: exit $rc (want 10); stderr: $(cat "$tmp/$name.err")"
    [ "$(grep -c . "$tmp/$name.err")" -eq 1 ] || bad "$name: stderr: $(cat "$tmp/$name.err")"
  else
    [ $rc -ne 0 ] || bad "$name: exit 0 after SIGKILL"
  fi
  [ -f "$out/checkpoint.bin" ] || {
    bad "$name: no checkpoint"
    return
  }
  # every output parses to its last complete row; prints the t to continue to
  tcut=$("$py" - "$out" "$fmt" "$sig" <<'PY'
import csv, json, os, sys, xml.etree.ElementTree as ET
out, fmt, sig = sys.argv[1:4]
err = []
def rows(path):
    text = open(path).read()
    if not text.endswith("\n"):
        err.append(f"{path} ends inside a row")
    lines = text.splitlines()
    n = lines[0].count(",") + 1
    bad = [i + 1 for i, l in enumerate(lines) if l.count(",") + 1 != n]
    if bad:
        err.append(f"{path}: lines {bad[:5]} have not {n} fields")
    return list(csv.reader(lines[1:]))
energy = rows(out + "/energy.csv")
tlast = float(energy[-1][1])
if fmt == "csv":
    traj = rows(out + "/trajectory.csv")
    if len(traj) != len(energy) or [r[0] for r in traj] != [r[1] for r in energy]:
        err.append(f"trajectory.csv has {len(traj)} rows, energy.csv {len(energy)}, or other times")
else:
    import h5py
    h5 = out + "/trajectory.h5"
    if not os.path.exists(h5):
        h5 += ".tmp"
    with h5py.File(h5, "r") as f:
        n = f["t"].shape[0]
        lens = {k: f[k].shape[0] for k in ("q", "qd", "energy", "iterations", "bodies/pos",
                                             "bodies/quat", "joints/wrench")}
        t = f["t"][...]
    if set(lens.values()) != {n}:
        err.append(f"{h5}: row datasets of unequal lengths {lens}, /t {n}")
    grids = ET.parse(out + "/trajectory.xmf").getroot().iter("Grid")
    times = [float(g.find("Time").get("Value")) for g in grids if g.get("GridType") == "Uniform"]
    if len(times) > n or list(t[:len(times)]) != times:
        err.append(f"trajectory.xmf lists {len(times)} rows, the HDF5 file has {n}")
    if n > len(energy):
        err.append(f"the HDF5 file has {n} rows, energy.csv {len(energy)}")
    print(f"  {h5.split('/')[-1]}: {n} rows, trajectory.xmf {len(times)} grids", file=sys.stderr)
if sig == "INT":
    r = json.load(open(out + "/run.json"))["results"]
    if r["complete"] is not False or r["stopped"] != "SIGINT":
        err.append("run.json is not marked stopped by SIGINT")
print(f"  energy.csv: {len(energy)} complete rows to t = {tlast}", file=sys.stderr)
for e in err:
    print("  " + e, file=sys.stderr)
print(f"{tlast + 0.02:.3f}" if not err else "bad")
PY
  )
  [ "$tcut" != bad ] || {
    bad "$name: outputs not readable to their last row"
    return
  }
  if [ "$sig" = INT ]; then # the command printed (under mpirun: "mpiexec -n 2 ..."), to tcut
    cmd=$(sed -n 's/.*(continue with: \(.*\))$/\1/p' "$tmp/$name.err")
    echo "  continuing with the printed command: $cmd --set integrator.t_end=$tcut"
    sh -c "$cmd --set integrator.t_end=$tcut" || bad "$name: the printed command failed"
  else
    runfg "$np" "$@" --out "$out" --set output.format="$fmt" --set integrator.t_end="$tcut" \
      --restart "$out/checkpoint.bin" || bad "$name: the restart failed"
  fi
  runfg "$np" "$@" --out "$out.ref" --set output.format="$fmt" --set integrator.t_end="$tcut" ||
    bad "$name: the uninterrupted run failed"
  "$py" - "$out" "$out.ref" "$fmt" <<'PY' || bad "$name: the continued run differs from an uninterrupted one"
import json, sys
run, ref, fmt = sys.argv[1:4]
a, b = (json.load(open(d + "/run.json"))["results"] for d in (run, ref))
ok = a["q"] == b["q"] and a["qd"] == b["qd"] and a["t"] == b["t"] and a["complete"]
files = ["energy.csv"] + (["trajectory.csv"] if fmt == "csv" else [])
same = {f: open(run + "/" + f).read() == open(ref + "/" + f).read() for f in files}
if fmt == "hdf5":
    import h5py
    with h5py.File(run + "/trajectory.h5") as f, h5py.File(ref + "/trajectory.h5") as g:
        same["trajectory.h5"] = all(f[k].shape == g[k].shape and (f[k][...] == g[k][...]).all()
                                    for k in ("t", "q", "qd", "energy", "bodies/pos"))
print(f"  continued to t = {a['t']}: final state bitwise equal: {ok}; equal files: {same}")
sys.exit(0 if ok and all(same.values()) else 1)
PY
}

for np in ${MBS_INTERRUPT_NP:-1 2}; do
  for fmt in ${MBS_INTERRUPT_FORMAT:-csv hdf5}; do
    for sig in INT KILL; do
      rand_case "$np" "$fmt" "$sig" "$@"
    done
  done
done

echo "interrupt: $fail failure(s)"
exit $((fail > 0))
