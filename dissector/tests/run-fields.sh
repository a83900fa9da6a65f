#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Field and layer behaviour a filter user relies on (issue 11):
#
#   run-fields.sh PLUGIN.so PCAPS_DIR TSHARK
#
#  - frame.protocols lists iwk_mpa:iwk_ddp:iwk_rdmap on an FPDU frame;
#  - iwk_mpa.rr matches exactly the startup frames (iwk_mpa.type);
#  - iwk_mpa.stream is tcp.stream on every frame that has it;
#  - a Terminate's copied header has its own names: iwk_rdmap.opcode == 1
#    misses the Terminate that quotes a Read Request,
#    iwk_rdmap.term.rdmap.opcode == 1 finds it;
#  - expert items name DDP's and RDMAP's findings under those protocols;
#  - a Terminate due (iwk_rdmap.must_terminate.*) and a Terminate received
#    (iwk_rdmap.term.*) have distinct prefixes;
#  - Info starts with the ports;
#  - a multi-segment tagged message is linked by default (iwk_rdmap.msg.*:
#    first and last frame, length, each segment's offset), and reassembled
#    into one message only with iwk_rdmap.reassemble_tagged.
set -u
# shellcheck source=tshark-lib.sh
. "$(dirname "$0")/tshark-lib.sh"
iwk_tshark_setup "$1" "$2" "${3:-}"
fail=0
check() { # description expected actual
  if [ "$2" = "$3" ]; then echo "ok: $1"; else
    echo "FAIL: $1: expected '$2', got '$3'"; fail=$((fail + 1)); fi
}
p=pcaps/bad-stateful.pcap
check "frame.protocols of a Read Request frame" "eth:ethertype:ip:tcp:iwk_mpa:iwk_ddp:iwk_rdmap" \
  "$(ts -2 -n -r $p -Y 'frame.number == 7' -T fields -e frame.protocols)"
check "frame.protocols of a Send frame (payload as data)" \
  "eth:ethertype:ip:tcp:iwk_mpa:iwk_ddp:iwk_rdmap:data" \
  "$(ts -2 -n -r $p -Y 'frame.number == 6' -T fields -e frame.protocols)"
check "iwk_mpa.rr = startup frames" \
  "$(ts -2 -n -r $p -Y 'iwk_mpa.type' -T fields -e frame.number | tr '\n' ' ')" \
  "$(ts -2 -n -r $p -Y 'iwk_mpa.rr' -T fields -e frame.number | tr '\n' ' ')"
check "iwk_mpa.stream = tcp.stream" "" \
  "$(ts -2 -n -r $p -Y 'iwk_mpa.stream' -T fields -e iwk_mpa.stream -e tcp.stream -E occurrence=f |
     awk '$1 != $2' | head -1)"
check "iwk_mpa.stream present" "0" \
  "$(ts -2 -n -r $p -Y 'iwk_mpa && !iwk_mpa.stream' -T fields -e frame.number | grep -c .)"
check "iwk_rdmap.opcode misses a Terminate's copy" "7 8 29 40 " \
  "$(ts -2 -n -r $p -Y 'iwk_rdmap.opcode == 1' -T fields -e frame.number | tr '\n' ' ')"
check "iwk_rdmap.term.rdmap.opcode finds it" "9 " \
  "$(ts -2 -n -r $p -Y 'iwk_rdmap.term.rdmap.opcode == 1' -T fields -e frame.number | tr '\n' ' ')"
exp=$(ts -2 -n -r pcaps/bad-ddp-rdmap.pcap -q -z expert,warn 2>/dev/null)
check "DDP verdict under iWARP-DDP" "1" \
  "$(echo "$exp" | grep -c 'iWARP-DDP  RNIC must send Terminate 1/2/0x06')"
check "RDMAP verdict under iWARP-RDMAP" "1" \
  "$(echo "$exp" | grep -c 'iWARP-RDMAP  RNIC must send Terminate 0/2/0x05')"
check "DDP reserved bits under iWARP-DDP" "1" \
  "$(echo "$exp" | grep -c 'iWARP-DDP  DDP Control reserved bits')"
check "Info starts with the ports" "46001 → 4791 Send QN=0 MSN=1 MO=0 len=32" \
  "$(ts -2 -n -r $p -Y 'frame.number == 6' -T fields -e _ws.col.Info)"
check "a due Terminate: iwk_rdmap.must_terminate.*" "8 " \
  "$(ts -2 -n -r $p -Y 'iwk_rdmap.must_terminate.ddp_ut_no_buffer' -T fields -e frame.number | tr '\n' ' ')"
check "a received Terminate: iwk_rdmap.term" "9 61 92 " \
  "$(ts -2 -n -r $p -Y 'iwk_rdmap.term' -T fields -e frame.number | tr '\n' ' ')"
p=pcaps/storage/nfsv3-rdma.pcap
check "a tagged message's segments name its first and last frame and length" \
  "$(ts -2 -n -r $p -Y 'iwk_rdmap.opcode == 2 && frame.number >= 62 && frame.number <= 129' \
     -T fields -e frame.number | grep -c .) 62 129 65536" \
  "$(ts -2 -n -r $p -Y 'iwk_rdmap.msg.first == 62' -T fields -e frame.number | grep -c .) $(
     ts -2 -n -r $p -Y 'frame.number == 63' -T fields -e iwk_rdmap.msg.first -e iwk_rdmap.msg.last \
       -e iwk_rdmap.msg.length | tr '\t' ' ')"
check "its offsets: the first 0, each the one before plus its payload" "ok" \
  "$(ts -2 -n -r $p -Y 'iwk_rdmap.msg.first == 62' -T fields -e iwk_rdmap.msg.offset -e iwk_ddp.payload_length |
     awk '$1 != want { bad = 1 } { want = $1 + $2 } END { print (bad || want != 65536) ? "bad" : "ok" }')"
check "not reassembled by default" "0" \
  "$(ts -2 -n -r $p -Y 'iwk_rdmap.reassembled_in == 129' -T fields -e frame.number | grep -c .)"
check "reassembled with reassemble_tagged" "65536" \
  "$(ts -2 -n -r $p -o iwk_rdmap.reassemble_tagged:TRUE -Y 'frame.number == 129' -T fields \
     -e iwk_rdmap.reassembled.length)"
[ "$fail" = 0 ]
