#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# iwarp-decode against tshark with the freshly built plugin: the same set of
# (frame, verdict) pairs on every capture in pcaps/ and on seeded mutants of
# them (issue 11, deliverable 3). The comparison itself is verdict-diff.py,
# the mutants come from mutate-pcaps.py; deliberate or known differences are
# listed, each with its reason, in differential.allow.
#
#   run-differential.sh PLUGIN.so PCAPS_DIR TSHARK IWARP-DECODE OUT_DIR
#
# PLUGIN.so empty: the plugin was not built (no Wireshark dev files): skip.
# tshark runs as tshark-lib.sh sets it up (as "nobody" when root, private
# copies; exit 77 without tshark). OUT_DIR keeps the outputs and the mutants,
# so a failing one can be replayed (the message names the mutant's file).
#
# Variants in X.args: the "default:" line, and any variant that only says
# which dissector takes the connection (Decode As, the heuristic, ULP port
# preferences), are compared; -d tcp.port==N,iwk_mpa becomes iwarp-decode's
# --port N. Variants that change what the plugin checks (check_crc off),
# how Wireshark's TCP reassembles (absolute sequence numbers) or whether the
# plugin runs at all (yield_to_builtin) have no iwarp-decode counterpart and
# are skipped, by name.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${1:-}" ]; then
  echo "SKIP: the iwarpkit plugin is not built (Wireshark dev files missing)"
  exit 77
fi
decode=${4:?usage: run-differential.sh PLUGIN.so PCAPS_DIR TSHARK IWARP-DECODE OUT_DIR}
out=${5:?usage: run-differential.sh PLUGIN.so PCAPS_DIR TSHARK IWARP-DECODE OUT_DIR}
[ -x "$decode" ] || { echo "FAIL: $decode not built"; exit 1; }
py=/usr/bin/python3
[ -x $py ] || { echo "SKIP: $py not installed"; exit 77; }
# shellcheck source=tshark-lib.sh
. "$here/tshark-lib.sh"
iwk_tshark_setup "$1" "$2" "${3:-}"
allow=$here/differential.allow
rm -rf "$out"
mkdir -p "$out/pcaps" "$out/mutants"

fail=0
pass=0

# compare NAME PCAP(relative to $tmp) OUTBASE [tshark options]
compare() {
  local name=$1 pcap=$2 base=$3
  shift 3
  local dargs=() o
  for o in "$@"; do
    case $o in
      tcp.port==*,iwk_mpa) o=${o#tcp.port==}; dargs+=(--port "${o%,iwk_mpa}") ;;
    esac
  done
  if ! ts -2 -n -r "$pcap" "$@" -T pdml >"$base.pdml" 2>"$base.err"; then
    echo "FAIL: $name: tshark failed"; sed -n 1,20p "$base.err"; fail=$((fail + 1)); return
  fi
  "$decode" --json "${dargs[@]}" "$tmp/$pcap" >"$base.jsonl" 2>>"$base.err"
  local rc=$?
  if [ $rc -gt 1 ]; then
    echo "FAIL: $name: iwarp-decode exited $rc"; sed -n 1,20p "$base.err"; fail=$((fail + 1)); return
  fi
  if $py "$here/verdict-diff.py" --allow "$allow" "${extra[@]}" "$name" "$base.jsonl" "$base.pdml"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
  fi
}

extra=()
for f in "$2"/*.pcap; do
  n=$(basename "$f" .pcap)
  if [ ! -f "$2/$n.args" ]; then
    compare "$n" "pcaps/$n.pcap" "$out/pcaps/$n"
    continue
  fi
  while IFS= read -r line; do
    case $line in ''|'#'*) continue ;; esac
    v=${line%%:*}
    opts=${line#*:}
    read -ra a <<<"$opts"
    skip=
    for o in "${a[@]}"; do
      case $o in
        -d|tcp.port==*,iwk_mpa|--disable-heuristic|iwk_mpa_tcp|-o|iwk_storage.*) ;;
        *) skip=$o ;;
      esac
    done
    if [ -n "$skip" ]; then
      echo "skip $n variant $v: '$skip' has no iwarp-decode counterpart"
      continue
    fi
    s=; [ "$v" = default ] || s=".$v"
    compare "$n$s" "pcaps/$n.pcap" "$out/pcaps/$n$s" "${a[@]}"
  done <"$2/$n.args"
done

# Mutants: one capture holding them all (both tools run once), compared
# range by range.
if ! $py "$here/mutate-pcaps.py" "$2" "$out/mutants"; then
  echo "FAIL: mutate-pcaps.py"; exit 1
fi
cp "$out/mutants/all.pcap" "$tmp/pcaps/mutants.pcap"
chmod a+r "$tmp/pcaps/mutants.pcap"
extra=(--ranges "$out/mutants/ranges")
compare mutants pcaps/mutants.pcap "$out/mutants/all"
[ $fail = 0 ] || echo "(mutants are in $out/mutants/, named as in the DIFF lines)"

echo "differential: $pass passed, $fail failed"
[ $fail = 0 ]
