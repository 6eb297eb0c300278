#!/usr/bin/env python3
"""The README's layout table, drawn from the tree.

Each folder of the source tree with a CMakeLists.txt (engine/, app/, ui/,
shaders/, resources/, installer/ and their subfolders; tests/ as one row)
gets a row: the folder and the first sentence of the comment that opens its
CMakeLists.txt, without the library name in front ("wb_kv: ..."). So the
table changes where a folder does, and a folder without that comment shows
up as a row without text.

Usage: layout_table.py [--root DIR] [--check README.md]
  prints the table; --check exits 1 when the README's table (between the
  "<!-- layout -->" and "<!-- /layout -->" lines) differs from it.
"""
import argparse
import os
import re
import sys

TOPS = ["engine", "shaders", "app", "ui", "resources", "installer"]
EXTRA = [("tests/", "Qt Test executables, one per area, registered with CTest; tests/data holds "
          "the fixtures with their provenance."),
         ("tools/", "Scripts that read the tree: the include graph, this table.")]


def first_sentence(cmake):
    lines = []
    with open(cmake, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                break
            lines.append(line[1:].strip())
    text = " ".join(l for l in lines if l)
    stripped = re.sub(r"^wb_[a-z_]+:\s*", "", text)
    m = re.search(r"(.+?\.)(\s|$)", stripped)
    s = m.group(1) if m else stripped
    if s and stripped != text:
        s = s[0].upper() + s[1:]
    return s


def rows(root):
    out = []
    for top in TOPS:
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            if "CMakeLists.txt" in files:
                rel = os.path.relpath(dirpath, root) + "/"
                out.append((rel, first_sentence(os.path.join(dirpath, "CMakeLists.txt"))))
    return out + EXTRA


def table(root):
    lines = ["| folder | what it holds |", "| --- | --- |"]
    for folder, what in rows(root):
        lines.append(f"| `{folder}` | {what.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--check", metavar="README")
    a = ap.parse_args()
    t = table(os.path.abspath(a.root))
    if not a.check:
        sys.stdout.write(t)
        return 0
    with open(a.check, encoding="utf-8") as f:
        readme = f.read()
    m = re.search(r"<!-- layout -->\n(.*?)<!-- /layout -->", readme, re.S)
    if not m:
        print(f"{a.check}: no <!-- layout --> ... <!-- /layout --> block", file=sys.stderr)
        return 1
    if m.group(1) != t:
        print(f"{a.check}: the layout table differs from the tree; replace it with the output "
              f"of tools/layout_table.py:\n{t}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
