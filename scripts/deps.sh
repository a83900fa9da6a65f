#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what iwarpkit needs on Debian 12 (bookworm), 13 (trixie) and
# testing (forky). Idempotent: apt runs only when a package is missing, so
# repeated runs cost nothing. Only names every release has: the compiler
# runtimes come through llvm-defaults' metapackages (clang,
# libclang-rt-dev), which pull that release's clang-N.
#   scripts/deps.sh          build + test dependencies
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config   # the build
  clang libclang-rt-dev              # second compiler; ASan/UBSan/libFuzzer runtimes
  libisal-dev                        # ISA-L crc32_iscsi: the CRC benchmark's baseline
  libpcap-dev                        # pcap output (runner) and pcap input (iwarp-decode)
  libusrsctp-dev                     # user-space SCTP: the verbs binding's SCTP transport (RFC 5043)
  libwireshark-dev wireshark-dev tshark  # the epan plugin and its golden replays
  libibverbs-dev librdmacm-dev       # iwarp-agent: the agent protocol over rdma-core
  python3-scapy python3-pytest       # Scapy layers, checked against libiwarp
  zip unzip                          # the OSS-Fuzz build test packs seed corpora
  file                               # CPack's .deb shlibdeps (ctest package_deb)
  clang-format                       # the formatting check (scripts/check-style.sh)
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
