# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck disable=SC2034  # the variables are for the scripts that source this
# shellcheck shell=bash
# Shared settings and helpers for interop/siw/*.sh (sourced, not run).
#
# Everything is configurable through the environment; docs/siw.md lists it all.

IWK_SIW_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# --- what the guest is -------------------------------------------------------
# Debian suite and mirror of the guest root.
: "${IWK_SIW_SUITE:=bookworm}"
: "${IWK_SIW_MIRROR:=http://deb.debian.org/debian}"
: "${IWK_SIW_SECURITY_MIRROR:=http://deb.debian.org/debian-security}"
# The guest kernel, chosen on purpose: the Debian package version of
# linux-image-amd64 / linux-source-6.1 to use. 6.1.176-1 (ABI 6.1.0-50) is the
# kernel of the bookworm point release in the main archive (not a security
# upload), so it stays downloadable until the next point release and the cache
# key stays put between security uploads. "auto" takes the newest kernel the
# guest's apt sees (bookworm + bookworm-security). If the pinned version has
# left the mirror, build-guest.sh falls back to "auto" with a WARNING and
# records what it used (manifest.env); bump the pin here then.
: "${IWK_SIW_KVERSION:=6.1.176-1}"
# Packages of the guest root besides debootstrap's minbase.
IWK_SIW_PACKAGES=(
  # RDMA user space and the tools the tests use
  rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
  iproute2 tcpdump
  # boot and control: modules, initramfs, the control agent's listener
  kmod initramfs-tools zstd socat procps
  # building siw.ko (linux-headers pulls gcc-12) and, later, iwarp-agent
  build-essential cmake pkg-config libibverbs-dev librdmacm-dev xz-utils
  libpcap-dev   # the project's configure step needs it (build-agent.sh)
  # storage over RDMA (storage.sh): NFS/RDMA server and client, NVMe-oF host,
  # the iSER initiator, SMB Direct server (ksmbd) and client (cifs)
  nfs-kernel-server nvme-cli open-iscsi ksmbd-tools cifs-utils
)

# --- where things go ---------------------------------------------------------
: "${IWK_SIW_CACHE:=${HOME:-/root}/.cache/iwarpkit-siw}"
# One guest instance = one run dir (qemu pid, serial log, overlay disk, logs,
# captures). Two guests at once need two run dirs and two port sets.
: "${IWK_SIW_RUN:=/tmp/iwk-siw-$(id -u)}"

# --- guest resources and ports -----------------------------------------------
: "${IWK_SIW_MEM:=2048}"          # MiB
: "${IWK_SIW_SMP:=2}"
# Host ports (bound on 127.0.0.1 only) forwarded into the guest by qemu's user
# network. CTL: the harness's command channel (guest port 7399). AGENT:
# iwarp-agent's agent protocol (guest port 7400). FWD: extra RDMA listener
# ports, "HOST:GUEST" or "PORT" (same both sides), space separated; 18515 is
# perftest's default port.
: "${IWK_SIW_CTL_PORT:=7399}"
: "${IWK_SIW_AGENT_PORT:=7400}"
# (set but empty: no RDMA forwards at all)
: "${IWK_SIW_FWD=18515 7401 7402 7403 7404}"
# Guest -> host forwards (the guest cannot reach anything else: restrict=on).
# "PORT" makes 10.0.2.100:PORT in the guest reach 127.0.0.1:PORT on the host.
: "${IWK_SIW_GUESTFWD:=}"
IWK_SIW_GUEST_CTL_PORT=7399
IWK_SIW_GUEST_AGENT_PORT=7400
IWK_SIW_GUEST_ADDR=10.0.2.15

# --- timeouts (seconds) ------------------------------------------------------
: "${IWK_SIW_BOOT_TIMEOUT:=300}"  # qemu start -> control agent answers
: "${IWK_SIW_RUN_TIMEOUT:=120}"   # default for one 'run'
: "${IWK_SIW_IO_TIMEOUT:=120}"    # one copy-in / copy-out

# --- exit codes ----------------------------------------------------------------
IWK_EXIT_SKIP=77        # cannot build/boot here (no root, no mirror, no qemu)
IWK_EXIT_CRASH=200      # the guest kernel oopsed/panicked (qemu killed)
IWK_EXIT_DOWN=201       # guest not running / control channel unreachable

iwk_log()  { printf '[siw %s] %s\n' "$(date +%T)" "$*" >&2; }
iwk_warn() { printf '[siw %s] WARNING: %s\n' "$(date +%T)" "$*" >&2; }
iwk_die()  { printf '[siw %s] ERROR: %s\n' "$(date +%T)" "$1" >&2; exit "${2:-1}"; }
iwk_skip() { printf '[siw %s] SKIP: %s\n' "$(date +%T)" "$*" >&2; exit "$IWK_EXIT_SKIP"; }

# iwk_boot_or_skip [guest.sh start options]: boot the guest of IWK_SIW_RUN.
# A qemu that cannot run here at all is "cannot test" (exit 77); a guest
# that boots wrong is a failure.
iwk_boot_or_skip() {
  local rc=0
  bash "$IWK_SIW_DIR/guest.sh" start "$@" || rc=$?
  [[ $rc != 0 ]] || return 0
  if [[ -f $IWK_SIW_RUN/qemu.log ]] &&
     grep -q -E 'Could not initialize|could not load kernel|failed to initialize|Could not allocate' "$IWK_SIW_RUN/qemu.log"; then
    iwk_skip "qemu cannot run here: $(head -n 3 "$IWK_SIW_RUN/qemu.log" | tr '\n' ' ')"
  fi
  iwk_die "guest did not boot (rc=$rc); console: $IWK_SIW_RUN/serial.log"
}

# iwk_stop_guest_on_exit [MESSAGE]: when the script ends (or is sent TERM,
# INT, HUP) run its iwk_on_exit function if it has one, stop the guest of
# IWK_SIW_RUN, print MESSAGE, and keep the exit status.
iwk_stop_guest_on_exit() {
  IWK_EXIT_MSG=${1:-}
  trap _iwk_exit_trap EXIT
  trap 'exit 143' TERM INT HUP
}
_iwk_exit_trap() {
  local rc=$?
  if declare -F iwk_on_exit >/dev/null; then iwk_on_exit || true; fi
  if [[ -f $IWK_SIW_RUN/qemu.pid ]]; then bash "$IWK_SIW_DIR/guest.sh" stop >/dev/null 2>&1 || true; fi
  [[ -z $IWK_EXIT_MSG ]] || echo "$IWK_EXIT_MSG"
  exit "$rc"
}

# A guest script that starts iwarp-agent (copied to /usr/local/bin) on siw0,
# agent protocol on guest port 7400, and waits until it listens.
IWK_AGENT_START='iwk-bg start agent iwarp-agent --agent 0.0.0.0:7400 --dev siw0 &&
  for i in $(seq 50); do ss -ltn | grep ":7400 " >/dev/null && exit 0; sleep 0.1; done
  echo "iwarp-agent did not listen:"; cat /run/iwk/agent.log; exit 1'

# iwk_pick_ports N: N consecutive free ports on 127.0.0.1, the first printed
# (other guests and engineers share the machine, so fixed ports collide).
iwk_port_free() { ! { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null; }
iwk_pick_ports() {
  local n=$1 base i ok
  for _ in $(seq 100); do
    base=$(( 20000 + (RANDOM % 2000) * 10 )); ok=1
    for ((i = 0; i < n; i++)); do iwk_port_free $(( base + i )) || { ok=0; break; }; done
    [[ $ok == 1 ]] && { echo "$base"; return 0; }
  done
  iwk_die "no $n free consecutive ports on 127.0.0.1"
}

# The guest image the scripts use: $IWK_SIW_GUEST or the cache's "current".
iwk_guest_dir() {
  if [[ -n "${IWK_SIW_GUEST:-}" ]]; then printf '%s\n' "$IWK_SIW_GUEST"
  else printf '%s\n' "$IWK_SIW_CACHE/current"; fi
}

# Crash signatures on the serial console (printk of an oops, BUG or panic).
# A kernel GPF carries "[#N]"; a user-space one ("traps: prog[pid] general
# protection fault ... in lib") is not a kernel crash.
IWK_CRASH_RE='Kernel panic - not syncing|Oops: |BUG: unable to handle|BUG: kernel NULL pointer|kernel BUG at|general protection fault.*\[#[0-9]+\]|BUG: soft lockup|rcu_sched self-detected stall|rcu: INFO: rcu_preempt self-detected stall|BUG: KASAN|BUG: scheduling while atomic'
IWK_WARN_RE='WARNING: CPU: [0-9]+ PID: [0-9]+'
