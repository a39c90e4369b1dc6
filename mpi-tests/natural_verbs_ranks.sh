#!/bin/sh
# `static`, `inverse` and `check` under model.formulation = "natural" at several ranks (issue 33,
# docs/natural.md 8): they run on rank 0 at any rank count (the other ranks wait), so the JSON
# results at NP ranks equal the one-rank results bit for bit (apart from the run's metadata:
# ranks, argv, dates, times, memory), inverse.csv too; a refusal is the same one line and exit
# code on every rank count. Verbs x models: static on the four-bar (a loop) and a depth-3 tree,
# inverse on the gripper (a tree) and on the four-bar without inverse.actuated (refused, exit 2),
# check on the four-bar and the ladder.
# usage: natural_verbs_ranks.sh MBSPAR CONFIGS_DIR NP LAUNCHER...   (LAUNCHER: mpiexec -n NP ...)
mbspar=$1
cfg=$2
np=$3
shift 3
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_natural_verbs_ranks
nat="model.formulation=natural"

for job in static:fourbar static:tree inverse:gripper check:fourbar check:ladder; do
  v=${job%%:*} c=${job#*:} s=""
  [ "$c" = tree ] && s="--set model.tree.depth=3"
  # shellcheck disable=SC2086 # (s: several words or none)
  run 0 "$mbspar" "$v" "$cfg/$c.cfg" --set "$nat" $s --out "$tmp/${v}_${c}_1" \
    --json "$tmp/${v}_${c}_1.json" --quiet
  # shellcheck disable=SC2086
  run 0 "$@" "$mbspar" "$v" "$cfg/$c.cfg" --set "$nat" $s --out "$tmp/${v}_${c}_np" \
    --json "$tmp/${v}_${c}_np.json" --quiet
done
cmp -s "$tmp/inverse_gripper_1/inverse.csv" "$tmp/inverse_gripper_np/inverse.csv" ||
  bad "inverse.csv (gripper) at $np ranks differs from 1 rank"
python3 - "$tmp" "$np" <<'PY' || bad "natural verbs at $np ranks against 1 rank"
import json, sys
t, np_ = sys.argv[1], int(sys.argv[2])
# (check's "decomposition": the split over the ranks, present at 2+ ranks only)
SKIP = {"run", "ranks", "peak_rss_bytes", "time_s", "build", "date", "wall_s", "timers",
        "decomposition"}
def walk(x, y, path, out):
    if isinstance(x, dict):
        assert isinstance(y, dict) and set(x) - SKIP == set(y) - SKIP, (path, set(x) ^ set(y))
        for k in x:
            if k not in SKIP and not k.startswith("time"):
                walk(x[k], y[k], path + "." + k, out)
    elif isinstance(x, list):
        assert isinstance(y, list) and len(x) == len(y), path
        for i, (u, v) in enumerate(zip(x, y)):
            walk(u, v, f"{path}[{i}]", out)
    else:
        out[0] += 1
        assert x == y, (path, x, y)
for job in ("static_fourbar", "static_tree", "inverse_gripper", "check_fourbar", "check_ladder"):
    a, b = (json.load(open(f"{t}/{job}_{s}.json")) for s in ("1", "np"))
    assert b["ranks"] == np_, b["ranks"]
    n = [0]
    walk(a, b, job, n)
    print(f"{job}: {np_} ranks against 1: {n[0]} values, all equal")
PY
# a refusal: the same one line and exit 2 at NP ranks as at 1
run 2 "$mbspar" inverse "$cfg/fourbar.cfg" --set "$nat" --out "$tmp/inv1" --quiet
cp "$tmp/err" "$tmp/err1"
run 2 "$@" "$mbspar" inverse "$cfg/fourbar.cfg" --set "$nat" --out "$tmp/invnp" --quiet
line=$(grep -c "inverse on a model with loops needs inverse.actuated" "$tmp/err")
[ "$line" -eq 1 ] || bad "the refusal at $np ranks: $(cat "$tmp/err")"
grep -q "inverse on a model with loops needs inverse.actuated" "$tmp/err1" || bad "$(cat "$tmp/err1")"
# nothing written, not even the --out directory (until 2026-11-29 the verb made it before the
# check, under either formulation: an empty directory was left)
{ [ ! -e "$tmp/inv1" ] && [ ! -e "$tmp/invnp" ]; } || bad "the refused inverse made its --out directory"

[ "$fail" -eq 0 ] || exit 1
echo "natural_verbs_ranks: all checks passed"
