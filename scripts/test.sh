#!/usr/bin/env bash
# Builds and runs every test: the quick suite, the exhaustive sweeps (all 2^32
# float inputs against CUDA's conversions), and the quick suite again under
# AddressSanitizer + UndefinedBehaviorSanitizer. LPLAB_SKIP_EXHAUSTIVE=1 skips
# the sweeps.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
jobs=$(nproc)

echo "== release build"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
echo "== quick tests"
ctest --preset quick -j "$jobs"
if [[ "${LPLAB_SKIP_EXHAUSTIVE:-0}" != 1 ]]; then
  echo "== exhaustive tests"
  ctest --preset exhaustive
fi
echo "== sanitizer build (ASan + UBSan)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
echo "== quick tests under ASan + UBSan"
ctest --preset asan-quick -j "$jobs"
