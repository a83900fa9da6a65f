#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The guest side of storage.sh: storage targets and their clients over siw0,
# both in the one guest, the client connecting to the guest's own address
# (the traffic goes over lo, where tcpdump sees it; docs/siw.md).
# storage.sh copies this file to /usr/local/sbin/iwk-storage and runs
#
#   iwk-storage prep                 lo MTU 1500, client ports 58000-60999, configfs
#   iwk-storage nfs-server           nfsd with its RDMA listener on 20049
#   iwk-storage nfs VERS             mount -o proto=rdma,vers=VERS; the workload; umount
#   iwk-storage nvmet                nvmet: a file-backed namespace, an rdma port on 4420
#   iwk-storage nvme                 nvme connect -t rdma; Identify; I/O; nvme disconnect
#   iwk-storage isert                LIO: a fileio LUN behind an iSER portal on 3260
#   iwk-storage iser                 iscsiadm -I iser: login; I/O; logout
#   iwk-storage ksmbd                ksmbd with SMB Direct (its RDMA listener on 5445)
#   iwk-storage smb                  mount -t cifs -o rdma; the workload; umount
#   iwk-storage cleanup              unmount, disconnect, log out (after a failed try)
#
# Server steps leave their daemons running (iwk-bg jobs) and may be run
# before the capture starts; client steps are what a capture holds. Each step
# prints what it does ("step: ...") and fails (non-zero) at the first error.
# The data written is a text pattern, each line numbered, so that it reads
# back recognisably in a capture and a wrong octet cannot pass cmp.
set -euo pipefail
ADDR=${IWK_STORAGE_ADDR:-10.0.2.15}
NQN=nqn.2014-08.org.iwarpkit:siw-storage
IQN=iqn.2003-01.org.iwarpkit:siw-storage
SMB_USER=iwk SMB_PASS=iwk-storage
say() { echo "step [$(cut -d" " -f1 /proc/uptime) s]: $*"; }

# pattern FILE OCTETS TAG: OCTETS/32 numbered lines of 32 octets, "iwarpkit TAG 0000001 ...."
pattern() {
  seq -f '%07g' 1 $(( $2 / 32 )) | sed "s/^/iwarpkit $3 /; s/\$/ ................................/" |
    cut -c1-31 >"$1"
  [[ $(stat -c %s "$1") == "$2" ]]
}
# wait_for SECS CMD...: until CMD succeeds, or fail
wait_for() {
  local secs=$1; shift
  for _ in $(seq $(( secs * 10 ))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "timed out after ${secs} s waiting for: $*" >&2; return 1
}
listening() { ss -ltn | grep "[:.]$1 " >/dev/null; }
disk_ready() { [[ -b /dev/$1 && $(cat "/sys/block/$1/size" 2>/dev/null || echo 0) -gt 0 ]]; }

cmd_prep() {
  # As captures.sh: Ethernet-sized DDP segments on lo, and client ports where
  # Wireshark 4.0 registers no dissector by port.
  ip link set lo mtu 1500
  echo '58000 60999' >/proc/sys/net/ipv4/ip_local_port_range
  mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
  mkdir -p /var/tmp/iwk
  pattern /var/tmp/iwk/data64k 65536 DATA
  pattern /var/tmp/iwk/data4k 4096 SMALL
  say "prep: lo mtu 1500, ports 58000-60999, test data $(sha256sum /var/tmp/iwk/data64k | cut -c1-12)"
}

# --- NFS over RDMA (RFC 8166, RFC 8267) -----------------------------------------
cmd_nfs_server() {
  modprobe nfsd
  modprobe rpcrdma
  mkdir -p /srv/nfs /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery
  chmod 1777 /srv/nfs
  mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
  mountpoint -q /var/lib/nfs/rpc_pipefs || mount -t rpc_pipefs sunrpc /var/lib/nfs/rpc_pipefs
  echo "/srv/nfs $ADDR(rw,sync,no_subtree_check,no_root_squash,insecure)" >/etc/exports
  pidof rpcbind >/dev/null || rpcbind -w
  exportfs -ra
  pidof rpc.mountd >/dev/null || rpc.mountd
  if [[ $(cat /proc/fs/nfsd/threads) == 0 ]]; then
    # The shortest NFSv4 lease and grace (10 s; settable only while nfsd is
    # down): OPENs in the grace period after nfsd starts get NFS4ERR_GRACE.
    echo 10 >/proc/fs/nfsd/nfsv4leasetime
    echo 10 >/proc/fs/nfsd/nfsv4gracetime
    rpc.nfsd 4
    date +%s >/run/iwk/nfsd.started
  fi
  grep -q '^rdma 20049' /proc/fs/nfsd/portlist || echo 'rdma 20049' >/proc/fs/nfsd/portlist
  [[ $(cat /proc/fs/nfsd/threads) -gt 0 ]] || { echo "nfsd has no threads" >&2; return 1; }
  say "nfsd: $(tr '\n' ' ' </proc/fs/nfsd/portlist)versions $(cat /proc/fs/nfsd/versions)"
}

cmd_nfs() {
  local vers=${1:?nfs VERS} opts m=/mnt/nfs
  # NFSv4 OPEN waits for the end of the grace period (10 s after nfsd started)
  if [[ $vers == 4* && -f /run/iwk/nfsd.started ]]; then
    local left=$(( $(cat /run/iwk/nfsd.started) + 12 - $(date +%s) ))
    if (( left > 0 )); then say "waiting ${left} s for the end of nfsd's grace period"; sleep "$left"; fi
  fi
  opts="proto=rdma,port=20049,vers=$vers"
  # v3: no NLM (it would run over TCP, outside the capture, and needs rpc.statd)
  [[ $vers == 3 ]] && opts+=",nolock"
  mkdir -p $m
  say "mount -t nfs -o $opts $ADDR:/srv/nfs $m"
  mount -t nfs -o "$opts" "$ADDR:/srv/nfs" $m
  grep " $m " /proc/mounts
  say "mkdir d"; mkdir $m/d
  # 64 KiB, direct: one WRITE whose data the server pulls with RDMA Reads (a Read chunk)
  say "dd 64 KiB -> d/big (oflag=direct)"
  dd if=/var/tmp/iwk/data64k of=$m/d/big bs=64k oflag=direct status=none
  # a short WRITE, inline in the RPC-over-RDMA message
  say "write 25 octets -> d/small"
  echo "iwarpkit NFS small file" >$m/d/small
  say "ls -l d; stat d/big"
  ls -l $m/d
  stat -c '%n %s' $m/d/big
  echo 3 >/proc/sys/vm/drop_caches
  # 64 KiB, direct: one READ whose data the server pushes with RDMA Writes (a Write chunk)
  say "dd d/big -> 64 KiB (iflag=direct), compare"
  dd if=$m/d/big of=/tmp/nfs-back bs=64k count=1 iflag=direct status=none
  cmp /var/tmp/iwk/data64k /tmp/nfs-back
  say "cat d/small"; cat $m/d/small
  say "mv d/small d/small2; rm d/big d/small2; rmdir d"
  mv $m/d/small $m/d/small2
  rm $m/d/big $m/d/small2
  rmdir $m/d
  say "umount"; umount $m
}

# --- NVMe over Fabrics, RDMA transport ----------------------------------------------
cmd_nvmet() {
  local S=/sys/kernel/config/nvmet ss
  modprobe nvmet
  modprobe nvmet-rdma
  modprobe nvme-rdma
  ss=$S/subsystems/$NQN
  truncate -s 16M /var/tmp/nvme.img
  mkdir -p "$ss/namespaces/1"
  echo 1 >"$ss/attr_allow_any_host"
  echo /var/tmp/nvme.img >"$ss/namespaces/1/device_path"
  echo 1 >"$ss/namespaces/1/enable"
  mkdir -p $S/ports/1
  echo rdma >$S/ports/1/addr_trtype
  echo ipv4 >$S/ports/1/addr_adrfam
  echo "$ADDR" >$S/ports/1/addr_traddr
  echo 4420 >$S/ports/1/addr_trsvcid
  [[ -e $S/ports/1/subsystems/$NQN ]] || ln -s "$ss" "$S/ports/1/subsystems/$NQN"
  wait_for 10 listening 4420
  say "nvmet: $NQN, namespace 1 = /var/tmp/nvme.img (16 MiB), rdma port $ADDR:4420"
}

nvme_dev() { local d; for d in /sys/class/nvme/nvme*; do
  [[ $(cat "$d/subsysnqn" 2>/dev/null) == "$NQN" ]] && { echo "${d##*/}"; return 0; }; done; return 1; }
cmd_nvme() {
  local c n
  # one I/O queue: two RDMA connections (admin, I/O), not one per CPU
  say "nvme connect -t rdma -a $ADDR -s 4420 -n $NQN -i 1"
  nvme connect -t rdma -a "$ADDR" -s 4420 -n "$NQN" -i 1
  c=$(nvme_dev)
  n=${c}n1
  wait_for 20 disk_ready "$n"
  say "nvme id-ctrl /dev/$c; nvme id-ns /dev/$n"
  nvme id-ctrl /dev/"$c" | grep -E '^(mn|subnqn|ioccsz|iorcsz) '
  nvme id-ns /dev/"$n" | grep -E '^(nsze|nlbaf|lbaf  0) '
  # 64 KiB: the target fetches it with RDMA Reads (keyed SGL); 4 KiB: in-capsule data
  say "dd 64 KiB -> $n at 0, 4 KiB at 1 MiB (oflag=direct)"
  dd if=/var/tmp/iwk/data64k of=/dev/"$n" bs=64k oflag=direct status=none
  dd if=/var/tmp/iwk/data4k of=/dev/"$n" bs=4k seek=256 oflag=direct status=none
  # reads: the target places the data with RDMA Writes
  say "dd $n -> 64 KiB at 0, 4 KiB at 1 MiB (iflag=direct), compare"
  dd if=/dev/"$n" of=/tmp/nvme-back bs=64k count=1 iflag=direct status=none
  cmp /var/tmp/iwk/data64k /tmp/nvme-back
  dd if=/dev/"$n" of=/tmp/nvme-back4 bs=4k skip=256 count=1 iflag=direct status=none
  cmp /var/tmp/iwk/data4k /tmp/nvme-back4
  say "nvme disconnect -n $NQN"
  nvme disconnect -n "$NQN"
}

# --- iSER (RFC 7145): LIO target, open-iscsi initiator -------------------------------
cmd_isert() {
  local T=/sys/kernel/config/target tpg np
  modprobe target_core_mod
  modprobe target_core_file
  modprobe iscsi_target_mod
  modprobe ib_isert
  tpg=$T/iscsi/$IQN/tpgt_1
  np=$tpg/np/$ADDR:3260
  truncate -s 16M /var/tmp/iser.img
  mkdir -p $T/core/fileio_0/d0
  echo "fd_dev_name=/var/tmp/iser.img,fd_dev_size=16777216" >$T/core/fileio_0/d0/control
  echo 1 >$T/core/fileio_0/d0/enable
  mkdir -p "$tpg/lun/lun_0"
  [[ -e $tpg/lun/lun_0/d0 ]] || ln -s $T/core/fileio_0/d0 "$tpg/lun/lun_0/d0"
  # demo mode: any initiator, no CHAP, writable
  echo 0 >"$tpg/attrib/authentication"
  echo 1 >"$tpg/attrib/generate_node_acls"
  echo 0 >"$tpg/attrib/demo_mode_write_protect"
  echo 1 >"$tpg/attrib/cache_dynamic_acls"
  if [[ ! -d $np ]]; then
    # A portal opens its TCP listener first; then "iser" makes isert listen
    # through rdma_cm, and siw's listen is a TCP socket too: on the same
    # address and port it fails with EADDRINUSE (rdma_listen -98). So the
    # portal is made from another network namespace (its TCP listener stays
    # there, holding the address in that namespace only), then switched to
    # iSER, which listens in the initial namespace. nsenter, not "ip netns
    # exec": the latter remounts /sys, and configfs with it.
    ip netns add iwk-iscsi-tcp 2>/dev/null || true
    nsenter --net=/run/netns/iwk-iscsi-tcp sh -c "ip link set lo up &&
      { ip addr show dev lo | grep ' $ADDR/' >/dev/null || ip addr add $ADDR/32 dev lo; } && mkdir '$np'"
  fi
  [[ $(cat "$np/iser") == 1 ]] || echo 1 >"$np/iser"
  echo 1 >"$tpg/enable"
  wait_for 10 listening 3260
  say "LIO: $IQN, LUN 0 = fileio /var/tmp/iser.img (16 MiB), iSER portal $ADDR:3260"
}

iscsi_disk() { ls /sys/class/iscsi_session/session*/device/target*/*/block/ 2>/dev/null | head -n1 | grep .; }
cmd_iser() {
  local d
  modprobe ib_iser
  modprobe sd_mod
  mkdir -p /run/lock/iscsi
  if ! pidof iscsid >/dev/null; then iwk-bg start iscsid iscsid -f >/dev/null; wait_for 10 pidof iscsid; fi
  # No discovery: SendTargets would go over TCP, whose listener is in the
  # other namespace. The node record names the iser interface instead.
  iscsiadm -m node -T "$IQN" -p "$ADDR:3260" -I iser >/dev/null 2>&1 ||
    iscsiadm -m node -o new -T "$IQN" -p "$ADDR:3260" -I iser >/dev/null
  say "iscsiadm -m node -T $IQN -p $ADDR:3260 -I iser --login"
  iscsiadm -m node -T "$IQN" -p "$ADDR:3260" -I iser --login
  iscsiadm -m session -P 1 | grep -E 'Iface Transport|Target:'
  wait_for 20 iscsi_disk
  d=$(iscsi_disk)
  wait_for 20 disk_ready "$d"
  say "dd 64 KiB -> $d at 0, 4 KiB at 1 MiB (oflag=direct)"
  dd if=/var/tmp/iwk/data64k of=/dev/"$d" bs=64k oflag=direct status=none
  dd if=/var/tmp/iwk/data4k of=/dev/"$d" bs=4k seek=256 oflag=direct status=none
  say "dd $d -> 64 KiB at 0, 4 KiB at 1 MiB (iflag=direct), compare"
  dd if=/dev/"$d" of=/tmp/iser-back bs=64k count=1 iflag=direct status=none
  cmp /var/tmp/iwk/data64k /tmp/iser-back
  dd if=/dev/"$d" of=/tmp/iser-back4 bs=4k skip=256 count=1 iflag=direct status=none
  cmp /var/tmp/iwk/data4k /tmp/iser-back4
  say "iscsiadm --logout"
  iscsiadm -m node -T "$IQN" -p "$ADDR:3260" -I iser --logout
}

# --- SMB Direct (MS-SMBD): ksmbd and the cifs client -------------------------------------
cmd_ksmbd() {
  # the modules of build-guest.sh step 4b (updates/), with SMB Direct
  modprobe ksmbd
  mkdir -p /srv/smb /etc/ksmbd
  chmod 1777 /srv/smb
  cat >/etc/ksmbd/ksmbd.conf <<EOF
[global]
	server signing = disabled
	smb3 encryption = no
	server multi channel support = no
[storage]
	path = /srv/smb
	read only = no
	force user = root
EOF
  [[ -f /etc/ksmbd/ksmbdpwd.db ]] || ksmbd.adduser -a "$SMB_USER" -p "$SMB_PASS" >/dev/null
  if ! pidof ksmbd.mountd >/dev/null; then iwk-bg start ksmbd ksmbd.mountd -n >/dev/null; fi
  wait_for 20 listening 5445
  say "ksmbd: share 'storage' = /srv/smb, SMB Direct listener on 5445 ($(ss -ltn | grep -c ':5445 ') socket(s))"
}

cmd_smb() {
  local m=/mnt/smb opts
  modprobe cifs
  mkdir -p $m
  # cache=none: every read and write goes to the server (no page cache)
  opts="rdma,vers=3.1.1,username=$SMB_USER,password=$SMB_PASS,cache=none"
  say "mount -t cifs //$ADDR/storage $m -o ${opts/password=*,/password=...,}"
  mount -t cifs "//$ADDR/storage" $m -o "$opts"
  grep " $m " /proc/mounts | sed 's/password=[^,]*/password=.../'
  say "mkdir d"; mkdir $m/d
  say "dd 64 KiB -> d/big"
  dd if=/var/tmp/iwk/data64k of=$m/d/big bs=64k status=none
  say "write 25 octets -> d/small"
  echo "iwarpkit SMB small file" >$m/d/small
  say "ls -l d; stat d/big"
  ls -l $m/d
  stat -c '%n %s' $m/d/big
  say "dd d/big -> 64 KiB, compare"
  dd if=$m/d/big of=/tmp/smb-back bs=64k count=1 status=none
  cmp /var/tmp/iwk/data64k /tmp/smb-back
  say "cat d/small"; cat $m/d/small
  say "mv d/small d/small2; rm d/big d/small2; rmdir d"
  mv $m/d/small $m/d/small2
  rm $m/d/big $m/d/small2
  rmdir $m/d
  say "umount"; umount $m
}

# After a failed try: undo what a client step may have left behind.
cmd_cleanup() {
  umount -l /mnt/nfs 2>/dev/null || true
  umount -l /mnt/smb 2>/dev/null || true
  nvme disconnect -n "$NQN" >/dev/null 2>&1 || true
  iscsiadm -m node -T "$IQN" -p "$ADDR:3260" -I iser --logout >/dev/null 2>&1 || true
  say "cleanup done"
}

sub=${1:-}; shift || true
case "$sub" in
  prep) cmd_prep ;;
  nfs-server) cmd_nfs_server ;;
  nfs) cmd_nfs "$@" ;;
  nvmet) cmd_nvmet ;;
  nvme) cmd_nvme ;;
  isert) cmd_isert ;;
  iser) cmd_iser ;;
  ksmbd) cmd_ksmbd ;;
  smb) cmd_smb ;;
  cleanup) cmd_cleanup ;;
  *) echo "usage: iwk-storage prep|nfs-server|nfs VERS|nvmet|nvme|isert|iser|ksmbd|smb|cleanup" >&2; exit 2 ;;
esac
