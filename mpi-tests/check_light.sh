#!/bin/sh
# `mbspar check` reports the engine's decomposition (issue 30, item 3): on a chain of 12 links
# whose every third link carries a light body (1e-8 kg, 1e-16 kg m^2) on a revolute joint, the
# partition keeps the rank boundaries off the light joints (mbs_partitionRunsLight,
# docs/formulation.md 4.9); check's `decomposition.first_body` must equal the `first_body` of
# accel's `decomposition` (the engine, distributed and replicated models) at 3 ranks, and differ
# from the partition of the same chain without light bodies (so that the light rule is what is
# compared: [0 8 17] against [0 8 16]), and no warning. With every link's body light there is no
# clean place (docs/formulation.md 4.9), but every cut is a light leaf, made exact by the change
# of variables on the distributed and the replicated model alike: an explicit schur at 2 ranks
# prints no warning; with that off (MBSPAR_SCHUR_LIGHT=0) it prints one warning line naming the
# light joint at the boundary before the run (then the guard's); at 2 threads of one rank the
# segments are joined (mbs_schurRankCreate): no warning. 30 s under load.
# usage: check_light.sh MBSPAR MPIEXEC NPFLAG [PREFLAGS ...]
mbspar=$1
mpiexec=$2
npflag=$3
shift 3
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_check_light

# light.cfg: every third link's body light; heavy.cfg: the same chain, every body 0.5 kg
light="$tmp/light.cfg"
heavy="$tmp/heavy.cfg"
{
  echo 'model = { gravity = [0.0, 0.0, -9.81]; bodies = ('
  k=0
  while [ $k -lt 12 ]; do
    if [ $k -eq 0 ]; then par=ground; else par="s$((k - 1))"; fi
    [ $k -gt 0 ] && echo ','
    if [ $((k % 3)) -eq 1 ]; then m=1e-8 i=1e-16; else m=0.5 i=0.01; fi
    echo "{ name = \"l$k\"; parent = \"$par\"; joint = { type = \"revolute\"; axis = [0.0, 1.0, 0.0];"
    echo "  origin = [0.0, 0.0, -0.2]; q0 = [0.$((k % 5))]; qd0 = [0.$k]; }; mass = 1.0;"
    echo "  com = [0.0, 0.0, -0.25]; inertia = [0.02, 0.02, 0.001, 0.0, 0.0, 0.0]; },"
    echo "{ name = \"s$k\"; parent = \"l$k\"; joint = { type = \"revolute\"; axis = [1.0, 0.0, 0.0];"
    echo "  origin = [0.01, 0.0, -0.3]; }; mass = $m; com = [0.0, 0.0, 0.0];"
    echo "  inertia = [$i, $i, $i, 0.0, 0.0, 0.0]; }"
    k=$((k + 1))
  done
  echo '); };'
  echo 'solver = { method = "schur"; };'
} >"$light"
sed 's/mass = 1e-8;/mass = 0.5;/; s/1e-16/0.01/g' "$light" >"$heavy"

# firsts JSON: the first bodies of the ranks, space separated (check: decomposition.first_body;
# accel: decomposition[].first_body, then its model.storage)
firsts() {
  python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
d = j["decomposition"]
if isinstance(d, dict):
    print(" ".join(str(x) for x in d["first_body"]))
else:
    print(" ".join(str(r["first_body"]) for r in d), j["model"]["storage"])
PY
}

differ=0
pre="$*" # the launcher's own flags (word-split on purpose)
np=3
# shellcheck disable=SC2086
run 0 "$mpiexec" "$npflag" "$np" $pre "$mbspar" check "$light" --json "$tmp/c.json"
c=$(firsts "$tmp/c.json")
[ -n "$c" ] || bad "np=$np: check reports no first_body"
for storage in distributed replicated; do
  model=local
  [ $storage = replicated ] && model=full # MBSPAR_MODEL=full: the replicated model
  # shellcheck disable=SC2086
  run 0 env MBSPAR_MODEL=$model "$mpiexec" "$npflag" "$np" $pre -x MBSPAR_MODEL "$mbspar" \
    accel "$light" --json "$tmp/a.json"
  a=$(firsts "$tmp/a.json")
  [ "$a" = "$c $storage" ] || bad "np=$np $storage: accel's ranks start at [$a], check reports [$c]"
  if grep -q 'warning' "$tmp/err"; then bad "np=$np $storage: a warning on clean boundaries: $(cat "$tmp/err")"; fi
done
# shellcheck disable=SC2086
run 0 "$mpiexec" "$npflag" "$np" $pre "$mbspar" check "$heavy" --json "$tmp/h.json"
[ "$(firsts "$tmp/h.json")" = "$c" ] || differ=1
echo "np=$np: light chain ranks start at [$c], without light bodies at [$(firsts "$tmp/h.json")]"
# every link's body light (no clean place anywhere): an explicit schur at 2 ranks of the
# distributed model, one thread: the cut is a light leaf, made exact (4.9): no layout warning,
# no guard warning
sed 's/mass = 0.5;/mass = 1e-8;/; s/0.01, 0.01, 0.01/1e-16, 1e-16, 1e-16/' "$light" >"$tmp/all.cfg"
# shellcheck disable=SC2086
run 0 "$mpiexec" "$npflag" 2 $pre -x OMP_NUM_THREADS=1 "$mbspar" accel "$tmp/all.cfg"
if grep -q 'warning' "$tmp/err"; then bad "all light, 2 ranks: a warning: $(cat "$tmp/err")"; fi
# the replicated model (MBSPAR_MODEL=full) at 2 ranks, one thread: the same, no warning
# shellcheck disable=SC2086
run 0 env MBSPAR_MODEL=full "$mpiexec" "$npflag" 2 $pre -x OMP_NUM_THREADS=1 -x MBSPAR_MODEL "$mbspar" accel "$tmp/all.cfg"
if grep -q 'warning' "$tmp/err"; then bad "all light, 2 ranks, full model: a warning: $(cat "$tmp/err")"; fi
# the light leaves off (MBSPAR_SCHUR_LIGHT=0), distributed model: one layout warning before the
# run, naming the light joint at the rank boundary, then the guard's
# shellcheck disable=SC2086
run 0 env MBSPAR_SCHUR_LIGHT=0 "$mpiexec" "$npflag" 2 $pre -x OMP_NUM_THREADS=1 -x MBSPAR_SCHUR_LIGHT "$mbspar" accel "$tmp/all.cfg"
[ "$(grep -c 'warning: schur: a rank boundary cuts the light joint between [ls][0-9]* and [ls][0-9]* (no clean place within 8 bodies)' "$tmp/err")" -eq 1 ] ||
  bad "all light, 2 ranks, light leaves off: want one layout warning: $(cat "$tmp/err")"
head -n 1 "$tmp/err" | grep -q 'warning: schur:.*solver.method = "aba" is exact' ||
  bad "all light, 2 ranks, light leaves off: the layout warning is not the first line: $(cat "$tmp/err")"
grep -q 'warning: accel: the result of schur misses' "$tmp/err" || bad "all light, 2 ranks, light leaves off: guard silent"
# the same at 2 threads of one rank: the segments joined, exact, silent
run 0 env OMP_NUM_THREADS=2 "$mbspar" accel "$tmp/all.cfg"
if grep -q 'warning' "$tmp/err"; then bad "all light, 2 threads: a warning: $(cat "$tmp/err")"; fi
[ $differ -eq 1 ] || bad "the light rule moves no boundary on this chain: the test compares nothing"
exit "$fail"
