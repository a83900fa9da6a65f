#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds conformance/agent's iwarp-agent for the siw guest, inside a chroot of
# the cached guest root (its gcc, libibverbs-dev, librdmacm-dev: the guest's
# own libraries), from this source tree. Prints the binary's path.
#
#   interop/siw/build-agent.sh [SOURCE_DIR]     (default: this checkout)
#
# Then: guest.sh copy-in PATH /usr/local/bin/iwarp-agent
#       guest.sh run 'iwk-bg start agent iwarp-agent --agent 0.0.0.0:7400 --dev siw0'
# The source is bind-mounted read-only; the build tree and the binary stay in
# the cache ($IWK_SIW_CACHE/<key>/agent-build), outside the guest image.
# A host on Debian 12 can instead copy its own build/bin/iwarp-agent:
# same glibc and rdma-core ABI (docs/siw.md).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SRC=$(cd "${1:-$IWK_SIW_DIR/../..}" && pwd)
[[ -f $SRC/conformance/agent/iwarp-agent.c ]] || iwk_die "$SRC is not an iwarpkit source tree"
[[ $(id -u) == 0 ]] || iwk_skip "building in the guest root needs root (chroot, bind mounts)"
KD=$(readlink -f "$(iwk_guest_dir)")
ROOT=$KD/root
[[ -d $ROOT/usr/include/infiniband ]] || iwk_die "no guest root with libibverbs-dev at $ROOT: run build-guest.sh first"

OUT=$KD/agent-build
mkdir -p "$OUT" "$ROOT/usr/src/iwarpkit" "$ROOT/var/tmp/iwarpkit-build"
exec 9>"$IWK_SIW_CACHE/.lock"
flock -w 600 9 || iwk_die "cache locked by another build"

MOUNTS=()
cleanup() {
  local i
  for ((i=${#MOUNTS[@]}-1; i>=0; i--)); do umount "${MOUNTS[$i]}" 2>/dev/null || umount -l "${MOUNTS[$i]}" || true; done
}
trap cleanup EXIT
mount --bind "$SRC" "$ROOT/usr/src/iwarpkit"; MOUNTS+=("$ROOT/usr/src/iwarpkit")
mount -o remount,bind,ro "$ROOT/usr/src/iwarpkit"
mount --bind "$OUT" "$ROOT/var/tmp/iwarpkit-build"; MOUNTS+=("$ROOT/var/tmp/iwarpkit-build")
mount -t proc proc "$ROOT/proc"; MOUNTS+=("$ROOT/proc")

in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C "$@"; }
t0=$(date +%s)
iwk_log "building iwarp-agent from $SRC in the guest root ($KD)"
in_root cmake -S /usr/src/iwarpkit -B /var/tmp/iwarpkit-build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DIW_BUILD_BENCH=OFF >"$OUT/configure.log" 2>&1 ||
  { tail -n 30 "$OUT/configure.log" >&2; iwk_die "cmake configure failed in the guest root ($OUT/configure.log)"; }
in_root cmake --build /var/tmp/iwarpkit-build -j"$(nproc)" --target iwarp-agent >"$OUT/build.log" 2>&1 ||
  { tail -n 30 "$OUT/build.log" >&2; iwk_die "iwarp-agent build failed in the guest root ($OUT/build.log)"; }
BIN=$OUT/bin/iwarp-agent
[[ -x $BIN ]] || iwk_die "no binary at $BIN"
iwk_log "iwarp-agent built in $(( $(date +%s) - t0 )) s"
printf '%s\n' "$BIN"
