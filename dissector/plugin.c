/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Plugin entry points for the iwarpkit epan plugin (Wireshark 4.0 ABI). */
#define WS_BUILD_DLL
#include <ws_symbol_export.h>
#include <ws_version.h>

#include <epan/packet.h>
#include <epan/proto.h>

#include "packet-iwarpkit.h"
#include "packet-iwarpkit-storage.h"

#ifndef IWK_PLUGIN_VERSION
#define IWK_PLUGIN_VERSION "0.1.0"
#endif

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = IWK_PLUGIN_VERSION;
WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;

WS_DLL_PUBLIC void plugin_register(void);

static void iwk_register(void) {
    proto_register_iwk_mpa();
    proto_register_iwk_rdmap();
    proto_register_iwk_sctp();
    proto_register_iwk_storage();
    proto_register_iwk_rpcrdma();
    proto_register_iwk_iser();
    proto_register_iwk_nvmeof();
}

static void iwk_handoff(void) {
    proto_reg_handoff_iwk_mpa();
    proto_reg_handoff_iwk_rdmap();
    proto_reg_handoff_iwk_sctp();
    proto_reg_handoff_iwk_storage();
    proto_reg_handoff_iwk_iser();
}

void plugin_register(void) {
    static proto_plugin plug;
    plug.register_protoinfo = iwk_register;
    plug.register_handoff = iwk_handoff;
    proto_register_plugin(&plug);
    iwk_stats_register();
    iwk_storage_stats_register();
}
