#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ctest driver for iwarp-perf (no timing assertions).
#
#   perf_pair.sh pair IWARP_PERF "SERVER_ARGS" CLIENT_ARGS...
#       Starts a server on an ephemeral port (-p 0), waits for its
#       "listening" line, runs the client against it, and passes when both
#       exit 0, the client printed a result row and, with --verify, the
#       server reported "verify ok" for every size.
#   perf_pair.sh pair-fails IWARP_PERF "SERVER_ARGS" SRV_RC SRV_RE CLI_RC CLI_RE CLIENT_ARGS...
#       As pair, but passes when the server exits SRV_RC with stderr
#       matching SRV_RE and the client exits CLI_RC with stderr matching
#       CLI_RE (- : not checked): a mismatch must be reported on each side
#       that sees it.
#   perf_pair.sh expect IWARP_PERF RC STDERR_REGEX ARGS...
#       Runs iwarp-perf alone; passes when it exits RC with stderr matching
#       STDERR_REGEX and nothing on stdout.
#   perf_pair.sh refused IWARP_PERF [ARGS...]
#       A client against a port nobody listens on: exit 1, a clear message.
set -u
mode=$1 bin=$2
shift 2
work=$(mktemp -d)
srv_pid=
cleanup() {
    [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

show() { for f in "$@"; do echo "---- $f"; cat "$work/$f"; done; }

# run_pair "SERVER_ARGS" CLIENT_ARGS...: sets cli_rc and srv_rc.
run_pair() {
    srv_args=$1
    shift
    # shellcheck disable=SC2086 # server args are a word list
    timeout 120 "$bin" -p 0 $srv_args >"$work/srv.out" 2>"$work/srv.err" &
    srv_pid=$!
    port=
    for _ in $(seq 200); do
        port=$(sed -n 's/^iwarp-perf server: listening on .*:\([0-9][0-9]*\)$/\1/p' "$work/srv.out")
        [ -n "$port" ] && break
        kill -0 "$srv_pid" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$port" ]; then
        echo "FAIL: the server did not start listening"
        show srv.out srv.err
        exit 1
    fi
    timeout 120 "$bin" -p "$port" "$@" 127.0.0.1 >"$work/cli.out" 2>"$work/cli.err"
    cli_rc=$?
    wait "$srv_pid"
    srv_rc=$?
    srv_pid=
    show cli.out cli.err srv.out srv.err
}

case $mode in
pair-fails)
    srv_args=$1 want_srv=$2 srv_re=$3 want_cli=$4 cli_re=$5
    shift 5
    run_pair "$srv_args" "$@"
    [ "$srv_rc" = "$want_srv" ] || { echo "FAIL: server exit $srv_rc, expected $want_srv"; exit 1; }
    [ "$cli_rc" = "$want_cli" ] || { echo "FAIL: client exit $cli_rc, expected $want_cli"; exit 1; }
    for side in srv cli; do
        [ "$side" = srv ] && re=$srv_re || re=$cli_re
        [ "$re" = - ] && continue # nothing to say
        grep -Eq -- "$re" "$work/$side.err" || { echo "FAIL: $side.err does not match '$re'"; exit 1; }
    done
    echo PASS
    ;;
pair)
    run_pair "$@"
    if [ "$cli_rc" != 0 ] || [ "$srv_rc" != 0 ]; then
        echo "FAIL: client exit $cli_rc, server exit $srv_rc"
        exit 1
    fi
    # A result row: a number of octets first (table), or a JSON object.
    if ! grep -Eq '^ [0-9]+ +[0-9]+ |^\{"test"' "$work/cli.out"; then
        echo "FAIL: no result row in the client's output"
        exit 1
    fi
    rows=$(grep -Ec '^ [0-9]+ +[0-9]+ |^\{"test"' "$work/cli.out")
    case " $* " in
    *" --verify "*)
        ok=$(grep -c 'verify ok$' "$work/srv.out")
        if [ "$ok" != "$rows" ]; then
            echo "FAIL: $rows sizes run, the server verified $ok"
            exit 1
        fi
        ;;
    esac
    grep -q 'session done' "$work/srv.out" || { echo "FAIL: server session not done"; exit 1; }
    case " $* " in
    *" --transport sctp "*)
        grep -Eq 'DDP over SCTP, RFC 5043|"transport":"sctp"' "$work/cli.out" ||
            { echo "FAIL: the client did not report SCTP"; exit 1; }
        ;;
    esac
    echo "PASS: $rows sizes"
    ;;
expect)
    want_rc=$1 re=$2
    shift 2
    timeout 30 "$bin" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    show out err
    [ "$rc" = "$want_rc" ] || { echo "FAIL: exit $rc, expected $want_rc"; exit 1; }
    [ -s "$work/out" ] && { echo "FAIL: output on stdout"; exit 1; }
    grep -Eq -- "$re" "$work/err" || { echo "FAIL: stderr does not match '$re'"; exit 1; }
    echo PASS
    ;;
refused)
    # Bind an ephemeral port, then free it: nobody listens there now. With
    # --transport sctp (extra args) the port is a UDP one.
    kind=SOCK_STREAM
    case " $* " in *" sctp "*) kind=SOCK_DGRAM ;; esac
    port=$(python3 -c "import socket; s=socket.socket(type=socket.$kind); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])" 2>/dev/null || echo 9)
    timeout 30 "$bin" -p "$port" -n 1 "$@" 127.0.0.1 >"$work/out" 2>"$work/err"
    rc=$?
    show out err
    [ "$rc" = 1 ] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
    grep -q "cannot connect to 127.0.0.1 port $port" "$work/err" || { echo "FAIL: no clear message"; exit 1; }
    echo PASS
    ;;
*)
    echo "usage: $0 pair|pair-fails|expect|refused IWARP_PERF ..." >&2
    exit 2
    ;;
esac
