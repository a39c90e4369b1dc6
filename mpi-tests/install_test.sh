#!/bin/sh
# cmake --install into a temporary prefix, then a small C program (mpi-tests/install/consumer.c)
# built against the installed package twice, with pkg-config (mbspar.pc, mpicc) and with CMake
# find_package(mbspar), and run: each must print the pendulum's closed-form acceleration. Also
# runs the installed binary (docs/cluster.md, issue 32).
# usage: install_test.sh BUILD_DIR SOURCE_DIR
bdir=$1
src=$2
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
mbs_test_init mbs_install
p=$tmp/prefix

run 0 cmake --install "$bdir" --prefix "$p"
for f in bin/mbspar lib/libmbs_core.a lib/libmbs_parallel.a include/mbspar/mbspar.h \
  include/mbspar/mbs_parallel.h lib/pkgconfig/mbspar.pc lib/cmake/mbspar/mbsparConfig.cmake \
  share/mbspar/configs/chain.cfg; do
  [ -f "$p/$f" ] || bad "not installed: $f"
done
run 0 "$p/bin/mbspar" check "$p/share/mbspar/configs/pendulum.cfg"
grep -q 'bodies  *1' "$tmp/out" || bad "installed mbspar check: $(cat "$tmp/out")"

# pkg-config (mbspar.pc finds its prefix itself: moved prefixes work)
mv "$p" "$tmp/moved"
p=$tmp/moved
flags=$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs mbspar) || bad "pkg-config mbspar"
# shellcheck disable=SC2086
run 0 mpicc -std=c11 "$src/mpi-tests/install/consumer.c" $flags -o "$tmp/consumer_pc"
run 0 "$tmp/consumer_pc"
grep -q '^consumer: .* ok$' "$tmp/out" || bad "pkg-config consumer: $(cat "$tmp/out" "$tmp/err")"

# CMake find_package(mbspar)
run 0 cmake -S "$src/mpi-tests/install" -B "$tmp/cb" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_BUILD_TYPE=Release
run 0 cmake --build "$tmp/cb"
run 0 "$tmp/cb/consumer"
grep -q '^consumer: .* ok$' "$tmp/out" || bad "find_package consumer: $(cat "$tmp/out" "$tmp/err")"

[ "$fail" -eq 0 ] || exit 1
echo "install: the installed package builds and runs a program with pkg-config and find_package"
