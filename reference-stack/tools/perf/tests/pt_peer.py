#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A malformed perftest peer for iwarp-perf --perftest (ctest, no guest).

iwarp-target's agent protocol (docs/agent-protocol.md) drives one RDMA
connection of our reference stack. This script uses it to open perftest's
communication QP to an iwarp-perf --perftest server, or to accept the one an
iwarp-perf --perftest client opens, and then to send messages that break
perftest's exchange (docs/iwarp-perf.md, "Talking to perftest"). For every
case iwarp-perf must exit 1 with the expected one-line error on stderr; a
crash, a hang, another exit status or a sanitizer report fails the case.

    pt_peer.py IWARP_PERF IWARP_TARGET
"""
import json
import os
import re
import socket
import subprocess
import sys
import time

VERSION = b"6.06".ljust(16, b"\0")
CYCLE = bytes.fromhex("00001000")
LINE = bytes.fromhex("00000040")
MTU = b"3\0"
SYNC = bytes(56)
PROLOGUE = [VERSION, CYCLE, LINE, MTU]

# (name, role of iwarp-perf, steps, stderr regex). Steps: bytes = one Send
# from the fake peer; "reply" = wait for iwarp-perf's message; "close".
def ok_until(n):
    """The first n messages of the prologue, each answered in turn."""
    steps = []
    for m in PROLOGUE[:n]:
        steps += [m, "reply"]
    return steps

def as_server(steps):
    """The fake peer is the server: iwarp-perf speaks first each time."""
    out = []
    for s in steps:
        if s == "reply":
            continue
        out += ["reply", s]
    return out

CASES = [
    ("version too short", "server", [VERSION[:15]],
     r"step 1 \(version\): expected 16 octets, got 15"),
    ("version not a number", "server", [b"6.0x".ljust(16, b"\0")],
     r"step 1 \(version\): version string has a character 0x78"),
    ("version without NUL", "server", [b"6" * 16],
     r"step 1 \(version\): version string is not NUL-terminated"),
    ("version too old", "server", [b"5.5".ljust(16, b"\0")],
     r"step 1 \(version\): perftest version 5.5 is older than 5.60"),
    ("cycle buffer not a power of two", "server", ok_until(1) + [bytes.fromhex("00000bb8")],
     r"step 2 \(cycle buffer\): 3000 is not a power of two"),
    ("cache line too large", "server", ok_until(2) + [bytes.fromhex("00100000")],
     r"step 3 \(cache line size\): 1048576 is not a power of two from 8 to 4096"),
    ("MTU not decimal", "server", ok_until(3) + [b"x\0"],
     r"step 4 \(MTU\): MTU field 78 00 is not a decimal number"),
    ("sync too short", "server", ok_until(4) + [bytes(40)],
     r"step 5 \(sync\): expected 56 octets, got 40"),
    ("message longer than any of perftest's", "server", [bytes(200)],
     r"communication QP: sent a Terminate"),
    ("closed in the middle", "server", ok_until(1) + ["close"],
     r"perftest closed the communication connection in step 2 \(cycle buffer\)"),
    # perftest keeps one receive posted, we two: the rest find none.
    ("no waiting for answers", "server", [VERSION] * 6,
     r"communication QP: sent a Terminate: .*no buffer|step 2 \(cycle buffer\): expected 4 "
     r"octets, got 16"),
    ("server's version too short", "client", as_server([bytes(10)]),
     r"step 1 \(version\): expected 16 octets, got 10"),
    ("server's cycle buffer zero", "client", as_server(ok_until(1) + [bytes(4)]),
     r"step 2 \(cycle buffer\): 0 is not a power of two"),
    ("server's sync too long", "client", as_server(ok_until(4) + [bytes(57)]),
     r"step 5 \(sync\): expected 56 octets, got 57"),
    ("server closes", "client", ["reply", "close"],
     r"perftest closed the communication connection in step 1 \(version\)"),
]

SANITIZER = re.compile(r"Sanitizer|runtime error|LeakSanitizer")


class Agent:
    def __init__(self, target):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.proc = subprocess.Popen([target, "--agent", "127.0.0.1:%d" % self.port],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(100):
            try:
                self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("iwarp-target does not answer on port %d" % self.port)
        self.rd = self.sock.makefile("r")
        self.events = []

    def rq(self, **req):
        self.sock.sendall((json.dumps(req) + "\n").encode())
        rsp = json.loads(self.rd.readline())
        if not rsp.get("ok"):
            raise RuntimeError("agent: %s -> %s" % (req, rsp))
        return rsp

    def wait(self, kind, secs=20):
        """The next event of that type; other events are kept in order."""
        end = time.time() + secs
        while time.time() < end:
            for i, e in enumerate(self.events):
                if e["type"] == kind:
                    return self.events.pop(i)
            self.events += self.rq(op="poll", timeout_ms=200)["events"]
        raise RuntimeError("no %s event within %d s (have %s)" % (kind, secs, self.events))

    def stop(self):
        self.sock.close()
        self.proc.terminate()
        self.proc.wait(10)


def run_case(agent, perf, name, role, steps, want):
    agent.rq(op="reset")
    agent.events = []
    base = [perf, "--perftest", "-t", "write", "-s", "1024", "-n", "5"]
    if role == "server":
        proc = subprocess.Popen(base + ["-p", "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", proc.stdout.readline())
        if not m:
            proc.kill()
            return "the server did not say where it listens"
        agent.rq(op="connect", host="127.0.0.1", port=int(m.group(1)))
    else:
        port = agent.rq(op="listen", port=0)["port"]
        # A long quiet time: the fake server posts its receives only once it
        # sees the connection.
        proc = subprocess.Popen(base + ["--connect-delay", "500", "-p", str(port), "127.0.0.1"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    agent_err = None
    try:
        agent.wait("connected")
        agent.rq(op="post_recv", len=256, count=8)
        for s in steps:
            if s == "reply":
                agent.wait("recv")
            elif s == "close":
                agent.rq(op="close")
            else:
                agent.rq(op="post_send", kind="send", data_hex=s.hex())
    except RuntimeError as e:
        agent_err = e  # iwarp-perf may have given up already: its verdict decides
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return "iwarp-perf did not exit (%s); stderr: %s" % (agent_err or "hung", err.strip())
    print("  stderr: %s" % err.strip().replace("\n", "\n          "))
    if SANITIZER.search(err):
        return "a sanitizer report"
    if proc.returncode != 1:
        return "exit %d, expected 1" % proc.returncode
    if not re.search(want, err):
        return "stderr does not match /%s/%s" % (want, "; agent: %s" % agent_err if agent_err
                                                 else "")
    return None


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    perf, target = sys.argv[1:]
    agent = Agent(target)
    failed = 0
    try:
        for name, role, steps, want in CASES:
            print("case: %s (iwarp-perf is the %s)" % (name, role))
            why = run_case(agent, perf, name, role, steps, want)
            print("  %s%s" % ("FAIL: " if why else "ok", why or ""))
            failed += why is not None
    finally:
        agent.stop()
    print("%d cases, %d failed" % (len(CASES), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
