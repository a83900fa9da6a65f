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

# Each run is one tshark pass over the capture, printing per frame the
# fields every count needs (a protocol field prints its text when present);
# tally() derives the counts from them, so a capture costs four tshark runs
# (stock and ours, two passes and one) instead of one per filter.
ulp_fields() {
  case $1 in
    nfs) echo "nfs" ;;
    iscsi) echo "iscsi" ;;
    nvme) echo "iwk_nvmeof nvme" ;;
    smb2) echo "smb2" ;;
  esac
}
op_fields() { # fields that show the storage operation was decoded
  case $1 in
    nfs) echo "nfs.procedure_v3 nfs.procedure_v4 nfs.main_opcode" ;;
    iscsi) echo "scsi_sbc.opcode scsi.spc.opcode iscsi.opcode" ;;
    nvme) echo "iwk_nvmeof.opc iwk_nvmeof.cqe.cid nvme.cmd.opc" ;;
    smb2) echo "smb2.cmd" ;;
  esac
}
# tally RUNNER FILE ULP PASSES [options]: prints the frame counts
# "ulp op malformed warn alert". A frame counts for ulp (op) if any of the
# ULP's (operation's) fields is present. warn is an expert item of warning
# severity or above (>= 0x600000) on a frame without TCP's own analysis (a
# real capture's retransmission or duplicate ACK is a fact of the capture,
# not a decode). Stock tshark refuses the iwk_* names, so its run omits them.
tally() {
  local r=$1 f=$2 ulp=$3 passes=$4 fld uf=() of=() alert=()
  shift 4
  for fld in $(ulp_fields "$ulp"); do [ "$r:${fld%%_*}" = ts_stock:iwk ] || uf+=(-e "$fld"); done
  for fld in $(op_fields "$ulp"); do [ "$r:${fld%%_*}" = ts_stock:iwk ] || of+=(-e "$fld"); done
  [ "$r" = ts ] && alert=(-e iwk_mpa.alert)
  # shellcheck disable=SC2086 # $passes is "-2" or nothing
  "$r" $passes -n -r "pcaps/$f" "$@" -T fields -E separator=/t -E occurrence=a -E aggregator=, \
    -e _ws.expert.severity -e tcp.analysis.flags -e _ws.malformed "${alert[@]}" "${uf[@]}" "${of[@]}" \
    2>/dev/null |
    awk -F'\t' -v na=$((${#alert[@]} / 2)) -v nu=$((${#uf[@]} / 2)) -v no=$((${#of[@]} / 2)) '
      function any(from, n,   i) { for (i = from; i < from + n; i++) if ($i != "") return 1; return 0 }
      {
        w = 0
        if ($2 == "") { ns = split($1, sev, ","); for (i = 1; i <= ns; i++) if (sev[i] + 0 >= 6291456) w = 1 }
        cw += w; cm += ($3 != ""); ca += any(4, na)
        cu += any(4 + na, nu); co += any(4 + na + nu, no)
      }
      END { printf "%d %d %d %d %d\n", cu, co, cm, cw, ca }'
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
  [ -n "$(ulp_fields "$ulp")" ] || { echo "FAIL: $file: unknown ULP $ulp"; fail=$((fail + 1)); continue; }
  # Two passes, as the goldens, and tshark's default single pass too (the
  # GUI's packet list): some dissectors only get a frame right on a second.
  read -r us os ms ws _ < <(tally ts_stock "$file" "$ulp" -2 "${so[@]}")
  read -r up op mp wp ap < <(tally ts "$file" "$ulp" -2)
  read -r _ _ m1s _ _ < <(tally ts_stock "$file" "$ulp" "" "${so[@]}")
  read -r _ _ m1p _ _ < <(tally ts "$file" "$ulp" "")
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
