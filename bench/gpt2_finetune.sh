#!/usr/bin/env bash
# Fine-tuning a Hugging Face GPT-2 checkpoint at real size: lmc's executable
# starts from a `save_pretrained` model.safetensors (bf16, HF's names) with
# `--init`, and Hugging Face's own GPT2LMHeadModel fine-tunes the same
# checkpoint with the same AdamW on the same tokens (bench/gpt2_hf.py). The
# report gives --init's matching summary, both loss trajectories and their
# largest relative difference, step time and peak RSS of each, and lmc's
# startup (weights and checkpoint read) to the first step.
#
#   SIZE=124M CONTEXT=1024 BATCH=1 THREADS=2 STEPS=5 bash bench/gpt2_finetune.sh
#
# transformers comes from PyPI into the bench scripts' virtual environment (a
# benchmark peer, not a test dependency). EXPORT picks the ONNX model lmc
# compiles: `dynamo` (default) is HF's GPT2LMHeadModel through PyTorch's
# dynamo exporter with optimize=False (its scalar constants are initializers
# lmc keeps constant, as the export's record says; --init matches the
# checkpoint's names below the export's wrapper prefix); `torchscript` is
# examples/gpt2's model (HF's names) at GPT-2's own vocabulary, 50257.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${SIZE:-124M} CONTEXT=${CONTEXT:-1024} BATCH=${BATCH:-1}
THREADS=${THREADS:-2} STEPS=${STEPS:-5}
WORK=${WORK:-$ROOT/build/bench-gpt2}
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
mkdir -p "$WORK"
source "$ROOT/bench/common.sh"
bench_pip_need transformers transformers safetensors
bench_token_shard "$WORK"
HF=$WORK/hf-$SIZE-$CONTEXT
[ -f "$HF/model.safetensors" ] ||
  "$PY" "$ROOT/bench/gpt2_hf.py" save --size "$SIZE" --context "$CONTEXT" --out "$HF" \
    > /dev/null 2>&1
EXPORT=${EXPORT:-dynamo}
case $EXPORT in
  dynamo)
    MODEL=$WORK/hf-dynamo-$SIZE-$CONTEXT-b$BATCH/model.onnx
    LMC_FLAGS=()
    [ -f "$MODEL" ] || { mkdir -p "$(dirname "$MODEL")" && "$PY" "$ROOT/bench/gpt2_hf.py" \
      export --dir "$HF" --batch "$BATCH" -o "$MODEL" > /dev/null 2>&1; } ;;
  torchscript)
    MODEL=$WORK/gpt2-$SIZE-$CONTEXT-v50257.onnx
    LMC_FLAGS=(--batch "$BATCH")
    bench_gpt2_export "$MODEL" --vocab 50257 ;;
  *) echo "EXPORT must be dynamo or torchscript, not '$EXPORT'" >&2; exit 2 ;;
esac
EXE=$WORK/finetune-$EXPORT-$SIZE-$CONTEXT-b$BATCH
/usr/bin/time -f "%e %M" -o "$WORK/finetune-compile.time" \
  "$ROOT/build/bin/lmc" "$MODEL" "${LMC_FLAGS[@]}" -o "$EXE" --quiet
RUN=("$EXE" --init "$HF/model.safetensors" --tokens "$WORK/train.bin" --threads "$THREADS")
/usr/bin/time -f "%e %M" -o "$WORK/finetune-startup.time" "${RUN[@]}" --steps 0 \
  > "$WORK/finetune-init.txt"
/usr/bin/time -f "%e %M" -o "$WORK/finetune-lmc.time" "${RUN[@]}" --steps "$STEPS" \
  --log-every 1 --metrics "$WORK/finetune-lmc.jsonl" > /dev/null
"$PY" "$ROOT/bench/gpt2_hf.py" train --dir "$HF" --batch "$BATCH" --steps "$STEPS" \
  --threads "$THREADS" --tokens "$WORK/train.bin" > "$WORK/finetune-hf.json" 2> /dev/null
"$PY" - "$WORK" "$SIZE" "$CONTEXT" "$BATCH" "$THREADS" "$EXPORT" <<'PY'
import json, os, statistics, sys
work, size, ctx, batch, threads, export = sys.argv[1:]
def timed(name):
    seconds, kib = open(os.path.join(work, name)).read().split()
    return float(seconds), int(kib) / 1024
hf = json.load(open(os.path.join(work, "finetune-hf.json")))
rows = [json.loads(l) for l in open(os.path.join(work, "finetune-lmc.jsonl"))]
lmc_losses = [r["loss"] for r in rows]
lmc_ms = statistics.median(r["ms"] for r in rows[1:] or rows)
print(f"GPT-2 {size} from a bf16 save_pretrained checkpoint, batch {batch} x "
      f"context {ctx}, AdamW, {threads} thread(s), lmc on the {export} export; "
      f"PyTorch {hf['torch']}, transformers {hf['transformers']}")
c, crss = timed("finetune-compile.time")
print(f"lmc compile {c:.1f} s, compiler peak RSS {crss:.0f} MiB")
for line in open(os.path.join(work, "finetune-init.txt")):
    if "model.safetensors:" in line:
        print("lmc --init: " + line.strip().split("model.safetensors: ")[1])
startup, _ = timed("finetune-startup.time")
print(f"lmc startup with --init to the first step {startup:.2f} s")
print("| step | lmc loss | HF loss | relative difference |")
print("|---|---|---|---|")
worst = 0.0
for i, (a, b) in enumerate(zip(lmc_losses, hf["losses"]), 1):
    rel = abs(a - b) / abs(b)
    worst = max(worst, rel)
    print(f"| {i} | {a:.6f} | {b:.6f} | {rel:.1e} |")
_, lrss = timed("finetune-lmc.time")
print(f"largest relative loss difference {worst:.1e}")
print(f"step ms: lmc {lmc_ms:.0f}, HF eager {hf['median_ms']:.0f} "
      f"(lmc / HF {lmc_ms / hf['median_ms']:.2f}); peak RSS MiB: lmc {lrss:.0f}, "
      f"HF {hf['peak_rss_mib']:.0f}")
PY
