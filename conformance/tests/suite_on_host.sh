#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The whole suite against iwarp-target whose agent listens on HOST (not
# 127.0.0.1): the runner must send listen's host and connect there, the
# target must serve RDMA on that address. Exit 77 (skipped) when HOST
# cannot be bound here, e.g. no IPv6 loopback.
#   suite_on_host.sh TARGET CONFORM CASES DEVIATIONS OUTDIR HOST
set -u
target=$1 conform=$2 cases=$3 devs=$4 out=$5 host=$6
case $host in *:*) hp="[$host]" ;; *) hp=$host ;; esac
if ! /usr/bin/python3 -c "import socket,sys; h=sys.argv[1]
s=socket.socket(socket.AF_INET6 if ':' in h else socket.AF_INET); s.bind((h,0))" "$host" 2>/dev/null
then
    echo "suite_on_host: cannot bind $host on this machine (no such loopback address): skipped"
    exit 77
fi
rm -rf "$out" && mkdir -p "$out" || exit 1
# a free port on HOST, from the kernel
port=$(/usr/bin/python3 -c "import socket,sys; h=sys.argv[1]
s=socket.socket(socket.AF_INET6 if ':' in h else socket.AF_INET); s.bind((h,0)); print(s.getsockname()[1])" "$host")
"$target" --agent "$hp:$port" >"$out/target.log" 2>&1 &
tpid=$!
trap 'kill $tpid 2>/dev/null; wait $tpid 2>/dev/null' EXIT
i=0
while ! grep -q "agent protocol on" "$out/target.log" 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 100 ] && { echo "iwarp-target did not start on $hp:$port"; cat "$out/target.log"; exit 1; }
    sleep 0.05
done
"$conform" --agent "$hp:$port" --cases "$cases" --deviations "$devs" --out "$out/run" --no-color \
    >"$out/console.txt" 2>&1
rc=$?
tail -3 "$out/console.txt"
[ $rc -eq 0 ] || { echo "iwarp-conform against $hp exited $rc (0 expected)"; grep -A3 -E "^\[.*(FAIL|ERROR|NOTRUN)" "$out/console.txt" | head -40; exit 1; }
grep -q '"fail":0' "$out/run/results.json" && grep -q '"error":0' "$out/run/results.json" ||
    { echo "results.json counts failures or errors"; exit 1; }
# the RDMA connections really went to HOST: the target logs nothing else, so
# ask the kernel-independent witness, the pcaps' addresses (IPv4 only)
case $host in
*:*) ;;
*)  /usr/bin/python3 - "$out/run/pcaps/positive.write-small.pcap" "$host" <<'PY' || exit 1
import socket, struct, sys
data = open(sys.argv[1], 'rb').read()
want = socket.inet_aton(sys.argv[2])
off, seen = 24, set()
while off + 16 <= len(data):
    incl = struct.unpack_from('<I', data, off + 8)[0]
    pkt = data[off + 16: off + 16 + incl]
    if len(pkt) >= 34 and pkt[12:14] == b'\x08\x00':
        seen.add(pkt[26:30]); seen.add(pkt[30:34])
    off += 16 + incl
if want not in seen:
    print("the pcap of positive.write-small has no packet to or from", sys.argv[2], [socket.inet_ntoa(a) for a in seen])
    sys.exit(1)
PY
    ;;
esac
echo "suite_on_host: the whole suite passed against iwarp-target on $hp"
