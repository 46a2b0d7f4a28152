#!/usr/bin/env bash
# lmc's compile time and compiler memory at real size: the phases (`lmc -v`)
# and peak RSS of compiling GPT-2 SIZE, then of a model of the same depth
# and context with tiny weights (width 128, 4 heads, vocabulary 256), so
# that what grows with the weights' bytes shows apart from what grows with
# the number of layers.
#
#   SIZE=774M CONTEXT=1024 BATCH=1 REMAT=per-block bash bench/compile.sh
#   LMC_FLAGS="--target cuda --precision bf16" bash bench/compile.sh
#
# LMC_FLAGS are added to both compiles (the CUDA target needs only the
# toolkit, not a GPU).
#
# The models are exported once into build/bench-gpt2 (PyTorch from the
# virtual environment bench/gpt2.sh creates).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${SIZE:-124M} CONTEXT=${CONTEXT:-256} BATCH=${BATCH:-4} REMAT=${REMAT:-none}
read -r -a EXTRA <<< "${LMC_FLAGS:-}"
WORK=${WORK:-$ROOT/build/bench-gpt2}
mkdir -p "$WORK"
source "$ROOT/bench/common.sh"
FULL=$WORK/gpt2-$SIZE-$CONTEXT.onnx
THIN=$WORK/gpt2-$SIZE-$CONTEXT-thin/model.onnx # its own folder: no external data
mkdir -p "$(dirname "$THIN")"
bench_gpt2_export "$FULL"
bench_gpt2_export "$THIN" --width 128 --heads 4 --vocab 256
for model in "$FULL" "$THIN"; do
  echo "== $model"
  /usr/bin/time -f "compiler peak RSS %M KiB, %e s" "$ROOT/build/bin/lmc" "$model" \
    --batch "$BATCH" --remat "$REMAT" "${EXTRA[@]}" -o "$WORK/compile-bench.out" -v 2>&1 |
    grep -E "^lmc: |peak RSS"
  "$WORK/compile-bench.out" --info | grep -E "^(total parameters|step memory)"
done
rm -f "$WORK/compile-bench.out"
