#!/usr/bin/env bash
# Builds the offline training text for the char-level GPT: the license texts
# every Debian system ships (/usr/share/common-licenses, ~250 KB of English),
# concatenated in name order, then byte-level token shards (vocab 256) in
# llm.c's format: data/train.bin and the last 10% as data/val.bin.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$HERE/data"
find /usr/share/common-licenses -maxdepth 1 -type f | LC_ALL=C sort |
  xargs cat > "$HERE/data/input.txt"
python3 "$HERE/../../scripts/text_to_tokens.py" "$HERE/data/input.txt" \
  "$HERE/data/train.bin" --val-fraction 0.1 --val "$HERE/data/val.bin"
python3 - "$HERE/data/input.txt" <<'PY'
# The unigram baseline: the entropy of the byte distribution (nats), the
# loss a model that ignores context cannot beat.
import collections, math, sys
data = open(sys.argv[1], "rb").read()
counts = collections.Counter(data)
h = -sum(c / len(data) * math.log(c / len(data)) for c in counts.values())
print(f"{len(data)} bytes; unigram entropy {h:.4f} nats/byte")
PY
