#!/usr/bin/env bash
# Installs what is missing, builds lmc and runs the whole test suite (lit:
# passes, importer, diagnostics, gradient checks, runtime unit tests and
# end-to-end training against PyTorch reference data), then the runtime under
# ASan + UBSan (scripts/sanitize-runtime.sh; LMC_SANITIZE_RUNTIME=0 skips it)
# and the fuzz targets briefly (scripts/fuzz.sh; LMC_FUZZ_SECONDS per
# target, 0 skips them).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/build.sh"
# Tests skipped for a missing feature are listed at the end with it
# (LMC_EXPECT_FEATURES makes a missing one an error: test/lit.cfg.py).
/usr/lib/llvm-22/bin/lit -sv --show-unsupported "$ROOT/build/test"
if [[ ${LMC_SANITIZE_RUNTIME:-1} != 0 ]]; then
  bash "$ROOT/scripts/sanitize-runtime.sh"
fi
if [[ ${LMC_FUZZ_SECONDS:-15} != 0 ]]; then
  bash "$ROOT/scripts/fuzz.sh" "${LMC_FUZZ_SECONDS:-15}"
fi
