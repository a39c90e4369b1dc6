#!/bin/sh
# The example arm stays sane (issue 32): configs/urdf_arm.cfg, whose joint springs hold the bent
# pose, keeps every joint inside its URDF limits over 3 s (mbspar does not enforce limits; without
# the springs the shoulder falls to 3.6 rad against a limit of 2), and the same robot without
# the springs does leave them (so the check can fail). `run` counts the crossings of the limits
# (issue 32): run.json limits all 0 with the springs, some > 0 without, and the first crossing is
# warned about in one stderr line.
# usage: arm_limits.sh MBSPAR CONFIGS_DIR PYTHON3
mbspar=$1
cfg=$2
py=$3
here=$(dirname "$0")
# shellcheck source=testlib.sh
. "$here/testlib.sh"
mbs_test_init mbs_arm
check() { # DIR WANT(1: inside, 0: outside)
  "$py" - "$1/trajectory.csv" "$2" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
lim = {"q_upper_arm": (-2, 2), "q_forearm": (-2.5, 2.5), "q_telescope": (0, 0.2)}
inside = True
for k, (lo, hi) in lim.items():
    v = [float(r[k]) for r in rows]
    print("  %s: %.3f .. %.3f (limits %g .. %g)" % (k, min(v), max(v), lo, hi))
    inside = inside and lo <= min(v) and max(v) <= hi
sys.exit(0 if inside == (sys.argv[2] == "1") else 1)
PY
}
run 0 "$mbspar" run "$cfg/urdf_arm.cfg" --out "$tmp/arm" --quiet --set output.format=csv \
  --set integrator.t_end=3
check "$tmp/arm" 1 || bad "urdf_arm.cfg leaves its joint limits"
# run.json limits: WANT 0 (no crossing) or 1 (some); one warning line iff crossings
lims() {
  "$py" - "$1/run.json" "$2" <<'PY'
import json, sys
lim = json.load(open(sys.argv[1]))["limits"]
print("  limits:", lim)
assert set(lim) == {"shoulder", "elbow", "extend"}, lim
sys.exit(0 if (sum(lim.values()) > 0) == (sys.argv[2] == "1") else 1)
PY
}
lims "$tmp/arm" 0 || bad "urdf_arm.cfg: run.json counts limit crossings"
grep -q "left its URDF limits" "$tmp/err" && bad "urdf_arm.cfg: a limit warning: $(cat "$tmp/err")"
# the same robot without the springs (damping only, as in the file)
sed '/^    joints = (/,/^    );/d' "$cfg/urdf_arm.cfg" >"$tmp/free.cfg"
cp "$cfg/arm.urdf" "$tmp/"
run 0 "$mbspar" run "$tmp/free.cfg" --out "$tmp/free" --quiet --set output.format=csv \
  --set integrator.t_end=3
check "$tmp/free" 0 || bad "without its springs the arm should leave its limits"
lims "$tmp/free" 1 || bad "without its springs: run.json limits count no crossing"
[ "$(grep -c "^mbspar: warning: joint .* left its URDF limits \[.*\] at t = .*; mbspar does not model limits (docs/urdf.md)$" "$tmp/err")" -eq 1 ] ||
  bad "without its springs: want one limit warning line, stderr: $(cat "$tmp/err")"
[ "$fail" -eq 0 ] && echo "arm_limits: passed" || echo "arm_limits: $fail failure(s)"
[ "$fail" -eq 0 ]
