#!/usr/bin/env python3
"""Runs a tutorial's shell steps, so that the tutorials cannot rot.

    run-tutorial.py TUTORIAL.md WORKDIR [--replace 'OLD=>NEW']...

Every fenced block whose info string is exactly `sh` runs, in order, with
`bash -euo pipefail` in WORKDIR; blocks tagged otherwise (`python`,
`sh needs-torch`: steps that need PyTorch, whose outputs the test puts in
WORKDIR beforehand) do not. Each --replace rewrites the blocks' text
first (the test's smaller sizes and step counts, paths into the source
tree; `\n` in them is a newline). A replacement that matches nothing is an error: the tutorial
changed, and so must its test. Prints each block before running it; exits
with the first failing block's status.
"""
import argparse
import re
import subprocess
import sys

FENCE = re.compile(r"^```(.*)$")


def blocks(path):
    """(info string, text) of each fenced block."""
    info, body = None, []
    for line in open(path, encoding="utf-8"):
        match = FENCE.match(line.rstrip("\n"))
        if match and info is None:
            info, body = match[1].strip(), []
        elif match:
            yield info, "".join(body)
            info = None
        elif info is not None:
            body.append(line)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("tutorial")
    p.add_argument("workdir")
    p.add_argument("--replace", action="append", default=[],
                   metavar="OLD=>NEW")
    o = p.parse_args()
    steps = [text for info, text in blocks(o.tutorial) if info == "sh"]
    if not steps:
        sys.exit(f"{o.tutorial}: no ```sh blocks")
    script = "\n\x00\n".join(steps)
    for pair in o.replace:
        old, sep, new = pair.replace("\\n", "\n").partition("=>")
        if not sep:
            sys.exit(f"--replace {pair!r}: expected OLD=>NEW")
        if old not in script:
            sys.exit(f"--replace {pair!r}: {old!r} is not in the tutorial's "
                     "shell steps")
        script = script.replace(old, new)
    for number, step in enumerate(script.split("\n\x00\n"), 1):
        print(f"--- step {number}\n{step.rstrip()}", flush=True)
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", step],
                              cwd=o.workdir)
        if done.returncode != 0:
            print(f"--- step {number} failed with status {done.returncode}")
            sys.exit(done.returncode)


if __name__ == "__main__":
    main()
