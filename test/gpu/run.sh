#!/usr/bin/env bash
# The GPU checks of `--target cuda`, on a machine with an NVIDIA GPU:
#
#   bash test/gpu/run.sh [BUNDLE_DIR]
#
# With no argument it first runs test/gpu/prepare.sh (lmc must be built
# here); with one it uses a bundle prepared elsewhere (GPU machines without
# LLVM/MLIR: prepare where lmc builds, copy the folder). For each example
# model it trains the GPU executable on the same data as the recorded CPU
# run and compares the losses step by step (f32 within 1e-4 relative for
# the MLP and CNN and 1e-3 for the GPT, whose cuBLAS sums are ordered
# differently; bf16 within 1e-2), then times 100 GPT steps and prints
# samples/s, ms/step and the model FLOP utilization against the GPU's f32
# peak. With two GPUs, data parallelism over NCCL is checked against
# --grad-accum 2 and tensor parallelism (the GPT split over model=2)
# against the CPU executable's split. Sized to finish in a few minutes. Exit status 1 when a
# check fails.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUNDLE=${1:-}
if [ -z "$BUNDLE" ]; then
  BUNDLE=$(mktemp -d)
  bash "$ROOT/test/gpu/prepare.sh" "$BUNDLE" || exit 1
fi
BUNDLE=$(cd "$BUNDLE" && pwd)
mkdir -p "$BUNDLE/gpu"
if [ -f "$BUNDLE/lib.tar.xz" ] && [ ! -d "$BUNDLE/lib" ]; then
  tar -xJf "$BUNDLE/lib.tar.xz" -C "$BUNDLE"
fi
export LD_LIBRARY_PATH="$BUNDLE/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
# cuBLAS and NCCL from NVIDIA's Python wheels, where the toolkit lacks them.
for dir in $(python3 -c 'import glob, os, nvidia
print(" ".join(d for p in nvidia.__path__ for d in glob.glob(os.path.join(p, "**", "lib"), recursive=True)))' 2>/dev/null); do
  LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir"
done
nvidia-smi -L 2>/dev/null || echo "(nvidia-smi not available)"

status=0
while read -r name tolerance train; do
  SECONDS=0
  # shellcheck disable=SC2086
  if ! (cd "$BUNDLE" && "bin/$name-cuda" $train --metrics "gpu/$name.jsonl" \
        < /dev/null > "gpu/$name.log" 2>&1); then
    echo "FAIL $name: the GPU run failed:"; tail -5 "$BUNDLE/gpu/$name.log"
    status=1
    continue
  fi
  seconds=$SECONDS
  if python3 "$ROOT/test/gpu/compare_losses.py" "$BUNDLE/gpu/$name.jsonl" \
      "$BUNDLE/ref/$name.jsonl" "$tolerance"; then
    echo "PASS $name (${seconds}s)"
  else
    echo "FAIL $name"
    status=1
  fi
done < "$BUNDLE/runs"

# on_two_gpus NAME EXECUTABLE TOLERANCE PORT TRAIN_ARGS...: two processes
# on two GPUs (torchrun-style variables: Gloo bootstraps NCCL) train with
# bin/EXECUTABLE; the losses must match ref/NAME.jsonl.
on_two_gpus() {
  local name=$1 exe=$2 tolerance=$3 port=$4 rank pids=() ran=0
  shift 4
  for rank in 0 1; do
    (cd "$BUNDLE" && RANK=$rank LOCAL_RANK=$rank WORLD_SIZE=2 \
      LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "bin/$exe" "$@" --metrics "gpu/$name.jsonl" \
      > "gpu/$name-$rank.log" 2>&1) &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || ran=1
  done
  if [ $ran -eq 0 ] && python3 "$ROOT/test/gpu/compare_losses.py" \
      "$BUNDLE/gpu/$name.jsonl" "$BUNDLE/ref/$name.jsonl" "$tolerance"; then
    echo "PASS $name (NCCL, 2 GPUs)"
  else
    echo "FAIL $name (NCCL, 2 GPUs):"; tail -n 3 "$BUNDLE"/gpu/"$name"-*.log
    status=1
  fi
}

if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ]; then
  # Data parallel: must match one CPU process with --grad-accum 2.
  on_two_gpus mlp-dp2 mlp-cuda 1e-4 29517 --input x=data/train_x.npy \
    --input labels=data/train_labels.npy --steps 50 --log-every 1
  # Tensor parallel: the char GPT split over the two GPUs (Megatron: heads
  # and MLP columns; the step's all-reduces on NCCL) must match the CPU
  # executable with the same split.
  on_two_gpus gpt-tp gpt-tp-cuda 1e-3 29518 --tokens data/gpt_train.bin \
    --steps 20 --log-every 1
else
  echo "SKIP mlp-dp2, gpt-tp: need 2 GPUs"
fi

# Throughput of the GPT (batch 8, context 128) on the GPU.
(cd "$BUNDLE" && bin/gpt-cuda --tokens data/gpt_train.bin --steps 100 \
  --log-every 1 --metrics gpu/gpt-speed.jsonl > /dev/null 2>&1) &&
  python3 "$ROOT/test/gpu/throughput.py" "$BUNDLE/gpu/gpt-speed.jsonl" \
    "$(cd "$BUNDLE" && bin/gpt-cuda --info | sed -n 's/^flops per step: //p')"
exit $status
