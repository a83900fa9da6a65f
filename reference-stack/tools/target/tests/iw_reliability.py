#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""iwarp-target under hostile runners and peers (issue 16; ctest label
"reliability"; docs/agent-protocol.md "Limits" says what is bounded).

Each scenario starts its own iwarp-target on loopback, attacks it over the
agent protocol and raw TCP the way issue 16 did, and checks behaviour and
resources: file descriptors, RSS and CPU time read from /proc. Bounds are
generous; nothing asserts how long anything took. A sanitizer report or an
unclean exit of the target fails every scenario.

    iw_reliability.py SCENARIO IWARP_TARGET [IWARP_CONFORM]

Scenarios: order hex listen pending emfile unread limits soak runner-sizes
"""
import ctypes
import errno
import json
import os
import re
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

MPA_REQ = b"MPA ID Req Frame"
MPA_REP = b"MPA ID Rep Frame"
PAGE = os.sysconf("SC_PAGE_SIZE")
TICK = os.sysconf("SC_CLK_TCK")
MiB = 1 << 20

failures = []
targets = []  # every target started, stopped at exit whatever happened


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def mpa_request():
    """RFC 5044 §7.1.1: key, M=0 C=1 R=0 S=0, Rev 1, no private data."""
    return MPA_REQ + bytes([0x40, 1, 0, 0])


def dial(port, blocking=True):
    s = socket.socket()
    if blocking:
        s.connect(("127.0.0.1", port))
    else:
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
    return s


def still_open(socks, wait_s):
    """Those of socks the far end has not closed within wait_s (in all)."""
    left = list(socks)
    end = time.monotonic() + wait_s
    while left:
        left = [s for s in left if not peer_closed(s, 0)]
        if not left or time.monotonic() >= end:
            break
        select.select(left, [], [], 0.2)
    return left


def peer_closed(s, wait_s):
    """True when the far end closed s (EOF or reset) within wait_s."""
    s.setblocking(False)
    end = time.monotonic() + wait_s
    while True:
        try:
            if s.recv(65536) == b"":
                return True
        except BlockingIOError:
            pass
        except OSError as e:  # reset, refused; not: still connecting
            if e.errno != errno.ENOTCONN:
                return True
        left = end - time.monotonic()
        if left <= 0:
            return False
        select.select([s], [], [], min(left, 0.2))


class Target:
    """One iwarp-target on a free loopback port."""

    def __init__(self, binary, nofile=None):
        self.port = free_port()
        self.err = tempfile.TemporaryFile()
        env = dict(os.environ)
        # A small ASan quarantine, so RSS shows what the target keeps.
        if "ASAN_OPTIONS" in env:
            env["ASAN_OPTIONS"] += ":quarantine_size_mb=16"
        def pre():
            # The target dies with this script, even if a ctest timeout
            # kills it (PR_SET_PDEATHSIG).
            ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        self.p = subprocess.Popen([binary, "--agent", "127.0.0.1:%d" % self.port],
                                  stderr=self.err, env=env, preexec_fn=pre)
        targets.append(self)
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                break
            except OSError:
                if self.p.poll() is not None:
                    break
                time.sleep(0.01)
        # That probe was a runner session: let it end before measuring.
        time.sleep(0.1)

    def path(self, what):
        return "/proc/%d/%s" % (self.p.pid, what)

    def fds(self):
        return len(os.listdir(self.path("fd")))

    def rss(self):
        """Resident set size in octets."""
        with open(self.path("statm")) as f:
            return int(f.read().split()[1]) * PAGE

    def vsize(self):
        with open(self.path("statm")) as f:
            return int(f.read().split()[0]) * PAGE

    def cpu(self):
        """utime + stime in seconds."""
        with open(self.path("stat")) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def cpu_over(self, seconds):
        c0 = self.cpu()
        time.sleep(seconds)
        return self.cpu() - c0

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def stop(self):
        alive = check(self.p.poll() is None, "the target is still running")
        if alive:
            self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        text = self.stderr()
        bad = re.search(r"AddressSanitizer|LeakSanitizer|runtime error|Segmentation", text)
        check(rc == 0 and not bad, "the target exits cleanly on SIGTERM (status %s)" % rc)
        if bad or rc != 0:
            sys.stderr.write(text[-6000:])


class Runner:
    """An agent-protocol client: requests out, response lines in."""

    def __init__(self, port, timeout=20):
        self.s = socket.create_connection(("127.0.0.1", port), timeout)
        self.s.settimeout(timeout)
        self.buf = b""

    def send(self, text):
        self.s.sendall(text.encode() if isinstance(text, str) else text)

    def line(self, timeout=20):
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                return None
            self.s.settimeout(left)
            try:
                d = self.s.recv(1 << 20)
            except socket.timeout:
                return None
            if not d:
                return None
            self.buf += d
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def rq(self, **req):
        self.send(json.dumps(req) + "\n")
        r = self.line()
        if r is None:
            raise RuntimeError("no answer to %s" % req.get("op"))
        return r

    def close(self):
        self.s.close()


def runner_when_free(t, tries=100):
    """A runner once the last session has ended (one runner at a time)."""
    for _ in range(tries):
        r = Runner(t.port)
        h = r.rq(op="hello")
        if h.get("ok"):
            return r
        r.close()
        time.sleep(0.05)
    raise RuntimeError("the target keeps saying: %s" % h.get("error"))


# ---- scenarios ----

def sc_order(binary):
    """One response per request, in order, also behind a pending poll."""
    t = Target(binary)
    r = Runner(t.port)
    r.send('{"op":"poll","timeout_ms":1500}\n{"op":"hello"}\n')
    a, b = r.line(), r.line()
    check(a is not None and "events" in a, "poll(1500 ms) then hello: the poll is answered first")
    check(b is not None and "impl" in b, "... and the hello second")
    r.send('{"op":"poll","timeout_ms":0}\n{"op":"poll","timeout_ms":0}\n{"op":"hello"}\n')
    got = [r.line(), r.line(), r.line()]
    check([("events" in x) if x else None for x in got] == [True, True, False] and
          got[2] is not None and "impl" in got[2], "poll, poll, hello: three answers in order")
    check(r.line(0.5) is None, "... and no fourth")
    # Mixed pipelined requests, errors included, each answered in turn.
    reqs, want = [], []
    for i in range(200):
        k = i % 5
        if k == 0:
            reqs.append('{"op":"poll","timeout_ms":%d}' % (i % 3))
            want.append("events")
        elif k == 1:
            reqs.append('{"op":"reg_mr","len":%d,"access":["remote_read"]}' % (64 + i))
            want.append("stag")
        elif k == 2:
            reqs.append('{"op":"hello"}')
            want.append("impl")
        elif k == 3:
            reqs.append('{"op":"fly"}')
            want.append("error")
        else:
            reqs.append('{"op":')
            want.append("error")
    r.send("\n".join(reqs) + "\n")
    seen = []
    for _ in reqs:
        x = r.line()
        seen.append(next((k for k in ("events", "stag", "impl", "error") if x and k in x), None))
    check(seen == want, "200 pipelined requests of 5 kinds: 200 answers, in request order")
    check(r.line(0.3) is None, "... and nothing more")
    r.close()
    # A runner that half-closes gets every answer, a pending poll at once
    # with the events so far, then the end of its session.
    r = runner_when_free(t)
    r.send('{"op":"hello"}\n{"op":"poll","timeout_ms":600000}\n{"op":"fly"}\n')
    r.s.shutdown(socket.SHUT_WR)
    got = [r.line(), r.line(), r.line()]
    check(got[0] is not None and "impl" in got[0] and got[1] is not None and
          "events" in got[1] and got[2] is not None and not got[2]["ok"],
          "half-closed after hello, poll(10 min), fly: three answers in order")
    check(r.line() is None and r.s.recv(1) == b"", "... then the session ends")
    r.close()
    t.stop()


def sc_hex(binary):
    """Hex numbers are 0x and hex digits, nothing else."""
    t = Target(binary)
    r = Runner(t.port)
    m = r.rq(op="reg_mr", len=64, access=["remote_read"], fill=7)
    stag = int(m["stag"], 16)
    for bad in ("0x %x" % stag, "0x+%x" % stag, "0x-1", "0x", " 0x%x" % stag, "0x0x%x" % stag,
                "0x%x " % stag, "0x10000000000000000"):
        x = r.rq(op="read_mr", stag=bad, offset=0, len=4)
        check(not x["ok"] and "'stag'" in x["error"], "stag %r refused: %s" % (bad, x.get("error")))
    x = r.rq(op="read_mr", stag="0X%08X" % stag, offset=0, len=4)
    check(x["ok"] and x["data_hex"] == "07070707", "stag 0X%08X (upper case) accepted" % stag)
    r.close()
    t.stop()


def sc_listen(binary):
    """A failed listen or connect leaves nothing behind: the next one works."""
    t = Target(binary)
    r = Runner(t.port)
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    x = r.rq(op="listen", port=busy.getsockname()[1])
    check(not x["ok"], "listen on a port in use fails: %s" % x.get("error"))
    x = r.rq(op="listen", port=busy.getsockname()[1])
    check(not x["ok"] and "already exists" not in x["error"],
          "a second try gets the same error, not 'a connection already exists'")
    x = r.rq(op="connect", host="localhost", port=1)
    check(not x["ok"] and "already exists" not in x["error"],
          "connect to a name fails on its own: %s" % x.get("error"))
    x = r.rq(op="listen", port=0)
    check(x["ok"] and x["port"] > 0, "then listen on any port works")
    if x["ok"]:
        p = dial(x["port"])
        p.sendall(mpa_request())
        p.settimeout(10)
        try:
            rep = p.recv(16)
        except OSError:
            rep = b""
        check(rep == MPA_REP, "and an MPA Request there gets the MPA Reply")
        p.close()
    busy.close()
    r.close()
    t.stop()


def sc_pending(binary):
    """Extra RDMA connections are closed at once, not held until reset."""
    t = Target(binary)
    r = Runner(t.port)
    x = r.rq(op="listen", port=0, mpa={"timeout_ms": 600})
    base = t.fds()
    # All at once, as a flood would: more than the listen backlog.
    conns = [dial(x["port"], blocking=False) for _ in range(300)]
    time.sleep(0.5)
    peak = t.fds()
    check(peak <= base + 20, "300 idle connections: the target holds %d fds (%d before)" %
          (peak, base))
    # One is the QP's and meets its MPA startup timeout (mpa.timeout_ms);
    # every other is closed at once or refused.
    left = still_open(conns, 8)
    # A flood overflows the kernel's accept queue: it drops the client's
    # ACK and, after its SYN-ACK retries, forgets the request without a
    # word, so the client believes in a connection the target never saw.
    # One octet from each straggler settles it: a socket the kernel forgot
    # is reset by the listener; one the target holds stays open.
    for c in left:
        try:
            c.send(b"\0")
        except OSError:
            pass  # still connecting: the listener answers its next SYN
    closed = len(conns) - len(still_open(left, 12))
    check(closed == len(conns), "all %d end, none is held (%d)" % (len(conns), closed))
    ev = r.rq(op="poll", timeout_ms=5000)
    reasons = [e.get("reason") for e in ev.get("events", []) if e.get("type") == "closed"]
    check(reasons == ["mpa_timeout"], "one closed event, reason mpa_timeout: %s" % reasons)
    for c in conns:
        c.close()
    time.sleep(0.3)
    check(t.fds() <= base, "fds back to %d (now %d)" % (base, t.fds()))
    # Idle connections that close before any QP takes them (verbs level,
    # iw_listen_test) do not linger either: a new session is clean.
    r.close()
    r = runner_when_free(t)
    check(t.fds() <= base, "a new session starts with %d fds (at most %d)" % (t.fds(), base))
    r.close()
    t.stop()


def sc_emfile(binary):
    """Out of descriptors: no busy loop, and runners are still served."""
    # (a) Issue 16's setting: a 64-fd limit and 80 RDMA connections.
    t = Target(binary, nofile=64)
    r = Runner(t.port)
    x = r.rq(op="listen", port=0, mpa={"timeout_ms": 60000})
    conns = []
    for _ in range(80):  # one after another, as a patient flood would
        c = socket.socket()
        c.settimeout(0.5)
        try:
            c.connect(("127.0.0.1", x["port"]))
        except OSError:
            pass  # refused, or queued in a full backlog
        conns.append(c)
    cpu = t.cpu_over(2.0)
    check(cpu < 0.6, "64-fd limit, 80 connections: %.2f s of CPU in 2 s" % cpu)
    check(t.fds() <= 40, "%d fds held" % t.fds())
    # The flood still there, the runner leaves and a new one comes.
    r.close()
    h = None
    for _ in range(50):
        r = Runner(t.port)
        r.send('{"op":"hello"}\n')
        h = r.line(10)
        if h is None or h.get("ok"):
            break
        r.close()  # the last session was still ending
        time.sleep(0.05)
    check(h is not None and h.get("ok"), "with the flood still connected, a new runner is "
          "served: %s" % (h and (h.get("impl") or h.get("error"))))
    r.close()
    for c in conns:
        c.close()
    t.stop()

    # (b) No descriptor left at all, with both listeners busy.
    t = Target(binary)
    r = Runner(t.port)
    x = r.rq(op="listen", port=0, mpa={"timeout_ms": 60000})
    top = max(int(f) for f in os.listdir(t.path("fd")))
    old = resource.prlimit(t.p.pid, resource.RLIMIT_NOFILE)
    resource.prlimit(t.p.pid, resource.RLIMIT_NOFILE, (top + 1, old[1]))
    conns = [dial(x["port"], blocking=False) for _ in range(40)]
    conns += [dial(t.port, blocking=False) for _ in range(20)]
    time.sleep(0.2)
    cpu = t.cpu_over(2.0)
    check(cpu < 0.6, "no fd left, 60 connections queued: %.2f s of CPU in 2 s" % cpu)
    h = r.rq(op="hello")
    check(h["ok"], "the runner is still served")
    check("cannot accept" in t.stderr(), "the target says it cannot accept")
    resource.prlimit(t.p.pid, resource.RLIMIT_NOFILE, old)
    for c in conns:
        c.close()
    r.close()
    r = runner_when_free(t)
    check(r.rq(op="hello").get("ok"), "with descriptors back, a new runner is served")
    r.close()
    t.stop()


def sc_unread(binary):
    """A runner that stops reading is dropped; nothing else waits for it."""
    t = Target(binary)
    r = Runner(t.port)
    x = r.rq(op="listen", port=0, mpa={"timeout_ms": 60000})
    rss0 = t.rss()
    # 20,000 pipelined requests, none of the answers read; 100 large ones
    # first, so the answers surely exceed what the sockets can buffer.
    m = r.rq(op="reg_mr", len=65536, access=["remote_read"])
    big = ('{"op":"read_mr","stag":"%s","offset":0,"len":65536}\n' % m["stag"]).encode()
    data = big * 100 + b'{"op":"hello"}\n' * 19900
    r.s.setblocking(False)
    sent, end = 0, time.monotonic() + 3
    while sent < len(data) and time.monotonic() < end:
        try:
            sent += r.s.send(data[sent:])
        except BlockingIOError:
            select.select([], [r.s], [], 0.1)
    time.sleep(0.5)
    p = dial(x["port"])
    p.sendall(mpa_request())
    p.settimeout(20)
    try:
        rep = p.recv(16)
    except OSError:
        rep = b""
    check(rep == MPA_REP, "an RDMA peer still gets its MPA Reply (%d request octets queued)" % sent)
    grown = t.rss() - rss0
    check(grown < 64 * MiB, "RSS grew %.1f MiB with the runner not reading" % (grown / MiB))
    # The runner is dropped once its answers stop moving (10 s); waiting
    # for that costs the target no CPU.
    c0, w0 = t.cpu(), time.monotonic()
    end = time.monotonic() + 40
    while "dropped" not in t.stderr() and time.monotonic() < end:
        time.sleep(0.2)
    cpu, wall = t.cpu() - c0, time.monotonic() - w0
    check("has read nothing" in t.stderr(), "the target drops the runner and says so")
    check(cpu < 0.3 * wall, "%.2f s of CPU while it waited %.1f s" % (cpu, wall))
    n, eof = 0, False
    r.s.setblocking(True)
    r.s.settimeout(10)
    buf = b""
    try:
        while True:
            d = r.s.recv(1 << 20)
            if not d:
                eof = True
                break
            buf += d
    except (ConnectionResetError, socket.timeout, OSError) as e:
        eof = not isinstance(e, socket.timeout)
    n = buf.count(b"\n")
    check(eof and n < 20000, "its connection ends (%d of 20000 answers read before that)" % n)
    r.close()
    p.close()
    r = runner_when_free(t)
    check(r.rq(op="hello").get("ok"), "the next runner is served")
    r.close()
    t.stop()


def sc_limits(binary):
    """Registered and posted memory per session, with clear errors."""
    t = Target(binary)
    r = Runner(t.port)
    stags = []
    for i in range(4):
        x = r.rq(op="reg_mr", len=64 * MiB, access=["remote_write"])
        check(x["ok"], "reg_mr 64 MiB #%d" % (i + 1))
        stags.append(x.get("stag"))
    x = r.rq(op="reg_mr", len=1, access=["remote_write"])
    check(not x["ok"] and "256 MiB registered" in x["error"],
          "a fifth region is refused: %s" % x.get("error"))
    rss = t.rss()
    for _ in range(40):
        r.rq(op="reg_mr", len=64 * MiB, access=["remote_write"])
    check(t.rss() - rss < 16 * MiB, "40 more refused: RSS %+.1f MiB" % ((t.rss() - rss) / MiB))
    check(r.rq(op="dereg_mr", stag=stags[0])["ok"], "dereg_mr one")
    check(r.rq(op="reg_mr", len=64 * MiB, access=["remote_write"])["ok"],
          "then 64 MiB can be registered again")
    x = r.rq(op="reset")
    n = 0
    while r.rq(op="reg_mr", len=1, access=["remote_read"])["ok"] and n < 5000:
        n += 1
    check(n == 4096, "at most 4096 regions (%d)" % n)
    r.rq(op="reset")
    # Posted receive buffers need a connection (an idle TCP one will do).
    x = r.rq(op="listen", port=0, mpa={"timeout_ms": 60000})
    p = dial(x["port"])
    for _ in range(100):
        if r.rq(op="post_recv", len=1, count=1)["ok"]:
            break
        time.sleep(0.02)
    vs, rss = t.vsize(), t.rss()
    x = r.rq(op="post_recv", len=MiB, count=4096)
    check(not x["ok"] and "64 MiB" in x["error"], "post_recv 1 MiB x 4096: %s" % x.get("error"))
    check(t.vsize() - vs < 64 * MiB, "... allocating nothing (VM %+.1f MiB)" %
          ((t.vsize() - vs) / MiB))
    ok = sum(r.rq(op="post_recv", len=MiB, count=8)["ok"] for _ in range(8))
    check(ok == 7, "7 calls of 8 x 1 MiB fit, the 8th does not (%d of 8)" % ok)
    check(r.rq(op="post_recv", len=MiB, count=7)["ok"], "7 x 1 MiB more fit (63 MiB + 1)")
    x = r.rq(op="post_send", kind="send", data_hex="00" * 1048576)
    check(not x["ok"] and "64 MiB" in x["error"], "a data_hex send counts too: %s" % x.get("error"))
    r.rq(op="reset")
    x = r.rq(op="listen", port=0, mpa={"timeout_ms": 60000})
    p2 = dial(x["port"])
    for _ in range(100):
        if r.rq(op="post_recv", len=0, count=1)["ok"]:
            break
        time.sleep(0.02)
    calls = sum(r.rq(op="post_recv", len=0, count=4096)["ok"] for _ in range(17))
    check(calls == 15, "at most 65536 buffers outstanding (%d calls of 4096 after 1)" % calls)
    check(t.rss() < rss + 128 * MiB, "RSS %.1f MiB" % (t.rss() / MiB))
    p.close()
    p2.close()
    r.close()
    t.stop()


def sc_soak(binary):
    """Thousands of hostile runner sessions and RDMA connections: fds, RSS
    and CPU stay flat."""
    t = Target(binary)
    port = t.port
    sessions, rdma, marks = 0, 0, {}

    def measure():
        r = runner_when_free(t)
        m = (t.fds(), t.rss())
        r.close()
        return m

    def session(k):
        nonlocal rdma
        r = Runner(port)
        kind = k % 8
        if kind == 0:
            r.rq(op="hello")
        elif kind == 1:
            r.send(b'\x00\xff garbage\n{"op":"fly"}\n{"op":"reg_mr","len":"0x 10"}\n{"op"\n')
            for _ in range(4):
                r.line(5)
        elif kind == 2:
            r.send(b'{"op":"hello"}\n{"op":"reg_mr","len":4096,"acc')  # cut mid-line
        elif kind == 3:
            r.send('{"op":"hello"}\n' * 300)  # never read
            r.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
        elif kind == 4:
            r.send('{"op":"poll","timeout_ms":5000}\n{"op":"hello"}\n')
        elif kind == 5:
            r.rq(op="hello")
            r2 = Runner(port)
            r2.line(5)  # "another runner is connected"
            r2.close()
        else:
            x = r.rq(op="listen", port=0, mpa={"timeout_ms": 2000, "rev": 1 + k % 2})
            r.rq(op="reg_mr", len=4096 * (1 + k % 7), access=["remote_write", "remote_read"])
            # A small flood: 8 at once; one becomes the connection, the
            # others are closed by the target, each peer misbehaving.
            peers = [dial(x["port"], blocking=False) for _ in range(8)]
            _, ready, _ = select.select([], peers, [], 2)
            for j, s in enumerate(peers):
                if s not in ready or s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    continue
                rdma += 1
                try:
                    if j % 4 == 0:
                        s.send(mpa_request() + os.urandom(40 + k % 50))
                    elif j % 4 == 1:
                        s.send(os.urandom(k % 200 + 1))
                    elif j % 4 == 2:
                        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                except OSError:
                    pass  # already closed by the target
            r.rq(op="poll", timeout_ms=0)
            for s in peers:
                s.close()
        r.close()

    base = measure()
    for k in range(2000):
        session(k)
        sessions += 1
        if k == 299:
            marks["warm"] = measure()
    end = measure()
    cpu = t.cpu_over(1.0)
    print("sessions %d, RDMA connections %d; fds %d -> %d -> %d; RSS %.1f -> %.1f -> %.1f MiB" %
          (sessions, rdma, base[0], marks["warm"][0], end[0], base[1] / MiB,
           marks["warm"][1] / MiB, end[1] / MiB))
    check(sessions + rdma >= 2000, "thousands of hostile connections (%d)" % (sessions + rdma))
    check(end[0] <= base[0], "fds flat: %d at the start, %d at the end" % (base[0], end[0]))
    check(end[1] - marks["warm"][1] < 24 * MiB,
          "RSS flat after warm-up: %+.1f MiB over the last 1700 sessions" %
          ((end[1] - marks["warm"][1]) / MiB))
    check(cpu < 0.3, "idle afterwards: %.2f s of CPU in 1 s" % cpu)
    t.stop()


def sc_runner_sizes(binary, conform):
    """Runner and target agree on sizes: a 16 MiB region is read back whole;
    seg=1 on a 16 MiB message is an error, not gigabytes."""
    d = tempfile.mkdtemp()
    os.mkdir(os.path.join(d, "rel"))
    head = "iut:     responder\nregion:  A len=16777216 access=remote_write\n" \
           "recv:    len=16 count=1\n\n"
    cases = {
        "big": ("rel.big-region", "send:    write stag=$A.stag to=$A.to+1000 len=3000000\n"
                "send:    send len=4\nexpect:  event recv status=ok len=4\nexpect:  region A\n"),
        "seg1": ("rel.seg1", "send:    write stag=$A.stag to=$A.to len=16777216 seg=1\n"
                 "expect:  region A\n"),
    }
    t = Target(binary)
    for name, (cid, body) in cases.items():
        with open(os.path.join(d, "rel", name + ".case"), "w") as f:
            f.write("id:      %s\ntitle:   %s\nrfc:     RFC 5040 §5.1\n\n%s%s" %
                    (cid, name, head, body))
    out = os.path.join(d, "out")
    p = subprocess.Popen([conform, "--agent", "127.0.0.1:%d" % t.port, "--cases", d,
                          "--out", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    peak = ru.ru_maxrss * 1024
    print(text)
    with open(os.path.join(out, "results.json")) as f:
        res = {c["id"]: c for c in json.load(f)["cases"]}
    big = res.get("rel.big-region", {})
    check(big.get("status") == "pass", "a 16 MiB region is checked whole: %s %s" %
          (big.get("status"), big.get("reason", "")))
    seg = res.get("rel.seg1", {})
    check(seg.get("status") == "error" and "262144 FPDUs" in seg.get("reason", ""),
          "seg=1 on 16 MiB is refused: %s" % seg.get("reason"))
    check(peak < 512 * MiB, "the runner's peak RSS: %.0f MiB" % (peak / MiB))
    t.stop()


SCENARIOS = {"order": sc_order, "hex": sc_hex, "listen": sc_listen, "pending": sc_pending,
             "emfile": sc_emfile, "unread": sc_unread, "limits": sc_limits, "soak": sc_soak}


def main():
    if len(sys.argv) < 3 or (sys.argv[1] not in SCENARIOS and sys.argv[1] != "runner-sizes"):
        sys.stderr.write(__doc__)
        return 2
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        if sys.argv[1] == "runner-sizes":
            sc_runner_sizes(sys.argv[2], sys.argv[3])
        else:
            SCENARIOS[sys.argv[1]](sys.argv[2])
    except Exception as e:  # a hang or a dead target shows up here
        import traceback
        traceback.print_exc()
        failures.append("exception: %s" % e)
    finally:
        for t in targets:
            if t.p.poll() is None:
                t.p.kill()
                t.p.wait()
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
