#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The one comparison of iwarp-decode's verdicts with the plugin's.

   verdict-diff.py [--allow ALLOW] [--ranges RANGES] NAME TOOL.jsonl PLUGIN.pdml

TOOL.jsonl is `iwarp-decode --json` on a capture, PLUGIN.pdml `tshark -T pdml`
with the iwarpkit plugin on the same capture. Each side is reduced to a set of
(frame, verdict) pairs, verdict being a Terminate triple "L/E/0xCC" or
"close:<id>":

  iwarp-decode: every record whose "verdict" is not "ok", at the frame that
    completed it ("last_frame" when present, else "frame"), which is where
    Wireshark's TCP reassembly hands the frame to the plugin;
  plugin: every iwk_mpa.must_terminate.* / iwk_rdmap.must_terminate.*
    expert item (stateless and stateful verdicts alike; the triple is read
    from its message) and every iwk_mpa.close.* item, except
    iwk_mpa.close.mpa_rejected: a rejecting Reply makes MPA exit (RFC 5044
    §7.1.2 rule 3), which is no violation and no verdict in either tool.

The sets must be equal. With --ranges, TOOL and PLUGIN come from one capture
made of several (mutate-pcaps.py's all.pcap): each range of frames is compared
as its own capture, with frame numbers counted from the range's start. ALLOW
lists deliberate differences, one
per line: "NAME FRAME VERDICT tool|plugin  # reason" (the side that has the
pair); '#' starts a comment. Exit 0 when equal, 1 with each difference
printed, 2 on unreadable input.
"""
import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET

TRIPLE = re.compile(r"Terminate (\d+)/(\d+)/0x([0-9a-fA-F]{2})")


def tool_pairs(path):
    pairs = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise SystemExit(f"verdict-diff: {path}:{n}: not JSON: {e}")
            v = rec.get("verdict")
            if v is None or v == "ok":
                continue
            frame = rec.get("last_frame", rec.get("frame"))
            if "close" in v:
                pairs.add((frame, "close:" + v["close"]))
            else:
                pairs.add((frame, "%u/%u/0x%02x" % (v["layer"], v["etype"], v["code"])))
    return pairs


def plugin_pairs(path):
    pairs = set()
    frame = None
    try:
        for _, el in ET.iterparse(path, events=("end",)):
            if el.tag == "field":
                name = el.get("name", "")
                if name == "num" and frame is None:
                    frame = int(el.get("show"), 0)
                elif ".must_terminate." in name and name.startswith("iwk_"):
                    m = TRIPLE.search(el.get("showname", ""))
                    if not m:
                        raise SystemExit(f"verdict-diff: {path}: frame {frame}: no triple in "
                                         f"{el.get('showname')!r}")
                    pairs.add((frame, "%s/%s/0x%s" % (m.group(1), m.group(2), m.group(3).lower())))
                elif name.startswith("iwk_mpa.close.") and name != "iwk_mpa.close.mpa_rejected":
                    pairs.add((frame, "close:" + name[len("iwk_mpa.close."):]))
            elif el.tag == "packet":
                frame = None
                el.clear()
    except ET.ParseError as e:
        raise SystemExit(f"verdict-diff: {path}: not PDML: {e}")
    return pairs


def allowed(path, name):
    allow = {}
    if not path:
        return allow
    with open(path, encoding="utf-8") as f:
        for line in f:
            body = line.split("#", 1)[0].split()
            if not body:
                continue
            if len(body) != 4 or body[3] not in ("tool", "plugin"):
                raise SystemExit(f"verdict-diff: {path}: bad line {line.rstrip()!r}")
            if body[0] == name:
                allow[(int(body[1]), body[2])] = body[3]
    return allow


def compare(name, tool, plug, allow):
    """Print each difference not allowed; returns how many."""
    bad = 0
    for side, only in (("tool", tool - plug), ("plugin", plug - tool)):
        for frame, v in sorted(only, key=lambda p: (p[0] or 0, p[1])):
            if allow.get((frame, v)) == side:
                continue
            who, other = ("iwarp-decode", "the plugin") if side == "tool" else ("the plugin",
                                                                                 "iwarp-decode")
            print(f"DIFF {name}: frame {frame}: {who} says {v}, {other} does not")
            bad += 1
    for (frame, v), side in sorted(allow.items()):
        has = (frame, v) in (tool if side == "tool" else plug)
        gone = (frame, v) in (plug if side == "tool" else tool)
        if not has or gone:
            print(f"DIFF {name}: allow-list entry '{frame} {v} {side}' no longer matches")
            bad += 1
    return bad


def main(argv):
    ap = argparse.ArgumentParser(description="iwarp-decode's verdicts against the plugin's")
    ap.add_argument("--allow", help="allow-list of deliberate differences")
    ap.add_argument("--ranges", help="lines 'NAME FIRST LAST': compare each frame range as "
                                     "its own capture NAME, frames renumbered from 1")
    ap.add_argument("name")
    ap.add_argument("tool_jsonl")
    ap.add_argument("plugin_pdml")
    a = ap.parse_args(argv[1:])
    tool, plug = tool_pairs(a.tool_jsonl), plugin_pairs(a.plugin_pdml)
    if not a.ranges:
        bad = compare(a.name, tool, plug, allowed(a.allow, a.name))
        print(f"{a.name}: iwarp-decode {len(tool)}, plugin {len(plug)} verdicts, "
              f"{'equal' if not bad else str(bad) + ' differences'}")
        return 1 if bad else 0
    bad = total = nbad = 0
    with open(a.ranges, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            sub, first, last = line.split()
            first, last = int(first), int(last)

            def part(pairs):
                return {(fr - first + 1, v) for fr, v in pairs if first <= fr <= last}
            t, p = part(tool), part(plug)
            total += len(t)
            b = compare(f"{a.name}/{sub}.pcap", t, p, allowed(a.allow, sub))
            bad += b
            nbad += 1 if b else 0
    print(f"{a.name}: {total} iwarp-decode verdicts over the ranges, "
          f"{'all equal' if not bad else f'{bad} differences in {nbad} captures'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
