# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the plugin's tshark tests: tshark with the freshly built plugin
# (ts) and stock tshark without it (ts_stock), run from a private temp dir.
#
#   . tshark-lib.sh; iwk_tshark_setup PLUGIN.so PCAPS_DIR TSHARK
#
# tshark ignores WIRESHARK_PLUGIN_DIR when run as root, so as root both run
# as "nobody" (setpriv or runuser) on private copies of the plugin and the
# captures ($tmp/pcaps). Exits 77 (ctest skip) only when tshark is not
# installed. IWK_PRELOAD (set by CMake for sanitizer builds) is preloaded
# into tshark.

iwk_tshark_setup() {
  so=$1
  pcaps=$2
  tshark=${3:-}
  if [ -z "$tshark" ] || ! [ -x "$tshark" ]; then
    echo "SKIP: tshark not installed (apt-get install tshark)"
    exit 77
  fi
  [ -f "$so" ] || { echo "FAIL: plugin $so not built"; exit 1; }

  ver=$("$tshark" --version 2>/dev/null | head -1 | sed -n 's/.* \([0-9]\+\)\.\([0-9]\+\)\.[0-9]\+.*/\1.\2/p')
  [ -n "$ver" ] || { echo "FAIL: cannot read tshark's version"; exit 1; }

  tmp=$(mktemp -d /tmp/iwk-tshark.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
  chmod 755 "$tmp"
  mkdir -p "$tmp/plugins/$ver/epan" "$tmp/noplugins" "$tmp/pcaps" "$tmp/out"
  cp "$so" "$tmp/plugins/$ver/epan/iwarpkit.so"
  cp "$pcaps"/*.pcap "$tmp/pcaps/"
  if ls "$pcaps"/storage/*.pcap >/dev/null 2>&1; then
    mkdir -p "$tmp/pcaps/storage"
    cp "$pcaps"/storage/*.pcap "$tmp/pcaps/storage/"
  fi
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
        ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
  # Stock tshark (ts_stock) loads no code of ours: no runtime to preload.
  envv_stock=("${envv[@]}")
  if [ -n "${IWK_PRELOAD:-}" ]; then
    envv+=(LD_PRELOAD="$IWK_PRELOAD")
  fi

  if ! ts -G protocols 2>"$tmp/err" | grep "	iwk_mpa$" >/dev/null; then
    echo "FAIL: the iwarpkit plugin did not load into tshark ($tshark, plugin dir $tmp/plugins/$ver/epan)"
    cat "$tmp/err"
    exit 1
  fi
  echo "plugin loaded: iwk_mpa, iwk_ddp, iwk_rdmap registered by $so"
}

ts() { (cd "$tmp" && "${run[@]}" "${envv[@]}" WIRESHARK_PLUGIN_DIR="$tmp/plugins" "$tshark" "$@"); }
ts_stock() { (cd "$tmp" && "${run[@]}" "${envv_stock[@]}" WIRESHARK_PLUGIN_DIR="$tmp/noplugins" "$tshark" "$@"); }
