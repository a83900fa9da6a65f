#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ctest fuzz_ossbuild: runs oss-fuzz/build.sh the way OSS-Fuzz does (clang,
# ASan, $LIB_FUZZING_ENGINE=-fsanitize=fuzzer, $SRC/iwarpkit holding the
# sources), checks that $OUT has every target with a seed corpus zip holding
# all of fuzz/corpus/<target>/, its dictionary and options, and that each
# target starts and runs (the empty input: replaying the corpora is the
# fuzz-replay tests' job).
#   test-build.sh SOURCE_DIR SCRATCH_DIR
# Exit 77 (ctest: skipped) when clang or its libFuzzer runtime is missing.
set -euo pipefail
srcdir=$(cd "$1" && pwd)
scratch=$2
skip() { echo "SKIPPED: $*"; exit 77; }

command -v clang >/dev/null || skip "clang not found (scripts/deps.sh installs it)"
command -v clang++ >/dev/null || skip "clang++ not found (scripts/deps.sh installs it)"
command -v zip >/dev/null && command -v unzip >/dev/null ||
  skip "zip/unzip not found (apt-get install zip unzip)"
rm -rf "$scratch"
mkdir -p "$scratch/src" "$scratch/out" "$scratch/work"
probe=$scratch/work/probe
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);\n%s\n' \
  'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
  > "$probe.c"
clang -fsanitize=fuzzer "$probe.c" -o "$probe" 2>/dev/null ||
  skip "clang's libFuzzer runtime is missing (apt-get install libclang-rt-dev)"

ln -s "$srcdir" "$scratch/src/iwarpkit"
export SRC=$scratch/src OUT=$scratch/out WORK=$scratch/work
export CC=clang CXX=clang++ LIB_FUZZING_ENGINE=-fsanitize=fuzzer
export CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
bash "$srcdir/fuzz/oss-fuzz/build.sh"

fail=0
while read -r t needs; do
  if [[ " $needs " == *" wireshark "* ]] && ! pkg-config --exists wireshark 2>/dev/null; then
    echo "skipped: $t (needs libwireshark, as build.sh says)"
    continue
  fi
  for f in "$t" "${t}_seed_corpus.zip" "$t.dict" "$t.options"; do
    [ -s "$OUT/$f" ] || { echo "missing: \$OUT/$f"; fail=1; }
  done
  [ -x "$OUT/$t" ] || continue
  n=$(unzip -Z1 "$OUT/${t}_seed_corpus.zip" | wc -l)
  want=$(find "$srcdir/fuzz/corpus/$t" -type f | wc -l)
  [ "$n" -gt 0 ] && [ "$n" -eq "$want" ] || { echo "$t: zip has $n seeds, corpus $want"; fail=1; }
  empty=$WORK/empty-$t
  mkdir -p "$empty"
  if ! "$OUT/$t" -runs=0 "$empty" >"$WORK/$t.log" 2>&1; then
    echo "$t does not run:"; tail -20 "$WORK/$t.log"; fail=1
  else
    echo "ok: $t ($n seeds zipped, dict, options; runs)"
  fi
done < <(grep -E '^[a-z0-9_]+( +[a-z]+)*$' "$srcdir/fuzz/fuzzers.txt")
ls -l "$OUT"
exit $fail
