#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# libFuzzer campaign over the fuzz targets, then (with -m) corpus
# minimization back into fuzz/corpus/<target>/.
#
#   fuzz/run-libfuzzer-campaign.sh [-t SECONDS] [-b BUILD_DIR] [-o OUT_DIR] [-m] [TARGET...]
#
# Defaults: 300 s per target, build/fuzz (clang, -DIW_FUZZ=ON), out/libfuzzer/,
# every target in fuzz/fuzzers.txt. Each target runs under nice -n 19 with
# -jobs=1 on OUT_DIR/<target>/corpus (seeded from fuzz/corpus/<target>/ and
# kept between runs, so campaigns add up), and prints wall and CPU seconds,
# executions, exec/s, cov, ft and crashes. Crash inputs land in
# OUT_DIR/<target>/artifacts/. FUZZ_BIN_DIR=dir uses prebuilt binaries
# instead of building.
#
# -m merges the campaign corpus into fuzz/corpus/<target>/ with -merge=1:
# the named seeds stay, and only inputs that add coverage are added (named
# by SHA-1), so the committed corpus stays small. -t 0 -m only merges.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
secs=300 build=$repo/build/fuzz out=$repo/out/libfuzzer merge=0
while getopts "t:b:o:mh" opt; do
  case $opt in
    t) secs=$OPTARG ;;
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    m) merge=1 ;;
    *) sed -n '2,18p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if (($#)); then targets=("$@"); else mapfile -t targets < <(awk '/^[a-z0-9_]+( +[a-z]+)*$/ {print $1}' "$repo/fuzz/fuzzers.txt"); fi

bin=${FUZZ_BIN_DIR:-}
if [ -z "$bin" ]; then
  cmake -S "$repo" -B "$build" -DCMAKE_C_COMPILER=clang -DIW_FUZZ=ON -DIW_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  nice -n 19 cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >/dev/null
  bin=$build/fuzz
fi

for t in "${targets[@]}"; do
  d=$out/$t
  max_len=$(sed -n 's/^max_len *= *//p' "$repo/fuzz/$t.options")
  # The target's other libFuzzer options (detect_leaks, ...), as OSS-Fuzz passes them.
  mapfile -t opts < <(sed -n 's/^\([a-z_]*\) *= *\(.*\)$/-\1=\2/p' "$repo/fuzz/$t.options" |
                      grep -v -e '^-dict=' -e '^-max_len=' || true)
  mkdir -p "$d/corpus" "$d/artifacts"
  cp -n "$repo/fuzz/corpus/$t"/* "$d/corpus/" 2>/dev/null || true

  if ((secs > 0)); then
    stamp=$d/.campaign-start # artifacts of earlier campaigns are not this one's
    : >"$stamp"
    # -jobs=1 runs one worker process that logs to fuzz-0.log in the cwd.
    # /usr/bin/time adds the worker's CPU seconds (the machine is shared:
    # wall time overstates the fuzzing done).
    (cd "$d" && nice -n 19 /usr/bin/time -f '%U %S' -o "$d/cpu" \
      "$bin/$t" -jobs=1 -max_total_time="$secs" -rss_limit_mb=2048 \
      -max_len="$max_len" "${opts[@]}" -dict="$repo/fuzz/dict/$t.dict" -print_final_stats=1 \
      -artifact_prefix="$d/artifacts/" corpus >/dev/null 2>&1) || true
    log=$d/fuzz-$(date +%Y%m%d-%H%M%S).log
    mv "$d/fuzz-0.log" "$log"
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cpu=$(awk '{printf "%d", $1 + $2}' "$d/cpu" 2>/dev/null || echo "?")
    # Slow units are reported apart: on a shared machine a niced fuzzer
    # sees 10-20 s stalls that replay in a fraction of a second.
    printf '%-18s %ss wall, %ss CPU, execs %s, exec/s %s, %s, %s, crashes: %s, slow units: %s\n' \
      "$t" "$secs" "$cpu" \
      "$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")" \
      "$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")" \
      "$(grep -o 'cov: [0-9]*' <<<"$last")" "$(grep -o 'ft: [0-9]*' <<<"$last")" \
      "$(find "$d/artifacts" -type f -newer "$stamp" ! -name 'slow-unit-*' | wc -l)" \
      "$(find "$d/artifacts" -type f -newer "$stamp" -name 'slow-unit-*' | wc -l)"
    grep -m1 -E 'invariant violated|ERROR: AddressSanitizer|runtime error' "$log" | sed 's/^/    /' || true
  fi

  if ((merge)); then
    # Named seeds first (they document content), then what adds coverage.
    min=$(mktemp -d)
    find "$repo/fuzz/corpus/$t" -type f ! -regex '.*/[0-9a-f]\{40\}' -exec cp {} "$min/" \;
    nice -n 19 "$bin/$t" -merge=1 -max_len="$max_len" "${opts[@]}" -rss_limit_mb=2048 "$min" \
      "$repo/fuzz/corpus/$t" "$d/corpus" >"$d/merge.log" 2>&1
    rm -rf "$repo/fuzz/corpus/$t" && mv "$min" "$repo/fuzz/corpus/$t" && chmod 755 "$repo/fuzz/corpus/$t"
    echo "    merged: $(ls "$repo/fuzz/corpus/$t" | wc -l) files, $(du -sh "$repo/fuzz/corpus/$t" | cut -f1)"
  fi
done
