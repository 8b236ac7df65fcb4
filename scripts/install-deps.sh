#!/usr/bin/env bash
# Installs what lplab needs on Debian 12 (run as root; a minimal debootstrap
# root is enough). `install-deps.sh` alone: what the tool and the library need
# to build. `install-deps.sh --tests`: also what the tests use (MPFR, Python
# with venv for ml_dtypes and the PyPI copy of CUDA's headers, CA certificates
# for pip, clang with libFuzzer for the fuzz targets). No CUDA toolkit is needed for either: scripts/test.sh finds CUDA's
# cuda_fp*.h under /usr/local/cuda or fetches them from PyPI.
set -euo pipefail
packages=(cmake ninja-build g++ libcli11-dev libfmt-dev nlohmann-json3-dev libeigen3-dev libhwy-dev
          libxtensor-dev libyaml-cpp-dev gnuplot-nox)
if [[ "${1:-}" == --tests ]]; then
  packages+=(libgtest-dev libbenchmark-dev libmpfr-dev libgmp-dev libdnnl-dev ocl-icd-opencl-dev python3 python3-venv ca-certificates
            clang-14 libclang-rt-14-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  echo "installing: ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
