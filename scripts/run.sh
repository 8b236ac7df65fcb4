#!/usr/bin/env bash
# The main job: install what is needed, build the lplab tool, and write the
# report of this machine (lplab-report/index.html and index.md, the plots, the
# raw tables). Needs no CUDA toolkit, no test framework and no Python; builds
# in its own tree (build/tool) so that it never changes the test build's
# settings.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset tool >/dev/null
cmake --build --preset tool --target lplab
./build/tool/tools/lplab report --out lplab-report
