#!/usr/bin/env bash
# Work–precision of the Adams core (src/abm.c) against SUNDIALS CVODE (Adams, fixed-point) and
# mbspar's dp5 (issue 36; docs/integrator_abm.md section 5). Three smooth pendulum chains: the
# 8-link chain released from a bent pose (bench/abm_cvode.c's built-in model, 2 s), seed 001's
# 50-link chain (configs/seed001_chain50.cfg, 5 s) and seed 003's rope (50 links, universal
# joints, 100 dofs) falling from horizontal (configs/rope.cfg, its 1.75 s). abm and CVODE run in
# bench/abm_cvode.c (serial ABA right side, TOL 1e-4 ... 1e-11, reference CVODE at 1e-13); dp5
# is `mbspar run --set integrator.method=dp5 integrator.tol=TOL solver.method=aba` (PETSc's
# TSRK5DP, one rank), its q at t_end from run.json against the same reference. Error = max_i |q_i - q_ref,i| / max(1,
# max_i |q_ref,i|) at t_end. Reports, never asserts; wall times are under whatever load there is.
#
#   bench/abm_cvode.sh [BUILD_DIR]
#
# Writes bench/results/abm_cvode_<UTC>.md and .csv, and docs/img/abm_cvode.png (gnuplot, when
# present): evaluations per simulated second against the error, log-log.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in
-h | --help)
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
  ;;
esac
bdir=${1:-$here/build}
prog=$bdir/mpi-tests/abm_cvode
[[ -x $prog ]] || {
  echo "abm_cvode.sh: no $prog (SUNDIALS missing? scripts/setup.sh; cmake --build $bdir --target abm_cvode)" >&2
  exit 2
}
[[ -x $bdir/mbspar ]] || { echo "abm_cvode.sh: no $bdir/mbspar" >&2; exit 2; }
# shellcheck source=../scripts/env.sh
. "$here/scripts/env.sh" 1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$here/bench/results"
md=$here/bench/results/abm_cvode_$stamp.md
csv=$here/bench/results/abm_cvode_$stamp.csv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tols=(1e-4 1e-5 1e-6 1e-7 1e-8 1e-9 1e-10 1e-11)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
"$prog" --print-config >"$work/chain8.cfg"
{
  echo "# abm against CVODE Adams and dp5 ($stamp)"
  echo
  echo "commit $(git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet HEAD -- src bench || echo ' (modified)'),"
  echo "$(uname -n), $(nproc) cpus, load average before: $load0. Command: \`bench/abm_cvode.sh\`."
  echo "SUNDIALS $(dpkg-query -W -f='${Version}' libsundials-dev 2>/dev/null || echo '?')."
  echo "Evaluations = right-side evaluations (ABA); abm: PECE, 2 per accepted step, 1 per rejected one; CVODE: its nfe"
  echo "(fixed-point iteration); dp5: mbspar run's count (PETSc TSRK5DP, 7 per attempted step)."
} >"$md"
: >"$csv"
# name config t_end
models=("chain8 $work/chain8.cfg 2" "chain50 $here/configs/seed001_chain50.cfg 5"
  "rope $here/configs/rope.cfg 1.75")
for entry in "${models[@]}"; do
  read -r name cfg tend <<<"$entry"
  {
    echo
    echo "## $name"
    echo
  } >>"$md"
  "$prog" "$cfg" --label "$name" --t-end "$tend" --csv "$work/rows.csv" --ref-out "$work/ref.$name" \
    --tols "$(
      IFS=,
      echo "${tols[*]}"
    )" >>"$md"
  for tol in "${tols[@]}"; do
    rm -rf "$work/dp5"
    t0=$(date +%s.%N)
    "$bdir/mbspar" run "$cfg" --set integrator.method=dp5 --set "integrator.tol=$tol" \
      --set "integrator.t_end=$tend" --set solver.method=aba --set output.every=1000000000 \
      --out "$work/dp5" >"$work/dp5.log" 2>&1 || {
      echo "abm_cvode.sh: dp5 at $tol failed: $(tail -1 "$work/dp5.log")" >&2
      continue
    }
    t1=$(date +%s.%N)
    python3 - "$work/dp5/run.json" "$work/ref.$name" "$name" "$tol" "$tend" "$t0" "$t1" \
      >>"$work/rows.csv" <<'EOF'
import json, sys
run, ref, name, tol, tend, t0, t1 = sys.argv[1:]
d = json.load(open(run))
q = d["results"]["q"]
r = [float(x) for x in open(ref)]
err = max(abs(a - b) for a, b in zip(q, r)) / max(1.0, max(abs(b) for b in r))
ev = d["solver"]["evaluations"]
it = d["integrator"]
print(f"{name},dp5,{float(tol):.0e},{err:.6e},{ev},{ev / float(tend):.1f},{it['steps']},"
      f"{it['rejected']},5,{float(t1) - float(t0):.4f},")
EOF
  done
  grep -v '^#' "$work/rows.csv" | grep "^$name," >>"$csv" || true
  {
    echo
    echo "dp5 (\`mbspar run\`, wall time of the whole command):"
    echo
    echo "| method | TOL | error | evaluations | eval/s simulated | steps | rejected | wall s |"
    echo "|---|---|---|---|---|---|---|---|"
    grep "^$name,dp5," "$work/rows.csv" |
      awk -F, '{printf "| dp5 | %s | %.2e | %s | %s | %s | %s | %s |\n", $3, $4, $5, $6, $7, $8, $10}'
  } >>"$md"
done
sed -i '1i model,method,tol,error,evaluations,evals_per_sim_s,steps,rejected,max_order,wall_s,orders' "$csv"
echo >>"$md"
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg). Rows: $(basename "$csv")." >>"$md"

if command -v gnuplot >/dev/null 2>&1; then
  mkdir -p "$here/docs/img"
  for name in chain8 chain50 rope; do
    for meth in abm cvode dp5; do
      awk -F, -v n="$name" -v m="$meth" '$1 == n && $2 == m {print $4, $6}' "$csv" >"$work/$name.$meth.dat"
    done
  done
  gnuplot <<EOF
set terminal pngcairo size 1500,480 enhanced font "DejaVu Sans,10"
set output "$here/docs/img/abm_cvode.png"
set multiplot layout 1,3
set logscale xy
set format x "10^{%L}"
set xlabel "error at t_{end} (max over q)"
set ylabel "right-side evaluations per simulated second"
set key top right
set grid
set title "8-link chain, bent pose, 2 s"
plot "$work/chain8.abm.dat" u 1:2 w lp pt 7 t "abm (src/abm.c)", \
     "$work/chain8.cvode.dat" u 1:2 w lp pt 5 t "CVODE Adams, fixed point", \
     "$work/chain8.dp5.dat" u 1:2 w lp pt 9 t "dp5 (mbspar run)"
set title "seed 001 50-link chain, 5 s"
plot "$work/chain50.abm.dat" u 1:2 w lp pt 7 t "abm (src/abm.c)", \
     "$work/chain50.cvode.dat" u 1:2 w lp pt 5 t "CVODE Adams, fixed point", \
     "$work/chain50.dp5.dat" u 1:2 w lp pt 9 t "dp5 (mbspar run)"
set title "seed 003 rope (50 universal joints), falling, 1.75 s"
plot "$work/rope.abm.dat" u 1:2 w lp pt 7 t "abm (src/abm.c)", \
     "$work/rope.cvode.dat" u 1:2 w lp pt 5 t "CVODE Adams, fixed point", \
     "$work/rope.dp5.dat" u 1:2 w lp pt 9 t "dp5 (mbspar run)"
unset multiplot
EOF
  echo "Plot: docs/img/abm_cvode.png." >>"$md"
fi
echo "abm_cvode.sh: wrote $md"
