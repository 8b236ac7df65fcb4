#!/usr/bin/env bash
# Installs what lplab needs to build and test on Debian (run as root).
# CUDA's toolkit (nvcc and the cuda_fp*.h headers of CUDA 12.8+) is expected
# under /usr/local/cuda; it is the validation oracle, not a runtime need.
set -euo pipefail
packages=(cmake ninja-build g++ libgtest-dev libbenchmark-dev libcli11-dev libfmt-dev
          nlohmann-json3-dev libeigen3-dev libmpfr-dev libgmp-dev libhwy-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [[ ! -f /usr/local/cuda/include/cuda_fp4.h ]] && ! command -v nvcc >/dev/null; then
  echo "lplab: the CUDA toolkit (12.8 or later, for cuda_fp4.h) was not found under /usr/local/cuda;" >&2
  echo "       the tests validate against its headers." >&2
fi
