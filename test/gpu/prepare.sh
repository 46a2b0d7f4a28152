#!/usr/bin/env bash
# Builds everything the GPU checks of `--target cuda` need into one folder,
# on any machine where lmc is built (no GPU needed):
#
#   bash test/gpu/prepare.sh BUNDLE_DIR
#
# BUNDLE_DIR/bin    each example model compiled for the CPU and for the GPU
#                   (same embedded weights: same model, same seed);
# BUNDLE_DIR/data   its training data;
# BUNDLE_DIR/ref    the CPU executables' metrics for the checked steps;
# BUNDLE_DIR/lib.tar.xz  the shared libraries the executables need beyond
#                   glibc/libstdc++ and CUDA (OpenBLAS, Open MPI, Gloo,
#                   libomp), for GPU machines without lmc's toolchain;
# BUNDLE_DIR/runs   one line per check: NAME TOLERANCE ARGS...
#
# test/gpu/run.sh BUNDLE_DIR runs the checks on the GPU machine.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LMC=${LMC:-$ROOT/build/bin/lmc}
OUT=${1:?usage: prepare.sh BUNDLE_DIR}
mkdir -p "$OUT"/bin "$OUT"/data "$OUT"/ref
OUT=$(cd "$OUT" && pwd)
: > "$OUT/runs"

cp "$ROOT"/examples/mlp-digits/data/train_{x,labels}.npy "$OUT/data/"
cp "$ROOT/examples/cnn-digits/data/train_x.npy" "$OUT/data/cnn_train_x.npy"
cp "$ROOT/examples/gpt-char/data/train.bin" "$OUT/data/gpt_train.bin"

# check NAME TOLERANCE "COMPILE FLAGS" "TRAIN FLAGS": compiles NAME for both
# targets, records the CPU run, and lists the check. Train flags name data
# files as data/FILE (relative to the bundle).
check() {
  local name=$1 tolerance=$2 compile=$3 train=$4
  # shellcheck disable=SC2086
  "$LMC" $compile -o "$OUT/bin/$name-cpu"
  # shellcheck disable=SC2086
  "$LMC" $compile --target cuda -o "$OUT/bin/$name-cuda"
  # shellcheck disable=SC2086
  (cd "$OUT" && "bin/$name-cpu" $train --threads 1 --metrics "ref/$name.jsonl" > /dev/null)
  echo "$name $tolerance $train" >> "$OUT/runs"
}

DIGITS="--input x=data/train_x.npy --input labels=data/train_labels.npy"
CNN="--input x=data/cnn_train_x.npy --input labels=data/train_labels.npy"
check mlp 1e-4 "$ROOT/examples/mlp-digits/mlp.onnx --batch 32 --optimizer adamw" \
  "$DIGITS --steps 50 --log-every 1"
check mlp-bf16 1e-2 "$ROOT/examples/mlp-digits/mlp.onnx --batch 32 --optimizer adamw --precision bf16" \
  "$DIGITS --steps 50 --log-every 1"
check cnn 1e-4 "$ROOT/examples/cnn-digits/cnn.onnx --batch 32 --optimizer sgd --lr 0.05" \
  "$CNN --steps 30 --log-every 1"
# Data parallelism over two GPUs (NCCL) must match one process with
# --grad-accum 2 (run.sh runs it where there are two GPUs).
(cd "$OUT" && bin/mlp-cpu $DIGITS --steps 50 --log-every 1 --grad-accum 2 \
  --threads 1 --metrics ref/mlp-dp2.jsonl > /dev/null)
check gpt 1e-3 "$ROOT/examples/gpt-char/gpt.onnx --batch 8 --optimizer adamw --lr 1e-3" \
  "--tokens data/gpt_train.bin --steps 20 --log-every 1"
# Tensor parallelism over two GPUs (--mesh model=2, NCCL inside the step)
# must match the CPU executable with the same split under mpirun.
TP=(--mesh model=2 --shard '*.qkv.weight=model,_' --shard '*.attn.proj.weight=_,model'
    --shard '*.fc.weight=model,_' --shard '*.fc_proj.weight=_,model')
"$LMC" "$ROOT/examples/gpt-char/gpt.onnx" --batch 8 --optimizer sgd --lr 0.1 "${TP[@]}" -o "$OUT/bin/gpt-tp-cpu"
"$LMC" "$ROOT/examples/gpt-char/gpt.onnx" --batch 8 --optimizer sgd --lr 0.1 "${TP[@]}" --target cuda -o "$OUT/bin/gpt-tp-cuda"
(cd "$OUT" && mpirun --allow-run-as-root --oversubscribe -np 2 bin/gpt-tp-cpu \
  --tokens data/gpt_train.bin --steps 20 --log-every 1 --threads 1 \
  --metrics ref/gpt-tp.jsonl > /dev/null)

# The non-system shared libraries of the executables, compressed.
libs=$(ldd "$OUT/bin/gpt-cuda" | awk '$3 ~ /^\// {print $3}' |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|/usr/local/cuda/' || true)
tar -cJhf "$OUT/lib.tar.xz" --transform 's|.*/|lib/|' $libs
du -sh "$OUT"
