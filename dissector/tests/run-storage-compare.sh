#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Storage captures: the plugin against stock tshark.
#
#   run-storage-compare.sh PLUGIN.so PCAPS_DIR TSHARK
#
# pcaps/storage.list names each storage capture, its ULP (nfs, iscsi, nvme,
# smb2) and, optionally, options for the stock run. For each, frames are counted with stock tshark (no plugin)
# and with the plugin: frames decoded as the ULP, frames decoded down to the
# storage operation (NFS procedure or operation, SCSI CDB, NVMe command,
# SMB2 command), malformed frames, frames with an expert item of warning or
# error severity above TCP's own analysis, and (plugin) frames with an
# iwarpkit alert. It fails unless, with the plugin, every capture decodes
# its ULP in at least as many frames as stock and in at least one, down to
# the operation in at least as many as stock, with no malformed frame (two
# passes, and tshark's default single pass), no
# more warnings than stock (those left are the ULP dissectors' findings on
# the traffic itself, such as NFS's on CLOSE replies), and (captures in
# valid.list) no iwarpkit alert. Prints the table.
set -u
# shellcheck source=tshark-lib.sh
. "$(dirname "$0")/tshark-lib.sh"
iwk_tshark_setup "$1" "$2" "${3:-}"

list="$pcaps/storage.list"
[ -f "$list" ] || { echo "FAIL: $list missing"; exit 1; }
valid=" $(tr '\n' ' ' <"$pcaps/valid.list" 2>/dev/null) "

ulp_filter() {
  case $1 in
    nfs) echo "nfs" ;;
    iscsi) echo "iscsi" ;;
    nvme) echo "iwk_nvmeof || nvme" ;;
    smb2) echo "smb2" ;;
  esac
}
op_filter() {
  case $1 in
    nfs) echo "nfs.procedure_v3 || nfs.procedure_v4 || nfs.main_opcode" ;;
    iscsi) echo "scsi_sbc.opcode || scsi.spc.opcode || iscsi.opcode" ;;
    nvme) echo "iwk_nvmeof.opc || iwk_nvmeof.cqe.cid || nvme.cmd.opc" ;;
    smb2) echo "smb2.cmd" ;;
  esac
}
count() { # runner file filter [options] (two passes, as the goldens)
  local r=$1 f=$2 flt=$3
  shift 3
  "$r" -2 -n -r "pcaps/$f" "$@" -Y "$flt" -T fields -e frame.number 2>/dev/null | grep -c .
}
count1() { # runner file filter [options] (one pass)
  local r=$1 f=$2 flt=$3
  shift 3
  "$r" -n -r "pcaps/$f" "$@" -Y "$flt" -T fields -e frame.number 2>/dev/null | grep -c .
}

pass=0
fail=0
printf '%-34s %-6s %14s %14s %14s %14s %14s %6s\n' capture ulp "ulp stock/ours" "op stock/ours" \
  "malf stock/ours" "1-pass malf" "warn stock/ours" alerts
while read -r file ulp sopts; do
  case "$file" in ''|\#*) continue ;; esac
  # Options for the stock run (third field on): the baseline for a capture
  # stock can decode only when told, its malformed frames then allowed to us.
  read -r -a so <<<"${sopts:-}"
  [ -f "$pcaps/$file" ] || { echo "FAIL: $file listed but missing"; fail=$((fail + 1)); continue; }
  uf=$(ulp_filter "$ulp")
  of=$(op_filter "$ulp")
  [ -n "$uf" ] || { echo "FAIL: $file: unknown ULP $ulp"; fail=$((fail + 1)); continue; }
  # Warnings above TCP: TCP's own analysis (a real capture's retransmission
  # or duplicate ACK) is a fact of the capture, not a decode.
  warn="_ws.expert.severity >= 0x600000 && !tcp.analysis.flags"
  us=$(count ts_stock "$file" "$uf" "${so[@]}"); up=$(count ts "$file" "$uf")
  os=$(count ts_stock "$file" "$of" "${so[@]}"); op=$(count ts "$file" "$of")
  ms=$(count ts_stock "$file" "_ws.malformed" "${so[@]}"); mp=$(count ts "$file" "_ws.malformed")
  ws=$(count ts_stock "$file" "$warn" "${so[@]}"); wp=$(count ts "$file" "$warn")
  ap=$(count ts "$file" "iwk_mpa.alert")
  # tshark's default single pass too (and the GUI's packet list): some
  # dissectors only get a frame right on a second pass.
  m1s=$(count1 ts_stock "$file" "_ws.malformed" "${so[@]}"); m1p=$(count1 ts "$file" "_ws.malformed")
  printf '%-34s %-6s %14s %14s %14s %14s %14s %6s\n' "$file" "$ulp" "$us/$up" "$os/$op" "$ms/$mp" \
    "$m1s/$m1p" "$ws/$wp" "$ap"
  why=""
  [ "$up" -ge "$us" ] || why="$why fewer $ulp frames than stock;"
  [ "$up" -gt 0 ] || why="$why no $ulp frame;"
  [ "$op" -ge "$os" ] || why="$why fewer operations than stock;"
  allow=0
  [ ${#so[@]} -gt 0 ] && allow=$ms
  [ "$mp" -le "$allow" ] || why="$why malformed frames;"
  [ "$m1p" -le "$allow" ] || why="$why malformed frames in one pass;"
  [ "$wp" -le "$ws" ] || why="$why more warnings than stock;"
  case "$valid" in *" $file "*) [ "$ap" -eq 0 ] || why="$why iwarpkit warnings;" ;; esac
  if [ -n "$why" ]; then
    echo "FAIL: $file:$why"
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
done <"$list"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
