#!/usr/bin/env bash
# Installs what is missing, builds lmc and runs the whole test suite (lit:
# passes, importer, diagnostics, gradient checks, runtime unit tests and
# end-to-end training against PyTorch reference data).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/build.sh"
/usr/lib/llvm-22/bin/lit -sv "$ROOT/build/test"
