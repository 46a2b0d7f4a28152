#!/usr/bin/env bash
# The demo: build lmc, compile the PyTorch-exported digits MLP into a training
# executable, train it and report held-out accuracy.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/build.sh"

EXAMPLE=$ROOT/examples/mlp-digits
DATA=$EXAMPLE/data
OUT=$ROOT/build/demo
mkdir -p "$OUT"
echo
echo "== lmc $EXAMPLE/mlp.onnx -o $OUT/train --batch 32 --optimizer adamw --lr 0.01"
"$ROOT/build/bin/lmc" "$EXAMPLE/mlp.onnx" -o "$OUT/train" --batch 32 \
  --optimizer adamw --lr 0.01
"$OUT/train" --info
echo
echo "== training"
"$OUT/train" --input x="$DATA/train_x.npy" --input labels="$DATA/train_labels.npy" \
  --eval-input x="$DATA/test_x.npy" --eval-input labels="$DATA/test_labels.npy" \
  --steps 300 --log-every 50 --shuffle --seed 0 \
  --metrics "$OUT/metrics.jsonl" --save "$OUT/mlp-trained.safetensors" \
  | tee "$OUT/train.log"
accuracy=$(sed -n 's/.*accuracy \([0-9.]*\)%.*/\1/p' "$OUT/train.log" | tail -1)
echo
if awk -v a="$accuracy" 'BEGIN { exit !(a > 90) }'; then
  echo "demo: held-out accuracy ${accuracy}% (> 90%); weights in $OUT/mlp-trained.safetensors"
else
  echo "demo: held-out accuracy ${accuracy}% is not above 90%" >&2
  exit 1
fi
