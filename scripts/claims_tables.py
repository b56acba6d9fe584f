#!/usr/bin/env python3
"""Writes the verdict tallies and tables of docs/claims.md and README.md from a check's verdicts.json, so the
numbers the docs print are the ones `normsim check` measured (scripts/readme_figures.sh calls it).

Usage: python3 scripts/claims_tables.py out/check/verdicts.json
It replaces the text between <!-- verdicts:begin --> and <!-- verdicts:end --> in docs/claims.md (tables by
kind) and between <!-- tally:begin --> and <!-- tally:end --> in both files with the tally lines of the
report.md beside verdicts.json (one line a kind)."""
import json
import math
import re
import sys
from pathlib import Path

KINDS = [
    ("literature", "Literature: what a source says, in its words"),
    ("reading", "normsim's readings of a source (consistent / inconsistent with the reading, never a verdict "
                "on the source)"),
    ("self", "Self: normsim's own theory against its simulator"),
]


def number(v):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    return f"{v:.4g}"


def band(v):
    low, high = v.get("band_low"), v.get("band_high")
    if low is None and high is None:
        return "none"
    if low is None:
        return f"<= {number(high)}"
    if high is None:
        return f">= {number(low)}"
    return f"[{number(low)}, {number(high)}]"


def verdict_cell(v):
    text = v["verdict"]
    if v.get("samples_needed"):
        text += f" (~{v['samples_needed']} samples would decide)"
    return text


def tally(report_md):
    """The tally lines `normsim check` wrote into report.md (check/report.cpp, one line a kind): copied, not
    counted again, so the docs say exactly what the report says."""
    found = re.search(r"^\d+ claims .*:\n\n((?:- .*\n)+)", report_md, re.M)
    if not found:
        sys.exit("claims_tables.py: report.md has no tally lines")
    return found.group(1).rstrip("\n")


def tables(verdicts):
    out = []
    for kind, heading in KINDS:
        of_kind = [v for v in verdicts if v.get("kind") == kind]
        out += [f"### {heading} ({len(of_kind)})", "",
                "| claim | band | measured [CI] | at x | n | verdict |", "|---|---|---|---|---|---|"]
        for v in of_kind:
            ci = f"{number(v['measured'])} [{number(v['ci_low'])}, {number(v['ci_high'])}]"
            at = number(v["decided_at"]) if v.get("decided_at") is not None else ""
            figure = f"[`{v['id']}`](figures/claim_{v['id']}.png)"
            out.append(f"| {figure} | {band(v)} | {ci} | {at} | {v['n']} | {verdict_cell(v)} |")
        out.append("")
    return "\n".join(out)


def replace_block(path, name, text):
    doc = path.read_text()
    pattern = re.compile(rf"(<!-- {name}:begin -->\n).*?(<!-- {name}:end -->)", re.S)
    if not pattern.search(doc):
        sys.exit(f"claims_tables.py: {path}: no <!-- {name}:begin/end --> block")
    path.write_text(pattern.sub(lambda m: m.group(1) + text + "\n" + m.group(2), doc))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    verdicts = json.loads(Path(sys.argv[1]).read_text())
    root = Path(__file__).resolve().parent.parent
    replace_block(root / "docs" / "claims.md", "verdicts", tables(verdicts))
    lines = tally((Path(sys.argv[1]).parent / "report.md").read_text())
    for doc in (root / "docs" / "claims.md", root / "README.md"):
        replace_block(doc, "tally", f"{len(verdicts)} claims:\n\n" + lines)


if __name__ == "__main__":
    main()
