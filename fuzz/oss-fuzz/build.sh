#!/bin/bash -eu
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
# The library is compiled straight from reference-stack/src/*.c with $CFLAGS,
# without CMake, so the project's -Werror meets no newer compiler's warnings.

src=${IWARPKIT_SRC:-$SRC/iwarpkit}
work=${WORK:-$(mktemp -d)}/iwarpkit-build
: "${CXX:=clang++}" "${CXXFLAGS:=$CFLAGS}"
mkdir -p "$work/obj" "$OUT"

cflags=(-std=c11 -D_DEFAULT_SOURCE -I"$src/reference-stack/include" -I"$src/reference-stack/src")

# libiwarp: every library source, instrumented by $CFLAGS.
rm -f "$work"/obj/*.o "$work/libiwarp.a"
for c in "$src"/reference-stack/src/*.c; do
  $CC $CFLAGS "${cflags[@]}" -c "$c" -o "$work/obj/$(basename "${c%.c}").o"
done
ar rcs "$work/libiwarp.a" "$work"/obj/*.o

# Link with $CXX: engines other than libFuzzer ship as C++ static libraries.
grep -E '^[a-z0-9_]+$' "$src/fuzz/fuzzers.txt" | while read -r target; do
  $CC $CFLAGS "${cflags[@]}" -c "$src/fuzz/$target.c" -o "$work/$target.o"
  $CXX $CXXFLAGS "$work/$target.o" "$work/libiwarp.a" $LIB_FUZZING_ENGINE -o "$OUT/$target"
  cp "$src/fuzz/dict/$target.dict" "$OUT/$target.dict"
  cp "$src/fuzz/$target.options" "$OUT/$target.options"
  rm -f "$OUT/${target}_seed_corpus.zip"
  (cd "$src/fuzz/corpus/$target" && zip -q -X -r "$OUT/${target}_seed_corpus.zip" .)
  echo "built $OUT/$target"
done
