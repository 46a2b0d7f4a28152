#!/usr/bin/env bash
# Times matrix products alone through OpenBLAS and through oneDNN (the two
# libraries lmc's runtime can call; bench/gemm_floor.c), one line per
# distinct shape read on stdin as "batch M N K transA transB" (row-major, C
# overwritten), then the floor: the sum of the faster library's times. With
# OPENBLAS_CORETYPE unset, as for every benchmark here.
#
#   echo "1 2048 2048 256 1 0" | THREADS=1 bash bench/gemm_libraries.sh
#
# A model's own shapes: bench/bench.py's gemm_shapes(), or the matmuls of
# `lmc model.onnx --compile-to=shard --mlir-print-local-scope`.
#
# With --parts: each shape through oneDNN on one thread, whole and cut
# into 2, 4, 8 and 16 parts as lmc's runtime cuts it for its threads
# (gemm_floor.c --parts): what a part budget above the thread count costs
# (lmc --matmul-parts).
#
#   echo "1 3072 768 1024 1 0" | bash bench/gemm_libraries.sh --parts
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build/bench-gemm}
mkdir -p "$OUT"
cc -O2 "$ROOT/bench/gemm_floor.c" \
  -I/usr/include/x86_64-linux-gnu/openblas-pthread -lopenblas -ldnnl \
  -o "$OUT/gemm_floor"
MODE=--per-shape THREADS=${THREADS:-1}
if [ "${1:-}" = --parts ]; then
  MODE=--parts THREADS=1
fi
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
  OPENBLAS_NUM_THREADS="$THREADS" OMP_NUM_THREADS="$THREADS" \
  "$OUT/gemm_floor" "$MODE"
