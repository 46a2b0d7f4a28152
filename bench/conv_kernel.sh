#!/usr/bin/env bash
# Times the runtime's convolution kernels alone (bench/conv_kernel.cpp)
# against the lmc_kernels library of build/ (scripts/build.sh), with
# OPENBLAS_CORETYPE unset as for every benchmark here; with PEER=1, PyTorch's
# convolutions on the same shapes too (bench/conv_torch.py, in the bench
# scripts' virtual environment).
#
#   THREADS=2 bash bench/conv_kernel.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build/bench-conv}
mkdir -p "$OUT"
c++ -O3 -std=gnu++17 -I"$ROOT/runtime/include" "$ROOT/bench/conv_kernel.cpp" \
  "$ROOT/build/lib/liblmc_kernels.a" -o "$OUT/conv_kernel" \
  -lopenblas -ldnnl -L/usr/lib/llvm-22/lib -lomp -Wl,-rpath,/usr/lib/llvm-22/lib
echo "$(lscpu | sed -n 's/^Model name: *//p'), ${THREADS:-1} thread(s), $(date -u +%F)"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE THREADS="${THREADS:-1}" "$OUT/conv_kernel"
if [ "${PEER:-0}" = 1 ]; then
  source "$ROOT/bench/common.sh"
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" "$ROOT/bench/conv_torch.py" \
    --threads "${THREADS:-1}"
fi
