#!/usr/bin/env python3
"""Which build a loop model gets by default, against a binary from before (wp15-loopsdef,
docs/loops.md 9): `accel` of each CONFIG with each method at each rank count, four runs: BASE
(the binary before: loop models built whole), BASE with MBSPAR_LOOPS_LOCAL=1 (its distributed
loop model), NEW (default) and NEW with MBSPAR_LOOPS_LOCAL=0; one line per case: exit codes,
NEW's model.storage, and NEW against BASE, NEW=0 against BASE, BASE=1 against BASE, NEW against
BASE=1 as "bitwise" or the largest difference of qdd, lambda, joint_wrench, loop_lambda,
loop_wrench relative to the largest entry (and the keys of the `loops` section that differ);
then stderr where exit codes or stderr differ, and the model section's keys that differ (but
storage and max_depth). Reports, never asserts; runs mpirun --oversubscribe at nice 10.

usage: bench/loops_default_cmp.py BASE NEW OUTDIR CONFIG... [--np 1,2,3,4]
                                  [--methods schur,default]   (default: the method of the file)"""
import json, os, subprocess, sys

args = sys.argv[1:]
nps = [1, 2, 3, 4]
methods = ["schur", "default"]
if "--np" in args:
    i = args.index("--np"); nps = [int(x) for x in args[i + 1].split(",")]; del args[i:i + 2]
if "--methods" in args:
    i = args.index("--methods"); methods = args[i + 1].split(","); del args[i:i + 2]
base, new, out = args[:3]
cfgs = args[3:]
os.makedirs(out, exist_ok=True)
env0 = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1",
            OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_mpi_yield_when_idle="1")
env0.pop("MBSPAR_LOOPS_LOCAL", None)
RES = ("qdd", "lambda", "joint_wrench", "loop_lambda", "loop_wrench")


def run(binary, cfg, np, meth, ll, tag):
    env = dict(env0)
    if ll is not None:
        env["MBSPAR_LOOPS_LOCAL"] = ll
    js = os.path.join(out, tag + ".json")
    if os.path.exists(js):
        os.remove(js)
    cmd = ["nice", "-n", "10", "mpirun", "-n", str(np), "--oversubscribe", binary, "accel", cfg,
           "--quiet", "--json", js]
    if meth != "default":
        cmd += ["--set", "solver.method=" + meth]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    d = json.load(open(js)) if p.returncode == 0 and os.path.exists(js) else None
    return p.returncode, p.stderr.strip(), d


def flat(x):
    if isinstance(x, list):
        r = []
        for v in x:
            r += flat(v)
        return r
    return [x]


def diff(a, b):
    """'bitwise', or the largest difference relative to the largest entry"""
    if a is None or b is None:
        return "missing" if a is not b else "bitwise"
    worst = 0.0
    for k in RES:
        x, y = flat(a.get(k, [])), flat(b.get(k, []))
        if len(x) != len(y):
            return "len(%s) %d/%d" % (k, len(x), len(y))
        if x == y:
            continue
        s = max([abs(v) for v in x if v is not None] + [1e-300])
        worst = max(worst, max(abs(u - v) for u, v in zip(x, y)) / s)
    la, lb = dict(a.get("loops", {})), dict(b.get("loops", {}))
    if la != lb:
        keys = sorted(k for k in set(la) | set(lb) if la.get(k) != lb.get(k))
        extra = " loops[%s]" % ",".join(keys)
    else:
        extra = ""
    return ("bitwise" if worst == 0 else "%.1e" % worst) + extra


for cfg in cfgs:
    name = os.path.basename(cfg).replace(".cfg", "")
    for meth in methods:
        for np in nps:
            t = "%s.%s.np%d" % (name, meth, np)
            rb, eb, db = run(base, cfg, np, meth, None, t + ".base")
            rl, el, dl = run(base, cfg, np, meth, "1", t + ".base1")
            rn, en, dn = run(new, cfg, np, meth, None, t + ".new")
            r0, e0, d0 = run(new, cfg, np, meth, "0", t + ".new0")
            st = lambda d: d["model"]["storage"] if d else "-"
            line = ("%-22s %-8s np%d rc base %d new %d new0 %d | new: %-11s | new vs base: %s | "
                    "new0 vs base: %s | base=1 (rc %d) vs base: %s | new vs base=1: %s" % (
                        name, meth, np, rb, rn, r0, st(dn), diff(dn, db), diff(d0, db), rl,
                        diff(dl, db), diff(dn, dl) if rl == 0 else "-"))
            if rb != rn or eb != en:
                line += "\n    STDERR base: %s\n    STDERR new:  %s" % (eb[:300], en[:300])
            if db and dn:
                mb, mn = dict(db["model"]), dict(dn["model"])
                for m_ in (mb, mn):
                    m_.pop("storage", None); m_.pop("max_depth", None)
                if mb != mn:
                    ks = sorted(k for k in set(mb) | set(mn) if mb.get(k) != mn.get(k))
                    line += "\n    model differs: " + "; ".join(
                        "%s: %s -> %s" % (k, json.dumps(mb.get(k))[:200], json.dumps(mn.get(k))[:200])
                        for k in ks)
            print(line, flush=True)
