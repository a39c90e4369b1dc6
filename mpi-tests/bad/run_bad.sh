#!/bin/sh
# Bad-input corpus runner: every *.cfg (and *.urdf) here must make `mbspar VERB FILE ARGS` exit
# with code 2,
# print nothing on stdout and exactly one line on stderr that starts with "FILE:LINE: " (or the
# "# prefix:" of the file) and contains the "# expect:" fragment. Header lines of a corpus file:
#   # expect: FRAGMENT     (required)
#   # verb: VERB           (default check)
#   # args: ARGS           (extra command-line arguments, split on blanks)
#   # prefix: TEXT         (expected start of the line instead of FILE:LINE:)
# usage: run_bad.sh MBSPAR CORPUS_DIR [LAUNCHER ...]   e.g. LAUNCHER = mpiexec -n 2
# Cases run MBS_BAD_JOBS (default 8) at a time: under mpiexec a failing job costs ~2 s of
# launcher teardown that is mostly waiting.
mbspar=$1
dir=$2
shift 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mbs_bad.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
count=0

jobs=${MBS_BAD_JOBS:-8}
running=0

# run one case in the background: FILE VERB EXPECT PREFIX ARGS...; result in $tmp/res.N
check_case() {
  count=$((count + 1))
  run_case "$count" "$@" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait
    running=0
  fi
}

run_case() {
  id=$1 f=$2 verb=$3 expect=$4 prefix=$5
  shift 5
  exec >"$tmp/res.$id" 2>&1
  set -f # ARGS may hold brackets; $extra is split on blanks on purpose
  # shellcheck disable=SC2086
  if [ -n "$verb" ]; then
    "$@" "$mbspar" "$verb" "$f" $extra >"$tmp/out.$id" 2>"$tmp/err.$id"
  else
    # shellcheck disable=SC2086
    "$@" "$mbspar" $extra >"$tmp/out.$id" 2>"$tmp/err.$id"
  fi
  rc=$?
  set +f
  nl=$(wc -l <"$tmp/err.$id" | tr -d ' ')
  line=$(head -n 1 "$tmp/err.$id")
  why=""
  [ "$rc" -eq 2 ] || why="exit code $rc (expected 2)"
  [ -z "$why" ] && [ "$nl" -ne 1 ] && why="$nl stderr lines (expected 1)"
  [ -z "$why" ] && [ -s "$tmp/out.$id" ] && why="unexpected output on stdout"
  if [ -z "$why" ]; then
    if [ -n "$prefix" ]; then
      case "$line" in "$prefix"*) ;; *) why="line does not start with '$prefix'" ;; esac
    else
      rest=${line#"$f:"}
      num=${rest%%:*}
      case "$num" in '' | *[!0-9]*) why="line does not start with '$f:LINE:'" ;; esac
      case "$rest" in "$num: "*) ;; *) [ -z "$why" ] && why="no ': ' after the line number" ;; esac
    fi
  fi
  if [ -z "$why" ]; then
    case "$line" in *"$expect"*) ;; *) why="fragment '$expect' not in the message" ;; esac
  fi
  if [ -n "$why" ]; then
    echo "FAIL $f: $why"
    echo "  stderr: $(cat "$tmp/err.$id")"
  else
    echo "ok   $f: $line"
  fi
}

for f in "$dir"/*.cfg; do
  expect=$(sed -n 's/^# expect: //p' "$f" | head -n 1)
  verb=$(sed -n 's/^# verb: //p' "$f" | head -n 1)
  extra=$(sed -n 's/^# args: //p' "$f" | head -n 1)
  prefix=$(sed -n 's/^# prefix: //p' "$f" | head -n 1)
  if [ -z "$expect" ]; then
    echo "FAIL $f: no '# expect:' line"
    fail=$((fail + 1))
    continue
  fi
  check_case "$f" "${verb:-check}" "$expect" "$prefix" "$@"
done

# URDF files: `mbspar check FILE.urdf`; the expected fragment in a comment <!-- expect: ... -->
for f in "$dir"/*.urdf; do
  [ -f "$f" ] || continue
  expect=$(sed -n 's/^<!-- expect: \(.*\) -->$/\1/p' "$f" | head -n 1)
  extra=""
  if [ -z "$expect" ]; then
    echo "FAIL $f: no '<!-- expect: ... -->' line"
    fail=$((fail + 1))
    continue
  fi
  check_case "$f" check "$expect" "" "$@"
done

# files that cannot live in the corpus: missing, a directory; and no arguments at all
extra=""
check_case "$dir/no-such-file.cfg" check "cannot open" "" "$@"
check_case "$dir" check "cannot read" "" "$@"
check_case "" "" "missing CONFIG" "mbspar:" "$@"

wait
for i in $(seq 1 "$count"); do
  cat "$tmp/res.$i"
  grep -q '^FAIL' "$tmp/res.$i" && fail=$((fail + 1))
done
echo "$count cases, $fail failed"
[ "$count" -ge 30 ] || { echo "corpus too small"; exit 1; }
[ "$fail" -eq 0 ]
