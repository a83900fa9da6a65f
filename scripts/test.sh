#!/usr/bin/env bash
# Runs every test: a gcc build, then the same suite built with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer, where leaks fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh

jobs=$(nproc 2>/dev/null || echo 2)

echo "== gcc build and tests"
cmake -S . -B build/gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/gcc -j"$jobs"
mkdir -p build
ctest --test-dir build/gcc --output-on-failure -j"$jobs" | tee build/ctest-gcc.log

echo "== clang + ASan + UBSan build and tests"
cmake -S . -B build/asan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DIW_SANITIZE=ON >/dev/null
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs" | tee build/ctest-asan.log

echo "== libFuzzer smoke: each harness in fuzz/fuzzers.txt fuzzes briefly under ASan + UBSan"
cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DIW_FUZZ=ON \
  -DIW_FUZZ_SMOKE_SECONDS=15 -DIW_BUILD_BENCH=OFF >/dev/null
mapfile -t fuzzers < <(grep -E '^fuzz_' fuzz/fuzzers.txt | awk '{print $1}')
cmake --build build/fuzz -j"$jobs" --target "${fuzzers[@]}"
ctest --test-dir build/fuzz -L fuzz-smoke --output-on-failure -j"$jobs" | tee build/ctest-fuzz.log

# Interop with Linux soft-iWARP in a qemu guest (docs/siw.md): run when this
# machine can (root, the Debian mirror, time left), reported either way but
# not yet a gate while the interop work is in progress. IWK_SIW=0 skips it.
if [ "${IWK_SIW:-1}" != 0 ]; then
  echo "== siw interop (ctest -L siw, opt-in, at most 20 min)"
  siw_rc=0
  timeout 1200 ctest --test-dir build/gcc -L siw --output-on-failure || siw_rc=$?
  case $siw_rc in
    0) echo "siw interop: PASSED (or SKIPPED, see above)";;
    124) echo "siw interop: TIMED OUT after 20 min (not a gate yet)";;
    *) echo "siw interop: FAILED with status $siw_rc (not a gate yet; see output above)";;
  esac
fi

# One closing line for the gated runs: "N passed, N failed, N skipped".
summary() { # ctest log -> "passed failed skipped"
  local total failed notrun
  total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$1" | tail -1)
  failed=$(sed -n 's/.*passed, \([0-9]*\) tests failed out of.*/\1/p' "$1" | tail -1)
  notrun=$(grep -c -E 'Not Run|\*\*\*Skipped| Skipped ' "$1" || true)
  echo "$(( ${total:-0} - ${failed:-0} )) ${failed:-0} ${notrun:-0}"
}
read -r p1 f1 s1 < <(summary build/ctest-gcc.log)
read -r p2 f2 s2 < <(summary build/ctest-asan.log)
read -r p3 f3 s3 < <(summary build/ctest-fuzz.log)
echo "tests: $((p1 + p2 + p3)) passed, $((f1 + f2 + f3)) failed, $((s1 + s2 + s3)) skipped"
