// The backend's runtime: devices, memory, errors (lplab/cuda.h).
#include "common.cuh"

namespace lplab::cuda {
namespace detail {
namespace {

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

}  // namespace

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string("lplab::cuda: ") + what + ": " + cudaGetErrorString(e));
  }
}

void check_kernel(const char* what) {
  check(cudaGetLastError(), what);
  check(cudaDeviceSynchronize(), what);
}

void fail(const std::string& what) { throw std::invalid_argument("lplab::cuda::" + what); }

void require() {
  std::string why;
  if (device_count(&why) == 0) throw std::runtime_error("lplab::cuda: no CUDA device: " + why);
}

void* allocate(std::size_t bytes) {
  require();
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
  return p;
}

void release(void* p) noexcept {
  if (p != nullptr) cudaFree(p);
}

void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "copy to the device");
}

void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "copy from the device");
}

}  // namespace detail

void throw_length(const char* what, std::size_t expected, std::size_t given) {
  throw std::invalid_argument(std::string("lplab::cuda::") + what + " has " + std::to_string(given) +
                              " elements, expected " + std::to_string(expected));
}

std::vector<Device> devices(std::string* why) {
  std::vector<Device> out;
  const int n = detail::device_count(why);
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    out.push_back({i, p.name, p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem});
  }
  if (n > 0 && out.empty() && why != nullptr) *why = "no device's properties could be read";
  return out;
}

Device require_device() {
  std::string why;
  std::vector<Device> d = devices(&why);
  if (d.empty()) throw std::runtime_error("lplab::cuda: no CUDA device: " + why);
  return d.front();
}

}  // namespace lplab::cuda
