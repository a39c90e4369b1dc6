#!/usr/bin/env bash
# Issue 35's SMPI acceptance points in one command (docs/scaling.md, "Issue 35: the SMPI points
# in three compute modes"). Reports, never asserts.
#
#   bench/smpi/issue35.sh [--pairs N] [--repeat K] [--no-big] [--no-warm] [--flops64 SPEED]
#                         [--speeds FSPEED,WSPEED] [REAL_BUILD_DIR]
#                                                                       (default <repo>/build)
#
# The 65536-link chain (configs/chain.cfg, q0 = 0.01, qd0 = 0.5) on 64 simulated hosts and the
# 2^20-link chain on 1024 (bench/smpi/platform.sh), solver.method = schur, each in four modes:
#   flops    compute charged by counted flops (build-smpi/mbspar_smpi_flops), the host speed set so
#            that one simulated host equals the real `mpirun -n 1` schur time of the 65536 chain
#            measured here (as bench/smpi/schur.sh --flops); deterministic, one pair
#   cold     SMPI times each compute block (build-smpi/mbspar_smpi, 1:1 with this machine): every
#            rank's block starts after the other ranks' blocks evicted its data (one process)
#   warm     the same, but after every MPI call the rank re-reads its own live heap blocks,
#            untimed, before its next block is timed (build-smpi/mbspar_smpi_warm,
#            bench/smpi/warmwrap.c): a real node's cache holds its own rank's data
#   control  the warm binary with the re-read off (MBS_SMPI_WARM=0): the same own timer without the
#            re-read, so warm - control is the re-read alone (control - cold: the two timers)
#   flops-warm  counted flops at the time per flop of a real, warm one-rank run of a rank's share
#            (the 1024-link chain, `mpirun -n 1`, steady: its data stays in the cache between
#            evaluations as a real rank's does); the per-block costs of the simulation (cold
#            caches, 64 copies of the code) do not enter; one pair. Checked against real
#            `mpirun -n 2` runs it was not calibrated on by bench/smpi/validate.py
# Real runs (serial ABA, the baseline of every speedup; the one-rank schur runs that set the flop
# modes' host speeds) are timed by their CPU time: two launches of --repeat 1 and K, (CPU(K) -
# CPU(1)) / (K - 1) from /usr/bin/time, best of 2 pairs. On this shared VM the wall clock of a
# launch includes the time it waited for a core (at load 15 the 65536 chain's ABA took 20-42 ms
# wall per evaluation against ~8.5 ms quiet), its CPU time does not; single-threaded, the two
# agree on a quiet machine. SMPI's own block timer is a CPU timer too.
# Each SMPI point is pairs of launches with --repeat 1 and 1 + K (the steady time per
# evaluation without the first, as in schur.sh); timed modes N pairs (default 3; one at 2^20),
# the best and the median reported.
# --no-big: skip the 2^20 points (flops, flops-warm and cold only there: the warm re-reads of 1024
#   ranks would take hours).
# --no-warm: skip the warm and control modes at 64 hosts (their re-reads are most of the run's
#   time: ~170 s per launch); flops, flops-warm and cold remain.
# --flops64 SPEED: only the flops point at 64 hosts (one pair, seconds per launch here), at the
#   given host speed (e.g. 3.87Gf, the quiet calibration of docs/scaling.md) instead of one
#   measured here: no real runs, only mbspar_smpi_flops built; the speedup is then taken against
#   the quiet ABA reference by hand (the flop figure is deterministic given SPEED).
# --big-only (with --speeds): the 2^20 points alone.
# --cold-only: the cold timed points alone (no real runs, no flop modes: the speedups against a
#   protocol ABA median by hand, e.g. calibrate.py's): 64 hosts (--pairs pairs) and, unless
#   --no-big, 2^20 on 1024 hosts (one pair); with --big-only the 2^20 point alone.
# --speeds FSPEED,WSPEED: the flop modes only (flops and flops-warm at 64 hosts and, unless
#   --no-big, at 1024), at host speeds measured before (e.g. by a quiet run of this script: its
#   jsonl's baseline record), without real runs: the points are deterministic given the speeds, so
#   they can be run on a loaded machine; the speedups against that run's ABA by hand.
# Writes bench/results/smpi_issue35_<UTC>.jsonl and .md (the load average at every launch).
# The flop modes' figure the docs quote takes F and W by the benchmark protocol instead (medians
# of interleaved in-process timings): python3 bench/smpi/calibrate.py (it runs --speeds F,W).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
pairs=3
rep=10
big=1
warm=1
bigonly=0
coldonly=0
real=""
f64=""
speeds=""
while (($#)); do
  case $1 in
  --pairs)
    pairs=${2:?--pairs N}
    shift
    ;;
  --repeat)
    rep=${2:?--repeat K}
    shift
    ;;
  --no-big) big=0 ;;
  --no-warm) warm=0 ;;
  --big-only) bigonly=1 ;;
  --cold-only) coldonly=1 ;;
  --flops64)
    f64=${2:?--flops64 SPEED}
    shift
    ;;
  --speeds)
    speeds=${2:?--speeds FSPEED,WSPEED}
    shift
    ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  -*)
    echo "smpi/issue35.sh: unknown option '$1' (see --help)" >&2
    exit 2
    ;;
  *) real=$1 ;;
  esac
  shift
done
real=${real:-$here/build}
command -v smpirun >/dev/null 2>&1 || {
  echo "smpi/issue35.sh: smpirun not found: install libsimgrid-dev (scripts/setup.sh --with-smpi); skipped" >&2
  exit 0
}
report=$here/bench/smpi/schur_report.py
summary=$here/bench/smpi/issue35_report.py
sbuild=$here/build-smpi
t0=$(date +%s)
if [[ -n $f64 || -n $speeds ]]; then
  bash "$here/bench/smpi/build.sh" --flops-only "$sbuild" >&2
elif ((coldonly)); then
  bash "$here/bench/smpi/build.sh" "$sbuild" >&2
else
  bash "$here/bench/smpi/build.sh" "$sbuild" >&2
  if [[ ! -f $real/CMakeCache.txt ]]; then
    cmake -S "$here" -B "$real" -DCMAKE_BUILD_TYPE=Release -DMBS_BUILD_PEERS=OFF >/dev/null
  fi
  cmake --build "$real" -j2 --target mbspar >/dev/null
fi
mbspar=$real/mbspar
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results"
out=$here/bench/results/smpi_issue35_$stamp.jsonl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load() { cut -d' ' -f1 /proc/loadavg; }
log() { echo "smpi/issue35.sh [$(date -u +%H:%M:%S), load $(load)]: $*" >&2; }
margs=()
model() { margs=("$here/configs/chain.cfg" --set "model.chain.n=$1" --set model.chain.q0=0.01 --set model.chain.qd0=0.5); }
rec() {
  python3 "$report" record "$1" --kind "$2" --study "$3" --family chain --size "$4" --P "$5" \
    --time "$(tail -1 "$work/time")" --load "$(load)" --note "${6:-}" >>"$out"
}
timed() { /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >"$work/log" 2>&1; }

# cpusteady J1 J2 : CPU seconds per evaluation without the first, from two launches of K1 < K2
# evaluations (their records' user + system time, /usr/bin/time; the setup cancels): on a loaded
# machine the wall clock of a launch includes the time it waited for a core, its CPU time does
# not (a single-threaded rank: CPU time = its compute)
cpusteady() {
  python3 -c 'import json,sys
a,b=[json.loads(open(f).read().splitlines()[-1]) for f in sys.argv[1:3]]
print("%.6g" % (((b["launch_user_s"]+b["launch_sys_s"])-(a["launch_user_s"]+a["launch_sys_s"]))/(b["repeat"]-a["repeat"])))' "$1" "$2"
}

# realrun LABEL N K METHOD [PREFIX...] : 2 pairs of launches (--repeat 1 and K) of [PREFIX] mbspar
# accel on the N-link chain with solver.method METHOD; prints the best pair's CPU-steady seconds
# per evaluation
realrun() {
  local label=$1 n=$2 k2=$3 meth=$4 i k t best=""
  shift 4
  model "$n"
  margs+=(--set "solver.method=$meth")
  for i in 1 2; do
    for k in 1 "$k2"; do
      timed "$@" "$mbspar" accel "${margs[@]}" --repeat "$k" --quiet --json "$work/r_$k.json" ||
        { log "$label N=$n failed: $(tail -2 "$work/log")"; return 1; }
      rec "$work/r_$k.json" real "$label" "$n" 1 "pair $i"
      tail -1 "$out" >"$work/rec_$k.json"
    done
    t=$(cpusteady "$work/rec_1.json" "$work/rec_$k2.json")
    best=$(python3 -c 'import sys; a=[float(x) for x in sys.argv[1:] if x]; print(min(a))' "$t" "$best")
  done
  echo "$best"
}

# sim MODE N P NPAIRS : SMPI pairs of launches (--repeat 1 and 1 + K)
sim() {
  local mode=$1 n=$2 p=$3 np=$4 i k bin=mbspar_smpi spd=1Gf env=() cfg=() k2=$((rep + 1))
  ((p >= 1024)) && k2=$((rep / 2 + 1))
  case $mode in
  flops) bin=mbspar_smpi_flops spd=$fspeed cfg=(--cfg=smpi/simulate-computation:no) ;;
  flops-warm) bin=mbspar_smpi_flops spd=$wspeed cfg=(--cfg=smpi/simulate-computation:no) ;;
  warm) bin=mbspar_smpi_warm cfg=(--cfg=smpi/simulate-computation:no) ;;
  control) bin=mbspar_smpi_warm env=(MBS_SMPI_WARM=0) cfg=(--cfg=smpi/simulate-computation:no) ;;
  esac
  model "$n"
  [[ -f $work/$spd/cluster_$p.xml ]] || bash "$here/bench/smpi/platform.sh" "$p" "$spd" "$work/$spd"
  for ((i = 1; i <= np; i++)); do
    for k in 1 "$k2"; do
      rm -f "$work/s.json"
      timed env "${env[@]}" timeout 1800 smpirun -np "$p" -platform "$work/$spd/cluster_$p.xml" \
        -hostfile "$work/$spd/hosts_$p.txt" --cfg=smpi/host-speed:"$spd" "${cfg[@]}" \
        "$sbuild/$bin" accel "${margs[@]}" --set solver.method=schur --repeat "$k" --quiet \
        --json "$work/s.json" || { log "SMPI $mode N=$n P=$p failed: $(tail -2 "$work/log")"; return 0; }
      rec "$work/s.json" smpi "$mode" "$n" "$p" "pair $i"
      cp "$work/s.json" "$work/s_$k.json"
    done
    log "SMPI $mode N=$n P=$p pair $i: $(python3 "$report" steady "$work/s_1.json" "$work/s_$k2.json") s/eval simulated (real $(cut -d' ' -f1 "$work/time") s, $(cut -d' ' -f4 "$work/time") kB)"
  done
}

# finish : the end record (load, wall time) and the closing log line
finish() {
  printf '{"kind":"end","load_end":%s,"wall_s":%s}\n' "$(load)" $(($(date +%s) - t0)) >>"$out"
  log "done in $(($(date +%s) - t0)) s"
}

log "results -> $out"
printf '{"kind":"meta","git":"%s","machine":"%s","simgrid":"%s","date":"%s","load_start":%s,"pairs":%s,"repeat":%s}\n' \
  "$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)" \
  "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" "$(smpirun -version 2>/dev/null | head -1)" \
  "$stamp" "$(load)" "$pairs" "$rep" >>"$out"
if ((coldonly)); then # the cold timed points alone: no real runs
  printf '{"kind":"baseline","note":"--cold-only: no real runs; speedups against a protocol ABA by hand"}\n' >>"$out"
  ((bigonly)) || sim cold 65536 64 "$pairs"
  ((big)) && sim cold 1048576 1024 1
  finish
  python3 "$summary" "$out" --md "${out%.jsonl}.md" || true
  exit 0
fi
if [[ -n $f64 || -n $speeds ]]; then # the flop modes alone, at given host speeds: no real runs
  if [[ -n $f64 ]]; then # the flops point at 64 hosts alone
    fspeed=$f64 wspeed="" big=0 bigonly=0
    printf '{"kind":"baseline","host_speed":"%s","note":"--flops64: given, not measured"}\n' \
      "$fspeed" >>"$out"
  else
    fspeed=${speeds%%,*} wspeed=${speeds#*,}
    printf '{"kind":"baseline","host_speed":"%s","host_speed_warm":"%s","note":"--speeds: given, not measured"}\n' \
      "$fspeed" "$wspeed" >>"$out"
  fi
  if ((!bigonly)); then
    sim flops 65536 64 1
    if [[ -n $wspeed ]]; then sim flops-warm 65536 64 1; fi
  fi
  if ((big)); then
    sim flops 1048576 1024 1
    sim flops-warm 1048576 1024 1
  fi
  finish
  exit 0
fi
# serial ABA (one thread), the baseline of every speedup
aba=$(realrun aba 65536 101 aba)
abab=""
((big)) && abab=$(realrun aba 1048576 11 aba)
log "serial ABA: N = 65536 $aba s/eval, N = 2^20 ${abab:-(skipped)} s/eval (CPU time, steady)"
# the flop modes' host speeds: flops of one evaluation (one simulated host) / the real one-rank
# schur time (`mpirun -n 1`, CPU-steady as above); flops: the whole 65536 chain on one rank,
# flops-warm: a rank's share, the 1024-link chain, on one rank (its data stays in the cache
# between evaluations, as a real rank's does)
bash "$here/bench/smpi/platform.sh" 1 1Gf "$work/f1"
# hostspeed N SECONDS -> the host speed that makes one simulated host take SECONDS on the N chain
hostspeed() {
  model "$1"
  smpirun -np 1 -platform "$work/f1/cluster_1.xml" -hostfile "$work/f1/hosts_1.txt" \
    --cfg=smpi/simulate-computation:no "$sbuild/mbspar_smpi_flops" accel "${margs[@]}" \
    --set solver.method=schur --repeat 1 --quiet --json "$work/f.json" >"$work/log" 2>&1
  python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["time_per_eval_s"]*1e9; print("%.0ff" % (f / float(sys.argv[2])))' "$work/f.json" "$2"
}
best=$(realrun calib 65536 101 schur mpirun -n 1 --bind-to core)
wbest=$(realrun calib 1024 10001 schur mpirun -n 1 --bind-to core)
fspeed=$(hostspeed 65536 "$best")
wspeed=$(hostspeed 1024 "$wbest")
log "real schur P = 1: N = 65536 $best s/eval (flop mode host speed $fspeed), N = 1024 $wbest s/eval (flops-warm host speed $wspeed)"
printf '{"kind":"baseline","aba_65536_s":%s,"aba_1048576_s":%s,"real_schur_p1_s":%s,"host_speed":"%s","real_schur_1024_s":%s,"host_speed_warm":"%s"}\n' \
  "$aba" "${abab:-null}" "$best" "$fspeed" "$wbest" "$wspeed" >>"$out"

sim flops 65536 1 1
sim flops 65536 64 1
sim flops-warm 65536 64 1
sim cold 65536 64 "$pairs"
if ((warm)); then
  for mode in warm control; do sim "$mode" 65536 64 "$pairs"; done
fi
if ((big)); then
  # no warm point here: the re-reads of 1024 ranks' data after every MPI call would take hours
  sim flops 1048576 1024 1
  sim flops-warm 1048576 1024 1
  sim cold 1048576 1024 1
fi
finish
python3 "$summary" "$out" --md "${out%.jsonl}.md"
