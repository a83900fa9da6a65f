#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Times tshark over one >= 100 MB iWARP capture with the iwarpkit plugin and
# with Wireshark's built-in iwarp_mpa / iwarp_ddp_rdmap, in the same run, in
# four modes: summary lines (`tshark -r`), `-V`, `-q -z io,phs` and two-pass
# (`-2`).
#
#   dissector/bench/bench-plugin.sh BUILD_DIR [MEGABYTES] [RUNS]
#
# BUILD_DIR holds dissector/iwarpkit.so and dissector/iwk-pcapgen (a normal
# `cmake --build`). The capture is written by `iwk-pcapgen --bench`: 8
# connections, MPA v1 startups, CRC on, no markers (the built-in's marker
# arithmetic assumes one FPDU per segment), receiver ACKs, and four kinds of
# rounds: one FPDU per segment, four FPDUs in one segment, a three-FPDU
# Write whose FPDUs straddle segment boundaries (TCP reassembly on both
# sides), and Read Request/Response pairs.
#
# Fairness, as measured here and as far as the built-in's source (4.0)
# shows:
#   - Both dissectors frame every FPDU (the built-in through
#     tcp_dissect_pdus) and compute every FPDU's CRC32c in every mode, tree or
#     no tree. The sanity lines below count the FPDUs each decoded and the
#     CRCs each reported good, and the script fails if they differ.
#   - The plugin does more per FPDU than the built-in: stateful analysis
#     (libiwarp's shadow: MSN/MO/IRD/Read and Atomic matching), verdicts,
#     request/response links, message reassembly for display, the tap for
#     `-z iwk,...`. The built-in does none of that; the ratios include it.
#   - Both hand payloads to the same ULP heuristic list (nothing here
#     claims them: the payload is filler), except that the built-in hands
#     on only the first Send of a segment carrying several and marks the
#     others "Reassembled PDU in frame N" (fewer payload dumps under -V).
#   - The plugin links the segments of a multi-segment tagged message
#     (the three-FPDU Writes: first and last frame, length) without copying
#     their data, its default; the built-in shows them one by one. With
#     -o iwk_rdmap.reassemble_tagged:TRUE it copies them into one message
#     as well (docs/wireshark-plugin.md, Performance).
#
# Timing: the machine this runs on is shared, so each mode runs RUNS times
# (default 3) per side, interleaved (plugin, built-in, then built-in,
# plugin, ...) so that a load change hits both, and the best time of each
# side counts. The time is CPU time (user + system) of the tshark process,
# which waiting for a busy CPU does not inflate; wall time is printed too.
# Output: per mode one `iwk_plugin_vs_builtin_MODE=RATIO` line (plugin CPU
# time / built-in CPU time; the goal is <= 1.0), then the load average.
#
# Instructions: on a shared machine even CPU time moves by +-5% between
# runs. With valgrind installed, each mode then runs once per side under
# callgrind on a smaller capture of the same kind (IWK_BENCH_INSN_MB, default
# 4; 0 skips this), and the instructions of the same run over its first
# packet only (start-up: loading ~100 dissectors, preferences) are
# subtracted. Output: `iwk_plugin_vs_builtin_MODE_insns=RATIO`, exact and
# load-independent, but blind to memory effects (cache misses, page faults,
# the kernel), which the CPU-time ratios include. About 6 minutes.
set -euo pipefail
build=${1:?usage: bench-plugin.sh BUILD_DIR [MEGABYTES] [RUNS]}
mb=${2:-110}
runs=${3:-3}
tshark=$(command -v tshark) || { echo "tshark not installed"; exit 1; }
ver=$("$tshark" --version 2>/dev/null | head -1 | sed -n 's/.* \([0-9]\+\)\.\([0-9]\+\)\.[0-9]\+.*/\1.\2/p')

tmp=$(mktemp -d /tmp/iwk-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/plugins/$ver/epan" "$tmp/empty/$ver/epan"
cp "$build/dissector/iwarpkit.so" "$tmp/plugins/$ver/epan/"
"$build/dissector/iwk-pcapgen" --bench "$tmp/bench.pcap" "$mb"
chmod -R a+rX "$tmp"
echo "capture: $(du -m "$tmp/bench.pcap" | cut -f1) MB, $(capinfos -c -M "$tmp/bench.pcap" 2>/dev/null | sed -n 's/.*packets: *//p') packets"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

run=()
if [ "$(id -u)" -eq 0 ]; then run=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
ts() { # plugin-dir tshark-args...
  local dir=$1
  shift
  (cd "$tmp" && "${run[@]}" env -i PATH=/usr/bin:/bin HOME="$tmp" WIRESHARK_PLUGIN_DIR="$dir" \
     "$tshark" "$@")
}

# Both sides must decode the same FPDUs and verify their CRCs. FPDUs: every
# occurrence of the RDMAP opcode field (several per frame where a segment
# holds several FPDUs). Good CRCs: the plugin's iwk_mpa.crc.status == Good
# (1); the built-in says so only in its item label ("Good CRC32").
count_fields() { # tsv-with-comma-lists column
  awk -F'\t' -v col="$1" '$col != "" { n += split($col, a, ",") } END { print n + 0 }'
}
ours_fields=$(ts "$tmp/plugins" -r "$tmp/bench.pcap" -Y iwk_rdmap -T fields -E occurrence=a \
  -E aggregator=, -e iwk_rdmap.opcode -e iwk_mpa.crc.status)
ours=$(count_fields 1 <<<"$ours_fields")
ours_good=$(awk -F'\t' '{ m = split($2, a, ","); for (i = 1; i <= m; i++) if (a[i] == 1) g++ }
  END { print g + 0 }' <<<"$ours_fields")
unset ours_fields
theirs=$(ts "$tmp/empty" -r "$tmp/bench.pcap" -Y iwarp_ddp_rdmap -T fields -E occurrence=a \
  -E aggregator=, -e iwarp_rdma.opcode | count_fields 1)
theirs_good=$(ts "$tmp/empty" -r "$tmp/bench.pcap" -Y iwarp_mpa -V | grep -c '(Good CRC32)' || true)
echo "FPDUs decoded: plugin $ours, built-in $theirs"
echo "CRCs verified good: plugin $ours_good, built-in $theirs_good"
if [ "$ours" -eq 0 ] || [ "$ours" != "$theirs" ] || [ "$ours_good" != "$ours" ] ||
  [ "$theirs_good" != "$theirs" ]; then
  echo "FAIL: the two dissectors did not decode and verify the same FPDUs"
  exit 1
fi

# CPU (user + system) and wall milliseconds of one tshark run.
cpu_ms=0
wall_ms=0
one() { # plugin-dir tshark-args...
  local t0 t1 c0 c1
  c0=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
  t0=$(date +%s%N)
  ts "$@" >/dev/null
  t1=$(date +%s%N)
  c1=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
  wall_ms=$(((t1 - t0) / 1000000))
  cpu_ms=$(((c1 - c0) * 1000 / $(getconf CLK_TCK)))
}

mode() { # name tshark-args...
  local name=$1
  shift
  local bp="" bb="" wp="" wb=""
  for i in $(seq 1 "$runs"); do
    local order=(plugins empty)
    if [ $((i % 2)) -eq 0 ]; then order=(empty plugins); fi
    for side in "${order[@]}"; do
      one "$tmp/$side" -r "$tmp/bench.pcap" "$@"
      if [ "$side" = plugins ]; then
        if [ -z "$bp" ] || [ "$cpu_ms" -lt "$bp" ]; then bp=$cpu_ms; fi
        if [ -z "$wp" ] || [ "$wall_ms" -lt "$wp" ]; then wp=$wall_ms; fi
      else
        if [ -z "$bb" ] || [ "$cpu_ms" -lt "$bb" ]; then bb=$cpu_ms; fi
        if [ -z "$wb" ] || [ "$wall_ms" -lt "$wb" ]; then wb=$wall_ms; fi
      fi
    done
  done
  echo "$name (tshark $*): plugin ${bp} ms CPU, ${wp} ms wall; built-in ${bb} ms CPU, ${wb} ms wall" \
    "(wall ratio $(awk -v c="$wp" -v d="$wb" 'BEGIN { printf "%.3f", c / d }'))"
  awk -v n="$name" -v a="$bp" -v b="$bb" 'BEGIN { printf "iwk_plugin_vs_builtin_%s=%.3f\n", n, a / b }'
}

mode summary
mode verbose -V
mode phs -q -z io,phs
mode twopass -2
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

insn_mb=${IWK_BENCH_INSN_MB:-4}
if [ "$insn_mb" = 0 ]; then exit 0; fi
valgrind=$(command -v valgrind) || { echo "instructions: valgrind not installed, skipped"; exit 0; }
"$build/dissector/iwk-pcapgen" --bench "$tmp/small.pcap" "$insn_mb" >/dev/null
chmod a+r "$tmp/small.pcap"
insns() { # plugin-dir tshark-args...: instructions callgrind counted
  local dir=$1 n
  shift
  n=$(cd "$tmp" && "${run[@]}" env -i PATH=/usr/bin:/bin HOME="$tmp" WIRESHARK_PLUGIN_DIR="$dir" \
    "$valgrind" --tool=callgrind --callgrind-out-file=/dev/null "$tshark" "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p')
  [ -n "$n" ] || { echo "FAIL: callgrind counted nothing (tshark $*)" >&2; exit 1; }
  echo "$n"
}
echo "instructions (callgrind, $(du -m "$tmp/small.pcap" | cut -f1) MB capture, start-up subtracted):"
imode() { # name tshark-args...
  local name=$1 side p="" b=""
  shift
  for side in plugins empty; do
    local all first
    all=$(insns "$tmp/$side" -r "$tmp/small.pcap" "$@")
    first=$(insns "$tmp/$side" -r "$tmp/small.pcap" -c 1 "$@")
    if [ "$side" = plugins ]; then p=$((all - first)); else b=$((all - first)); fi
  done
  echo "$name (tshark $*): plugin $p, built-in $b instructions"
  awk -v n="$name" -v a="$p" -v b="$b" 'BEGIN { printf "iwk_plugin_vs_builtin_%s_insns=%.3f\n", n, a / b }'
}
imode summary
imode verbose -V
imode phs -q -z io,phs
imode twopass -2
