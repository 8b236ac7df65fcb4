#!/usr/bin/env bash
# The main job: install what is needed, build, and run lplab.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
cmake --preset release >/dev/null
cmake --build --preset release --target lplab
./build/release/tools/lplab finfo --all
