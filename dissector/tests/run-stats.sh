#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# -z iwk,tree against the same tshark run's own fields (issue 11):
#
#   run-stats.sh PLUGIN.so PCAPS_DIR TSHARK
#
# For each capture: no percentage above 100% (every node counts in its
# parent's unit); no Read Request, Terminate, Atomic or Immediate Data
# under the payload-octet nodes (control headers are not payload); every
# "tcp.stream N: A:P -> B:Q" label names the tcp.stream tshark gives those
# frames; the Terminate-verdict count equals the number of iwk_rdmap.verdict
# values, and the CRC/marker count the number of FPDUs whose CRC is bad.
set -u
# shellcheck source=tshark-lib.sh
. "$(dirname "$0")/tshark-lib.sh"
iwk_tshark_setup "$1" "$2" "${3:-}"

fail=0
pass=0
for name in bad-stateful bad-crc bad-ddp-rdmap v1-crc-all-opcodes siw-read-bw atomic-misaligned \
            siw-terminate-layout; do
  f="pcaps/$name.pcap"
  [ -f "$tmp/$f" ] || { echo "FAIL: $name: capture missing"; fail=$((fail + 1)); continue; }
  out="$tmp/out/$name.stats"
  ts -2 -n -q -r "$f" -z iwk,tree >"$out" 2>"$tmp/out/$name.err" || {
    echo "FAIL: $name: tshark failed"; cat "$tmp/out/$name.err"; fail=$((fail + 1)); continue; }
  ok=1
  over=$(grep -oE '[0-9]+\.?[0-9]*%' "$out" | tr -d '%' | awk '$1 > 100.0001' | head -1)
  if [ -n "$over" ]; then echo "FAIL: $name: a percentage of $over%"; ok=0; fi
  ctl=$(awk '/^Payload octets by/{p=1; next} /^[^ ]/{p=0} p' "$out" |
        grep -E 'Read Request|Terminate |Atomic|Immediate' | head -1)
  if [ -n "$ctl" ]; then echo "FAIL: $name: control header counted as payload: $ctl"; ok=0; fi
  # Labels against tshark's own tcp.stream for those endpoints.
  ts -2 -n -r "$f" -Y iwk_ddp -T fields -E separator=' ' -e tcp.stream -e ip.src -e tcp.srcport \
     -e ip.dst -e tcp.dstport 2>/dev/null | sort -u >"$tmp/out/$name.streams"
  while read -r n a b; do
    src=${a%:*}; sp=${a##*:}; dst=${b%:*}; dp=${b##*:}
    if ! grep -qx "$n $src $sp $dst $dp" "$tmp/out/$name.streams"; then
      echo "FAIL: $name: stats label tcp.stream $n $a -> $b matches no frame's tcp.stream"; ok=0
    fi
  done < <(sed -n 's/^ *tcp\.stream \([0-9]*\): \([^ ]*\) -> \([^ ]*\) .*/\1 \2 \3/p' "$out" | sort -u)
  [ -s "$tmp/out/$name.streams" ] || { echo "FAIL: $name: no iwk_ddp frame"; ok=0; }
  got=$(sed -n 's/^Terminate verdicts (iwk_rdmap.verdict) *\([0-9]*\).*/\1/p' "$out")
  want=$(ts -2 -n -r "$f" -T fields -E occurrence=a -E aggregator=' ' -e iwk_rdmap.verdict \
           2>/dev/null | tr ' ' '\n' | grep -c .)
  if [ "$got" != "$want" ]; then
    echo "FAIL: $name: Terminate verdicts $got in the statistics, iwk_rdmap.verdict has $want"; ok=0
  fi
  got=$(sed -n 's/^CRC or marker failures (MPA) *\([0-9]*\).*/\1/p' "$out")
  want=$(ts -2 -n -r "$f" -T fields -E occurrence=a -E aggregator=' ' -e iwk_mpa.crc.status \
           2>/dev/null | tr ' ' '\n' | grep -c '^0$')
  if [ "$got" != "$want" ]; then
    echo "FAIL: $name: CRC failures $got in the statistics, $want FPDUs with a bad CRC"; ok=0
  fi
  if [ $ok = 1 ]; then echo "ok: $name"; pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
