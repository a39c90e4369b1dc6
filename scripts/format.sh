#!/usr/bin/env bash
# clang-format over the tracked C sources and headers (style: .clang-format at the top).
#
#   scripts/format.sh --check    list files that are not formatted; exit 1 if any
#   scripts/format.sh --fix      reformat them in place
#
# "Tracked" means `git ls-files '*.c' '*.h'`; outside a git checkout (or one tracking no C file)
# the *.c/*.h files under src include parallel mpi-tests bench are used. CTest runs --check as
# the test format_check.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

mode=${1:-}
case "$mode" in
--check | --fix) ;;
*)
  echo "usage: scripts/format.sh --check|--fix" >&2
  exit 2
  ;;
esac
cf=${CLANG_FORMAT:-clang-format}
if ! command -v "$cf" >/dev/null 2>&1; then
  echo "format.sh: $cf not found: install the Debian package 'clang-format' (scripts/setup.sh --with-lint)" >&2
  exit 2
fi

files=()
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  while IFS= read -r -d '' f; do
    [ -f "$f" ] && files+=("$f")
  done < <(git ls-files -z -- '*.c' '*.h')
fi
if [ ${#files[@]} -eq 0 ]; then
  while IFS= read -r -d '' f; do
    files+=("$f")
  done < <(find src include parallel mpi-tests bench -name '*.[ch]' -print0 2>/dev/null)
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "format.sh: no C files found" >&2
  exit 1
fi

if [ "$mode" = --fix ]; then
  "$cf" -i "${files[@]}"
  echo "format.sh: formatted ${#files[@]} files"
  exit 0
fi
# one clang-format process for all files (one per file took ~40 s in CI); the files at fault are
# the ones its violation messages name
bad=()
if ! "$cf" --dry-run --Werror "${files[@]}" >/dev/null 2>"${TMPDIR:-/tmp}/mbs_format.$$"; then
  while IFS= read -r f; do
    bad+=("$f")
  done < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' \
    "${TMPDIR:-/tmp}/mbs_format.$$" | sort -u)
  [ ${#bad[@]} -ne 0 ] || {
    cat "${TMPDIR:-/tmp}/mbs_format.$$" >&2
    bad=("(clang-format failed)")
  }
fi
rm -f "${TMPDIR:-/tmp}/mbs_format.$$"
if [ ${#bad[@]} -ne 0 ]; then
  echo "format.sh: ${#bad[@]} of ${#files[@]} files need clang-format (scripts/format.sh --fix):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format.sh: ${#files[@]} files clean ($("$cf" --version | head -n 1))"
