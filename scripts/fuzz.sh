#!/usr/bin/env bash
# Builds the libFuzzer targets (test/fuzz) with clang into build-fuzz/ and
# runs each for a while from its checked-in corpus, then replays every crash
# reproducer in test/fuzz/regressions/. A crash, sanitizer report, leak, OOM
# or timeout fails the script; the reproducer is left in
# build-fuzz/artifacts/<target>/ (check it in under test/fuzz/regressions/
# after fixing the bug).
#
#   scripts/fuzz.sh                 # 15 s per target (what scripts/test.sh runs)
#   scripts/fuzz.sh 600             # 10 minutes per target
#   scripts/fuzz.sh 3600 onnx       # one target; extra args go to libFuzzer:
#   scripts/fuzz.sh 600 npy -jobs=4 -workers=4
#
# The seed is fixed (LMC_FUZZ_SEED, default 1) so that the short runs of
# the test command explore the same inputs on every machine; longer
# campaigns should vary it (LMC_FUZZ_SEED=0 draws one).
#
# New corpus entries go to build-fuzz/corpus/<target>/ (not the source tree);
# docs/security.md says how to merge them back.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_PER_TARGET=${1:-15}
shift || true
TARGETS=()
while (($#)) && [[ $1 != -* ]]; do TARGETS+=("$1"); shift; done
((${#TARGETS[@]})) || TARGETS=(npy safetensors tokens descriptor checkpoint onnx dsl)
EXTRA=("$@")

bash "$ROOT/scripts/install-deps.sh" --fuzz
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/lmc-ccache}
# Paths below the checkout hashed relative to it: a clone in another folder
# (CI's) reuses what this one compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
BUILD=${LMC_FUZZ_BUILD:-$ROOT/build-fuzz}
if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELEASE=-O1 -g -DNDEBUG" \
    -DLMC_ENABLE_FUZZERS=ON -DLMC_ENABLE_TESTS=OFF >/dev/null
fi
ninja -C "$BUILD" $(printf 'fuzz_%s ' "${TARGETS[@]}")

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${TARGETS[@]}"; do
  bin="$BUILD/bin/fuzz_$t"
  work="$BUILD/corpus/$t"
  artifacts="$BUILD/artifacts/$t/"
  mkdir -p "$work" "$artifacts"
  # Known crash reproducers first: each must now run clean.
  regressions=("$ROOT/test/fuzz/regressions/$t"/*)
  if [[ -e ${regressions[0]} ]]; then
    if ! "$bin" -rss_limit_mb=2048 -timeout=30 "${regressions[@]}" \
        >"$BUILD/fuzz_$t.regressions.log" 2>&1; then
      echo "fuzz_$t: a regression input fails; see $BUILD/fuzz_$t.regressions.log"
      status=1
      continue
    fi
  fi
  log="$BUILD/fuzz_$t.log"
  if "$bin" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 \
      -malloc_limit_mb=1024 -timeout=30 -max_len=65536 -print_final_stats=1 \
      -seed="${LMC_FUZZ_SEED:-1}" -artifact_prefix="$artifacts" "${EXTRA[@]}" \
      "$work" "$ROOT/test/fuzz/corpus/$t" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "fuzz_$t: ok, ${execs:-?} runs in ${SECONDS_PER_TARGET}s (${cov:-cov: ?})"
  else
    echo "fuzz_$t: FAILED; reproducer in $artifacts, log $log"
    grep -m1 -E 'ERROR: |runtime error|SUMMARY' "$log" || tail -5 "$log"
    status=1
  fi
done
exit $status
