#!/usr/bin/env bash
# GPT-2 at real size, lmc next to PyTorch 2.x eager and torch.compile on the
# same model (examples/gpt2), batch, tokens, optimizer and thread count:
# step time (median after step 1), tokens/s and peak RSS of each, lmc's
# compile time, compiler peak RSS, executable size and startup time (to the
# first step, weights read). PyTorch comes from PyPI into a virtual
# environment this script creates (a benchmark peer, not a test
# dependency). Both sides run with OPENBLAS_CORETYPE unset.
#
#   SIZE=124M CONTEXT=256 BATCH=4 THREADS="1 2" STEPS=5 bash bench/gpt2.sh
#
# REMAT=per-block|selective compiles lmc's step with activation
# checkpointing (lmc --remat; default none) and runs PyTorch's with each
# block checkpointed (gpt2_torch.py --checkpoint). PEERS="" runs lmc alone (for
# sizes PyTorch cannot train on this machine without checkpointing of its
# own); the table then has no PyTorch columns. The report gives lmc's
# planned step memory (the train_step arena) and --info's memory need, and
# the time and size of one checkpoint (parameters and AdamW's moments,
# written atomically after a step on the last thread count).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${SIZE:-124M} CONTEXT=${CONTEXT:-256} BATCH=${BATCH:-4}
THREADS=${THREADS:-"1 2"} STEPS=${STEPS:-5} REMAT=${REMAT:-none}
PEERS=${PEERS-"eager compile"}
# With lmc's --remat, PyTorch recomputes each block too (torch.utils.checkpoint).
CHECKPOINT=$([ "$REMAT" = none ] || echo --checkpoint)
WORK=${WORK:-$ROOT/build/bench-gpt2}
# torch.compile's first step is its compile time only without Inductor's
# on-disk cache (a warm cache from an earlier run makes it seconds).
export TORCHINDUCTOR_FORCE_DISABLE_CACHES=1
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
mkdir -p "$WORK"
source "$ROOT/bench/common.sh"
bench_token_shard "$WORK"
MODEL=$WORK/gpt2-$SIZE-$CONTEXT.onnx
bench_gpt2_export "$MODEL"
EXE=$WORK/train-$SIZE-$CONTEXT-b$BATCH-$REMAT
/usr/bin/time -f "%e %M" -o "$WORK/compile.time" \
  "$ROOT/build/bin/lmc" "$MODEL" --batch "$BATCH" --remat "$REMAT" -o "$EXE" --quiet
"$EXE" --info > "$WORK/info.txt"
/usr/bin/time -f "%e %M" -o "$WORK/startup.time" \
  "$EXE" --tokens "$WORK/train.bin" --steps 0 > /dev/null
rm -f "$WORK"/torch-*.json # a report reads only this run's peers
for t in $THREADS; do # alternating: lmc, eager, compiled per thread count
  /usr/bin/time -f "%e %M" -o "$WORK/lmc-$t.time" "$EXE" --tokens "$WORK/train.bin" \
    --steps "$STEPS" --threads "$t" --log-every 1 --metrics "$WORK/lmc-$t.jsonl" > /dev/null
  for mode in $PEERS; do
    "$PY" "$ROOT/bench/gpt2_torch.py" --size "$SIZE" --context "$CONTEXT" \
      --batch "$BATCH" --steps "$STEPS" --threads "$t" --mode "$mode" \
      --tokens "$WORK/train.bin" $CHECKPOINT > "$WORK/torch-$mode-$t.json" 2> /dev/null
  done
done
rm -rf "$WORK/checkpoints"
"$EXE" --tokens "$WORK/train.bin" --steps 1 --threads "$t" --checkpoint-dir \
  "$WORK/checkpoints" --checkpoint-every 1 | grep '^checkpoint: ' > "$WORK/checkpoint.txt"
"$PY" - "$WORK" "$SIZE" "$CONTEXT" "$BATCH" "$EXE" "$THREADS" "$REMAT" "$PEERS" <<'PY'
import json, os, re, statistics, sys
work, size, ctx, batch, exe, threads, remat, peers = sys.argv[1:]
peers = peers.split()
tokens = int(ctx) * int(batch)
def timed(name):
    seconds, kib = open(os.path.join(work, name)).read().split()
    return float(seconds), int(kib) / 1024
import torch
print(f"GPT-2 {size}, batch {batch} x context {ctx}, AdamW, lmc --remat {remat}; "
      f"PyTorch {torch.__version__}"
      f"{' with each block checkpointed' if remat != 'none' else ''}" if peers else
      f"GPT-2 {size}, batch {batch} x context {ctx}, AdamW, lmc --remat {remat}")
c, crss = timed("compile.time"); s, _ = timed("startup.time")
info = open(os.path.join(work, "info.txt")).read()
arena = re.search(r"train_step ([0-9.]+ [KMG]iB)", info).group(1)
need = re.search(r"memory need: (.*); estimate", info).group(1)
print(f"lmc compile {c:.1f} s, compiler peak RSS {crss:.0f} MiB, executable "
      f"{os.path.getsize(exe) / 2**20:.0f} MiB, startup to the first step {s:.2f} s")
print(f"lmc step memory (train_step arena) {arena}; memory need {need}")
saved = re.match(r"checkpoint: (.*) \(([0-9.]+) ms\)",
                 open(os.path.join(work, "checkpoint.txt")).read())
print(f"lmc checkpoint {os.path.getsize(saved.group(1)) / 2**20:.0f} MiB "
      f"written in {float(saved.group(2)) / 1000:.1f} s")
head = "| threads | lmc ms | lmc tok/s | lmc RSS MiB |"
# Columns for the peers run (PEERS="eager" leaves torch.compile out).
for mode in peers:
    head += f" {mode} ms |"
if peers:
    head += " lmc / best |" + "".join(f" {m} RSS |" for m in peers)
print(head)
print("|---" * (head.count("|") - 1) + "|")
for t in threads.split():
    rows = [json.loads(l) for l in open(os.path.join(work, f"lmc-{t}.jsonl"))]
    lmc = statistics.median(r["ms"] for r in rows[1:] or rows)
    _, lrss = timed(f"lmc-{t}.time")
    line = f"| {t} | {lmc:.0f} | {tokens / lmc * 1000:.0f} | {lrss:.0f} |"
    runs = {m: json.load(open(os.path.join(work, f"torch-{m}-{t}.json")))
            for m in peers}
    for m, r in runs.items():
        line += f" {r['median_ms']:.0f}"
        line += f" (first {r['first_ms'] / 1000:.0f} s) |" if m == "compile" else " |"
    if peers:
        best = min(r["median_ms"] for r in runs.values())
        line += f" {lmc / best:.2f} |" + "".join(
            f" {r['peak_rss_mib']:.0f} |" for r in runs.values())
    print(line)
PY
