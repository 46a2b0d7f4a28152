#!/usr/bin/env bash
# Runs the lmc-vs-PyTorch training benchmark (bench/bench.py: lmc, PyTorch
# eager and torch.compile side by side) with the machine's full OpenBLAS
# kernels for every side: the environment's OPENBLAS_CORETYPE /
# OPENBLAS_L2_SIZE settings halve sgemm speed here. PyTorch comes from PyPI
# into a virtual environment this script creates (shared with
# bench/gpt2.sh; a benchmark peer, not a test dependency).
# Needs build/bin/lmc (scripts/build.sh).
#
#   bash bench/run.sh --threads 1,2 --runs 3 --models digits,mlp,gpt
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/common.sh"
# torch.compile's first step is its compile time only without Inductor's
# on-disk cache (a warm cache from an earlier run makes it seconds).
export TORCHINDUCTOR_FORCE_DISABLE_CACHES=1
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" \
  "$ROOT/bench/bench.py" "$@"
