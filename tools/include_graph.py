#!/usr/bin/env python3
"""The include graph of the source tree, folder by folder, drawn from the code.

A unit is a library folder: engine/<part> (engine/exec/<executor> for the
executors, engine/model with its arch/ subfolder), app/<part>, ui/<part>.
An edge U -> V means a file of U includes a header of V, resolved as the
build's include paths do: the including file's folder, then the
repository root (ui/...), engine/ and app/. Prints the edges and exits 1 when
the graph has a circle, when a lower tier includes a higher one
(engine < app < ui), or when a folder other than the loader and the
executors themselves includes an executor (engine/exec/*): only the loader
knows them all (two exceptions, listed in main()), or when a widget folder
(ui/*) includes the engine directly rather than through app/. --scope engine limits the first two checks
to the engine's folders.

Usage: include_graph.py [--root DIR] [--scope engine|all] [--dot]
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
TIERS = {"engine": 0, "app": 1, "ui": 2}


def unit_of(rel):
    """engine/exec/cpu/x.cpp -> engine/exec/cpu; engine/model/arch/a.h -> engine/model."""
    parts = rel.split("/")
    if parts[0] == "engine" and len(parts) > 3 and parts[1] == "exec":
        return "/".join(parts[:3])
    if len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


def resolve(root, src_rel, inc):
    """The repository path a quoted include names, or None (system/generated)."""
    here = os.path.dirname(src_rel)
    for base in (here, "", "engine", "app"):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def graph(root):
    edges = {}
    for top in TIERS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".h", ".cpp", ".def")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                u = unit_of(rel)
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                    for inc in INCLUDE.findall(fh.read()):
                        tgt = resolve(root, rel, inc)
                        if tgt is None:
                            continue
                        v = unit_of(tgt)
                        if v != u:
                            edges.setdefault(u, {}).setdefault(v, []).append(f"{rel} -> {tgt}")
    return edges


def find_cycle(edges):
    state, stack = {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(edges.get(u, {})):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if state.get(v) is None:
                c = visit(v)
                if c:
                    return c
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(edges):
        if state.get(u) is None:
            c = visit(u)
            if c:
                return c
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--dot", action="store_true", help="print Graphviz dot instead of a list")
    ap.add_argument("--scope", choices=("engine", "all"), default="all",
                    help="engine: only the engine's folders and their includes")
    a = ap.parse_args()
    all_edges = graph(os.path.abspath(a.root))
    edges = all_edges
    if a.scope == "engine":
        edges = {u: vs for u, vs in edges.items() if u.startswith("engine")}
    problems = []
    cyc = find_cycle(edges)
    if cyc:
        problems.append("circle: " + " -> ".join(cyc))
        for x, y in zip(cyc, cyc[1:]):
            problems.append(f"  {x} -> {y}: e.g. {edges[x][y][0]}")
    for u, vs in sorted(edges.items()):
        for v, why in sorted(vs.items()):
            if TIERS[v.split('/')[0]] > TIERS[u.split('/')[0]]:
                problems.append(f"include up: {u} -> {v}: e.g. {why[0]}")
    # The executors are known to the loader alone, in every scope. Two
    # exceptions: the CPU executor reuses the reference's host ops, and
    # `workbench-cli bench` names the CPU's ISA and measures its read
    # bandwidth with the CPU executor's thread pool.
    allowed_exec = {("engine/exec/cpu", "engine/exec/ref"), ("app/cli", "engine/exec/cpu")}
    for u, vs in sorted(all_edges.items()):
        for v, why in sorted(vs.items()):
            if (v.startswith("engine/exec/") and not u.startswith("engine/exec/") and
                    u != "engine/loader" and (u, v) not in allowed_exec):
                problems.append(f"executor known outside the loader: {u} -> {v}: e.g. {why[0]}")
    # Widgets reach the engine through app/ (app/desktop's services: the
    # engine bridge, its compare service).
    for u, vs in sorted(all_edges.items()):
        for v, why in sorted(vs.items()):
            if u.split('/')[0] == "ui" and v.split('/')[0] == "engine":
                problems.append(f"widget includes the engine: {u} -> {v}: e.g. {why[0]}")
    if a.dot:
        print("digraph includes {")
        for u, vs in sorted(edges.items()):
            for v in sorted(vs):
                print(f'  "{u}" -> "{v}";')
        print("}")
    else:
        for u, vs in sorted(edges.items()):
            print(f"{u} -> {', '.join(sorted(vs))}")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
