#!/usr/bin/env bash
# Builds and runs every test: the quick suite, the exhaustive sweeps (all 2^32
# float inputs against CUDA's conversions), and the quick suite again under
# AddressSanitizer + UndefinedBehaviorSanitizer, then the libFuzzer targets
# (scripts/fuzz.sh). LPLAB_SKIP_EXHAUSTIVE=1 skips the sweeps,
# LPLAB_SKIP_FUZZ=1 the fuzzing.
#
# CUDA's conversion headers are the validation oracle. They are taken from
# LPLAB_CUDA_INCLUDE_DIR, else the CUDA toolkit (/usr/local/cuda or
# CUDAToolkit_ROOT), else NVIDIA's PyPI wheels (pinned below), installed into
# the build tree's Python environment: nvidia-cuda-runtime-cu12 has the
# cuda_fp*.h headers, nvidia-cuda-nvcc-cu12 the crt/ headers they include and
# nvidia-cuda-cccl-cu12 the nv/target header; the three are merged into
# build/cuda-oracle/include. If none can be had, this
# stops with one line saying so: the oracle tests are never dropped.
#
# It ends with a table of every stage's wall time (also when a stage fails),
# the exhaustive stage test by test, so that every log shows where the time
# went; docs/testing.md gives the budget (under 45 minutes on a 2-core
# AVX2-only machine).
set -euo pipefail
cd "$(dirname "$0")/.."

# Stage times: begin_stage NAME ... end_stage; rows are "name|seconds".
stage_rows=()
stage_name=""
stage_t0=0
run_t0=$(date +%s.%N)
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
begin_stage() {
  stage_name=$1
  stage_t0=$(now)
  echo "== $1"
}
end_stage() {
  stage_rows+=("$stage_name|$(since "$stage_t0")")
  stage_name=""
}
print_stage_times() {
  local status=$?
  [[ -n "$stage_name" ]] && stage_rows+=("$stage_name (did not finish)|$(since "$stage_t0")")
  local cpu simd
  cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
  simd=$(grep -qw avx512f /proc/cpuinfo 2>/dev/null && echo "AVX-512" || { grep -qw avx2 /proc/cpuinfo 2>/dev/null && echo "AVX2, no AVX-512" || echo "no AVX2"; })
  echo
  echo "== stage times: ${cpu:-unknown CPU} ($simd), $(nproc) cores${LPLAB_SIMD_TARGET:+, LPLAB_SIMD_TARGET=$LPLAB_SIMD_TARGET}"
  local row
  for row in "${stage_rows[@]}"; do
    printf '  %-78s %8s s\n' "${row%|*}" "${row##*|}"
  done
  printf '  %-78s %8s s\n' "total" "$(since "$run_t0")"
  return $status
}
trap print_stage_times EXIT

begin_stage "set-up: packages, Python environment, CUDA's headers"
bash scripts/install-deps.sh --tests
source scripts/env.sh
jobs=$(nproc)
cuda_wheels=(nvidia-cuda-runtime-cu12==12.9.79 nvidia-cuda-nvcc-cu12==12.9.86  # all three CUDA 12.9.1
             nvidia-cuda-cccl-cu12==12.9.27)

# The build tree's Python environment: ml_dtypes and numpy for the live finfo
# comparison (that one test reports SKIPPED without them) and, where needed,
# CUDA's headers.
if [[ ! -x build/pyenv/bin/pip ]]; then
  rm -rf build/pyenv
  python3 -m venv build/pyenv || { echo "lplab: cannot create a Python venv (Debian: python3-venv)" >&2; exit 1; }
fi
build/pyenv/bin/pip install -q ml_dtypes==0.6.0 numpy >/dev/null 2>&1 ||
  echo "note: could not install ml_dtypes; the live finfo comparison will be skipped"
# The Python package (pyproject.toml, python/) is built with the release
# build below and installed into build/pyenv; its tests need these.
# (Debian 12's venv starts with pip 23.0.1; a current pip is fetched first.)
python_tools=(nanobind==3.1.0 scikit-build-core==1.1.2 pytest==9.2.0 numpy)
build/pyenv/bin/python -m pip install -q --upgrade "pip>=23.1" >/dev/null 2>&1 || true
build/pyenv/bin/pip install -q "${python_tools[@]}" >/dev/null 2>&1 || {
  echo "lplab: the Python package's build and tests need ${python_tools[*]} from PyPI, and pip could not install them into build/pyenv" >&2
  exit 1
}

cuda_dir=${LPLAB_CUDA_INCLUDE_DIR:-}
# A toolkit counts when it has all the oracle needs: cuda_fp4.h (12.8+), the
# crt/ headers and nv/target (CUDA 13 moved it under include/cccl/, which
# cmake/CudaOracle.cmake then adds to the include path).
usable() { [[ -f "$1/cuda_fp4.h" && -f "$1/crt/host_defines.h" && ( -f "$1/nv/target" || -f "$1/cccl/nv/target" ) ]]; }
if [[ -z "$cuda_dir" ]]; then
  for d in "${CUDAToolkit_ROOT:-/nonexistent}/include" /usr/local/cuda/include; do
    if usable "$d"; then cuda_dir=$d; break; fi
  done
fi
if [[ -z "$cuda_dir" ]]; then
  echo "== no CUDA toolkit: CUDA's headers from PyPI (${cuda_wheels[*]})"
  build/pyenv/bin/pip install -q "${cuda_wheels[@]}" >/dev/null 2>&1 || {
    echo "lplab: the tests need CUDA's cuda_fp*.h (12.8+) as their oracle: no CUDA toolkit under /usr/local/cuda, and pip could not install ${cuda_wheels[*]}; install either, or set LPLAB_CUDA_INCLUDE_DIR" >&2
    exit 1
  }
  site=$(build/pyenv/bin/python3 -c 'import importlib.util, os; s = importlib.util.find_spec("nvidia"); print(list(s.submodule_search_locations)[0])')
  # cp -a keeps the files' times: a second run does not rebuild the tests.
  rm -rf build/cuda-oracle && mkdir -p build/cuda-oracle
  cp -a "$site/cuda_runtime/include" build/cuda-oracle/include
  cp -a "$site/cuda_nvcc/include/crt" build/cuda-oracle/include/crt
  cp -a "$site/cuda_cccl/include/nv" build/cuda-oracle/include/nv
  cuda_dir=$PWD/build/cuda-oracle/include
fi
usable "$cuda_dir" || {
  echo "lplab: $cuda_dir lacks cuda_fp4.h, crt/host_defines.h or nv/target: the tests need CUDA 12.8 or later's headers" >&2
  exit 1
}
echo "== CUDA oracle headers: $cuda_dir"
config=(-DLPLAB_BUILD_TESTS=ON -DLPLAB_BUILD_BENCHMARKS=ON -DLPLAB_REQUIRE_CUDA_ORACLE=ON
        "-DLPLAB_CUDA_INCLUDE_DIR=$cuda_dir")
# Without a GPU nothing runs the device code, so it is compiled for every
# architecture but assembled (ptxas) only for sm_90a and sm_100a, whose
# instruction sets hold sm_80's (sm_80 is kept as PTX), and ptxas does not
# optimize: about a third of nvcc's time. (NVVM at -O1 as well cut
# cuda/src/scaling.cu from 33 s to 24 but took elementwise.cu from 40 s to
# 100: not used.) A machine with a GPU builds the architectures
# CMakeLists.txt sets, fully optimized.
if ! nvidia-smi -L >/dev/null 2>&1; then
  config+=("-DCMAKE_CUDA_ARCHITECTURES=80-virtual;90a-real;100a-real" "-DCMAKE_CUDA_FLAGS=-Xptxas=-O0")
fi

end_stage

# The release build also builds the Python package's extension module
# (python/), with build/pyenv's Python and nanobind.
python_config=(-DLPLAB_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$PWD/build/pyenv/bin/python")
begin_stage "release build"
cmake --preset release "${config[@]}" "${python_config[@]}" >/dev/null
cmake --build --preset release -j "$jobs"
end_stage
# `pip install .` (scikit-build-core), pointed at the release build's tree:
# the module built above is installed, nothing is compiled twice.
begin_stage "Python package: pip install . into build/pyenv"
CMAKE_GENERATOR=Ninja build/pyenv/bin/pip install -q --no-build-isolation --no-deps \
  --config-settings=build-dir=build/release .
end_stage
begin_stage "quick tests"
ctest --preset quick -j "$jobs"
end_stage
begin_stage "Python tests (pytest)"
build/pyenv/bin/python -m pytest -q python/tests
end_stage
if [[ "${LPLAB_SKIP_EXHAUSTIVE:-0}" != 1 ]]; then
  # One row per test: ctest's verbose log names each with its time.
  begin_stage "exhaustive tests (all)"
  mkdir -p build/release/Testing
  log=build/release/Testing/exhaustive.log
  set +e
  ctest --preset exhaustive 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  set -e
  while IFS='|' read -r name secs; do
    stage_rows+=("  exhaustive: $name|$secs")
  done < <(sed -nE 's/.*Test +#[0-9]+: ([^ ]+) .*(Passed|Failed|\*\*\*[A-Za-z]+).* ([0-9.]+) sec.*/\1|\3/p' "$log" |
           sed -E 's/[A-Za-z]+\.[a-z_]+<[A-Za-z]+\/([^.]+)\./\1/')
  end_stage
  ((status == 0)) || exit "$status"
  # Every float32 through lplab.convert against ml_dtypes (bf16, E4M3).
  # Each is one thread (numpy, ml_dtypes): bfloat16's and the rest on two
  # processes, both waited for; either finding no test fails.
  begin_stage "exhaustive Python tests (pytest -m exhaustive)"
  build/pyenv/bin/python -m pytest -q -m exhaustive python/tests -k bfloat16 &
  bf16_pid=$!
  build/pyenv/bin/python -m pytest -q -m exhaustive python/tests -k "not bfloat16" &
  rest_pid=$!
  wait "$bf16_pid"
  wait "$rest_pid"
  end_stage
fi
# The sanitizer build is -O1 -g1 (CMakePresets.json): what AddressSanitizer's
# documentation recommends for speed, with line tables for its stack traces;
# full debug info and -O2 made it the slowest part of the build. Its kernels
# leave out Highway's two 128-bit targets (SSSE3, SSE4; CMakeLists.txt says
# why): the release build above builds and checks every target.
# It compiles only the SIMD targets its tests run here: AVX-512 only on a CPU
# that has it (the preset's LPLAB_ONLY_HOST_SIMD_TARGETS).
begin_stage "sanitizer build (ASan + UBSan)"
cmake --preset asan "${config[@]}" -DLPLAB_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build --preset asan -j "$jobs"
end_stage
begin_stage "quick tests under ASan + UBSan"
ctest --preset asan-quick -j "$jobs"
end_stage
# Fuzzing (fuzz/, scripts/fuzz.sh): each libFuzzer target for
# LPLAB_FUZZ_SECONDS (20) seconds after a clang build of its own;
# LPLAB_SKIP_FUZZ=1 skips it.
if [[ "${LPLAB_SKIP_FUZZ:-0}" != 1 ]]; then
  begin_stage "fuzzing: clang build and each libFuzzer target (ASan + UBSan)"
  bash scripts/fuzz.sh
  end_stage
fi
