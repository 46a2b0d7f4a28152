#!/usr/bin/env bash
# Installs what lmc needs to build and test on Debian 12 (bookworm).
# Idempotent: does nothing when everything is present.
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache g++
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libopenblas-dev libdnnl-dev libgtest-dev libopenmpi-dev openmpi-bin libomp-22-dev
  libgloo-dev
  slurmctld slurmd slurm-client munge  # slurm.test's one-node cluster
  python3 python3-numpy
)

# scripts/fuzz.sh needs clang and libFuzzer (install-deps.sh --fuzz).
if [[ ${1:-} == --fuzz ]]; then
  PACKAGES+=(clang-14 libclang-rt-14-dev)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "lmc: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The tests' helper scripts need numpy in the python3 on PATH.
if ! python3 -c 'import numpy' 2>/dev/null; then
  echo "lmc: installing numpy for $(command -v python3)"
  python3 -m pip install --quiet numpy
fi

# The runtime's TensorBoard test reads event files with the real reader.
python3 -c 'import tensorboard' 2>/dev/null || python3 -m pip install --quiet tensorboard
# The --export-onnx test runs exported models in onnx's reference evaluator.
python3 -c 'import onnx.reference' 2>/dev/null || python3 -m pip install --quiet onnx
