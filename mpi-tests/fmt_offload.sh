#!/bin/sh
# Output rows formatted by a waiting rank (issue 32, docs/model.md "Choosing the method"): when
# solver.method = auto runs a serial method on rank 0 of several ranks, rank 1 formats the CSV
# trajectory rows (rank 0 a share of each row while it would wait). The files are the bytes of
# the one-rank run and of the run without the offload (MBSPAR_FMT_RANK=0), also with fixed
# shares of rank 0 (MBSPAR_FMT_SPLIT) and with a restart from a checkpoint; a write error on rank 0
# mid-run ends the job with exit 3 and one line; SIGTERM to the formatting rank stops the run
# with a checkpoint (exit 10) and files of whole, equal rows; SIGKILL to it ends the job (no hang).
# usage: fmt_offload.sh MBSPAR CONFIGS_DIR PYTHON3 MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1 cfg=$2/chain.cfg py=$3 mpiexec=$4 npflag=$5
shift 5
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_fmtoff
export OMPI_MCA_orte_execute_quiet=1
small="--quiet --set model.chain.n=16 --set integrator.t_end=0.2 --set output.every=1"
files="trajectory.csv energy.csv bodies.csv"
idle() { # auto's choice in run.json: "aba 1" = aba on rank 0 while the others wait
  "$py" -c 'import json,sys; s=json.load(open(sys.argv[1]))["solver"]
print(s["method"], int(s.get("auto_idle_ranks", 0) > 0))' "$1/run.json"
}
same() { # same DIR1 DIR2 WHAT
  for f in $files; do
    cmp -s "$1/$f" "$2/$f" || bad "$3: $f differs"
  done
}
# shellcheck disable=SC2086 # $small and "$@" (mpiexec preflags) are word lists
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" $small --out "$tmp/a"
[ "$(idle "$tmp/a")" = "aba 1" ] || bad "chain n=16 at 2 ranks: want aba on rank 0, got $(idle "$tmp/a")"
# shellcheck disable=SC2086
run 0 "$mbspar" run "$cfg" $small --set solver.method=aba --out "$tmp/b"
same "$tmp/a" "$tmp/b" "offloaded rows against one rank"
[ "$(wc -l <"$tmp/a/trajectory.csv")" -eq 202 ] || bad "want 201 rows and a header"
# shellcheck disable=SC2086
MBSPAR_FMT_RANK=0 run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" $small --out "$tmp/c"
same "$tmp/a" "$tmp/c" "offloaded rows against MBSPAR_FMT_RANK=0"
# rank 0 formats a share of each row itself while it would wait (adaptive); fixed shares: the
# same bytes (the first field only, half, all but the last)
for f in 0.001 0.5 1; do
  # shellcheck disable=SC2086
  MBSPAR_FMT_SPLIT=$f run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" $small --out "$tmp/p$f"
  same "$tmp/p$f" "$tmp/b" "rank 0's share $f of each row"
done
# a restart from a checkpoint at step 100 continues the files to the same bytes
# shellcheck disable=SC2086
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" $small --set integrator.t_end=0.1 \
  --set output.checkpoint_every=100 --out "$tmp/r"
# shellcheck disable=SC2086
run 0 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" $small --restart "$tmp/r/checkpoint.bin"
for f in trajectory.csv energy.csv; do
  cmp -s "$tmp/r/$f" "$tmp/b/$f" || bad "restart with offloaded rows: $f differs"
done
# rank 0 fails mid-run (the 40th write point: a write error): exit 3, one line, no hang
# shellcheck disable=SC2086
MBS_FAULT=write:40@0 run 3 timeout 60 "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" $small \
  --out "$tmp/f"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "write error: want one stderr line, got $(cat "$tmp/err")"
# a signal to the formatting rank (1): SIGTERM stops the run (relayed), SIGKILL ends the job
for sig in TERM KILL; do
  # shellcheck disable=SC2086
  "$mpiexec" "$npflag" 2 "$@" "$mbspar" run "$cfg" $small --set integrator.t_end=1000 \
    --out "$tmp/s$sig" 2>"$tmp/s$sig.err" &
  launcher=$!
  n=0
  while [ "$(wc -l 2>/dev/null <"$tmp/s$sig/energy.csv" || echo 0)" -lt 5 ] && [ $n -lt 600 ]; do
    sleep 0.1
    n=$((n + 1))
  done
  for p in $(pgrep -P "$launcher"); do
    r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    [ "$r" = 1 ] && kill -"$sig" "$p"
  done
  n=0 # the job must end: 60 s at most
  while kill -0 "$launcher" 2>/dev/null && [ $n -lt 600 ]; do
    sleep 0.1
    n=$((n + 1))
  done
  if kill -0 "$launcher" 2>/dev/null; then
    bad "SIG$sig to the formatting rank: the job hangs"
    pkill -KILL -P "$launcher"
    kill -KILL "$launcher"
  fi
  wait "$launcher"
  rc=$?
  if [ "$sig" = TERM ]; then
    { [ "$rc" -eq 10 ] && [ -s "$tmp/sTERM/checkpoint.bin" ]; } ||
      bad "SIGTERM to the formatting rank: exit $rc, $(cat "$tmp/sTERM.err")"
    nt=$(($(wc -l <"$tmp/sTERM/trajectory.csv"))) ne=$(($(wc -l <"$tmp/sTERM/energy.csv")))
    { [ "$nt" -eq "$ne" ] && [ "$nt" -gt 5 ]; } || bad "SIGTERM: $nt trajectory, $ne energy lines"
    tail -c 1 "$tmp/sTERM/trajectory.csv" | od -c | grep -q '\\n' || bad "SIGTERM: a cut row"
  else
    [ "$rc" -ne 0 ] || bad "SIGKILL to the formatting rank: exit 0"
  fi
  echo "SIG$sig to the formatting rank: exit $rc"
done
[ "$fail" -eq 0 ] && echo "fmt_offload: passed" || echo "fmt_offload: $fail failure(s)"
[ "$fail" -eq 0 ]
