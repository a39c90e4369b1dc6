#!/usr/bin/env bash
# Work-precision of the time integrators (issue 36): for one config, each method is run to t_end
# (`mbspar run`) at a list of tolerances (dp5, abm) or steps (rk4, euler); the error of the final
# joint angles against a reference run, and the work: right-side (forward-dynamics) evaluations
# per simulated second, from run.json (`solver.evaluations`: every stage of every attempted step,
# rejected ones included), and the wall time of the integration (`timers.step`, under whatever
# load the machine has: the load average is recorded). Reports, never asserts.
#
#   bench/workprec.sh [options]
#     --config CFG      default configs/squeezer.cfg
#     --methods "M..."  default "rk4 dp5 abm" (abm is skipped with a note while `run` refuses it)
#     --tols "T..."     default "1e-3 1e-4 1e-5 1e-6 1e-7 1e-8 1e-9 1e-10" (adaptive methods)
#     --steps "N..."    default "100 300 1000 3000 10000 30000": fixed-step methods, dt = t_end/N
#     --t-end T         default: the config's integrator.t_end
#     --ref dp5|published  the reference: dp5 at tol 1e-14 with solver.closure_tol 1e-15 (default),
#                       or the Bari test set's published angles at t = 0.03 (squeezer only)
#     --build DIR       default <repo>/build
#     --set KEY=VALUE   passed to every run (repeatable)
#     --plot PNG        default docs/img/workprec_<cfg>.png
# Writes bench/results/workprec_<cfg>_<UTC>.{md,csv} and, with gnuplot, the plot (evaluations per
# simulated second against the error, log-log).
# Examples (this machine, load ~2.5): the squeezer ~25 s; the 50-link pendulum chain
#   bench/workprec.sh --config configs/seed001_chain50.cfg --t-end 2      (~25 s)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cfg=$root/configs/squeezer.cfg
methods="rk4 dp5 abm"
tols="1e-3 1e-4 1e-5 1e-6 1e-7 1e-8 1e-9 1e-10"
steps="100 300 1000 3000 10000 30000"
tend=""
ref=dp5
build=$root/build
sets=()
png=""
usage() {
  sed -n '2,27p' "$0" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
  --config) cfg=$2 ;;
  --methods) methods=$2 ;;
  --tols) tols=$2 ;;
  --steps) steps=$2 ;;
  --t-end) tend=$2 ;;
  --ref) ref=$2 ;;
  --build) build=$2 ;;
  --set) sets+=("$2") ;;
  --plot) png=$2 ;;
  *) usage ;;
  esac
  [ $# -ge 2 ] || usage
  shift 2
done
[ -x "$build/mbspar" ] || { echo "workprec.sh: no $build/mbspar (scripts/build.sh)" >&2; exit 2; }
[ -f "$cfg" ] || { echo "workprec.sh: no config $cfg" >&2; exit 2; }
case "$ref" in dp5 | published) ;; *) usage ;; esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name=$(basename "$cfg" .cfg)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
md=$root/bench/results/workprec_${name}_$stamp.md
csv=$root/bench/results/workprec_${name}_$stamp.csv
png=${png:-$root/docs/img/workprec_$name.png}
mkdir -p "$root/bench/results" "$root/docs/img"
printf '%s\n' "${sets[@]+"${sets[@]}"}" >"$tmp/sets"

python3 - "$build/mbspar" "$root" "$cfg" "$methods" "$tols" "$steps" "$tend" "$ref" "$tmp" "$md" "$csv" <<'PY'
import json, os, subprocess, sys, time
mbspar, root, cfg, methods, tols, steps, tend, ref, tmp, md, csv = sys.argv[1:12]
sets = [s for s in open(f"{tmp}/sets").read().split("\n") if s]
sys.path.insert(0, os.path.join(root, "mpi-tests"))
name = os.path.splitext(os.path.basename(cfg))[0]
base = [a for s in sets for a in ("--set", s)]
if tend:
    base += ["--set", f"integrator.t_end={tend}"]


def mbs(verb, args, out=None):
    cmd = [mbspar, verb, cfg] + base + args + ["--quiet"]
    if out:
        cmd += ["--out", out, "--force", "--set", "output.every=100000000"]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p, time.time() - t0


def run(tag, args):
    out = f"{tmp}/{tag}"
    p, wall = mbs("run", args, out)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] or [f"exit {p.returncode}"]
    j = json.load(open(f"{out}/run.json"))
    return j, wall


# the commit, "-dirty" when tracked files other than the results and plots (which this script
# writes) differ from it
commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                        capture_output=True, text=True).stdout.strip() or "unknown"
if subprocess.run(["git", "-C", root, "status", "--porcelain", "-uno", "--", ".",
                   ":!bench/results", ":!docs/img"], capture_output=True, text=True).stdout.strip():
    commit += "-dirty"
open(f"{tmp}/commit", "w").write(commit)
load0 = os.getloadavg()
notes = []

# the reference
rj, _ = run("ref", ["--set", "integrator.method=dp5", "--set", "integrator.tol=1e-14",
                    "--set", "solver.closure_tol=1e-15"])
if rj is None:
    sys.exit(f"workprec.sh: the reference run failed: {_}")
t_end = rj["results"]["t"]
qref, qdref = rj["results"]["q"], rj["results"]["qd"]
refdesc = (f"dp5 at tol 1e-14, solver.closure_tol 1e-15 ({rj['solver']['evaluations']} "
           f"evaluations)")
pub = None
if name == "squeezer" and abs(t_end - 0.03) < 1e-15:
    import squeezer_check as sc
    pub = sc.mb(sc.Q3)
    dpub = max(abs(a - b) for a, b in zip(qref, pub))
    refdesc += f"; its distance from the test set's published angles: {dpub:.2e} rad"
    if ref == "published":
        qref = pub
        refdesc = ("the Bari test set's published angles at t = 0.03 (their own error is about "
                   f"1.4e-9 rad, docs/seeds.md); dp5 at 1e-14 is {dpub:.2e} rad from them")
elif ref == "published":
    sys.exit("workprec.sh: --ref published is for configs/squeezer.cfg at t_end = 0.03 only")

rows = []
for m in methods.split():
    p, _ = mbs("check", ["--set", f"integrator.method={m}"])
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        notes.append(f"{m}: skipped, `mbspar check --set integrator.method={m}` refuses it: {msg}")
        continue
    fixed = m in ("rk4", "euler")
    for x in (steps.split() if fixed else tols.split()):
        args = ["--set", f"integrator.method={m}"]
        if fixed:
            args += ["--set", f"integrator.dt={t_end / int(x)!r}"]
        else:
            args += ["--set", f"integrator.tol={x}"]
        j, wall = run(f"{m}_{x}", args)
        if j is None:
            notes.append(f"{m} at {'N' if fixed else 'tol'} = {x}: failed: {wall[0]}")
            continue
        r = j["results"]
        err = max(abs(a - b) for a, b in zip(r["q"], qref))
        vs = max(abs(v) for v in qdref) or 1.0
        errv = max(abs(a - b) for a, b in zip(r["qd"], qdref)) / vs
        ev = j["solver"]["evaluations"]
        ig = j["integrator"]
        rows.append({"method": m, "param": ("N=" if fixed else "tol=") + x,
                     "tol": "" if fixed else x, "steps": ig["steps"],
                     "rejected": ig["rejected"], "evaluations": ev,
                     "evals_per_s": ev / r["t"], "err_q": err, "err_qd_rel": errv,
                     "err_over_tol": "" if fixed else err / float(x),
                     "step_wall_s": j["timers"]["step"]["max"], "t": r["t"],
                     "max_order": ig.get("max_order", ""), "restarts": ig.get("restarts", "")})
        print(f"{m:5s} {rows[-1]['param']:9s} steps {ig['steps']:7d} evals {ev:8d} "
              f"err_q {err:.2e} ({j['timers']['step']['max']:.2f} s)", flush=True)

load1 = os.getloadavg()
cols = ["method", "param", "steps", "rejected", "evaluations", "evals_per_s", "err_q",
        "err_qd_rel", "err_over_tol", "max_order", "restarts", "step_wall_s"]
with open(csv, "w") as f:
    f.write(",".join(cols) + "\n")
    for r in rows:
        f.write(",".join(str(r[c]) for c in cols) + "\n")


def fmt(v):
    return f"{v:.3g}" if isinstance(v, float) else str(v)


with open(md, "w") as f:
    f.write(f"# Work-precision: {os.path.relpath(cfg, root)} to t = {t_end:g} s\n\n")
    f.write(f"`bench/workprec.sh --config {os.path.relpath(cfg, root)}"
            + (f" --t-end {tend}" if tend else "") + (f" --ref {ref}" if ref != "dp5" else "")
            + "".join(f" --set {s}" for s in sets) + "`, "
            f"commit {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load "
            f"average {load0[0]:.2f} at the start and {load1[0]:.2f} at the end "
            f"({os.cpu_count()} cores): wall times are under that load.\n\n")
    f.write(f"Reference: {refdesc}.\n\n")
    f.write("err_q: max over the joint coordinates of |q(t_end) - q_ref| (rad or m); err_qd_rel: "
            "max |qd - qd_ref| / max |qd_ref|; evaluations: forward-dynamics evaluations "
            "(run.json solver.evaluations, rejected steps included); evals/s: per simulated "
            "second; max order, restarts: run.json's integrator section where the method "
            "reports them (abm); step wall: the integration's wall time (timers.step).\n\n")
    f.write("| method | tol or steps | steps | rejected | evaluations | evals/s | err_q | "
            "err_qd_rel | err_q/tol | max order | restarts | step wall s |\n")
    f.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write("| " + " | ".join(fmt(r[c]) for c in cols) + " |\n")
    if notes:
        f.write("\nNotes:\n\n" + "".join(f"- {n}\n" for n in notes))
print(f"workprec.sh: wrote {md} and {csv}")
for n in notes:
    print("note: " + n)
PY

command -v gnuplot >/dev/null 2>&1 || {
  echo "workprec.sh: gnuplot not found (Debian: gnuplot-nox): no plot" >&2
  exit 0
}
plot=""
for m in $methods; do
  awk -F, -v m="$m" 'NR > 1 && $1 == m && $7 > 0 { print $7, $6 }' "$csv" >"$tmp/$m.dat"
  [ -s "$tmp/$m.dat" ] || continue
  plot="$plot${plot:+, }\"$tmp/$m.dat\" using 1:2 with linespoints title \"$m\""
done
[ -n "$plot" ] || { echo "workprec.sh: no rows to plot" >&2; exit 0; }
gnuplot <<GP
set terminal pngcairo size 800,560 font "sans,10" noenhanced
set output "$png"
set title "work-precision: $name (reference: $ref), $stamp, commit $(cat "$tmp/commit")"
set logscale xy
set format x "%.0e"
set xlabel "max |q(t_end) - q_ref|"
set ylabel "right-side evaluations per simulated second"
set grid
set key top right
plot $plot
GP
echo "workprec.sh: wrote $png" >&2
