#!/usr/bin/env bash
# The main job: install what is needed, build the lplab tool, and run it.
# Needs no CUDA toolkit, no test framework and no Python.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release -DLPLAB_BUILD_TESTS=OFF -DLPLAB_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build --preset release --target lplab
./build/release/tools/lplab finfo --all
