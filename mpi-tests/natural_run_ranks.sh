#!/bin/sh
# `mbspar run` under model.formulation = "natural" at several ranks (issue 33, docs/natural.md 13):
# every rank runs a replica of the (p, ṗ) integration and each evaluation's solve is distributed
# (each rank eliminates its bodies, one allreduce of the interface system). The run at NP ranks
# against the same run at one rank on a chain, a tree and two loop models (the six-bar: a dependent
# closure row and a spring; the hexapod: 6 loops, dp5): rk4's trajectory.csv and energy.csv agree
# to 1e-12 relative on every row (measured <= 5e-14), dp5's at t_end (its step sizes differ in the
# 10th digit: the error estimate amplifies the solves' rounding), the same evaluations and
# projections, every constraint after the projection <= 1e-10; a restart from the NP-rank run's checkpoint at NP ranks rewrites
# its files byte for byte.
# usage: natural_run_ranks.sh MBSPAR CONFIGS_DIR NP LAUNCHER...   (LAUNCHER: mpiexec -n NP ...)
mbspar=$1
cfg=$2
np=$3
shift 3
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_natural_run_ranks
nat="model.formulation=natural"

# each model at 1 rank (NAME_1) and at NP ranks (NAME_np); the hexapod's run at NP ranks writes
# checkpoints (every 20 steps) for the restart below
rk="--set integrator.method=rk4 --set integrator.dt=1e-3 --set integrator.t_end=0.05"
dp="--set integrator.method=dp5 --set integrator.tol=1e-8 --set integrator.t_end=0.1"
for name in chain tree sixbar hexapod; do
  case $name in
  chain) c=chain s="$rk --set model.chain.n=24 --set model.chain.q0=0.05 --set output.every=5" ;;
  tree) c=tree s="$rk --set model.tree.depth=4 --set output.every=5" ;;
  sixbar) c=sixbar s="$rk --set output.every=5" ;;
  *) c=hexapod s="$dp --set output.every=2 --set output.checkpoint_every=20" ;;
  esac
  # shellcheck disable=SC2086 # (s: several words)
  run 0 "$mbspar" run "$cfg/$c.cfg" --set "$nat" $s --out "$tmp/${name}_1" --quiet
  # shellcheck disable=SC2086
  run 0 "$@" "$mbspar" run "$cfg/$c.cfg" --set "$nat" $s --out "$tmp/${name}_np" --quiet
done
# the restart at NP ranks from the last checkpoint: the same files, byte for byte
mkdir -p "$tmp/hx0" && cp "$tmp/hexapod_np/energy.csv" "$tmp/hexapod_np/trajectory.csv" \
  "$tmp/hexapod_np/run.json" "$tmp/hx0"
# shellcheck disable=SC2086
run 0 "$@" "$mbspar" run "$cfg/hexapod.cfg" --set "$nat" $dp --set output.every=2 \
  --set output.checkpoint_every=20 --out "$tmp/hexapod_np" \
  --restart "$tmp/hexapod_np/checkpoint.bin" --quiet
{ cmp -s "$tmp/hx0/energy.csv" "$tmp/hexapod_np/energy.csv" &&
  cmp -s "$tmp/hx0/trajectory.csv" "$tmp/hexapod_np/trajectory.csv"; } ||
  bad "natural restart at $np ranks (hexapod): energy.csv or trajectory.csv differ"
python3 - "$tmp" "$np" <<'PY' || bad "natural run at $np ranks against 1 rank"
import csv, json, sys
t, np_ = sys.argv[1], int(sys.argv[2])
def table(path):
    rows = list(csv.reader(open(path)))
    return rows[0], [[float(x) for x in r] for r in rows[1:]]
for name in ("chain", "tree", "sixbar", "hexapod"):
    a = json.load(open(f"{t}/{name}_1/run.json"))
    b = json.load(open(f"{t}/{'hx0' if name == 'hexapod' else name + '_np'}/run.json"))
    worst = {}
    for f in ("trajectory.csv", "energy.csv"):
        ha, ra = table(f"{t}/{name}_1/{f}")
        hb, rb = table(f"{t}/{name}_np/{f}")
        assert ha == hb and len(ra) == len(rb) and len(ra) > 3, (name, f, len(ra), len(rb))
        scale = max(max(abs(x) for x in r) for r in ra)
        if name == "hexapod": # dp5: the step sizes differ in the 10th digit (the error
            ra, rb = ra[-1:], rb[-1:] # estimate amplifies rounding): compare at t_end
        worst[f] = max(abs(x - y) for u, v in zip(ra, rb) for x, y in zip(u, v)) / scale
    na, nb = a["natural"], b["natural"]
    print(f"{name}: {np_} ranks against 1: trajectory {worst['trajectory.csv']:.1e}, energy "
          f"{worst['energy.csv']:.1e} relative; evaluations {a['solver']['evaluations']} "
          f"{b['solver']['evaluations']}, projections {na['projections']} {nb['projections']}, "
          f"violation_max {na['violation_max']:.1e} {nb['violation_max']:.1e}, "
          f"solve_ranks {nb.get('solve_ranks')}")
    assert b["results"]["complete"] and nb.get("solve_ranks") == np_, (name, nb)
    assert max(worst.values()) <= 1e-12, (name, worst)
    assert a["solver"]["evaluations"] == b["solver"]["evaluations"], name
    # the evaluations and the projection's corrections by parts: rank 0 factored its range only
    # (fewer bodies than the model's per call)
    calls = nb["parts_solves"] + nb["parts_corrections"]
    nbody = na["coordinates"] // 12
    print(f"  {name}: {nb['parts_solves']} solves and {nb['parts_corrections']} corrections by "
          f"parts, rank 0 factored {nb['parts_factored_rank0'] / calls:.1f} of {nbody} bodies each")
    assert nb["parts_solves"] >= 1 and nb["parts_corrections"] >= 1, nb
    assert nb["parts_factored_rank0"] < calls * nbody, nb
    assert na["projections"] == nb["projections"] and nb["violation_max"] <= 1e-10, (name, na, nb)
PY

[ "$fail" -eq 0 ] || exit 1
echo "natural_run_ranks: all checks passed"
