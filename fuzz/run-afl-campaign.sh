#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# AFL++ campaign over the fuzz targets: per target, a main instance and a
# CmpLog secondary (-c) side by side for the given time, then a report of
# each instance's stats and of every crash, replayed to show the invariant.
#
#   fuzz/run-afl-campaign.sh [-t SECONDS] [-b BUILD_DIR] [-o OUT_DIR] [TARGET...]
#
# Defaults: 600 s per target, build/afl, out/afl-<date>/, every target in
# fuzz/fuzzers.txt. Builds with CC=afl-clang-fast -DIW_FUZZ=ON
# -DIW_FUZZ_ENGINE=afl (installs Debian's afl++ when missing and run as
# root). Runs under nice -n 19. Exit status 1 when any crash was saved.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
secs=600 build=$repo/build/afl out=$repo/out/afl-$(date +%Y%m%d-%H%M%S)
while getopts "t:b:o:h" opt; do
  case $opt in
    t) secs=$OPTARG ;;
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if (($#)); then targets=("$@"); else mapfile -t targets < <(awk '/^[a-z0-9_]+( +[a-z]+)*$/ {print $1}' "$repo/fuzz/fuzzers.txt"); fi

if ! command -v afl-clang-fast >/dev/null; then
  [ "$(id -u)" -eq 0 ] || { echo "afl++ is missing: apt-get install afl++" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq afl++ >/dev/null
fi

# Build: <t>_afl (ASan + UBSan, persistent mode through AFL++'s libFuzzer
# driver), <t>_cmplog (AFL_LLVM_CMPLOG=1) and <t>_replay for the report.
CC=afl-clang-fast cmake -S "$repo" -B "$build" -DIW_FUZZ=ON -DIW_FUZZ_ENGINE=afl \
  -DIW_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
build_targets=()
for t in "${targets[@]}"; do build_targets+=("${t}_afl" "${t}_cmplog" "${t}_replay"); done
AFL_QUIET=1 nice -n 19 cmake --build "$build" -j"$(nproc)" --target "${build_targets[@]}" >/dev/null

# The machine is shared: no CPU pinning, no cpufreq or core_pattern demands.
export AFL_NO_AFFINITY=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
export AFL_NO_UI=1

afl_stat() { sed -n "s/^$2 *: *//p" "$1/fuzzer_stats" 2>/dev/null || true; }
crashes=0
mkdir -p "$out"
for t in "${targets[@]}"; do
  bin=$build/fuzz
  max_len=$(sed -n 's/^max_len *= *//p' "$repo/fuzz/$t.options")
  common=(-i "$repo/fuzz/corpus/$t" -o "$out/$t" -x "$repo/fuzz/dict/$t.dict" -G "$max_len" -V "$secs")
  echo "== $t: ${secs}s, main + cmplog secondary"
  nice -n 19 afl-fuzz "${common[@]}" -M main -- "$bin/${t}_afl" >"$out/$t-main.log" 2>&1 &
  main=$!
  sleep 2 # let the main instance create the output directory
  nice -n 19 afl-fuzz "${common[@]}" -S cmplog -c "$bin/${t}_cmplog" -l 2 -- "$bin/${t}_afl" \
    >"$out/$t-cmplog.log" 2>&1 &
  wait "$main" $! || true
  for inst in main cmplog; do
    d=$out/$t/$inst
    printf '   %-7s execs %s, %s exec/s, edges %s, coverage %s, crashes %s\n' "$inst" \
      "$(afl_stat "$d" execs_done)" "$(afl_stat "$d" execs_per_sec)" "$(afl_stat "$d" edges_found)" \
      "$(afl_stat "$d" bitmap_cvg)" "$(afl_stat "$d" saved_crashes)"
    for c in "$d"/crashes/id:*; do
      [ -e "$c" ] || continue
      crashes=$((crashes + 1))
      if log=$("$bin/${t}_replay" "$c" 2>&1); then
        why="did not reproduce in ${t}_replay"
      else
        why=$(grep -m1 -E 'invariant|ERROR|runtime error' <<<"$log" || tail -1 <<<"$log")
      fi
      echo "   crash $c"
      echo "         $why"
    done
  done
done
echo "AFL++ outputs in $out; $crashes crash(es)."
((crashes == 0))
