#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job: build iwarpkit, start the reference implementation under test
# (iwarp-target), run the whole conformance suite against it with
# iwarp-conform, over MPA/TCP and then over SCTP, and say where the reports
# are. Exit status is the runners': 0 when every case passed (or is a listed
# expected deviation) both times.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh

cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"$(nproc 2>/dev/null || echo 2)"

bin=build/release
out=out/conformance
port=${IWK_AGENT_PORT:-7400}
mkdir -p "$out"

"$bin/bin/iwarp-target" --agent "127.0.0.1:$port" 2> out/iwarp-target.log &
target=$!
trap 'kill "$target" 2>/dev/null; wait "$target" 2>/dev/null || true' EXIT
for _ in $(seq 50); do   # wait until the agent listens
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

echo "== iwarp-conform against iwarp-target (agent 127.0.0.1:$port)"
rc=0
"$bin/bin/iwarp-conform" --agent "127.0.0.1:$port" \
  --deviations conformance/deviations/iwarp-target.txt --out "$out" || rc=$?

# The same suite over DDP on SCTP (RFC 5043, usrsctp in UDP on loopback):
# the transport-independent cases and RFC 5043's own; MPA's are skipped.
echo
echo "== iwarp-conform --transport sctp against iwarp-target"
"$bin/bin/iwarp-conform" --agent "127.0.0.1:$port" --transport sctp \
  --deviations conformance/deviations/iwarp-target.txt --out "$out-sctp" || rc=$((rc ? rc : $?))

echo
echo "== reports in $out/ (over SCTP: $out-sctp/):"
echo "   report.html   pass/fail matrix by RFC section (open in a browser)"
echo "   junit.xml     JUnit XML for CI"
echo "   results.json  every case, outcome, RFC sections and reasons"
echo "   pcaps/        one capture per case (tshark, Wireshark, iwarp-decode)"
exit "$rc"
