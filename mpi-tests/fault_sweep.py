#!/usr/bin/env python3
"""Fault-injection sweep of one verb (issue 12.1, docs/hardening.md "Fault injection").

    fault_sweep.py --verb run|accel|static|inverse|modes --np N [--mode all|grouped]
                   [--ranks R,...|all] [--every K] [--more] [--all-methods] [--only-more]
                   [--only-scenario REGEX] [--only-function REGEX] [--new]
                   -- MBSPAR CONFIGS_DIR MPIEXEC NPFLAG [PREFLAGS...]

--more adds the scenarios of the other code paths (solver.method = jcg on the chain; the six-bar
with closed loops and a spring-damper under schur, above 5 ranks the hexapod: the engine's loop
solve, the whole-model gather of accel); --all-methods also chebyshev, jacobi, gs, sor, petsc and direct (one rank) in
accel and static and euler and dp5 in run; --only-more injects only the points those add.

The complete sweep (every distinct point on every rank, no sampling) is the default mode with
--ranks all: --mode all --every 1 --ranks all (bench/fault_sweep_full.sh runs it at 1, 2 and 4
ranks); the CTest entries sample (--every K, --mode grouped) for the CI budget.

For each scenario of the verb (a tiny model, a few steps), a dry run with MBS_FAULT_LOG lists the
fault points every rank passes (allocations, checked writes, NaN checks: mbs_fault.h); then the
verb runs once per chosen point with MBS_FAULT=KIND:INDEX@RANK and the test checks that

  * every rank exits, with the same code, the code of the fault (alloc 4, write 3, nan 5),
    within 10 s (a hang is a failure: the launcher's process group is killed);
  * standard error holds exactly one line (the message), nothing on standard output;
  * existing outputs are untouched: the files of an earlier result given with --force (and
    --json PATH) are byte for byte what they were, a restarted run's checkpoint is the one it
    started from or a complete newer one, the energy rows up to that checkpoint are unchanged;
    no temporary file is left; a run that failed after claiming its directory leaves a run.json
    marked incomplete with the same exit code, and only complete CSV rows.

Choice of points: every distinct point (allocation caller, write check, NaN check) once, at the
first time it is reached (INDEX of its first occurrence), on each rank of --ranks; points of the
common setup before the verb starts (config, model) are covered by the run test only (they are
the same code for every verb; a point the other verbs reach before their verb starts but `run`
does not, such as the distributed-memory model build of accel, is kept). --mode grouped (the
multi-rank tests) keeps one point per (kind, function, stretch between two agreements of the
ranks): the points of one function between the same two agreements leave through the same
error path. --mode every injects every occurrence of every point (the second output row, the
second step's allocations...), not only the first. Exit code 0 when every injection passed.
"""
import argparse
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

CODES = {"alloc": 4, "write": 3, "nan": 5}
# a launch running longer is a hang; MBS_FAULT_TIMEOUT raises the limit for sweeps that share a
# loaded machine (oversubscribed ranks at nice 10 beside builds), default 10 s
TIMEOUT = float(os.environ.get("MBS_FAULT_TIMEOUT", "10"))


def parse_args():
    # options, then "--", then the positional arguments (the launcher's flags such as -n and
    # --oversubscribe would otherwise be taken for options of this script)
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("usage: fault_sweep.py --verb VERB [options] -- MBSPAR CONFIGS_DIR MPIEXEC NPFLAG "
                 "[PREFLAGS...]")
    k = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--verb", required=True, choices=["run", "accel", "static", "inverse", "modes"])
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--mode", choices=["all", "grouped", "every"], default="all",
                    help="all: every distinct point at its first occurrence; grouped: one per "
                    "function and stretch between agreements; every: every occurrence of every "
                    "point (each loop iteration, each step)")
    ap.add_argument("--ranks", default=None,
                    help="ranks to inject on: R,R,... or all (default: 0 and the last)")
    ap.add_argument("--every", type=int, default=1,
                    help="inject at every k-th planned point only (CI budget); 1: all")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--plan-only", action="store_true", help="dry runs only: count the points")
    ap.add_argument("--more", action="store_true",
                    help="also the scenarios of the other code paths: solver.method = jcg on the "
                         "chain, the six-bar (closed loops, a spring-damper) with schur, and the "
                         "URDF arm (configs/urdf_arm.cfg) in run and accel")
    ap.add_argument("--all-methods", action="store_true",
                    help="with --more: also chebyshev, jacobi, gs, sor, petsc, direct (one rank) "
                         "in accel and static, euler and dp5 in run")
    ap.add_argument("--only-function", default=None, metavar="REGEX",
                    help="inject only the points whose function (addr2line, or the file of a "
                         "write point) matches REGEX, e.g. '^mbs_cpa' for the critical-path "
                         "graph builders that auto's prediction runs")
    ap.add_argument("--only-scenario", default=None, metavar="REGEX",
                    help="inject only the points of the scenarios whose name matches REGEX "
                         "(e.g. 'loops$'); the others run dry, so a point they cover is skipped")
    ap.add_argument("--only-more", action="store_true",
                    help="with --more: inject only the points the extra scenarios add (the "
                         "others are the plain sweep's)")
    ap.add_argument("--new", action="store_true",
                    help="inject only the points of the scenarios added on 2026-11-29 for the code "
                         "merged after the last complete sweeps: accel under the natural "
                         "formulation (the distributed solve at 2+ ranks, on the six-bar and a "
                         "chain), accel of the URDF arm (the distributed URDF build), and at one "
                         "rank run under natural and accel, static, run of a flexible model with "
                         "a drive; since the tenth session also modes, the flexible static over "
                         "the ranks, accel of a loop through a flexible body (aba, schur) and of "
                         "a modal file, the flexible inverse through schur, a short run of the "
                         "flexible four-bar (the other scenarios run dry, to skip the points "
                         "they cover)")
    a = ap.parse_args(argv[:k])
    a.more = a.more or a.only_more or a.all_methods or a.new
    pos = argv[k + 1:]
    if len(pos) < 4:
        sys.exit("fault_sweep.py: need MBSPAR CONFIGS_DIR MPIEXEC NPFLAG after --")
    a.mbspar, a.configs, a.mpiexec, a.npflag = pos[:4]
    a.preflags = pos[4:]
    return a


A = parse_args()
CHILD = [None]  # the launcher's process group, killed if this script is terminated


def on_term(sig, frame):
    if LAUNCHES[0]:
        kill_marked("%d.%d" % (os.getpid(), LAUNCHES[0]))
    if CHILD[0]:
        try:
            os.killpg(CHILD[0], signal.SIGKILL)
        except OSError:
            pass
    sys.exit(128 + sig)


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)
MBSPAR = os.path.abspath(A.mbspar)
CHAIN = os.path.join(os.path.abspath(A.configs), "chain.cfg")
FLEXP = os.path.join(os.path.abspath(A.configs), "flex_pendulum.cfg")
SPINUP = os.path.join(os.path.abspath(A.configs), "spinup.cfg")
FOURBAR = os.path.join(os.path.abspath(A.configs), "fourbar.cfg")
SIXBAR = os.path.join(os.path.abspath(A.configs), "sixbar.cfg")
# the loop scenarios' model: the six-bar (5 bodies) up to 5 ranks; above, the hexapod (13 bodies,
# six spherical cut joints and six spring-dampers), since a model needs a body per rank
LOOPS = SIXBAR if A.np <= 5 else os.path.join(os.path.abspath(A.configs), "hexapod.cfg")
URDF = os.path.join(os.path.abspath(A.configs), "urdf_arm.cfg")  # configs/arm.urdf (libxml2)
FLEXFB = os.path.join(os.path.abspath(A.configs), "flex_fourbar.cfg")  # a loop through a beam
MODALF = os.path.join(os.path.abspath(A.configs), "flex_modalfile.cfg")  # an HDF5 modal file
TMP = tempfile.mkdtemp(prefix="mbs_fault_%s_np%d." % (A.verb, A.np))
if A.ranks == "all":
    RANKS = list(range(A.np))
else:
    RANKS = [int(r) for r in A.ranks.split(",")] if A.ranks else sorted({0, A.np - 1})
failures = []
stats = {"points": 0, "planned": 0, "injected": 0, "recovered": 0}
covered = []  # (kind, label, rank, function) of every injection, for the report

# the tiny model: 8 links (2 per rank at 4 ranks) hanging at rest (a static equilibrium)
MODEL = ["--set", "model.chain.n=8", "--set", "model.gravity=[0,0,-9.81]", "--quiet"]
RUN = MODEL + ["--set", "integrator.t_end=0.004", "--set", "output.every=1",
               "--set", "output.checkpoint_every=2"]


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, flush=True)


def launch(args, env_extra, tag):
    """Run mbspar on A.np ranks; returns (codes per rank, stdout, stderr, seconds, hung)."""
    env = dict(os.environ)
    env.update(env_extra)
    env["OMPI_MCA_orte_execute_quiet"] = "1"
    # shared memory only: MPI_Init in 0.1 s instead of 0.4 s (UCX's probing), which is what
    # makes hundreds of runs affordable; the agreement logic under test is the same
    env.setdefault("OMPI_MCA_pml", "ob1")
    env.setdefault("OMPI_MCA_btl", "self,vader")
    # let every rank end by itself (by default mpirun kills the others as soon as one rank exits
    # with a non-zero code, so their own codes could not be seen)
    env["OMPI_MCA_orte_abort_on_non_zero_status"] = "0"
    # a marker in the environment of every process of this launch: Open MPI puts the ranks in
    # their own process groups, so after a hang they are found by the marker and killed (a
    # stale rank would otherwise write its code into the next launch's files)
    LAUNCHES[0] += 1
    env["MBS_SWEEP_RUN"] = "%d.%d" % (os.getpid(), LAUNCHES[0])
    # one set of code files per launch: a rank of an earlier launch that outlived its mpirun
    # exits by itself a few seconds later (Open MPI 4.1: code 195 once its daemon is gone) and
    # must not write into this launch's files (the 4/195 mismatch of docs/hardening.md 12.1)
    codes_prefix = os.path.join(TMP, "codes.%s.%d" % (tag, LAUNCHES[0]))
    for f in os.listdir(TMP):
        if f.startswith("codes.%s." % tag):
            os.remove(os.path.join(TMP, f))
    if A.np == 1:
        cmd = [MBSPAR] + args
    else:
        # each rank writes its own exit code (the launcher reports only one)
        wrap = ('"$@"; rc=$?; echo $rc > "%s.${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-x}}"; exit $rc'
                % codes_prefix)
        cmd = [A.mpiexec, A.npflag, str(A.np)] + A.preflags + ["sh", "-c", wrap, "sh", MBSPAR] + args
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         start_new_session=True, cwd=TMP)
    CHILD[0] = p.pid
    hung = False
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        hung = True
        os.killpg(p.pid, signal.SIGKILL)
        kill_marked(env["MBS_SWEEP_RUN"])
        out, err = p.communicate()
    dt = time.time() - t0
    if A.np == 1:
        codes = [p.returncode]
    else:
        codes = []
        for r in range(A.np):
            try:
                codes.append(int(open("%s.%d" % (codes_prefix, r)).read()))
            except (OSError, ValueError):
                codes.append(None)  # killed, or never got there
    return codes, out.decode(errors="replace"), err.decode(errors="replace"), dt, hung


LAUNCHES = [0]


def kill_marked(marker):
    """SIGKILL every process whose environment holds MBS_SWEEP_RUN=marker."""
    want = ("MBS_SWEEP_RUN=%s" % marker).encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                if want in f.read().split(b"\0"):
                    os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


def read_log(prefix):
    """Per rank: list of sites (kind, index, label, phase) and the verb mark."""
    logs = []
    for r in range(A.np):
        sites, mark = [], {}
        for line in open("%s.%d" % (prefix, r)):
            w = line.split()
            if w[0] == "site":
                sites.append((w[1], int(w[2]), w[3], int(w[4])))
            elif w[0] == "mark":
                mark[w[1]] = {"alloc": int(w[2]), "write": int(w[3]), "nan": int(w[4])}
        logs.append((sites, mark.get("verb", {"alloc": 0, "write": 0, "nan": 0})))
    return logs


_fn_cache = {}


def function_of(label):
    """The function of a point: addr2line for caller addresses, the file for source points."""
    if not label.startswith("0x"):
        return label.split(":")[0]
    if label not in _fn_cache:
        try:
            out = subprocess.run(["addr2line", "-f", "-e", MBSPAR, label], capture_output=True,
                                 text=True, timeout=10).stdout.split("\n")
            _fn_cache[label] = out[0] if out and out[0] and out[0] != "??" else label
        except (OSError, subprocess.SubprocessError):
            _fn_cache[label] = label  # no binutils: every point is its own group
    return _fn_cache[label]


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def checkpoint_complete(path):
    """A checkpoint whose trailing FNV-1a checksum matches its bytes (docs/outputs.md)."""
    try:
        b = open(path, "rb").read()
    except OSError:
        return False
    return len(b) > 16 and b[:8] == b"MBSPCKP1" and \
        struct.unpack("<Q", b[-8:])[0] == fnv1a64(b[:-8])


def leftovers(d):
    bad = []
    for root, _, files in os.walk(d):
        for f in files:
            if re.search(r"\.(tmp|old)(\.\d+)?$", f) or ".tmp." in f or ".old." in f:
                bad.append(os.path.join(root, f))
    return bad


def csv_complete(path, nfield=None):
    """Every line ends in a newline and has the header's number of fields."""
    try:
        text = open(path).read()
    except OSError:
        return True
    if not text:
        return True
    if not text.endswith("\n"):
        return False
    lines = text.split("\n")[:-1]
    n = nfield or lines[0].count(",") + 1
    return all(l.count(",") + 1 == n for l in lines)


# ---------------------------------------------------------------- scenarios
# name -> (args for a directory D, prepare(D) before each run, check(D, codes, dry) after it)

def sentinel_prepare(names):
    def prep(d):
        os.makedirs(d, exist_ok=True)
        for n in names:
            with open(os.path.join(d, n), "w") as f:
                f.write("an earlier result: %s\n" % n)
        with open(os.path.join(TMP, "json_target.json"), "w") as f:
            f.write("an earlier --json result\n")
    return prep


def sentinel_check(names, report):
    def check(d, rc, what):
        targets = [(os.path.join(d, n), "an earlier result: %s\n" % n) for n in names]
        targets.append((os.path.join(TMP, "json_target.json"), "an earlier --json result\n"))
        for path, old in targets:
            try:
                now = open(path).read()
            except OSError:
                fail("%s: %s is gone" % (what, path))
                continue
            if rc != 0 and now != old:
                fail("%s: %s changed although the verb failed" % (what, path))
            if rc == 0 and path.endswith(".json"):
                try:
                    json.loads(now)
                except ValueError:
                    fail("%s: %s is not a complete report after exit 0" % (what, path))
    return check


def run_prepare_fresh(d):
    shutil.rmtree(d, ignore_errors=True)


def run_check_fresh(d, rc, what):
    rj = os.path.join(d, "run.json")
    if os.path.exists(rj):
        try:
            res = json.load(open(rj))["results"]
        except (ValueError, KeyError):
            fail("%s: run.json is not a complete report" % what)
            res = None
        if res is not None and rc != 0:
            if res.get("complete", True) or res.get("stopped") != "error" or \
                    res.get("error", {}).get("exit_code") != rc:
                fail("%s: run.json of the failed run is not marked incomplete with exit code %d: "
                     "%s" % (what, rc, json.dumps(res)[:200]))
        if res is not None and rc == 0 and not res.get("complete"):
            fail("%s: exit 0 but run.json is not complete" % what)
    for n in ("energy.csv", "trajectory.csv"):
        if not csv_complete(os.path.join(d, n)):
            fail("%s: %s has an incomplete row" % (what, n))


def run_restart_scenario(fmt):
    base = os.path.join(TMP, "base_" + fmt)
    state = {}

    def prepare(d):
        if "ckpt" not in state:  # the run to continue: 2 steps, a checkpoint at step 2
            shutil.rmtree(base, ignore_errors=True)
            codes, _, err, _, _ = launch(["run", CHAIN, "--out", base] + RUN + [
                "--set", "integrator.t_end=0.002", "--set", "output.format=" + fmt], {}, "base")
            if any(c != 0 for c in codes):
                fail("restart base run failed: %s %s" % (codes, err.strip()))
            state["ckpt"] = open(os.path.join(base, "checkpoint.bin"), "rb").read()
            state["energy"] = open(os.path.join(base, "energy.csv")).read()
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(base, d)

    def check(d, rc, what):
        # a restart that failed before it continued the files leaves the earlier run's report
        rj = os.path.join(d, "run.json")
        if rc == 0 or not os.path.exists(rj) or \
                open(rj, "rb").read() != open(os.path.join(base, "run.json"), "rb").read():
            run_check_fresh(d, rc, what)
        ck = os.path.join(d, "checkpoint.bin")
        if not os.path.exists(ck):
            fail("%s: the checkpoint is gone" % what)
        elif open(ck, "rb").read() != state["ckpt"] and not checkpoint_complete(ck):
            fail("%s: checkpoint.bin is neither the one the run started from nor complete" % what)
        try:
            now = open(os.path.join(d, "energy.csv")).read()
        except OSError:
            fail("%s: energy.csv is gone" % what)
            return
        if not now.startswith(state["energy"]):
            fail("%s: the energy rows up to the checkpoint changed" % what)

    args = lambda d: ["run", CHAIN, "--out", d, "--restart", os.path.join(d, "checkpoint.bin")] + \
        RUN + ["--set", "output.format=" + fmt]
    return ("run restart " + fmt, args, prepare, check)


def light_chain_cfg(n):
    """A chain of n links, each with a light body (1e-8 kg, 1e-16 kg m^2) on a revolute joint."""
    bodies = []
    for k in range(n):
        par = "ground" if k == 0 else "s%d" % (k - 1)
        bodies.append(
            '{ name = "l%d"; parent = "%s"; joint = { type = "revolute"; axis = [0.0, 1.0, 0.0]; '
            'origin = [0.0, 0.0, -0.2]; q0 = [0.%d]; qd0 = [0.%d]; }; mass = 1.0; '
            'com = [0.0, 0.0, -0.25]; inertia = [0.02, 0.02, 0.001, 0.0, 0.0, 0.0]; }' %
            (k, par, k % 5, k % 10))
        bodies.append(
            '{ name = "s%d"; parent = "l%d"; joint = { type = "revolute"; axis = [1.0, 0.0, 0.0]; '
            'origin = [0.01, 0.0, -0.3]; }; mass = 1e-8; com = [0.0, 0.0, 0.0]; '
            'inertia = [1e-16, 1e-16, 1e-16, 0.0, 0.0, 0.0]; }' % (k, k))
    return ("model = { gravity = [0.0, 0.0, -9.81]; bodies = (\n" + ",\n".join(bodies) +
            "\n); };\n")


def scenarios(verb):
    if verb == "run":
        return [
            ("run csv", lambda d: ["run", CHAIN, "--out", d] + RUN, run_prepare_fresh,
             run_check_fresh),
            ("run hdf5", lambda d: ["run", CHAIN, "--out", d] + RUN +
             ["--set", "output.format=hdf5"], run_prepare_fresh, run_check_fresh),
            run_restart_scenario("csv"),
            run_restart_scenario("hdf5"),
            ("run aba", lambda d: ["run", CHAIN, "--out", d] + RUN +
             ["--set", "solver.method=aba"], run_prepare_fresh, run_check_fresh),
        ] + ([
            ("run jcg", lambda d: ["run", CHAIN, "--out", d] + RUN +
             ["--set", "solver.method=jcg"], run_prepare_fresh, run_check_fresh),
        ] + [
            ("run %s" % im, lambda d, im=im: ["run", CHAIN, "--out", d] + RUN +
             ["--set", "integrator.method=" + im], run_prepare_fresh, run_check_fresh)
            for im in (("euler", "dp5") if A.all_methods else ())
        ] + [
            ("run loops", lambda d: ["run", LOOPS, "--out", d, "--quiet", "--set",
                                     "integrator.t_end=0.004", "--set", "integrator.dt=0.001",
                                     "--set", "output.every=1", "--set",
                                     "output.checkpoint_every=2", "--set", "solver.method=schur"],
             run_prepare_fresh, run_check_fresh),
            ("run urdf", lambda d: ["run", URDF, "--out", d, "--quiet", "--set",
                                    "integrator.t_end=0.004", "--set", "integrator.dt=0.001",
                                    "--set", "output.every=1", "--set",
                                    "output.checkpoint_every=2"],
             run_prepare_fresh, run_check_fresh),
        ] if A.more else []) + ([
            ("new run natural", lambda d: ["run", FOURBAR, "--out", d, "--quiet", "--set",
                                           "model.formulation=natural", "--set",
                                           "integrator.t_end=0.003", "--set", "output.every=1",
                                           "--set", "output.checkpoint_every=2"],
             run_prepare_fresh, run_check_fresh),
            ("new run flex loops",  # the loops' projection after each step (flexible.md 15)
             lambda d: ["run", FLEXFB, "--out", d, "--quiet", "--set", "integrator.t_end=0.002",
                        "--set", "integrator.dt=0.001", "--set", "integrator.method=rk4", "--set",
                        "output.every=1", "--set", "output.checkpoint_every=1"],
             run_prepare_fresh, run_check_fresh),
            ("new run flex", lambda d: ["run", SPINUP, "--out", d, "--quiet", "--set",
                                        "integrator.t_end=0.004", "--set", "integrator.dt=0.001",
                                        "--set", "integrator.method=rk4", "--set",
                                        "output.every=1", "--set", "output.checkpoint_every=2"],
             run_prepare_fresh, run_check_fresh),
        ] if A.new and A.np == 1 else [])
    jt = os.path.join(TMP, "json_target.json")
    if verb == "modes":  # the linearisation's columns over the ranks (docs/flexible.md 7)
        mf = ["modes.json", "modes.csv"]
        return [
            ("new modes rigid",  # the rigid drainage on rank 0, q broadcast, the columns split
             lambda d: ["modes", CHAIN, "--out", d, "--force", "--json", jt, "--at", "static"] +
             MODEL, sentinel_prepare(mf), sentinel_check(mf, "modes.json")),
            ("new modes flex",  # the flexible drainage replicated, its Newton columns split
             lambda d: ["modes", FLEXP, "--out", d, "--force", "--json", jt, "--quiet", "--at",
                        "static"], sentinel_prepare(mf), sentinel_check(mf, "modes.json")),
        ]
    files = {"accel": ["accel.json"], "static": ["static.json", "static_ke.csv"],
             "inverse": ["inverse.json", "inverse.csv"]}[verb]
    extra = {"accel": [], "static": ["--set", "static.max_iter=50"],
             "inverse": ["--set", "inverse.steps=4"]}[verb]
    out = []
    for meth in ("schur", "aba"):
        if verb == "inverse" and meth == "aba":
            continue  # inverse dynamics has no solver.method
        out.append(("%s %s" % (verb, meth),
                    lambda d, meth=meth: [verb, CHAIN, "--out", d, "--force", "--json", jt] + MODEL +
                    extra + ["--set", "solver.method=" + meth],
                    sentinel_prepare(files), sentinel_check(files, verb + ".json")))
    more = ["chebyshev", "jacobi", "gs", "sor", "petsc"] + (["direct"] if A.np == 1 else [])
    for meth in more if A.all_methods and verb != "inverse" else []:
        out.append(("%s %s" % (verb, meth),
                    lambda d, meth=meth: [verb, CHAIN, "--out", d, "--force", "--json", jt] + MODEL +
                    extra + ["--set", "solver.method=" + meth, "--set", "solver.max_iter=100000"],
                    sentinel_prepare(files), sentinel_check(files, verb + ".json")))
    if A.more and verb != "inverse":  # (inverse has no solver.method; its loop path is serial)
        out.append(("%s jcg" % verb,
                    lambda d: [verb, CHAIN, "--out", d, "--force", "--json", jt] + MODEL + extra +
                    ["--set", "solver.method=jcg"],
                    sentinel_prepare(files), sentinel_check(files, verb + ".json")))
        out.append(("%s loops" % verb,
                    lambda d: [verb, LOOPS, "--out", d, "--force", "--json", jt, "--quiet"] +
                    (["--set", "static.max_iter=1000"] if verb == "static" else []) +  # (converged
                    ["--set", "solver.method=schur"],  # at 516: no warning besides the fault's line)
                    sentinel_prepare(files), sentinel_check(files, verb + ".json")))
        if verb == "accel":  # the URDF reader and the robot's model build (configs/arm.urdf)
            out.append(("accel urdf",
                        lambda d: ["accel", URDF, "--out", d, "--force", "--json", jt, "--quiet"],
                        sentinel_prepare(files), sentinel_check(files, "accel.json")))
    if A.new and verb == "accel":
        out.append(("new accel natural loops",
                    lambda d: ["accel", SIXBAR, "--out", d, "--force", "--json", jt, "--quiet",
                               "--set", "model.formulation=natural"],
                    sentinel_prepare(files), sentinel_check(files, "accel.json")))
        out.append(("new accel natural chain",
                    lambda d: [verb, CHAIN, "--out", d, "--force", "--json", jt] + MODEL +
                    ["--set", "model.formulation=natural"],
                    sentinel_prepare(files), sentinel_check(files, "accel.json")))
        out.append(("new accel urdf",  # the distributed URDF build at 2+ ranks (schur)
                    lambda d: ["accel", URDF, "--out", d, "--force", "--json", jt, "--quiet",
                               "--set", "solver.method=schur"],
                    sentinel_prepare(files), sentinel_check(files, "accel.json")))
        # eleventh session: the ladder generator (docs/model.md) and schur's loop layer on it;
        # at 2+ ranks on the distributed loop model (the default since the thirteenth session,
        # q0 being closed; MBSPAR_LOOPS_LOCAL=0 in the environment: the replicated one)
        lad = os.path.join(TMP, "ladder_gen.cfg")
        with open(lad, "w") as f:
            subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(
                __file__)), "..", "scripts", "gen_ladder.py"), "--generated", "16", "4"],
                stdout=f, check=True)
        out.append(("new accel ladder",
                    lambda d: ["accel", lad, "--out", d, "--force", "--json", jt, "--quiet",
                               "--set", "solver.method=schur"],
                    sentinel_prepare(files), sentinel_check(files, "accel.json")))
        # thirteenth session: a loop model whose q0 the replicated model assembles (the four-bar,
        # 3 bodies): at 2 and 3 ranks schur's distributed try, its closure check on an engine of
        # its own and the replicated build after it (parallel/loops_local.c)
        if 2 <= A.np <= 3:
            out.append(("new accel loops open",
                        lambda d: ["accel", FOURBAR, "--out", d, "--force", "--json", jt,
                                   "--quiet", "--set", "solver.method=schur"],
                        sentinel_prepare(files), sentinel_check(files, "accel.json")))
        # twelfth session: schur's light bodies at rank cuts (docs/formulation.md 4.9): a chain of
        # 12 links each carrying a light body (1e-8 kg, 1e-16 kg m^2) on a revolute joint, so
        # every rank boundary is at a light leaf (the change of variables of the passes); with
        # MBSPAR_TEST_LIGHT_ROOTS=1 in the environment the partition cuts at light roots instead
        # (the soft direction sent apart, schur_lightroot.c)
        lig = os.path.join(TMP, "light_chain.cfg")
        with open(lig, "w") as f:
            f.write(light_chain_cfg(12))
        out.append(("new accel light",
                    lambda d: ["accel", lig, "--out", d, "--force", "--json", jt, "--quiet",
                               "--set", "solver.method=schur"],
                    sentinel_prepare(files), sentinel_check(files, "accel.json")))
    # (static at several ranks: every rank, the Newton polish's columns split; docs/flexible.md 8)
    if A.new and (A.np == 1 and verb == "accel" or verb == "static"):
        out.append(("new %s flex" % verb,
                    lambda d: [verb, FLEXP, "--out", d, "--force", "--json", jt, "--quiet"],
                    sentinel_prepare(files[:1]), sentinel_check(files[:1], verb + ".json")))
    if A.new and verb == "accel":  # tenth session: loops through flexible bodies (flexible.md
        # 15: the oracle's KKT rows, schur's loop layer over the ranks) and modal files (14)
        for meth in ("aba", "schur"):
            out.append(("new accel flex loops %s" % meth,
                        lambda d, meth=meth: ["accel", FLEXFB, "--out", d, "--force", "--json", jt,
                                              "--quiet", "--set", "solver.method=" + meth],
                        sentinel_prepare(files), sentinel_check(files, "accel.json")))
        out.append(("new accel modal file",
                    lambda d: ["accel", MODALF, "--out", d, "--force", "--json", jt, "--quiet"],
                    sentinel_prepare(files), sentinel_check(files, "accel.json")))
    if A.new and verb == "inverse":  # inverse of a flexible model through flex_part (12)
        out.append(("new inverse flex schur",
                    lambda d: [verb, FLEXP, "--out", d, "--force", "--json", jt, "--quiet",
                               "--set", "inverse.steps=2", "--set", "inverse.T=0.002",
                               "--set", "solver.method=schur"],
                    sentinel_prepare(files), sentinel_check(files, "inverse.json")))
    if A.new and A.np == 1 and verb == "inverse":  # flexible inverse (docs/flexible.md 11)
        out.append(("new inverse flex",
                    lambda d: [verb, FLEXP, "--out", d, "--force", "--json", jt, "--quiet",
                               "--set", "inverse.steps=2", "--set", "inverse.T=0.002"],
                    sentinel_prepare(files), sentinel_check(files, "inverse.json")))
    return out


def common_labels():
    """Points every verb passes before it starts (config, model): the run test covers them."""
    d = os.path.join(TMP, "common")
    run_prepare_fresh(d)
    launch(["run", CHAIN, "--out", d] + RUN, {"MBS_FAULT_LOG": os.path.join(TMP, "common")},
           "common")
    out = set()
    for sites, mark in read_log(os.path.join(TMP, "common")):
        out |= {(k, lab) for k, i, lab, ph in sites if i <= mark[k]}
    return out


def main():
    t_start = time.time()
    common = set() if A.verb == "run" else common_labels()
    done = set()  # (kind, label, rank) or, grouped, (kind, function, phase, rank)
    for name, args, prepare, check in scenarios(A.verb):
        d = os.path.join(TMP, "out")
        prepare(d)
        logp = os.path.join(TMP, "log")
        codes, out, err, dt, hung = launch(args(d), {"MBS_FAULT_LOG": logp}, "dry")
        excluded = (A.new and not name.startswith("new ")) or \
            (A.only_scenario and not re.search(A.only_scenario, name))
        if hung or any(c != 0 for c in codes):
            if excluded:  # not to be injected (its points only mark what others need not
                # inject): a scenario that cannot start at this rank count is not a failure
                print("== %s: not injected here, and it cannot start at %d ranks: %s" % (
                    name, A.np, err.strip().split("\n")[0]), flush=True)
                continue
            fail("%s: the run without a fault failed: codes %s, %s" % (name, codes, err.strip()))
            continue
        logs = read_log(logp)
        plan = []
        for r in RANKS:
            sites, mark = logs[r]
            stats["points"] += len(sites)
            for kind, index, label, phase in sites:
                if index <= mark[kind] and (kind, label) in common:
                    continue  # the common setup, covered by the run test
                if A.mode == "every":  # the setup before the verb: once for all scenarios
                    key = (kind, label, index, r) if index <= mark[kind] else \
                        (name, kind, index, r)
                elif A.mode == "grouped":
                    key = (kind, function_of(label), phase, r)
                else:
                    key = (kind, label, r)
                if key in done:
                    continue
                if A.only_function and not re.search(A.only_function, function_of(label)):
                    continue
                done.add(key)
                plan.append((kind, index, label, r))
        print("== %s: %d point(s) on rank(s) %s, %d to inject (dry run %.1f s)" % (
            name, sum(len(logs[r][0]) for r in RANKS), RANKS, len(plan), dt), flush=True)
        if A.every > 1:  # the CI budget: every k-th point of the whole sweep
            keep = []
            for pt in plan:
                if stats["planned"] % A.every == 0:
                    keep.append(pt)
                stats["planned"] += 1
            plan = keep
        else:
            stats["planned"] += len(plan)
        if A.plan_only or excluded or \
                (A.only_more and name.split()[-1] in ("csv", "hdf5", "schur", "aba")):
            plan = []
        for kind, index, label, r in plan:
            prepare(d)
            spec = "%s:%d@%d" % (kind, index, r)
            what = "%s, %s (%s, %s)" % (name, spec, label, function_of(label))
            codes, out, err, dt, hung = launch(args(d), {"MBS_FAULT": spec}, "inj")
            stats["injected"] += 1
            covered.append((name, kind, label, r, function_of(label)))
            # (the URDF reader's documented warning of what the robot uses and mbspar does not
            # model comes before any fault: it is not the fault's line)
            lines = [l for l in err.split("\n")
                     if l.strip() and not re.match(r"mbspar: warning: .*: not modelled: ", l)]
            want = CODES[kind]
            if hung:
                fail("%s: hung (> %.0f s): codes so far %s; stderr %s" % (
                    what, TIMEOUT, codes, err.strip()[:300]))
                continue
            if len(set(codes)) != 1 or codes[0] is None:
                fail("%s: ranks exited with different codes %s; stderr %s" % (
                    what, codes, err.strip()[:300]))
                continue
            rc = codes[0]
            if rc == 0:  # a fallback that still gives the complete result (checked below)
                stats["recovered"] += 1
                print("   recovered (exit 0): %s" % what, flush=True)
            elif rc != want:
                fail("%s: exit %d, want %d; stderr %s" % (what, rc, want, err.strip()[:300]))
            if rc != 0 and len(lines) != 1:
                fail("%s: %d stderr lines, want 1: %s" % (what, len(lines), err.strip()[:400]))
            if rc != 0 and out.strip():
                fail("%s: output on stdout: %s" % (what, out.strip()[:200]))
            if dt > TIMEOUT:
                fail("%s: took %.1f s" % (what, dt))
            check(d, rc, what)
            for f in leftovers(TMP):
                fail("%s: temporary file left: %s" % (what, f))
                os.remove(f)
    print("fault_sweep %s np%d: %d point(s) seen, %d distinct to inject, %d injection(s) "
          "(every %d), %d recovered (exit 0 with complete outputs), %d failure(s), %.0f s" % (
              A.verb, A.np, stats["points"], stats["planned"], stats["injected"], A.every,
              stats["recovered"], len(failures), time.time() - t_start))
    kinds = {}
    for _, kind, _, _, fn in covered:
        kinds.setdefault(kind, set()).add(fn)
    for kind in sorted(kinds):
        print("  %s points in: %s" % (kind, ", ".join(sorted(kinds[kind]))))
    if not A.keep:
        shutil.rmtree(TMP, ignore_errors=True)
    return 1 if failures or (stats["injected"] == 0 and not A.plan_only) else 0


sys.exit(main())
