#!/bin/sh
# The second bad-input corpus (issue 30), class by class: integers, NUL and encodings, files that
# are not regular files, numeric extremes, loops, forces, restarts, options. Every case must make
# `mbspar VERB FILE ARGS` exit with code 2, print nothing on stdout and exactly one line on stderr
# that starts with "FILE:LINE: " (or the "# prefix:") and contains the "# expect:" fragment, and
# write no file: each case runs in an empty directory of its own (a run's default output.dir
# "out" is there), which must hold no file afterwards. Header lines of a case file:
#   # class: CLASS        (required; the summary counts cases per class)
#   # expect: FRAGMENT    (required)
#   # verb: VERB          (default check)
#   # args: ARGS          (split on blanks; @TMP@ is the runner's scratch directory)
#   # prefix: TEXT        (expected start of the line instead of FILE:LINE:; @TMP@ as in args)
# Cases that cannot live in git (NUL bytes, UTF-16, FIFOs, devices) are made here, in @TMP@.
# usage: run_bad2.sh MBSPAR CORPUS_DIR [LAUNCHER ...]   e.g. LAUNCHER = mpiexec -n 2
# absolute paths: every case runs in a directory of its own
mbspar=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$(cd "$2" && pwd)
shift 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mbs_bad2.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
jobs=${MBS_BAD_JOBS:-8}
# a case that hangs (a FIFO read before issue 30) fails instead of holding the test to its timeout
hang=${MBS_BAD_HANG:-60}
to=""
command -v timeout >/dev/null 2>&1 && to="timeout $hang"
count=0
running=0

# scratch inputs of the restart cases
mkfifo "$tmp/fifo" || exit 1
printf 'not a checkpoint\n' >"$tmp/text.bin"

# run one case in the background: CLASS FILE VERB EXPECT PREFIX ARGS...; result in $tmp/res.N
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
  id=$1 class=$2 f=$3 verb=$4 expect=$5 prefix=$6
  shift 6
  exec >"$tmp/res.$id" 2>&1
  cwd="$tmp/cwd.$id"
  mkdir "$cwd" || exit 1
  set -f # ARGS may hold brackets; $extra is split on blanks on purpose
  # shellcheck disable=SC2086
  (cd "$cwd" && exec $to "$@" "$mbspar" "$verb" "$f" $extra) >"$tmp/out.$id" 2>"$tmp/err.$id"
  rc=$?
  set +f
  [ "$rc" -eq 124 ] && [ -n "$to" ] && echo "(hung: killed after $hang s)" >>"$tmp/err.$id"
  nl=$(wc -l <"$tmp/err.$id" | tr -d ' ')
  line=$(head -n 1 "$tmp/err.$id")
  why=""
  [ "$rc" -eq 2 ] || why="exit code $rc (expected 2)"
  [ -z "$why" ] && [ "$nl" -ne 1 ] && why="$nl stderr lines (expected 1)"
  [ -z "$why" ] && [ -s "$tmp/out.$id" ] && why="unexpected output on stdout"
  if [ -z "$why" ] && [ -n "$(find "$cwd" -type f)" ]; then
    why="a refused run wrote files: $(find "$cwd" -type f | tr '\n' ' ')"
  fi
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
    echo "FAIL [$class] $f: $why"
    echo "  stderr: $(cat "$tmp/err.$id")"
  else
    echo "ok   [$class] $f: $line"
  fi
}

for f in "$dir"/*.cfg; do
  head=$(sed -n '/^#/!q;p' "$f")
  class=$(echo "$head" | sed -n 's/^# class: //p' | head -n 1)
  expect=$(echo "$head" | sed -n 's/^# expect: //p' | head -n 1)
  verb=$(echo "$head" | sed -n 's/^# verb: //p' | head -n 1)
  extra=$(echo "$head" | sed -n 's/^# args: //p' | head -n 1 | sed "s|@TMP@|$tmp|g")
  prefix=$(echo "$head" | sed -n 's/^# prefix: //p' | head -n 1 | sed "s|@TMP@|$tmp|g")
  if [ -z "$expect" ] || [ -z "$class" ]; then
    count=$((count + 1))
    echo "FAIL $f: no '# class:' or '# expect:' line" >"$tmp/res.$count"
    continue
  fi
  check_case "$class" "$f" "${verb:-check}" "$expect" "$prefix" "$@"
done

# made here: NUL bytes, encodings, control characters (one chain model, 3 lines)
g="$tmp/gen"
mkdir "$g" || exit 1
l1='model = {'
l2='  chain = { n = 3; joint = "revolute"; axis = [0, 1, 0]; length = 0.1; mass = 0.1; };'
l3='};'
printf '%s\n%s\n%s\n\000solver = { method = "bogus"; };\n' "$l1" "$l2" "$l3" >"$g/nul.cfg"
printf '%s\n%s\n# a comment\000\n%s\n' "$l1" "$l2" "$l3" >"$g/nul_comment.cfg"
# UTF-16 and UTF-32: every ASCII byte followed (LE) or preceded (BE) by NUL bytes
utf() { # ENDIAN(le|be) WIDTH(2|4) BOM(0|1) TEXT
  od -An -v -tx1 | tr -s ' \n' '\n\n' | sed '/^$/d' | {
    [ "$3" = 1 ] && case "$1$2" in le2) printf '\377\376' ;; be2) printf '\376\377' ;;
    le4) printf '\377\376\000\000' ;; be4) printf '\000\000\376\377' ;; esac
    while read -r b; do
      case "$1$2" in
      le2) printf "\\$(printf '%03o' "0x$b")\\000" ;;
      be2) printf "\\000\\$(printf '%03o' "0x$b")" ;;
      le4) printf "\\$(printf '%03o' "0x$b")\\000\\000\\000" ;;
      be4) printf "\\000\\000\\000\\$(printf '%03o' "0x$b")" ;;
      esac
    done
  }
}
printf '%s\n%s\n%s\n' "$l1" "$l2" "$l3" | utf le 2 1 >"$g/utf16le_bom.cfg"
printf '%s\n%s\n%s\n' "$l1" "$l2" "$l3" | utf be 2 1 >"$g/utf16be_bom.cfg"
printf '%s\n%s\n%s\n' "$l1" "$l2" "$l3" | utf le 2 0 >"$g/utf16le.cfg"
printf '%s\n%s\n%s\n' "$l1" "$l2" "$l3" | utf le 4 1 >"$g/utf32le_bom.cfg"
printf '%s\n%s\n# caf\351 (Latin-1)\n%s\n' "$l1" "$l2" "$l3" >"$g/latin1.cfg"
printf '%s\n%s\n\033[1m\n%s\n' "$l1" "$l2" "$l3" >"$g/control.cfg"
check_case "NUL/encoding" "$g/nul.cfg" check "NUL byte at offset" "" "$@"
check_case "NUL/encoding" "$g/nul_comment.cfg" check "NUL byte at offset" "" "$@"
check_case "NUL/encoding" "$g/utf16le_bom.cfg" check "is UTF-16 text" "" "$@"
check_case "NUL/encoding" "$g/utf16be_bom.cfg" check "is UTF-16 text" "" "$@"
check_case "NUL/encoding" "$g/utf16le.cfg" check "looks like UTF-16 text" "" "$@"
check_case "NUL/encoding" "$g/utf32le_bom.cfg" check "is UTF-32 text" "" "$@"
check_case "NUL/encoding" "$g/latin1.cfg" check "byte 0xE9 at offset" "" "$@"
check_case "NUL/encoding" "$g/control.cfg" check "control character 0x1B" "" "$@"

# made here: files that are not regular files (each blocked forever before issue 30)
mkfifo "$g/fifo.cfg" "$g/robot.urdf" "$g/motion.csv" || exit 1
printf 'model = { urdf = "robot.urdf"; };\n' >"$g/urdf_fifo.cfg"
printf '%s\n%s\n%s\ninverse = { T = 1.0; steps = 4; motion = "motion.csv"; };\n' "$l1" "$l2" \
  "$l3" >"$g/motion_fifo.cfg"
# a one-joint robot whose torque table is a FIFO, and one whose table holds a NUL byte
cat >"$g/r.urdf" <<'EOF'
<robot name="r">
  <link name="base"/>
  <link name="l1"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/>
    <axis xyz="0 1 0"/></joint>
</robot>
EOF
mkfifo "$g/tau.csv" || exit 1
printf 't,j1\n0,1\000\n1,2\n' >"$g/tau_nul.csv"
printf 'model = {\n  urdf = { file = "r.urdf"; torques = "tau.csv"; };\n};\n' >"$g/tau_fifo.cfg"
printf 'model = {\n  urdf = { file = "r.urdf"; torques = "tau_nul.csv"; };\n};\n' >"$g/tau_nul.cfg"
check_case "non-regular files" "$g/tau_fifo.cfg" accel "is a FIFO (named pipe), not a regular" "" "$@"
check_case "NUL/encoding" "$g/tau_nul.cfg" accel "NUL byte at offset" "$g/tau_nul.csv:2: " "$@"
check_case "non-regular files" "$g/fifo.cfg" check "is a FIFO (named pipe), not a regular file" "" "$@"
check_case "non-regular files" "$g/urdf_fifo.cfg" check "is a FIFO (named pipe), not a regular" "" "$@"
check_case "non-regular files" "$g/robot.urdf" check "is a FIFO (named pipe), not a regular" "" "$@"
check_case "non-regular files" "$g/motion_fifo.cfg" inverse "inverse.motion: cannot read" "" "$@"
check_case "non-regular files" /dev/null check "is a character device, not a regular file" "" "$@"
check_case "non-regular files" "$g" check "is a directory" "" "$@"

wait
fail=0
for i in $(seq 1 "$count"); do
  cat "$tmp/res.$i"
  grep -q '^FAIL' "$tmp/res.$i" && fail=$((fail + 1))
done

# and a UTF-8 byte-order mark is skipped: the file is valid
printf '\357\273\277%s\n%s\n%s\n' "$l1" "$l2" "$l3" >"$g/bom.cfg"
if (cd "$tmp" && "$@" "$mbspar" check "$g/bom.cfg" >/dev/null 2>"$tmp/bom.err"); then
  echo "ok   [NUL/encoding] $g/bom.cfg: a UTF-8 byte-order mark is skipped"
else
  echo "FAIL [NUL/encoding] $g/bom.cfg: refused: $(cat "$tmp/bom.err")"
  fail=$((fail + 1))
fi
count=$((count + 1))

echo "classes: $(cat "$tmp"/res.* | sed -n 's/^\(ok  \|FAIL\) \[\([^]]*\)\].*/\2/p' | sort | uniq -c |
  awk '{n=$1; $1=""; printf "%s%s %d", s, substr($0, 2), n; s=", "} END {print ""}')"
echo "$count cases, $fail failed"
[ "$count" -ge 40 ] || { echo "corpus too small"; exit 1; }
[ "$fail" -eq 0 ]
