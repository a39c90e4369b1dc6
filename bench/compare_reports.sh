#!/usr/bin/env bash
# Behaviour check for refactorings (issue 31): the JSON reports of two builds on configs/*.cfg,
# equal apart from timings, versions, argv, host, date and paths. Reports, never builds the
# current tree.
#
#   bench/compare_reports.sh [--ref COMMIT] [--ref-bin PATH] [--np "1 2"] [--only REGEX]
#                            [--keep DIR] [CUR_BUILD_DIR]
#
# The reference is the mbspar of COMMIT (default: main), built once from `git archive` in
# ${TMPDIR:-/tmp}/mbs_ref_<sha> (reused while it exists), or the binary given by --ref-bin. The
# current binary is CUR_BUILD_DIR/mbspar (default <repo>/build). Cases: every configs/*.cfg with
# the verbs accel, run (short: --set integrator.t_end=2e-3, output to a temporary directory),
# static (--set static.max_iter=200), inverse, check and cpa, each with --json at 1 and 2 ranks
# (--np). A case is equal when the exit codes are equal and the JSON reports are equal after
# bench/compare_reports.py drops timings and metadata (or, when no JSON was written, the last
# stderr lines are equal). Then every method of the table (--methods) on small models (chain of 12,
# tree of depth 4, fourbar, rope; solver.max_iter = 200): accel with --set solver.method=M at each
# --np, cpa --method M and cpa --method M --procs 3 at one rank. The
# reference's results are kept beside its binary and reused (--fresh: rerun them); runs against the
# same reference take turns (a lock), so concurrent ones no longer clash. --only REGEX keeps the
# cases whose name (CFG.VERB.npN) matches.
# Prints one line per case and a total; exit code 0 when all are equal, 1 otherwise.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ref=main
refbin=
nps="1 2"
only=.
keep=
fresh=
methods="aba crba jacobi gs sor chebyshev jcg direct petsc schur"
method_cfgs="chain tree fourbar rope"
cur=$here/build
while [ $# -gt 0 ]; do
  case $1 in
  --ref) ref=${2:?--ref needs a commit} && shift ;;
  --ref-bin) refbin=${2:?--ref-bin needs a path} && shift ;;
  --np) nps=${2:?--np needs a list} && shift ;;
  --only) only=${2:?--only needs a regex} && shift ;;
  --fresh) fresh=1 ;;
  --methods) methods=${2:?--methods needs a list} && shift ;;
  --keep) keep=${2:?--keep needs a directory} && shift ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) cur=$1 ;;
  esac
  shift
done
curbin=$cur/mbspar
[ -x "$curbin" ] || {
  echo "compare_reports: no $curbin (build the current tree first)" >&2
  exit 2
}
if [ -z "$refbin" ]; then
  # shellcheck source=refbuild.sh
  . "$here/bench/refbuild.sh"
  mbs_refbuild compare_reports "$here" "$ref"
fi
refout=${refbin%/*}/reports
mkdir -p "$refout"
# the reference's reports are shared by every run against it: one run at a time (another waits)
exec 9>"$refout.lock"
flock 9
[ -n "$fresh" ] && rm -rf "$refout" && mkdir -p "$refout"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 MBS_PROGRESS=0
work=${keep:-$(mktemp -d)}
mkdir -p "$work/ref" "$work/cur"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT

# one case: BIN OUTDIR NAME NP VERB CFG [ARGS...]
one() {
  local bin=$1 dir=$2 name=$3 np=$4 verb=$5 cfg=$6 rc=0
  shift 6
  rm -rf "$dir/out"
  timeout 300 mpirun -n "$np" --oversubscribe --bind-to none "$bin" "$verb" "$cfg" "$@" \
    --json "$dir/$name.json" -q >/dev/null 2>"$dir/$name.err" || rc=$?
  echo "$rc" >"$dir/$name.rc"
}

# a case on both sides: NAME NP VERB CFG [ARGS...] (OUT in ARGS: a scratch directory); the
# reference's results are kept with its build and reused
case2() {
  local name=$1 np=$2 verb=$3 cfg=$4 side bin dir
  shift 4
  [[ $name =~ $only ]] || return 0
  for side in ref cur; do
    bin=$refbin dir=$refout
    [ "$side" = cur ] && bin=$curbin dir=$work/cur
    [ "$side" = ref ] && [ -f "$dir/$name.rc" ] && continue
    local a=("$@")
    for i in "${!a[@]}"; do [ "${a[i]}" = OUT ] && a[i]=$dir/out; done
    # run from the repository, so relative paths in the configs resolve alike
    (cd "$here" && one "$bin" "$dir" "$name" "$np" "$verb" "configs/$cfg.cfg" "${a[@]}")
  done
  cp "$refout/$name".* "$work/ref/" 2>/dev/null || true
}

for cfg in "$here"/configs/*.cfg; do
  base=$(basename "$cfg" .cfg)
  for verb in accel run static inverse check cpa; do
    for np in $nps; do
      args=()
      case $verb in
      run) args=(--set integrator.t_end=2e-3 --out OUT --force) ;;
      static) args=(--set static.max_iter=200) ;;
      esac
      case2 "$base.$verb.np$np" "$np" "$verb" "$base" "${args[@]}"
    done
  done
done
# every method of the solver table on small models (chain, branched tree, loops, spring-dampers;
# at most 200 iterations, so the stationary methods stop early alike)
for base in $method_cfgs; do
  small=(--set solver.max_iter=200)
  [ "$base" = chain ] && small+=(--set model.chain.n=12)
  [ "$base" = tree ] && small+=(--set model.tree.depth=4)
  for meth in $methods; do
    for np in $nps; do
      case2 "$base.accel.$meth.np$np" "$np" accel "$base" "${small[@]}" --set "solver.method=$meth"
    done
    case2 "$base.cpa.$meth.np1" 1 cpa "$base" "${small[@]}" --method "$meth"
    case2 "$base.cpa.$meth.procs3.np1" 1 cpa "$base" "${small[@]}" --method "$meth" --procs 3
  done
done
python3 "$here/bench/compare_reports.py" "$work/ref" "$work/cur"
