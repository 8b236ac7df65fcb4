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

# ml_dtypes and numpy for the live finfo comparison, in a virtual environment
# of the build tree; if that cannot be had, that one test reports SKIPPED.
if [[ ! -x build/pyenv/bin/python3 ]]; then
  python3 -m venv build/pyenv >/dev/null 2>&1 ||
    { apt-get install -y -qq python3-venv >/dev/null 2>&1 && python3 -m venv build/pyenv >/dev/null 2>&1; } || true
fi
if [[ -x build/pyenv/bin/pip ]]; then
  build/pyenv/bin/pip install -q ml_dtypes==0.6.0 numpy >/dev/null 2>&1 ||
    echo "note: could not install ml_dtypes; the live finfo comparison will be skipped"
fi

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
