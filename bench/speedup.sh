#!/usr/bin/env bash
# Speedup study (issue 5, deliverable 3): chains and binary trees, serial ABA / CRBA against the
# parallel constraint-force solvers (J-CG at 1, 2, 4 and 8 ranks; Chebyshev, block Jacobi, GS and
# SOR at 1 and 2), per evaluation
# (`mbspar accel`, cold start) and per simulated second (`mbspar run`, 0.01 s of RK4 at
# dt = 1 ms = 40 evaluations, cubic warm start, scaled by 100), plus the critical-path prediction
# (`mbspar cpa`, calibrated here). Reports, never asserts.
#
#   bench/speedup.sh [--quick] [BUILD_DIR]       (default BUILD_DIR: <repo>/build-speedup,
#                                                  configured and built here if missing)
# Writes bench/results/speedup_<UTC>.jsonl (one record per launch; the first line records the
# machine, build and date), then bench/speedup_report.py turns it into
# bench/results/speedup_<UTC>.md and docs/img/speedup_*.png.
#
# Sizes: chain N = 64, 256, 1024, 4096, 16384, 65536 (configs/chain.cfg, revolute, tol 1e-8);
# tree = complete binary tree of depth 6..16 = 63..65535 bodies (configs/tree.cfg, spherical,
# tol 1e-12). --quick: chain 64, 256, 1024, 4096 and tree depth 6, 8, 10, 12; one launch each.
# Costs that do not fit in the 30-minute budget of bench/run_all are capped, and the records say so:
#   * J-CG on a chain needs ~N iterations (cold): for N >= 4096 the solve is capped at
#     solver.max_iter = 200 (time per iteration measured; the time to convergence is
#     extrapolated from the iteration counts measured at N <= 4096 by the report);
#   * CRBA (O(N^2) on a chain: 0.3 s per evaluation at N = 1024) only for chains N <= 1024
#     (`run`: N <= 256) and trees N <= 4095 (a dense inertia of 16383 spherical joints is refused);
#   * `run` of the iterative methods on chains only for N <= 1024, on trees N <= 16383, and not
#     at oversubscribed rank counts; elsewhere the per-simulated-second time is 4000 x the cold
#     evaluation time (marked estimated; warm starts would lower it);
#   * block Jacobi, GS and SOR (O(N^2) iterations on a chain) at 1 and 2 ranks, capped at
#     solver.max_iter = 200 except on trees of up to 4095 bodies; the report shows capped runs as
#     "200 (not conv.)" with the capped time and the cpa prediction for the same iterations;
#   * ranks 4 and 8 are oversubscribed on this 2-core machine (--oversubscribe, yield when idle).
# Wall times are noisy when other work loads the machine: every record carries the launch's
# wall, user and system time and the load average; the two launches of an accel point repeat the
# evaluation K and 2K times, and the report takes the CPU time per evaluation (per rank) as the
# difference (--quick: one launch, so no CPU time).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
quick=0
build=""
for a in "$@"; do
  case $a in
  --quick) quick=1 ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) build=$a ;;
  esac
done
build=${build:-$here/build-speedup}
mbspar=$build/mbspar
if [[ ! -x $mbspar ]]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMBS_BUILD_PEERS=OFF >/dev/null
  cmake --build "$build" -j2 --target mbspar >/dev/null
fi
# cores online (not `nproc`: it honours OMP_NUM_THREADS, exported as 1 below)
ncpu=$(getconf _NPROCESSORS_ONLN)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
report=$here/bench/speedup_report.py
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results" "$here/docs/img"
out=$here/bench/results/speedup_$stamp.jsonl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ((quick)); then
  chain_n=(64 256 1024 4096)
  tree_d=(6 8 10 12)
  launches=1
else
  chain_n=(64 256 1024 4096 16384 65536)
  tree_d=(6 8 10 12 14 16)
  launches=2
fi
# overrides (testing): SPEEDUP_CHAIN="64 256", SPEEDUP_TREE="6 8", SPEEDUP_LAUNCHES=2
if [[ -n ${SPEEDUP_CHAIN:-} ]]; then read -r -a chain_n <<<"$SPEEDUP_CHAIN"; fi
if [[ -n ${SPEEDUP_TREE:-} ]]; then read -r -a tree_d <<<"$SPEEDUP_TREE"; fi
launches=${SPEEDUP_LAUNCHES:-$launches}
procs=(1 2 4 8)
cap=200

printf '{"kind":"meta","machine":"%s","nproc":%s,"git":"%s","build_flags":"%s","date":"%s","quick":%s,"cap":%s}\n' \
  "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" "$ncpu" \
  "$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)" \
  "$(sed -n 's/^CMAKE_C_FLAGS_RELEASE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null | head -1)" \
  "$stamp" "$quick" "$cap" >"$out"

# launch P VERB CONFIG OUTJSON ARGS... : mpirun under `speedup_report.py timeit` (wall, and the
# user/system time of all children from getrusage, microsecond resolution); prints "wall user sys"
launch() {
  local p=$1 verb=$2 cfg=$3 js=$4
  shift 4
  local mpi=(mpirun -n "$p") rc=0
  # oversubscribed ranks must yield when idle (else ~1000x slower); at P <= cores they must
  # busy-poll: with yield on a loaded machine every message wait gives a whole time slice to
  # another job (measured here: 3.25 s instead of 0.11 s per J-CG evaluation, N = 256, P = 2)
  if ((p > ncpu)); then
    mpi+=(--oversubscribe --bind-to none -x OMPI_MCA_mpi_yield_when_idle=1)
  else
    mpi+=(--bind-to core -x OMPI_MCA_mpi_yield_when_idle=0)
  fi
  if [[ $verb == run ]]; then
    python3 "$report" timeit "$work/time" "${mpi[@]}" "$mbspar" run "$cfg" --out "$js" \
      --force --quiet --set integrator.t_end=0.01 --set output.every=100000 "$@" >/dev/null || rc=$?
  else
    python3 "$report" timeit "$work/time" "${mpi[@]}" "$mbspar" "$verb" "$cfg" --json "$js" \
      --quiet "$@" >/dev/null || rc=$?
  fi
  tail -1 "$work/time"
  return "$rc"
}

# record FAMILY N METHOD P VERB K NOTE ARGS... : $launches launches, one JSONL record each. For
# accel, launch i repeats the evaluation K*(i+1) times, so that the report can take the CPU time
# per evaluation as the difference of two launches (startup cancels); K = 0 for run.
record() {
  local fam=$1 size=$2 meth=$3 p=$4 verb=$5 k=$6 note=$7
  shift 7
  local cfg=$here/configs/chain.cfg sizekey=model.chain.n i t js load rep
  if [[ $fam == tree ]]; then cfg=$here/configs/tree.cfg sizekey=model.tree.depth; fi
  for ((i = 0; i < launches; i++)); do
    js=$work/r.json
    [[ $verb == run ]] && js=$work/runout
    rm -rf "$js"
    rep=()
    ((k > 0)) && rep=(--repeat $((k * (i + 1))))
    load=$(cut -d' ' -f1 /proc/loadavg)
    if ! t=$(launch "$p" "$verb" "$cfg" "$js" --set "$sizekey=$size" --set "solver.method=$meth" "${rep[@]}" "$@" 2>"$work/err"); then
      local msg
      msg=$(grep -v -e '^---' -e '^$' "$work/err" | head -2 | tr '\n"' '  ' | tr -cd '[:alnum:][:space:].,:=_/()+-')
      echo "speedup.sh: FAILED $fam $size $meth P=$p $verb: $msg" >&2
      printf '{"kind":"%s","family":"%s","size":%s,"method":"%s","P":%s,"failed":true,"error":"%s"}\n' \
        "$verb" "$fam" "$size" "$meth" "$p" "$msg" >>"$out"
      return 0
    fi
    [[ $verb == run ]] && js=$js/run.json
    python3 "$report" record "$js" --kind "$verb" --family "$fam" --size "$size" --P "$p" \
      --time "$t" --load "$load" --note "$note" --nproc "$ncpu" >>"$out"
  done
  echo "speedup.sh: $fam $size $meth P=$p $verb done ($t; load $load)" >&2
}

reps_for() { # reps_for SIZE METHOD: repetitions per launch, ~0.1-1 s of evaluation work
  if [[ $2 == aba ]]; then
    case $1 in 64 | 6) echo 5000 ;; 256 | 8) echo 1000 ;; 1024 | 10) echo 300 ;; 4096 | 12) echo 50 ;; *) echo 5 ;; esac
  else
    case $1 in 64 | 6) echo 100 ;; 256 | 8) echo 20 ;; 1024 | 10) echo 3 ;; *) echo 1 ;; esac
  fi
}

# --- calibration of the cpa cost model (J-CG on the 256-link chain, ranks 0 and 1)
mpirun -n 2 --bind-to core "$mbspar" cpa "$here/configs/chain.cfg" --method jcg --calibrate \
  --procs 2 --json "$work/cal.json" --quiet >/dev/null
read -r ft lat bw < <(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cpa"]["cost_model"]; print(c["flop_time_s"], c["latency_s"], c["bandwidth_Bps"])' "$work/cal.json")
# ABA's kernels run at a different speed per flop than J-CG's: its own flop time (one rank)
mpirun -n 1 --bind-to core "$mbspar" cpa "$here/configs/chain.cfg" --method aba --calibrate \
  --procs 2 --json "$work/cal_aba.json" --quiet >/dev/null
ft_aba=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpa"]["cost_model"]["flop_time_s"])' "$work/cal_aba.json")
printf '{"kind":"calibration","flop_time_s":%s,"flop_time_aba_s":%s,"latency_s":%s,"bandwidth_Bps":%s}\n' "$ft" "$ft_aba" "$lat" "$bw" >>"$out"

for fam in chain tree; do
  if [[ $fam == chain ]]; then sizes=("${chain_n[@]}"); else sizes=("${tree_d[@]}"); fi
  for s in "${sizes[@]}"; do
    if [[ $fam == chain ]]; then nb=$s; else nb=$(((1 << s) - 1)); fi
    k=$(reps_for "$s" jcg)
    # serial baselines (one rank)
    record "$fam" "$s" aba 1 accel "$(reps_for "$s" aba)" ""
    # CRBA + LTDL is O(N^2) per evaluation on a chain (0.3 s at N = 1024, ~20 s at 4096; a tree
    # is O(N log N)): accel up to 1024 bodies (chain) / 4095 (tree: 16383 spherical joints exceed
    # its dense-matrix limit), run up to 256 / 4095
    crba_max=1024 crba_run=256
    [[ $fam == tree ]] && crba_max=4095 crba_run=4095
    if ((nb <= crba_max)); then record "$fam" "$s" crba 1 accel "$k" ""; fi
    record "$fam" "$s" aba 1 run 0 ""
    if ((nb <= crba_run)); then record "$fam" "$s" crba 1 run 0 ""; fi
    # iterative solvers, cold start
    capargs=()
    note=""
    if [[ $fam == chain ]] && ((nb >= 4096)); then
      capargs=(--set "solver.max_iter=$cap")
      note="capped"
      # one uncapped J-CG solve at 4096 (one rank) for the iteration count
      if ((nb == 4096)); then record "$fam" "$s" jcg 1 accel 0 "iterations" --set solver.warm_start=none; fi
    fi
    for p in "${procs[@]}"; do
      ((p <= nb)) || continue
      # oversubscribed ranks synchronise 4 or 8 processes on 2 loaded cores every iteration:
      # one evaluation per launch there
      # and at 2 ranks one tenth of the serial repetitions (every iteration waits for the other
      # rank, which on a loaded machine is often descheduled)
      kp=$k
      ((p > 1)) && kp=$(((k + 9) / 10))
      ((p > ncpu)) && kp=1
      record "$fam" "$s" jcg "$p" accel "$kp" "$note" --set solver.warm_start=none "${capargs[@]}"
      # Chebyshev (J-SI) needs ~35x J-CG's iterations on a chain (2795 at N = 64): chains N <= 256
      # and trees, at 1 and 2 ranks, one evaluation per launch
      if ((p <= 2)) && { [[ $fam == tree ]] || ((nb <= 256)); }; then
        record "$fam" "$s" chebyshev "$p" accel 1 "$note" --set solver.warm_start=none "${capargs[@]}"
      fi
      if { [[ $fam == chain ]] && ((nb <= 1024)); } || { [[ $fam == tree ]] && ((nb <= 16383)); }; then
        if ((p <= ncpu)); then record "$fam" "$s" jcg "$p" run 0 ""; fi
      fi
      # the stationary solvers (block Jacobi, multicolour GS and SOR) at 1 and 2 ranks: chains need
      # O(N^2) iterations (5000 do not reach 1e-8 at N = 1024), so they are capped at $cap
      # everywhere except trees up to 4095 bodies, which run to convergence (~2000 iterations)
      if ((p <= 2)); then
        for sm in jacobi gs sor; do
          sargs=(--set "solver.max_iter=$cap")
          snote=capped
          if [[ $fam == tree ]] && ((nb <= 4095)); then sargs=() snote=""; fi
          record "$fam" "$s" "$sm" "$p" accel 1 "$snote" --set solver.warm_start=none "${sargs[@]}"
        done
      fi
    done
    # critical-path prediction: ABA once; the iterative solvers with 1 and 2 iterations (the
    # report extrapolates linearly to the measured iteration count). Skipped where the graph
    # would not fit (65536).
    for m in aba jcg jacobi gs sor; do
      if [[ $m != aba ]] && ((nb > 16384)); then continue; fi
      its=(0)
      [[ $m != aba ]] && its=(1 2)
      for it in "${its[@]}"; do
        itarg=()
        ((it > 0)) && itarg=(--iterations "$it")
        cfg=$here/configs/chain.cfg sizekey=model.chain.n
        [[ $fam == tree ]] && cfg=$here/configs/tree.cfg sizekey=model.tree.depth
        mft=$ft
        [[ $m == aba ]] && mft=$ft_aba
        if "$mbspar" cpa "$cfg" --set "$sizekey=$s" --method "$m" "${itarg[@]}" --procs 8 \
          --flop-time "$mft" --latency "$lat" --bandwidth "$bw" --json "$work/cpa.json" --quiet >/dev/null 2>"$work/err"; then
          python3 "$report" record "$work/cpa.json" --kind cpa --family "$fam" --size "$s" --P 1 \
            --time "0 0 0" --load 0 --note "iters=$it" --nproc "$ncpu" >>"$out"
        else
          echo "speedup.sh: cpa $fam $s $m failed: $(tail -2 "$work/err" | tr '\n' ' ')" >&2
        fi
      done
    done
  done
done
echo "speedup.sh: results in $out" >&2
# partial runs (SPEEDUP_* overrides) keep their plots beside their results, not in docs/img
img=$here/docs/img
if [[ -n ${SPEEDUP_CHAIN:-}${SPEEDUP_TREE:-} ]]; then img=${out%.jsonl}_img; fi
python3 "$report" report "$out" --img "$img" --md "${out%.jsonl}.md"
