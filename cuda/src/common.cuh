// What the backend's sources share: CUDA errors as one-line exceptions,
// launch geometry, and the hardware conversion instructions.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "lplab/cuda.h"

namespace lplab::cuda::detail {

// "lplab::cuda: <what>: <CUDA's reason>" for any error.
void check(cudaError_t e, const char* what);
// After a launch: the launch's error, then the kernel's.
void check_kernel(const char* what);
// Throws std::runtime_error when there is no device; the checks that need
// no device come first in every entry point.
void require();
[[noreturn]] void fail(const std::string& what);  // std::invalid_argument "lplab::cuda::<what>"

// 256 threads a block, at most 2^16 blocks: grid-stride loops cover the rest.
inline constexpr int kThreads = 256;
inline unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, std::size_t{1} << 16));
}

// ---------------------------------------------------------------------------
// The hardware conversions (PTX ISA, cvt): two floats into a packed pair,
// the first operand into the upper half as PTX orders them. Each is checked
// against the portable core on all 2^32 inputs (tests/cuda/cvt_test.cu).
__device__ inline std::uint32_t cvt_bf16x2(float hi, float lo) {
  std::uint32_t d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ inline std::uint32_t cvt_f16x2(float hi, float lo) {
  std::uint32_t d;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
// sm_89+ (Ada, Hopper, Blackwell): FP8 with saturation to the largest finite.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
#define LPLAB_CUDA_HAVE_CVT_FP8 1
__device__ inline std::uint16_t cvt_e4m3x2(float hi, float lo) {
  std::uint16_t d;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ inline std::uint16_t cvt_e5m2x2(float hi, float lo) {
  std::uint16_t d;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}
#endif

}  // namespace lplab::cuda::detail
