#!/usr/bin/env bash
# Installs what is missing, then configures and builds lmc into build/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/install-deps.sh"
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/lmc-ccache}
# Paths below the checkout hashed relative to it: a clone in another folder
# (CI's) reuses what this one compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
if [[ ! -f "$ROOT/build/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release
fi
ninja -C "$ROOT/build"
