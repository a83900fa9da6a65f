#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every RFC citation in the tree names something that exists.

    check_citations.py SPECS_DIR INDEX SOURCE_DIR   check the tree (exit 1 on a bad one)
    check_citations.py --self-test SPECS_DIR INDEX  prove the checker catches bad ones
    check_citations.py --write-index SPECS_DIR INDEX   derive the index from the texts
    check_citations.py --index-check SPECS_DIR INDEX   fail if the index is stale

The RFC texts live outside the repository (../shared/specs); INDEX
(rfc-index.json, committed) holds what the check needs of them (section
ids, figure numbers, numbered entries), so a clean clone checks too.

A citation is "RFC NNNN §X" (more sections may follow: "§5.3, §7.2",
"§8 and §9"), optionally followed by "Fig. N" / "Figure N" or by
"item N" / "rule N" / "check N" / "code N" where that is checkable: a
section must be a heading of that RFC's text in SPECS_DIR, a figure a
"Figure N" caption, an item or rule a numbered list entry inside the section
(its subsections included). RFCs not in SPECS_DIR cannot be checked and are
only counted. Scanned: conformance cases and deviations, C sources and
headers, Markdown docs; build and corpus folders are skipped.
"""
import json
import os
import re
import sys

RFC_RE = re.compile(r"RFC[ \u00a0]?(\d{3,4})")
# One section after "§": 7.1, 4.8, A.2, 5.2.1 (a trailing sentence dot is not part of it).
SEC = r"§\s?([0-9A-Z]+(?:\.[0-9]+)*)"
FIRST_RE = re.compile(r"\s*" + SEC)
MORE_RE = re.compile(r"(?:,\s*|\s+and\s+|\s+or\s+|/|\s*-\s*)" + SEC)
APP_RE = re.compile(r"\s*(?:App\.|Appendix)\s+([A-Z](?:\.[0-9]+)*)")
FIG_RE = re.compile(r"\s*(?:\(|,\s*)?(?:Fig\.|Figure)\s+(\d+)")
ITEM_RE = re.compile(r"\s*(?:\(|,\s*)?(?:[a-z]+\s+)?(item|rule|check|code)s?\s+(\d+)")
EXTS = (".c", ".h", ".md", ".case", ".txt")
SKIP_DIRS = {".git", "build", "corpus", "corpora", "node_modules", "specs"}


class Rfc:
    def __init__(self, text):
        self.sections = {}  # id -> (start line, end line)
        self.figures = set()
        lines = text.split("\n")
        heads = []
        for i, ln in enumerate(lines):
            m = re.match(r"^(?:Appendix\s+)?([0-9]+(?:\.[0-9]+)*|[A-Z](?:\.[0-9]+)*)\.?\s\s*\S", ln)
            if m and not re.match(r"^RFC \d", ln):
                sid = m.group(1)
                # a bare capital letter heading only as "Appendix X."
                if re.fullmatch(r"[A-Z]", sid) and not ln.startswith("Appendix"):
                    continue
                heads.append((i, sid))
            for f in re.finditer(r"Figure\s+(\d+)", ln):
                self.figures.add(int(f.group(1)))
        for k, (i, sid) in enumerate(heads):
            if sid not in self.sections:
                end = heads[k + 1][0] if k + 1 < len(heads) else len(lines)
                self.sections[sid] = (i, end)
        self.lines = lines
        self.heads = heads

    def items(self, sid):
        """Numbers of the numbered list entries in sid and its subsections."""
        if sid not in self.sections:
            return set()
        start = self.sections[sid][0]
        end = len(self.lines)
        for i, h in self.heads:
            if i > start and not (h == sid or h.startswith(sid + ".")):
                end = i
                break
        out = set()
        for ln in self.lines[start:end]:
            m = re.match(r"^\s+(\d+)\.?\s", ln)
            if m:
                out.add(int(m.group(1)))
        return out


class IndexedRfc:
    """An RFC as the committed index knows it: section ids, figure numbers
    and the numbered entries of each section, without the text."""

    def __init__(self, entry):
        self.sections = {sid: None for sid in entry["sections"]}
        self.figures = set(entry["figures"])
        self._items = {sid: set(v) for sid, v in entry["items"].items()}

    def items(self, sid):
        return self._items.get(sid, set())


def index_of(specs):
    """The index of a set of RFC texts, in a stable JSON-ready form."""
    out = {}
    for num in sorted(specs):
        r = specs[num]
        items = {sid: sorted(r.items(sid)) for sid in sorted(r.sections)}
        out[str(num)] = {"sections": sorted(r.sections), "figures": sorted(r.figures),
                         "items": {k: v for k, v in items.items() if v}}
    return out


def load_specs(d):
    """RFC texts from a directory of rfcNNNN.txt, or the committed index
    (a .json file) where the texts are not at hand (a clean CI clone)."""
    if os.path.isfile(d):
        with open(d, encoding="utf-8") as f:
            return {int(k): IndexedRfc(v) for k, v in json.load(f).items()}
    specs = {}
    for name in os.listdir(d):
        m = re.fullmatch(r"rfc(\d+)\.txt", name)
        if m:
            with open(os.path.join(d, name), encoding="utf-8", errors="replace") as f:
                specs[int(m.group(1))] = Rfc(f.read())
    return specs


def check_text(text, specs, where, problems, stats):
    """Append (where:line, message) for every citation that names nothing."""
    for lineno, ln in enumerate(text.split("\n"), 1):
        for m in RFC_RE.finditer(ln):
            num = int(m.group(1))
            rest = ln[m.end():]
            secs = []
            pos = 0
            f = FIRST_RE.match(rest) or APP_RE.match(rest)
            if f:
                secs.append(f.group(1))
                pos = f.end()
                while True:
                    g = MORE_RE.match(rest, pos)
                    if not g:
                        break
                    secs.append(g.group(1))
                    pos = g.end()
            fig = FIG_RE.match(rest, pos)
            item = ITEM_RE.match(rest, pos)
            if not secs and not fig:
                continue
            stats["citations"] += 1
            if num not in specs:
                stats["unchecked"] += 1
                continue
            rfc = specs[num]
            for s in secs:
                if s not in rfc.sections:
                    problems.append((f"{where}:{lineno}", f"RFC {num} §{s}: no such section"))
            if fig and int(fig.group(1)) not in rfc.figures:
                problems.append((f"{where}:{lineno}", f"RFC {num} Fig. {fig.group(1)}: no such figure"))
            if item and len(secs) == 1 and secs[0] in rfc.sections:
                n = int(item.group(2))
                if n not in rfc.items(secs[0]):
                    problems.append((f"{where}:{lineno}",
                                     f"RFC {num} §{secs[0]} {item.group(1)} {n}: the section has no "
                                     f"numbered entry {n}"))


def scan(root, specs):
    problems, stats, files = [], {"citations": 0, "unchecked": 0}, 0
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build"))
        for n in sorted(names):
            if not n.endswith(EXTS):
                continue
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            if n.endswith(".txt") and not rel.startswith("conformance" + os.sep):
                continue
            try:
                with open(p, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError:
                continue
            files += 1
            check_text(text, specs, rel, problems, stats)
    return problems, stats, files


def self_test(specs):
    bad = {
        "RFC 5040 §6.6": "no such section",
        "(RFC 5040 §5.2.1 item 20)": "no numbered entry 20",
        "RFC 5040 §4.8 Fig. 99": "no such figure",
        "RFC 5040 §5.3, §6.6": "§6.6",
        "RFC 5044 App. Z": "no such section",
        "RFC 5041 §7.1 (tagged check 3), RFC 5041 §9.9": "§9.9",
        "RFC 5041 §7.1 (tagged check 7)": "no numbered entry 7",
        "RFC 5044 §8 (code 9)": "no numbered entry 9",
    }
    good = ["RFC 5040 §5.5 rule 20", "RFC 5040 §4.8 Fig. 10", "RFC 5044 §8 (code 2)",
            "RFC 5041 §7.1 (untagged check 4)", "RFC 5044 App. C", "RFC 5044 §A.2",
            "RFC 5040 §5.3, §7.2", "RFC 6581 §9.2", "RFC 793 §3.4", "RFC 5040 §7.2.",
            "RFC 5044 §7.1.2 (rule 5)", "RFC 5041 §7.1 (tagged check 5)"]
    failed = 0
    for text, why in bad.items():
        probs, stats = [], {"citations": 0, "unchecked": 0}
        check_text(text, specs, "t", probs, stats)
        if not any(why in m for _, m in probs):
            print(f"self-test: '{text}' not caught (wanted '{why}'): {probs}")
            failed += 1
    for text in good:
        probs, stats = [], {"citations": 0, "unchecked": 0}
        check_text(text, specs, "t", probs, stats)
        if probs or stats["citations"] != 1:
            print(f"self-test: '{text}' wrongly judged: {probs} {stats}")
            failed += 1
    print(f"check_citations self-test: {len(bad)} bad and {len(good)} good citations, "
          f"{failed} wrong")
    return 1 if failed else 0


def pick(specs_dir, index):
    """The texts when present, else the committed index."""
    return specs_dir if os.path.isdir(specs_dir) else index


def main(argv):
    if len(argv) == 4 and argv[1] == "--index-check":
        # The committed index must be what the texts say (when they are here).
        specs_dir, index = argv[2], argv[3]
        if not os.path.isdir(specs_dir):
            print(f"check_citations: no RFC texts in {specs_dir}: index not re-derived")
            return 77
        fresh = index_of(load_specs(specs_dir))
        with open(index, encoding="utf-8") as f:
            kept = json.load(f)
        if fresh != kept:
            print(f"check_citations: {index} is stale; rewrite it with --write-index")
            return 1
        print(f"check_citations: {index} matches the {len(fresh)} RFC texts")
        return 0
    if len(argv) == 4 and argv[1] == "--write-index":
        with open(argv[3], "w", encoding="utf-8") as f:
            json.dump(index_of(load_specs(argv[2])), f, indent=0, sort_keys=True)
            f.write("\n")
        return 0
    if len(argv) == 4 and argv[1] == "--self-test":
        return self_test(load_specs(pick(argv[2], argv[3])))
    if len(argv) != 4:
        print(__doc__)
        return 2
    specs_dir, index, root = argv[1], argv[2], argv[3]
    if not os.path.isdir(specs_dir) and not os.path.isfile(index):
        print(f"check_citations: neither RFC texts in {specs_dir} nor the index {index}")
        return 2
    src = pick(specs_dir, index)
    specs = load_specs(src)
    problems, stats, files = scan(root, specs)
    for where, msg in problems:
        print(f"{where}: {msg}")
    print(f"check_citations: {files} files, {stats['citations']} citations "
          f"({stats['unchecked']} of RFCs not in {src}), {len(problems)} wrong")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
