#!/usr/bin/env bash
# PyTorch's own f32 products alone (bench/torch_gemm.py), one line per
# shape read on stdin as "batch M N K transA transB", in the benchmark
# peers' virtual environment, with OPENBLAS_CORETYPE unset as for every
# benchmark here. The 4-layer GPT's products (forward, input and weight
# gradients of fc, fc_proj and qkv):
#
#   printf '%s\n' "1 1024 1024 256 0 1" "1 1024 256 1024 0 1" \
#     "1 1024 768 256 0 1" "1 256 1024 1024 1 0" "1 1024 256 1024 1 0" \
#     "1 1024 256 1024 0 0" "1 1024 1024 256 0 0" "1 256 768 1024 1 0" \
#     | THREADS=1 bash bench/torch_gemm.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/common.sh"
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE THREADS="${THREADS:-1}" \
  "$PY" "$ROOT/bench/torch_gemm.py"
