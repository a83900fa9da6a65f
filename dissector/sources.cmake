# SPDX-License-Identifier: GPL-2.0-or-later
# The plugin's sources, one list for the plugin (dissector/CMakeLists.txt)
# and the harnesses that link it into a fuzzer (fuzz/CMakeLists.txt).
set(IWK_PLUGIN_SOURCES
  plugin.c
  packet-iwarpkit-mpa.c
  packet-iwarpkit-rdmap.c
  packet-iwarpkit-sctp.c
  packet-iwarpkit-expert.c
  packet-iwarpkit-stats.c
  packet-iwarpkit-storage.c
  packet-iwarpkit-rpcrdma.c
  packet-iwarpkit-iser.c
  packet-iwarpkit-nvmeof.c
  packet-iwarpkit-smbd.c
)
list(TRANSFORM IWK_PLUGIN_SOURCES PREPEND "${CMAKE_CURRENT_LIST_DIR}/")
