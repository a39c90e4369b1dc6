#!/bin/sh
# A driven URDF robot through `run` (docs/urdf.md "Joint forces"): the UR5 of the corpus held
# at q0 by the torques `mbspar inverse` computes (fed back as model.urdf.torques, as inverse.csv
# and as a table of joint-name columns) stays at q0 to 1e-9 rad over 0.2 s; without the table
# it falls; a table naming no joint of the robot is refused (FILE:LINE of the CSV, exit 2, one
# line, nothing written).
# usage: urdf_drive.sh MBSPAR DRIVE_DIR [LAUNCHER ...]   (LAUNCHER: mpiexec -n 2; then schur)
mbspar=$1
dir=$2
shift 2
method=aba
[ $# -gt 0 ] && method=schur
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_drive
cfg=$dir/ur5_hold.cfg

# largest |q - q(t=0)| over the rows of trajectory.csv (the 6 joint coordinates)
drift() {
  awk -F, 'NR == 2 { for (i = 2; i <= 7; i++) q0[i] = $i }
           NR > 1 { for (i = 2; i <= 7; i++) { d = $i - q0[i]; if (d < 0) d = -d; if (d > m) m = d } }
           END { printf "%.3e\n", m + 0 }' "$1"
}

run 0 "$mbspar" inverse "$cfg" --out "$tmp/inv" --quiet
inv=$tmp/inv/inverse.csv
[ -s "$inv" ] || bad "inverse wrote no inverse.csv"

# the same torques under the joints' names (the UR5's joint moving each link)
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^tau_/) c[++n] = i
                   print "t,shoulder_pan_joint,shoulder_lift_joint,elbow_joint,wrist_1_joint,wrist_2_joint,wrist_3_joint"; next }
         { printf "%s", $1; for (k = 1; k <= n; k++) printf ",%s", $(c[k]); printf "\n" }' \
  "$inv" >"$tmp/named.csv"

for table in "$inv" "$tmp/named.csv"; do
  rm -rf "$tmp/run"
  run 0 "$@" "$mbspar" run "$cfg" --set solver.method=$method --set "model.urdf.torques=$table" \
    --out "$tmp/run" --quiet
  d=$(drift "$tmp/run/trajectory.csv")
  echo "held by $(basename "$table") ($method): max |q - q0| = $d rad"
  awk -v d="$d" 'BEGIN { exit !(d + 0 <= 1e-9) }' || bad "$(basename "$table"): the arm moved by $d"
  # the report names the table and the config's joint forces
  tr -d ' \n' <"$tmp/run/run.json" >"$tmp/run1.json"
  grep -q "\"torques\":{\"file\":\"$table\",\"rows\":3," "$tmp/run1.json" ||
    bad "run.json: no urdf.torques naming $table"
  grep -q '"joint_forces":\[{"joint":"wrist_3_joint","damping":\[0.050000000000000003\]}\]' "$tmp/run1.json" ||
    bad "run.json: no urdf.joint_forces"
done

rm -rf "$tmp/run"
run 0 "$@" "$mbspar" run "$cfg" --set solver.method=$method --out "$tmp/run" --quiet
d=$(drift "$tmp/run/trajectory.csv")
echo "without the table: max |q - q0| = $d rad"
awk -v d="$d" 'BEGIN { exit !(d + 0 >= 1e-2) }' || bad "without torques the arm did not fall ($d)"

# check lists the joint forces and the table
run 0 "$@" "$mbspar" check "$cfg" --set "model.urdf.torques=$tmp/named.csv"
grep -q '^  joint forces wrist_3_joint  *damping$' "$tmp/out" || bad "check: no joint forces line"
grep -q "^  torque table $tmp/named.csv: 3 rows, t = 0 .. 1 s, 6 joint(s)$" "$tmp/out" ||
  bad "check: no torque table line: $(grep torque "$tmp/out")"

# a restart continues the table at its time: checkpoint at t = 0.1, restart to 0.2, the last row
# equals the straight run's bitwise (a table that varies, interpolated across the checkpoint)
printf 't,shoulder_lift_joint,elbow_joint\n0,-30,-10\n0.1,-36,-18\n0.2,-33,-12\n' >"$tmp/vary.csv"
rm -rf "$tmp/run" "$tmp/rst"
run 0 "$@" "$mbspar" run "$cfg" --set solver.method=$method --set "model.urdf.torques=$tmp/vary.csv" \
  --out "$tmp/run" --quiet
run 0 "$@" "$mbspar" run "$cfg" --set solver.method=$method --set "model.urdf.torques=$tmp/vary.csv" \
  --set output.checkpoint_every=50 --set integrator.t_end=0.1 --out "$tmp/rst" --quiet
run 0 "$@" "$mbspar" run "$cfg" --set solver.method=$method --set "model.urdf.torques=$tmp/vary.csv" \
  --restart "$tmp/rst/checkpoint.bin" --out "$tmp/rst" --quiet
[ "$(tail -n 1 "$tmp/run/trajectory.csv")" = "$(tail -n 1 "$tmp/rst/trajectory.csv")" ] ||
  bad "restart with a torque table: the last rows differ"
d=$(drift "$tmp/run/trajectory.csv")
echo "driven by a varying table: max |q - q0| = $d rad; restart at t = 0.1 gives the same last row"
awk -v d="$d" 'BEGIN { exit !(d + 0 >= 1e-3) }' || bad "the varying table did not move the arm ($d)"

# a table with a column that is no joint of the robot
printf 't,shoulder_pan_joint,knee_joint\n0,1,2\n' >"$tmp/bad.csv"
run 2 "$@" "$mbspar" run "$cfg" --set "model.urdf.torques=$tmp/bad.csv" --out "$tmp/refused"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "refused run: $(wc -l <"$tmp/err") stderr lines"
grep -q "^$tmp/bad.csv:1: column 3: \"knee_joint\" is not a joint of the robot" "$tmp/err" ||
  bad "refused run message: $(cat "$tmp/err")"
[ -e "$tmp/refused" ] && bad "a refused run wrote $tmp/refused"
[ "$fail" -eq 0 ] || exit 1
echo "urdf_drive: all checks passed"
