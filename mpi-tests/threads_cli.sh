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

if [ "$fail" -gt 0 ]; then
  echo "threads_cli: $fail failure(s)"
  exit 1
fi
echo "threads_cli: all checks passed"
