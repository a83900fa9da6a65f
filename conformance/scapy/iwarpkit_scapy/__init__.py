# SPDX-License-Identifier: GPL-2.0-or-later
"""iWARP (RDMA over TCP) layers for Scapy: MPA (RFC 5044, RFC 6581), DDP
(RFC 5041) and RDMAP (RFC 5040, RFC 7306).

    from iwarpkit_scapy import *

    MPAFPDU()/DDPTagged(stag=0x1234, to=0x1000)/b"hello"     # RDMA Write
    MPAFPDU()/DDPUntagged()/RDMAPReadRequest(read_size=64)  # opcode 1, QN 1
    MPA(octets)                       # Request/Reply/FPDU, dissected
    MPAStream(markers=True).build(fpdu1, fpdu2)             # with Markers
    bind_iwarp_port(4791)             # dissect TCP payloads on that port
    dissect_iwarp(rdpcap("x.pcap"))   # whole connections, Markers too

See docs/scapy.md.
"""

from .crc32c import crc32c, crc32c_update, crc32c_wire  # noqa: F401
from .ddp import *  # noqa: F401,F403
from .markers import *  # noqa: F401,F403
from .mpa import *  # noqa: F401,F403
from .rdmap import *  # noqa: F401,F403
from .session import *  # noqa: F401,F403

from . import ddp as _ddp, markers as _markers, mpa as _mpa, rdmap as _rdmap, session as _session

__all__ = (
    ["crc32c", "crc32c_update", "crc32c_wire"]
    + _ddp.__all__
    + _mpa.__all__
    + _rdmap.__all__
    + _markers.__all__
    + _session.__all__
)
