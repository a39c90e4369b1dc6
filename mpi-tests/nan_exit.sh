#!/bin/sh
# No silent NaN (issue 12.3): non-finite accelerations, constraint forces, joint forces or states
# end every verb with exit 5 and one stderr line that names the phase and either the first
# offending coordinate with its body or, for the iterative methods that met a NaN (reason nan),
# the method; nothing on stdout. Every solver.method in accel, the baselines and schur in run,
# static, inverse; at 1 rank and at 2 ranks (distributed engine).
#
#   nan_exit.sh MBSPAR CONFIGS_DIR MPIEXEC NPFLAG [PREFLAGS...]
mbspar=$1
cfg=$2/chain.cfg
mpiexec=$3
npflag=$4
shift 4
pre="$*"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_nan
export OMPI_MCA_orte_execute_quiet=1
small="--quiet --set model.chain.n=8"
checked=0

# expect_nan NP PHASE_FRAGMENT NAME_FRAGMENT ARGS...: exit 5, one stderr line with "non-finite",
# the phase and the name fragment, nothing on stdout
expect_nan() {
  np=$1
  phase=$2
  what=$3
  shift 3
  if [ "$np" -eq 1 ]; then
    run 5 "$mbspar" "$@"
  else
    # shellcheck disable=SC2086
    run 5 "$mpiexec" "$npflag" "$np" $pre "$mbspar" "$@"
  fi
  checked=$((checked + 1))
  msg=$(cat "$tmp/err")
  [ "$(grep -c . "$tmp/err")" -eq 1 ] || bad "np$np $*: stderr is not one line: $msg"
  [ -s "$tmp/out" ] && bad "np$np $*: output on stdout: $(head -c 200 "$tmp/out")"
  case "$msg" in
  *non-finite*) ;;
  *) bad "np$np $*: message does not say non-finite: $msg" ;;
  esac
  case "$msg" in
  *"$phase"*) ;;
  *) bad "np$np $*: message does not name the phase '$phase': $msg" ;;
  esac
  case "$msg" in
  *"$what"*) ;;
  *) bad "np$np $*: message does not name '$what': $msg" ;;
  esac
}

body='(body "link'
# accel: every method. The baselines and direct name the first non-finite qdd and its body; the
# iterative ones stop with reason nan and name the first body whose inputs (velocity, v x* I v,
# applied joint forces) are non-finite
for m in aba crba schur direct; do
  # shellcheck disable=SC2086
  expect_nan 1 "in accel (solver.method = $m)" "$body" accel "$cfg" $small \
    --set model.chain.qd0=1e200 --set solver.method=$m
done
for m in jcg jacobi gs sor chebyshev petsc; do
  # shellcheck disable=SC2086
  expect_nan 1 "in accel (solver.method = $m): $m met a NaN or Inf" 'of body "link1" = inf' \
    accel "$cfg" $small --set model.chain.qd0=1e200 --set solver.method=$m
done
for m in aba schur petsc; do
  case $m in petsc) what='of body "link1" = inf' ;; *) what=$body ;; esac
  # shellcheck disable=SC2086
  expect_nan 2 "in accel (solver.method = $m)" "$what" accel "$cfg" $small \
    --set model.chain.qd0=1e200 --set solver.method=$m
done
# run: an evaluation of the integrator; the failed run leaves a run.json marked incomplete with
# exit code 5
for np in 1 2; do
  for m in aba crba schur; do
    out="$tmp/run_${np}_$m"
    # shellcheck disable=SC2086
    expect_nan "$np" "in run: the evaluation at t = " "$body" run "$cfg" $small \
      --set model.chain.qd0=1e150 --set integrator.t_end=0.01 --set solver.method=$m --out "$out"
    python3 - "$out/run.json" <<'PY' || bad "np$np run $m: run.json not marked incomplete with exit 5"
import json, sys
r = json.load(open(sys.argv[1]))["results"]
sys.exit(0 if r["complete"] is False and r["error"]["exit_code"] == 5 else 1)
PY
  done
done
# static: its evaluations
for np in 1 2; do
  for m in aba schur; do
    # shellcheck disable=SC2086
    expect_nan "$np" "in static: evaluation 1 (solver.method = $m)" "$body" static "$cfg" $small \
      --set model.chain.qd0=1e200 --set solver.method=$m
  done
done
# inverse: a motion whose accelerations overflow
for np in 1 2; do
  # shellcheck disable=SC2086
  expect_nan "$np" "in inverse: sample 0" "$body" inverse "$cfg" $small \
    --set "inverse.q_end=[1e300,0,0,0,0,0,0,0]" --set inverse.T=1e-10
done
# and a finite model still exits 0 (the checks do not fire on sane input)
# shellcheck disable=SC2086
run 0 "$mbspar" accel "$cfg" $small --set solver.method=aba
echo "nan_exit: $checked non-finite cases checked; $fail failure(s)"
exit $((fail > 0))
