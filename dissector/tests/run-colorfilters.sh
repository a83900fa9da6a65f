#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The colouring rules file installed with the plugin, applied by tshark:
#
#   run-colorfilters.sh PLUGIN.so PCAPS_DIR TSHARK COLORFILTERS
#
# With the file as the profile's colorfilters, tshark --color must name the
# rule each frame gets (frame.coloring_rule.name): the bad-CRC FPDU of
# bad-crc.pcap is "iWARP bad CRC", the Atomic Request that must be
# terminated in atomic-misaligned.pcap "iWARP Terminate or close due", the
# siw-layout Terminates "iWARP warning", the RFC-layout Terminate "iWARP
# Terminate message"; no frame of a valid capture gets an iWARP rule but the
# Terminate one.
set -u
# shellcheck source=tshark-lib.sh
. "$(dirname "$0")/tshark-lib.sh"
iwk_tshark_setup "$1" "$2" "${3:-}"
cf=${4:?colorfilters file}
mkdir -p "$tmp/.config/wireshark"
cp "$cf" "$tmp/.config/wireshark/colorfilters"
chmod -R a+rX "$tmp/.config"

fail=0
rule_of() { # capture frame
  ts -2 -n --color -r "pcaps/$1.pcap" -Y "frame.number == $2" -T fields \
     -e frame.coloring_rule.name 2>/dev/null
}
expect() { # capture frame rule
  local got
  got=$(rule_of "$1" "$2")
  if [ "$got" = "$3" ]; then echo "ok: $1 frame $2: $3"; else
    echo "FAIL: $1 frame $2: rule '$got', expected '$3'"; fail=$((fail + 1)); fi
}
expect bad-crc 7 "iWARP bad CRC"
expect atomic-misaligned 8 "iWARP Terminate or close due"
expect atomic-misaligned 9 "iWARP Terminate message"
expect siw-terminate-layout 17 "iWARP warning"
expect bad-mpa-key 4 "iWARP Terminate or close due"
for v in v1-crc-all-opcodes siw-rping; do
  bad=$(ts -2 -n --color -r "pcaps/$v.pcap" -T fields -e frame.coloring_rule.name 2>/dev/null |
        grep '^iWARP' | grep -v '^iWARP Terminate message$' | head -1)
  if [ -n "$bad" ]; then echo "FAIL: $v: a valid capture coloured '$bad'"; fail=$((fail + 1));
  else echo "ok: $v: no alert colour"; fi
done
[ "$fail" = 0 ]
