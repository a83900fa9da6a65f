#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Interop of two iWARP stacks through their agents (docs/agent-protocol.md).

    pair.py --ours HOST:PORT --siw HOST:PORT [options]

"ours" is iwarp-target (our reference stack) on the host, "siw" is
iwarp-agent on siw0 in the guest. For each configuration (who initiates,
MPA revision, CRC) the two connect, and in both directions run RDMA Write,
RDMA Read, Send and Send with Invalidate at several sizes; every octet is
checked (read_mr on the data sink, recv data), and every completion must be
ok. A Write to the invalidated STag must then fail, which proves the
invalidation took effect on the wire, not just in an event.

Addresses behind qemu's NAT: the host reaches a guest listener on port G
at 127.0.0.1:--siw-listen's host port; the guest reaches a host listener
at --guest-sees-host (10.0.2.100) on the same port as on the host.

Exit: 0 every configuration passed, 1 a check failed, 2 bad arguments or an
agent unreachable. One line per configuration and a JSON summary (--json).
Stdlib only: runs with Debian's /usr/bin/python3.
"""
import argparse
import json
import os
import socket
import sys
import time


class AgentError(Exception):
    pass


class Agent:
    """One agent-protocol connection: a JSON object per line each way."""

    def __init__(self, name, addr, timeout=60.0):
        host, _, port = addr.rpartition(":")
        if not host or not port.isdigit():
            raise AgentError(f"{name}: want HOST:PORT, got {addr!r}")
        self.name = name
        deadline = time.monotonic() + 10
        while True:
            try:
                self.sock = socket.create_connection((host, int(port)), timeout=5)
                break
            except OSError as e:
                if time.monotonic() > deadline:
                    raise AgentError(f"{name}: cannot reach the agent at {addr}: {e}")
                time.sleep(0.2)
        self.sock.settimeout(timeout)
        self.rf = self.sock.makefile("r", encoding="utf-8", newline="\n")
        self.events = []

    def call(self, op, **fields):
        req = dict(op=op, **fields)
        try:
            self.sock.sendall((json.dumps(req) + "\n").encode())
            line = self.rf.readline()
        except OSError as e:
            raise AgentError(f"{self.name}: {op}: agent connection failed: {e}")
        if not line:
            raise AgentError(f"{self.name}: {op}: the agent closed the connection")
        resp = json.loads(line)
        if not resp.get("ok"):
            raise AgentError(f"{self.name}: {op} refused: {resp.get('error')}")
        return resp

    def wait(self, etype, timeout=10.0, match=None):
        """The first unconsumed event of this type (and match), polling."""
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("type") == etype and (match is None or match(e)):
                    return self.events.pop(i)
            left = deadline - time.monotonic()
            if left <= 0:
                seen = [e.get("type") for e in self.events]
                raise AgentError(f"{self.name}: no '{etype}' event within {timeout} s "
                                 f"(pending: {seen})")
            self.events += self.call("poll", timeout_ms=int(min(left, 1.0) * 1000))["events"]

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def hexs(b):
    return b.hex()


def u(v):
    return int(v, 16) if isinstance(v, str) else int(v)


class Check(Exception):
    pass


def region(a, length, access):
    r = a.call("reg_mr", len=length, access=access)
    return u(r["stag"]), u(r["to"])


def read_back(a, stag, length, want, what, settle=5.0):
    """read_mr until the region holds want (a Write completes at its source
    before the sink has placed it), then compare octet by octet."""
    deadline = time.monotonic() + settle
    while True:
        got = bytes.fromhex(a.call("read_mr", stag=f"0x{stag:08x}", offset=0,
                                   len=length)["data_hex"])
        if got == want or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if got != want:
        bad = next(i for i in range(len(want)) if got[i] != want[i])
        raise Check(f"{what}: {sum(1 for i in range(len(want)) if got[i] != want[i])} of "
                    f"{len(want)} octets differ, first at {bad} (0x{want[bad]:02x} expected, "
                    f"0x{got[bad]:02x} found)")


def completion(a, etype, ident, what):
    e = a.wait(etype, match=lambda e: e.get("id") == ident)
    if e.get("status") != "ok":
        raise Check(f"{what}: {etype} status {e.get('status')} ({e.get('wc_status', '')})")


def one_direction(src, dst, sizes, rnd, log):
    """src drives RDMA Write, RDMA Read and Send into dst at every size."""
    tag = f"{src.name}->{dst.name}"
    big = max(sizes)
    d_stag, d_to = region(dst, big, ["local_write", "remote_write", "remote_read"])
    s_stag, s_to = region(src, big, ["local_write"])
    for size in sizes:
        # RDMA Write (RFC 5040 §4.3): lands at dst's TO.
        data = rnd(size)
        dst.call("write_mr", stag=f"0x{d_stag:08x}", offset=0, data_hex="00" * size)
        r = src.call("post_send", kind="write", remote_stag=f"0x{d_stag:08x}",
                     remote_to=f"0x{d_to:x}", data_hex=hexs(data))
        completion(src, "write_done", r["id"], f"{tag} Write {size}")
        read_back(dst, d_stag, size, data, f"{tag} Write {size}")
        # RDMA Read (RFC 5040 §4.4, §4.5): dst's octets into src's sink.
        data = rnd(size)
        dst.call("write_mr", stag=f"0x{d_stag:08x}", offset=0, data_hex=hexs(data))
        src.call("write_mr", stag=f"0x{s_stag:08x}", offset=0, data_hex="00" * size)
        r = src.call("post_send", kind="read", remote_stag=f"0x{d_stag:08x}",
                     remote_to=f"0x{d_to:x}", len=size, stag=f"0x{s_stag:08x}",
                     to=f"0x{s_to:x}")
        completion(src, "read_done", r["id"], f"{tag} Read {size}")
        read_back(src, s_stag, size, data, f"{tag} Read {size}", settle=0)
        # Send (RFC 5040 §4.1): one receive consumed, the data in order.
        data = rnd(size)
        dst.call("post_recv", len=big)
        r = src.call("post_send", kind="send", data_hex=hexs(data))
        completion(src, "send_done", r["id"], f"{tag} Send {size}")
        e = dst.wait("recv")
        got = bytes.fromhex(e.get("data_hex", ""))
        if e.get("status") != "ok" or got != data:
            raise Check(f"{tag} Send {size}: recv status {e.get('status')}, "
                        f"{len(got)} octets, {'same' if got == data else 'different'} data")
    log(f"    {tag}: RDMA Write, RDMA Read and Send at {sizes} octets: "
        f"{3 * len(sizes)} operations, every octet checked")
    return 3 * len(sizes)


def term_of(a):
    """The Terminate a (iwarp-target) sent, as text, if it reports one."""
    for e in a.events:
        if e.get("type") == "terminate_sent":
            h = e.get("hdr_hex", "")
            # untagged DDP header: control (2), Invalidate STag (4), QN, MSN, MO
            inv = f", copied header's Invalidate STag 0x{h[4:12]}" if len(h) >= 12 else ""
            return (f"{a.name} sent Terminate {e.get('layer')}/{e.get('etype')}/"
                    f"{e.get('code')} ({e.get('name')}){inv}")
    return None


def send_inv(src, dst, size, rnd, log):
    """Send with Invalidate (RFC 5040 §5.3): the data arrives, the named
    STag is invalid at dst afterwards. Proved on the wire: a Write to it
    must not land (RFC 5041 §7.1), which ends the connection; so this is
    the last act of a connection."""
    tag = f"{src.name}->{dst.name}"
    v_stag, v_to = region(dst, 64, ["local_write", "remote_write"])
    data = rnd(size)
    dst.call("post_recv", len=max(size, 64))
    r = src.call("post_send", kind="send_inv", inv_stag=f"0x{v_stag:08x}", data_hex=hexs(data))
    completion(src, "send_done", r["id"], f"{tag} Send with Invalidate")
    try:
        e = dst.wait("recv")
    except AgentError:
        e = {}
    got = bytes.fromhex(e.get("data_hex", ""))
    if e.get("status") != "ok" or got != data:
        why = term_of(dst) or term_of(src) or ""
        raise Check(f"{tag} Send with Invalidate of STag 0x{v_stag:08x}: recv status "
                    f"{e.get('status')}{'; ' + why if why else ''}")
    inv = e.get("invalidated_stag")
    seen = "reported in the receive completion"
    if inv is None and e.get("invalidated_stag_source") == "unknown":
        seen = "not visible in the receive completion (verbs on siw)"
    elif inv is None or u(inv) != v_stag:
        raise Check(f"{tag} Send with Invalidate: recv reports invalidated_stag {inv}, "
                    f"expected 0x{v_stag:08x}")
    r = src.call("post_send", kind="write", remote_stag=f"0x{v_stag:08x}",
                 remote_to=f"0x{v_to:x}", data_hex="5a" * 16)
    e = src.wait("write_done", timeout=10, match=lambda e: e.get("id") == r["id"])
    if e.get("status") == "ok":
        # A Write completes at its source once sent; the sink's verdict is
        # the Terminate that follows, which ends the connection.
        src.wait("closed", timeout=10)
    got = bytes.fromhex(dst.call("read_mr", stag=f"0x{v_stag:08x}", offset=0,
                                 len=16)["data_hex"])
    if got != bytes(16):
        raise Check(f"{tag}: a Write to the invalidated STag 0x{v_stag:08x} changed the region")
    log(f"    {tag}: Send with Invalidate: data checked, STag {seen}, a Write to it "
        f"refused and nothing placed")
    return 2


def connect(ours, siw, cfg, args):
    """A fresh connection in configuration cfg; checks what was negotiated."""
    initiator, rev, crc = cfg["initiator"], cfg["rev"], cfg["crc"]
    for a in (ours, siw):
        a.call("reset")
        a.events.clear()
    mpa = {"rev": rev, "crc": crc, "markers": False}
    if initiator == "ours":
        siw.call("listen", port=args.siw_listen_guest, mpa=mpa)
        ours.call("connect", host="127.0.0.1", port=args.siw_listen_host, mpa=mpa)
    else:
        ours.call("listen", port=args.ours_listen, host="127.0.0.1", mpa=mpa)
        siw.call("connect", host=args.guest_sees_host, port=args.ours_listen, mpa=mpa)
    neg = ours.wait("connected", timeout=20).get("mpa", {})
    siw.wait("connected", timeout=20)
    if neg.get("rev") != rev or bool(neg.get("crc")) != crc or neg.get("markers_tx") or \
            neg.get("markers_rx"):
        raise Check(f"negotiated MPA rev {neg.get('rev')} crc {neg.get('crc')} markers "
                    f"{neg.get('markers_tx')}/{neg.get('markers_rx')}, wanted rev {rev} crc {crc}")
    # siw switches its socket to FPDU mode only after sending its Reply
    # (docs/siw.md): give it a moment before the first FPDU.
    time.sleep(args.settle_ms / 1000.0)
    # Without peer-to-peer mode the Responder sends no FPDU before the
    # Initiator's first (RFC 5044 §7.1.2): the initiator goes first.
    return (ours, siw) if initiator == "ours" else (siw, ours)


def run_config(ours, siw, cfg, args, rnd, log, expected):
    """Three connections: Write/Read/Send both ways; then Send with
    Invalidate ours->siw and siw->ours, each ending its connection."""
    a, b = connect(ours, siw, cfg, args)
    n = one_direction(a, b, args.sizes, rnd, log)
    n += one_direction(b, a, args.sizes, rnd, log)
    known = []
    for src, dst in ((ours, siw), (siw, ours)):
        first, _ = connect(ours, siw, cfg, args)
        if first is not src:
            # src is the responder and may not send first: the initiator
            # (dst) opens with a Send.
            src.call("post_recv", len=64)
            r = dst.call("post_send", kind="send", data_hex="00")
            completion(dst, "send_done", r["id"], "opening Send")
            src.wait("recv")
        try:
            n += send_inv(src, dst, args.sizes[0], rnd, log)
        except Check as e:
            why = next((x for x in expected if x[0] in str(e)), None)
            if not why:
                raise
            known.append(f"{e} (expected: {why[1]})")
            log(f"    EXPECTED {e}\n      because {why[1]}")
    return n, known


def load_expected(path):
    """Lines 'SUBSTRING | REASON': a failure containing SUBSTRING is a known
    deviation of the other stack, reported, not failed."""
    out = []
    if path:
        for ln in open(path, encoding="utf-8"):
            ln = ln.strip()
            if ln and not ln.startswith("#"):
                sub, _, why = ln.partition("|")
                if not why.strip():
                    raise ValueError(f"{path}: want 'SUBSTRING | REASON', got {ln!r}")
                out.append((sub.strip(), why.strip()))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ours", required=True, help="iwarp-target's agent HOST:PORT")
    p.add_argument("--siw", required=True, help="iwarp-agent's agent HOST:PORT (in the guest)")
    p.add_argument("--siw-listen", default="7402:7402",
                   help="GUESTPORT:HOSTPORT of siw's RDMA listener (qemu hostfwd)")
    p.add_argument("--ours-listen", type=int, required=True,
                   help="port of our RDMA listener on 127.0.0.1 (qemu guestfwd, same port)")
    p.add_argument("--guest-sees-host", default="10.0.2.100")
    p.add_argument("--sizes", default="1,4103,300000",
                   help="payload sizes (octets), comma separated")
    p.add_argument("--configs", default="all",
                   help="comma list of INITIATOR-vREV-crcON|OFF (e.g. ours-v1-crcoff), or all")
    p.add_argument("--settle-ms", type=int, default=20)
    p.add_argument("--siw-rev1", action="store_true",
                   help="siw can initiate with MPA rev 1 (build-siw-knobs.sh's module loaded)")
    p.add_argument("--seed", type=int, default=5040)
    p.add_argument("--json", help="write a JSON summary here")
    p.add_argument("--expected", help="known deviations of the peer: 'SUBSTRING | REASON' lines")
    args = p.parse_args()
    try:
        g, _, h = args.siw_listen.partition(":")
        args.siw_listen_guest, args.siw_listen_host = int(g), int(h or g)
        args.sizes = [int(x) for x in args.sizes.split(",")]
        if not args.sizes or min(args.sizes) < 1 or max(args.sizes) > 1 << 20:
            raise ValueError("sizes must be 1..1048576")
        expected = load_expected(args.expected)
    except (ValueError, OSError) as e:
        print(f"pair.py: bad argument: {e}", file=sys.stderr)
        return 2
    # Stock siw initiates with MPA rev 2 only (compiled in; docs/siw.md):
    # siw-initiated rev 1 needs build-siw-knobs.sh's module (--siw-rev1).
    every = [dict(initiator=i, rev=r, crc=c) for i in ("ours", "siw") for r in (1, 2)
             for c in (True, False) if args.siw_rev1 or not (i == "siw" and r == 1)]
    name = lambda c: f"{c['initiator']}-v{c['rev']}-crc{'on' if c['crc'] else 'off'}"
    if args.configs != "all":
        want = set(args.configs.split(","))
        unknown = want - {name(c) for c in every}
        if unknown:
            print(f"pair.py: unknown configuration(s) {sorted(unknown)}; known: "
                  f"{[name(c) for c in every]}", file=sys.stderr)
            return 2
        every = [c for c in every if name(c) in want]
    rng = __import__("random").Random(args.seed)
    rnd = lambda n: bytes(rng.getrandbits(8) for _ in range(n)) if n < 4096 else \
        rng.randbytes(n)
    try:
        ours, siw = Agent("ours", args.ours), Agent("siw", args.siw)
    except AgentError as e:
        print(f"pair.py: {e}", file=sys.stderr)
        return 2
    results, failed = [], 0
    for c in every:
        t0 = time.monotonic()
        lines = []
        try:
            n, known = run_config(ours, siw, c, args, rnd, lines.append, expected)
            res = dict(config=name(c), status="pass", operations=n, known_deviations=known)
        except (Check, AgentError) as e:
            res = dict(config=name(c), status="fail", error=str(e))
            failed += 1
        res["seconds"] = round(time.monotonic() - t0, 2)
        results.append(res)
        what = (f"{res['operations']} operations checked" +
                (f", {len(res['known_deviations'])} known siw deviation(s)"
                 if res.get("known_deviations") else "")) if "operations" in res else res["error"]
        print(f"{name(c):<18} {res['status'].upper():<5} {res['seconds']:6.1f} s  {what}",
              flush=True)
        for ln in lines:
            print(ln, flush=True)
    for a in (ours, siw):
        try:
            a.call("reset")
        except AgentError:
            pass
        a.close()
    print(f"pair: {len(results) - failed} of {len(results)} configurations passed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(results=results, sizes=args.sizes, seed=args.seed), f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
