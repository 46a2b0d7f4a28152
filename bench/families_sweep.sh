#!/usr/bin/env bash
# More architectures than the tests pin, as their libraries build them:
# each exported by lmc_export, compiled by lmc and its first loss compared
# with PyTorch's (bench/families_sweep.py). NAMES: a subset.
#
#   bash bench/families_sweep.sh [NAME...]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/common.sh"
bench_pip_need transformers transformers
bench_pip_need torchvision torchvision
"$VENV/bin/pip" install -q "$ROOT/python"
PATH=$ROOT/build/bin:$PATH "$PY" "$ROOT/bench/families_sweep.py" "$@" 2>/dev/null
