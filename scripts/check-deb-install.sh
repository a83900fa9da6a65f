#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the toolkit's Debian package for real, in a fresh Debian 12
# (debootstrap --variant=minbase bookworm) chroot, as a user would with apt,
# and checks that the tools run and that tshark loads the plugin from
# Wireshark's global plugin folder. Root and the Debian mirror needed;
# several minutes. Not part of the default test run (ctest package_deb
# checks the package without installing it).
#   scripts/check-deb-install.sh PACKAGE.deb [CHROOT_DIR]
set -euo pipefail
deb=$(readlink -f "$1")
root=${2:-$(mktemp -d /tmp/iwk-debroot.XXXXXX)}
[ "$(id -u)" -eq 0 ] || { echo "check-deb-install: needs root (debootstrap, chroot)"; exit 2; }
export DEBIAN_FRONTEND=noninteractive
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
if [ ! -x "$root/usr/bin/apt-get" ]; then
  echo "== debootstrap bookworm into $root"
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$root.log" 2>&1 ||
    { tail -n 20 "$root.log"; exit 1; }
fi
mounts=("$root/proc" "$root/sys" "$root/dev")
cleanup() { for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done; }
trap cleanup EXIT
mount -t proc proc "$root/proc"; mount -t sysfs sys "$root/sys"; mount --bind /dev "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/iwarpkit.deb"
inroot() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
         DEBIAN_FRONTEND=noninteractive "$@"; }
echo "== apt-get install ./iwarpkit.deb tshark"
inroot apt-get update -qq
inroot apt-get install -y -qq /tmp/iwarpkit.deb tshark >"$root/tmp/apt.log" 2>&1 ||
  { tail -n 30 "$root/tmp/apt.log"; exit 1; }
inroot iwarp-decode --version
inroot iwarp-conform --list | grep -c "^" | sed 's/^/iwarp-conform --list: cases /'
inroot tshark -G plugins | grep iwarpkit
inroot tshark -G protocols | grep -E "^iWARP|iwk_" | head -3
inroot dpkg -L iwarpkit | grep -E "libiwarp\.so\.0$|iwarpConfig\.cmake$|iwarp\.pc$"
echo "check-deb-install: ok (chroot $root)"
