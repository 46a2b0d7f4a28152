#!/usr/bin/env bash
# LoRA fine-tuning, lmc against Hugging Face PEFT on a Qwen2-style or GPT-2 model
# (bench/lora_peft.py says what is compared): the same base weights,
# initial adapters, batches and AdamW; losses to 1e-4, PEFT loading
# lmc's --save-adapter directory to the logits of its own fine-tune, step
# time and peak RSS of each in its own process.
#
#   bash bench/lora_peft.sh                          # CONFIG=small
#   CONFIG=qwen2.5-0.5b SEQ=256 THREADS=2 bash bench/lora_peft.sh
#   BASE_PRECISION=bf16 ...                   # lmc --base-precision bf16
#   CONFIG=gpt2-124m SEQ=256 THREADS=2 ...    # GPT-2 (Conv1D: c_attn, c_proj)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONFIG=${CONFIG:-small}
WORK=${WORK:-$ROOT/build/bench-lora-peft/$CONFIG}
mkdir -p "$WORK"
source "$ROOT/bench/common.sh"
bench_pip_need transformers transformers
bench_pip_need peft peft
"$VENV/bin/pip" install -q "$ROOT/python"
export PATH=$ROOT/build/bin:$PATH
# Every side of the comparison with OpenBLAS's own choice of kernels.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
"$PY" "$ROOT/bench/lora_peft.py" --config "$CONFIG" --work "$WORK" \
  --steps "${STEPS:-5}" --rank "${RANK:-8}" --seq "${SEQ:-64}" \
  --batch "${BATCH:-2}" --threads "${THREADS:-1}" \
  --base-precision "${BASE_PRECISION:-f32}" \
  ${TARGETS:+--targets "$TARGETS"}
