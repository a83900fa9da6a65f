#!/usr/bin/env bash
# Regenerates the golden outputs in golden/ with a built iwarp-decode.
# Review every diff against the RFCs before committing: the goldens are the
# contract the ctest cases hold the tool to.
#   tools/tests/update_golden.sh path/to/iwarp-decode
set -euo pipefail
tool=${1:?usage: update_golden.sh path/to/iwarp-decode}
cd "$(dirname "$0")"
s=../samples g=golden i=inputs
run() { local out=$1; shift; "$tool" "$@" > "$g/$out" || [ $? -eq 1 ]; }
run mpa-v2-markers-crc.jsonl --json --hex $s/mpa-v2-markers-crc.hex
run mpa-v2-markers-crc.txt --text --hex $s/mpa-v2-markers-crc.hex
run mpa-v1-reply-nocrc.jsonl --json $s/mpa-v1-reply-nocrc.bin
run mpa-v1-reply-nocrc.txt --text $s/mpa-v1-reply-nocrc.bin
run mpa-v1-reply-nocrc.payload.jsonl --json --payload $s/mpa-v1-reply-nocrc.bin
run mpa-v1-reply-nocrc.payload.txt --text --payload $s/mpa-v1-reply-nocrc.bin
run violations.jsonl --json --hex $s/violations.hex
run violations.txt --text --hex $s/violations.hex
run initiator-initiator.jsonl --json --start reply --hex $s/mpa-v2-markers-crc.hex
run bad-key.jsonl --json --start any --hex $i/bad-key.hex
run request-only.jsonl --json --hex $i/request-only.hex
run truncated.jsonl --json --hex $i/truncated.hex
git diff --stat -- "$g" 2>/dev/null || true
