#!/usr/bin/env bash
# The `slurm` CTest test: a real single-node SLURM on this machine runs the batch scripts.
#
#   mpi-tests/test_slurm.sh SOURCE_DIR MBSPAR_BINARY
#
# 1. starts slurmctld and slurmd (Debian's SLURM 22.05) in the foreground mode (-D) in the
#    background, from a slurm.conf in a fresh temporary directory: AuthType=auth/none and
#    CredType=cred/none (no munge), free ports, state/spool/logs/pid files in that directory, so
#    daemons left from another run cannot clash; no systemd involved;
# 2. waits until `sinfo` shows the node idle;
# 3. submits with sbatch: slurm/single.sbatch running `mbspar run` (2 tasks, srun --mpi=pmix,
#    1000 steps of a 16-link chain); the same once more, interrupted: paused with SIGSTOP, sent
#    SIGUSR1 through the batch shell (as --signal=B:USR1 does), resumed, so that it writes a
#    checkpoint and exits 10, is requeued by the script and restarts from the checkpoint; and
#    slurm/strong.sbatch and slurm/weak.sbatch on tiny models (accel);
# 4. polls each job until it ends (bounded), then checks: state COMPLETED, exit code 0, the
#    job logs, the JSON report (parses, ranks = 2, one affinity record per rank, final t), the
#    requeue sequence (exit 10, scontrol requeue, Restarts=1, --restart), the restarted run's
#    final state and trajectory rows against the uninterrupted run (identical), the CSVs;
# 5. ALWAYS (trap EXIT) cancels its jobs, kills what still runs under its daemons and stops the
#    daemons it started, by pid.
# Missing SLURM binaries are a failure (scripts/setup.sh installs them), never a skip.
# Environment: MBS_SLURM_KEEP=1 keeps the temporary directory (logs) for inspection;
# MBS_SLURM_EXEC="COMMAND" runs COMMAND (bash -c, in the jobs directory, with SLURM_CONF, MBS_BIN
# and MBS_SRC = SOURCE_DIR exported) once the node is idle, instead of the checks, then stops the
# cluster as usual: a way to try the batch scripts by hand against a throw-away SLURM, e.g.
# MBS_SLURM_EXEC=bash for a shell. SLURM_*, SBATCH_*, SRUN_* variables of the caller (e.g. when
# run inside a real SLURM job) are dropped first.
set -euo pipefail
while read -r v; do
  unset "$v"
done < <(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC)_' || true)

src=${1:?usage: test_slurm.sh SOURCE_DIR MBSPAR_BINARY}
bin=${2:?usage: test_slurm.sh SOURCE_DIR MBSPAR_BINARY}
src=$(cd "$src" && pwd)
t0=$(date +%s)

say() { echo "test_slurm: $*"; }
fail() {
  echo "test_slurm: FAIL: $*" >&2
  exit 1
}

missing=()
for b in slurmctld slurmd sbatch squeue sinfo scontrol scancel srun python3; do
  command -v "$b" >/dev/null 2>&1 || missing+=("$b")
done
if [ ${#missing[@]} -ne 0 ]; then
  fail "not installed: ${missing[*]} -- install SLURM with scripts/setup.sh (Debian packages slurmctld slurmd slurm-client munge)"
fi
[ -x "$bin" ] || fail "mbspar binary '$bin' not executable"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mbs-slurm.XXXXXX")
chmod 755 "$tmp"
export SLURM_CONF=$tmp/slurm.conf
ctld_pid=
slurmd_pid=

# every process of this test's cluster carries SLURM_CONF=$tmp/slurm.conf in its environment
# (slurmd, slurmstepd, the batch shells, srun, the ranks): find them by that, not by name
cluster_pids() {
  local e p
  for e in /proc/[0-9]*/environ; do
    p=${e#/proc/}
    p=${p%/environ}
    [ "$p" = "$$" ] && continue
    if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF"; then
      echo "$p"
    fi
  done
}

stop_pid() { # pid: TERM, wait up to 10 s, then KILL
  local pid=$1
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -9 "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$? p left
  trap - EXIT INT TERM
  set +e
  if [ -n "$ctld_pid" ] && kill -0 "$ctld_pid" 2>/dev/null; then
    scancel --quiet --full --user="$(id -un)" 2>/dev/null
    for _ in $(seq 1 25); do # give the jobs up to 5 s to end
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  stop_pid "$slurmd_pid"
  stop_pid "$ctld_pid"
  # anything of this cluster still alive (a stuck slurmstepd or rank): kill it by pid
  for _ in 1 2 3; do
    left=$(cluster_pids)
    [ -z "$left" ] && break
    for p in $left; do
      say "killing leftover process $p ($({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null))"
      kill -9 "$p" 2>/dev/null
    done
    sleep 0.5
  done
  if [ "$rc" -ne 0 ]; then
    for f in "$tmp"/slurmctld.log "$tmp"/slurmd.log; do
      [ -r "$f" ] && {
        echo "---- last lines of $f"
        tail -n 25 "$f"
      }
    done
  fi
  touch "$tmp/cleaned"
  if [ "${MBS_SLURM_KEEP:-0}" = 1 ] || [ "$rc" -ne 0 ]; then
    say "logs kept in $tmp"
  else
    rm -rf "$tmp"
  fi
  say "daemons stopped; total $(($(date +%s) - t0)) s; exit $rc"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A SIGKILL (e.g. CTest's timeout) skips the traps: a detached watchdog then kills what is left
# of this cluster, found by its SLURM_CONF, once this shell is gone without having cleaned up.
cat >"$tmp/watchdog.sh" <<'EOF'
parent=$1 conf=$2
while kill -0 "$parent" 2>/dev/null; do sleep 1; done
[ -e "$conf" ] && [ ! -e "${conf%/*}/cleaned" ] || exit 0
for _ in 1 2 3 4 5; do # repeat: a step may start while the first pass runs
  found=0
  for e in /proc/[0-9]*/environ; do
    p=${e#/proc/}
    p=${p%/environ}
    if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "SLURM_CONF=$conf"; then
      kill -9 "$p" 2>/dev/null && echo "watchdog: killed $p" >>"${conf%/*}/watchdog.log"
      found=1
    fi
  done
  [ "$found" = 0 ] && break
  sleep 1
done
EOF
setsid -f env -u SLURM_CONF bash "$tmp/watchdog.sh" "$$" "$SLURM_CONF" </dev/null >/dev/null 2>&1

# two free TCP ports, distinct (the kernel picks them; a clash in the short gap is unlikely)
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

# the node as slurmd sees it (sockets, cores, threads), under the name "localhost"
hw=$(slurmd -C | head -n 1 | tr ' ' '\n' |
  grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' | tr '\n' ' ')
ncpu=$(nproc)
[ -n "$hw" ] || hw="CPUs=$ncpu"

mkdir -p "$tmp/state" "$tmp/spool" "$tmp/jobs" "$tmp/tmpfs"
# a private copy of the binary: a rebuild of the tree during the test cannot pull it away
cp "$bin" "$tmp/mbspar" || fail "cannot copy $bin"
bin=$tmp/mbspar
cat >"$SLURM_CONF" <<EOF
# written by mpi-tests/test_slurm.sh
ClusterName=mbs$$
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
MinJobAge=600
FirstJobId=$((1000 + RANDOM % 30000 * 1000))
TmpFS=$tmp/tmpfs
KillWait=5
AuthInfo=cred_expire=5
InactiveLimit=0
SchedulerParameters=sched_interval=2
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=localhost NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
say "cluster in $tmp (ports $ctld_port/$slurmd_port, node: $hw)"

slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.stdout" 2>&1 &
ctld_pid=$!
slurmd -D -N localhost -f "$SLURM_CONF" >"$tmp/slurmd.stdout" 2>&1 &
slurmd_pid=$!

# wait (at most 30 s) for the node to be idle
state=
for _ in $(seq 1 150); do
  kill -0 "$ctld_pid" 2>/dev/null || fail "slurmctld exited: $(tail -n 5 "$tmp/slurmctld.stdout" "$tmp/slurmctld.log" 2>/dev/null)"
  kill -0 "$slurmd_pid" 2>/dev/null || fail "slurmd exited: $(tail -n 5 "$tmp/slurmd.stdout" "$tmp/slurmd.log" 2>/dev/null)"
  state=$(sinfo -h -N -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || fail "node not idle after 30 s (sinfo: '$state')"
say "slurmctld pid $ctld_pid, slurmd pid $slurmd_pid, node idle after $(($(date +%s) - t0)) s"

if [ -n "${MBS_SLURM_EXEC:-}" ]; then
  say "running MBS_SLURM_EXEC in $tmp/jobs: $MBS_SLURM_EXEC"
  (cd "$tmp/jobs" && MBS_BIN=$bin MBS_SRC=$src bash -c "$MBS_SLURM_EXEC")
  exit $?
fi

# submit from the jobs directory: relative paths in the scripts resolve there
submit() { # name script [script args...]; env MBS_* as set by the caller
  local name=$1
  shift
  (cd "$tmp/jobs" && sbatch --parsable --job-name="$name" --output="$tmp/jobs/$name.out" "$@") |
    cut -d';' -f1
}

# wait for a job to leave the queue, at most timeout_s of wall time; sets job_res to its final
# "JobState ExitCode". Runs in this shell (no command substitution around it), so an INT/TERM
# trap fires within one short poll.
job_res=
wait_job() { # id timeout_s
  local id=$1 deadline=$(($(date +%s) + $2)) info st
  while :; do
    info=$(scontrol -o show job "$id" 2>/dev/null || true)
    st=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
    case "$st" in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
      job_res="$st $(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"$info")"
      return 0
      ;;
    esac
    if [ "$(date +%s)" -ge "$deadline" ]; then
      job_res="NOT_DONE_AFTER_${2}s ${st:-unknown}"
      return 0
    fi
    sleep 0.2
  done
}

expect_ok() { # name id timeout_s
  local name=$1 id=$2
  wait_job "$id" "$3"
  if [ "$job_res" != "COMPLETED 0:0" ]; then
    echo "---- $name job log:" >&2
    cat "$tmp/jobs/$name.out" >&2 2>/dev/null || true
    fail "job $name ($id) ended as '$job_res', expected 'COMPLETED 0:0'"
  fi
  say "job $name ($id): $job_res after $(($(date +%s) - t0)) s"
}

cfg=$src/configs/chain.cfg
export MBS_BIN=$bin
# a short simulation: 16 links, 40000 RK4 steps, a row every 100. About 2 s on 2 idle cores
# (1000 steps took 0.05 s with the exact solver, too short: the requeue job finished between
# the test seeing its first rows and the SIGSTOP, and the test failed on a race, not a bug)
t_end=4.0
# schur named: the distributed run is what this checks (auto would run aba on rank 0 alone)
run_set=(--set model.chain.n=16 --set solver.method=schur --set integrator.method=rk4 --set integrator.dt=1e-4
  --set "integrator.t_end=$t_end" --set output.every=100 --set output.checkpoint_every=0)

# --- jobs, submitted at once (FIFO on the node's cpus) --------------------------------------------
# 1. single.sbatch: `mbspar run`, 2 tasks, srun --mpi=pmix, uninterrupted (also the reference)
out1=$tmp/out/single
id1=$(MBS_VERB=run submit single --ntasks=2 "$src/slurm/single.sbatch" "$cfg" "$out1" "${run_set[@]}")
[ -n "$id1" ] || fail "sbatch of single.sbatch returned no job id"
# 2. the same run, to be stopped by SIGUSR1: checkpoint, exit 10, requeue, restart, finish
out2=$tmp/out/requeue
id2=$(MBS_VERB=run submit requeue --ntasks=2 "$src/slurm/single.sbatch" "$cfg" "$out2" "${run_set[@]}")
# 3./4. strong and weak scaling scripts on tiny models (accel)
id3=$(submit strong --ntasks=2 "$src/slurm/strong.sbatch" "$cfg" "$tmp/out/strong" \
  --set model.chain.n=64 --repeat 3)
id4=$(MBS_BODIES_PER_RANK=32 submit weak --ntasks=2 "$src/slurm/weak.sbatch" "$cfg" \
  "$tmp/out/weak" --repeat 3)
say "submitted jobs: single $id1, requeue $id2, strong $id3, weak $id4"

# --- 1. the single run ------------------------------------------------------------------------------
expect_ok single "$id1" 120
log1=$tmp/jobs/single.out
grep -q 'srun --mpi=pmix' "$log1" || fail "single log does not show the srun --mpi=pmix launch"
grep -q 'mbspar exited with code 0' "$log1" || fail "single log lacks 'mbspar exited with code 0'"
grep -q 'rank 1 host' "$log1" || fail "single log lacks the per-rank hwloc report"
[ -s "$out1/run.json" ] || fail "no JSON report $out1/run.json"
python3 - "$out1/run.json" "$t_end" <<'EOF' || fail "JSON report check failed ($out1/run.json)"
import json, sys
d = json.load(open(sys.argv[1]))
t_end = float(sys.argv[2])
assert d["ranks"] == 2, "ranks = %r, expected 2" % d["ranks"]
aff = d["affinity"]
assert [a["rank"] for a in aff] == [0, 1], "affinity records: %r" % aff
r = d["results"]
assert abs(r["t"] - t_end) < 1e-12, "final t = %r, expected %r" % (r["t"], t_end)
assert len(r["q"]) == 16 and len(r["qd"]) == 16, "q/qd lengths"
print("test_slurm: single: run.json ok: ranks 2, t = %r, cpusets %s, binding %s" % (
    r["t"], [a["cpuset"] for a in aff], [a["binding"] for a in aff]))
EOF

# --- 2. signal -> checkpoint -> exit 10 -> scontrol requeue -> restart from the checkpoint ---------
# wait (bounded) until job 2 runs and has written output rows
deadline=$(($(date +%s) + 90))
while :; do
  st=$(scontrol -o show job "$id2" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  rows=0
  [ -r "$out2/trajectory.csv" ] && rows=$(wc -l <"$out2/trajectory.csv")
  [ "$st" = RUNNING ] && [ "$rows" -ge 2 ] && break
  case "$st" in
  RUNNING | PENDING | CONFIGURING) ;;
  *) fail "requeue job $id2 is '$st' before the signal" ;;
  esac
  [ "$(date +%s)" -lt "$deadline" ] || fail "requeue job $id2 wrote no output rows within 90 s (state $st)"
  sleep 0.1
done

# the ranks of job $id2: this cluster's processes running the binary with that job id
rank_pids() {
  local p
  for p in $(cluster_pids); do
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$bin" ] || continue
    if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qxF "SLURM_JOB_ID=$id2"; then
      echo "$p"
    fi
  done
  return 0 # (set -e: a false last test must not end the script without a message)
}
# wait until every rank satisfies a test on /proc/PID/status (bounded 20 s)
wait_ranks() { # description awk-condition
  local end=$(($(date +%s) + 20)) p ok
  while :; do
    ok=0
    pids=$(rank_pids)
    if [ "$(wc -w <<<"$pids")" = 2 ]; then
      ok=1
      for p in $pids; do
        awk "$2" "/proc/$p/status" 2>/dev/null || ok=0
      done
    fi
    [ "$ok" = 1 ] && return 0
    st=$(scontrol -o show job "$id2" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    [ "$st" = RUNNING ] || fail "requeue job $id2 is '$st' while waiting for its ranks to be $1 (the run ended first: too fast here? raise t_end in this test)"
    [ "$(date +%s)" -lt "$end" ] || fail "requeue job $id2: ranks not $1 within 20 s (pids: ${pids:-none})"
    sleep 0.1
  done
}
# Make the stop independent of the machine's speed: pause the ranks (SIGSTOP to the job step),
# send SIGUSR1 the way SLURM's --signal=B:USR1 does (to the batch shell, which forwards it via
# srun), wait until it is pending at both ranks, then let them continue: they must stop mid-run.
scancel --signal=STOP "$id2" || fail "scancel --signal=STOP failed"
# shellcheck disable=SC2016 # awk programs
wait_ranks stopped '/^State:/ { exit !($2 == "T") }'
say "job requeue ($id2): ranks ${pids//$'\n'/ } paused at $rows trajectory lines; scancel --batch --signal=USR1 $id2"
scancel --batch --signal=USR1 "$id2" || fail "scancel --batch --signal=USR1 failed"
# SIGUSR1 is signal 10: bit 0x200 of the pending masks
# shellcheck disable=SC2016
wait_ranks "holding a pending SIGUSR1" '/^(ShdPnd|SigPnd):/ { m = m substr($2, length($2) - 2, 1) } END { exit !(m ~ /[2367abefABEF]/) }'
scancel --signal=CONT "$id2" || fail "scancel --signal=CONT failed"

# 3./4. the scaling jobs run while the requeued job waits for its begin time
check_csv() { # name csv rows
  local name=$1 csv=$2 rows=$3
  [ -s "$csv" ] || fail "$name: no CSV $csv"
  python3 - "$csv" "$rows" <<'EOF' || fail "$name: CSV check failed ($csv)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = int(sys.argv[2])
assert len(rows) == want, "%d rows, expected %d" % (len(rows), want)
for r in rows:
    assert float(r["time_per_eval_s"]) > 0, r
print("test_slurm: %s: %d rows, ranks %s, time_per_eval_s %s" % (
    sys.argv[1], len(rows), [r["ranks"] for r in rows], [r["time_per_eval_s"] for r in rows]))
EOF
}
expect_ok strong "$id3" 90
check_csv strong "$tmp/out/strong/strong.csv" 3 # aba baseline + jcg at 1 and 2 ranks
expect_ok weak "$id4" 60
check_csv weak "$tmp/out/weak/weak.csv" 2 # 1 and 2 ranks

expect_ok requeue "$id2" 120
log2=$tmp/jobs/requeue.out
if ! grep -q 'mbspar exited with code 10' "$log2" && grep -q 'received SIGUSR1' "$log2"; then
  cat "$log2" >&2
  fail "the run ended before SIGUSR1 reached it (too fast here? raise t_end in this test)"
fi
for want in 'received SIGUSR1' 'mbspar exited with code 10' "scontrol requeue $id2" \
  'restart count 1' "restarting from $out2/checkpoint.bin" 'mbspar exited with code 0'; do
  grep -qF "$want" "$log2" || {
    cat "$log2" >&2
    fail "requeue job log lacks '$want'"
  }
done
restarts=$(scontrol -o show job "$id2" | sed -n 's/.* Restarts=\([0-9]*\).*/\1/p')
[ "$restarts" = 1 ] || fail "requeue job: Restarts=$restarts, expected 1"
# the restarted run ends in exactly the state of the uninterrupted one (same rank count)
# and every trajectory row of the uninterrupted run appears, byte for byte, in the restarted one
python3 - "$out1" "$out2" <<'EOF' || fail "restarted run differs from the uninterrupted run"
import json, sys
a, b = (json.load(open(d + "/run.json"))["results"] for d in sys.argv[1:3])
assert a["t"] == b["t"], "t %r vs %r" % (a["t"], b["t"])
assert a["q"] == b["q"], "final q differs"
assert a["qd"] == b["qd"], "final qd differs"
ta, tb = (open(d + "/trajectory.csv").read().splitlines() for d in sys.argv[1:3])
missing = [r for r in ta if r not in set(tb)]
assert not missing, "%d trajectory rows differ, first at t = %s" % (len(missing), missing[0].split(",")[0])
print("test_slurm: requeue: restarted run ends at t = %r with q, qd identical to the uninterrupted run;"
      " all %d trajectory rows identical (%d extra: the stop time)" % (b["t"], len(ta), len(tb) - len(ta)))
EOF

say "PASS in $(($(date +%s) - t0)) s"
