#!/usr/bin/env bash
# The GPU suite, on a machine with an NVIDIA GPU (driver and CUDA toolkit 13):
#   bash scripts/gpu.sh
# builds the GPU targets in the release tree (build/release; LPLAB_GPU_BUILD
# names another) when they are missing, then runs
#   1. ctest -L gpu: the portable core as device code, the backend against the
#      CPU kernels, the GPU's cvt on all 2^32 floats, the hardware probe;
#   2. lplab probe: every matrix-unit instruction of this GPU against lplab's
#      model, bit for bit;
#   3. cuda_bench: conversions, quantization and elementwise ops against a
#      device-to-device copy, the emulated matmuls against cuBLASLt.
# Logs go to build/gpu/. It exits non-zero if ctest -L gpu finds no test, if a test fails, if the probe finds
# a differing D, or if a GPU test was SKIPPED (a skip is not a pass: the one
# test that runs only without a GPU, Backend.says_why_when_there_is_no_device,
# apart).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${LPLAB_GPU_BUILD:-build/release}
out=build/gpu
die() { echo "gpu.sh: $*" >&2; exit 1; }
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || die "no NVIDIA GPU here (nvidia-smi lists none): nothing to run"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
targets=(device_test backend_test probe_test cvt_test cuda_bench lplab)
if [[ ! -x "$build/tests/backend_test" || ! -x "$build/benchmarks/cuda_bench" ]]; then
  echo "== building ${targets[*]} in $build"
  cmake --preset release -DLPLAB_BUILD_TESTS=ON -DLPLAB_BUILD_BENCHMARKS=ON -DLPLAB_BUILD_CUDA=ON >/dev/null
  cmake --build "$build" --target "${targets[@]}" -j "$(nproc)"
fi
[[ -x "$build/tests/backend_test" ]] || die "$build has no CUDA backend: was nvcc found when it was configured?"
status=0
echo "== ctest -L gpu"
listed=$(ctest --test-dir "$build" -N -L gpu | sed -n 's/^Total Tests: //p')
[[ "${listed:-0}" -gt 0 ]] || die "ctest -L gpu lists no test in $build: the GPU tests are not labelled gpu"
echo "$listed GPU tests"
ctest --test-dir "$build" -L gpu --output-on-failure 2>&1 | tee "$out/ctest.txt" || status=1
grep -q "tests passed\|tests failed" "$out/ctest.txt" || { echo "gpu.sh: ctest -L gpu ran no test"; status=1; }
skipped=$(grep -E "\*\*\*Skipped|Not Run" "$out/ctest.txt" | grep -v "says_why_when_there_is_no_device" || true)
if [[ -n "$skipped" ]]; then
  echo "gpu.sh: GPU tests SKIPPED (not run, not passed):"
  echo "$skipped"
  status=1
fi
echo "== lplab probe"
"$build/tools/lplab" probe --tiles 4096 | tee "$out/probe.txt" || status=1
echo "== cuda_bench"
"$build/benchmarks/cuda_bench" --benchmark_out="$out/cuda_bench.json" --benchmark_out_format=json |
  tee "$out/cuda_bench.txt" || status=1
echo "== logs in $out; $([[ $status == 0 ]] && echo "every GPU test passed" || echo "FAILED")"
exit "$status"
