#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seeds from captures.

    fuzz/pcap-seeds.py [--target fuzz_mpa_deframe|fuzz_plugin] OUT_DIR PCAP...

fuzz_mpa_deframe (the default): each TCP direction of each pcap, reassembled
in sequence order, becomes one input whose chunk lengths are the capture's
own first segment sizes (so the seed splits the stream where the network
did). Input layout (see fuzz/fuzz_mpa_deframe.c): [cfg][stream_pos:4]
[nsplit][nsplit x chunk:2][stream]. A stream that opens with an MPA key
starts in IW_DF_START_RR, anything else in IW_DF_START_FPDU at grid
position 0; markers and CRC are AUTO.

fuzz_plugin: each capture's TCP payload segments, in capture order, become
the records of one fuzz_plugin input ([cfg][ctl][len:2][octets]...; see
fuzz/fuzz_plugin.c): ctl bit 0 is the direction (0: whoever sent first),
bit 1 marks a segment that starts before the data already sent in its
direction (a retransmission). Two seeds per capture: the dissector bound
by Decode As, and found by the heuristic (mid-stream when the capture has
no SYN).

Inputs are cut to the target's max_len. Classic little/big-endian pcap with
Ethernet + IPv4/IPv6 only."""
import os
import struct
import sys

MAX_LEN = 8192  # fuzz_mpa_deframe.options
PLUGIN_MAX_LEN = 16384  # fuzz_plugin.options
START_RR, START_FPDU = 2, 3  # iw_df_start - IW_DF_START_REQUEST


def packets(path):
    data = open(path, "rb").read()
    magic = data[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    if struct.unpack(endian + "I", data[20:24])[0] != 1:
        raise SystemExit(f"{path}: not Ethernet")
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def tcp_segments(frame):
    etype, p = struct.unpack(">H", frame[12:14])[0], 14
    while etype == 0x8100:  # VLAN
        etype, p = struct.unpack(">H", frame[p + 2:p + 4])[0], p + 4
    if etype == 0x0800:
        ihl = (frame[p] & 0xF) * 4
        proto, src, dst = frame[p + 9], frame[p + 12:p + 16], frame[p + 16:p + 20]
        total = struct.unpack(">H", frame[p + 2:p + 4])[0]
        seg, end = p + ihl, p + total
    elif etype == 0x86DD:
        proto, src, dst = frame[p + 6], frame[p + 8:p + 24], frame[p + 24:p + 40]
        seg, end = p + 40, p + 40 + struct.unpack(">H", frame[p + 4:p + 6])[0]
    else:
        return None
    if proto != 6:
        return None
    sport, dport, seq = struct.unpack(">HHI", frame[seg:seg + 8])
    flags = frame[seg + 13]
    doff = (frame[seg + 12] >> 4) * 4
    return (src, sport, dst, dport), seq, flags, frame[seg + doff:end]


def streams(path):
    """{direction: (isn, [(seq, payload)])} in first-seen order."""
    out = {}
    for frame in packets(path):
        t = tcp_segments(frame)
        if t is None:
            continue
        key, seq, flags, payload = t
        isn, segs = out.setdefault(key, [None, []])
        if flags & 0x02:  # SYN: data starts at ISN + 1
            out[key][0] = seq + 1
        elif isn is None:
            out[key][0] = seq
        if payload:
            segs.append((seq, payload))
    return out


def reassemble(isn, segs):
    buf, sizes = bytearray(), []
    for seq, payload in sorted(segs, key=lambda s: (s[0] - isn) & 0xFFFFFFFF):
        rel = (seq - isn) & 0xFFFFFFFF
        if rel + len(payload) <= len(buf):
            continue  # retransmission
        payload = payload[len(buf) - rel:] if rel < len(buf) else payload
        buf += payload
        sizes.append(len(payload))
    return bytes(buf), sizes


def plugin_seeds(out_dir, path):
    name = os.path.splitext(os.path.basename(path))[0]
    first, nxt, recs, syn = None, {}, b"", False
    for frame in packets(path):
        t = tcp_segments(frame)
        if t is None:
            continue
        key, seq, flags, payload = t
        syn |= bool(flags & 0x02)
        if first is None:
            first = key
        if flags & 0x02:
            nxt[key] = seq + 1
        if not payload:
            continue
        d = 0 if key == first else 1
        exp = nxt.get(key, seq)
        ctl = d | (0x02 if ((seq - exp) & 0xFFFFFFFF) >= 0x80000000 else 0)
        recs += struct.pack(">BH", ctl, len(payload)) + payload
        nxt[key] = max(exp, seq + len(payload)) if ctl & 0x02 else seq + len(payload)
    if not recs:
        return
    # cfg: TCP and MPA reassembly, CRC checks; bit 0 Decode As, bit 3 mid-stream.
    for suffix, cfg in (("decode_as", 0x27), ("heuristic", 0x26 | (0 if syn else 0x08))):
        fname = f"capture_{name}_{suffix}"
        with open(os.path.join(out_dir, fname), "wb") as f:
            f.write((bytes([cfg]) + recs)[:PLUGIN_MAX_LEN])
        print(f"{fname}: {len(recs)} octets of records")


def main():
    args = sys.argv[1:]
    target = "fuzz_mpa_deframe"
    if args[:1] == ["--target"]:
        target, args = args[1], args[2:]
    out_dir, pcaps = args[0], args[1:]
    if target == "fuzz_plugin":
        os.makedirs(out_dir, exist_ok=True)
        for path in pcaps:
            plugin_seeds(out_dir, path)
        return
    if target != "fuzz_mpa_deframe":
        raise SystemExit(f"unknown target {target}")
    os.makedirs(out_dir, exist_ok=True)
    for path in pcaps:
        name = os.path.splitext(os.path.basename(path))[0]
        for i, (isn, segs) in enumerate(streams(path).values()):
            if not segs:
                continue
            stream, sizes = reassemble(isn, segs)
            chunks = sizes[:15]
            start = START_RR if stream.startswith(b"MPA ID Re") else START_FPDU
            head = bytes([start]) + struct.pack(">IB", 0, len(chunks))
            head += b"".join(struct.pack(">H", min(c, 0xFFFF)) for c in chunks)
            seed = (head + stream)[:MAX_LEN]
            fname = f"capture_{name}_{'abcdefghijklmnopqrstuvwxyz'[i % 26]}"
            with open(os.path.join(out_dir, fname), "wb") as f:
                f.write(seed)
            print(f"{fname}: {len(stream)} octets in {len(sizes)} segments")


if __name__ == "__main__":
    main()
