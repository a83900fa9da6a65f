#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds a second siw.ko from the same source with one change: siw's global
# `mpa_version` (the MPA revision it initiates with, 2 in the stock module)
# becomes a module parameter. Nothing else differs, so `mpa_version=1`
# makes siw initiate with MPA rev 1 -- the one interop column stock siw
# cannot be put in (docs/siw.md). Prints the module's path (in the cache,
# outside the guest image).
#
#   interop/siw/build-siw-knobs.sh
#
# In the guest: rdma link delete siw0; rmmod siw;
#               insmod siw-knobs.ko mpa_version=1; rdma link add siw0 type siw netdev eth0
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) == 0 ]] || iwk_skip "building in the guest root needs root (chroot)"
KD=$(readlink -f "$(iwk_guest_dir)")
ROOT=$KD/root
[[ -f $ROOT/usr/src/iwk-siw/siw_main.c && -f $KD/kernel.env ]] ||
  iwk_die "no siw source in the guest root $ROOT: run build-guest.sh first"
# shellcheck disable=SC1091
source "$KD/kernel.env"
OUT=$KD/siw-knobs
if [[ -f $OUT/siw.ko && $OUT/siw.ko -nt $ROOT/usr/src/iwk-siw/siw_main.c && $OUT/siw.ko -nt ${BASH_SOURCE[0]} ]]; then
  printf '%s\n' "$OUT/siw.ko"; exit 0
fi
exec 9>"$IWK_SIW_CACHE/.lock"
flock -w 600 9 || iwk_die "cache locked by another build"

rm -rf "$OUT" "$ROOT/var/tmp/iwk-siw-knobs"
mkdir -p "$OUT"
cp -a "$ROOT/usr/src/iwk-siw" "$ROOT/var/tmp/iwk-siw-knobs"
rm -f "$ROOT"/var/tmp/iwk-siw-knobs/{*.o,*.ko,*.mod,*.mod.c,.*.cmd,Module.symvers,modules.order}
grep -q '^u_char mpa_version = MPA_REVISION_2;' "$ROOT/var/tmp/iwk-siw-knobs/siw_main.c" ||
  iwk_die "siw_main.c has no 'u_char mpa_version = MPA_REVISION_2;' to expose (another siw version?)"
cat >>"$ROOT/var/tmp/iwk-siw-knobs/siw_main.c" <<'EOF'

/* iwarpkit interop (interop/siw/build-siw-knobs.sh): the MPA revision siw
 * initiates with, settable at load time; the stock module fixes it at 2. */
module_param(mpa_version, byte, 0444);
MODULE_PARM_DESC(mpa_version, "MPA revision to initiate with (1 or 2)");
EOF
MOUNTS=()
cleanup() {
  local i
  for ((i=${#MOUNTS[@]}-1; i>=0; i--)); do umount "${MOUNTS[$i]}" 2>/dev/null || umount -l "${MOUNTS[$i]}" || true; done
}
trap cleanup EXIT
mount -t proc proc "$ROOT/proc"; MOUNTS+=("$ROOT/proc")
mount --bind /dev "$ROOT/dev"; MOUNTS+=("$ROOT/dev")
t0=$(date +%s)
chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C \
  make -C "/usr/src/linux-headers-$IWK_KABI" M=/var/tmp/iwk-siw-knobs CONFIG_RDMA_SIW=m \
  -j"$(nproc)" modules >"$OUT/build.log" 2>&1 ||
  { tail -n 30 "$OUT/build.log" >&2; iwk_die "siw-knobs build failed ($OUT/build.log)"; }
cp "$ROOT/var/tmp/iwk-siw-knobs/siw.ko" "$OUT/siw.ko"
rm -rf "$ROOT/var/tmp/iwk-siw-knobs"
iwk_log "siw.ko with mpa_version as a parameter built in $(( $(date +%s) - t0 )) s"
printf '%s\n' "$OUT/siw.ko"
