#!/bin/sh
# The table of config keys in docs/cli.md ("Config keys") is the output of `mbspar help config`,
# which prints the descriptor tables of src/config_opts.c. This script writes it between the
# two marker lines; with --check it only compares (exit 1 when the doc is stale; test cli_help).
# usage: scripts/config_keys_doc.sh [--check] [MBSPAR]   (default MBSPAR: build/mbspar)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
check=
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
mbspar=${1:-$here/build/mbspar}
doc=$here/docs/cli.md
begin='<!-- config keys: begin (scripts/config_keys_doc.sh writes this block) -->'
end='<!-- config keys: end -->'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$mbspar" help config >"$tmp/keys"
if ! grep -qxF "$begin" "$doc" || ! grep -qxF "$end" "$doc"; then
  echo "config_keys_doc: $doc has no config-keys markers" >&2
  exit 1
fi
# the doc with the block replaced: the fence, the help text, the fence
awk -v b="$begin" -v e="$end" -v keys="$tmp/keys" '
  $0 == b { print; print "```"; while ((getline l < keys) > 0) print l; print "```"; skip = 1; next }
  $0 == e { skip = 0 }
  !skip { print }' "$doc" >"$tmp/doc"
if [ -n "$check" ]; then
  if ! cmp -s "$tmp/doc" "$doc"; then
    echo "config_keys_doc: docs/cli.md differs from mbspar help config (run scripts/config_keys_doc.sh):" >&2
    diff "$doc" "$tmp/doc" >&2 || true
    exit 1
  fi
  exit 0
fi
cp "$tmp/doc" "$doc"
