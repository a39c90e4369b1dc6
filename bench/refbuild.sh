# Sourced by bench/compare_reports.sh and bench/refactor_speed.sh: the mbspar of a reference
# commit, built once from `git archive` in ${TMPDIR:-/tmp}/mbs_ref_<sha> and reused while it
# exists. Concurrent callers wait for one build (flock on the directory's lock file).
#
#   mbs_refbuild NAME REPO COMMIT   -> sets refbin (the binary) and refdir; exits 2 on failure
# shellcheck shell=bash
mbs_refbuild() {
  local name=$1 repo=$2 commit=$3 sha
  sha=$(git -C "$repo" rev-parse --verify "$commit^{commit}") || {
    echo "$name: unknown commit $commit" >&2
    exit 2
  }
  refdir=${TMPDIR:-/tmp}/mbs_ref_${sha:0:12}
  refbin=$refdir/build/mbspar
  mkdir -p "${refdir%/*}"
  exec 8>"$refdir.lock"
  flock 8
  if [ ! -x "$refbin" ]; then
    echo "$name: building the reference ${sha:0:12} in $refdir" >&2
    rm -rf "$refdir" && mkdir -p "$refdir/src"
    git -C "$repo" archive "$sha" | tar -x -C "$refdir/src"
    if ! { cmake -S "$refdir/src" -B "$refdir/build" -DCMAKE_BUILD_TYPE=Release >"$refdir/build.log" 2>&1 &&
      cmake --build "$refdir/build" -j2 --target mbspar >>"$refdir/build.log" 2>&1; }; then
      echo "$name: the reference build failed (see $refdir/build.log)" >&2
      exit 2
    fi
  fi
  flock -u 8
}
