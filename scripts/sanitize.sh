#!/usr/bin/env bash
# Builds lmc with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-asan/ (LMC_SANITIZE=address,undefined: the compiler libraries, the
# tools, the runtime, and the training executables lmc links) and runs the
# whole lit suite with it: importer and pass tests, runtime unit tests and
# end-to-end training. Any sanitizer report fails the run. LLVM/MLIR are
# prebuilt and not instrumented. See docs/security.md.
#
#   scripts/sanitize.sh            # build + full suite
#   scripts/sanitize.sh Import e2e # build + only these test directories
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/install-deps.sh"
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/lmc-ccache}
# Paths below the checkout hashed relative to it: a clone in another folder
# (CI's) reuses what this one compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
BUILD=${LMC_ASAN_BUILD:-$ROOT/build-asan}
if [[ ! -f "$BUILD/build.ninja" ]]; then
  # gcc: lmc links training executables with the `c++` on PATH, whose
  # sanitizer runtime must match the one the runtime library was built for.
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELEASE=-O1 -g -DNDEBUG" \
    -DLMC_SANITIZE=address,undefined >/dev/null
fi
ninja -C "$BUILD"
# Leak checking is off: LLVM's command-line registry and MLIR's uniqued
# storage are intentionally never freed at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if (($#)); then
  /usr/lib/llvm-22/bin/lit -sv $(printf "$BUILD/test/%s " "$@")
else
  /usr/lib/llvm-22/bin/lit -sv "$BUILD/test"
fi
