#!/bin/sh
# Sourced by the end-to-end test scripts (run_cli.sh, static_cli.sh, cpa_cli.sh, run_sim.sh):
# a scratch directory, failure counting and a command runner that checks the exit code.

# mbs_test_init NAME: $tmp = a new directory (removed at exit), fail = 0
mbs_test_init() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
  trap 'rm -rf "$tmp"' EXIT
  fail=0
}

# bad MESSAGE: report one failure and count it
bad() {
  echo "FAIL: $*"
  fail=$((fail + 1))
}

# run EXPECTED_RC ARGS... : run ARGS (no globbing), stdout in $tmp/out, stderr in $tmp/err
run() {
  want=$1
  shift
  set -f
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  set +f
  [ "$rc" -eq "$want" ] || bad "exit $rc (want $want): $* ; stderr: $(cat "$tmp/err")"
}
