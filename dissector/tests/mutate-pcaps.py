#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Deterministic mutants of the captures in pcaps/ for the differential test.

   mutate-pcaps.py PCAPS_DIR OUT_DIR [SEED]

From each classic-pcap Ethernet/IPv4 capture in PCAPS_DIR, seeded mutations:
  flip   1-3 octets of TCP payload XORed with a random non-zero value
  trunc  the capture ends after a random payload segment
  cut    the capture starts at a random payload segment (mid-stream)
  drop   one payload segment is missing (a capture gap)
  dup    one payload segment is captured twice (a retransmission)
Each mutant is written to OUT_DIR/NAME.pcap. All mutants are also written,
one after the other, to OUT_DIR/all.pcap, each with its own IPv4 addresses
(second and third octets replaced by the mutant's number, the header checksum
recomputed) so that their connections stay apart and both tools read them in
one run; OUT_DIR/ranges lists "NAME FIRST LAST" (frames of all.pcap).
"""
import os
import random
import struct
import sys
import zlib

KINDS = ("flip", "trunc", "cut", "drop", "dup")
PER_SEED = 3  # mutants per capture, the kinds taken in turn from one its name picks


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24 or data[:4] not in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        return None  # pcapng or big-endian: not mutated here
    if struct.unpack_from("<I", data, 20)[0] != 1:
        return None  # Ethernet only
    pkts, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack_from("<IIII", data, off)
        body = data[off + 16:off + 16 + incl]
        if len(body) != incl:
            break
        pkts.append([sec, frac, orig, bytearray(body)])
        off += 16 + incl
    return data[:24], pkts


def tcp_payload(p):
    """(start, end) of the TCP payload in an Ethernet/IPv4 frame, or None."""
    b = p[3]
    if len(b) < 34 or b[12:14] != b"\x08\x00" or b[23] != 6:
        return None
    ihl = (b[14] & 0x0F) * 4
    t = 14 + ihl
    if len(b) < t + 20:
        return None
    start = t + (b[t + 12] >> 4) * 4
    end = min(len(b), 14 + struct.unpack_from(">H", b, 16)[0])
    return (start, end) if end > start else None


def ip_csum(hdr):
    s = 0
    for i in range(0, len(hdr), 2):
        s += (hdr[i] << 8) | hdr[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def readdress(p, n):
    b = bytearray(p[3])
    if len(b) >= 34 and b[12:14] == b"\x08\x00":
        for a in (26, 30):
            b[a + 1], b[a + 2] = (n >> 8) & 0xFF, n & 0xFF
        ihl = (b[14] & 0x0F) * 4
        b[24:26] = b"\0\0"
        b[24:26] = struct.pack(">H", ip_csum(b[14:14 + ihl]))
    return [p[0], p[1], p[2], b]


def mutate(pkts, kind, rng):
    pkts = [[a, b, c, bytearray(d)] for a, b, c, d in pkts]
    data = [i for i, p in enumerate(pkts) if tcp_payload(p)]
    if not data:
        return None
    i = rng.choice(data)
    if kind == "flip":
        for _ in range(rng.randint(1, 3)):
            j = rng.choice(data)
            s, e = tcp_payload(pkts[j])
            pkts[j][3][rng.randrange(s, e)] ^= rng.randint(1, 255)
    elif kind == "trunc":
        pkts = pkts[:i + 1]
    elif kind == "cut":
        pkts = pkts[i:]
    elif kind == "drop":
        del pkts[i]
    elif kind == "dup":
        pkts.insert(i + 1, [pkts[i][0], pkts[i][1], pkts[i][2], bytearray(pkts[i][3])])
    return pkts


def write(path, hdr, pkts):
    with open(path, "wb") as f:
        f.write(hdr)
        for sec, frac, orig, body in pkts:
            f.write(struct.pack("<IIII", sec, frac, len(body), orig))
            f.write(body)


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    src, out = argv[1], argv[2]
    seed = int(argv[3]) if len(argv) == 4 else 6580
    os.makedirs(out, exist_ok=True)
    allp, ranges, hdr0, n = [], [], None, 0
    for name in sorted(os.listdir(src)):
        if not name.endswith(".pcap"):
            continue
        got = read_pcap(os.path.join(src, name))
        if not got:
            continue
        hdr, pkts = got
        if len(pkts) > 400:
            continue  # long captures add time, not cases
        hdr0 = hdr0 or hdr
        rng = random.Random(f"{seed}:{name}")
        # Each capture's mutants depend on its name and content only: a
        # capture added to pcaps/ leaves the others' mutants as they were.
        first = zlib.crc32(name.encode())
        for k in range(PER_SEED):
            kind = KINDS[(first + k) % len(KINDS)]
            m = mutate(pkts, kind, rng)
            if m:
                n += 1
                mname = f"{name[:-5]}.{kind}"
                write(os.path.join(out, mname + ".pcap"), hdr, m)
                ranges.append((mname, len(allp) + 1, len(allp) + len(m)))
                allp += [readdress(p, n) for p in m]
    if not allp:
        print("mutate-pcaps: no Ethernet capture to mutate", file=sys.stderr)
        return 2
    write(os.path.join(out, "all.pcap"), hdr0, allp)
    with open(os.path.join(out, "ranges"), "w") as f:
        for r in ranges:
            f.write("%s %d %d\n" % r)
    print(f"mutate-pcaps: {len(ranges)} mutants, {len(allp)} frames")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
