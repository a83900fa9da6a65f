#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Regenerates the golden outputs in golden/ (and pcaps/expected-decode/) with
# a built iwarp-decode (BUILD/bin/iwarp-decode); gen_pcaps from the same build writes the
# synthetic captures. Review every diff against the RFCs before committing:
# the goldens are the contract the ctest cases hold the tool to.
#   tools/tests/update_golden.sh path/to/iwarp-decode
set -euo pipefail
tool=$(realpath "${1:?usage: update_golden.sh path/to/iwarp-decode}")
# gen_pcaps is a test helper: built beside the tool's sources, not in bin/.
gen=$(dirname "$tool")/../reference-stack/tools/decode/gen_pcaps
[ -x "$gen" ] || gen=$(dirname "$tool")/gen_pcaps
[ -x "$gen" ] || { echo "update_golden.sh: gen_pcaps not built beside $tool" >&2; exit 2; }
cd "$(dirname "$0")"
s=../samples g=golden i=inputs
run() { local out=$1; shift; "$tool" "$@" > "$g/$out" || [ $? -eq 1 ]; }
run mpa-v2-markers-crc.jsonl --json --hex $s/mpa-v2-markers-crc.hex
run mpa-v2-markers-crc.txt --text --hex $s/mpa-v2-markers-crc.hex
run mpa-v1-reply-nocrc.jsonl --json $s/mpa-v1-reply-nocrc.bin
run mpa-v1-reply-nocrc.txt --text $s/mpa-v1-reply-nocrc.bin
run mpa-v1-reply-nocrc.payload.jsonl --json --payload $s/mpa-v1-reply-nocrc.bin
run mpa-v1-reply-nocrc.payload.txt --text --payload $s/mpa-v1-reply-nocrc.bin
run violations.jsonl --json --hex $s/violations.hex
run violations.txt --text --hex $s/violations.hex
run initiator-initiator.jsonl --json --start reply --hex $s/mpa-v2-markers-crc.hex
run bad-key.jsonl --json --start any --hex $i/bad-key.hex
run request-only.jsonl --json --hex $i/request-only.hex
run truncated.jsonl --json --hex $i/truncated.hex

# Captures in pcaps/.
p=../../../../pcaps x=../../../../pcaps/expected-decode
mkdir -p $x
for f in $p/*.pcap; do
  n=$(basename "$f" .pcap)
  "$tool" --json "$f" > "$x/$n.jsonl" 2> "$x/$n.stderr" || [ $? -eq 1 ]
  # what the tool says on stderr is expected too (pcap_golden.cmake), path as PCAP
  if [ -s "$x/$n.stderr" ]; then sed -i "s|$f|PCAP|g" "$x/$n.stderr"; else rm -f "$x/$n.stderr"; fi
done
"$tool" --text $p/uiwarp_8cdd2a5.pcap > $x/uiwarp_8cdd2a5.txt || [ $? -eq 1 ]
"$tool" --text $p/v1-crc-all-opcodes.pcap > $x/v1-crc-all-opcodes.txt
"$tool" --json --no-crc $p/v1-crc-all-opcodes.pcap > $x/v1-crc-all-opcodes.nocrc.jsonl

# Synthetic captures.
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
"$gen" "$w"
gp=$g/pcap
mkdir -p $gp
"$tool" --json $w/link4-eth.pcap > $gp/link4.jsonl
"$tool" --json $w/link6-eth.pcap > $gp/link6.jsonl
for n in tcp-reorder tcp-retrans tcp-gap tcp-conflict midstream-nocrc not-iwarp snaplen port-reuse \
         nosyn; do
  "$tool" --json $w/$n.pcap > $gp/$n.jsonl || [ $? -eq 1 ]
done
"$tool" --text $w/tcp-gap.pcap > $gp/tcp-gap.txt
"$tool" --text $w/not-iwarp.pcap > $gp/not-iwarp.txt
"$tool" --json --port 5000 $w/not-iwarp.pcap > $gp/not-iwarp.port5000.jsonl || [ $? -eq 1 ]
"$tool" --json $w/malformed.pcap > $gp/malformed.jsonl 2>/dev/null
"$tool" --json $w/truncated.pcap > $gp/truncated.jsonl 2>/dev/null || [ $? -eq 2 ]
git diff --stat -- "$g" $x 2>/dev/null || true
