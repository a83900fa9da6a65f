#!/bin/bash -eu
# SPDX-License-Identifier: GPL-2.0-or-later
# OSS-Fuzz / ClusterFuzzLite build for iwarpkit (also used by
# .clusterfuzzlite/build.sh). Builds every target named in fuzz/fuzzers.txt
# and writes, per target, into $OUT:
#   <target>                    linked with $LIB_FUZZING_ENGINE
#   <target>_seed_corpus.zip    fuzz/corpus/<target>/
#   <target>.dict, <target>.options
# Every output name comes from the one list, so a new harness is one line in
# fuzzers.txt (the ngtcp2 slip, a zip named after the wrong target, cannot
# happen here).
#
# Environment (set by OSS-Fuzz): CC CFLAGS CXX CXXFLAGS LIB_FUZZING_ENGINE OUT
# SRC [WORK]. The sources are $SRC/iwarpkit unless IWARPKIT_SRC says otherwise.
# The library is compiled straight from reference-stack/lib/src/*.c with $CFLAGS,
# without CMake, so the project's -Werror meets no newer compiler's warnings.

src=${IWARPKIT_SRC:-$SRC/iwarpkit}
work=${WORK:-$(mktemp -d)}/iwarpkit-build
: "${CXX:=clang++}" "${CXXFLAGS:=$CFLAGS}"
mkdir -p "$work/obj" "$OUT"

# <iwarp/version.h> from its template, as CMake makes it: the version is the
# one in project(VERSION).
ver=$(sed -n 's/^project(iwarpkit VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
IFS=. read -r vmaj vmin vpat <<<"$ver"
mkdir -p "$work/include/iwarp"
sed -e "s/@PROJECT_VERSION_MAJOR@/$vmaj/" -e "s/@PROJECT_VERSION_MINOR@/$vmin/" \
    -e "s/@PROJECT_VERSION_PATCH@/$vpat/" -e "s/@PROJECT_VERSION@/$ver/" \
    "$src/reference-stack/lib/include/iwarp/version.h.in" >"$work/include/iwarp/version.h"

cflags=(-std=c11 -D_DEFAULT_SOURCE -I"$src/reference-stack/lib/include" -I"$work/include"
        -I"$src/reference-stack/lib/src")

# libiwarp: every library source, instrumented by $CFLAGS.
rm -f "$work"/obj/*.o "$work/libiwarp.a"
for c in "$src"/reference-stack/lib/src/*.c; do
  $CC $CFLAGS "${cflags[@]}" -c "$c" -o "$work/obj/$(basename "${c%.c}").o"
done
ar rcs "$work/libiwarp.a" "$work"/obj/*.o

# A line of fuzzers.txt is "<target> [needs...]"; each need adds sources,
# compiled with the target's flags. "wireshark" needs libwireshark's
# development files (pkg-config wireshark) at build time and its shared
# libraries at run time: OSS-Fuzz's images have neither, so there the plugin
# harness is skipped with a message (docs/fuzzing.md).
# Link with $CXX: engines other than libFuzzer ship as C++ static libraries.
grep -E '^[a-z0-9_]+( +[a-z]+)*$' "$src/fuzz/fuzzers.txt" | while read -r target needs; do
  extra=() flags=("${cflags[@]}") libs=()
  for need in $needs; do
    case $need in
      peer)
        extra+=("$src/reference-stack/peer/iw_peer.c")
        flags+=(-I"$src/reference-stack/peer") ;;
      diff)
        extra+=("$src/fuzz/fuzz_diff_core.c") ;;
      agent)
        extra+=("$src/reference-stack/agent/iw_agent.c" "$src/reference-stack/util/iw_json.c")
        flags+=(-I"$src/reference-stack/agent" -I"$src/reference-stack/util") ;;
      case)
        extra+=("$src"/conformance/src/iwc_case.c "$src"/conformance/src/iwc_dev.c
                "$src"/conformance/src/iwc_util.c "$src/reference-stack/util/iw_json.c")
        flags+=(-I"$src/conformance/src" -I"$src/reference-stack/util") ;;
      wireshark)
        if ! pkg-config --exists wireshark 2>/dev/null; then
          echo "skipped $target: libwireshark development files not found (pkg-config wireshark)"
          continue 2
        fi
        extra+=("$src"/dissector/plugin.c "$src"/dissector/packet-iwarpkit-*.c "$src/fuzz/fuzz_epan.c")
        # glib's headers need GNU extensions, as for the plugin's own build.
        flags+=(-std=gnu11 $(pkg-config --cflags wireshark) -I"$src/dissector"
                -DIWK_PLUGIN_VERSION=\"fuzz\")
        libs+=($(pkg-config --libs wireshark) -lwiretap) ;; # wtap_init: not in wireshark.pc
      *)
        echo "fuzzers.txt: $target: unknown need '$need'" >&2
        exit 1 ;;
    esac
  done
  objs=()
  for c in "$src/fuzz/$target.c" "${extra[@]}"; do
    o=$work/$target-$(basename "${c%.c}").o
    $CC $CFLAGS "${flags[@]}" -c "$c" -o "$o"
    objs+=("$o")
  done
  $CXX $CXXFLAGS "${objs[@]}" "$work/libiwarp.a" "${libs[@]}" $LIB_FUZZING_ENGINE -o "$OUT/$target"
  cp "$src/fuzz/dict/$target.dict" "$OUT/$target.dict"
  cp "$src/fuzz/$target.options" "$OUT/$target.options"
  rm -f "$OUT/${target}_seed_corpus.zip"
  (cd "$src/fuzz/corpus/$target" && zip -q -X -r "$OUT/${target}_seed_corpus.zip" .)
  echo "built $OUT/$target"
done
