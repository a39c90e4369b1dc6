#!/usr/bin/env python3
"""Run CTest's tests (from `ctest --show-only=json-v1`) under valgrind memcheck.

Used by scripts/valgrind.sh. argv: JSON file, build directory. Each compiled test runs with
its ENVIRONMENT and WORKING_DIRECTORY; for tests launched by mpiexec, valgrind is inserted
just before the test program; test scripts (sh/bash) that take the program as an argument get a
wrapper in its place that runs every invocation under valgrind. Prints one line per test and a
summary; exit 1 if any failed.
"""
import json
import os
import shlex
import subprocess
import sys

SUPPS = ["/usr/share/openmpi/openmpi-valgrind.supp",
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "valgrind-mpi.supp")]


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def main():
    tests = json.load(open(sys.argv[1]))["tests"]
    bdir = os.path.realpath(sys.argv[2])
    logdir = os.path.join(bdir, "valgrind-logs")
    os.makedirs(logdir, exist_ok=True)
    vg = ["valgrind", "--error-exitcode=99", "--leak-check=full", "--show-leak-kinds=definite",
          "--errors-for-leak-kinds=definite", "--track-origins=yes", "--keep-debuginfo=yes",
          "--quiet"]
    vg += ["--suppressions=" + s for s in SUPPS if os.path.exists(s)]
    passed, failed, notrun = [], [], []
    for t in tests:
        name, cmd = t["name"], t.get("command") or []
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        # the test program: the first ELF file inside the build tree
        idx = next((i for i, a in enumerate(cmd)
                    if os.path.realpath(a).startswith(bdir + os.sep) and is_elf(a)), None)
        if idx is None:
            notrun.append(name)
            print(f"valgrind.sh: {name}: not a compiled test, not run")
            continue
        log = os.path.join(logdir, name + ".%p.log")
        if idx > 0 and os.path.basename(cmd[0]) in ("sh", "bash"):
            # a test script that receives the program as an argument and runs it (often many
            # times, maybe under its own launcher): hand it a wrapper that runs it in valgrind
            wrap = os.path.join(logdir, name + ".wrap.sh")
            with open(wrap, "w") as f:
                f.write("#!/bin/sh\nexec " + " ".join(shlex.quote(a) for a in vg) +
                        " " + shlex.quote("--log-file=" + log) + " " + shlex.quote(cmd[idx]) +
                        ' "$@"\n')
            os.chmod(wrap, 0o755)
            full = cmd[:idx] + [wrap] + cmd[idx + 1:]
        else:  # the program itself, or behind mpiexec: valgrind goes just before it
            full = cmd[:idx] + vg + ["--log-file=" + log] + cmd[idx:]
        env = dict(os.environ)
        # hwloc's x86 backend refuses valgrind with a 3-line notice on stderr, which tests that
        # count stderr lines would see; the other backends give the same topology
        env.setdefault("HWLOC_COMPONENTS", "-x86")
        for kv in props.get("ENVIRONMENT", []):
            k, _, v = kv.partition("=")
            env[k] = v
        cwd = props.get("WORKING_DIRECTORY", bdir)
        timeout = 20 * float(props.get("TIMEOUT", 300))
        try:
            r = subprocess.run(full, env=env, cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout)
            rc, out = r.returncode, r.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired:
            rc, out = "timeout", ""
        reports = []
        for f in sorted(os.listdir(logdir)):
            if f.startswith(name + ".") and f.endswith(".log"):
                text = open(os.path.join(logdir, f), errors="replace").read().strip()
                if text:
                    reports.append(f"--- {f}\n{text}")
                os.remove(os.path.join(logdir, f))
        if os.path.exists(os.path.join(logdir, name + ".wrap.sh")):
            os.remove(os.path.join(logdir, name + ".wrap.sh"))
        if rc == 0:
            passed.append(name)
            print(f"valgrind.sh: {name}: clean")
        else:
            failed.append(name)
            print(f"valgrind.sh: {name}: FAILED (exit {rc})")
            print(out[-4000:])
            for rep in reports:
                print(rep[-8000:])
    print(f"valgrind.sh: {len(passed)} clean, {len(failed)} failed, {len(notrun)} not run "
          f"(not compiled: {' '.join(notrun) or '-'}) out of {len(tests)}")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
