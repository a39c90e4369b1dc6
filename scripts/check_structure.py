#!/usr/bin/env python3
"""Structure checks of issue 31 (python3 standard library; binutils' nm for --objects).

    scripts/check_structure.py [--objects BUILD_DIR] [--strict]

1. Include cycles: the graph of `#include "..."` between the files of src/, parallel/ and
   include/mbspar/ (a name resolves next to the including file, then in src/, parallel/,
   include/); every cycle is printed. Fails when there is one.
2. Method ids: `grep -rnE "(==|!=) *MBS_SOLVER_|case MBS_SOLVER_" src parallel` may list only the
   solver files, i.e. the files that define a row of the solver table (`const mbsSolverType NAME
   = {`) and src/solver.c. Fails otherwise.
3. Lines: the C sources of src/ and parallel/ over 1000 lines and over 600 (counts and names
   printed) against issue 31's target, none over 1000 and at most five over 600; --strict fails
   when it is not met.
4. With --objects BUILD_DIR: the call graph between the object files of the build (an edge a -> b
   when a.o uses a symbol b.o defines, from `nm`), and its cycles (strongly connected components)
   printed; --strict fails on any (and on the line target of 3). Without --strict only a call
   from parallel/engine.c into a solver file fails (issue 31: the engine names no solver, e.g. no engine.c <-> schur_par.c).
5. Bodies: a kernel asks the body (src/body.h) for its inertia and points; the rigid body's
   spatial-inertia array `body_sinert` is named only in src/body.h and src/body.c (the body
   interface), src/model_build.c (which forms it), src/model.c (its storage) and src/checkpoint.c
   (the model fingerprint). Fails otherwise.
6. Joint types: `grep -rnE "(==|!=) *MBS_JNT_|case MBS_JNT_" src parallel` may list only the joint
   module (src/joint.c, include/mbspar/mbs_joint.h: the joint table and its predicates), and no
   file switches on a model's joint type (`switch (... jnttype ...)`, `switch (... loop_type
   ...)`, `switch (... type ...)` with MBS_JNT_ cases) outside it: a per-type choice is a row of
   the joint table (or of a table keyed by its id, e.g. src/natural_joints.c); elsewhere the
   predicates of mbs_joint.h.
Exit code 0: all checks pass; 1: one failed.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = ["src", "parallel", os.path.join("include", "mbspar")]
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def files(exts):
    out = []
    for d in DIRS:
        for top, subs, names in os.walk(os.path.join(ROOT, d)):
            subs.sort()
            rel = os.path.relpath(top, ROOT)
            for f in sorted(names):
                if f.endswith(exts):
                    out.append(os.path.join(rel, f))
    return out


def resolve(src, name):
    for base in (os.path.dirname(src), "src", "parallel", "include"):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(ROOT, p)):
            return p
    return None  # generated (build_info.h) or a system header


def sccs(graph):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in graph.get(v, ()):
                    out.append(sorted(comp))
    return out


def check_includes():
    graph = {}
    for f in files((".c", ".h")):
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            text = fh.read()
        graph[f] = {r for r in (resolve(f, n) for n in INC.findall(text)) if r}
    cyc = sccs(graph)
    for c in cyc:
        print("include cycle: " + " <-> ".join(c))
    print(f"includes: {sum(len(v) for v in graph.values())} edges between {len(graph)} files, "
          f"{len(cyc)} cycle(s)")
    return not cyc


ROWS = set()  # the solver files (check_method_ids)


def check_method_ids():
    rows = ROWS
    rows.add("src/solver.c")
    row = re.compile(r"^\s*(static\s+)?const\s+mbsSolverType\s+\w+\s*=", re.M)
    for f in files((".c",)):
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            if row.search(fh.read()):
                rows.add(f)
    pat = re.compile(r"(==|!=) *MBS_SOLVER_|case MBS_SOLVER_")
    bad = []
    for f in files((".c", ".h")):
        if not f.startswith(("src", "parallel")):
            continue
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                if pat.search(line) and f not in rows:
                    bad.append(f"{f}:{i}: {line.strip()}")
    for b in bad:
        print("method id outside the solver files: " + b)
    print(f"method ids: {len(bad)} comparison(s) outside the {len(rows)} solver files "
          f"({', '.join(sorted(rows))})")
    return not bad


BODY_FILES = {"src/body.h", "src/body.c", "src/model_build.c", "src/model.c", "src/checkpoint.c"}


def check_bodies():
    bad = []
    for f in files((".c", ".h")):
        if not f.startswith(("src", "parallel")) or f in BODY_FILES:
            continue
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                if "body_sinert" in line:
                    bad.append(f"{f}:{i}: {line.strip()}")
    for b in bad:
        print("a body's inertia outside the body interface: " + b)
    print(f"bodies: {len(bad)} use(s) of body_sinert outside {', '.join(sorted(BODY_FILES))}")
    return not bad


# The joint module (issue 31 item 5): only these files compare a joint type with MBS_JNT_* by
# hand; the rest of src/ and parallel/ asks the row of the joint table (mbs_jntType) or the
# predicates of mbs_joint.h (mbs_jntIsFixed, mbs_jntHasQuat, ...), and switches on no joint type.
JOINT_FILES = ("src/joint.c", "include/mbspar/mbs_joint.h")


def check_joint_types():
    pat = re.compile(r"(==|!=) *MBS_JNT_|case MBS_JNT_|switch *\([^)]*(jnttype|loop_type)")
    bad = []
    for f in files((".c", ".h")):
        if not f.startswith(("src", "parallel")) or f in JOINT_FILES:
            continue
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                if pat.search(line):
                    bad.append(f"{f}:{i}: {line.strip()}")
    for b in bad:
        print("joint type compared or switched on by hand (use the joint table's row or a "
              "predicate of mbs_joint.h): " + b)
    print(f"joint types: {len(bad)} comparison(s) or switch(es) outside {', '.join(JOINT_FILES)}")
    return not bad


MAX_LINES, BIG_LINES, MAX_BIG = 1000, 600, 5  # issue 31: none over 1000, at most five over 600


def check_lines(strict):
    over, big = [], []
    for f in files((".c",)):
        if f.startswith("include"):
            continue
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            n = sum(1 for _ in fh)
        if n > MAX_LINES:
            over.append(f"{f} ({n})")
        elif n > BIG_LINES:
            big.append(f"{f} ({n})")
    met = not over and len(over) + len(big) <= MAX_BIG
    print(f"lines: {len(over)} C file(s) of src/ and parallel/ over {MAX_LINES} lines"
          f"{': ' + ', '.join(over) if over else ''}; {len(over) + len(big)} over {BIG_LINES}"
          f"{' (also ' + ', '.join(big) + ')' if big else ''}; issue 31's target (none over "
          f"{MAX_LINES}, at most {MAX_BIG} over {BIG_LINES}) {'met' if met else 'NOT met'}")
    return met or not strict  # a gate with --strict only


def check_objects(bdir, strict):
    objs = []
    for dp, _, fs in os.walk(bdir):
        for f in fs:
            # the plain libraries only (the flop-counting copies define the same symbols)
            if f.endswith(".c.o") and ("mbs_core.dir" in dp or "mbs_parallel.dir" in dp):
                objs.append(os.path.join(dp, f))
    if not objs:
        print(f"objects: none under {bdir} (build mbs_core and mbs_parallel first)")
        return False
    defs, uses = {}, {}
    for o in objs:
        name = re.sub(r".*\.dir/", "", o)[: -len(".o")]
        out = subprocess.run(["nm", "-P", o], capture_output=True, text=True).stdout
        uses[name] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            sym, typ = parts[0], parts[1]
            if typ == "U":
                uses[name].add(sym)
            elif typ.isupper():
                defs[sym] = name
    graph = {n: {defs[s] for s in u if s in defs and defs[s] != n} for n, u in uses.items()}
    cyc = sccs(graph)
    for c in cyc:
        print("call cycle: " + " <-> ".join(c))
    print(f"objects: {len(graph)} files, {len(cyc)} call cycle(s)")
    # the engine names no solver: no call from parallel/engine.c into a file with a table row
    # (the kernels' files src/aba.c, dynamics.c and the table src/solver.c hold rows too)
    solvers = {f for f in ROWS if f.startswith(("parallel/", "src/solver_"))}
    named = sorted(graph.get("parallel/engine.c", set()) & solvers)
    for f in named:
        print(f"parallel/engine.c calls {f} (the engine names a solver)")
    engine_schur = bool(named)
    return not cyc if strict else not engine_schur


def main(argv):
    args = argv[1:]
    strict = "--strict" in args
    bdir = None
    if "--objects" in args:
        i = args.index("--objects")
        if i + 1 >= len(args):
            print(__doc__, file=sys.stderr)
            return 2
        bdir = args[i + 1]
    ok = check_includes()
    ok = check_method_ids() and ok
    ok = check_bodies() and ok
    ok = check_joint_types() and ok
    ok = check_lines(strict) and ok
    if bdir:
        ok = check_objects(bdir, strict) and ok
    print("check_structure: " + ("pass" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
