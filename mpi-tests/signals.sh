#!/bin/sh
# Signals (issue 12.4): SIGTERM or SIGUSR1 to one rank of a 2-rank run, or to mpirun, ends every
# rank after the step with a checkpoint, run.json (stopped by the signal, incomplete) and one
# stderr line, within 10 s; the exit code is 10 where the launcher passes the ranks' code on
# (Open MPI 4.1's mpirun does for a signal to a rank and for SIGUSR1 it forwards; for its own
# SIGTERM it ends the job itself and exits 1, measured: docs/hardening.md "Signals"). The run
# then continues from the checkpoint to a near end time, and its energy.csv and trajectory.csv
# equal an uninterrupted run's to the same end time byte for byte.
#
#   signals.sh MBSPAR CONFIGS_DIR MPIEXEC NPFLAG [PREFLAGS...]
#
# MBS_SIGNALS_MAXMS: the bound on the time to exit (10000 ms).
# MBS_SIGNALS_NP=N: N ranks instead of 2 (signals.np8, signals.np16: oversubscribed, label slow);
# the rank cases then signal rank N-1 and rank 0, and SIGINT is sent to rank N-1 too.
# MBS_SIGNALS_METHOD=M: solver.method = M (signals.np8/np16: schur, so that every rank computes;
# by default auto, which runs this small chain on rank 0 while the others wait).
mbspar=$1
cfg=$2/chain.cfg
mpiexec=$3
npflag=$4
shift 4
pre="$*"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_signals
export OMPI_MCA_orte_execute_quiet=1
np=${MBS_SIGNALS_NP:-2}
method=${MBS_SIGNALS_METHOD:-auto}

mpi2() {
  # shellcheck disable=SC2086
  "$mpiexec" "$npflag" "$np" $pre "$mbspar" run "$cfg" --quiet --set model.chain.n=24 \
    --set output.every=1 --set solver.method="$method" "$@"
}

# sig_case NAME SIGNAL TARGET(mpirun|rank0|rank1) WANT_RC
sig_case() {
  name=$1
  sig=$2
  target=$3
  want=$4
  out="$tmp/$name"
  # mpiexec itself in the background (not a function: that would be a subshell)
  # shellcheck disable=SC2086
  "$mpiexec" "$npflag" "$np" $pre "$mbspar" run "$cfg" --quiet --set model.chain.n=24 \
    --set output.every=1 --set solver.method="$method" --out "$out" --set integrator.t_end=100 \
    2>"$tmp/$name.err" &
  launcher=$!
  n=0
  while [ "$(wc -l 2>/dev/null <"$out/energy.csv" || echo 0)" -lt 5 ] && [ $n -lt 600 ]; do
    sleep 0.1
    n=$((n + 1))
  done
  pid=$launcher
  if [ "$target" != mpirun ]; then
    pid=
    for p in $(pgrep -P "$launcher"); do
      r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
      [ "rank$r" = "$target" ] && pid=$p
    done
    [ -n "$pid" ] || {
      bad "$name: no process of $target"
      kill -9 "$launcher"
      return
    }
  fi
  t0=$(date +%s%N)
  kill "-$sig" "$pid"
  wait "$launcher"
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  echo "signals: $name: SIG$sig to $target: exit $rc after $ms ms"
  [ "$rc" -eq "$want" ] || bad "$name: exit $rc (want $want); stderr: $(cat "$tmp/$name.err")"
  [ $ms -lt "${MBS_SIGNALS_MAXMS:-10000}" ] || bad "$name: took $ms ms"
  [ -f "$out/checkpoint.bin" ] || bad "$name: no checkpoint"
  grep -q "SIG$sig received: stopped at t = " "$tmp/$name.err" || bad "$name: message"
  # a signal to mpirun itself can make Open MPI 4.1's event library (libevent, in the launcher or
  # a rank's runtime) print "[warn] Epoll MOD(1) on fd N failed ... Bad file descriptor" while
  # the job's sockets are torn down (seen once in CI under load, 2026-11-27): Open MPI's line,
  # not mbspar's, so it is reported and not counted there; mbspar's own stderr must still be the
  # one line
  err=$tmp/$name.err
  ompi_warn='^\[warn\] Epoll '
  if [ "$target" = mpirun ] && grep -q "$ompi_warn" "$err"; then
    echo "signals: $name: the launcher printed: $(grep "$ompi_warn" "$err")"
    grep -v "$ompi_warn" "$err" >"$err.own"
    err=$err.own
  fi
  [ "$(grep -c . "$err")" -eq 1 ] || bad "$name: stderr not one line: $(cat "$tmp/$name.err")"
  tcut=$(python3 - "$out/run.json" "SIG$sig" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
ok = r["complete"] is False and r["stopped"] == sys.argv[2]
print(r["t"] + 0.003 if ok else "bad")
PY
  )
  [ "$tcut" != bad ] || {
    bad "$name: run.json not marked stopped by SIG$sig"
    return
  }
  mpi2 --out "$out" --set integrator.t_end="$tcut" --restart "$out/checkpoint.bin" ||
    bad "$name: the restart failed"
  mpi2 --out "$tmp/$name.ref" --set integrator.t_end="$tcut" || bad "$name: reference run failed"
  for f in energy.csv trajectory.csv; do
    cmp -s "$out/$f" "$tmp/$name.ref/$f" || bad "$name: $f differs from an uninterrupted run's"
  done
  echo "signals: $name: continued to t = $tcut, $(($(wc -l <"$out/energy.csv") - 1)) rows" \
    "equal to an uninterrupted run's"
}

last=rank$((np - 1))
sig_case term_last TERM "$last" 10
sig_case usr1_rank0 USR1 rank0 10
sig_case usr1_mpirun USR1 mpirun 10
# SIGINT (Ctrl-C) to a rank: as SIGTERM (issue 32)
sig_case int_last INT "$last" 10
# Open MPI 4.1.x: mpirun's own SIGTERM kills the job and exits 1 whatever the ranks return; the
# ranks still stop after the step with the checkpoint (the code is checked so that a change of
# the launcher's behaviour is noticed and docs/hardening.md updated)
sig_case term_mpirun TERM mpirun 1
echo "signals: $fail failure(s)"
exit $((fail > 0))
