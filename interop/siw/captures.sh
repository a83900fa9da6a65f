#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# siw<->siw captures for pcaps/ (issue 7): small, repeatable exchanges
# between two soft-iWARP endpoints in the guest, captured on lo.
#
#   interop/siw/captures.sh [--build DIR] [--out DIR] [--only NAME,...]
#
# Boots its own guest (guest.sh; run dir and host ports of its own, see
# below), sets lo's MTU to 1500 (so messages are cut into DDP segments as on
# an Ethernet link; at lo's 65536 every message of these tests would be one
# FPDU), turns address-space randomisation off (stable Tagged Offsets
# from one run to the next) and keeps client ports in 58000-60999, where no
# Wireshark dissector is registered by port. Then, per capture, it starts
# tcpdump -i lo, runs
# the server in the background and the client against 10.0.2.15, stops the
# capture and copies it out:
#
#   siw-write-bw   ib_write_bw -d siw0 -R -F -n 8 -s 4096
#   siw-read-bw    ib_read_bw  -d siw0 -R -F -n 8 -s 4096
#   siw-send-bw    ib_send_bw  -d siw0 -R -F -n 8 -s 4096
#   siw-atomic-bw  ib_atomic_bw -d siw0 -R -F -n 8, only if siw0 reports an
#                  atomic capability (siw of Linux 6.1: ATOMIC_NONE, and
#                  ib_atomic_bw's first post fails; the script says so)
#   siw-rping      rping -s / rping -c -a 10.0.2.15 -C 3 -S 3000 -V
#
# An attempt is repeated (3 tries) when the client fails (perftest's clock
# check under TCG, see docs/siw.md), when tcpdump reports dropped packets,
# or when the capture lacks the MPA Request or Reply. tcpdump is block
# buffered with a large ring, as smoke-test.sh does for bulk traffic.
# Wireshark's TCP analysis must find no lost segment.
#
# Output (default: pcaps/ of this tree): NAME.pcap, and the block between
# the siw-captures markers of pcaps/README.md (guest versions, commands,
# packet and octet counts). With --build DIR (a configured and built tree:
# DIR/dissector/iwarpkit.so, DIR/bin/iwarp-decode), also
# the goldens: pcaps/expected/NAME.{fields,verbose}.txt through
# dissector/tests/run-golden.sh (IWK_UPDATE=1, these captures only) and
# pcaps/expected-decode/NAME.jsonl; iwarp-decode must then find every stream
# whole (no tcp_gap, incomplete, framing_lost, unsynced or not_iwarp record),
# and the plugin's warnings are listed per capture. Which capture goes in
# pcaps/valid.list is a judgement (pcaps/README.md): the script only warns
# when a capture listed there shows a warning. Review the diff, then commit.
#
# Environment (lib.sh, docs/siw.md): IWK_SIW_RUN (default
# /tmp/iwk-siw-captures), IWK_SIW_CTL_PORT/IWK_SIW_AGENT_PORT (default
# 27399/27400; another free pair is picked if those are taken), no RDMA port
# forwards. IWK_SIW_CAPTURE_MAX_KB (default 256): a larger capture is an
# error, not something to commit.
#
# Exit: 0 done; 77 the guest cannot be built or booted here; else a failure.
set -euo pipefail
: "${IWK_SIW_RUN:=/tmp/iwk-siw-captures}"
: "${IWK_SIW_CTL_PORT:=27399}"
: "${IWK_SIW_AGENT_PORT:=27400}"
# One blank, not empty: lib.sh's ${IWK_SIW_FWD:=...} replaces an empty value
# with the default forwards (18515 7401-7404 on the host).
IWK_SIW_FWD=" "
export IWK_SIW_RUN IWK_SIW_CTL_PORT IWK_SIW_AGENT_PORT IWK_SIW_FWD
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
G="$IWK_SIW_DIR/guest.sh"
ROOT=$(cd "$IWK_SIW_DIR/../.." && pwd)
ADDR=$IWK_SIW_GUEST_ADDR

build='' out=$ROOT/pcaps only=''
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$(cd "${2:?--build DIR}" && pwd); shift 2 ;;
    --out) out=${2:?--out DIR}; shift 2 ;;
    --only) only=",${2:?--only NAME,...},"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) iwk_die "unknown argument: $1 (--build DIR, --out DIR, --only NAME,...)" 2 ;;
  esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ -n $build ]]; then
  PLUGIN=$build/dissector/iwarpkit.so DECODE=$build/bin/iwarp-decode
  [[ -f $PLUGIN && -x $DECODE ]] || iwk_die "--build $build: no dissector/iwarpkit.so or bin/iwarp-decode (cmake --build $build first)"
  command -v tshark >/dev/null || iwk_die "--build needs tshark (scripts/deps.sh)"
fi
for t in capinfos tshark; do
  command -v "$t" >/dev/null || iwk_die "$t missing on the host (scripts/deps.sh installs tshark)"
done

# What siw does wrong, each checked against the RFCs (pcaps/README.md): the
# only warnings these captures may carry. With --build, any other plugin
# warning or error, malformed item, iwarp-decode note or verdict other than
# ok fails the run, to be looked at.
SIW_KNOWN_PLUGIN=('PAD octets not zero (RFC 5044 §4.1)')  # siw_qp_prepare_tx: inline payload's PAD not zeroed
SIW_KNOWN_NOTES=(FPDU_PAD_NONZERO)                         # the same, as iwarp-decode names it

# --- the guest -------------------------------------------------------------------
rc=0
bash "$IWK_SIW_DIR/build-guest.sh" || rc=$?
[[ $rc == "$IWK_EXIT_SKIP" ]] && exit "$IWK_EXIT_SKIP"
[[ $rc == 0 ]] || iwk_die "build-guest.sh failed (rc=$rc)"
if ! { (iwk_port_free "$IWK_SIW_CTL_PORT") && (iwk_port_free "$IWK_SIW_AGENT_PORT"); }; then
  base=$(iwk_pick_ports 2)
  export IWK_SIW_CTL_PORT=$base IWK_SIW_AGENT_PORT=$(( base + 1 ))
fi
tmp=''
iwk_on_exit() { [[ -z $tmp ]] || rm -rf "$tmp"; }
iwk_stop_guest_on_exit
export IWK_SIW_LIFETIME=${IWK_SIW_LIFETIME:-1800}
iwk_boot_or_skip
# Client ports from 58000-60999: Wireshark 4.0 gives none of them to a
# port-registered dissector (tshark -G decodes; 57000 is IRC's), which would
# take a connection before the MPA heuristics see it.
bash "$G" run -t 20 "ip link set lo mtu 1500 && echo 0 >/proc/sys/kernel/randomize_va_space &&
  echo '58000 60999' >/proc/sys/net/ipv4/ip_local_port_range"

gv() { bash "$G" run -t 20 "$1" | tr -d '\r' | head -n 1; }
K_ABI=$(gv 'uname -r')
K_PKG=$(sed -n 's/^IWK_KVERSION=//p' "$IWK_SIW_RUN/manifest.env")
# shellcheck disable=SC2016  # expanded in the guest
SIW_SUM=$(gv 'sha256sum "$(modinfo -F filename siw)" | cut -c1-12')
V_RDMA=$(gv "dpkg-query -W -f='\${Version}' rdma-core")
V_PERF=$(gv "dpkg-query -W -f='\${Version}' perftest")
V_CMU=$(gv "dpkg-query -W -f='\${Version}' rdmacm-utils")
V_TCPD=$(gv "dpkg-query -W -f='\${Version}' tcpdump")
ATOMIC=$(gv "ibv_devinfo -v -d siw0 | sed -n 's/^[[:space:]]*atomic_cap:[[:space:]]*//p'")
iwk_log "guest: kernel $K_ABI ($K_PKG), siw.ko sha256 $SIW_SUM, rdma-core $V_RDMA, perftest $V_PERF, atomic_cap $ATOMIC"

# --- one capture -------------------------------------------------------------------
# capture NAME PORT SERVER-CMD CLIENT-CMD: the client's arguments end with
# the server's address. Writes $out/NAME.pcap.
declare -a made=() rows=()
# whole_conns PCAP: every TCP connection is there from SYN to both FINs.
whole_conns() {
  local syn fin
  syn=$(tshark -n -r "$1" -Y 'tcp.flags.syn == 1 && tcp.flags.ack == 0' -T fields -e tcp.stream 2>/dev/null | sort -u)
  fin=$(tshark -n -r "$1" -Y 'tcp.flags.fin == 1' -T fields -e tcp.stream -e tcp.srcport 2>/dev/null |
        sort -u | cut -f1 | uniq -d)
  [[ -n $syn && $syn == "$fin" && $(tshark -n -r "$1" -T fields -e tcp.stream 2>/dev/null | sort -u) == "$syn" ]]
}
capture() {
  local name=$1 port=$2 srv=$3 cli=$4 try rc drops pcap=$IWK_SIW_RUN/captures/$1.pcap
  for try in 1 2 3; do
    IWK_SIW_PCAP_PACKET_BUFFERED=0 IWK_SIW_PCAP_BUFFER=196608 \
      bash "$G" pcap-start "$name" "tcp port $port" >/dev/null
    rc=0
    bash "$G" run -t 150 "
      # the previous server's listener (siw tears it down asynchronously)
      # must be gone, else its ss line is taken for the new one and the
      # client is refused (and perftest 4.5 then segfaults in librdmacm)
      for i in \$(seq 100); do ss -ltn | grep ':$port ' >/dev/null || break; sleep 0.1; done
      iwk-bg start srv $srv >/dev/null
      for i in \$(seq 100); do ss -ltn | grep ':$port ' >/dev/null && break; sleep 0.1; done
      rc=0; timeout 90 $cli >/tmp/client.txt 2>&1 || rc=\$?
      iwk-bg wait srv 30 || true
      iwk-bg stop srv >/tmp/server.txt
      echo '--- client:'; cat /tmp/client.txt; echo '--- server:'; cat /tmp/server.txt
      exit \$rc" >"$IWK_SIW_RUN/$name.txt" 2>&1 || rc=$?
    # Block-buffered tcpdump reads the kernel's capture ring a block at a
    # time, and a block is handed over when full or after libpcap's 1 s
    # timeout: stopped sooner, tcpdump loses what the open block holds
    # (seen: rping, "0 packets captured, 104 packets received by filter").
    sleep 2
    bash "$G" pcap-stop "$name" >"$IWK_SIW_RUN/$name.pcap-stop.txt" 2>&1
    drops=$(sed -n 's/^\([0-9]*\) packets dropped by kernel/\1/p' "$IWK_SIW_RUN/$name.pcap-stop.txt")
    if [[ $rc != 0 ]]; then
      iwk_warn "$name try $try: client failed (rc=$rc): $(grep -v '^ *$' "$IWK_SIW_RUN/$name.txt" | grep -v -- '---' | tail -n 2 | tr '\n' ' ')"
    elif [[ ${drops:-x} != 0 ]]; then
      iwk_warn "$name try $try: tcpdump dropped ${drops:-an unknown number of} packets"
    elif ! grep -a -q 'MPA ID Req Frame' "$pcap" || ! grep -a -q 'MPA ID Rep Frame' "$pcap"; then
      iwk_warn "$name try $try: no MPA Request/Reply in the capture"
    elif ! whole_conns "$pcap"; then
      iwk_warn "$name try $try: a connection lacks its SYN or one of its two FINs in the capture"
    else
      break
    fi
    # keep what the failed try left, for a look afterwards
    for f in "$IWK_SIW_RUN/$name.txt" "$IWK_SIW_RUN/$name.pcap-stop.txt" "$pcap"; do
      [[ -f $f ]] && cp "$f" "${f%.*}.try$try.${f##*.}"
    done
    [[ $try == 3 ]] && iwk_die "$name: no good capture in 3 tries (outputs: $IWK_SIW_RUN/$name.try*)"
    sleep 1
  done
  local kb=$(( $(stat -c %s "$pcap") / 1024 ))
  (( kb <= ${IWK_SIW_CAPTURE_MAX_KB:-256} )) ||
    iwk_die "$name: $kb KiB, more than IWK_SIW_CAPTURE_MAX_KB=${IWK_SIW_CAPTURE_MAX_KB:-256}: not for pcaps/"
  local lost
  lost=$(tshark -n -r "$pcap" -Y 'tcp.analysis.lost_segment || tcp.analysis.ack_lost_segment' 2>/dev/null | wc -l)
  [[ $lost == 0 ]] || iwk_die "$name: Wireshark's TCP analysis reports $lost lost segments in $pcap"
  cp "$pcap" "$out/$name.pcap"
  local pk; pk=$(capinfos -M -c "$pcap" | sed -n 's/^Number of packets: *//p')
  iwk_log "$name: $pk packets, $(stat -c %s "$pcap") octets, try $try -> $out/$name.pcap"
  made+=("$name")
  rows+=("| $name.pcap | \`${srv}\`; client: \`${cli}\` | $pk | $(stat -c %s "$pcap") |")
}
want() { [[ -z $only || $only == *",$1,"* ]]; }

pt="-d siw0 -R -F -n 8 -s 4096"
want siw-write-bw && capture siw-write-bw 18515 "ib_write_bw $pt" "ib_write_bw $pt $ADDR"
want siw-read-bw && capture siw-read-bw 18515 "ib_read_bw $pt" "ib_read_bw $pt $ADDR"
want siw-send-bw && capture siw-send-bw 18515 "ib_send_bw $pt" "ib_send_bw $pt $ADDR"
if want siw-atomic-bw; then
  if [[ $ATOMIC == ATOMIC_NONE* ]]; then
    iwk_log "siw-atomic-bw: not made: siw0 reports atomic_cap $ATOMIC (ib_atomic_bw's first post fails)"
  else
    capture siw-atomic-bw 18515 "ib_atomic_bw -d siw0 -R -F -n 8" "ib_atomic_bw -d siw0 -R -F -n 8 $ADDR"
  fi
fi
rp="-C 3 -S 3000 -V"
want siw-rping && capture siw-rping 7174 "rping -s -a $ADDR $rp" "rping -c -a $ADDR $rp"
[[ ${#made[@]} -gt 0 ]] || iwk_die "no capture selected (--only $only)"
bash "$G" stop >/dev/null 2>&1 || true

# --- pcaps/README.md: the generated block --------------------------------------------
if [[ $out == "$ROOT/pcaps" ]]; then
  {
    echo "<!-- siw-captures: begin (interop/siw/captures.sh writes this block) -->"
    echo "Guest: Debian 12 under qemu TCG; kernel $K_ABI (linux-image $K_PKG); siw.ko built"
    echo "out of tree from linux-source-6.1 $K_PKG (sha256 $SIW_SUM...); rdma-core $V_RDMA,"
    echo "perftest $V_PERF, rdmacm-utils $V_CMU, tcpdump $V_TCPD; siw0 atomic_cap $ATOMIC;"
    echo "lo MTU 1500, ASLR off, client ports 58000-60999; both ends siw0, client to $ADDR;"
    echo "\`tcpdump -i lo\`."
    echo
    echo "| file | server command; client command | packets | octets |"
    echo "|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo "<!-- siw-captures: end -->"
  } >"$IWK_SIW_RUN/readme-block.md"
  /usr/bin/python3 - "$out/README.md" "$IWK_SIW_RUN/readme-block.md" "${made[@]}" <<'EOF'
import re, sys
path, block_path, made = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(path, encoding="utf-8").read()
new = open(block_path, encoding="utf-8").read().rstrip("\n")
m = re.search(r"<!-- siw-captures: begin.*?<!-- siw-captures: end -->", text, re.S)
if not m:
    sys.exit("pcaps/README.md has no siw-captures block")
old_rows = {l.split("|")[1].strip(): l for l in m.group(0).splitlines() if l.startswith("| siw-")}
# Rows of captures not remade this time (--only) stay as they were.
lines = new.splitlines()
end = lines.pop()
done = {l.split("|")[1].strip() for l in lines if l.startswith("| siw-")}
lines += [row for name, row in old_rows.items() if name not in done]
lines.append(end)
open(path, "w", encoding="utf-8").write(text[:m.start()] + "\n".join(lines) + text[m.end():])
EOF
fi

# --- goldens and checks with a build -----------------------------------------------------
if [[ -n $build ]]; then
  tmp=$(mktemp -d /tmp/iwk-captures.XXXXXX)
  mkdir -p "$tmp/pcaps"
  for n in "${made[@]}"; do cp "$out/$n.pcap" "$tmp/pcaps/"; done
  cp "$ROOT/pcaps/valid.list" "$tmp/pcaps/" 2>/dev/null || true
  # alerts VERBOSE: the plugin's warnings and errors and the malformed items
  # of a verbose golden, one message a line
  alerts() {
    grep -o -E '\[Expert Info \((Warning|Error)/[A-Za-z]*\): [^]]*\]|\[Malformed Packet[^]]*\]' "$1" |
      sed -E 's/^\[(Expert Info \([A-Za-z]*\/[A-Za-z]*\): )?//; s/\]$//'
  }
  bad=()
  IWK_UPDATE=1 bash "$ROOT/dissector/tests/run-golden.sh" "$PLUGIN" "$tmp/pcaps" "$(command -v tshark)" |
    sed 's/^/  golden| /' || bad+=("run-golden.sh: a capture in valid.list shows warnings (above)")
  mkdir -p "$out/expected" "$out/expected-decode"
  cp "$tmp/pcaps/expected/"*.txt "$out/expected/"
  for n in "${made[@]}"; do
    x=$out/expected-decode/$n.jsonl v=$out/expected/$n.verbose.txt
    rc=0
    "$DECODE" --json "$out/$n.pcap" >"$x" || rc=$?
    [[ $rc -le 1 ]] || iwk_die "iwarp-decode failed on $n.pcap (rc=$rc)"
    grep -q -E '"type":"(tcp_gap|incomplete|framing_lost|unsynced|not_iwarp)"' "$x" &&
      bad+=("$n: iwarp-decode does not follow every stream whole ($x)")
    grep -q -v '"verdict":"ok"' "$x" && bad+=("$n: iwarp-decode verdicts other than ok ($x)")
    notes=$( (grep -o '"id":"[A-Z_0-9]*"' "$x" || true) | cut -d'"' -f4 | sort | uniq -c | tr -s ' ' | tr '\n' ';')
    items=$( (alerts "$v" || true) | sort | uniq -c | tr -s ' ' | tr '\n' ';')
    iwk_log "$n: iwarp-decode: $(grep -c '"type":"fpdu"' "$x") FPDUs, $(grep -c -v '"verdict":"ok"' "$x") verdicts not ok; notes:${notes:- none}"
    iwk_log "$n: plugin warnings/errors:${items:- none}"
    # every segment with payload is MPA's (a retransmission is TCP's own; a
    # "segment of a reassembled PDU" is decoded in the frame that completes it)
    undecoded=$(awk -F'\t' 'NR > 1 && ($2 !~ /^(TCP|MPA|iWARP)$/ ||
                  ($2 == "TCP" && $3 ~ / Len=[1-9]/ && $3 !~ /Retransmission|segment of a reassembled PDU/)) { print $1 }' \
                  "$out/expected/$n.fields.txt" | tr '\n' ' ')
    [[ -z $undecoded ]] || bad+=("$n: frames with payload the plugin did not decode: $undecoded")
    while IFS= read -r id; do
      [[ -z $id || " ${SIW_KNOWN_NOTES[*]} " == *" $id "* ]] || bad+=("$n: iwarp-decode note $id")
    done < <(grep -o '"id":"[A-Z_0-9]*"' "$x" | cut -d'"' -f4 | sort -u)
    while IFS= read -r item; do
      known=0
      for k in "${SIW_KNOWN_PLUGIN[@]}"; do [[ $item == "$k" ]] && known=1; done
      [[ -z $item || $known == 1 ]] || bad+=("$n: plugin: $item")
    done < <(alerts "$v" | sort -u)
  done
  if [[ ${#bad[@]} -gt 0 ]]; then
    printf '  unexplained| %s\n' "${bad[@]}" >&2
    iwk_die "${#bad[@]} findings not among siw's known deviations: check each against the RFCs (a plugin or library bug, or a new siw deviation to add to SIW_KNOWN_* with its reason in pcaps/README.md)"
  fi
fi
iwk_log "done: ${made[*]} in $out"
