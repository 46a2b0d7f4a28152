#!/usr/bin/env bash
# Times products whole and cut into 2 to 16 parts as lmc's runtime cuts
# them for its threads (bench/gemm_parts.c), oneDNN on one thread, one line
# per distinct shape read on stdin as "batch M N K transA transB", with
# OPENBLAS_CORETYPE unset as for every benchmark here.
#
#   echo "1 3072 768 1024 1 0" | bash bench/gemm_parts.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build/bench-gemm}
mkdir -p "$OUT"
cc -O2 "$ROOT/bench/gemm_parts.c" -ldnnl -o "$OUT/gemm_parts"
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 \
  "$OUT/gemm_parts"
