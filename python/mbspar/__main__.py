"""Command line of the reader, for shell scripts (scripts/plot_run.sh, scripts/animate.sh).

    python3 -m mbspar DIR             a one-line summary of the run
    python3 -m mbspar DIR title       the config's description (nothing when there is none)
    python3 -m mbspar DIR qcsv N      CSV on stdout: t and the joint coordinates, all of them when
                                      nq <= 2N + 2, else the first N and the last N (header: t
                                      and the q_* names)

Exit code 2 with one line on stderr when DIR cannot be read.
"""
import sys

from . import load_run


def main(argv):
    if len(argv) not in (1, 2, 3) or (len(argv) == 3 and argv[1] != "qcsv") or \
            (len(argv) == 2 and argv[1] != "title"):
        sys.exit(__doc__)
    try:
        r = load_run(argv[0])
    except (OSError, ValueError, KeyError, ImportError) as e:
        sys.stderr.write("mbspar reader: %s: %s\n" % (argv[0], e))
        sys.exit(2)
    if len(argv) == 1:
        print(repr(r))
    elif argv[1] == "title":
        d = ((r.info or {}).get("config") or {}).get("description")
        if d:
            print(d)
    else:
        k, nq = int(argv[2]), r.q.shape[1]
        pick = [i for i in range(nq) if nq <= 2 * k + 2 or i < k or i >= nq - k]
        names = [r.q_names[i] if i < len(r.q_names) else "q%d" % i for i in pick]
        print(",".join(["t"] + names))
        for row in range(r.nrow):
            print(",".join("%.17g" % v for v in [r.t[row]] + [r.q[row, i] for i in pick]))


main(sys.argv[1:])
