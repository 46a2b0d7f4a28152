#!/usr/bin/env bash
# Times the CPU attention kernel alone (bench/attention_kernel.cpp), built
# from runtime/kernels/attention.cpp as the runtime builds it (its products
# on runtime/kernels/small_gemm.cpp, oneDNN's sgemm on CPUs without
# AVX-512), with OPENBLAS_CORETYPE unset as for
# every benchmark here. To compare two versions of the kernel, run it on
# each.
#
#   THREADS=1 bash bench/attention_kernel.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build/bench-attention}
mkdir -p "$OUT"
c++ -O3 -fopenmp -std=gnu++17 -I"$ROOT/runtime/include" \
  -I/usr/include/x86_64-linux-gnu/openblas-pthread \
  "$ROOT/bench/attention_kernel.cpp" "$ROOT/runtime/kernels/attention.cpp" \
  "$ROOT/runtime/kernels/sgemm.cpp" "$ROOT/runtime/kernels/small_gemm.cpp" \
  "$ROOT/runtime/kernels/softmax_rows.cpp" \
  -o "$OUT/attention_kernel" -lopenblas -ldnnl
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS="${THREADS:-1}" \
  "$OUT/attention_kernel"
