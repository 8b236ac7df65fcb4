#!/usr/bin/env bash
# The main job: install what is needed, build the lplab tool, and run it.
# Needs no CUDA toolkit, no test framework and no Python; builds in its own
# tree (build/tool) so that it never changes the test build's settings.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset tool >/dev/null
cmake --build --preset tool --target lplab
./build/tool/tools/lplab finfo --all
