#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Times tshark over one >= 100 MB iWARP capture with the iwarpkit plugin and
# with Wireshark's built-in iwarp_mpa / iwarp_ddp_rdmap, in the same run.
#
#   dissector/bench/bench-plugin.sh BUILD_DIR [MEGABYTES]
#
# BUILD_DIR holds dissector/iwarpkit.so and dissector/iwk-pcapgen (a normal
# `cmake --build`). The capture (8 connections, MPA v1 startups, CRC on,
# one FPDU per segment: Sends, Writes, Read Request/Response) is written
# by iwk-pcapgen --bench; both dissectors verify every CRC. Each side runs
# 3 times and the best time counts. The last line is `name=ratio`
# (plugin time / built-in time; the goal is <= 1.0).
set -euo pipefail
build=${1:?usage: bench-plugin.sh BUILD_DIR [MEGABYTES]}
mb=${2:-110}
tshark=$(command -v tshark) || { echo "tshark not installed"; exit 1; }
ver=$("$tshark" --version | head -1 | sed -n 's/.* \([0-9]\+\)\.\([0-9]\+\)\.[0-9]\+.*/\1.\2/p')

tmp=$(mktemp -d /tmp/iwk-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/plugins/$ver/epan" "$tmp/empty/$ver/epan"
cp "$build/dissector/iwarpkit.so" "$tmp/plugins/$ver/epan/"
"$build/dissector/iwk-pcapgen" --bench "$tmp/bench.pcap" "$mb"
chmod -R a+rX "$tmp"
echo "capture: $(du -m "$tmp/bench.pcap" | cut -f1) MB, $(capinfos -c -M "$tmp/bench.pcap" 2>/dev/null | sed -n 's/.*packets: *//p') packets"

run=()
if [ "$(id -u)" -eq 0 ]; then run=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
ts() { # plugin-dir tshark-args...
  local dir=$1
  shift
  (cd "$tmp" && "${run[@]}" env -i PATH=/usr/bin:/bin HOME="$tmp" WIRESHARK_PLUGIN_DIR="$dir" \
     "$tshark" "$@")
}

# Both sides must decode the stream; count the FPDUs each saw.
ours=$(ts "$tmp/plugins" -r "$tmp/bench.pcap" -Y iwk_rdmap -T fields -e frame.number | wc -l)
theirs=$(ts "$tmp/empty" -r "$tmp/bench.pcap" -Y iwarp_ddp_rdmap -T fields -e frame.number | wc -l)
echo "frames decoded: plugin $ours, built-in $theirs"

best() { # plugin-dir
  local b=""
  for _ in 1 2 3; do
    local s e t
    s=$(date +%s%N)
    ts "$1" -r "$tmp/bench.pcap" >/dev/null
    e=$(date +%s%N)
    t=$(( (e - s) / 1000000 ))
    if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
  done
  echo "$b"
}
tp=$(best "$tmp/plugins")
tb=$(best "$tmp/empty")
echo "tshark -r: plugin ${tp} ms, built-in ${tb} ms"
awk -v a="$tp" -v b="$tb" 'BEGIN { printf "iwk_plugin_vs_builtin=%.3f\n", a / b }'
