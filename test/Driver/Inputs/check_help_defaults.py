"""Reads `lmc --help` on stdin; fails naming every option of lmc's own
groups that takes a value but does not say its default. Switches
(no `=<...>`) and the repeatable --shard are exempt."""
import re
import sys

EXEMPT = {"--shard"}
missing, seen, ours = [], 0, False
for line in sys.stdin:
    if re.match(r"^\S.*:$", line):  # a group heading
        ours = line.strip() not in ("OPTIONS:", "Generic Options:")
        continue
    match = re.match(r"^  (-{1,2}[\w-]+)(=<[^>]*>| <[^>]*>)?\s+- (.*)$", line)
    if not ours or not match:
        continue
    seen += 1
    name, value, desc = match.groups()
    if value and name not in EXEMPT and "default" not in desc:
        missing.append(name)
if seen < 25:
    sys.exit(f"only {seen} options found in lmc --help")
if missing:
    sys.exit("options without a default in --help: " + ", ".join(missing))
print(f"{seen} options, each value option with its default")
