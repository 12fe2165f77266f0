#!/usr/bin/env python3
"""layers.py - the include graph of src/ obeys the layering.

Reads the #include "..." lines of src/util, src/lib and src/cmd and
reports (exit 1):
  - a src/util file that includes a src/lib or src/cmd header,
  - a src/lib file that includes a src/cmd header,
  - a cycle among the modules of src/lib (ALLOWED_EDGES aside),
  - SQLite outside the database layer: <sqlite3.h>, a sqlite3_ call or
    store-db.h anywhere but src/lib/store*.c.
A module is a .c with its .h; a file without its pair (such as
lifecycle-route.c or lifecycle-internal.h) belongs to the module whose
name is its longest '-'-separated prefix that has a header (lifecycle).  Usage:
layers.py SRCDIR [--dump]"""

import os
import re
import sys

# Include edges tolerated while a cycle is being untangled, each with why
# (none is left); they are left out of the graph and reported, so that any
# other cycle through the same modules still fails, and an allowed edge
# that no longer exists fails too.
ALLOWED_EDGES = set()

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SQLITE = re.compile(r'#\s*include\s*<sqlite3\.h>|\bsqlite3_\w+\s*\(|"store-db\.h"')
LAYERS = ("util", "lib", "cmd")


def files_of(srcdir):
    out = {}
    for layer in LAYERS:
        d = os.path.join(srcdir, "src", layer)
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                out[(layer, name)] = os.path.join(d, name)
    return out


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return [m.group(1) for m in map(INCLUDE.match, f) if m]


def database_layer(layer, name):
    return layer == "lib" and name.startswith("store") and name.endswith(".c")


def sqlite_outside(files):
    """Lines outside the database layer that use SQLite (comments and
    strings are not told apart: no other file has a reason to name it)."""
    out = []
    for (layer, name), path in sorted(files.items()):
        if database_layer(layer, name) or name == "store-db.h":
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                if SQLITE.search(line):
                    out.append(f"src/{layer}/{name}:{no}: SQLite outside the database layer: {line.strip()}")
    return out


def module_of(name, headers, sources):
    """A .c with its .h is a module; a file without its pair (lifecycle-route.c,
    lifecycle-internal.h) belongs to the module of its longest prefix that
    has a header; else it is a module of its own."""
    stem = name[:-2]
    if stem + ".h" in headers and stem + ".c" in sources:
        return stem
    while "-" in stem:
        stem = stem.rsplit("-", 1)[0]
        if stem + ".h" in headers:
            return stem
    return name[:-2]


def strongly_connected(graph):
    """Tarjan's algorithm; returns the components with more than one node
    (or a node with an edge to itself)."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                comps.append(tuple(sorted(comp)))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def main():
    srcdir = sys.argv[1] if len(sys.argv) > 1 else "."
    files = files_of(srcdir)
    where = {}
    for (layer, name) in files:
        if name.endswith(".h"):
            where.setdefault(name, layer)
    lib_headers = {n for (l, n) in files if l == "lib" and n.endswith(".h")}
    lib_sources = {n for (l, n) in files if l == "lib" and n.endswith(".c")}
    bad = []
    edges = set()
    for (layer, name), path in files.items():
        for inc in includes(path):
            target = where.get(os.path.basename(inc))
            if target is None:
                continue        # autoconfig.h, generated or system
            if layer == "util" and target in ("lib", "cmd"):
                bad.append(f"src/util/{name} includes src/{target}/{inc}")
            if layer == "lib" and target == "cmd":
                bad.append(f"src/lib/{name} includes src/cmd/{inc}")
            if layer == "lib" and target == "lib":
                a = module_of(name, lib_headers, lib_sources)
                b = module_of(os.path.basename(inc), lib_headers, lib_sources)
                if a != b:
                    edges.add((a, b))
    bad.extend(sqlite_outside(files))
    graph = {}
    for (a, b) in sorted(edges):
        if (a, b) in ALLOWED_EDGES:
            print(f"allowed include: {a} -> {b}")
            continue
        graph.setdefault(a, set()).add(b)
    for (a, b) in sorted(ALLOWED_EDGES - edges):
        bad.append(f"allowed include {a} -> {b} is gone: remove it from ALLOWED_EDGES")
    if "--dump" in sys.argv:
        for a in sorted(graph):
            print(a, "->", " ".join(sorted(graph[a])))
    for comp in strongly_connected(graph):
        bad.append("include cycle among src/lib modules: " + " ".join(comp))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
