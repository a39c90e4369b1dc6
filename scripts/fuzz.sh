#!/usr/bin/env bash
# Fuzz the config, URDF and checkpoint readers with libFuzzer (clang, ASan + UBSan): fuzz/.
#
#   scripts/fuzz.sh [--smoke] [--target config|urdf|checkpoint|all] [--runs N] [--time SEC]
#                   [--build-dir DIR] [--work DIR] [--no-setup] [--nice N] [--timeout SEC]
#
#   --target T     which target(s) to run (default all: config, urdf, then checkpoint)
#   --runs N       stop each target after N executions (default: no limit)
#   --time SEC     stop each target after SEC seconds (default 60)
#   --smoke        the CI smoke: --time 15 per target from the seed corpus only (nothing kept),
#                  fixed seed; any crash, leak, timeout or broken promise fails
#   --build-dir D  where the targets are built (default build-fuzz/, MBS_FUZZ_BUILD_DIR)
#   --work DIR     corpus and findings (default D/work): DIR/corpus/TARGET grows across runs,
#                  DIR/findings/ holds crash-*, leak-*, timeout-*, oom-* reproducers
#   --no-setup     do not call scripts/setup.sh --with-fuzz (clang, libclang-rt-14-dev)
#   --nice N       niceness of the fuzzers (default 19: they share the machine)
#   --timeout SEC  an input running longer is a finding (default 10; libFuzzer measures wall
#                  time, so a fuzzer starved by a loaded machine needs more)
#
# Seeds: configs/*.cfg, the bad-input corpus mpi-tests/bad/*.cfg (its "# args: --set K=V" lines
# become "#set K=V" override lines, see fuzz/fuzz_config.c), fuzz/ckpt_model.cfg and the inputs
# of earlier findings in fuzz/corpus/config/; for the checkpoint target fuzz/corpus/checkpoint/
# plus, when build/mbspar (or $MBS_MBSPAR) exists, fresh checkpoints written by
# `mbspar run fuzz/ckpt_model.cfg`. For the URDF target: configs/*.urdf, the real robots of
# mpi-tests/robots/, the URDF cases of the bad-input corpora and fuzz/corpus/urdf/, with the
# dictionary fuzz/urdf.dict (XML tags and attributes of URDF).
#
# Each target runs on one core. The report gives executions, time, exec/s, edge coverage
# ("cov", libFuzzer's count of instrumented edges reached) and findings; a finding is printed
# with the command that reproduces it. Exit code: 0 when no target found anything.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bdir=${MBS_FUZZ_BUILD_DIR:-$root/build-fuzz}
work=""
targets=(config urdf checkpoint)
runs=""
tsec=60
smoke=0
setup=1
niceness=19
timeout=10

while [ $# -gt 0 ]; do
  case "$1" in
  --smoke) smoke=1 tsec=15 ;;
  --target)
    case "${2:-}" in
    all) targets=(config urdf checkpoint) ;;
    config | urdf | checkpoint) targets=("$2") ;;
    *)
      echo "fuzz.sh: --target config|urdf|checkpoint|all" >&2
      exit 2
      ;;
    esac
    shift
    ;;
  --runs) runs=$2 && shift ;;
  --time) tsec=$2 && shift ;;
  --build-dir) bdir=$2 && shift ;;
  --work) work=$2 && shift ;;
  --no-setup) setup=0 ;;
  --nice) niceness=$2 && shift ;;
  --timeout) timeout=$2 && shift ;;
  -h | --help)
    sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "fuzz.sh: unknown option '$1' (see --help)" >&2
    exit 2
    ;;
  esac
  shift
done
case "$tsec$runs$timeout" in *[!0-9]*)
  echo "fuzz.sh: --time, --runs and --timeout take whole numbers" >&2
  exit 2
  ;;
esac
work=${work:-$bdir/work}

[ "$setup" = 0 ] || "$root/scripts/setup.sh" --with-fuzz --quiet

# build (incremental); -Werror as in CI when asked
echo "fuzz.sh: building the fuzz targets in $bdir (clang, libFuzzer, ASan, UBSan)"
mkdir -p "$bdir"
cmake -S "$root/fuzz" -B "$bdir" -DCMAKE_C_COMPILER=clang ${MBS_WERROR:+-DMBS_WERROR=$MBS_WERROR} \
  >"$bdir/configure.log" 2>&1 || {
  cat "$bdir/configure.log" >&2
  echo "fuzz.sh: configure failed (scripts/setup.sh --with-fuzz installs clang and its runtime)" >&2
  exit 1
}
cmake --build "$bdir" -j "${MBS_FUZZ_BUILD_JOBS:-$(nproc)}" >"$bdir/build.log" 2>&1 || {
  cat "$bdir/build.log" >&2
  exit 1
}

# seed corpora: generated into the work directory (the sources stay untouched)
seeds=$work/seeds
rm -rf "$seeds"
mkdir -p "$seeds/config" "$seeds/urdf" "$seeds/checkpoint" "$work/findings"
for f in "$root"/configs/*.cfg "$root"/fuzz/ckpt_model.cfg; do
  cp "$f" "$seeds/config/$(basename "$f")"
done
for f in "$root"/mpi-tests/bad/*.cfg; do
  # "# args: --set K=V --set K2=V2" -> leading "#set K=V" lines
  sets=$(sed -n 's/^# args: //p' "$f" | head -n 1 | tr ' ' '\n' | awk 'p {print "#set " $0} {p = ($0 == "--set")}')
  { [ -z "$sets" ] || echo "$sets"; cat "$f"; } >"$seeds/config/bad_$(basename "$f")"
done
for f in "$root"/configs/*.urdf "$root"/mpi-tests/robots/*.urdf "$root"/mpi-tests/bad*/*.urdf; do
  [ -f "$f" ] && cp "$f" "$seeds/urdf/$(basename "$(dirname "$f")")_$(basename "$f")"
done
# the inputs of earlier findings (regressions), kept in the repository
cp "$root"/fuzz/corpus/config/* "$seeds/config/"
[ ! -d "$root/fuzz/corpus/urdf" ] || cp "$root"/fuzz/corpus/urdf/* "$seeds/urdf/"
cp "$root"/fuzz/corpus/checkpoint/* "$seeds/checkpoint/"
mbspar=${MBS_MBSPAR:-$root/build/mbspar}
if [ -x "$mbspar" ]; then
  # fresh checkpoints of the fuzzed model (the committed ones may predate a model change)
  for im in rk4 abm; do
    for t in 0.01 0.03; do
      d=$work/ckrun
      rm -rf "$d"
      if OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
        "$mbspar" run "$root/fuzz/ckpt_model.cfg" --out "$d" --quiet \
        --set integrator.t_end="$t" --set integrator.method=$im \
        --set output.checkpoint_every=3 >/dev/null 2>&1 && [ -f "$d/checkpoint.bin" ]; then
        cp "$d/checkpoint.bin" "$seeds/checkpoint/fresh_${im}_t$t.bin"
      fi
    done
  done
  rm -rf "$work/ckrun"
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/fuzz/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

fail=0
for t in "${targets[@]}"; do
  bin=$bdir/fuzz_$t
  if [ "$smoke" = 1 ]; then
    corpus=$work/smoke_$t # thrown away: CI must not depend on an earlier run
    rm -rf "$corpus"
  else
    corpus=$work/corpus/$t
  fi
  mkdir -p "$corpus"
  maxlen=65536
  dict=()
  [ "$t" = checkpoint ] && maxlen=16384
  [ "$t" = urdf ] && dict=(-dict="$root/fuzz/urdf.dict")
  args=("${dict[@]}" -timeout="$timeout" -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len="$maxlen"
    -print_final_stats=1 -artifact_prefix="$work/findings/$t-" -max_total_time="$tsec")
  [ -z "$runs" ] || args+=(-runs="$runs")
  [ "$smoke" = 0 ] || args+=(-seed=1)
  log=$work/$t.log
  echo "fuzz.sh: $t: ${runs:+$runs runs or }$tsec s, corpus $corpus + seeds, log $log"
  before=$(find "$work/findings" -name "$t-*" | wc -l)
  t0=$(date +%s)
  set +e
  nice -n "$niceness" "$bin" "${args[@]}" "$corpus" "$seeds/$t" >"$log" 2>&1
  rc=$?
  set -e
  t1=$(date +%s)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | sed 's/ft: //')
  units=$(find "$corpus" -type f | wc -l)
  found=$(find "$work/findings" -name "$t-*" | wc -l)
  echo "fuzz.sh: $t: ${execs:-?} executions in $((t1 - t0)) s (${rate:-?}/s), edge coverage ${cov:-?}, features ${ft:-?}, corpus $units units, libFuzzer exit $rc, $((found - before)) new finding(s)"
  if [ "$rc" -ne 0 ] || [ "$found" -gt "$before" ]; then
    fail=$((fail + 1))
    grep -E 'ERROR: |broken promise|SUMMARY' "$log" | head -n 5 | sed "s/^/fuzz.sh: $t: /"
    for a in $(find "$work/findings" -name "$t-*" | sort); do
      echo "fuzz.sh: $t: reproduce with: $bin $a"
    done
  fi
done
if [ "$fail" -eq 0 ]; then
  echo "fuzz.sh: no findings (${targets[*]})"
else
  echo "fuzz.sh: $fail target(s) with findings; reproducers in $work/findings"
fi
[ "$fail" -eq 0 ]
