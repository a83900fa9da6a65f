# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared set-up: the package on sys.path and libiwarp's vectors.

IWK_VECTORS names the iwk_vectors binary (ctest sets it, see
conformance/scapy/CMakeLists.txt); without it the vector tests are
skipped. IWARP_TARGET names iwarp-target for the end-to-end examples.
"""

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

_VECTORS = None


def load_vectors():
    """libiwarp's vectors as a list of dicts (empty without IWK_VECTORS)."""
    global _VECTORS
    if _VECTORS is None:
        binary = os.environ.get("IWK_VECTORS")
        if not binary:
            _VECTORS = []
        else:
            out = subprocess.run([binary], check=True, stdout=subprocess.PIPE, timeout=120)
            _VECTORS = [json.loads(line) for line in out.stdout.decode().splitlines()]
            if not _VECTORS:
                raise RuntimeError("%s printed no vectors" % binary)
    return _VECTORS


def pytest_generate_tests(metafunc):
    for kind in ("mpa_rr", "rdmap", "fpdu", "stream", "crc", "term"):
        name = "vec_" + kind
        if name in metafunc.fixturenames:
            if not os.environ.get("IWK_VECTORS"):
                metafunc.parametrize(
                    name,
                    [pytest.param(None, marks=pytest.mark.skip(reason="IWK_VECTORS not set"))],
                )
                continue
            vecs = [v for v in load_vectors() if v["kind"] == kind]
            metafunc.parametrize(name, vecs, ids=[v["id"] for v in vecs])
