// The CUDA backend's loops (lplab/cuda.h): one thread per element, a
// grid-stride loop around the portable core's scalar conversion.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "lplab/cuda.h"
#include "lplab/kernels/random.h"

namespace lplab::cuda {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("lplab::cuda: ") + what + ": " + cudaGetErrorString(e));
}

// Device memory for n elements of T, freed on scope exit.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) { check(cudaMalloc(&p_, std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc"); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(p_); }
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
};

// How many CUDA devices the runtime lists: 0, with its reason in *why,
// where there are none (no GPU, no driver).
int device_count(std::string* why) {
  int n = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&n); e != cudaSuccess) {
    if (why != nullptr) *why = cudaGetErrorString(e);
    cudaGetLastError();  // reset the runtime's last error, so later calls start clean
    return 0;
  }
  if (n == 0 && why != nullptr) *why = "the CUDA runtime lists no device";
  return n;
}

void check_call(std::size_t in, std::size_t out, const kernels::ConvertOptions& o) {
  if (in != out)
    throw std::invalid_argument("lplab::cuda::convert: input and output lengths differ (" + std::to_string(in) +
                                " vs " + std::to_string(out) + ")");
  if (o.stats != nullptr)
    throw std::invalid_argument("lplab::cuda::convert: flags are counted on the CPU only (options.stats)");
  std::string why;
  if (device_count(&why) == 0) throw std::runtime_error("lplab::cuda: no CUDA device: " + why);
}

// 256 threads a block, at most 2^16 blocks: a grid-stride loop covers the rest.
constexpr int kThreads = 256;
unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, std::size_t{1} << 16));
}

template <std::size_t I>
__global__ void encode_kernel(const float* in, void* out, std::size_t n, Round r, Overflow o, std::uint64_t seed,
                              std::uint64_t first) {
  using T = catalog_format<I>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint32_t bits = r == Round::stochastic ? kernels::stochastic_bits(seed, first + i) : 0;
    static_cast<T*>(out)[i] = lplab::convert<T>(in[i], r, o, nullptr, bits);
  }
}

template <std::size_t I>
__global__ void decode_kernel(const void* in, float* out, std::size_t n) {
  using T = catalog_format<I>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = lplab::convert<float>(static_cast<const T*>(in)[i]);  // exact
}

// Copies `in` to the device, runs `launch(device_in, device_out)` and
// copies the result into `out` once the kernel has finished.
template <class In, class Out, class Launch>
void run(std::span<const In> in, std::span<Out> out, Launch launch) {
  if (in.empty()) return;
  const DeviceArray<In> din(in.size());
  const DeviceArray<Out> dout(out.size());
  check(cudaMemcpy(din.get(), in.data(), in.size_bytes(), cudaMemcpyHostToDevice), "copy to the device");
  launch(din.get(), dout.get());
  check(cudaGetLastError(), "kernel launch");
  check(cudaDeviceSynchronize(), "kernel");
  check(cudaMemcpy(out.data(), dout.get(), out.size_bytes(), cudaMemcpyDeviceToHost), "copy from the device");
}

}  // namespace

std::vector<Device> devices(std::string* why) {
  std::vector<Device> out;
  const int n = device_count(why);
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    out.push_back({i, p.name, p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem});
  }
  if (n > 0 && out.empty() && why != nullptr) *why = "no device's properties could be read";
  return out;
}

template <class To>
void convert(std::span<const float> in, std::span<To> out, const kernels::ConvertOptions& o) {
  check_call(in.size(), out.size(), o);
  run(in, out, [&](const float* din, To* dout) {
    encode_kernel<catalog_index<To>()><<<blocks_for(in.size()), kThreads>>>(din, dout, in.size(), o.round,
                                                                          o.overflow, o.seed, o.first_index);
  });
}

template <class From>
void convert(std::span<const From> in, std::span<float> out, const kernels::ConvertOptions& o) {
  check_call(in.size(), out.size(), o);
  run(in, out, [&](const From* din, float* dout) {
    decode_kernel<catalog_index<From>()><<<blocks_for(in.size()), kThreads>>>(din, dout, in.size());
  });
}

#define LPLAB_CUDA_INSTANTIATE(type, names, description)                                                 \
  template void convert<type>(std::span<const float>, std::span<type>, const kernels::ConvertOptions&); \
  template void convert<type>(std::span<const type>, std::span<float>, const kernels::ConvertOptions&);
LPLAB_FORMAT_CATALOG(LPLAB_CUDA_INSTANTIATE)
#undef LPLAB_CUDA_INSTANTIATE

}  // namespace lplab::cuda
