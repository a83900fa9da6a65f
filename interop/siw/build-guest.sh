#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the disposable siw guest, or finds it in the cache.
#
#   interop/siw/build-guest.sh [--rebuild] [--print-dir] [--smb]
#
# Result (docs/siw.md): $IWK_SIW_CACHE/<key>/ with vmlinuz, initrd.img,
# rootfs.ext4 (the guest's disk, used read-only through a per-boot overlay),
# siw.ko, manifest.env, build.log; $IWK_SIW_CACHE/current points at it.
#
# Steps, each done once per cache key and skipped when its stamp exists:
#   1. host tools (apt-get install: qemu-system-x86 qemu-utils debootstrap e2fsprogs socat)
#   2. debootstrap --variant=minbase + IWK_SIW_PACKAGES            (~100 s)
#   3. in a chroot of that root: the guest kernel linux-image + linux-headers
#      of IWK_SIW_KVERSION (initrd built by initramfs-tools, virtio modules)
#   4. siw.ko built out of tree from linux-source-6.1 of the SAME version,
#      against those headers, in the chroot; installed in /lib/modules/*/updates
#   4b. with --smb only (storage.sh's SMB Direct capture): cifs.ko and
#      ksmbd.ko from the same source with SMB Direct on
#      (CONFIG_CIFS_SMB_DIRECT, CONFIG_SMB_SERVER_SMBDIRECT: Debian builds both
#      without), ksmbd patched (ksmbd-*.patch); also in updates/. Minutes of
#      compiling that no other test needs, so a cold smoke test skips it.
#   5. the harness's guest files (guest/) installed; ext4 image made with
#      mke2fs -d (no loop mount). Redone whenever guest/ changes.
#
# Exit: 0 ready; 77 cannot build here (not root, no Debian mirror, no apt);
# anything else is a real failure (see build.log).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Bump when the way the root is made changes (invalidates the cache).
BUILD_REV=4

rebuild=0 print_dir=0 want_smb=0
for a in "$@"; do
  case "$a" in
    --rebuild) rebuild=1 ;;
    --print-dir) print_dir=1 ;;
    --smb) want_smb=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) iwk_die "unknown argument: $a (try --help)" 2 ;;
  esac
done

t_start=$(date +%s)

hash_of() { sha256sum | cut -c1-12; }
pkg_hash=$(printf '%s\n' "$BUILD_REV" "$IWK_SIW_SUITE" "$IWK_SIW_MIRROR" "${IWK_SIW_PACKAGES[@]}" | hash_of)
KEY="${IWK_SIW_SUITE}-k${IWK_SIW_KVERSION}-p${pkg_hash}"
KD="$IWK_SIW_CACHE/$KEY"
ROOT="$KD/root"
guest_hash=$(cd "$IWK_SIW_DIR/guest" && find . -type f -print0 | sort -z | xargs -0 sha256sum | hash_of)
# Step 4b's recipe: its revision and the ksmbd patches (a change rebuilds
# only 4b and the image).
SMB_REV=1
smb_hash=$( { echo "$SMB_REV"; cat "$IWK_SIW_DIR"/ksmbd-*.patch; } | hash_of)
# The image stamp says what the image holds: the guest files, and the SMB
# modules' recipe or "nosmb".
smb_done() { [[ -f "$KD/.smb.done" && "$(cut -d' ' -f1 "$KD/.smb.done")" == "$smb_hash" ]]; }
image_ok() {
  [[ -f "$KD/.image.done" ]] || return 1
  local g m
  read -r g m <"$KD/.image.done"
  [[ $g == "$guest_hash" ]] || return 1
  [[ $want_smb == 0 || $m == "$smb_hash" ]]
}

# Fast path: everything there and the guest files unchanged. No root needed.
# (The host tools must be there too: a cache can outlive them.)
if [[ $rebuild == 0 ]] && image_ok &&
   command -v qemu-system-x86_64 >/dev/null && command -v socat >/dev/null; then
  ln -sfn "$KEY" "$IWK_SIW_CACHE/current" 2>/dev/null || true
  # shellcheck disable=SC1091
  kabi=$(sed -n 's/^IWK_KABI=//p' "$KD/manifest.env")
  iwk_log "guest ready (cached): $KD (kernel $kabi)"
  [[ $print_dir == 1 ]] && printf '%s\n' "$KD"
  exit 0
fi

# ---------------------------------------------------------------------------
[[ $(id -u) == 0 ]] || iwk_skip "building the guest needs root (debootstrap, chroot); run as root or with sudo"
command -v flock >/dev/null || iwk_die "flock (util-linux) missing"

mkdir -p "$IWK_SIW_CACHE/debs/archives/partial" "$KD"
exec 9>"$IWK_SIW_CACHE/.lock"
if ! flock -w 3600 9; then iwk_die "another build holds $IWK_SIW_CACHE/.lock for an hour"; fi

LOG="$KD/build.log"
: >>"$LOG"
iwk_log "building guest $KEY (log: $LOG)"
echo "=== build $(date -Is) key=$KEY" >>"$LOG"

NET_RE='Failed getting release file|Couldn.t download|Temporary failure resolving|Could not resolve|Network is unreachable|Unable to connect|Connection refused|Connection timed out|Failed to fetch|Could not connect|No route to host'
# run_logged WHAT CMD...: runs CMD with output in the log; on failure shows
# the tail, and exits 77 when it looks like "no network to the mirror".
run_logged() {
  local what=$1; shift
  local t0; t0=$(date +%s)
  echo "--- $what: $*" >>"$LOG"
  local rc=0
  "$@" >>"$LOG" 2>&1 || rc=$?
  if [[ $rc == 0 ]]; then
    echo "--- $what: ok in $(( $(date +%s) - t0 )) s" >>"$LOG"
    return 0
  fi
  echo "--- $what: FAILED rc=$rc" >>"$LOG"
  tail -n 25 "$LOG" >&2
  if tail -n 200 "$LOG" | grep -Eq "$NET_RE"; then
    iwk_skip "$what: cannot reach the Debian mirror ($IWK_SIW_MIRROR); guest not built"
  fi
  iwk_die "$what failed (rc=$rc); full log: $LOG"
}

# --- 1. host tools -----------------------------------------------------------
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v qemu-img >/dev/null || need+=(qemu-utils)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v mke2fs >/dev/null || need+=(e2fsprogs)
# socat: guest.sh's guestfwd (the guest as initiator towards a host listener)
command -v socat >/dev/null || need+=(socat)
if ((${#need[@]})); then
  command -v apt-get >/dev/null || iwk_skip "missing ${need[*]} and no apt-get to install them"
  iwk_log "installing host packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >>"$LOG" 2>&1; then
    run_logged "apt-get update (host)" apt-get update
    run_logged "apt-get install (host)" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y --no-install-recommends "${need[@]}"
  fi
fi

# --- chroot helpers ----------------------------------------------------------
MOUNTS=()
chroot_up() {
  local m
  for m in proc sys dev dev/pts var/cache/apt/archives; do mkdir -p "$ROOT/$m"; done
  mount -t proc proc "$ROOT/proc"; MOUNTS+=("$ROOT/proc")
  mount -t sysfs sys "$ROOT/sys"; MOUNTS+=("$ROOT/sys")
  mount --bind /dev "$ROOT/dev"; MOUNTS+=("$ROOT/dev")
  mount -t devpts devpts "$ROOT/dev/pts" -o newinstance,ptmxmode=0666; MOUNTS+=("$ROOT/dev/pts")
  # .debs stay in the cache, out of the image, and survive rebuilds
  mkdir -p "$IWK_SIW_CACHE/debs/archives/partial"
  mount --bind "$IWK_SIW_CACHE/debs/archives" "$ROOT/var/cache/apt/archives"
  MOUNTS+=("$ROOT/var/cache/apt/archives")
  cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
  # no daemon starts from a postinst
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"; chmod 755 "$ROOT/usr/sbin/policy-rc.d"
}
chroot_down() {
  local i
  for ((i=${#MOUNTS[@]}-1; i>=0; i--)); do
    umount "${MOUNTS[$i]}" 2>/dev/null || umount -l "${MOUNTS[$i]}" 2>/dev/null || true
  done
  MOUNTS=()
  if [[ -d "$ROOT/etc" ]]; then
    rm -f "$ROOT/usr/sbin/policy-rc.d"
    : >"$ROOT/etc/resolv.conf" 2>/dev/null || true
  fi
}
trap chroot_down EXIT
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
              LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"; }

# --- 2. debootstrap ----------------------------------------------------------
if [[ $rebuild == 1 ]]; then
  iwk_log "--rebuild: removing $KD"
  rm -f "$KD"/.*.done
  rm -rf "$ROOT" "$ROOT.tmp"
fi
if [[ ! -f "$KD/.debootstrap.done" ]]; then
  rm -rf "$ROOT" "$ROOT.tmp"
  t0=$(date +%s)
  iwk_log "debootstrap $IWK_SIW_SUITE minbase + ${#IWK_SIW_PACKAGES[@]} packages from $IWK_SIW_MIRROR"
  inc=$(IFS=,; echo "${IWK_SIW_PACKAGES[*]}")
  run_logged debootstrap debootstrap --variant=minbase --include="$inc" \
    --cache-dir="$IWK_SIW_CACHE/debs/archives" "$IWK_SIW_SUITE" "$ROOT.tmp" "$IWK_SIW_MIRROR"
  mv "$ROOT.tmp" "$ROOT"
  echo "$(( $(date +%s) - t0 ))" >"$KD/.debootstrap.done"
  iwk_log "debootstrap done in $(cat "$KD/.debootstrap.done") s"
fi

# --- 3. guest kernel ---------------------------------------------------------
if [[ ! -f "$KD/.kernel.done" ]]; then
  t0=$(date +%s)
  cat >"$ROOT/etc/apt/sources.list" <<EOF_SRC
deb $IWK_SIW_MIRROR $IWK_SIW_SUITE main
deb $IWK_SIW_MIRROR $IWK_SIW_SUITE-updates main
deb $IWK_SIW_SECURITY_MIRROR $IWK_SIW_SUITE-security main
EOF_SRC
  # Small initrd: only what finds a virtio ext4 root. gzip: no zstd needed at boot.
  mkdir -p "$ROOT/etc/initramfs-tools/conf.d"
  printf 'MODULES=list\nCOMPRESS=gzip\n' >"$ROOT/etc/initramfs-tools/conf.d/iwk.conf"
  printf '%s\n' virtio_pci virtio_blk virtio_net ext4 crc32c_generic >"$ROOT/etc/initramfs-tools/modules"
  chroot_up
  # no fsync per file: the root is a disposable build tree (removed before the image)
  echo force-unsafe-io >"$ROOT/etc/dpkg/dpkg.cfg.d/iwk-unsafe-io"
  run_logged "apt-get update (guest)" in_root apt-get update
  kver=$IWK_SIW_KVERSION
  if [[ $kver != auto ]] && ! in_root apt-cache show "linux-image-amd64=$kver" >/dev/null 2>&1; then
    iwk_warn "pinned guest kernel $kver is not on the mirror any more; using the newest (bump IWK_SIW_KVERSION in interop/siw/lib.sh)"
    kver=auto
  fi
  if [[ $kver == auto ]]; then
    kver=$(in_root apt-cache policy linux-image-amd64 | sed -n 's/^ *Candidate: //p')
  fi
  kabi=$(in_root apt-cache show "linux-image-amd64=$kver" | sed -n 's/^Depends: .*linux-image-\([0-9.]*-[0-9]*\)-amd64 .*/\1/p' | head -n1)
  [[ -n "$kabi" ]] || iwk_die "cannot find the kernel ABI of linux-image-amd64=$kver"
  kname="$kabi-amd64"
  iwk_log "guest kernel: linux-image-$kname $kver"
  run_logged "install guest kernel $kname" in_root apt-get install -y --no-install-recommends \
    "linux-image-$kname=$kver" "linux-headers-$kname=$kver"
  [[ -f "$ROOT/boot/vmlinuz-$kname" ]] || iwk_die "no /boot/vmlinuz-$kname in the guest root"
  [[ -f "$ROOT/boot/initrd.img-$kname" ]] || run_logged "update-initramfs" in_root update-initramfs -c -k "$kname"
  {
    echo "IWK_SUITE=$IWK_SIW_SUITE"
    echo "IWK_KVERSION_REQUESTED=$IWK_SIW_KVERSION"
    echo "IWK_KVERSION=$kver"
    echo "IWK_KABI=$kname"
  } >"$KD/kernel.env"
  chroot_down
  echo "$(( $(date +%s) - t0 ))" >"$KD/.kernel.done"
  iwk_log "kernel installed in $(cat "$KD/.kernel.done") s"
fi
# shellcheck disable=SC1091
source "$KD/kernel.env"

# --- 4. siw.ko -----------------------------------------------------------------
if [[ ! -f "$KD/.siw.done" ]]; then
  t0=$(date +%s)
  chroot_up
  iwk_log "siw.ko: linux-source-6.1=$IWK_KVERSION -> drivers/infiniband/sw/siw, built against linux-headers-$IWK_KABI"
  run_logged "download linux-source-6.1" in_root sh -c \
    "cd /var/cache/apt/archives && apt-get download linux-source-6.1=$IWK_KVERSION"
  deb="$IWK_SIW_CACHE/debs/archives/linux-source-6.1_${IWK_KVERSION//:/%3a}_all.deb"
  [[ -f "$deb" ]] || iwk_die "linux-source-6.1 $IWK_KVERSION .deb not found after download"
  rm -rf "$ROOT/usr/src/iwk-siw"
  mkdir -p "$ROOT/usr/src/iwk-siw"
  run_logged "extract siw sources" in_root sh -c \
    "dpkg-deb --fsys-tarfile /var/cache/apt/archives/$(basename "$deb") \
       | tar -xO ./usr/src/linux-source-6.1.tar.xz \
       | tar -xJ -C /usr/src/iwk-siw --strip-components=5 linux-source-6.1/drivers/infiniband/sw/siw"
  [[ -f "$ROOT/usr/src/iwk-siw/siw_main.c" ]] || iwk_die "siw sources missing after extraction"
  echo "linux-source-6.1 $IWK_KVERSION drivers/infiniband/sw/siw" >"$ROOT/usr/src/iwk-siw/SOURCE"
  run_logged "build siw.ko" in_root make -C "/usr/src/linux-headers-$IWK_KABI" \
    M=/usr/src/iwk-siw CONFIG_RDMA_SIW=m -j"$(nproc)" modules
  mkdir -p "$ROOT/lib/modules/$IWK_KABI/updates"
  install -m 644 "$ROOT/usr/src/iwk-siw/siw.ko" "$ROOT/lib/modules/$IWK_KABI/updates/siw.ko"
  run_logged depmod in_root depmod "$IWK_KABI"
  vermagic=$(in_root modinfo -F vermagic "/lib/modules/$IWK_KABI/updates/siw.ko")
  case "$vermagic" in
    "$IWK_KABI "*) ;;
    *) iwk_die "siw.ko vermagic '$vermagic' does not match $IWK_KABI" ;;
  esac
  cp "$ROOT/usr/src/iwk-siw/siw.ko" "$KD/siw.ko"
  chroot_down
  echo "IWK_SIW_VERMAGIC=\"$vermagic\"" >"$KD/siw.env"
  echo "$(( $(date +%s) - t0 ))" >"$KD/.siw.done"
  iwk_log "siw.ko built in $(cat "$KD/.siw.done") s (vermagic: $vermagic)"
fi

# --- 4b. cifs.ko and ksmbd.ko with SMB Direct -------------------------------------
# Debian's 6.1 has CONFIG_CIFS=m and CONFIG_SMB_SERVER=m but neither SMB
# Direct option, so storage.sh's SMB Direct capture needs both modules rebuilt
# from the same source with them on. The options are bools that only add
# objects (smbdirect.o, transport_rdma.o) and #ifdef'd code inside the one
# module, so setting them for this build alone is safe: as make variables for
# the Makefiles and as -D for the C code (autoconf.h of the headers lacks them).
if [[ $want_smb == 1 ]] && ! smb_done; then
  t0=$(date +%s)
  chroot_up
  deb="$IWK_SIW_CACHE/debs/archives/linux-source-6.1_${IWK_KVERSION//:/%3a}_all.deb"
  [[ -f "$deb" ]] || run_logged "download linux-source-6.1" in_root sh -c \
    "cd /var/cache/apt/archives && apt-get download linux-source-6.1=$IWK_KVERSION"
  S=/usr/src/iwk-smb
  rm -rf "$ROOT$S"
  mkdir -p "$ROOT$S"
  iwk_log "cifs.ko, ksmbd.ko: linux-source-6.1=$IWK_KVERSION fs/smb with SMB Direct"
  # (ksmbd's vfs.c includes fs/internal.h, for vfs_path_lookup)
  run_logged "extract fs/smb and the ASN.1 compiler" in_root sh -c \
    "dpkg-deb --fsys-tarfile /var/cache/apt/archives/$(basename "$deb") \
       | tar -xO ./usr/src/linux-source-6.1.tar.xz \
       | tar -xJ -C $S --strip-components=1 linux-source-6.1/fs/smb linux-source-6.1/fs/internal.h \
           linux-source-6.1/scripts/asn1_compiler.c \
           linux-source-6.1/include/linux/asn1.h linux-source-6.1/include/linux/asn1_ber_bytecode.h"
  [[ -f "$ROOT$S/fs/smb/server/transport_rdma.c" && -f "$ROOT$S/fs/smb/client/smbdirect.c" ]] ||
    iwk_die "fs/smb sources missing after extraction"
  for p in "$IWK_SIW_DIR"/ksmbd-*.patch; do
    cp "$p" "$ROOT$S/"
    run_logged "patch ${p##*/}" in_root patch -p1 -d "$S" -i "$S/${p##*/}"
  done
  # Both modules have ASN.1 grammars; Kbuild runs scripts/asn1_compiler of the
  # headers, which Debian's linux-kbuild-6.1 does not ship: build it from the
  # same source into the (disposable) root's kbuild scripts.
  kscripts=$(readlink -f "$ROOT/usr/src/linux-headers-$IWK_KABI/scripts")
  kscripts=${kscripts#"$ROOT"}
  run_logged "build asn1_compiler" in_root gcc -O2 -I"$S/include" -o "$kscripts/asn1_compiler" \
    "$S/scripts/asn1_compiler.c"
  run_logged "build cifs.ko (SMB Direct)" in_root make -C "/usr/src/linux-headers-$IWK_KABI" \
    M="$S/fs/smb/client" CONFIG_CIFS=m CONFIG_CIFS_SMB_DIRECT=y KCFLAGS=-DCONFIG_CIFS_SMB_DIRECT=1 \
    -j"$(nproc)" modules
  run_logged "build ksmbd.ko (SMB Direct)" in_root make -C "/usr/src/linux-headers-$IWK_KABI" \
    M="$S/fs/smb/server" CONFIG_SMB_SERVER=m CONFIG_SMB_SERVER_SMBDIRECT=y \
    KCFLAGS=-DCONFIG_SMB_SERVER_SMBDIRECT=1 -j"$(nproc)" modules
  mkdir -p "$ROOT/lib/modules/$IWK_KABI/updates"
  install -m 644 "$ROOT$S/fs/smb/client/cifs.ko" "$ROOT/lib/modules/$IWK_KABI/updates/cifs.ko"
  install -m 644 "$ROOT$S/fs/smb/server/ksmbd.ko" "$ROOT/lib/modules/$IWK_KABI/updates/ksmbd.ko"
  run_logged depmod in_root depmod "$IWK_KABI"
  for m in cifs ksmbd; do
    vm=$(in_root modinfo -F vermagic "/lib/modules/$IWK_KABI/updates/$m.ko")
    [[ $vm == "$IWK_KABI "* ]] || iwk_die "$m.ko vermagic '$vm' does not match $IWK_KABI"
    # the SMB Direct code is really in: its RDMA symbols are imported
    in_root modinfo -F depends "/lib/modules/$IWK_KABI/updates/$m.ko" | grep rdma_cm >/dev/null ||
      iwk_die "$m.ko does not depend on rdma_cm: built without SMB Direct?"
  done
  rm -rf "$ROOT$S"/fs/smb/*/.*.cmd "$ROOT$S"/fs/smb/*/*.o
  chroot_down
  echo "$smb_hash $(( $(date +%s) - t0 ))" >"$KD/.smb.done"
  iwk_log "cifs.ko and ksmbd.ko with SMB Direct built in $(( $(date +%s) - t0 )) s"
fi

# --- 5. guest files + image ----------------------------------------------------
t0=$(date +%s)
rm -f "$KD/.image.done"
for f in "$IWK_SIW_DIR"/guest/iwk-*; do
  install -m 755 "$f" "$ROOT/usr/local/sbin/${f##*/}"
done
echo iwk-siw >"$ROOT/etc/hostname"
printf '127.0.0.1 localhost\n%s iwk-siw\n' "$IWK_SIW_GUEST_ADDR" >"$ROOT/etc/hosts"
: >"$ROOT/etc/resolv.conf"
rm -f "$ROOT/usr/sbin/policy-rc.d" "$ROOT/etc/dpkg/dpkg.cfg.d/iwk-unsafe-io"
cp "$ROOT/boot/vmlinuz-$IWK_KABI" "$KD/vmlinuz"
cp "$ROOT/boot/initrd.img-$IWK_KABI" "$KD/initrd.img"
used_mb=$(du -sm --apparent-size "$ROOT" | cut -f1)
img_mb=$(( used_mb + used_mb / 5 + 1024 ))   # ~1 GiB free for captures and builds
rm -f "$KD/rootfs.ext4.tmp"
run_logged "mke2fs -d (${img_mb} MiB)" mke2fs -q -F -t ext4 -L iwkroot -E lazy_itable_init=1 \
  -d "$ROOT" "$KD/rootfs.ext4.tmp" "${img_mb}M"
mv "$KD/rootfs.ext4.tmp" "$KD/rootfs.ext4"
# shellcheck disable=SC1091
source "$KD/siw.env"
{
  cat "$KD/kernel.env"
  echo "IWK_SIW_VERMAGIC=\"$IWK_SIW_VERMAGIC\""
  echo "IWK_KEY=$KEY"
  echo "IWK_GUEST_FILES=$guest_hash"
  echo "IWK_IMAGE_MB=$img_mb"
  echo "IWK_BUILT=$(date -Is)"
  echo "IWK_T_DEBOOTSTRAP=$(cat "$KD/.debootstrap.done")"
  echo "IWK_T_KERNEL=$(cat "$KD/.kernel.done")"
  echo "IWK_T_SIW=$(cat "$KD/.siw.done")"
  if smb_done; then
    read -r h t <"$KD/.smb.done"
    echo "IWK_SMB_DIRECT=\"cifs.ko+ksmbd.ko $h ($(cd "$IWK_SIW_DIR" && echo ksmbd-*.patch))\""
    echo "IWK_T_SMB=${t:-}"
  else
    echo "IWK_SMB_DIRECT=\"none (build-guest.sh --smb builds it)\""
  fi
  echo "IWK_T_IMAGE=$(( $(date +%s) - t0 ))"
  # shellcheck disable=SC2016  # dpkg-query's own ${...}
  printf 'IWK_PACKAGES="%s"\n' "$(in_root dpkg-query -W -f='${Package}=${Version} ' \
      rdma-core ibverbs-providers perftest tcpdump iproute2 socat \
      nfs-kernel-server nvme-cli open-iscsi ksmbd-tools cifs-utils 2>/dev/null)"
} >"$KD/manifest.env"
if smb_done; then echo "$guest_hash $smb_hash"; else echo "$guest_hash nosmb"; fi >"$KD/.image.done"
ln -sfn "$KEY" "$IWK_SIW_CACHE/current"
# Other keys' guests are stale (another kernel or package set): ~3 GiB each.
if [[ ${IWK_SIW_KEEP_OLD:-0} != 1 ]]; then
  for d in "$IWK_SIW_CACHE"/*/; do
    d=${d%/}
    [[ ! -L $d && $d != "$KD" && -f $d/.debootstrap.done ]] || continue
    iwk_log "removing the stale guest $d in the background (IWK_SIW_KEEP_OLD=1 keeps it)"
    mv "$d" "$IWK_SIW_CACHE/.trash.$$.${d##*/}"
  done
fi
# (a running guest keeps its deleted base image open: unaffected)
if compgen -G "$IWK_SIW_CACHE/.trash.*" >/dev/null; then
  setsid rm -rf "$IWK_SIW_CACHE"/.trash.* </dev/null >/dev/null 2>&1 &
fi
iwk_log "image ${img_mb} MiB made in $(( $(date +%s) - t0 )) s; guest ready: $KD (total $(( $(date +%s) - t_start )) s)"
[[ $print_dir == 1 ]] && printf '%s\n' "$KD"
exit 0
