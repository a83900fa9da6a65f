#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package of the toolkit, checked without installing it on this
# machine: build it with cpack, read its control data and file list, unpack
# it and run what it holds: the tools, and tshark loading the packaged
# plugin (as an unprivileged user: root's tshark ignores
# WIRESHARK_PLUGIN_DIR). scripts/check-deb-install.sh installs it for real
# in a fresh Debian 12 chroot.
#   check-deb.sh BUILD_DIR VERSION
set -euo pipefail
build=$1 ver=$2
command -v dpkg-deb >/dev/null || { echo "SKIP: dpkg-deb not found"; exit 77; }
work=$(mktemp -d /tmp/iwk-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { tail -n 30 "$work/cpack.log"; echo "FAIL: cpack"; exit 1; }
deb=$(ls "$work"/out/iwarpkit_"$ver"_*.deb)
echo "package: $(basename "$deb") ($(du -h "$deb" | cut -f1))"
dpkg-deb -I "$deb" >"$work/info"
grep -q "^ Package: iwarpkit$" "$work/info"
grep -q "^ Version: $ver$" "$work/info"
# Run-time dependencies found by dpkg-shlibdeps, not written by hand.
for dep in libpcap0.8 'libwireshark[0-9]' libibverbs1 librdmacm1 libc6; do
  grep -E "^ Depends:.*$dep" "$work/info" >/dev/null ||
    { cat "$work/info"; echo "FAIL: Depends lacks $dep"; exit 1; }
done
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$work/files"
plugin=$(grep -E '^/usr/lib/.*/wireshark/plugins/[0-9.]+/epan/iwarpkit\.so$' "$work/files" || true)
[ -n "$plugin" ] || { echo "FAIL: no plugin in Wireshark's plugin folder"; exit 1; }
for f in /usr/bin/iwarp-decode /usr/bin/iwarp-target /usr/bin/iwarp-conform /usr/bin/iwarp-perf \
         /usr/include/iwarp/iwarp.h /usr/include/iwarp/version.h \
         /usr/share/iwarpkit/conformance/cases/stag/read-deregistered.case \
         /usr/share/doc/iwarpkit/LICENSE; do
  grep -qx "$f" "$work/files" || { echo "FAIL: $f is not in the package"; exit 1; }
done
grep -qE '^/usr/lib/[^/]+/libiwarp\.so\.0\.' "$work/files"
grep -qE '^/usr/lib/[^/]+/cmake/iwarp/iwarpConfig\.cmake$' "$work/files"
grep -qE '^/usr/lib/[^/]+/pkgconfig/iwarp\.pc$' "$work/files"

dpkg-deb -x "$deb" "$work/root"
"$work/root/usr/bin/iwarp-decode" --version | grep -F "$ver" >/dev/null
# iwarp-conform finds its cases relative to itself, as installed.
"$work/root/usr/bin/iwarp-conform" --list >"$work/list" 2>&1 ||
  { cat "$work/list"; echo "FAIL: iwarp-conform --list"; exit 1; }
grep -q "stag.read-deregistered" "$work/list"

if command -v tshark >/dev/null; then
  tsv=$(tshark --version | head -1 | sed -n 's/.* \([0-9]\+\.[0-9]\+\)\.[0-9]\+.*/\1/p')
  pdir=$(dirname "$(dirname "$(dirname "$work/root$plugin")")") # .../plugins
  case "$plugin" in */plugins/"$tsv"/epan/*) ;; *) echo "FAIL: plugin not for tshark $tsv"; exit 1 ;; esac
  chmod -R a+rX "$work"
  run=()
  if [ "$(id -u)" -eq 0 ]; then run=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
  "${run[@]}" env -i PATH=/usr/bin:/bin HOME=/tmp WIRESHARK_PLUGIN_DIR="$pdir" \
    tshark -G plugins >"$work/plugins" 2>&1 || true
  grep -q "iwarpkit.so" "$work/plugins" ||
    { cat "$work/plugins"; echo "FAIL: tshark did not load the packaged plugin"; exit 1; }
  "${run[@]}" env -i PATH=/usr/bin:/bin HOME=/tmp WIRESHARK_PLUGIN_DIR="$pdir" \
    tshark -G protocols 2>/dev/null | grep "iwk_mpa" >/dev/null
  echo "tshark $tsv loads the packaged plugin"
fi
echo "package_deb: ok"
