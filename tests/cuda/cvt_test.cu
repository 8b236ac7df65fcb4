// The GPU's own conversion instructions against lplab, on all 2^32 float
// inputs: each cvt the backend uses (cvt.rn.bf16x2.f32, cvt.rn.f16x2.f32,
// cvt.rn.satfinite.e4m3x2.f32, cvt.rn.satfinite.e5m2x2.f32) against the
// portable core's conversion under the same policy, on the device -- the
// codes must agree for every input that is not a NaN (PTX leaves a NaN's
// code to the implementation; those are counted and printed). Then the
// backend's conversion (the instruction, NaNs through the portable core)
// against the CPU kernels, all 2^32 inputs again, every code equal.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "../../cuda/src/common.cuh"
#include "lplab/cuda.h"
#include "lplab/formats.h"
#include "lplab/kernels/convert.h"

namespace {

using namespace lplab;

bool have_device(int min_cc = 0) {
  const std::vector<lplab::cuda::Device> d = lplab::cuda::devices();
  return !d.empty() && d[0].major * 10 + d[0].minor >= min_cc;
}

struct Counts {
  unsigned long long finite_differ, nan_differ;
  unsigned first_input, first_hw, first_lplab;
};

enum class Cvt { bf16, f16, e4m3, e5m2 };

template <Cvt C>
__device__ unsigned hardware(float x) {
  if constexpr (C == Cvt::bf16) return lplab::cuda::detail::cvt_bf16x2(0.0f, x) & 0xFFFF;
  if constexpr (C == Cvt::f16) return lplab::cuda::detail::cvt_f16x2(0.0f, x) & 0xFFFF;
#if defined(LPLAB_CUDA_HAVE_CVT_FP8)
  if constexpr (C == Cvt::e4m3) return lplab::cuda::detail::cvt_e4m3x2(0.0f, x) & 0xFF;
  if constexpr (C == Cvt::e5m2) return lplab::cuda::detail::cvt_e5m2x2(0.0f, x) & 0xFF;
#endif
  return 0;
}

template <Cvt C>
__device__ unsigned portable(float x) {
  if constexpr (C == Cvt::bf16) return lplab::convert<bfloat16>(x).bits();
  if constexpr (C == Cvt::f16) return lplab::convert<float16>(x).bits();
  if constexpr (C == Cvt::e4m3) return lplab::convert<float8_e4m3fn>(x, Round::nearest_even, Overflow::saturate).bits();
  return lplab::convert<float8_e5m2>(x, Round::nearest_even, Overflow::saturate).bits();
}

template <Cvt C>
__global__ void every_float(Counts* out) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < (1ull << 32); i += stride) {
    const unsigned bits = static_cast<unsigned>(i);
    const float x = __uint_as_float(bits);
    const unsigned h = hardware<C>(x), p = portable<C>(x);
    if (h == p) continue;
    if (x != x) {
      atomicAdd(&out->nan_differ, 1ull);
    } else if (atomicAdd(&out->finite_differ, 1ull) == 0) {
      out->first_input = bits, out->first_hw = h, out->first_lplab = p;
    }
  }
}

template <Cvt C>
Counts run(const char* name) {
  Counts* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, sizeof(Counts)), cudaSuccess);
  cudaMemset(d, 0, sizeof(Counts));
  every_float<C><<<132 * 16, 256>>>(d);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Counts c{};
  cudaMemcpy(&c, d, sizeof c, cudaMemcpyDeviceToHost);
  cudaFree(d);
  std::printf("%-34s 2^32 inputs: %llu finite inputs differ, %llu NaN inputs give another NaN code\n", name,
              c.finite_differ, c.nan_differ);
  if (c.finite_differ != 0)
    std::printf("  first: input 0x%08x: cvt 0x%x, lplab 0x%x\n", c.first_input, c.first_hw, c.first_lplab);
  return c;
}

TEST(Cvt, the_gpus_conversions_equal_lplab_on_every_float) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device: the cvt checks compiled, not run";
  EXPECT_EQ(run<Cvt::bf16>("cvt.rn.bf16x2.f32").finite_differ, 0u);
  EXPECT_EQ(run<Cvt::f16>("cvt.rn.f16x2.f32").finite_differ, 0u);
  if (!have_device(89)) GTEST_SKIP() << "the FP8 cvt needs sm_89 or later: bf16 and f16 checked, FP8 not run";
  EXPECT_EQ(run<Cvt::e4m3>("cvt.rn.satfinite.e4m3x2.f32").finite_differ, 0u);
  EXPECT_EQ(run<Cvt::e5m2>("cvt.rn.satfinite.e5m2x2.f32").finite_differ, 0u);
}

// The backend (instruction + portable NaNs) against the CPU kernels.
template <class T>
std::size_t backend_differs(const kernels::ConvertOptions& o) {
  constexpr std::size_t kChunk = std::size_t{1} << 28;
  std::vector<float> x(kChunk);
  std::vector<T> cpu(kChunk), gpu(kChunk);
  std::size_t bad = 0;
  for (std::size_t base = 0; base < (std::size_t{1} << 32); base += kChunk) {
    for (std::size_t i = 0; i < kChunk; ++i) x[i] = detail::bit_cast<float>(static_cast<std::uint32_t>(base + i));
    kernels::ConvertOptions c = o;
    c.threads = 0;
    kernels::convert(std::span<const float>(x), std::span<T>(cpu), c);
    lplab::cuda::convert(std::span<const float>(x), std::span<T>(gpu), o);
    for (std::size_t i = 0; i < kChunk; ++i) bad += cpu[i].bits() != gpu[i].bits();
  }
  return bad;
}

TEST(Cvt, the_backends_hardware_conversions_equal_the_cpu_on_every_float) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device: compiled, not run";
  EXPECT_TRUE(lplab::cuda::hardware_conversion<bfloat16>({}));
  EXPECT_EQ(backend_differs<bfloat16>({}), 0u);
  EXPECT_EQ(backend_differs<float16>({}), 0u);
  const kernels::ConvertOptions sat{.overflow = Overflow::saturate};
  if (!have_device(89)) GTEST_SKIP() << "no FP8 cvt before sm_89: bf16 and f16 checked";
  EXPECT_TRUE(lplab::cuda::hardware_conversion<float8_e4m3fn>(sat));
  EXPECT_EQ(backend_differs<float8_e4m3fn>(sat), 0u);
  EXPECT_EQ(backend_differs<float8_e5m2>(sat), 0u);
}

}  // namespace
