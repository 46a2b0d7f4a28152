#!/usr/bin/env bash
# The runtime (the readers of untrusted data files: .npy, safetensors,
# checkpoints, token shards; flags; the training loop) built alone with
# AddressSanitizer + UndefinedBehaviorSanitizer into build-asan-runtime/,
# then its unit tests and the end-to-end runtime tests with the fake models,
# leak checking on. A minute or two, so scripts/test.sh runs it; the whole
# instrumented compiler is scripts/sanitize.sh. See docs/security.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/lmc-ccache}
# Paths below the checkout hashed relative to it: a clone in another folder
# (CI's) reuses what this one compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
BUILD=${LMC_ASAN_RUNTIME_BUILD:-$ROOT/build-asan-runtime}
if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELEASE=-O1 -g -DNDEBUG" \
    -DLMC_ENABLE_COMPILER=OFF -DLMC_SANITIZE=address,undefined >/dev/null
fi
ninja -C "$BUILD" lmc-runtime-tests lmc-fake-train lmc-fake-lm lmc-kill-on-write
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$BUILD/bin/lmc-runtime-tests" --gtest_brief=1
bash "$ROOT/test/e2e/runtime/run.sh" "$BUILD"
bash "$ROOT/test/e2e/runtime/training.sh" "$BUILD"
echo "runtime under ASan + UBSan: clean"
