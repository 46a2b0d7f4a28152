#!/usr/bin/env python3
"""Checks that the runtime's folders depend on each other one way.

Each folder of runtime/ may include headers from the folders below it in
LAYERS (and its own); an include of a folder above, or of a folder not
listed, fails the check, as does any include circle between files. The
order is the one runtime/README.md describes:

    base < io, memory < model < comm < cli < train

cuda/ and kernels/ sit beside the layers: kernels/ includes only the public
ABI headers (include/lmc/runtime), cuda/ anything but train/ and cli/.

Usage: check-runtime-layering.py [RUNTIME_DIR]   (default: runtime/ of this
repository). Prints one line per violation and exits 1 if there is any.
"""
import os
import re
import sys

# folder -> the folders its files may include (besides its own).
ALLOWED = {
    "base": set(),
    "io": {"base"},
    "memory": {"base"},
    "model": {"base", "io", "memory"},
    "comm": {"base", "io", "memory", "model"},
    "cli": {"base", "io", "memory", "model"},
    "train": {"base", "io", "memory", "model", "comm", "cli"},
    "cuda": {"base", "io", "memory", "model", "comm"},
    "kernels": set(),
}
PUBLIC = "include"  # include/lmc/runtime: the ABI, includable from anywhere
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for dirpath, _, names in os.walk(root):
        for name in sorted(names):
            if name.endswith((".h", ".cpp")):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def resolve(root, src, target):
    """The runtime-relative path `#include "target"` in `src` names, or None
    for a header outside the runtime (system, toolkit)."""
    for base in (os.path.dirname(src), "", PUBLIC):
        candidate = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "runtime")
    problems = []
    graph = {}
    for src in sources(root):
        folder = src.split(os.sep)[0]
        if folder == PUBLIC:
            graph[src] = []
            continue
        if folder not in ALLOWED:
            problems.append(f"{src}: folder '{folder}' has no place in the "
                            "layering (add it to ALLOWED and runtime/README.md)")
            continue
        text = open(os.path.join(root, src), encoding="utf-8").read()
        edges = []
        for match in INCLUDE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            target = resolve(root, src, match.group(1))
            if target is None:
                continue
            edges.append(target)
            to = target.split(os.sep)[0]
            if to == folder or to == PUBLIC:
                continue
            if to not in ALLOWED[folder]:
                problems.append(f"{src}:{line}: includes {target}: '{folder}' "
                                f"may not depend on '{to}'")
        graph[src] = edges
    # Include circles between files (a header including itself back).
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                problems.append("include circle: " + " -> ".join(cycle))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    # A .cpp and the .h of the same name are one unit: a.cpp -> b.h and
    # b.cpp -> a.h is a circle between the two units.
    units = {}
    for src, edges in graph.items():
        unit = os.path.splitext(src)[0]
        units.setdefault(unit, set()).update(
            os.path.splitext(e)[0] for e in edges if os.path.splitext(e)[0] != unit)
    for a in sorted(units):
        for b in sorted(units[a]):
            if a < b and a in units.get(b, ()):
                problems.append(f"include circle between units {a} and {b}")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
