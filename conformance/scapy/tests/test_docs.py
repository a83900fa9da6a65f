# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/scapy.md's Python examples run as written, in order, in one
namespace (later examples use names from earlier ones). A block preceded by
``<!-- scapy-doc: needs iwarp-target -->`` talks to iwarp-target and needs
IWARP_TARGET (ctest sets it)."""

import os
import re

import pytest

ROOT = os.environ.get(
    "IWK_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")),
)
DOC = os.path.join(ROOT, "docs", "scapy.md")
NEEDS_TARGET = "<!-- scapy-doc: needs iwarp-target -->"


def _blocks():
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    blocks = []
    heading = "top"
    pending_target = False
    for m in re.finditer(r"^(#+ [^\n]*)$|^(<!-- scapy-doc:[^\n]*-->)$|^```python\n(.*?)^```", text,
                         re.M | re.S):
        if m.group(1):
            heading = m.group(1).lstrip("# ").strip()
        elif m.group(2):
            pending_target = m.group(2) == NEEDS_TARGET
        else:
            blocks.append((heading, m.group(3), pending_target))
            pending_target = False
    return blocks


BLOCKS = _blocks()
NAMESPACE = {"__name__": "scapy_doc"}


def test_doc_has_examples():
    assert len(BLOCKS) >= 5
    assert any(target for _, _, target in BLOCKS)


@pytest.mark.parametrize(
    "heading, code, needs_target",
    BLOCKS,
    ids=["%d-%s" % (i, h.lower().replace(" ", "-")[:40]) for i, (h, _, _) in enumerate(BLOCKS)],
)
def test_doc_example(heading, code, needs_target, monkeypatch):
    if needs_target and not os.environ.get("IWARP_TARGET"):
        pytest.skip("IWARP_TARGET not set")
    monkeypatch.chdir(ROOT)
    exec(compile(code, "%s (%s)" % (DOC, heading), "exec"), NAMESPACE)
