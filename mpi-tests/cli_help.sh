#!/bin/sh
# mbspar help [VERB] and mbspar VERB --help: each verb's own usage and options (docs/cli.md).
# usage: cli_help.sh MBSPAR
mbspar=$1
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_cli_help

run 0 "$mbspar" help
grep -q '^usage: mbspar \[VERB\] CONFIG' "$tmp/out" || bad "help: no usage line"
for v in run accel inverse static modes cpa check; do
  grep -q "^  $v " "$tmp/out" || bad "help: verb $v not listed"
done
cp "$tmp/out" "$tmp/all"
run 0 "$mbspar" --help
cmp -s "$tmp/out" "$tmp/all" || bad "--help differs from help"

# has/lacks VERB OPTION...: the usage of VERB (mbspar help VERB, asked once) names each option
check() {
  expect=$1 v=$2
  shift 2
  if [ ! -f "$tmp/help_$v" ]; then
    run 0 "$mbspar" help "$v"
    cp "$tmp/out" "$tmp/help_$v"
  fi
  grep -q "^usage: mbspar $v CONFIG" "$tmp/help_$v" || bad "help $v: no usage line of $v"
  for o in "$@"; do
    if grep -q -- "^  $o" "$tmp/help_$v"; then
      [ "$expect" = has ] || bad "help $v lists $o"
    else
      [ "$expect" = lacks ] || bad "help $v lacks $o"
    fi
  done
}
run 0 "$mbspar" run --help
cp "$tmp/out" "$tmp/run"
check has run --restart --progress --set --out -ksp_
check lacks run --repeat --grain
cmp -s "$tmp/help_run" "$tmp/run" || bad "run --help differs from help run"
check has accel --repeat --progress -ksp_
check lacks accel --restart --method
check has cpa --method --grain --procs --calibrate --latency --bandwidth --flop-time
check lacks cpa --restart --repeat -ksp_
check has modes --count --at --out --force
check lacks modes --restart --repeat --grain -ksp_
check has check --set --json
check lacks check --restart --repeat --grain

# mbspar help config: the config keys from the descriptor tables (src/config_opts.c), and the
# block of docs/cli.md made from it is in sync (scripts/config_keys_doc.sh)
run 0 "$mbspar" help config
for k in solver.method solver.tol integrator.dt output.flush_every static.method cpa.latency; do
  grep -q "^$k " "$tmp/out" || bad "help config: $k not listed"
done
grep -q '^usage:' "$tmp/out" && bad "help config prints the usage"
sh "$(dirname "$0")/../scripts/config_keys_doc.sh" --check "$mbspar" 2>"$tmp/doc" ||
  bad "docs/cli.md Config keys is stale: $(cat "$tmp/doc")"

# an unknown verb: one line, exit 2
run 2 "$mbspar" help nosuch
if [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q 'help nosuch: no such verb' "$tmp/err"; then
  bad "help nosuch: $(cat "$tmp/err")"
fi

[ "$fail" -eq 0 ] || exit 1
echo "cli_help: all checks passed"
