#!/usr/bin/env bash
# SimGrid SMPI study of the exact distributed solver, solver.method = "schur" (issue 9, "SimGrid
# SMPI"). The real mbspar sources built with smpicc (bench/smpi/build.sh) run `accel` on simulated
# InfiniBand-like clusters (bench/smpi/platform.sh, one host per rank). Reports, never asserts.
#
#   bench/smpi/schur.sh [--quick] [--repeat K] [REAL_BUILD_DIR]     (default <repo>/build)
#
# Models: chain N = 65536 (configs/chain.cfg, q0 = 0.01, qd0 = 0.5) and binary tree N = 65535
# (configs/large_tree.cfg, depth 16).
# 1. serial ABA here, for real (solver.method=aba, --repeat 30, best of 3 launches, one thread):
#    the baseline of every speedup, for each model size used below. (Its mean includes the first,
#    cold evaluation; one more launch of --repeat 1 shows how much: the table's "steady" column.)
# 2. calibration: schur on the chain at P = 1 and 2, real (`mpirun -n P --bind-to core`, best of
#    2) against the SMPI runs of step 3; the ratio SMPI / real is printed. Host speed is 1:1
#    (platform speed = smpi/host-speed = 1 Gf: SMPI charges each compute block the time it took
#    on this machine).
# 3. strong scaling: both models on P = 1, 2, 4, ..., 1024 simulated hosts.
# 4. weak scaling: chain with 1024 bodies per host, P = 1, 2, 4, ..., 1024; its last point is the
#    N = 2^20 chain on 1024 hosts (peak RSS of the smpirun process: /usr/bin/time %M).
# 5. cpa: `mbspar cpa CFG --method schur --procs 1024` here, its owner-computes prediction
#    (distributed_s) per P next to SMPI. Cost model: one flop time = SMPI's P = 1 time per
#    evaluation / the one-rank graph's flops (cpa --calibrate is refused for schur), message
#    bandwidth as cpa --calibrate measures it on 16 simulated hosts (halo exchanges of ranks 0
#    and 1), message latency = that run's MPI_Allreduce time per round (its time / log2 16): the
#    small-message hop the log-depth exchanges pay (6.3 us in SimGrid 3.32 on this platform; the
#    2-host halo exchange measures 5.1 us, and with that alpha cpa's chain at 1024 hosts came
#    out 27-36 % under SMPI). Filled in only when the build's cpa has a schur graph (otherwise
#    "n/a" with the reason).
# The time per evaluation is from the JSON time_per_eval_s, measured by mbspar with MPI_Wtime,
# which SMPI simulates (startup excluded), without the first evaluation (cold caches, first touch
# of the work arrays: 2-10x a steady one): two launches with --repeat 1 and 1 + K give
# ((1 + K) t(1 + K) - t(1)) / K; the same for the real schur runs of the calibration (K = 30).
# --repeat K: steady evaluations per SMPI point (default 10).
# --pairs N: pairs of launches per SMPI point up to 256 hosts (default 3; one above): the simulated
#    compute blocks are the measured times of the real code, and on this VM they vary by +-15 %
#    between launches (all ranks in one process share one cache); the best pair is reported, the
#    median and every pair are listed.
# --flops: compute charged by counted flops instead of measured time (build-smpi/mbspar_smpi_flops,
#    smpi/simulate-computation:no): every kernel counts its flops (the counts cpa's graphs use,
#    test_cpa_schur) and each compute stretch costs flops / host speed, with the host speed set so
#    that the simulated P = 1 equals the real `mpirun -n 1` schur time measured in this run
#    (step 2). Deterministic (one pair per point), independent of the machine's load, and free of
#    the one-process cache effects of timed compute blocks; what it does not see is uncounted
#    work (copies, packing) and memory effects of a rank's data size. Writes
#    bench/results/smpi_schur_flops_<UTC>.{jsonl,md}, docs/img/smpi_schur_flops_{strong,weak}.png.
# --quick: P = 1, 2, 16, 64 only (no 2^20 point), a smoke run.
# Every launch records the load average; a failed configuration is recorded with its reason.
# Writes bench/results/smpi_schur_<UTC>.jsonl and .md, docs/img/smpi_schur_{strong,weak}.png.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
quick=0
rep=10
pairs=3
flops=0
real=""
while (($#)); do
  case $1 in
  --quick) quick=1 ;;
  --flops) flops=1 ;;
  --repeat)
    rep=${2:?--repeat K}
    shift
    ;;
  --pairs)
    pairs=${2:?--pairs N}
    shift
    ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  -*)
    echo "smpi/schur.sh: unknown option '$1' (see --help)" >&2
    exit 2
    ;;
  *) real=$1 ;;
  esac
  shift
done
real=${real:-$here/build}
command -v smpirun >/dev/null 2>&1 || {
  echo "smpi/schur.sh: smpirun not found: install libsimgrid-dev (scripts/setup.sh --with-smpi); skipped" >&2
  exit 0
}
# a python3 with matplotlib if there is one (pyenv shims may hide the system's)
py=python3
for c in python3 /usr/bin/python3; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import matplotlib' 2>/dev/null; then
    py=$c
    break
  fi
done
report=$here/bench/smpi/schur_report.py
sbuild=$here/build-smpi
t0=$(date +%s)
bash "$here/bench/smpi/build.sh" "$sbuild" >&2
if [[ ! -f $real/CMakeCache.txt ]]; then
  cmake -S "$here" -B "$real" -DCMAKE_BUILD_TYPE=Release -DMBS_BUILD_PEERS=OFF >/dev/null
fi
cmake --build "$real" -j2 --target mbspar >/dev/null
mbspar=$real/mbspar
speed=1Gf
sbin=mbspar_smpi
scfg=()
tag=smpi_schur
if ((flops)); then
  sbin=mbspar_smpi_flops
  scfg=(--cfg=smpi/simulate-computation:no)
  tag=smpi_schur_flops
  pairs=1
fi
ncpu=$(getconf _NPROCESSORS_ONLN)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results" "$here/docs/img"
out=$here/bench/results/${tag}_$stamp.jsonl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ((quick)); then
  plist=(1 2 16 64)
else
  plist=(1 2 4 8 16 32 64 128 256 512 1024)
fi
chain_n=65536
tree_d=16
per_host=1024
load() { cut -d' ' -f1 /proc/loadavg; }
log() { echo "smpi/schur.sh [$(date -u +%H:%M:%S), load $(load)]: $*" >&2; }

load0=$(load)
# the run's header record (after step 2: in flop-cost mode the host speed comes from it)
meta() {
  printf '{"kind":"meta","machine":"%s","nproc":%s,"git":"%s","build_flags":"%s","simgrid":"%s","host_speed":"%s","host_speed_tree":"%s","flops_per_eval_tree":%s,"date":"%s","quick":%s,"mode":"%s","flops_per_eval":%s,"repeat_smpi":%s,"repeat_aba":30,"real_build":"%s","load_start":%s}\n' \
    "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" "$ncpu" \
    "$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)" \
    "$(sed -n 's/^flags //p' "$sbuild/build_flags.txt")" \
    "$(smpirun -version 2>/dev/null | head -1 || echo unknown)" "$speed" "$speed_tree" \
    "${fpe_tree:-null}" "$stamp" "$quick" \
    "$( ((flops)) && echo flops || echo timed)" "${fpe:-null}" "$rep" "$real" "$load0" >>"$out"
}

# model FAMILY SIZE -> config and --set arguments in the array margs (SIZE: chain links, tree depth)
margs=()
model() {
  if [[ $1 == chain ]]; then
    margs=("$here/configs/chain.cfg" --set "model.chain.n=$2" --set model.chain.q0=0.01
      --set model.chain.qd0=0.5)
  else
    margs=("$here/configs/large_tree.cfg" --set "model.tree.depth=$2")
  fi
}

# failed STUDY FAMILY SIZE P KIND RC LOG : record a failure with its reason (the log's last lines)
failed() {
  local why
  why=$(sed '/^\[/d' "$7" | tail -3 | tr '\n' ' ' | cut -c1-300)
  (($6 == 124)) && why="timeout; $why"
  (($6 == 137)) && why="killed (out of memory?); $why"
  log "FAILED $5 $1 $2 size=$3 P=$4 (exit $6): $why"
  "$py" -c 'import json,sys; a=sys.argv[1:]; print(json.dumps({"kind":a[0],"study":a[1],"family":a[2],"size":int(a[3]),"P":int(a[4]),"failed":True,"rc":int(a[5]),"reason":a[6]}))' \
    "$5" "$1" "$2" "$3" "$4" "$6" "$why" >>"$out"
}

# rec JSON KIND STUDY FAMILY SIZE P [NOTE] : one JSONL record from mbspar's JSON and $work/time
rec() {
  "$py" "$report" record "$1" --kind "$2" --study "$3" --family "$4" --size "$5" --P "$6" \
    --time "$(tail -1 "$work/time")" --load "$(load)" --note "${7:-}" >>"$out"
}

# aba FAMILY SIZE : serial ABA for real, 3 launches of --repeat 30
aba() {
  local i rc
  model "$1" "$2"
  for i in 1 2 3; do
    rm -f "$work/a.json"
    rc=0
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$mbspar" accel "${margs[@]}" \
      --set solver.method=aba --repeat 30 --quiet --json "$work/a.json" >"$work/log" 2>&1 || rc=$?
    if ((rc)); then
      failed aba "$1" "$2" 1 real "$rc" "$work/log"
      return 0
    fi
    rec "$work/a.json" real aba "$1" "$2" 1 "launch $i"
  done
  # one launch of a single evaluation: the first (cold) evaluation's share of the mean
  rc=0
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$mbspar" accel "${margs[@]}" \
    --set solver.method=aba --repeat 1 --quiet --json "$work/a1.json" >"$work/log" 2>&1 || rc=$?
  ((rc)) || rec "$work/a1.json" real aba1 "$1" "$2" 1 "repeat 1"
  log "ABA $1 size=$2: $("$py" -c 'import json,sys; print("%.4g s/eval" % json.load(open(sys.argv[1]))["time_per_eval_s"])' "$work/a.json") (last launch)"
}

# steady K1JSON K2JSON : the time per evaluation without the first (cold) one, from two launches
# with different --repeat: (K2 t2 - K1 t1) / (K2 - K1)
steady() { "$py" "$report" steady "$1" "$2"; }

# realschur P [FAMILY SIZE] : schur for real with mpirun (default: the chain): 2 pairs of
# launches (--repeat 1 and 31)
realschur() {
  local i k rc fam=${2:-chain} size=${3:-$chain_n}
  model "$fam" "$size"
  for i in 1 2; do
    for k in 1 31; do
      rm -f "$work/r.json"
      rc=0
      /usr/bin/time -f '%e %U %S %M' -o "$work/time" mpirun -n "$1" --bind-to core "$mbspar" accel \
        "${margs[@]}" --set solver.method=schur --repeat "$k" --quiet --json "$work/r.json" \
        >"$work/log" 2>&1 || rc=$?
      if ((rc)); then
        failed calib "$fam" "$size" "$1" real "$rc" "$work/log"
        return 0
      fi
      rec "$work/r.json" real calib "$fam" "$size" "$1" "pair $i"
      cp "$work/r.json" "$work/r_$k.json"
    done
    log "real mpirun -n $1 schur $fam size=$size: $(steady "$work/r_1.json" "$work/r_31.json") s/eval (pair $i, without the first evaluation)"
  done
}

# sim STUDY FAMILY SIZE P : schur on P simulated hosts, pairs of SMPI launches (--repeat 1 and
# 1 + $rep): $pairs pairs up to 256 hosts, one above (the report takes the best pair, as ABA's
# baseline is the best of 3 launches, and lists them all)
sim() {
  local p=$4 rc=0 k i np=1 spd=$speed
  [[ $2 == tree ]] && spd=$speed_tree
  model "$2" "$3"
  [[ -f $work/$spd/cluster_$p.xml ]] || bash "$here/bench/smpi/platform.sh" "$p" "$spd" "$work/$spd"
  ((p <= 256)) && np=$pairs
  for ((i = 1; i <= np; i++)); do
  for k in 1 $((rep + 1)); do
    rm -f "$work/s.json"
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" timeout 1200 smpirun -np "$p" \
      -platform "$work/$spd/cluster_$p.xml" -hostfile "$work/$spd/hosts_$p.txt" --cfg=smpi/host-speed:"$spd" \
      "${scfg[@]}" "$sbuild/$sbin" accel "${margs[@]}" --set solver.method=schur --repeat "$k" --quiet \
      --json "$work/s.json" >"$work/log" 2>&1 || rc=$?
    if ((rc)) || [[ ! -s $work/s.json ]]; then
      failed "$1" "$2" "$3" "$p" smpi "$rc" "$work/log"
      return 0
    fi
    rec "$work/s.json" smpi "$1" "$2" "$3" "$p" "pair $i"
    cp "$work/s.json" "$work/sim_$1_$2_${p}_$k.json"
  done
  log "SMPI $1 $2 size=$3 P=$p pair $i: $(steady "$work/sim_$1_$2_${p}_1.json" "$work/s.json") s/eval simulated, real $(tail -1 "$work/time" | cut -d' ' -f1) s, $(tail -1 "$work/time" | cut -d' ' -f4) kB (launch of $k)"
  done
}

# cpa FAMILY SIZE : the critical-path prediction of schur for P = 1 .. 1024. cpa --calibrate is
# refused for schur (its evaluation exists on the distributed engine only), so: one flop time, the
# SMPI P = 1 time per evaluation (1:1 with this machine) / the one-rank graph's T1 in flops, and
# the message latency and bandwidth measured in the simulation ($alpha, $beta); the P = 1 time is
# the best pair's, the one the report shows
cpa() {
  local rc=0 ft
  model "$1" "$2"
  rm -f "$work/c.json"
  "$mbspar" cpa "${margs[@]}" --method schur --procs 1 --flop-time 1e-9 --quiet \
    --json "$work/c.json" >"$work/log" 2>&1 || rc=$?
  if ((rc == 0)) && [[ -f $work/sim_strong_$1_1_$((rep + 1)).json ]]; then
    ft=$("$py" -c 'import json,sys; w=json.load(open(sys.argv[1]))["cpa"]["work_flops"]; print("%.6g" % (float(sys.argv[2]) / w))' \
      "$work/c.json" "$("$py" "$report" bestsim "$out" strong "$1" 1)")
    rm -f "$work/c.json"
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" timeout 900 "$mbspar" cpa "${margs[@]}" --method schur \
      --procs 1024 --flop-time "$ft" --latency "$alpha" --bandwidth "$beta" --quiet \
      --json "$work/c.json" >"$work/log" 2>&1 || rc=$?
  elif ((rc == 0)); then
    echo "no SMPI P = 1 run of $1 to calibrate the flop time" >"$work/log"
    rc=1
  fi
  if ((rc)); then
    failed cpa "$1" "$2" 0 cpa "$rc" "$work/log"
    return 0
  fi
  rec "$work/c.json" cpa cpa "$1" "$2" 0 "flop time $ft s from SMPI P = 1"
  log "cpa $1 size=$2 (flop time $ft s) done in $(tail -1 "$work/time" | cut -d' ' -f1) s"
}

log "results -> $out (P = ${plist[*]}, --repeat $rep per SMPI launch)"
# 1. serial ABA baselines
aba chain "$chain_n"
aba tree "$tree_d"
for p in "${plist[@]}"; do
  n=$((per_host * p))
  ((n == chain_n)) || aba chain "$n"
done
# 2.+3. calibration and strong scaling (the SMPI P = 1 and 2 chain runs are the calibration's)
realschur 1
realschur 2
speed_tree=$speed
if ((flops)); then
  # per model: the flops of one evaluation (the flop binary on one simulated host of 1 Gf/s; the
  # counts are the same in every evaluation), then the host speed that makes P = 1 match the
  # real one-rank time of that model (the best steady pair): the tree's memory accesses are not
  # the chain's, so each model gets its own time per flop
  realschur 1 tree "$tree_d"
  bash "$here/bench/smpi/platform.sh" 1 1Gf "$work/f1"
  for fam in chain tree; do
    if [[ $fam == chain ]]; then model chain "$chain_n"; else model tree "$tree_d"; fi
    rm -f "$work/f.json"
    smpirun -np 1 -platform "$work/f1/cluster_1.xml" -hostfile "$work/f1/hosts_1.txt" "${scfg[@]}" \
      "$sbuild/$sbin" accel "${margs[@]}" --set solver.method=schur --repeat 1 --quiet \
      --json "$work/f.json" >"$work/log" 2>&1 || {
      log "the flop count failed: $(tail -2 "$work/log")"
      exit 1
    }
    f=$("$py" -c 'import json,sys; print("%.0f" % (json.load(open(sys.argv[1]))["time_per_eval_s"] * 1e9))' "$work/f.json")
    t=$("$py" "$report" bestreal "$out" 1 --family "$fam")
    v=$("$py" -c 'import sys; print("%.0ff" % (float(sys.argv[1]) / float(sys.argv[2])))' "$f" "$t")
    log "flop-cost mode: $fam, $f flops per evaluation (one rank), real schur P = 1 $t s: host speed $v"
    if [[ $fam == chain ]]; then
      fpe=$f speed=$v
    else
      fpe_tree=$f speed_tree=$v
    fi
  done
fi
meta
for p in "${plist[@]}"; do sim strong chain "$chain_n" "$p"; done
for p in "${plist[@]}"; do sim strong tree "$tree_d" "$p"; done
# 4. weak scaling; at P = 1024 this is the 2^20 chain on 1024 hosts
for p in "${plist[@]}"; do sim weak chain $((per_host * p)) "$p"; done
# 5. cpa: the simulated network's message cost (cpa --calibrate on 16 simulated hosts: J-CG has a
#    graph in every build, only the message part is used; alpha = the allreduce's time per
#    round, see the header), then cpa of schur here
bash "$here/bench/smpi/platform.sh" 16 1Gf "$work/net"
rc=0
timeout 300 smpirun -np 16 -platform "$work/net/cluster_16.xml" -hostfile "$work/net/hosts_16.txt" \
  --cfg=smpi/host-speed:1Gf "$sbuild/mbspar_smpi" cpa "$here/configs/chain.cfg" --set model.chain.n=256 \
  --method jcg --iterations 20 --procs 16 --calibrate --quiet --json "$work/net.json" >"$work/log" 2>&1 || rc=$?
if ((rc == 0)); then
  read -r alpha beta < <("$py" -c 'import json,sys; c=json.load(open(sys.argv[1]))["cpa"]["cost_model"]; print(c["measured_allreduce_s"] / 4, c["bandwidth_Bps"])' "$work/net.json")
  "$py" -c 'import json,sys; c=json.load(open(sys.argv[1]))["cpa"]["cost_model"]; print(json.dumps({"kind":"network","hosts":16,"latency_s":c["measured_allreduce_s"] / 4,"halo_latency_s":c["latency_s"],"bandwidth_Bps":c["bandwidth_Bps"],"allreduce_s":c.get("measured_allreduce_s")}))' "$work/net.json" >>"$out"
else
  alpha=2.5e-6 beta=12.5e9 # the platform's nominal values: 2 x 1 us host links + 0.5 us backbone
  log "cpa --calibrate on 2 simulated hosts failed (exit $rc): nominal latency $alpha s, bandwidth $beta B/s"
  printf '{"kind":"network","latency_s":%s,"bandwidth_Bps":%s,"nominal":true}\n' "$alpha" "$beta" >>"$out"
fi
log "simulated network for cpa: latency $alpha s, bandwidth $beta B/s"
# does this build's cpa have a schur graph? (a 64-link chain; without one, cpa falls back to
# the J-CG graph: then the column stays n/a and the big graphs are not built)
rc=0
"$mbspar" cpa "$here/configs/chain.cfg" --set model.chain.n=64 --method schur --procs 4 --quiet \
  --json "$work/probe.json" >"$work/log" 2>&1 || rc=$?
why="cpa failed (exit $rc): $(sed '/^\[/d' "$work/log" | tail -1)"
if ((rc == 0)); then
  why=$("$py" "$report" record "$work/probe.json" --kind cpa --study probe --family chain --size 64 --P 0 |
    "$py" -c 'import json,sys; r=json.load(sys.stdin); print("" if r["available"] else r["unavailable_reason"])')
fi
if [[ -z $why ]]; then
  cpa chain "$chain_n"
  cpa tree "$tree_d"
else
  log "cpa of schur not available: $why"
  "$py" -c 'import json,sys; print(json.dumps({"kind":"cpa_unavailable","reason":sys.argv[1]}))' "$why" >>"$out"
fi
printf '{"kind":"end","load_end":%s,"wall_s":%s}\n' "$(load)" $(($(date +%s) - t0)) >>"$out"
log "done in $(($(date +%s) - t0)) s; results in $out"
"$py" "$report" report "$out" --img "$here/docs/img" --prefix "$tag" --md "${out%.jsonl}.md"
