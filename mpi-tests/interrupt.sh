#!/bin/bash
# Never lose a run (issue 32): SIGINT (Ctrl-C) is handled like SIGTERM (the step is finished, a
# checkpoint, run.json and one stderr line written, exit 10) and a second SIGINT ends the run at
# once.
#
#   interrupt.sh MBSPAR CONFIGS_DIR MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1
cfg=$2/chain.cfg
mpiexec=$3
npflag=$4
shift 4
pre="$*"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_interrupt
export OMPI_MCA_orte_execute_quiet=1

# wait_file FILE: until FILE exists (at most 60 s)
wait_file() {
  n=0
  while [ ! -s "$1" ] && [ $n -lt 600 ]; do
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

# 1. SIGINT to a run without mpirun: checkpoint, run.json stopped "SIGINT", one line, exit 10
out=$tmp/int1
"$mbspar" run "$cfg" --out "$out" --quiet --set model.chain.n=16 --set integrator.t_end=1000 \
  2>"$tmp/int1.err" &
pid=$!
wait_file "$out/energy.csv"
sleep 0.3
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

# 2. a second SIGINT ends at once: a run whose steps take long (jcg without warm start on 1000
#    links to 1e-12: about a second per step) gets two SIGINTs 0.05 s apart within a step; it
#    dies by SIGINT (status 130) without a checkpoint
out=$tmp/int2
"$mbspar" run "$cfg" --out "$out" --quiet --set model.chain.n=1000 --set solver.method=jcg \
  --set solver.warm_start=none --set solver.tol=1e-12 --set integrator.t_end=1000 \
  2>"$tmp/int2.err" &
pid=$!
wait_file "$out/energy.csv"
kill -INT $pid
sleep 0.05
kill -INT $pid
wait_pid $pid
rc=$?
echo "interrupt: two SIGINTs: exit $rc; stderr: $(cat "$tmp/int2.err")"
[ $rc -eq 130 ] || bad "two SIGINTs: exit $rc (want 130: ended by SIGINT)"
[ ! -f "$out/checkpoint.bin" ] || bad "two SIGINTs: a checkpoint was written"
grep -q "second SIGINT: stopping at once" "$tmp/int2.err" || bad "two SIGINTs: message"

echo "interrupt: $fail failure(s)"
exit $((fail > 0))
