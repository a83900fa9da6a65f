#!/usr/bin/env bash
# The main job: build iwarpkit and decode the bundled sample stream with
# iwarp-decode (readable text, then the JSON lines written to out/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh

cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"$(nproc 2>/dev/null || echo 2)"

decode=build/release/reference-stack/tools/iwarp-decode
sample=reference-stack/tools/samples/mpa-v2-markers-crc.hex
mkdir -p out
echo "== iwarp-decode --hex --text $sample"
"$decode" --hex --text "$sample"
"$decode" --hex --json "$sample" > out/sample-decode.jsonl
echo "== JSON lines written to out/sample-decode.jsonl"
