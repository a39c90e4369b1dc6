#!/usr/bin/env bash
# SimGrid SMPI study (issue 5, deliverable 3, "beyond this machine"): the real mbspar sources,
# built with smpicc (bench/smpi/build.sh), run `accel` with J-CG on simulated clusters with an
# InfiniBand-like network (bench/smpi/platform.sh). Reports, never asserts.
#
#   bench/smpi/run.sh [--quick|--big] [REAL_BUILD_DIR]    (default <repo>/build-speedup)
#
# 1. calibration: the same J-CG evaluation (chain N = 16384, no warm start) under SMPI with 1 and
#    2 simulated hosts and for real with `mpirun -n 1/2` here (launches capped at 100 and 200
#    iterations: the difference gives the real wall and CPU time per iteration without startup).
#    The host speed is 1:1 (smpi/host-speed = platform speed = 1 Gf: a compute block takes the
#    simulated time it took here); the table reports the difference.
# 2. strong scaling: chain N = 16384 on 1, 16, 32, 64, 128, 256 hosts, and N = 4096 on 1, 16, 64,
#    256 hosts (--big: also 512 and 1024, ~5 min and ~10 GB for 1024). Every rank holds the
#    whole model (~1.2 kB per body) and SMPI runs all ranks in one process, so memory grows as
#    hosts x N: 1024 x 16384 bodies would need ~20 GB.
# 3. weak scaling: 64 bodies per host on 1, 16, 32, 64, 128, 256 hosts (memory ~ hosts^2).
# 4. a binary tree (configs/tree.cfg, depth 14 = 16383 bodies): whole J-CG evaluations (~28
#    iterations, no cap) on 1, 2, 4, 16, 64, 256 hosts.
# J-CG is capped at solver.max_iter = 100 (a chain needs ~N iterations cold): the result is the
# simulated time per CG iteration, which is what scales. --quick: 1, 16 and 64 hosts only.
# Writes bench/results/smpi_<UTC>.jsonl, bench/results/smpi_<UTC>.md, docs/img/smpi_*.png.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
quick=0
real=""
for a in "$@"; do
  case $a in
  --quick) quick=1 ;;
  --big) quick=2 ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) real=$a ;;
  esac
done
real=${real:-$here/build-speedup}
command -v smpirun >/dev/null 2>&1 || {
  echo "smpi/run.sh: smpirun not found: install libsimgrid-dev (scripts/setup.sh --with-smpi); skipped" >&2
  exit 0
}
sbuild=$here/build-smpi
bash "$here/bench/smpi/build.sh" "$sbuild" >&2
if [[ ! -x $real/mbspar ]]; then
  cmake -S "$here" -B "$real" -DCMAKE_BUILD_TYPE=Release -DMBS_BUILD_PEERS=OFF >/dev/null
  cmake --build "$real" -j2 --target mbspar >/dev/null
fi
report=$here/bench/speedup_report.py
cfg=$here/configs/chain.cfg
speed=1Gf
cap=100
# cores online (not `nproc`: it honours OMP_NUM_THREADS, exported as 1 below)
ncpu=$(getconf _NPROCESSORS_ONLN)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results" "$here/docs/img"
out=$here/bench/results/smpi_$stamp.jsonl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '{"kind":"meta","machine":"%s","nproc":%s,"git":"%s","build_flags":"%s","simgrid":"%s","host_speed":"%s","date":"%s","quick":%s,"cap":%s}\n' \
  "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" "$ncpu" \
  "$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)" \
  "$(sed -n 's/^flags //p' "$sbuild/build_flags.txt")" \
  "$(smpirun -version 2>/dev/null | head -1 || echo unknown)" "$speed" "$stamp" "$quick" "$cap" >"$out"

common=(--set solver.method=jcg --set solver.warm_start=none --set "solver.max_iter=$cap" --quiet)

# sim P N STUDY [tree] : one SMPI run, one record (tree: N is the depth of configs/tree.cfg,
# J-CG to convergence, no cap)
sim() {
  local p=$1 n=$2 study=$3 hosts=$((($1 < 16) ? 16 : $1)) c=$cfg
  local args=(--set "model.chain.n=$n" "${common[@]}")
  if [[ ${4:-} == tree ]]; then
    c=$here/configs/tree.cfg
    args=(--set "model.tree.depth=$n" --set solver.method=jcg --set solver.warm_start=none --quiet)
  fi
  [[ -f $work/cluster_$hosts.xml ]] || bash "$here/bench/smpi/platform.sh" "$hosts" "$speed" "$work"
  rm -f "$work/s.json"
  if ! /usr/bin/time -f '%e %U %S' -o "$work/time" smpirun -np "$p" -platform "$work/cluster_$hosts.xml" \
    -hostfile "$work/hosts_$hosts.txt" --cfg=smpi/host-speed:$speed --cfg=smpi/display-timing:yes \
    "$sbuild/mbspar_smpi" accel "$c" "${args[@]}" \
    --json "$work/s.json" >"$work/log" 2>&1; then
    echo "smpi/run.sh: FAILED P=$p N=$n: $(grep -v '^\[' "$work/log" | tail -3 | tr '\n' ' ')" >&2
    printf '{"kind":"smpi","study":"%s","P":%s,"size":%s,"failed":true}\n' "$study" "$p" "$n" >>"$out"
    return 0
  fi
  local simt
  simt=$(sed -n 's/.*Simulated time: \([0-9.e+-]*\) seconds.*/\1/p' "$work/log" | tail -1)
  python3 "$report" record "$work/s.json" --kind smpi --study "$study" --size "$n" --P "$p" \
    --time "$(tail -1 "$work/time")" --simtime "${simt:-0}" --nproc "$ncpu" >>"$out"
  echo "smpi/run.sh: $study P=$p N=$n done (real $(tail -1 "$work/time" | cut -d' ' -f1) s)" >&2
}

# real P N : the same evaluation with mpirun here, capped at $cap and 2 x $cap iterations
realrun() {
  local p=$1 n=$2 c
  for c in "$cap" $((2 * cap)); do
    /usr/bin/time -f '%e %U %S' -o "$work/time" mpirun -n "$p" --bind-to core "$real/mbspar" accel "$cfg" \
      --set "model.chain.n=$n" "${common[@]}" --set "solver.max_iter=$c" --json "$work/r.json" 2>/dev/null >/dev/null
    python3 "$report" record "$work/r.json" --kind real --study calib --size "$n" --P "$p" \
      --time "$(tail -1 "$work/time")" --load "$(cut -d" " -f1 /proc/loadavg)" --nproc "$ncpu" >>"$out"
  done
}

ncal=16384
for p in 1 2; do
  realrun "$p" "$ncal"
  sim "$p" "$ncal" calib
done
if ((quick == 1)); then
  strong_hosts=(1 16 64)
  strong_small=(1 16 64)
  weak_hosts=(1 16 64)
  tree_hosts=(1 16)
else
  strong_hosts=(1 16 32 64 128 256)
  strong_small=(1 16 64 256)
  weak_hosts=(1 16 32 64 128 256)
  tree_hosts=(1 2 4 16 64 256)
  if ((quick == 2)); then strong_small+=(512 1024); fi
fi
for p in "${strong_hosts[@]}"; do sim "$p" 16384 strong; done
for p in "${strong_small[@]}"; do sim "$p" 4096 strong4096; done
for p in "${weak_hosts[@]}"; do sim "$p" $((64 * p)) weak; done
# binary tree of depth 14 (16383 spherical joints), J-CG converges in ~28 iterations: whole
# evaluations, strong scaling
for p in "${tree_hosts[@]}"; do sim "$p" 14 tree14 tree; done
echo "smpi/run.sh: results in $out" >&2
python3 "$report" smpi "$out" --img "$here/docs/img" --md "${out%.jsonl}.md"
