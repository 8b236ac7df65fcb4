// The format types in device code: a kernel converts floats with several
// policies, and the results must equal the host's, bit for bit. Builds
// wherever nvcc does; runs only on a machine with a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "lplab/formats.h"

namespace {

using namespace lplab;

struct Out {
  std::uint16_t f16, bf16, f16_rz;
  std::uint8_t e4m3, e4m3_sat, e5m2, e8m0, e2m3, e2m1;
  std::uint16_t sum;
};

__host__ __device__ Out convert_all(float x) {
  Out o;
  o.f16 = float16(x).bits();
  o.bf16 = bfloat16(x).bits();
  o.f16_rz = convert<float16>(x, Round::toward_zero).bits();
  o.e4m3 = float8_e4m3fn(x).bits();
  o.e4m3_sat = convert<float8_e4m3fn>(x, Round::nearest_even, Overflow::saturate).bits();
  o.e5m2 = float8_e5m2(x).bits();
  o.e8m0 = convert<float8_e8m0fnu>(x, Round::upward, Overflow::saturate).bits();
  o.e2m3 = float6_e2m3fn(x).bits();
  o.e2m1 = float4_e2m1fn(x).bits();
  o.sum = fma(bfloat16(x), bfloat16(3.0f), bfloat16(x)).bits();
  return o;
}

__global__ void kernel(const float* in, Out* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = convert_all(in[i]);
}

bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

TEST(Device, conversions_match_host_bit_for_bit) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device: device code compiled, not run";
  const int n = 1 << 20;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = detail::bit_cast<float>(static_cast<std::uint32_t>(i) * 4099u);
  float* din = nullptr;
  Out* dout = nullptr;
  ASSERT_EQ(cudaMalloc(&din, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, n * sizeof(Out)), cudaSuccess);
  cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  kernel<<<(n + 255) / 256, 256>>>(din, dout, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<Out> out(n);
  cudaMemcpy(out.data(), dout, n * sizeof(Out), cudaMemcpyDeviceToHost);
  cudaFree(din);
  cudaFree(dout);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const Out h = convert_all(in[i]);
    const Out& d = out[i];
    bad += h.f16 != d.f16 || h.bf16 != d.bf16 || h.f16_rz != d.f16_rz || h.e4m3 != d.e4m3 ||
           h.e4m3_sat != d.e4m3_sat || h.e5m2 != d.e5m2 || h.e8m0 != d.e8m0 ||
           h.e2m3 != d.e2m3 || h.e2m1 != d.e2m1 || h.sum != d.sum;
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
