#!/usr/bin/env python3
"""Checks that every relative link in README.md and docs/ resolves inside
the repository: the file (or folder) exists, and a #fragment into a
Markdown file names one of its headings (GitHub's anchors: lowercase,
punctuation dropped, spaces to hyphens).

usage: check-doc-links.py [ROOT]    (default: the repository of this script)

Prints each broken link as FILE:LINE: TARGET (why) and exits 1 if any.
"""
import os
import re
import sys

LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"\!\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def anchors(path):
    """GitHub's anchors of a Markdown file's headings (outside code)."""
    found, seen, fenced = set(), {}, False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if not match:
            continue
        text = re.sub(r"`|\*|_(?=\W)|(?<=\W)_", "", match[1]).lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(path):
    fenced = False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r"`[^`]*`", "", line)  # inline code is not a link
        for pattern in (LINK, IMAGE):
            for match in pattern.finditer(line):
                yield number, match[1]


def check(root):
    pages = [os.path.join(root, "README.md")]
    for folder, _, files in os.walk(os.path.join(root, "docs")):
        pages += [os.path.join(folder, f) for f in files if f.endswith(".md")]
    broken = []
    for page in sorted(pages):
        for number, target in links(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:
                continue
            path, _, fragment = target.partition("#")
            resolved = (os.path.normpath(os.path.join(os.path.dirname(page), path))
                        if path else page)
            where = f"{os.path.relpath(page, root)}:{number}: {target}"
            if os.path.relpath(resolved, root).startswith(".."):
                broken.append(f"{where} (outside the repository)")
            elif not os.path.exists(resolved):
                broken.append(f"{where} (no such file)")
            elif fragment and resolved.endswith(".md") and \
                    fragment not in anchors(resolved):
                broken.append(f"{where} (no heading with that anchor)")
    return broken


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    broken = check(root)
    for line in broken:
        print(line)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
