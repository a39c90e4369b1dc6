#!/bin/sh
# PETSc's command-line conventions (docs/cli.md, issue 32): single-dash options wherever they
# stand, negative values, -ts_dt/-ts_max_time set the run, -ts_max_steps refused, -help lists
# mbspar's own options too.
# usage: cli_petsc.sh MBSPAR CONFIGS_DIR [LAUNCHER ...]   (LAUNCHER: mpiexec -n 2)
mbspar=$1
cfg=$2
shift 2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_cli_petsc
small="--set model.chain.n=4 --set integrator.t_end=0.003 --quiet"

# an option without a value before the config does not swallow it (before or after the verb)
# shellcheck disable=SC2086
run 0 "$@" "$mbspar" -ts_monitor "$cfg/chain.cfg" $small --out "$tmp/a"
grep -q '^3 TS dt 0.001 time 0.003' "$tmp/out" || bad "-ts_monitor CFG: no monitor line: $(cat "$tmp/out")"
[ -f "$tmp/a/run.json" ] || bad "-ts_monitor CFG: no run.json"
# shellcheck disable=SC2086
run 0 "$@" "$mbspar" run -ts_monitor "$cfg/chain.cfg" $small --out "$tmp/b"
grep -q '^3 TS dt' "$tmp/out" || bad "run -ts_monitor CFG: no monitor line"

# a negative value is the option's, and PETSc uses it
# shellcheck disable=SC2086
run 0 "$@" "$mbspar" "$cfg/chain.cfg" $small --out "$tmp/c" -ts_max_reject -1 -options_left
grep -q 'There are no unused options' "$tmp/out" || bad "-ts_max_reject -1 not used: $(cat "$tmp/out")"

# a value before the verb stays the option's (-ksp_type cg accel CFG), and is used
run 0 "$@" "$mbspar" -ksp_type cg accel "$cfg/chain.cfg" --set model.chain.n=8 \
  --set solver.method=petsc --quiet -options_left
grep -q 'There are no unused options' "$tmp/out" || bad "-ksp_type cg accel CFG: $(cat "$tmp/out")"

# -ts_dt and -ts_max_time set the run: 5 steps of 0.002 to 0.01
run 0 "$@" "$mbspar" "$cfg/chain.cfg" --set model.chain.n=4 --quiet --out "$tmp/d" \
  -ts_dt 0.002 -ts_max_time 0.01 -options_left
grep -q 'There are no unused options' "$tmp/out" || bad "-ts_dt/-ts_max_time left unused"
python3 - "$tmp/d/run.json" <<'PY' || bad "-ts_dt 0.002 -ts_max_time 0.01 did not set the run"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["integrator"]["dt"] == 0.002, d["config"]["integrator"]
assert d["config"]["integrator"]["t_end"] == 0.01, d["config"]["integrator"]
assert d["integrator"]["steps"] == 5, d["integrator"]
PY

# refused, with one line naming the option, and nothing written
one_line() {
  if [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q -- "$1" "$tmp/err"; then
    bad "$2: stderr: $(cat "$tmp/err")"
  fi
}
run 2 "$@" "$mbspar" "$cfg/chain.cfg" --out "$tmp/e" -ts_max_steps 5
one_line '^mbspar: -ts_max_steps is not supported' "-ts_max_steps"
run 2 "$@" "$mbspar" "$cfg/chain.cfg" --out "$tmp/e" -ts_dt -1
one_line '^-ts_dt -1: integrator.dt must be > 0' "-ts_dt -1"
run 2 "$@" "$mbspar" "$cfg/chain.cfg" --out "$tmp/e" -ts_dt
one_line '^mbspar: -ts_dt needs a value' "-ts_dt without a value"
[ -e "$tmp/e" ] && bad "a refused run created its --out directory"

# -help: mbspar's options, then PETSc's (with a config: those of the objects the run makes)
# shellcheck disable=SC2086
run 0 "$@" "$mbspar" -help "$cfg/chain.cfg" $small --out "$tmp/f"
grep -q -- '--set KEY=VALUE' "$tmp/out" || bad "-help CFG lacks mbspar's --set"
grep -q -- '-ts_type <' "$tmp/out" || bad "-help CFG lacks PETSc's -ts_type"
run 0 "$@" "$mbspar" -help
grep -q -- '--restart FILE' "$tmp/out" || bad "-help lacks mbspar's --restart"
grep -q -- '-options_left' "$tmp/out" || bad "-help lacks PETSc's general options"
run 0 "$@" "$mbspar" accel -help
grep -q -- '--repeat K' "$tmp/out" || bad "accel -help lacks accel's --repeat"

[ "$fail" -eq 0 ] || exit 1
echo "cli_petsc: all checks passed"
