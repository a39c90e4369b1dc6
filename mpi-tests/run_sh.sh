#!/bin/sh
# scripts/run.sh as the README uses it (issue 32): options alone go after configs/chain.cfg
# (--set K=V, --out D with their values), a VERB or CONFIG replaces the command line, and with
# its stamps in place a call neither checks the packages nor builds.
# usage: run_sh.sh MBSPAR SOURCE_DIR
mbspar=$1
src=$2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_run_sh
small="--set model.chain.n=8 --set integrator.t_end=0.01 --quiet"

# a build directory whose stamps say nothing changed since the last set-up and build
b=$tmp/build
mkdir "$b"
ln -s "$mbspar" "$b/mbspar"
# (dated tomorrow: a source edited while the test runs does not start a build either)
touch -d tomorrow "$b/.run-setup.stamp" "$b/.run-build.stamp"
export MBS_BUILD_DIR="$b" MBS_NP=2

# shellcheck disable=SC2086
run 0 "$src/scripts/run.sh" $small --out "$tmp/o1"
grep -q 'setup.sh\|run.sh: building\|configuring' "$tmp/err" && bad "set-up ran with fresh stamps: $(cat "$tmp/err")"
python3 - "$tmp/o1/run.json" <<'PY' || bad "run.sh --set ... --out D: not the short run in D"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["integrator"]["t_end"] == 0.01 and d["model"]["bodies"] == 8, d["config"]
assert d["run"]["ranks"] == 2 and d["run"]["argv"][1].endswith("configs/chain.cfg"), d["run"]
PY
# --np and the --opt=VALUE form; a PETSc option's value is not a CONFIG
# shellcheck disable=SC2086
run 0 "$src/scripts/run.sh" --np 1 $small --out="$tmp/o2" -ts_type rk -ts_rk_type 4
[ -f "$tmp/o2/run.json" ] || bad "run.sh --out=D -ts_type rk: no run.json: $(cat "$tmp/err")"
# a VERB: the whole command line; standard output is mbspar's alone
run 0 "$src/scripts/run.sh" accel "$src/configs/chain.cfg" --set model.chain.n=8 --json -
python3 -m json.tool "$tmp/out" >/dev/null || bad "run.sh accel CFG --json -: not one JSON document"

[ "$fail" -eq 0 ] || exit 1
echo "run_sh: all checks passed"
