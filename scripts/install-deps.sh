#!/usr/bin/env bash
# Installs what lplab needs on Debian 12 (run as root; a minimal debootstrap
# root is enough). `install-deps.sh` alone: what the tool and the library need
# to build. `install-deps.sh --python`: also what `pip install .` (the Python
# package) needs: Python's headers, venv and pip.
# `install-deps.sh --tests`: also what the tests use (MPFR, Python
# with headers and venv for the package, ml_dtypes and the PyPI copy of CUDA's headers, CA certificates
# for pip, clang with libFuzzer for the fuzz targets). No CUDA toolkit is needed for either: scripts/test.sh finds CUDA's
# cuda_fp*.h under /usr/local/cuda or fetches them from PyPI.
set -euo pipefail
packages=(cmake ninja-build g++ libcli11-dev libfmt-dev nlohmann-json3-dev libeigen3-dev libhwy-dev
          libxtensor-dev libyaml-cpp-dev gnuplot-nox)
# The Python package (pip install .) adds Python's headers and venv.
python_packages=(python3 python3-dev python3-venv python3-pip ca-certificates)
if [[ "${1:-}" == --tests ]]; then
  packages+=(libgtest-dev libbenchmark-dev libmpfr-dev libgmp-dev libdnnl-dev ocl-icd-opencl-dev "${python_packages[@]}"
            clang-14 libclang-rt-14-dev)
elif [[ "${1:-}" == --python ]]; then
  packages+=("${python_packages[@]}")
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
