#!/bin/sh
# End-to-end tests of `mbspar modes` (docs/modes.md): natural frequencies against closed forms
# (pendulum.cfg at q0 and at the static equilibrium, a double pendulum, a 2-dof spring chain
# without gravity, a spherical pendulum linearised in a local rotation vector), the output files,
# the refusals (bad option values, closed loops) and their exit codes. With a launcher the same
# answers at several ranks (rank 0 computes).
# usage: modes_cli.sh MBSPAR CONFIGS_DIR [LAUNCHER ...]   (LAUNCHER: mpiexec -n 2 ...)
mbspar=$1
cfg=$2
shift 2
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_modes

# omega CSV K: omega [rad/s] of mode K of a modes.csv
omega() {
  awk -F, -v k="$2" 'NR == k + 1 { print $2 }' "$1"
}
# relnear A B TOL: |A - B| <= TOL |B|
relnear() {
  awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; if (b < 0) b = -b
    exit !(a != "" && d <= t * b) }'
}
# eig2 M11 M12 M22 K11 K12 K22 K: omega K (1 or 2) of det(K - w^2 M) = 0
eig2() {
  awk -v a="$1" -v b="$2" -v c="$3" -v p="$4" -v q="$5" -v r="$6" -v k="$7" 'BEGIN {
    A = a * c - b * b; B = -(p * c + r * a - 2 * q * b); C = p * r - q * q
    D = sqrt(B * B - 4 * A * C); l = k == 1 ? (-B - D) / (2 * A) : (-B + D) / (2 * A)
    printf "%.17g\n", sqrt(l) }'
}
tol=1e-9 # central differences with h = 1e-5: O(h^2) = 1e-10 relative, measured ~1e-11

# pendulum.cfg: m = 1 kg, d = 0.5 m, I_pivot = 0.083358333333333 + m d^2, g = 9.81, q0 = 0.5
w_eq=$(awk 'BEGIN { printf "%.17g", sqrt(9.81 * 0.5 / (0.083358333333333 + 0.25)) }')
w_q0=$(awk 'BEGIN { printf "%.17g", sqrt(9.81 * 0.5 * cos(0.5) / (0.083358333333333 + 0.25)) }')

run 0 "$@" "$mbspar" modes "$cfg/pendulum.cfg" --at static --out "$tmp/p"
grep -q 'omega \[rad/s\]' "$tmp/out" || bad "pendulum table: $(cat "$tmp/out")"
if [ ! -s "$tmp/p/modes.json" ] || [ ! -s "$tmp/p/modes.csv" ]; then
  bad "pendulum files missing"
fi
w=$(omega "$tmp/p/modes.csv" 1)
relnear "$w" "$w_eq" $tol || bad "pendulum at static: omega $w != $w_eq"
grep -q '"at": "static"' "$tmp/p/modes.json" || bad "at static not reported"
grep -q '"at_equilibrium": true' "$tmp/p/modes.json" || bad "static solution not an equilibrium"
grep -q 'warning' "$tmp/err" && bad "warning at the equilibrium: $(cat "$tmp/err")"
# no overwrite without --force; --force works
run 3 "$@" "$mbspar" modes "$cfg/pendulum.cfg" --out "$tmp/p"
grep -q 'exists; not overwriting' "$tmp/err" || bad "overwrite refusal: $(cat "$tmp/err")"
# at q0 = 0.5 (not an equilibrium): the frequency of the frozen configuration and one warning
run 0 "$@" "$mbspar" modes "$cfg/pendulum.cfg" --out "$tmp/p" --force --quiet
[ -s "$tmp/out" ] && bad "--quiet printed a table"
w=$(omega "$tmp/p/modes.csv" 1)
relnear "$w" "$w_q0" $tol || bad "pendulum at q0: omega $w != $w_q0"
[ "$(grep -c 'warning: modes: q0 is not an equilibrium' "$tmp/err")" -eq 1 ] ||
  bad "no (or more than one) equilibrium warning at q0: $(cat "$tmp/err")"
grep -q '"at_equilibrium": false' "$tmp/p/modes.json" || bad "q0 reported as an equilibrium"

# double pendulum of bobs (mpi-tests/modes/double.cfg): the 2 x 2 closed form
run 0 "$@" "$mbspar" modes "$here/modes/double.cfg" --out "$tmp/d"
for k in 1 2; do
  ref=$(eig2 1.5001 0.4 0.3201 14.715 0 3.924 $k)
  w=$(omega "$tmp/d/modes.csv" $k)
  relnear "$w" "$ref" $tol || bad "double pendulum mode $k: omega $w != $ref"
done

# spring chain without gravity (mpi-tests/modes/springs.cfg), JSON on standard output
run 0 "$@" "$mbspar" modes "$here/modes/springs.cfg" --out "$tmp/s" --json -
head -c 1 "$tmp/out" | grep -q '{' || bad "--json - is not pure JSON"
grep -q '"frequency_hz"' "$tmp/out" || bad "no frequency_hz in the JSON"
for k in 1 2; do
  ref=$(eig2 2 0 1 400 -100 100 $k)
  w=$(omega "$tmp/s/modes.csv" $k)
  relnear "$w" "$ref" $tol || bad "spring chain mode $k: omega $w != $ref"
done

# spherical pendulum (quaternion joint): a zero mode (spin), then two equal swings; --count 2
run 0 "$@" "$mbspar" modes "$here/modes/spherical.cfg" --out "$tmp/b" --count 2
[ "$(awk -F, 'NR > 1' "$tmp/b/modes.csv" | wc -l)" -eq 2 ] || bad "--count 2: not 2 modes"
awk -F, 'NR == 2 { exit !($5 == 1 && $2 == 0) }' "$tmp/b/modes.csv" || bad "spin not a zero mode"
grep -q 'zero (rigid) mode' "$tmp/out" || bad "zero mode not flagged in the table"
ref=$(awk 'BEGIN { printf "%.17g", sqrt(2 * 9.81 * 0.6 / (0.03 + 2 * 0.36)) }')
w=$(omega "$tmp/b/modes.csv" 2)
relnear "$w" "$ref" $tol || bad "spherical pendulum swing: omega $w != $ref"

# the seed-001 50-link chain at its static equilibrium (serially: the drainage takes ~1 s): the
# lowest mode of the hanging chain against the continuum's, w1 = (j0,1 / 2) sqrt(g / L),
# L = 75 m; 50 links differ by 1.2e-5 (docs/modes.md)
if [ $# -eq 0 ]; then
  run 0 "$mbspar" modes "$cfg/seed001_chain50.cfg" --at static --count 3 --out "$tmp/c"
  ref=$(awk 'BEGIN { printf "%.17g", 2.404825557695773 / 2 * sqrt(9.81 / 75) }')
  w=$(omega "$tmp/c/modes.csv" 1)
  relnear "$w" "$ref" 3e-5 || bad "hanging chain: omega $w != continuum $ref"
fi

# bad input: one line naming the option, exit 2, nothing written
for opt in "--at=nowhere" "--count=0"; do
  run 2 "$@" "$mbspar" modes "$cfg/pendulum.cfg" "$opt" --out "$tmp/bad"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "$opt: not one line: $(cat "$tmp/err")"
  grep -q -- "${opt%%=*}" "$tmp/err" || bad "$opt: option not named: $(cat "$tmp/err")"
  if [ -e "$tmp/bad/modes.json" ] || [ -e "$tmp/bad/modes.csv" ]; then
    bad "$opt: files written"
  fi
done
# closed loops: refused with one line, exit 8 (not available)
run 8 "$@" "$mbspar" modes "$cfg/fourbar.cfg" --out "$tmp/loop"
if [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q 'closed loops' "$tmp/err"; then
  bad "loop model refusal: $(cat "$tmp/err")"
fi
[ -e "$tmp/loop/modes.json" ] && bad "loop model: files written"

[ "$fail" -eq 0 ] && echo "modes_cli: all checks passed"
exit "$fail"
