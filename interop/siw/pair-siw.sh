#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Our reference stack against siw, both roles (ctest -L siw: siw_pair).
#
#   interop/siw/pair-siw.sh --target PATH [--agent-bin PATH] [--out DIR]
#                           [--configs LIST] [--sizes LIST] [--no-capture]
#
# iwarp-target (our stack) runs on the host, iwarp-agent on siw0 in the
# guest; pair.py drives both through the agent protocol: our initiator with
# siw responding and siw initiating towards us, MPA rev 1 and 2 (siw
# initiating rev 1 with build-siw-knobs.sh's module), CRC on and off; RDMA
# Write, Read, Send and Send with
# Invalidate both ways, every octet checked. Then a short run of two
# configurations is captured on the guest's eth0 (where the host's traffic
# arrives) into OUT/captures/ours-siw-*.pcap for pcaps/.
#
# Exit: 0 all passed; 1 a failure; 77 the guest cannot run here.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
G="$IWK_SIW_DIR/guest.sh"
SRC=$(cd "$IWK_SIW_DIR/../.." && pwd)

target= agent_bin= out= configs=all sizes=1,4103,300000 capture=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target) target=${2:-}; shift 2 ;;
    --agent-bin) agent_bin=${2:-}; shift 2 ;;
    --out) out=${2:-}; shift 2 ;;
    --configs) configs=${2:-}; shift 2 ;;
    --sizes) sizes=${2:-}; shift 2 ;;
    --no-capture) capture=0; shift ;;
    *) iwk_die "unknown argument: $1 (see the header of $0)" 2 ;;
  esac
done
[[ -x $target ]] || iwk_die "--target PATH to iwarp-target is required" 2
RUN=$IWK_SIW_RUN
out=${out:-$RUN/pair}
mkdir -p "$RUN" "$out/captures"

rc=0
bash "$IWK_SIW_DIR/build-guest.sh" || rc=$?
[[ $rc == "$IWK_EXIT_SKIP" ]] && { echo "siw pair: SKIPPED: no guest here"; exit "$IWK_EXIT_SKIP"; }
[[ $rc == 0 ]] || iwk_die "build-guest.sh failed (rc=$rc)"
[[ -n $agent_bin ]] || agent_bin=$(bash "$IWK_SIW_DIR/build-agent.sh" "$SRC" | tail -n 1)
[[ -x $agent_bin ]] || iwk_die "no iwarp-agent binary at '$agent_bin'"

base=$(iwk_pick_ports 5)
export IWK_SIW_CTL_PORT=$base IWK_SIW_AGENT_PORT=$(( base + 1 ))
SIW_LISTEN_HOST=$(( base + 2 )) OURS_LISTEN=$(( base + 3 )) OURS_AGENT=$(( base + 4 ))
export IWK_SIW_FWD="$SIW_LISTEN_HOST:7402" IWK_SIW_GUESTFWD="$OURS_LISTEN"
export IWK_SIW_LIFETIME=${IWK_SIW_LIFETIME:-1800}

tpid=
iwk_on_exit() { [[ -z $tpid ]] || { kill "$tpid" 2>/dev/null && wait "$tpid" 2>/dev/null; }; }
iwk_stop_guest_on_exit "siw pair: results in $out"

"$target" --agent "127.0.0.1:$OURS_AGENT" >"$out/iwarp-target.log" 2>&1 &
tpid=$!
iwk_boot_or_skip
bash "$G" copy-in "$agent_bin" /usr/local/bin/iwarp-agent
bash "$G" run -t 30 "$IWK_AGENT_START"

pair() {
  /usr/bin/env python3 "$IWK_SIW_DIR/pair.py" --ours "127.0.0.1:$OURS_AGENT" \
    --siw "127.0.0.1:$IWK_SIW_AGENT_PORT" --siw-listen "7402:$SIW_LISTEN_HOST" \
    --ours-listen "$OURS_LISTEN" --expected "$IWK_SIW_DIR/pair-expected.txt" "$@"
}
t0=$(date +%s)
rc=0
stock=$configs
[[ $configs == all ]] || stock=$(tr ',' '\n' <<<"$configs" | grep -v siw-v1 | paste -sd,)
if [[ -n $stock ]]; then
  set +e
  pair --configs "$stock" --sizes "$sizes" --json "$out/pair.json" 2>&1 | tee "$out/pair.txt"
  rc=${PIPESTATUS[0]}
  set -e
fi
iwk_log "matrix: $(( $(date +%s) - t0 )) s"

if [[ $capture == 1 && $rc == 0 ]]; then
  # Small, so they can live in pcaps/: both roles, CRC on and off.
  for c in ours-v2-crcon siw-v2-crcoff; do
    bash "$G" pcap-start "ours-siw-$c" -i eth0 "tcp port 7402 or tcp port $OURS_LISTEN"
    crc=0; pair --configs "$c" --sizes 1,100,3000 >"$out/capture-$c.txt" 2>&1 || crc=$?
    bash "$G" pcap-stop "ours-siw-$c" >/dev/null
    cp "$RUN/captures/ours-siw-$c.pcap" "$out/captures/"
    [[ $crc == 0 ]] || { cat "$out/capture-$c.txt"; iwk_warn "captured run $c failed"; rc=1; }
  done
fi

# siw initiating with MPA rev 1: stock siw cannot (mpa_version is compiled
# in); the same module with that variable as a parameter can.
if [[ $configs == all || $configs == *siw-v1* ]]; then
  knobs=$(bash "$IWK_SIW_DIR/build-siw-knobs.sh" | tail -n 1)
  bash "$G" copy-in "$knobs" /root/siw-knobs.ko
  bash "$G" run -t 60 'iwk-bg stop agent >/dev/null 2>&1; rdma link delete siw0 && rmmod siw &&
    insmod /root/siw-knobs.ko mpa_version=1 && rdma link add siw0 type siw netdev eth0 &&
    echo "siw: $(cat /sys/module/siw/parameters/mpa_version) = mpa_version" || exit 1
    '"$IWK_AGENT_START"
  v1=siw-v1-crcon,siw-v1-crcoff
  [[ $configs == all ]] || v1=$(tr ',' '\n' <<<"$configs" | grep siw-v1 | paste -sd,)
  set +e
  pair --siw-rev1 --configs "$v1" --sizes "$sizes" --json "$out/pair-siw-v1.json" 2>&1 |
    tee "$out/pair-siw-v1.txt"
  rc1=${PIPESTATUS[0]}
  set -e
  [[ $rc1 == 0 ]] || rc=$rc1
fi

bash "$G" stop >/dev/null 2>&1 || true
[[ ! -f $RUN/CRASHED ]] || { iwk_warn "the guest crashed: $RUN/CRASHED"; rc=1; }
exit "$rc"
