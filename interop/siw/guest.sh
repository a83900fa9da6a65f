#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the disposable siw guest under qemu (TCG) and talks to it.
#
#   guest.sh start [--no-siw]      boot (overlay on the cached image), wait for the
#                                  control agent; siw0 is set up unless --no-siw
#   guest.sh run [-t SECS] CMD...  run a shell command in the guest (as root, in
#                                  /root); prints its output, exits with its status
#   guest.sh copy-in HOST GUEST    copy a host file into the guest (mode kept)
#   guest.sh copy-out GUEST HOST   copy a guest file out
#   guest.sh pcap-start NAME [-i IF] [FILTER...]
#                                  tcpdump in the guest -> /var/tmp/iwk/NAME.pcap;
#                                  IF: lo (default: guest-internal traffic) or
#                                  eth0 (traffic to/from the host via hostfwd)
#   guest.sh pcap-stop NAME        stop it, copy it to $IWK_SIW_RUN/captures/NAME.pcap
#   guest.sh logs                  dmesg and the guest's /run/iwk logs -> $IWK_SIW_RUN/logs/
#   guest.sh status                running? ready? crashed? kernel, siw state, ports
#   guest.sh stop                  logs, then power off (qemu killed if it lingers)
#
# Every step has a timeout. A kernel oops/panic on the serial console is a
# result, not a hang: the command that meets it prints the console excerpt,
# kills qemu and exits 200. Exit 201: guest not running / channel down.
# Environment: see lib.sh (IWK_SIW_RUN, IWK_SIW_*_PORT, IWK_SIW_FWD, ...).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUN=$IWK_SIW_RUN
SERIAL=$RUN/serial.log
PIDF=$RUN/qemu.pid

qemu_pid() { [[ -s $PIDF ]] && cat "$PIDF"; }
qemu_alive() {
  local p; p=$(qemu_pid) || return 1
  [[ -n $p ]] && kill -0 "$p" 2>/dev/null && [[ $(cat "/proc/$p/comm" 2>/dev/null) == qemu-system-* ]]
}
qemu_kill() {
  local p; p=$(qemu_pid) || return 0
  [[ -n $p ]] || return 0
  if qemu_alive; then
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 50); do qemu_alive || break; sleep 0.1; done
    if qemu_alive; then kill -KILL "$p" 2>/dev/null || true; fi
  fi
  rm -f "$PIDF"
}

# crash_check: 0 if no crash; otherwise prints the console excerpt, kills
# qemu, records $RUN/CRASHED and exits 200.
crash_check() {
  [[ -f $SERIAL ]] || return 0
  local line
  line=$(grep -n -a -E -m1 "$IWK_CRASH_RE" "$SERIAL" | cut -d: -f1) || true
  [[ -n $line ]] || return 0
  {
    echo "guest kernel CRASHED (serial console $SERIAL, line $line):"
    sed -n "$(( line > 5 ? line - 5 : 1 )),$(( line + 45 ))p" "$SERIAL" | sed 's/^/  | /'
  } | tee "$RUN/CRASHED" >&2
  qemu_kill
  iwk_die "guest crashed; qemu killed. Console excerpt saved in $RUN/CRASHED" "$IWK_EXIT_CRASH"
}
down() {
  crash_check
  if ! qemu_alive; then
    iwk_die "guest not running (no live qemu for $RUN)$( [[ -f $RUN/qemu.log ]] && printf '; qemu said: %s' "$(tail -n 3 "$RUN/qemu.log" | tr '\n' ' ')")" "$IWK_EXIT_DOWN"
  fi
  iwk_die "$1" "$IWK_EXIT_DOWN"
}

# ctl TIMEOUT OUTFILE HEADER [PAYLOADFILE]: one request to the control agent.
# Sets CTL_RC (the remote status); returns non-zero if the channel failed.
CTL_RC=
ctl() {
  local to=$1 out=$2 hdr=$3 payload=${4:-} fd tag rc len
  CTL_RC=
  # (exec's redirections are permanent: keep stderr out of it)
  { exec {fd}<>"/dev/tcp/127.0.0.1/$IWK_SIW_CTL_PORT"; } 2>/dev/null || return 1
  {
    printf '%s\n' "$hdr"
    if [[ -n $payload ]]; then cat "$payload"; fi
  } 1>&"$fd" 2>/dev/null || { exec {fd}>&-; return 1; }
  if ! IFS=" " read -r -t "$to" -u "$fd" tag rc len 2>/dev/null || [[ $tag != OK ]]; then
    exec {fd}>&-; return 1
  fi
  if ! timeout "$to" head -c "$len" <&"$fd" >"$out"; then exec {fd}>&-; return 1; fi
  exec {fd}>&-
  [[ $(stat -c %s "$out") == "$len" ]] || return 1
  CTL_RC=$rc
}

cmd_ping() {  # ping [quiet]: 0 if the agent answers
  local o; o=$(mktemp)
  if ctl 10 "$o" PING && [[ $CTL_RC == 0 ]]; then
    [[ ${1:-} == quiet ]] || cat "$o"
    rm -f "$o"; return 0
  fi
  rm -f "$o"; return 1
}

cmd_start() {
  local siw=1
  for a in "$@"; do
    case "$a" in --no-siw) siw=0 ;; *) iwk_die "start: unknown option $a" 2 ;; esac
  done
  local G; G=$(iwk_guest_dir)
  [[ -f $G/rootfs.ext4 && -f $G/vmlinuz && -f $G/initrd.img ]] ||
    iwk_die "no guest image in $G: run interop/siw/build-guest.sh first"
  command -v qemu-system-x86_64 >/dev/null || iwk_die "qemu-system-x86_64 missing (build-guest.sh installs it)"
  if qemu_alive; then iwk_die "a guest is already running for $RUN (pid $(qemu_pid)); guest.sh stop first"; fi
  mkdir -p "$RUN/logs" "$RUN/captures"
  rm -f "$RUN/CRASHED" "$RUN/disk.qcow2" "$SERIAL" "$RUN/qemu.log" "$PIDF" "$RUN/ready"
  G=$(readlink -f "$G")
  qemu-img create -q -f qcow2 -F raw -b "$G/rootfs.ext4" "$RUN/disk.qcow2"
  cp "$G/manifest.env" "$RUN/manifest.env"

  local fwd="hostfwd=tcp:127.0.0.1:$IWK_SIW_CTL_PORT-:$IWK_SIW_GUEST_CTL_PORT"
  fwd+=",hostfwd=tcp:127.0.0.1:$IWK_SIW_AGENT_PORT-:$IWK_SIW_GUEST_AGENT_PORT"
  local p hp gp
  for p in $IWK_SIW_FWD; do
    hp=${p%%:*}; gp=${p##*:}
    fwd+=",hostfwd=tcp:127.0.0.1:$hp-:$gp"
  done
  for p in $IWK_SIW_GUESTFWD; do
    command -v socat >/dev/null || iwk_die "IWK_SIW_GUESTFWD needs socat on the host"
    fwd+=",guestfwd=tcp:10.0.2.100:$p-cmd:socat - TCP:127.0.0.1:$p"
  done
  local append="root=/dev/vda rw rootfstype=ext4 console=ttyS0,115200 init=/usr/local/sbin/iwk-init"
  append+=" panic=-1 oops=panic net.ifnames=0 mitigations=off iwk.siw=$siw iwk.ctl=$IWK_SIW_GUEST_CTL_PORT"
  append+=" iwk.addr=$IWK_SIW_GUEST_ADDR/24 ${IWK_SIW_APPEND:-}"
  # shellcheck disable=SC2054  # commas belong to qemu's option syntax
  local qemu=(qemu-system-x86_64 -name iwk-siw -machine pc -accel tcg,thread=multi -cpu max
    -smp "$IWK_SIW_SMP" -m "$IWK_SIW_MEM"
    -kernel "$G/vmlinuz" -initrd "$G/initrd.img" -append "$append"
    -drive "file=$RUN/disk.qcow2,if=virtio,format=qcow2,cache=unsafe"
    -netdev "user,id=n0,restrict=on,$fwd" -device virtio-net-pci,netdev=n0
    -display none -vga none -monitor none -serial "file:$SERIAL" -no-reboot
    -pidfile "$PIDF")
  printf '%q ' "${qemu[@]}" >"$RUN/qemu.cmd"; echo >>"$RUN/qemu.cmd"
  local t0; t0=$(date +%s%N)
  iwk_log "booting $(sed -n 's/^IWK_KABI=//p' "$G/manifest.env") under TCG (run dir $RUN, ctl 127.0.0.1:$IWK_SIW_CTL_PORT)"
  # IWK_SIW_LIFETIME (s): a hard cap, so a guest whose owner died (a killed
  # test) does not run on; 0 = none.
  local cap=()
  [[ ${IWK_SIW_LIFETIME:-0} -gt 0 ]] && cap=(timeout -s KILL "$IWK_SIW_LIFETIME")
  setsid "${cap[@]}" "${qemu[@]}" </dev/null >"$RUN/qemu.log" 2>&1 &
  local launcher=$!
  local deadline=$(( $(date +%s) + IWK_SIW_BOOT_TIMEOUT ))
  for _ in $(seq 50); do [[ -s $PIDF ]] && break; kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
  while :; do
    crash_check
    if ! qemu_alive && ! kill -0 "$launcher" 2>/dev/null; then
      iwk_die "qemu exited during boot: $(tail -n 5 "$RUN/qemu.log" | tr '\n' ' ') (serial: $SERIAL)" "$IWK_EXIT_DOWN"
    fi
    if grep -a -q 'IWK: READY' "$SERIAL" 2>/dev/null && cmd_ping quiet; then break; fi
    if (( $(date +%s) >= deadline )); then
      echo "--- last console lines:" >&2; tail -n 20 "$SERIAL" >&2 || true
      qemu_kill
      iwk_die "guest not ready after ${IWK_SIW_BOOT_TIMEOUT} s; qemu killed (serial: $SERIAL)" "$IWK_EXIT_DOWN"
    fi
    sleep 0.5
  done
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  local secs; secs=$(printf '%d.%d' $(( ms / 1000 )) $(( ms % 1000 / 100 )))
  echo "$secs" >"$RUN/ready"
  local st; st=$(grep -a 'IWK: siw:' "$SERIAL" | tail -n1 | sed 's/^.*IWK: siw: //')
  iwk_log "guest ready in ${secs} s; siw: $st"
  [[ $siw == 0 || $st == ready* ]] || iwk_die "siw setup failed in the guest: $st (serial: $SERIAL)"
}

cmd_run() {
  local to=$IWK_SIW_RUN_TIMEOUT
  if [[ ${1:-} == -t ]]; then to=$2; shift 2; fi
  [[ $# -gt 0 ]] || iwk_die "run: no command" 2
  local s o; s=$(mktemp); o=$(mktemp)
  printf '%s\n' "$*" >"$s"
  if ! ctl $(( to + 15 )) "$o" "RUN $to $(stat -c %s "$s")" "$s"; then
    rm -f "$s" "$o"; down "run: no answer from the guest within $(( to + 15 )) s"
  fi
  cat "$o"; rm -f "$s" "$o"
  crash_check
  return "$CTL_RC"
}

cmd_copy_in() {
  [[ $# == 2 ]] || iwk_die "copy-in HOSTFILE GUESTPATH" 2
  [[ -f $1 ]] || iwk_die "copy-in: no such file: $1"
  local o mode; o=$(mktemp); mode=$(stat -c %a "$1")
  ctl "$IWK_SIW_IO_TIMEOUT" "$o" "PUT $(printf '%04o' "0$mode") $(stat -c %s "$1") $2" "$1" ||
    { rm -f "$o"; down "copy-in: channel failed"; }
  if [[ $CTL_RC != 0 ]]; then cat "$o" >&2; rm -f "$o"; iwk_die "copy-in $1 -> $2 failed"; fi
  rm -f "$o"
}

cmd_copy_out() {
  [[ $# == 2 ]] || iwk_die "copy-out GUESTPATH HOSTFILE" 2
  mkdir -p "$(dirname "$2")"
  ctl "$IWK_SIW_IO_TIMEOUT" "$2.part" "GET $1" || { rm -f "$2.part"; down "copy-out: channel failed"; }
  if [[ $CTL_RC != 0 ]]; then cat "$2.part" >&2; rm -f "$2.part"; iwk_die "copy-out $1 failed"; fi
  mv -f "$2.part" "$2"
}

cmd_pcap_start() {
  [[ $# -ge 1 ]] || iwk_die "pcap-start NAME [-i IF] [FILTER...]" 2
  local name=$1 ifc=${IWK_SIW_PCAP_IF:-lo}; shift
  if [[ ${1:-} == -i ]]; then ifc=$2; shift 2; fi
  # -U: packet-buffered, so what was captured is in the file even if the guest dies
  # On the guest's disk (/run is a small tmpfs); -Z root: no privilege drop.
  # -U (default): each packet reaches the file at once, so a capture survives
  # a guest crash; IWK_SIW_PCAP_PACKET_BUFFERED=0 drops -U for bulk traffic,
  # where per-packet writes under TCG make the kernel drop packets.
  local u=-U
  [[ ${IWK_SIW_PCAP_PACKET_BUFFERED:-1} == 1 ]] || u=
  cmd_run -t 20 "mkdir -p /var/tmp/iwk && rm -f /var/tmp/iwk/$name.pcap &&
    iwk-bg start pcap-$name tcpdump -i $ifc -n $u -Z root -B ${IWK_SIW_PCAP_BUFFER:-65536} \
      -s ${IWK_SIW_SNAPLEN:-0} ${IWK_SIW_PCAP_COUNT:+-c $IWK_SIW_PCAP_COUNT} -w /var/tmp/iwk/$name.pcap $* &&
    for i in \$(seq 100); do grep -q 'listening on' /run/iwk/pcap-$name.log && exit 0; sleep 0.1; done;
    cat /run/iwk/pcap-$name.log; exit 1"
}

cmd_pcap_stop() {
  [[ $# == 1 ]] || iwk_die "pcap-stop NAME" 2
  # block-buffered tcpdump hands packets over at libpcap's 1 s timeout:
  # stopping sooner loses the last ones
  sleep 1.2
  cmd_run -t 30 "iwk-bg stop pcap-$1 10"
  cmd_copy_out "/var/tmp/iwk/$1.pcap" "$RUN/captures/$1.pcap"
  iwk_log "capture: $RUN/captures/$1.pcap ($(stat -c %s "$RUN/captures/$1.pcap") octets)"
}

cmd_logs() {
  mkdir -p "$RUN/logs"
  cmd_run -t 30 "dmesg >/run/iwk/dmesg.txt; rdma link show >/run/iwk/rdma-link.txt 2>&1;
    ip -s link >/run/iwk/ip-link.txt 2>&1; ss -tanpi >/run/iwk/ss.txt 2>&1;
    cd /run/iwk && tar -cf /tmp/iwk-logs.tar --exclude='*.pcap' --exclude='ctl.*' --exclude='*.pid' ." >/dev/null
  cmd_copy_out /tmp/iwk-logs.tar "$RUN/logs/guest-logs.tar"
  tar -xf "$RUN/logs/guest-logs.tar" -C "$RUN/logs" && rm -f "$RUN/logs/guest-logs.tar"
  iwk_log "logs in $RUN/logs ($(ls "$RUN/logs" | tr '\n' ' '))"
}

cmd_status() {
  local G; G=$(iwk_guest_dir)
  echo "run dir:  $RUN"
  echo "image:    $(readlink -f "$G" 2>/dev/null || echo none)"
  [[ -f $G/manifest.env ]] && sed -n 's/^IWK_\(KABI\|KVERSION\|SIW_VERMAGIC\)=/  \1=/p' "$G/manifest.env"
  if [[ -f $RUN/CRASHED ]]; then echo "state:    CRASHED (see $RUN/CRASHED)"; return "$IWK_EXIT_CRASH"; fi
  # a panic ends qemu (-no-reboot): look at the console before "not running"
  crash_check
  if ! qemu_alive; then echo "state:    not running"; return "$IWK_EXIT_DOWN"; fi
  echo "qemu:     pid $(qemu_pid); ports ctl=$IWK_SIW_CTL_PORT agent=$IWK_SIW_AGENT_PORT fwd=[$IWK_SIW_FWD]"
  if grep -a -q -E "$IWK_WARN_RE" "$SERIAL"; then echo "warning:  kernel WARNING on the console (grep WARNING $SERIAL)"; fi
  if cmd_ping quiet; then echo "state:    ready ($(cmd_ping))"; else echo "state:    booting / not answering"; return "$IWK_EXIT_DOWN"; fi
}

cmd_stop() {
  if qemu_alive; then
    crash_check
    if cmd_ping quiet; then
      cmd_logs || iwk_warn "could not collect logs"
      ctl 5 /dev/null "RUN 3 $(printf 'sync; echo o >/proc/sysrq-trigger\n' | tee "$RUN/.poweroff" | wc -c)" "$RUN/.poweroff" || true
      rm -f "$RUN/.poweroff"
      for _ in $(seq 100); do qemu_alive || break; sleep 0.1; done
    fi
    crash_check
    qemu_kill
    iwk_log "guest stopped (serial log: $SERIAL)"
  else
    rm -f "$PIDF"
    crash_check
    iwk_log "guest was not running"
  fi
  rm -f "$RUN/disk.qcow2"
}

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
[[ $# -ge 1 ]] || { usage; exit 2; }
sub=$1; shift
case "$sub" in
  start) cmd_start "$@" ;;
  stop) cmd_stop ;;
  run) cmd_run "$@" ;;
  copy-in) cmd_copy_in "$@" ;;
  copy-out) cmd_copy_out "$@" ;;
  pcap-start) cmd_pcap_start "$@" ;;
  pcap-stop) cmd_pcap_stop "$@" ;;
  logs) cmd_logs ;;
  status) cmd_status ;;
  ping) cmd_ping ;;
  -h|--help|help) usage ;;
  *) iwk_die "unknown command: $sub (start|stop|run|copy-in|copy-out|pcap-start|pcap-stop|logs|status)" 2 ;;
esac
