#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Storage over Linux soft-iWARP, captured (issue 13, deliverable 1): the
# kernel's own NFS/RDMA, NVMe-oF/RDMA, iSER and SMB Direct stacks, target and
# client in the one guest over siw0, the client connecting to the guest's own
# address, `tcpdump -i lo` in the guest. Then each capture is checked
# (storage-check.py) and what stock Wireshark decodes of it is recorded.
#
#   interop/siw/storage.sh --build DIR [--out DIR] [--only NAME,...]
#
# Captures, in this order (the NFS ones first: they are what the dissector
# work needs first), each from its server's start to its client's end:
#
#   nfsv3-rdma     nfsd's RDMA listener on 20049; mount -o proto=rdma,vers=3;
#                  mkdir, 64 KiB direct write (Read chunk), short write, ls,
#                  stat, 64 KiB direct read (Write chunk), cat, mv, rm, rmdir, umount
#   nfsv41-rdma    the same with vers=4.1 (sessions, OPEN/CLOSE)
#   nvmeof-rdma    nvmet-rdma on 4420 (16 MiB file-backed namespace); nvme connect
#                  -t rdma -i 1; id-ctrl, id-ns; 64 KiB and 4 KiB direct writes
#                  and reads (keyed SGL and in-capsule data); nvme disconnect
#   iser           LIO, fileio LUN, iSER portal on 3260; iscsiadm -I iser login;
#                  64 KiB and 4 KiB direct writes and reads; logout
#   smb-direct     ksmbd (SMB Direct on 5445, rebuilt with it by build-guest.sh
#                  and patched, see ksmbd-opinfo-put-null.patch); mount -t cifs
#                  -o rdma,vers=3.1.1,cache=none; the NFS workload; umount
#
# The guest steps are storage-guest.sh (copied in as iwk-storage). A try is
# repeated (3 tries) when the client fails, tcpdump drops packets or a check
# fails; every failed try's output is kept in the run directory. A guest
# kernel crash is a result: it is recorded (OUT/crashes.txt), the guest is
# booted afresh for the next capture, and the run fails unless
# storage-expected.txt lists the crash. Kernel WARNINGs are reported.
#
# Output in OUT (default: pcaps/storage of this tree): NAME.pcap and
# NAME.summary.json (storage-check.py: counts, operations, what stock tshark
# decodes); NAME.check.txt (its findings), timings.txt and crashes.txt go
# beside them too, or into the run directory when OUT is pcaps/storage, whose
# README.md then gets its generated block.
#
# Environment (lib.sh, docs/siw.md): IWK_SIW_RUN (default /tmp/iwk-siw-storage),
# IWK_SIW_CTL_PORT/IWK_SIW_AGENT_PORT (another free pair is picked if taken),
# IWK_STORAGE_MAX_KB (default 512): a larger capture is an error.
#
# Exit: 0 every capture made and checked; 77 no guest here; else a failure.
set -euo pipefail
: "${IWK_SIW_RUN:=/tmp/iwk-siw-storage}"
: "${IWK_SIW_CTL_PORT:=27399}"
: "${IWK_SIW_AGENT_PORT:=27400}"
# one blank: no RDMA port forwards (lib.sh's := would put the defaults back for "")
IWK_SIW_FWD=" "
export IWK_SIW_RUN IWK_SIW_CTL_PORT IWK_SIW_AGENT_PORT IWK_SIW_FWD
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
G="$IWK_SIW_DIR/guest.sh"
ROOT=$(cd "$IWK_SIW_DIR/../.." && pwd)
CHECK=$IWK_SIW_DIR/storage-check.py

build='' out=$ROOT/pcaps/storage only=''
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$(cd "${2:?--build DIR}" && pwd); shift 2 ;;
    --out) out=${2:?--out DIR}; shift 2 ;;
    --only) only=",${2:?--only NAME,...},"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) iwk_die "unknown argument: $1 (--build DIR, --out DIR, --only NAME,...)" 2 ;;
  esac
done
[[ -n $build ]] || iwk_die "--build DIR is needed (its bin/iwarp-decode checks the captures)" 2
DECODE=$build/bin/iwarp-decode
[[ -x $DECODE ]] || iwk_die "--build $build: no bin/iwarp-decode (cmake --build $build --target iwarp-decode)"
for t in tshark capinfos /usr/bin/python3; do
  command -v "$t" >/dev/null || iwk_die "$t missing on the host (scripts/deps.sh installs it)"
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
NAMES=(nfsv3-rdma nfsv41-rdma nvmeof-rdma iser smb-direct)
if [[ -n $only ]]; then
  for n in ${only//,/ }; do
    [[ " ${NAMES[*]} " == *" $n "* ]] || iwk_die "--only: no capture '$n' (${NAMES[*]})" 2
  done
fi
want() { [[ -z $only || $only == *",$1,"* ]]; }

# NAME -> kind (storage-check.py), port, server step, client step
declare -A KIND=([nfsv3-rdma]=nfs3 [nfsv41-rdma]=nfs41 [nvmeof-rdma]=nvmeof [iser]=iser [smb-direct]=smbdirect)
declare -A PORT=([nfsv3-rdma]=20049 [nfsv41-rdma]=20049 [nvmeof-rdma]=4420 [iser]=3260 [smb-direct]=5445)
declare -A SERVER=([nfsv3-rdma]=nfs-server [nfsv41-rdma]=nfs-server [nvmeof-rdma]=nvmet [iser]=isert [smb-direct]=ksmbd)
declare -A CLIENT=([nfsv3-rdma]="nfs 3" [nfsv41-rdma]="nfs 4.1" [nvmeof-rdma]=nvme [iser]=iser [smb-direct]=smb)

# --- the guest -------------------------------------------------------------------
t_start=$(date +%s)
rc=0
bash "$IWK_SIW_DIR/build-guest.sh" --smb || rc=$?
[[ $rc == "$IWK_EXIT_SKIP" ]] && exit "$IWK_EXIT_SKIP"
[[ $rc == 0 ]] || iwk_die "build-guest.sh failed (rc=$rc)"
if ! { (iwk_port_free "$IWK_SIW_CTL_PORT") && (iwk_port_free "$IWK_SIW_AGENT_PORT"); }; then
  base=$(iwk_pick_ports 2)
  export IWK_SIW_CTL_PORT=$base IWK_SIW_AGENT_PORT=$(( base + 1 ))
fi
iwk_stop_guest_on_exit
export IWK_SIW_LIFETIME=${IWK_SIW_LIFETIME:-1800}
RUN=$IWK_SIW_RUN
mkdir -p "$RUN"
# the logs: beside the captures, except in the source tree (only the
# captures, their summaries and README.md belong in pcaps/storage)
LOGS=$out
[[ $out != "$ROOT/pcaps/storage" ]] || LOGS=$RUN
: >"$LOGS/crashes.txt"
rm -f "$LOGS/timings.txt"
boots=0 need_boot=0
boot() {
  iwk_boot_or_skip
  boots=$(( boots + 1 ))
  bash "$G" copy-in "$IWK_SIW_DIR/storage-guest.sh" /usr/local/sbin/iwk-storage
  bash "$G" run -t 60 'iwk-storage prep'
  # the console lines seen so far (WARNINGs are reported per capture)
  serial_seen=$(wc -l <"$RUN/serial.log")
}
t0=$(date +%s)
boot
echo "boot+prep $(( $(date +%s) - t0 )) s" >>"$LOGS/timings.txt"

gv() { bash "$G" run -t 20 "$1" | tr -d '\r' | head -n 1; }
K_ABI=$(gv 'uname -r')
K_PKG=$(sed -n 's/^IWK_KVERSION=//p' "$RUN/manifest.env")
# shellcheck disable=SC2016  # expanded in the guest
VERS=$(gv 'for p in nfs-kernel-server nvme-cli open-iscsi ksmbd-tools cifs-utils rdma-core tcpdump; do
  printf "%s %s, " $p "$(dpkg-query -W -f="\${Version}" $p)"; done')
iwk_log "guest: kernel $K_ABI ($K_PKG); ${VERS%, }"
GUEST="Made by \`interop/siw/storage.sh\` on $(date -u +%Y-%m-%d) in the Debian 12 guest of docs/siw.md
(qemu TCG): kernel $K_ABI (linux-image $K_PKG); siw.ko, cifs.ko and ksmbd.ko built from
linux-source-6.1 $K_PKG; ${VERS%, }. lo MTU 1500, client ports 58000-60999,
\`tcpdump -i lo -s 0\`; target and client both on siw0, the client connecting to 10.0.2.15."

# known_crash NAME EXCERPT-FILE: the reason, if storage-expected.txt lists it
known_crash() {
  local name re reason
  while IFS= read -r line; do
    [[ -z $line || $line == \#* ]] && continue
    name=${line%%:*}; re=${line#*: }; reason=${re#* :: }; re=${re%% :: *}
    [[ $name == "$1" || $name == any ]] || continue
    if grep -qE -- "$re" "$2"; then echo "$reason"; return 0; fi
  done <"$IWK_SIW_DIR/storage-expected.txt"
  return 1
}

# --- one capture -------------------------------------------------------------------
declare -a made=() failed=() crashed=()
capture() {
  local name=$1 kind=${KIND[$1]} port=${PORT[$1]} try rc drops pcap="$RUN/captures/$1.pcap"
  local t0 ok=0 why
  t0=$(date +%s)
  if [[ $need_boot == 1 ]]; then boot; need_boot=0; fi
  for try in 1 2 3; do
    rc=0
    rm -f "$RUN/$name".{server,client,check}.txt
    bash "$G" run -t 180 "iwk-storage ${SERVER[$name]}" >"$RUN/$name.server.txt" 2>&1 || rc=$?
    if [[ $rc == 0 ]]; then
      # block-buffered with a large ring, as captures.sh: no drops under TCG
      IWK_SIW_PCAP_PACKET_BUFFERED=0 IWK_SIW_PCAP_BUFFER=196608 \
        bash "$G" pcap-start "$name" "tcp port $port" >/dev/null
      bash "$G" run -t 240 "iwk-storage ${CLIENT[$name]}" >"$RUN/$name.client.txt" 2>&1 || rc=$?
    fi
    if [[ $rc == "$IWK_EXIT_CRASH" ]]; then
      {
        echo "== $name (try $try): guest kernel crash"
        cat "$RUN/CRASHED"
      } >>"$LOGS/crashes.txt"
      cp "$RUN/CRASHED" "$LOGS/$name.crash.txt"
      if why=$(known_crash "$name" "$RUN/CRASHED"); then
        iwk_warn "$name: guest kernel crashed, a known crash (storage-expected.txt): $why"
        crashed+=("$name (known: $why)")
      else
        iwk_warn "$name: guest kernel crashed, not a known crash: $LOGS/$name.crash.txt"
        crashed+=("$name"); failed+=("$name: kernel crash (not in storage-expected.txt)")
      fi
      # a fresh guest for what comes next, if anything does (the crash is
      # the result of this capture)
      bash "$G" stop >/dev/null 2>&1 || true
      need_boot=1
      echo "$name: crashed after $(( $(date +%s) - t0 )) s" >>"$LOGS/timings.txt"
      return 0
    fi
    # A block of block-buffered tcpdump is handed over when full or after
    # libpcap's 1 s timeout: stopped sooner, the open block is lost.
    if [[ $rc == 0 ]]; then
      sleep 2
      bash "$G" pcap-stop "$name" >"$RUN/$name.pcap-stop.txt" 2>&1
      drops=$(sed -n 's/^\([0-9]*\) packets dropped by kernel/\1/p' "$RUN/$name.pcap-stop.txt")
    fi
    if [[ $rc != 0 ]]; then
      iwk_warn "$name try $try: $( [[ -s $RUN/$name.client.txt ]] && echo client || echo server) failed (rc=$rc): $(tail -n 3 "$RUN/$name.client.txt" "$RUN/$name.server.txt" 2>/dev/null | grep -v '^==>' | grep . | tail -n 3 | tr '\n' ' ')"
      bash "$G" pcap-stop "$name" >/dev/null 2>&1 || true
      bash "$G" run -t 60 'iwk-storage cleanup' >/dev/null 2>&1 || true
    elif [[ ${drops:-x} != 0 ]]; then
      iwk_warn "$name try $try: tcpdump dropped ${drops:-an unknown number of} packets"
    elif ! /usr/bin/python3 "$CHECK" check --kind "$kind" --pcap "$pcap" --decode "$DECODE" \
           --summary "$RUN/$name.summary.json" --guest "$GUEST" >"$RUN/$name.check.txt" 2>&1; then
      iwk_warn "$name try $try: checks failed:"
      grep -v ': ok ' "$RUN/$name.check.txt" >&2 || true
    else
      ok=1; break
    fi
    for f in "$RUN/$name".{client,server,check}.txt "$pcap"; do
      [[ -f $f ]] && cp "$f" "${f%.*}.try$try.${f##*.}"
    done
    sleep 1
  done
  local secs=$(( $(date +%s) - t0 ))
  echo "$name: $secs s, try $try" >>"$LOGS/timings.txt"
  if [[ $ok != 1 ]]; then
    failed+=("$name: no good capture in 3 tries (outputs: $RUN/$name.try*)")
    return 0
  fi
  local kb=$(( $(stat -c %s "$pcap") / 1024 ))
  if (( kb > ${IWK_STORAGE_MAX_KB:-512} )); then
    failed+=("$name: $kb KiB, more than IWK_STORAGE_MAX_KB=${IWK_STORAGE_MAX_KB:-512}")
    return 0
  fi
  cp "$pcap" "$out/$name.pcap"
  [[ $LOGS == "$RUN" ]] || cp "$RUN/$name.check.txt" "$LOGS/$name.check.txt"
  cp "$RUN/$name.summary.json" "$out/$name.summary.json"
  local warn
  warn=$(tail -n +"$(( serial_seen + 1 ))" "$RUN/serial.log" | grep -a -E "$IWK_WARN_RE" || true)
  serial_seen=$(wc -l <"$RUN/serial.log")
  [[ -z $warn ]] || iwk_warn "$name: kernel WARNING(s) on the console: $warn"
  iwk_log "$name: $(capinfos -M -c "$pcap" | sed -n 's/^Number of packets: *//p') packets, $(stat -c %s "$pcap") octets, try $try, $secs s -> $out/$name.pcap"
  made+=("$name")
}

for n in "${NAMES[@]}"; do
  want "$n" && capture "$n"
done
bash "$G" stop >/dev/null 2>&1 || true
echo "total $(( $(date +%s) - t_start )) s (guest boots: $boots)" >>"$LOGS/timings.txt"

# --- pcaps/storage/README.md: the generated block ----------------------------------
if [[ $out == "$ROOT/pcaps/storage" && ${#made[@]} -gt 0 ]]; then
  sums=()
  for n in "${NAMES[@]}"; do [[ -f $out/$n.summary.json ]] && sums+=("$out/$n.summary.json"); done
  /usr/bin/python3 "$CHECK" readme --update "$out/README.md" "${sums[@]}"
fi

echo "--- timings"; cat "$LOGS/timings.txt"
[[ ${#crashed[@]} == 0 ]] || printf 'crashed: %s\n' "${crashed[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  printf 'FAILED: %s\n' "${failed[@]}" >&2
  iwk_die "${#failed[@]} of the selected captures failed (run dir $RUN)"
fi
iwk_log "done: ${made[*]} in $out"
