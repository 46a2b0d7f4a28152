#!/usr/bin/env python3
"""Checks that the compiler's libraries depend on each other one way.

A file under lib/<Layer>/ or include/lmc/<Layer>/ may include the lmc
headers of its own layer and of the layers below it in ALLOWED; an include
of a layer above, or a file in a layer not listed, fails the check. The
runtime's public headers (lmc/runtime/*: the contracts both sides keep) and
the generated lmc/Version.h may be included from anywhere. The order:

    Support < Dialect < Transforms < Lowering, Import < Driver

(tools/ sit above all of them and are not checked.)

Usage: check-compiler-layering.py [REPOSITORY_DIR]   (default: this
repository). Prints one line per violation and exits 1 if there is any.
"""
import os
import re
import sys

# layer -> the layers its files may include (besides its own).
ALLOWED = {
    "Support": set(),
    "Dialect": {"Support"},
    "Transforms": {"Support", "Dialect"},
    "Lowering": {"Support", "Dialect", "Transforms"},
    "Import": {"Support", "Dialect", "Transforms"},
    "Driver": {"Support", "Dialect", "Transforms", "Lowering", "Import"},
}
ANYWHERE = {"runtime", "Version.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"lmc/([^/"]+)', re.M)


def sources(repo):
    """(path relative to repo, layer) of every compiler source and header."""
    for top in ("lib", os.path.join("include", "lmc")):
        base = os.path.join(repo, top)
        for dirpath, _, names in os.walk(base):
            for name in sorted(names):
                if not name.endswith((".h", ".cpp", ".td")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), repo)
                inner = os.path.relpath(os.path.join(dirpath, name), base)
                if os.sep not in inner:
                    continue  # a file beside the layers (CMakeLists)
                yield path, inner.split(os.sep)[0]


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    problems = []
    for path, layer in sorted(sources(repo)):
        if layer not in ALLOWED:
            problems.append(f"{path}: layer '{layer}' has no place in the "
                            "layering (add it to ALLOWED)")
            continue
        text = open(os.path.join(repo, path), encoding="utf-8").read()
        for match in INCLUDE.finditer(text):
            to = match.group(1)
            if to == layer or to in ANYWHERE:
                continue
            if to not in ALLOWED[layer]:
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{path}:{line}: includes lmc/{to}: "
                                f"'{layer}' may not depend on '{to}'")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
