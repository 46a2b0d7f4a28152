#!/usr/bin/env bash
# The ptxas resource table of a model's --target cuda kernels, without a
# GPU: lmc lowers the model with --gpu-format=ptx, ptxas -v assembles each
# step function's module for sm_90 and sm_80, and ptxas_resources.py lists
# registers, spills, shared memory and stack per kernel and fails on a
# kernel that cannot launch with lmc's blocks of 256 threads.
#
#   bash bench/ptxas_resources.sh                 # GPT-2 124M, context 256, batch 4
#   MODEL=examples/gpt-char/gpt.onnx BATCH=4 bash bench/ptxas_resources.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${SIZE:-124M} CONTEXT=${CONTEXT:-256} BATCH=${BATCH:-4}
WORK=${WORK:-$ROOT/build/bench-ptxas}
mkdir -p "$WORK"
if [ -z "${MODEL:-}" ]; then
  source "$ROOT/bench/common.sh"
  MODEL=$ROOT/build/bench-gpt2/gpt2-$SIZE-$CONTEXT.onnx
  mkdir -p "$(dirname "$MODEL")"
  bench_gpt2_export "$MODEL"
fi
for ARCH in sm_90 sm_80; do
  LOWERED=$WORK/$(basename "$MODEL" .onnx)-b$BATCH-$ARCH.mlir
  /usr/bin/time -f "lmc: %e s, %M KiB peak" "$ROOT/build/bin/lmc" "$MODEL" \
    --batch "$BATCH" --target cuda --gpu-arch "$ARCH" --gpu-format=ptx \
    --compile-to=lower -o "$LOWERED" --quiet
  python3 "$ROOT/bench/ptxas_resources.py" "$LOWERED" --arch "$ARCH" --top "${TOP:-10}"
done
