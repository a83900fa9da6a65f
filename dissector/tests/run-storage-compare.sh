#!/usr/bin/env bash
# Storage captures: the plugin against stock tshark.
#
#   run-storage-compare.sh PLUGIN.so PCAPS_DIR TSHARK
#
# pcaps/storage.list names each storage capture and its ULP (nfs, iscsi,
# nvme, smb2). For each, frames are counted with stock tshark (no plugin)
# and with the plugin: frames decoded as the ULP, frames decoded down to the
# storage operation (NFS procedure or operation, SCSI CDB, NVMe command,
# SMB2 command), malformed frames, and frames with an expert item of warning
# or error severity. It fails unless, with the plugin, every capture
# decodes its ULP in at least as many frames as stock and in at least one,
# down to the operation in at least as many as stock, with no malformed
# frame, and (captures in valid.list) no warning. Prints the table.
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
count() { # runner file filter
  local r=$1 f=$2 flt=$3
  "$r" -2 -n -r "pcaps/$f" -Y "$flt" -T fields -e frame.number 2>/dev/null | grep -c .
}

pass=0
fail=0
printf '%-34s %-6s %14s %14s %14s %14s\n' capture ulp "ulp stock/ours" "op stock/ours" \
  "malf stock/ours" "warn stock/ours"
while read -r file ulp; do
  case "$file" in ''|\#*) continue ;; esac
  [ -f "$pcaps/$file" ] || { echo "FAIL: $file listed but missing"; fail=$((fail + 1)); continue; }
  uf=$(ulp_filter "$ulp")
  of=$(op_filter "$ulp")
  [ -n "$uf" ] || { echo "FAIL: $file: unknown ULP $ulp"; fail=$((fail + 1)); continue; }
  warn="_ws.expert.severity >= 0x600000 || iwk_mpa.alert"
  us=$(count ts_stock "$file" "$uf"); up=$(count ts "$file" "$uf")
  os=$(count ts_stock "$file" "$of"); op=$(count ts "$file" "$of")
  ms=$(count ts_stock "$file" "_ws.malformed"); mp=$(count ts "$file" "_ws.malformed")
  ws=$(count ts_stock "$file" "_ws.expert.severity >= 0x600000"); wp=$(count ts "$file" "$warn")
  printf '%-34s %-6s %14s %14s %14s %14s\n' "$file" "$ulp" "$us/$up" "$os/$op" "$ms/$mp" "$ws/$wp"
  why=""
  [ "$up" -ge "$us" ] || why="$why fewer $ulp frames than stock;"
  [ "$up" -gt 0 ] || why="$why no $ulp frame;"
  [ "$op" -ge "$os" ] || why="$why fewer operations than stock;"
  [ "$mp" -eq 0 ] || why="$why malformed frames;"
  case "$valid" in *" $file "*) [ "$wp" -eq 0 ] || why="$why warnings;" ;; esac
  if [ -n "$why" ]; then
    echo "FAIL: $file:$why"
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
done <"$list"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
