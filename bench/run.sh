#!/usr/bin/env bash
# Runs the lmc-vs-PyTorch training benchmark (bench/bench.py) with the
# machine's full OpenBLAS kernels for both sides: the environment's
# OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE settings halve sgemm speed here.
# Needs build/bin/lmc (scripts/build.sh) and torch (python3 -m pip install torch).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 "$ROOT/bench/bench.py" "$@"
