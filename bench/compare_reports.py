#!/usr/bin/env python3
"""Compare two mbspar JSON reports (or two directories of them) apart from timings, versions,
argv, host, date and paths (bench/compare_reports.sh drives it; python3 standard library only).

    compare_reports.py REF_DIR CUR_DIR          every case REF_DIR/NAME.{rc,json,err} against CUR_DIR
    compare_reports.py REF.json CUR.json        one pair

A case is equal when the exit codes are equal, and either both wrote JSON that is equal after
dropping the ignored keys (below), or neither did and the last stderr lines are equal. Numbers
are compared exactly (the refactoring must not change one bit); a difference prints its path and
both values. Exit code: 0 all equal, 1 some differ, 2 usage.
"""
import json
import os
import re
import sys

# keys dropped wherever they appear: build and run metadata, wall-clock measurements
IGNORED_KEYS = {
    "build",  # version, git_sha, compiler, flags, library versions
    "host", "date", "argv", "mpi_thread_level",
    "timers",  # the phase timers
    "time_s", "time_per_eval_s", "wall_s", "elapsed_s",
    "measured_s", "measured_eval_s", "measured_allreduce_s",
    "rss", "peak_rss", "peak_rss_kb", "rss_kb", "memory",
}
# key patterns dropped (measured, not computed)
IGNORED_PATTERNS = [re.compile(p) for p in (r"^measured", r"wall", r"_seconds$", r"^elapsed",
                                            r"^time_per", r"rss")]
# string values that are paths: compared by their last component
PATHISH = re.compile(r"^(/|\./|\.\./)")


def ignored(key):
    return key in IGNORED_KEYS or any(p.search(key) for p in IGNORED_PATTERNS)


def norm(x):
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items() if not ignored(k)}
    if isinstance(x, list):
        return [norm(v) for v in x]
    if isinstance(x, str) and PATHISH.match(x):
        return os.path.basename(x.rstrip("/"))
    return x


def diff(a, b, path, out, limit=8):
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'current' if k in b else 'reference'}")
            else:
                diff(a[k], b[k], f"{path}.{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} != {len(b)}")
        for i, (u, v) in enumerate(zip(a, b)):
            diff(u, v, f"{path}[{i}]", out, limit)
    elif type(a) is not type(b) or a != b:
        # NaN equals NaN here (json.loads gives float('nan'))
        if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
            return
        out.append(f"{path}: {a!r} != {b!r}")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
        return lines[-1] if lines else ""
    except OSError:
        return ""


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "missing"


def compare_case(ref, cur, name):
    """One case NAME in the two directories: (equal?, details)."""
    rc_a, rc_b = read(os.path.join(ref, name + ".rc")), read(os.path.join(cur, name + ".rc"))
    if rc_a != rc_b:
        return False, [f"exit code {rc_a} != {rc_b}: {last_line(os.path.join(cur, name + '.err'))}"]
    ja, jb = load(os.path.join(ref, name + ".json")), load(os.path.join(cur, name + ".json"))
    if (ja is None) != (jb is None):
        return False, ["JSON written by one build only"]
    if ja is None:
        la, lb = last_line(os.path.join(ref, name + ".err")), last_line(os.path.join(cur, name + ".err"))
        return la == lb, [] if la == lb else [f"stderr: {la!r} != {lb!r}"]
    out = []
    diff(norm(ja), norm(jb), "", out)
    return not out, out


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    ref, cur = argv[1], argv[2]
    if os.path.isfile(ref):
        out = []
        diff(norm(load(ref)), norm(load(cur)), "", out)
        print("equal" if not out else "different\n  " + "\n  ".join(out))
        return 1 if out else 0
    names = sorted(f[:-3] for f in os.listdir(ref) if f.endswith(".rc"))
    ndiff = 0
    for name in names:
        ok, details = compare_case(ref, cur, name)
        rc = read(os.path.join(cur, name + ".rc"))
        print(f"{'equal    ' if ok else 'DIFFERENT'} {name} (rc {rc})")
        for d in details:
            print("    " + d)
        ndiff += not ok
    print(f"compare_reports: {len(names) - ndiff} equal, {ndiff} different, {len(names)} cases")
    return 1 if ndiff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
