#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden replay of pcaps/ through tshark with the freshly built plugin.
#
#   run-golden.sh PLUGIN.so PCAPS_DIR TSHARK        compare with pcaps/expected/
#   IWK_UPDATE=1 run-golden.sh ...                  rewrite pcaps/expected/
#
# tshark runs as tshark-lib.sh sets it up (as "nobody" when root, private
# copies, nothing outside a temp dir touched; exit 77 only without tshark).
#
# Per capture X.pcap: X.fields.txt (one line per frame, our fields) and
# X.verbose.txt (-V restricted to our layers and the storage ULP dissectors
# the plugin hands payloads to: see $layers). X.args, if
# present, holds variants "NAME: tshark options", one per line; variant
# outputs are X.NAME.fields.txt / X.NAME.verbose.txt. Captures listed in
# storage.list get the ULP fields of storage.fields too. pcaps/storage/
# (real kernel storage traffic over siw) is replayed the same way, its
# outputs in expected/storage/. Captures named in
# valid.list must produce no iwk_mpa.alert (our warnings/errors) and no
# malformed-packet item.
#
# The captures run IWK_JOBS at a time (default: the number of cores): this
# is the longest test of the suite, and a lone tshark leaves cores idle once
# the other tests are done. Each one's report is printed in capture order.
set -u

update=${IWK_UPDATE:-0}
# shellcheck source=tshark-lib.sh
. "$(dirname "$0")/tshark-lib.sh"
iwk_tshark_setup "$1" "$2" "${3:-}"

fields=(frame.number _ws.col.Protocol _ws.col.Info iwk_mpa.type iwk_mpa.ulpdu_length
        iwk_mpa.stream_pos iwk_mpa.marker.fpduptr iwk_mpa.crc.status iwk_ddp.t iwk_ddp.l
        iwk_ddp.qn iwk_ddp.msn iwk_ddp.mo iwk_ddp.stag iwk_ddp.to iwk_rdmap.opcode
        iwk_rdmap.verdict iwk_rdmap.term.triple iwk_rdmap.request_in iwk_rdmap.response_in
        iwk_rdmap.reassembled_in iwk_mpa.alert)
fargs=()
for f in "${fields[@]}"; do fargs+=(-e "$f"); done
# Verbose output: our layers, and the ULP dissectors they hand storage to
# (none of which appears on the captures without storage traffic).
layers=iwk_mpa,iwk_sctp,iwk_ddp,iwk_rdmap,iwk_storage,iwk_rpcrdma,iwk_iser,iwk_nvmeof,rpcordma,rpc,nfs,iscsi,scsi,scsi_sbc,smb_direct,smb2

valid=" $(cat "$pcaps/valid.list" 2>/dev/null | tr '\n' ' ') "

check() { # name variant-suffix options... -> prints its report, returns 1 on failure
  local name=$1 sfx=$2
  shift 2
  local base="$name$sfx"
  local ok=1
  local xargs=()
  if grep -q "^$name.pcap " "$pcaps/storage.list" 2>/dev/null; then
    while IFS= read -r f; do [ -n "$f" ] && xargs+=(-e "$f"); done <"$pcaps/storage.fields"
  fi
  mkdir -p "$tmp/out/$(dirname "$base")"
  ts -2 -n -r "pcaps/$name.pcap" "$@" -T fields -E header=y -E occurrence=a -E aggregator=, \
     "${fargs[@]}" "${xargs[@]}" >"$tmp/out/$base.fields.txt" 2>"$tmp/out/$base.err" || ok=0
  ts -2 -n -r "pcaps/$name.pcap" "$@" -V -O "$layers" \
     >"$tmp/out/$base.verbose.txt" 2>>"$tmp/out/$base.err" || ok=0
  if [ $ok = 0 ] || grep -q -i -E "AddressSanitizer|runtime error|Segmentation|Abort" "$tmp/out/$base.err"; then
    echo "FAIL: $base: tshark failed"
    sed -n 1,40p "$tmp/out/$base.err"
    return 1
  fi
  if [ "$update" = 1 ]; then
    mkdir -p "$pcaps/expected/$(dirname "$base")"
    cp "$tmp/out/$base.fields.txt" "$tmp/out/$base.verbose.txt" "$pcaps/expected/$(dirname "$base")/"
  fi
  for kind in fields verbose; do
    if ! diff -u "$pcaps/expected/$base.$kind.txt" "$tmp/out/$base.$kind.txt" >"$tmp/out/$base.$kind.diff" 2>&1; then
      echo "FAIL: $base: $kind output differs from pcaps/expected/$base.$kind.txt"
      sed -n 1,60p "$tmp/out/$base.$kind.diff"
      ok=0
    fi
  done
  case "$valid" in
    *" $name.pcap "*)
      # From the outputs above (a third tshark per capture was a tenth of
      # the suite's time): our alerts are the iwk_mpa.alert column, a
      # malformed packet shows in -V at any depth. Only a hit pays for the
      # run that names the messages.
      local col hit
      col=$(head -1 "$tmp/out/$base.fields.txt" | tr '\t' '\n' | grep -n -x 'iwk_mpa.alert' | cut -d: -f1)
      hit=$(awk -F'\t' -v c="${col:-0}" 'NR > 1 && (c == 0 || $c != "")' "$tmp/out/$base.fields.txt")
      if [ -n "$hit" ] || grep -q -E '^ *\[Malformed Packet' "$tmp/out/$base.verbose.txt"; then
        echo "FAIL: $base: warnings/errors on a valid capture:"
        ts -2 -n -r "pcaps/$name.pcap" "$@" -Y "iwk_mpa.alert || _ws.malformed" \
           -T fields -e frame.number -e _ws.expert.message -E occurrence=a 2>/dev/null | head -20
        ok=0
      fi
      ;;
  esac
  [ $ok = 1 ] && echo "ok: $base"
}

max=${IWK_JOBS:-$(nproc 2>/dev/null || echo 2)}
n=0
mkdir -p "$tmp/rep"
start() { # name variant-suffix options...: check in the background
  while [ "$(jobs -rp | wc -l)" -ge "$max" ]; do wait -n || true; done
  n=$((n + 1))
  local r="$tmp/rep/$(printf %04d $n)"
  { if check "$@"; then echo ok >"$r.st"; else echo fail >"$r.st"; fi; } >"$r.log" 2>&1 &
}

for p in "$pcaps"/*.pcap "$pcaps"/storage/*.pcap; do
  [ -f "$p" ] || continue
  name=${p#"$pcaps"/}
  name=${name%.pcap}
  if [ -f "$pcaps/$name.args" ]; then
    while IFS= read -r line; do
      [ -z "$line" ] && continue
      case "$line" in \#*) continue ;; esac
      v=${line%%:*}
      opts=${line#*:}
      sfx=""
      [ "$v" = default ] || sfx=".$v"
      # shellcheck disable=SC2086
      start "$name" "$sfx" $opts
    done <"$pcaps/$name.args"
  else
    start "$name" ""
  fi
done
wait

pass=0 fail=0
for r in "$tmp"/rep/*.log; do
  cat "$r"
  if [ "$(cat "${r%.log}.st" 2>/dev/null)" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
