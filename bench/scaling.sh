#!/usr/bin/env bash
# Data-parallel and tensor-parallel scaling on this machine: samples/s of
# one process against `mpirun -np 2` at the same global batch (plain, with
# --zero 1, and with small gradient buckets reduced during the backward
# pass), and the all-reduce payload per step against the gradient
# bytes. Models: the digits MLP (global batch 64) and the char GPT (global
# batch 16); then bench/gpt-qkv.lmc split Megatron-style over model=2.
#
#   bash bench/scaling.sh            # needs build/bin/lmc (scripts/build.sh)
#
# Like bench/run.sh it unsets OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE (they halve
# sgemm speed here).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LMC=${LMC:-$ROOT/build/bin/lmc}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2)
bash "$ROOT/examples/gpt-char/prepare_data.sh" >/dev/null

# Mean samples/s over the logged steps after the first (warm-up) one.
rate() {
  python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"samples_per_s"' in l]
rows = rows[1:]
print(f"{sum(r['samples_per_s'] for r in rows) / len(rows):9.0f}")
PY
}

# bench NAME MODEL GLOBAL_BATCH STEPS DATA_FLAGS...
bench() {
  local name=$1 model=$2 batch=$3 steps=$4
  shift 4
  "$LMC" "$model" --batch "$batch" -o "$WORK/$name-full"
  "$LMC" "$model" --batch $((batch / 2)) -o "$WORK/$name-half"
  local run=("$@" --steps "$steps" --log-every 1)
  "$WORK/$name-full" "${run[@]}" --threads 2 --metrics "$WORK/a.jsonl" >/dev/null
  "$WORK/$name-full" "${run[@]}" --threads 1 --metrics "$WORK/b.jsonl" >/dev/null
  "$WORK/$name-half" "${run[@]}" --threads 1 --grad-accum 2 \
    --metrics "$WORK/c.jsonl" >/dev/null
  "${MPIRUN[@]}" "$WORK/$name-half" "${run[@]}" --threads 1 \
    --metrics "$WORK/d.jsonl" >/dev/null
  "${MPIRUN[@]}" "$WORK/$name-half" "${run[@]}" --threads 1 --zero 1 \
    --metrics "$WORK/e.jsonl" >/dev/null
  # Gradient buckets of 0.2 MB, each all-reduced while grad_step runs
  # (the default 25 MB holds these models' gradients in one).
  "${MPIRUN[@]}" "$WORK/$name-half" "${run[@]}" --threads 1 --bucket-mb 0.2 \
    --metrics "$WORK/f.jsonl" >/dev/null
  printf '%-5s batch %3d | 1 proc, 2 threads %s | 1 proc, 1 thread %s | 1 proc, grad-accum 2 %s | 2 procs x 1 thread %s | 2 procs, --zero 1 %s | 2 procs, --bucket-mb 0.2 %s samples/s\n' \
    "$name" "$batch" "$(rate "$WORK/a.jsonl")" "$(rate "$WORK/b.jsonl")" \
    "$(rate "$WORK/c.jsonl")" "$(rate "$WORK/d.jsonl")" "$(rate "$WORK/e.jsonl")" \
    "$(rate "$WORK/f.jsonl")"
  "$WORK/$name-half" --info | grep "data-parallel all-reduce"
}

DIGITS=$ROOT/examples/mlp-digits
GPT=$ROOT/examples/gpt-char
bench mlp "$DIGITS/mlp.onnx" 64 3000 \
  --input "x=$DIGITS/data/train_x.npy" --input "labels=$DIGITS/data/train_labels.npy"
bench gpt "$GPT/gpt.onnx" 16 20 --tokens "$GPT/data/train.bin"

# Tensor parallelism: bench/gpt-qkv.lmc (4 layers, width 256, 8 heads,
# global batch 16) whole on one process against Megatron-split over
# `mpirun -np 2` (--mesh model=2: q, k, v and the MLP's fc column-parallel,
# the attention and MLP output projections row-parallel), and the bytes the
# partitioned train_step all-reduces within the model group.
tp_bench() {
  local model=$ROOT/bench/gpt-qkv.lmc
  local split=(--mesh model=2 --shard '*.q.weight=model,_'
    --shard '*.k.weight=model,_' --shard '*.v.weight=model,_'
    --shard '*.o.weight=_,model' --shard '*.fc.weight=model,_'
    --shard '*.mlp.proj.weight=_,model')
  "$LMC" "$model" -o "$WORK/tp-whole"
  "$LMC" "$model" "${split[@]}" -o "$WORK/tp-split"
  "$LMC" "$model" "${split[@]}" --compile-to=shard --emit=mlir -o "$WORK/tp.mlir"
  local run=(--tokens "$GPT/data/train.bin" --steps 20 --log-every 1)
  "$WORK/tp-whole" "${run[@]}" --threads 2 --metrics "$WORK/a.jsonl" >/dev/null
  "$WORK/tp-whole" "${run[@]}" --threads 1 --metrics "$WORK/b.jsonl" >/dev/null
  "${MPIRUN[@]}" "$WORK/tp-split" "${run[@]}" --threads 1 \
    --metrics "$WORK/c.jsonl" >/dev/null
  printf 'gpt-qkv batch 16 | 1 proc, 2 threads %s | 1 proc, 1 thread %s | 2 procs x 1 thread, model=2 %s samples/s\n' \
    "$(rate "$WORK/a.jsonl")" "$(rate "$WORK/b.jsonl")" "$(rate "$WORK/c.jsonl")"
  # The all-reduces of train_step (f32), against Megatron's minimum: the
  # [batch, ctx, width] activations once per attention and MLP, forward
  # and backward.
  python3 - "$WORK/tp.mlir" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
step = text[text.index("func.func @train_step"):]
step = step[:step.index("\n  func.func")] if "\n  func.func" in step else step
total = 0
for shape in re.findall(r"shard\.all_reduce .*-> tensor<([0-9x]+)xf32>", step):
    n = 1
    for d in shape.split("x"):
        n *= int(d)
    total += 4 * n
minimum = 4 * 4 * 16 * 64 * 256 * 4  # layers x all-reduces x floats x bytes
print(f"model-group all-reduces per step: {total} bytes (Megatron's minimum {minimum})")
PY
}
tp_bench
