#!/bin/sh
# End-to-end tests of the mbspar verbs and options (docs/cli.md).
# usage: run_cli.sh MBSPAR JSON_VALIDATOR CONFIGS_DIR [LAUNCHER ...]   (LAUNCHER: mpiexec -n 2)
mbspar=$1
validate=$2
cfg=$3
shift 3
ranks=1
[ $# -gt 0 ] && ranks=2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_cli

# --version and --help
run 0 "$@" "$mbspar" --version
if ! grep -q '^mbspar [0-9]' "$tmp/out" || ! grep -q 'MPI library: ' "$tmp/out"; then
  bad "--version output"
fi
run 0 "$@" "$mbspar" --help
grep -q '^usage: mbspar' "$tmp/out" || bad "--help output"

# check: table and JSON
run 0 "$@" "$mbspar" check "$cfg/chain.cfg" --json "$tmp/check.json"
grep -q 'bodies  *256' "$tmp/out" || bad "check table lacks bodies 256"
"$validate" --validate "$tmp/check.json" schema build run config model ranks valid || bad "check JSON"
grep -q '"nlam": 1280' "$tmp/check.json" || bad "check JSON nlam"
grep -q '"revolute": 256' "$tmp/check.json" || bad "check JSON joint counts"

# a solve stopped at max_iter: one warning; for gs (N^2 sweeps on chains) a hint naming the
# methods that converge, none for jcg
run 0 "$@" "$mbspar" accel "$cfg/chain.cfg" --set solver.method=gs --set solver.max_iter=20 --quiet
[ "$(grep -c 'warning: gs stopped without converging' "$tmp/err")" -eq 1 ] || bad "gs warning"
grep -q 'hint: gs needs of the order of N^2 sweeps.*jcg, chebyshev, schur or petsc' "$tmp/err" ||
  bad "gs hint: $(cat "$tmp/err")"
run 0 "$@" "$mbspar" accel "$cfg/chain.cfg" --set solver.method=jcg --set solver.max_iter=5 --quiet
grep -q 'warning: jcg stopped without converging' "$tmp/err" || bad "jcg warning"
grep -q 'hint:' "$tmp/err" && bad "a hint for jcg"

# a long iterative solve prints progress lines on standard error (--progress SEC; none with
# --quiet); the counts grow and the last residual is the warning's
run 0 "$@" "$mbspar" accel "$cfg/chain.cfg" --set solver.method=gs --set solver.max_iter=6000 \
  --progress 0.01 --json "$tmp/prog.json"
grep -c 'mbspar: accel: gs: [0-9]* iterations, residual [0-9.e+-]* (tol 1e-08), [0-9.]* s$' "$tmp/err" |
  grep -qv '^[01]$' || bad "gs progress lines: $(head -c 400 "$tmp/err")"
sed -n 's/^mbspar: accel: gs: \([0-9]*\) iterations.*/\1/p' "$tmp/err" | sort -nc ||
  bad "progress counts not increasing"
run 0 "$@" "$mbspar" accel "$cfg/chain.cfg" --set solver.method=gs --set solver.max_iter=6000 \
  --progress 0.01 --quiet
grep -q 'mbspar: accel: gs:' "$tmp/err" && bad "--quiet printed progress"

# accel: pendulum closed form, required keys, --repeat, ranks
run 0 "$@" "$mbspar" accel "$cfg/pendulum.cfg" --set solver.method=aba --repeat 3 --json "$tmp/a.json" --quiet
[ -s "$tmp/out" ] && bad "--quiet printed a table"
"$validate" --validate "$tmp/a.json" qdd lambda joint_wrench solver ranks time_per_eval_s model build config run ||
  bad "accel JSON"
grep -q '"qdd": \[-7.05421773423' "$tmp/a.json" || bad "pendulum qdd: $(grep '"qdd"' "$tmp/a.json")"
grep -q '"repeat": 3' "$tmp/a.json" || bad "repeat not recorded"
grep -q "\"ranks\": $ranks" "$tmp/a.json" || bad "ranks != $ranks"
grep -q '"converged": true' "$tmp/a.json" || bad "solver.converged"

# accel to stdout (pure JSON there), --set on a generator, crba
run 0 "$@" "$mbspar" accel "$cfg/chain.cfg" --set solver.method=crba --set model.chain.n=16 --json -
"$validate" --validate "$tmp/out" qdd lambda joint_wrench || bad "accel --json - is not pure JSON"
grep -q '"dofs": 16' "$tmp/out" || bad "--set model.chain.n=16 not applied"

# accel on the distributed engine: schur (named: auto picks aba for 32 bodies) and PETSc (with a
# PETSc option passed through) reproduce ABA's qdd and lambda; the report has timers,
# decomposition and affinity
run 0 "$@" "$mbspar" accel "$cfg/chain.cfg" --set model.chain.n=32 --set solver.tol=1e-12 --set solver.method=schur --json "$tmp/j.json" --quiet
run 0 "$@" "$mbspar" accel "$cfg/chain.cfg" --set model.chain.n=32 --set solver.tol=1e-12 --set solver.method=aba --json "$tmp/b.json" --quiet
run 0 "$@" "$mbspar" accel "$cfg/chain.cfg" --set model.chain.n=32 --set solver.tol=1e-12 --set solver.method=petsc --json "$tmp/p.json" --quiet -ksp_type cg
"$validate" --validate "$tmp/j.json" qdd lambda joint_wrench solver timers decomposition affinity ||
  bad "distributed accel JSON"
python3 - "$tmp/b.json" "$tmp/j.json" "$tmp/p.json" <<'PY' || bad "schur/petsc accel differ from aba"
import json, math, sys
ref = json.load(open(sys.argv[1]))
for f in sys.argv[2:]:
    r = json.load(open(f))
    for key in ("qdd", "lambda"):
        a, b = r[key], ref[key]
        d = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b))) / math.sqrt(sum(y * y for y in b))
        if not (len(a) == len(b) and d <= 1e-8):
            print(f, key, "relative difference", d)
            sys.exit(1)
    if not r["solver"]["converged"]:
        sys.exit(1)
PY

# static: converges, report keys (the seed-001 cases are in static_cli.sh)
run 0 "$@" "$mbspar" static "$cfg/pendulum.cfg" --json "$tmp/s.json" --quiet
"$validate" --validate "$tmp/s.json" results solver config model build run ranks || bad "static JSON"
grep -q '"converged": true' "$tmp/s.json" || bad "static did not converge"

# inverse: CSV + JSON in --out, no overwrite without --force, earlier files intact
run 0 "$@" "$mbspar" inverse "$cfg/gripper.cfg" --out "$tmp/g" --quiet
[ "$(wc -l <"$tmp/g/inverse.csv")" -eq 102 ] || bad "inverse.csv should have 1 + 101 lines"
head -n 1 "$tmp/g/inverse.csv" | grep -q '^t,q_link11,.*,tau_link13$' || bad "inverse.csv header"
"$validate" --validate "$tmp/g/inverse.json" inverse config model build || bad "inverse JSON"
cp "$tmp/g/inverse.csv" "$tmp/keep.csv"
run 3 "$@" "$mbspar" inverse "$cfg/gripper.cfg" --out "$tmp/g" --set inverse.T=2.0
grep -q 'exists; not overwriting' "$tmp/err" || bad "no-overwrite message"
cmp -s "$tmp/g/inverse.csv" "$tmp/keep.csv" || bad "a refused run changed inverse.csv"
run 0 "$@" "$mbspar" inverse "$cfg/gripper.cfg" --out "$tmp/g" --set inverse.T=2.0 --force --quiet
cmp -s "$tmp/g/inverse.csv" "$tmp/keep.csv" && bad "--force did not rewrite inverse.csv"
for leftover in "$tmp"/g/*tmp*; do
  [ -e "$leftover" ] && bad "temporary file left in --out: $leftover"
done

# usage errors: exit 2
run 2 "$@" "$mbspar" accel
run 2 "$@" "$mbspar" frobnicate "$cfg/pendulum.cfg"
run 2 "$@" "$mbspar" check "$cfg/pendulum.cfg" --json

# absurd input is bad input (issue 12): one line, exit 2, nothing on stdout, on every rank count
# one_line EXPECTED_START FRAGMENT: the last run printed exactly that one line on stderr
one_line() {
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "not one stderr line: $(cat "$tmp/err")"
  [ ! -s "$tmp/out" ] || bad "output on stdout: $(cat "$tmp/out")"
  case "$(cat "$tmp/err")" in "$1"*"$2"*) ;; *) bad "message '$(cat "$tmp/err")' is not '$1...$2...'" ;; esac
}
# a host with less memory than the model needs (MBS_MEM_AVAILABLE pretends 150 MB; 1e5 bodies
# need ~180 MB for check, ~560 MB for accel): refused before anything is built
MBS_MEM_AVAILABLE=150M run 2 "$@" "$mbspar" check "$cfg/large_chain.cfg"
one_line "$cfg/large_chain.cfg:6: model too large for the memory here: 100000 bodies" "(MBS_MEM_AVAILABLE)"
MBS_MEM_AVAILABLE=150M run 2 "$@" "$mbspar" accel "$cfg/chain.cfg" --set model.chain.n=100000 \
  --set solver.method=schur
one_line "--set model.chain.n=100000: model too large for the memory here" "accel with schur on $ranks rank(s)"
MBS_MEM_AVAILABLE=1G run 0 "$@" "$mbspar" check "$cfg/large_chain.cfg" --quiet
# errors found after parsing name the --set that caused them (they said "CONFIG:0:")
run 2 "$@" "$mbspar" run "$cfg/chain.cfg" --set integrator.t_end=0 --out "$tmp/never"
one_line "--set integrator.t_end=0: integrator.t_end must be > 0 for run" ""
[ ! -e "$tmp/never" ] || bad "a refused run created its --out"
if [ "$ranks" -gt 1 ]; then
  run 2 "$@" "$mbspar" accel "$cfg/chain.cfg" --set model.chain.n=1 --set solver.method=schur
  one_line "--set model.chain.n=1: cannot distribute 1 bodies over" ""
fi

echo "cli: $fail failure(s)"
[ "$fail" -eq 0 ]
