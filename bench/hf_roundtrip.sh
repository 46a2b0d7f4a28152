#!/usr/bin/env bash
# Hugging Face checkpoints in and out, checked by transformers itself: a
# Qwen2-style model (transformers' Qwen2ForCausalLM, head tied to the
# embedding; CONFIG=small: width 64, 2 layers; CONFIG=qwen2.5-0.5b: that
# model's configuration with random weights) is saved with
# save_pretrained in bf16 and sharded (SHARD bytes, default 100000 for
# small, 200000000 for 0.5b), exported with lmc_export, trained STEPS
# AdamW steps by lmc from `--init DIR` and saved with `--save-hf OUT` in
# shards of SHARD bytes; then `from_pretrained(OUT)` must hold lmc's
# trained tensors and give their logits to 1e-6, and PyTorch's own
# fine-tuning (float32, same batches, torch.optim.AdamW) the same losses
# to 1e-5 (the distance of its logits is reported; bench/hf_roundtrip.py
# says why it grows with the model).
#
#   bash bench/hf_roundtrip.sh               # CONFIG=small STEPS=3
#   CONFIG=qwen2.5-0.5b bash bench/hf_roundtrip.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONFIG=${CONFIG:-small}
STEPS=${STEPS:-3}
WORK=${WORK:-$ROOT/build/bench-hf-roundtrip/$CONFIG}
mkdir -p "$WORK"
source "$ROOT/bench/common.sh"
bench_pip_need transformers transformers
"$VENV/bin/pip" install -q "$ROOT/python"
export PATH=$ROOT/build/bin:$PATH
"$PY" "$ROOT/bench/hf_roundtrip.py" --config "$CONFIG" --steps "$STEPS" \
  --work "$WORK" ${SHARD:+--shard "$SHARD"}
