#!/bin/bash
# Outputs survive kills (issue 12.2): a 2-rank run is killed with SIGKILL on one rank at a random
# output row (100 to 1095 steps after it started), restarted from its checkpoint, killed again,
# restarted again to the end; its
# trajectory.csv and energy.csv must equal an uninterrupted run's byte for byte (and bodies.csv,
# and the final state of run.json). With hdf5 the /q and /qd datasets and the row count of the
# XDMF file are compared instead of trajectory.csv.
#
#   kill_restart.sh MBSPAR CONFIGS_DIR MPIEXEC NPFLAG [PREFLAGS...]
#
# MBS_PYTHON: the python3 that compares (with h5py for MBS_KILL_FORMAT=hdf5; default python3).
# MBS_KILL_SEED=N repeats a run (the seed is printed); MBS_KILL_FORMAT=hdf5 tests the HDF5 output.
mbspar=$1
cfg=$2/chain.cfg
mpiexec=$3
npflag=$4
shift 4
pre="$*"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_kill
seed=${MBS_KILL_SEED:-$(($(date +%s%N) % 100000))}
fmt=${MBS_KILL_FORMAT:-csv}
RANDOM=$seed
echo "kill_restart: seed $seed (MBS_KILL_SEED=$seed repeats it), format $fmt"
# the checkpoint step is an output step (the avg_iterations column counts from the previous
# row); no damping or joint forces, so the work column is exactly 0 (its sum over ranks restarts
# from the checkpoint in another order); 6 s = 1200 rows, long enough for two kills at random
# rows
set -- --quiet --set solver.method=schur --set model.chain.n=64 --set integrator.t_end=6 --set output.every=5 \
  --set output.checkpoint_every=50 --set output.format="$fmt"
export OMPI_MCA_orte_execute_quiet=1

mpi2() {
  # shellcheck disable=SC2086
  "$mpiexec" "$npflag" 2 $pre "$mbspar" run "$cfg" "$@"
}

# the uninterrupted run
mpi2 --out "$tmp/ref" "$@" || bad "uninterrupted run failed"

# rows DIR: lines of DIR/energy.csv (0 without it)
rows() {
  if [ -f "$1/energy.csv" ]; then wc -l <"$1/energy.csv"; else echo 0; fi
}

# run_killed DIR ARGS...: start, wait until energy.csv has a random 20..219 rows (100..1095
# steps) more than when it started (rows reach the file at least at every checkpoint, every 10
# rows), SIGKILL a random rank; returns 0 if the kill happened before the end
run_killed() {
  dir=$1
  shift
  target=$(($(rows "$dir") + 20 + RANDOM % 200))
  # shellcheck disable=SC2086
  "$mpiexec" "$npflag" 2 $pre "$mbspar" run "$cfg" --out "$dir" "$@" 2>"$tmp/killed.err" &
  launcher=$!
  n=0
  while [ "$(rows "$dir")" -lt $target ] && kill -0 $launcher 2>/dev/null && [ $n -lt 6000 ]; do
    sleep 0.01
    n=$((n + 1))
  done
  # the ranks are the launcher's children; pick one by its MPI rank
  victim_rank=$((RANDOM % 2))
  victim=
  for p in $(pgrep -P $launcher); do
    r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    [ "$r" = "$victim_rank" ] && victim=$p
  done
  if [ -z "$victim" ]; then
    wait $launcher
    echo "kill_restart: the run ended before the kill"
    return 1
  fi
  kill -9 "$victim"
  wait $launcher
  rc=$?
  rows=$(($(wc -l <"$dir/energy.csv") - 1))
  tail=$(tail -c 1 "$dir/trajectory.csv" 2>/dev/null | od -An -c | tr -d ' ')
  last=$(tail -n 1 "$dir/energy.csv" | cut -d, -f1)
  echo "kill_restart: rank $victim_rank (pid $victim) killed; launcher exit $rc; energy.csv has" \
    "$rows complete or partial rows (last step field '$last'), trajectory.csv ends in" \
    "'${tail:-?}'"
  [ "$rc" -ne 0 ] || bad "the launcher exited 0 after a rank was killed"
  return 0
}

attempt=0
killed=0
while [ $killed -lt 2 ] && [ $attempt -lt 6 ]; do
  attempt=$((attempt + 1))
  if [ $killed -eq 0 ]; then
    rm -rf "$tmp/run"
    run_killed "$tmp/run" "$@" && killed=1
  else
    run_killed "$tmp/run" "$@" --restart "$tmp/run/checkpoint.bin" && killed=2
  fi
done
[ $killed -eq 2 ] || bad "could not kill the run twice in $attempt attempts"
[ -f "$tmp/run/checkpoint.bin" ] || bad "no checkpoint to restart from"
mpi2 --out "$tmp/run" "$@" --restart "$tmp/run/checkpoint.bin" || bad "the final restart failed"

for f in energy.csv bodies.csv; do
  [ "$fmt" = hdf5 ] && [ "$f" = bodies.csv ] && continue
  cmp -s "$tmp/ref/$f" "$tmp/run/$f" || bad "$f differs from the uninterrupted run's"
done
if [ "$fmt" = csv ]; then
  cmp -s "$tmp/ref/trajectory.csv" "$tmp/run/trajectory.csv" ||
    bad "trajectory.csv differs from the uninterrupted run's"
fi
${MBS_PYTHON:-python3} - "$tmp/ref" "$tmp/run" "$fmt" <<'PY' || bad "final state or HDF5 rows differ"
import json, subprocess, sys
ref, run, fmt = sys.argv[1:4]
a, b = (json.load(open(d + "/run.json"))["results"] for d in (ref, run))
ok = a["q"] == b["q"] and a["qd"] == b["qd"] and a["t"] == b["t"] and b["complete"]
print(f"kill_restart: final state bitwise equal: {ok}")
if fmt == "hdf5":
    import h5py
    with h5py.File(ref + "/trajectory.h5") as f, h5py.File(run + "/trajectory.h5") as g:
        same = all((f[k][...] == g[k][...]).all() and f[k].shape == g[k].shape
                   for k in ("t", "q", "qd", "energy", "bodies/pos"))
        n = f["t"].shape[0]
    xa, xb = (open(d + "/trajectory.xmf").read() for d in (ref, run))
    print(f"kill_restart: HDF5 {n} rows equal: {same}; trajectory.xmf equal: {xa == xb}")
    ok = ok and same and xa == xb
sys.exit(0 if ok else 1)
PY
rows=$(($(wc -l <"$tmp/ref/energy.csv") - 1))
echo "kill_restart: $rows rows; $fail failure(s)"
exit $((fail > 0))
