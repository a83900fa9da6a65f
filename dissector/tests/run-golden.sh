#!/usr/bin/env bash
# Golden replay of pcaps/ through tshark with the freshly built plugin.
#
#   run-golden.sh PLUGIN.so PCAPS_DIR TSHARK        compare with pcaps/expected/
#   IWK_UPDATE=1 run-golden.sh ...                  rewrite pcaps/expected/
#
# tshark ignores WIRESHARK_PLUGIN_DIR when run as root, so as root this runs
# it as "nobody" (setpriv or runuser) from a private copy of the plugin and
# captures; nothing outside a temp dir is touched. Exit 77 (ctest skip) only
# when tshark is not installed. IWK_PRELOAD (set by CMake for sanitizer
# builds) is preloaded into tshark.
#
# Per capture X.pcap: X.fields.txt (one line per frame, our fields) and
# X.verbose.txt (-V restricted to iwk_mpa/iwk_ddp/iwk_rdmap). X.args, if
# present, holds variants "NAME: tshark options", one per line; variant
# outputs are X.NAME.fields.txt / X.NAME.verbose.txt. Captures named in
# valid.list must produce no iwk_mpa.alert (our warnings/errors) and no
# malformed-packet item.
set -u
so=$1
pcaps=$2
tshark=${3:-}
update=${IWK_UPDATE:-0}

if [ -z "$tshark" ] || ! [ -x "$tshark" ]; then
  echo "SKIP: tshark not installed (apt-get install tshark)"
  exit 77
fi
[ -f "$so" ] || { echo "FAIL: plugin $so not built"; exit 1; }

ver=$("$tshark" --version 2>/dev/null | head -1 | sed -n 's/.* \([0-9]\+\)\.\([0-9]\+\)\.[0-9]\+.*/\1.\2/p')
[ -n "$ver" ] || { echo "FAIL: cannot read tshark's version"; exit 1; }

tmp=$(mktemp -d /tmp/iwk-golden.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/plugins/$ver/epan" "$tmp/pcaps" "$tmp/out"
cp "$so" "$tmp/plugins/$ver/epan/iwarpkit.so"
cp "$pcaps"/*.pcap "$tmp/pcaps/"
cp "$pcaps"/*.args "$tmp/pcaps/" 2>/dev/null || true
chmod -R a+rX "$tmp"
chmod 777 "$tmp/out"

run=()
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv >/dev/null; then
    run=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  elif command -v runuser >/dev/null; then
    run=(runuser -u nobody --)
  else
    echo "FAIL: running as root and neither setpriv nor runuser is available"
    exit 1
  fi
fi
envv=(env -i PATH=/usr/bin:/bin HOME="$tmp" LANG=C.UTF-8 TZ=UTC
      WIRESHARK_PLUGIN_DIR="$tmp/plugins"
      ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
if [ -n "${IWK_PRELOAD:-}" ]; then
  envv+=(LD_PRELOAD="$IWK_PRELOAD")
fi
ts() { (cd "$tmp" && "${run[@]}" "${envv[@]}" "$tshark" "$@"); }

if ! ts -G protocols 2>"$tmp/err" | grep -q "	iwk_mpa$"; then
  echo "FAIL: the iwarpkit plugin did not load into tshark ($tshark, plugin dir $tmp/plugins/$ver/epan)"
  cat "$tmp/err"
  exit 1
fi
echo "plugin loaded: iwk_mpa, iwk_ddp, iwk_rdmap registered by $so"

fields=(frame.number _ws.col.Protocol _ws.col.Info iwk_mpa.type iwk_mpa.ulpdu_length
        iwk_mpa.stream_pos iwk_mpa.marker.fpduptr iwk_mpa.crc.status iwk_ddp.t iwk_ddp.l
        iwk_ddp.qn iwk_ddp.msn iwk_ddp.mo iwk_ddp.stag iwk_ddp.to iwk_rdmap.opcode
        iwk_rdmap.verdict iwk_rdmap.term.triple iwk_rdmap.request_in iwk_rdmap.response_in
        iwk_rdmap.reassembled_in iwk_mpa.alert)
fargs=()
for f in "${fields[@]}"; do fargs+=(-e "$f"); done

pass=0
fail=0
valid=" $(cat "$pcaps/valid.list" 2>/dev/null | tr '\n' ' ') "

check() { # name variant-suffix options...
  local name=$1 sfx=$2
  shift 2
  local base="$name$sfx"
  local ok=1
  ts -2 -n -r "pcaps/$name.pcap" "$@" -T fields -E header=y -E occurrence=a -E aggregator=, \
     "${fargs[@]}" >"$tmp/out/$base.fields.txt" 2>"$tmp/out/$base.err" || ok=0
  ts -2 -n -r "pcaps/$name.pcap" "$@" -V -O iwk_mpa,iwk_ddp,iwk_rdmap \
     >"$tmp/out/$base.verbose.txt" 2>>"$tmp/out/$base.err" || ok=0
  if [ $ok = 0 ] || grep -q -i -E "AddressSanitizer|runtime error|Segmentation|Abort" "$tmp/out/$base.err"; then
    echo "FAIL: $base: tshark failed"
    sed -n 1,40p "$tmp/out/$base.err"
    fail=$((fail + 1))
    return
  fi
  if [ "$update" = 1 ]; then
    mkdir -p "$pcaps/expected"
    cp "$tmp/out/$base.fields.txt" "$tmp/out/$base.verbose.txt" "$pcaps/expected/"
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
      local bad
      bad=$(ts -2 -n -r "pcaps/$name.pcap" "$@" -Y "iwk_mpa.alert || _ws.malformed" \
              -T fields -e frame.number -e _ws.expert.message -E occurrence=a 2>/dev/null)
      if [ -n "$bad" ]; then
        echo "FAIL: $base: warnings/errors on a valid capture:"
        echo "$bad" | head -20
        ok=0
      fi
      ;;
  esac
  if [ $ok = 1 ]; then
    echo "ok: $base"
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
  fi
}

for p in "$pcaps"/*.pcap; do
  name=$(basename "$p" .pcap)
  if [ -f "$pcaps/$name.args" ]; then
    while IFS= read -r line; do
      [ -z "$line" ] && continue
      case "$line" in \#*) continue ;; esac
      v=${line%%:*}
      opts=${line#*:}
      sfx=""
      [ "$v" = default ] || sfx=".$v"
      # shellcheck disable=SC2086
      check "$name" "$sfx" $opts
    done <"$pcaps/$name.args"
  else
    check "$name" ""
  fi
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
