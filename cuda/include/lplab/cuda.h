// The CUDA backend: lplab's kernels on a CUDA device, built from the same
// portable core (LPLAB_HD headers) as the CPU kernels, computing what
// lplab::kernels computes on the CPU, bit for bit (tests/cuda/backend_test.cu
// runs one test body on both backends).
//
//   for (const lplab::cuda::Device& d : lplab::cuda::devices()) ...
//   // Host arrays: copied to device 0 and back.
//   lplab::cuda::convert(std::span<const float>(x), std::span<lplab::float8_e4m3fn>(codes), options);
//   // Device memory held by a Buffer (or the caller's own, through a DeviceSpan).
//   lplab::cuda::Buffer<float> dx(x);                   // allocated and uploaded
//   lplab::cuda::Buffer<lplab::bfloat16> dy(x.size());
//   lplab::cuda::convert(dx.span(), dy.span());         // stays on the device
//   std::vector<lplab::bfloat16> y = dy.to_host();
//
// What runs on the device (each as its CPU counterpart defines it):
//   convert      float -> every catalog format (every rounding, both overflow
//                policies, stochastic bits by index) and back. Where PTX has a
//                conversion instruction for the policy, the hardware converts:
//                cvt.rn.bf16x2.f32, cvt.rn.f16x2.f32 (nearest-even, IEEE
//                overflow), cvt.rn.satfinite.e4m3x2.f32 and .e5m2x2.f32
//                (nearest-even, saturate; sm_89+), NaN inputs through the
//                portable core; the portable core elsewhere.
//   quantize / dequantize   every BlockScaling scheme (MXFP8/6/4, NVFP4, TE's
//                NVFP4, any element x scale pair and block size), and
//                per-tensor scaling (TensorScaling: current or history amax).
//   map_unary / map_binary  the elementwise ops on strided views, per_op,
//                fused and fp64 compute. relu, square, sqrt, rsqrt, scale,
//                identity, add, mul and axpy are correctly rounded on both
//                backends and so bit-identical; gelu_tanh, gelu_erf and pow
//                call CUDA's tanh/erf/pow, which differ from the CPU's
//                (Highway's tanh, glibc's erff/powf) in the last bits. The
//                codes of NaN results may differ: CUDA's arithmetic returns
//                the canonical NaN, x86's the input's payload.
//   matmul       the emulated accumulators: the tensor-core models, the
//                fp16/bf16 chains and every matrix-unit instruction preset
//                (non-block-scaled), each output's chain on one thread; the
//                sums are rounded into C by the CPU's code. Accumulator::fp32
//                (Eigen's summation order), fp64 and bf16_dot2 stay on the CPU.
//   cublas_matmul            cuBLASLt's fp32, bf16, fp16 and fp8 GEMM: the
//                native baseline (its own summation order and units).
//
// Errors, before anything is written: std::invalid_argument for bad
// arguments, thrown by the CPU kernels' own checks (check_matmul,
// check_map_unary, the plans of lplab/kernels/plans.h) and so in their words,
// and "lplab::cuda::<what>" for what only the device refuses;
// std::runtime_error "lplab::cuda: <what>: <CUDA's reason>" where there is no
// CUDA device (no GPU, no driver) or a CUDA call fails. Calls are
// synchronous, on device 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "lplab/formats.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/scaling.h"

namespace lplab::cuda {

struct Device {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
};

// The CUDA devices this process can use. Empty where there are none, with
// the CUDA runtime's reason in *why when given.
std::vector<Device> devices(std::string* why = nullptr);
// Device 0, or std::runtime_error "lplab::cuda: no CUDA device: <reason>".
Device require_device();

namespace detail {
void* allocate(std::size_t bytes);  // device 0; std::runtime_error on failure
void release(void* p) noexcept;
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);
}  // namespace detail

// n elements of T in device memory, by pointer: memory the caller holds
// (cudaMalloc'd), or a Buffer's.
template <class T>
struct DeviceSpan {
  T* data = nullptr;
  std::size_t size = 0;
  template <class U = T>
    requires(!std::is_const_v<U>)
  operator DeviceSpan<const U>() const {  // NOLINT: implicit, as span<T> -> span<const T>
    return {data, size};
  }
};

// Device memory for n elements of T, freed on scope exit; move-only.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) : p_(static_cast<T*>(detail::allocate(n * sizeof(T)))), n_(n) {}
  explicit Buffer(std::span<const T> host) : Buffer(host.size()) { upload(host); }
  explicit Buffer(const std::vector<T>& host) : Buffer(std::span<const T>(host)) {}
  Buffer(Buffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) detail::release(p_), p_ = o.p_, n_ = o.n_, o.p_ = nullptr, o.n_ = 0;
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { detail::release(p_); }

  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  DeviceSpan<T> span() const { return {p_, n_}; }
  // Host <-> device, whole buffer; std::invalid_argument for another length.
  void upload(std::span<const T> host) {
    check(host.size());
    detail::copy_to_device(p_, host.data(), host.size_bytes());
  }
  void download(std::span<T> host) const {
    check(host.size());
    detail::copy_to_host(host.data(), p_, host.size_bytes());
  }
  std::vector<T> to_host() const {
    std::vector<T> out(n_);
    download(std::span<T>(out));
    return out;
  }

 private:
  void check(std::size_t n) const;
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

[[noreturn]] void throw_length(const char* what, std::size_t expected, std::size_t given);
template <class T>
void Buffer<T>::check(std::size_t n) const {
  if (n != n_) throw_length("Buffer: the host span", n_, n);
}

// ---------------------------------------------------------------------------
// Conversion (kernels::convert's contract; options.stats is refused: flags
// are counted on the CPU; options.threads does not apply).
template <class To>
void convert(DeviceSpan<const float> in, DeviceSpan<To> out, const kernels::ConvertOptions& options = {});
template <class From>
void convert(DeviceSpan<const From> in, DeviceSpan<float> out, const kernels::ConvertOptions& options = {});
template <class To>
void convert(std::span<const float> in, std::span<To> out, const kernels::ConvertOptions& options = {});
template <class From>
void convert(std::span<const From> in, std::span<float> out, const kernels::ConvertOptions& options = {});

// Whether `convert` into To under `options` runs on a hardware cvt
// instruction of device 0 (the rest on the portable core).
template <class To>
bool hardware_conversion(const kernels::ConvertOptions& options);

// ---------------------------------------------------------------------------
// Block scaling (kernels::quantize / dequantize's contract, scaling.h).
template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void quantize(const kernels::BlockScaling<Elem, Scale>& s, DeviceSpan<const float> x, DeviceSpan<Elem> elems,
              DeviceSpan<Scale> scales, float* tensor_scale = nullptr);
template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void dequantize(const kernels::BlockScaling<Elem, Scale>& s, DeviceSpan<const Elem> elems,
                DeviceSpan<const Scale> scales, DeviceSpan<float> y, float tensor_scale = 1.0f);
template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void quantize(const kernels::BlockScaling<Elem, Scale>& s, std::span<const float> x,
              std::span<std::type_identity_t<Elem>> elems, std::span<std::type_identity_t<Scale>> scales,
              float* tensor_scale = nullptr);
template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void dequantize(const kernels::BlockScaling<Elem, Scale>& s, std::span<const std::type_identity_t<Elem>> elems,
                std::span<const std::type_identity_t<Scale>> scales, std::span<float> y,
                float tensor_scale = 1.0f);

// Per-tensor scaling (kernels::quantize / dequantize for TensorScaling: the
// amax on the device, the scale by the CPU's rule, the elements on the
// device); history (delayed scaling's amax history) stays on the host.
template <kernels::BlockElement Elem>
kernels::TensorScaleResult quantize(const kernels::TensorScaling<Elem>& s, DeviceSpan<const float> x,
                                    DeviceSpan<Elem> out, std::span<const float> history = {});
template <kernels::BlockElement Elem>
void dequantize(const kernels::TensorScaling<Elem>& s, DeviceSpan<const Elem> elems, float scale,
                DeviceSpan<float> y);
template <kernels::BlockElement Elem>
kernels::TensorScaleResult quantize(const kernels::TensorScaling<Elem>& s, std::span<const float> x,
                                    std::span<std::type_identity_t<Elem>> out, std::span<const float> history = {});
template <kernels::BlockElement Elem>
void dequantize(const kernels::TensorScaling<Elem>& s, std::span<const std::type_identity_t<Elem>> elems,
                float scale, std::span<float> y);

// ---------------------------------------------------------------------------
// Elementwise ops on strided views (kernels::map / add / mul / axpy's
// contract). Memory::host: the storage each view spans is copied to the
// device and the output's back, elements outside the output view untouched;
// Memory::device: the views' pointers are device memory, used in place.
enum class Memory { host, device };
void map_unary(std::span<const kernels::Step> chain, const kernels::Operand& x,
               const kernels::Output& y, const kernels::ElementwiseOptions& options = {},
               Memory memory = Memory::host);
void map_binary(kernels::Binary op, float alpha, const kernels::Operand& a,
                const kernels::Operand& b, const kernels::Output& y,
                const kernels::ElementwiseOptions& options = {}, Memory memory = Memory::host);
template <class X, class Y>
void map(std::span<const kernels::Step> chain, const kernels::View<X>& x, const kernels::View<Y>& y,
         const kernels::ElementwiseOptions& options = {}) {
  cuda::map_unary(chain, kernels::operand(x), kernels::output(y), options);
}
template <class A, class B, class Y>
void binary(kernels::Binary op, float alpha, const kernels::View<A>& a, const kernels::View<B>& b,
            const kernels::View<Y>& y, const kernels::ElementwiseOptions& options = {}) {
  cuda::map_binary(op, alpha, kernels::operand(a), kernels::operand(b),
                   kernels::output(y), options);
}

// ---------------------------------------------------------------------------
// Matmul with an emulated accumulator (kernels::matmul's contract).
namespace detail {
// The accumulated sums of p on the device (kernels::matmul_accumulate's).
void matmul_sums(const kernels::MatmulProblem& p, const kernels::MatmulOptions& options, double* sums);
}  // namespace detail

template <class TC>
void matmul(const kernels::MatmulProblem& p, TC* c, const kernels::MatmulOptions& options = {}) {
  kernels::check_matmul(p.m, p.n, p.k, p.a, p.b, c, options, p.ra, p.rb, kernels::output_precision<TC>());
  if (p.m == 0 || p.n == 0) return;
  std::vector<double> sums(p.m * p.n);
  detail::matmul_sums(p, options, sums.data());
  const double scale = static_cast<double>(options.scale_a) * static_cast<double>(options.scale_b);
  kernels::round_sums(sums.data(), c, p.m * p.n, scale, options);
}
template <class TA, class TB, class TC>
void matmul(std::size_t m, std::size_t n, std::size_t k, const TA* a, const TB* b, TC* c,
            const kernels::MatmulOptions& options = {}) {
  kernels::check_matmul(m, n, k, a, b, c, options, kernels::operand_range<TA>(),
                                kernels::operand_range<TB>(), kernels::output_precision<TC>());
  if (m == 0 || n == 0) return;
  const std::vector<float> fa = kernels::decode_operand(a, m * k);
  const std::vector<float> fb = kernels::decode_operand(b, k * n);
  cuda::matmul(kernels::MatmulProblem{m, n, k, fa.data(), fb.data(), kernels::operand_range<TA>(),
                                kernels::operand_range<TB>()},
         c, options);
}

// cuBLASLt's GEMM, the native baseline, on device memory: row-major
// C[m x n] = A[m x k] * B[k x n] with B given transposed (b_t: n rows of k,
// K-major, the layout cuBLASLt's FP8 GEMM requires), fp32 compute, C =
// alpha * A B. Types: (float, float, float), (bfloat16 | float16, same,
// float | same), (float8_e4m3fn | float8_e5m2, float8_e4m3fn | float8_e5m2
// (not both e5m2), float | bfloat16). FP8 needs k, and every dimension's
// leading size, a multiple of 16.
template <class TA, class TB, class TC>
void cublas_matmul(std::size_t m, std::size_t n, std::size_t k, DeviceSpan<const TA> a, DeviceSpan<const TB> b_t,
                   DeviceSpan<TC> c, float alpha = 1.0f);

}  // namespace lplab::cuda
