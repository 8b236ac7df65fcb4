// This GPU's roofline (lplab/cuda/roofline.h): the median of several timed
// repetitions of each, after a warm-up.
#include <algorithm>

#include "common.cuh"
#include "lplab/cuda/roofline.h"

namespace lplab::cuda {
namespace {

// The median time of `reps` runs of f, in seconds, after one warm-up.
template <class F>
double median_seconds(int reps, F&& f) {
  cudaEvent_t start, stop;
  detail::check(cudaEventCreate(&start), "cudaEventCreate");
  detail::check(cudaEventCreate(&stop), "cudaEventCreate");
  f();
  detail::check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(start);
    f();
    cudaEventRecord(stop);
    detail::check(cudaEventSynchronize(stop), "timing");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    t.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

__global__ void fill_kernel(float* x, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = static_cast<float>((i * 2654435761u) % 2001) / 1000.0f - 1.0f;  // [-1, 1]
}

// cuBLASLt's square GEMM of side s on T operands: FLOP/s.
template <class T, class TC>
double gemm_flops(std::size_t s) {
  Buffer<float> xf(s * s);
  fill_kernel<<<detail::blocks_for(s * s), detail::kThreads>>>(xf.data(), s * s);
  detail::check_kernel("fill");
  Buffer<T> a(s * s);
  Buffer<TC> c(s * s);
  if constexpr (std::is_same_v<T, float>)
    detail::check(cudaMemcpy(a.data(), xf.data(), s * s * 4, cudaMemcpyDeviceToDevice), "copy");
  else
    convert(DeviceSpan<const float>(xf.span()), a.span(), {.overflow = Overflow::saturate});
  const double sec = median_seconds(
      5, [&] { cublas_matmul<T, T, TC>(s, s, s, DeviceSpan<const T>(a.span()), DeviceSpan<const T>(a.span()), c.span()); });
  return 2.0 * static_cast<double>(s) * s * s / sec;
}

}  // namespace

Roofline measure_roofline() {
  Roofline r;
  r.device = require_device();
  constexpr std::size_t kBytes = std::size_t{1} << 30;
  {
    Buffer<unsigned char> a(kBytes), b(kBytes);
    detail::check(cudaMemset(a.data(), 1, kBytes), "cudaMemset");
    const double sec = median_seconds(10, [&] { cudaMemcpyAsync(b.data(), a.data(), kBytes, cudaMemcpyDeviceToDevice); });
    r.copy_bytes_per_s = 2.0 * kBytes / sec;
  }
  const char* acc = ", fp32 accumulation";
  r.roofs.push_back({"fp32", gemm_flops<float, float>(4096), std::string("cuBLASLt 4096^3 GEMM") + acc});
  r.roofs.push_back({"bf16", gemm_flops<bfloat16, float>(8192), std::string("cuBLASLt 8192^3 GEMM") + acc});
  r.roofs.push_back({"fp16", gemm_flops<float16, float>(8192), std::string("cuBLASLt 8192^3 GEMM") + acc});
  if (r.device.major * 10 + r.device.minor >= 89)
    r.roofs.push_back({"fp8 e4m3", gemm_flops<float8_e4m3fn, float>(8192), std::string("cuBLASLt 8192^3 GEMM") + acc});
  return r;
}

}  // namespace lplab::cuda
