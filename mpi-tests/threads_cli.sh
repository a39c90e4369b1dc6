#!/bin/sh
# The OpenMP thread default and the oversubscription warning end to end (parallel/threads.c).
# usage: threads_cli.sh MBSPAR CONFIGS_DIR [LAUNCHER ...]   (LAUNCHER: mpiexec -n 2 --bind-to none)
mbspar=$1
cfg=$2
shift 2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_threads

# the affinity records of a report: python3 check over them (a: one rank's record, A: all)
acheck() {
  python3 - "$1" "$2" <<'PY' || bad "affinity check failed: $2 ($1)"
import json, sys
A = json.load(open(sys.argv[1]))["affinity"]
ok = all(eval(sys.argv[2], {"a": a, "A": A}) for a in A)
if not ok:
    print(json.dumps(A, indent=1))
sys.exit(0 if ok else 1)
PY
}

# without OMP_NUM_THREADS: max(1, cores / ranks sharing) threads per rank, where the ranks
# sharing are those on the same host whose cpu sets overlap; nothing on stderr
run 0 env -u OMP_NUM_THREADS "$@" "$mbspar" accel "$cfg/pendulum.cfg" --set solver.method=aba \
  --json "$tmp/d.json" --quiet
[ -s "$tmp/err" ] && bad "stderr without OMP_NUM_THREADS: $(cat "$tmp/err")"
acheck "$tmp/d.json" "a['threads_source'] == 'default' and a['threads'] == max(1, a['cores'] // a['ranks_sharing'])"
acheck "$tmp/d.json" "a['ranks_sharing'] == len([b for b in A if b['host'] == a['host'] and b['cpuset'] == a['cpuset']]) or a['cpuset'] not in [b['cpuset'] for b in A if b is not a]"
acheck "$tmp/d.json" "a['cores'] >= 1"

# OMP_NUM_THREADS beyond the cores: the run goes on with it, and one warning line names it
over=$(python3 -c "import json,sys; print(1 + max(a['cores'] for a in json.load(open(sys.argv[1]))['affinity']))" "$tmp/d.json")
run 0 env OMP_NUM_THREADS="$over" "$@" "$mbspar" accel "$cfg/pendulum.cfg" --set solver.method=aba \
  --json "$tmp/o.json" --quiet
[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "want one stderr line for OMP_NUM_THREADS=$over, got: $(cat "$tmp/err")"
grep -q "^mbspar: warning: OMP_NUM_THREADS=$over .* oversubscribe" "$tmp/err" ||
  bad "warning text: $(cat "$tmp/err")"
acheck "$tmp/o.json" "a['threads_source'] == 'OMP_NUM_THREADS' and a['threads'] == $over"

# OMP_NUM_THREADS=1 never warns (ranks outnumbering cores are MPI's business)
run 0 env OMP_NUM_THREADS=1 "$@" "$mbspar" accel "$cfg/pendulum.cfg" --set solver.method=aba \
  --json "$tmp/one.json" --quiet
[ -s "$tmp/err" ] && bad "stderr for OMP_NUM_THREADS=1: $(cat "$tmp/err")"
acheck "$tmp/one.json" "a['threads_source'] == 'OMP_NUM_THREADS' and a['threads'] == 1"

# a loop model with threads: schur's thread segments snap to the ladder's two trees, and its
# separators' local solves run their bias passes along the loaded paths, each segment's pieces by
# its own thread (docs/loops.md 8.1a); q-dd and the loop forces must equal aba's
lad="$(dirname "$0")/ladder_small.cfg"
run 0 env OMP_NUM_THREADS=2 "$@" "$mbspar" accel "$lad" --set solver.method=schur \
  --json "$tmp/ls.json" --quiet
run 0 env OMP_NUM_THREADS=1 "$@" "$mbspar" accel "$lad" --set solver.method=aba \
  --json "$tmp/la.json" --quiet
python3 - "$tmp/ls.json" "$tmp/la.json" <<'PY' || bad "schur with 2 threads differs from aba on ladder_small"
import json, math, sys
s, a = (json.load(open(f)) for f in sys.argv[1:3])
for k in ("qdd", "loop_lambda", "joint_wrench"):
    x, y = s[k], a[k]
    if k == "joint_wrench":
        x, y = [v for r in x for v in r], [v for r in y for v in r]
    n = math.sqrt(sum(v * v for v in y)) or 1
    d = math.sqrt(sum((p - q) ** 2 for p, q in zip(x, y))) / n
    print("threads_cli: ladder_small, schur with 2 threads against aba: %s %.2e" % (k, d))
    if not d <= 1e-9 or len(x) != len(y):
        sys.exit(1)
PY

if [ "$fail" -gt 0 ]; then
  echo "threads_cli: $fail failure(s)"
  exit 1
fi
echo "threads_cli: all checks passed"
