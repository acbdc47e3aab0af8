#!/usr/bin/env python3
"""Where the lines of the two manifests go, by what each line says.

Run from the repository root: `python3 scripts/manifest-lines.py`. It reads resources.yaml and
tools.yaml as text (no YAML library needed) and sorts every line into the key it belongs to:
a tool's own keys (name, title, description, keywords, call, args, project, ...), the shared
sections (rules, arguments, core, search, field_types, ...), blank lines and comments.
docs/performance.md ("Manifest size") records its output and reads it.
"""

import re
import sys
from collections import Counter


def tally(path, item_indent):
    """Counts the lines of `path`: top-level sections, and the keys of the list items whose
    `- name:` starts at `item_indent` columns (tools or resources)."""
    counts = Counter()
    section = None
    key = None
    for line in open(path, encoding="utf-8").read().split("\n")[:-1]:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not stripped:
            counts["blank"] += 1
            continue
        if stripped.startswith("#"):
            counts["comment"] += 1
            continue
        top = re.match(r"^([a-z_]+):", line)
        if top:
            section, key = top.group(1), None
            counts[f"{section}:"] += 1
            continue
        item = re.match(r"^(\s*)(- )?([A-Za-z_]+):", line)
        if item and item.group(2) and indent == item_indent:
            key = item.group(3)
            counts[f"item {key}"] += 1
        elif item and indent == item_indent + 2 and key is not None:
            key = item.group(3)
            counts[f"item {key}"] += 1
        elif key is not None and indent > item_indent + 2:
            counts[f"item {key} (more lines)"] += 1
        else:
            counts[f"{section}:"] += 1
    return counts


def main():
    rows = [("resources.yaml", tally("resources.yaml", 2)), ("tools.yaml", tally("tools.yaml", 6))]
    total = 0
    for name, counts in rows:
        lines = sum(counts.values())
        total += lines
        print(f"{name}: {lines} lines")
        for what, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {n:5}  {what}")
    print(f"both: {total} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
