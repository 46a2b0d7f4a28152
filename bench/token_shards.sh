#!/usr/bin/env bash
# Training on a FineWeb-10B-sized token set: 100 llm.c shards of 100 M
# tokens (20 GB; written sparse, so they take no disk space and read as
# token 0) against one of them, --shuffle on, the char GPT (context 64:
# 156 M windows). Prints peak RSS and the first step's time of each: the
# data must cost mapped pages only, not a table per window.
#
#   bash bench/token_shards.sh            # DIR=build/token-shards by default
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${DIR:-$ROOT/build/token-shards}
SHARDS=${SHARDS:-100} TOKENS=${TOKENS:-100000000}
mkdir -p "$DIR"
python3 - "$DIR" "$SHARDS" "$TOKENS" <<'PY'
import os, struct, sys
out, shards, tokens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(shards):
    header = [0] * 256
    header[0], header[1], header[2] = 20240520, 1, tokens
    with open(os.path.join(out, f"train_{i:06d}.bin"), "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.truncate(1024 + 2 * tokens)  # a hole: the tokens read as 0
PY
"$ROOT/build/bin/lmc" "$ROOT/examples/gpt-char/gpt.onnx" --batch 8 -o "$DIR/train" --quiet
for data in "$DIR/train_000000.bin" "$DIR/train_*.bin"; do
  /usr/bin/time -f "%M" -o "$DIR/rss" "$DIR/train" --tokens "$data" --steps 3 \
    --shuffle --seed 1 --threads 1 --log-every 1 --metrics "$DIR/m.jsonl" > /dev/null
  python3 - "$DIR" "$data" <<'PY'
import json, os, sys
rows = [json.loads(l) for l in open(os.path.join(sys.argv[1], "m.jsonl"))]
rss = int(open(os.path.join(sys.argv[1], "rss")).read()) / 1024
print(f"{os.path.basename(sys.argv[2])}: peak RSS {rss:.0f} MiB, "
      f"first step {rows[0]['ms']:.0f} ms, then {rows[-1]['ms']:.0f} ms")
PY
done
