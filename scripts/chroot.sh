#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A Debian release other than the host's, as a cached debootstrap chroot, to
# build and test the tree against that release's compiler and Wireshark.
#
#   scripts/chroot.sh SUITE --ready            make (or find) the chroot
#   scripts/chroot.sh SUITE [--] CMD [ARG...]  run CMD in it, in /src, a
#                                              fresh clone of HEAD plus the
#                                              work tree's uncommitted changes
#   scripts/chroot.sh SUITE --shell            the same, interactive
#
# SUITE: bookworm (Debian 12, Wireshark 4.0), trixie (Debian 13, 4.4) or
# forky (Debian testing, 4.6; built with debootstrap's sid script).
# The chroot is a minbase root with scripts/deps.sh run inside it, cached in
# $IWK_CHROOT_CACHE/<suite> (default ~/.cache/iwarpkit-chroots) and reused
# while deps.sh is unchanged. The clone is made anew for each run, so a run
# sees exactly what a clean checkout has.
#
# Exit: CMD's status; 77 when a chroot cannot be made here (not root, no
# debootstrap and no apt to install it, no mirror, or already inside a
# chroot that cannot mount /proc), with the reason on stderr.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

usage() { awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; }
[ $# -ge 1 ] || { usage >&2; exit 2; }
suite=$1; shift
case $suite in
  bookworm|trixie) script=$suite ;;
  forky) script=/usr/share/debootstrap/scripts/sid ;;
  -h|--help) usage; exit 0 ;;
  *) echo "chroot: unknown suite '$suite' (bookworm, trixie or forky)" >&2; exit 2 ;;
esac
mirror=${IWK_CHROOT_MIRROR:-http://deb.debian.org/debian}
cache=${IWK_CHROOT_CACHE:-${HOME:-/root}/.cache/iwarpkit-chroots}
root=$cache/$suite
skip() { echo "chroot: SKIP $suite: $*" >&2; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, mount, chroot)"
# Nested in a chroot without its own /proc, mounts for a second one fail.
[ -r /proc/self/mountinfo ] || skip "no /proc here (nested in a minimal chroot?)"

# The deps recipe's hash: a changed deps.sh re-runs it in the cached root.
deps_hash=$(sha256sum "$top/scripts/deps.sh" | cut -c1-16)

mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() { # bind SRC DST: mount SRC at DST inside the root, undone at exit
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounts+=("$2")
}
mount_system() {
  local m
  for m in proc sys dev dev/pts; do
    mkdir -p "$root/$m"
    case $m in
      proc) mount -t proc proc "$root/proc" ;;
      sys) mount -t sysfs sys "$root/sys" ;;
      dev) mount --bind /dev "$root/dev" ;;
      dev/pts) mount -t devpts devpts "$root/dev/pts" -o newinstance,ptmxmode=0666 ;;
    esac || skip "cannot mount $m in the chroot"
    mounts+=("$root/$m")
  done
  cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  LANG=C.UTF-8 TERM="${TERM:-dumb}" DEBIAN_FRONTEND=noninteractive "$@"; }

# One builder at a time per suite; runs share the root read-mostly.
mkdir -p "$cache"
exec 9>"$cache/.$suite.lock"
flock -w 1800 9 || skip "the cache $root is locked by another build"

if [ ! -f "$root/.iwk-base" ]; then
  if ! command -v debootstrap >/dev/null; then
    command -v apt-get >/dev/null || skip "no debootstrap and no apt-get to install it"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
      skip "cannot install debootstrap"
  fi
  echo "chroot: debootstrap --variant=minbase $suite (once; cached in $root)" >&2
  rm -rf "$root.tmp"
  mkdir -p "$cache/debs"
  if ! debootstrap --variant=minbase --cache-dir="$cache/debs" "$suite" "$root.tmp" "$mirror" \
       "$script" >"$cache/$suite.debootstrap.log" 2>&1; then
    tail -n 20 "$cache/$suite.debootstrap.log" >&2
    grep -qiE 'Failed getting release|Couldn.t download|Temporary failure' \
      "$cache/$suite.debootstrap.log" && skip "the mirror $mirror is not reachable"
    echo "chroot: debootstrap failed ($cache/$suite.debootstrap.log)" >&2
    exit 1
  fi
  rm -rf "$root" && mv "$root.tmp" "$root"
  # This mirror's Release file for testing can be past its Valid-Until date;
  # the signature is still checked.
  echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99iwk-valid-until"
  # Packages, not documentation, in a root that exists to build and test.
  printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-exclude=/usr/share/man/*' \
    'path-exclude=/usr/share/locale/*' >"$root/etc/dpkg/dpkg.cfg.d/99iwk-nodoc"
  touch "$root/.iwk-base"
fi

mount_system
if [ "$(cat "$root/.iwk-deps" 2>/dev/null)" != "$deps_hash" ]; then
  echo "chroot: scripts/deps.sh in $suite" >&2
  mkdir -p "$root/tmp/iwk-deps"
  cp "$top/scripts/deps.sh" "$root/tmp/iwk-deps/"
  in_root bash /tmp/iwk-deps/deps.sh >"$cache/$suite.deps.log" 2>&1 ||
    { tail -n 30 "$cache/$suite.deps.log" >&2; echo "chroot: deps.sh failed in $suite" >&2; exit 1; }
  in_root apt-get clean
  echo "$deps_hash" >"$root/.iwk-deps"
fi
[ "${1:-}" = --ready ] && { echo "$root"; exit 0; }
[ "${1:-}" = -- ] && shift

# A clean clone of HEAD with the uncommitted changes on top, as CI sees a
# commit: generated files and build trees of the host stay out.
src=$(mktemp -d "$cache/src.$suite.XXXXXX")
mounts_src() { rm -rf "$src"; }
trap 'cleanup; mounts_src' EXIT
git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  { echo "chroot: $top is not a git checkout" >&2; exit 2; }
git clone -q --no-hardlinks "$top" "$src"
(cd "$top" && git diff HEAD --binary) | (cd "$src" && git apply --allow-empty --whitespace=nowarn)
(cd "$top" && git ls-files -o --exclude-standard -z) | (cd "$top" && xargs -0 -r cp --parents -t "$src")
chmod 755 "$src"
bind "$src" "$root/src"
if [ "${1:-}" = --shell ] || [ $# = 0 ]; then
  in_root bash -c 'cd /src && exec bash -i'
else
  in_root bash -c 'cd /src && exec "$@"' bash "$@"
fi
