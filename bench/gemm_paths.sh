#!/usr/bin/env bash
# Times oneDNN's two f32 GEMM paths alone on the benchmark models' products
# (bench/gemm_paths.cpp), the measurement behind the rule in
# runtime/kernels/f32_gemm.h, with OPENBLAS_CORETYPE unset as for every
# benchmark here. A shape's winner alone is not always its winner inside
# the training step: check a change of the rule with `--profile` runs of
# the training executables too.
#
#   bash bench/gemm_paths.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build/bench-gemm-paths}
mkdir -p "$OUT"
c++ -O2 -std=gnu++17 "$ROOT/bench/gemm_paths.cpp" -o "$OUT/gemm_paths" -ldnnl
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 \
  "$OUT/gemm_paths"
