#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The installed package as a downstream project meets it: install BUILD_DIR
# into a staging root (DESTDIR, prefix /usr), then build the examples
# against only what was installed, with find_package(iwarp) and with
# pkg-config, and run them.
#   check.sh BUILD_DIR EXAMPLES_DIR
set -euo pipefail
build=$1 ex=$2
stage=$(mktemp -d /tmp/iwk-stage.XXXXXX)
trap 'rm -rf "$stage"' EXIT
DESTDIR=$stage/root cmake --install "$build" --prefix /usr >"$stage/install.log"
root=$stage/root/usr
libdir=$(dirname "$(find "$root" -name 'libiwarp.so.0' | head -1)")
[ -n "$libdir" ] || { echo "FAIL: libiwarp.so.0 was not installed"; exit 1; }
for f in include/iwarp/iwarp.h include/iwarp/engine.h include/iwarp/verbs.h \
         include/iwarp/version.h; do
  [ -f "$root/$f" ] || { echo "FAIL: $f was not installed"; exit 1; }
done

echo "== find_package(iwarp)"
cmake -S "$ex/downstream" -B "$stage/cm" -DCMAKE_PREFIX_PATH="$root" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$stage/cm" >/dev/null
# Outputs go to files before they are searched: under pipefail, a
# `producer | grep -q` fails whenever grep exits before the producer's
# last write (SIGPIPE), which a loaded CI machine makes happen.
expect_ok() { # expect_ok NAME FILE
  grep -x ok "$2" >/dev/null || { echo "FAIL: $1 did not print ok"; exit 1; }
}
LD_LIBRARY_PATH=$libdir "$stage/cm/engine_example" >"$stage/out1"
cat "$stage/out1"; expect_ok engine_example "$stage/out1"
"$stage/cm/rdma_example" >"$stage/out2"
cat "$stage/out2"; expect_ok rdma_example "$stage/out2"
# The run-time library is the installed one, not the build tree's.
LD_LIBRARY_PATH=$libdir ldd "$stage/cm/engine_example" >"$stage/ldd"
grep -F "$libdir/libiwarp.so.0" "$stage/ldd" >/dev/null ||
  { cat "$stage/ldd"; echo "FAIL: engine_example does not load $libdir/libiwarp.so.0"; exit 1; }

echo "== pkg-config iwarp"
# A real install to /usr needs none of this; the staging root needs the
# system paths kept (pkg-config drops -I/usr/include before adding the sysroot).
export PKG_CONFIG_SYSROOT_DIR=$stage/root PKG_CONFIG_LIBDIR=$libdir/pkgconfig \
  PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
cc -std=c11 -Wall -Wextra -Werror -o "$stage/pc_engine" "$ex/engine_example.c" \
  $(pkg-config --cflags --libs iwarp)
LD_LIBRARY_PATH=$libdir "$stage/pc_engine" >"$stage/out3"
expect_ok "engine_example (pkg-config)" "$stage/out3"
cc -std=c11 -Wall -Wextra -Werror -o "$stage/pc_rdma" "$ex/rdma_example.c" \
  $(pkg-config --cflags --libs iwarp-verbs)
LD_LIBRARY_PATH=$libdir "$stage/pc_rdma" >"$stage/out4"
expect_ok "rdma_example (pkg-config)" "$stage/out4"
echo "downstream: find_package and pkg-config builds ran ok"
