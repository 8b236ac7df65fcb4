// Elementwise ops on the device (lplab/cuda.h): one thread per output
// element, in row-major index i, over strided views. Each element runs what
// the CPU engine (kernels/src/elementwise.cpp) runs for it: the operands
// decoded exactly, the steps through kernels::apply_step / apply_binary (the
// ops:: functors) in float -- or in double for Compute::fp64 -- rounded into
// the output format after every step but the last for Compute::per_op, and
// rounded with the caller's policy at the end; the rounding after step s
// draws stochastic_bits(seed + s, i).
#include <cuda_fp16.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common.cuh"
#include "lplab/kernels/format_id.h"
#include "lplab/kernels/random.h"

namespace lplab::cuda {
namespace {

using kernels::FormatId;

// A view's shape and strides, by value for a kernel.
struct Strides {
  bool contiguous = false;  // row-major without gaps: element i at offset i
  int rank = 0;
  std::size_t shape[kernels::kMaxRank] = {};
  std::ptrdiff_t stride[kernels::kMaxRank] = {};
};

Strides strides_of(const kernels::Layout& l) {
  Strides s;
  s.contiguous = l.is_contiguous();
  s.rank = static_cast<int>(l.rank());
  for (int d = 0; d < s.rank; ++d) s.shape[d] = l.size(d), s.stride[d] = l.stride(d);
  return s;
}

// Elements from the view's origin to one past its farthest element.
std::size_t extent(const kernels::Layout& l) {
  if (l.numel() == 0) return 0;
  std::size_t e = 1;
  for (std::size_t d = 0; d < l.rank(); ++d) e += (l.size(d) - 1) * static_cast<std::size_t>(l.stride(d));
  return e;
}

__device__ std::ptrdiff_t offset_of(const Strides& s, std::size_t i) {
  if (s.contiguous) return static_cast<std::ptrdiff_t>(i);
  std::ptrdiff_t o = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    o += static_cast<std::ptrdiff_t>(i % s.shape[d]) * s.stride[d];
    i /= s.shape[d];
  }
  return o;
}

// f(T{}) with T the C++ type of a format id (float for float32): the
// device's counterpart of kernels' visit_format.
template <class F>
__device__ auto with_format(FormatId id, F&& f) {
  switch (id) {
#define LPLAB_CUDA_VISIT(type, names, description)                          \
  case FormatId::type:                                                        \
    if constexpr (std::is_same_v<lplab::type, lplab::float32>) return f(0.0f); \
    else return f(lplab::type{});
    LPLAB_FLOAT_FORMAT_CATALOG(LPLAB_CUDA_VISIT)
#undef LPLAB_CUDA_VISIT
    default: break;
  }
  return f(0.0f);
}

// (The general path's helpers are compiled once, not inlined into each
// kernel: each holds a switch over every catalog format.)
__device__ __noinline__ float load(FormatId f, const void* p, std::ptrdiff_t off) {
  return with_format(f, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float>) return static_cast<const float*>(p)[off];
    else return lplab::convert<float>(static_cast<const T*>(p)[off]);  // exact
  });
}

// v rounded into format f (the hardware's cvt for float into bf16 or fp16
// to nearest-even with IEEE overflow, as the conversions use it).
template <class R>
__device__ __noinline__ void store(FormatId f, void* p, std::ptrdiff_t off, R v, Round r, Overflow o,
                                   std::uint32_t bits) {
  if constexpr (std::is_same_v<R, float>) {
    if (r == Round::nearest_even && o == Overflow::ieee && v == v) {
      if (f == FormatId::bfloat16) {
        static_cast<std::uint16_t*>(p)[off] = static_cast<std::uint16_t>(detail::cvt_bf16x2(0.0f, v));
        return;
      }
      if (f == FormatId::float16) {
        static_cast<std::uint16_t*>(p)[off] = static_cast<std::uint16_t>(detail::cvt_f16x2(0.0f, v));
        return;
      }
    }
  }
  with_format(f, [&](auto t) {
    using T = decltype(t);
    static_cast<T*>(p)[off] = lplab::convert<T>(v, r, o, nullptr, bits);
    return 0;
  });
}

// v rounded into format f and back (between the steps of Compute::per_op);
// float -> float under IEEE overflow changes nothing, and is skipped as on
// the CPU.
__device__ __noinline__ float round_through(FormatId f, float v, Round r, Overflow o, std::uint32_t bits) {
  if (f == FormatId::float32 && o == Overflow::ieee) return v;
  return with_format(f, [&](auto t) {
    using T = decltype(t);
    return static_cast<float>(lplab::convert<float>(lplab::convert<T>(v, r, o, nullptr, bits)));
  });
}

struct Policy {
  kernels::Compute compute;
  Round round;
  Overflow overflow;
  std::uint64_t seed;
  __device__ std::uint32_t bits(std::size_t step, std::size_t i) const {
    return round == Round::stochastic ? kernels::stochastic_bits(seed + step, i) : 0;
  }
};

// One step: the ops whose vector form is exact (no math-library call) inline,
// the others (tanh, erf, pow) through one compiled copy -- both
// kernels::apply_step.
template <class R>
__device__ __noinline__ R apply_libm(kernels::Unary op, float param, R x) {
  return kernels::apply_step(op, param, x);
}
template <class R>
__device__ __forceinline__ R apply(const kernels::Step& s, R x) {
  return kernels::vector_form(s.op) == kernels::VectorForm::exact ? kernels::apply_step(s.op, s.param, x)
                                                                    : apply_libm(s.op, s.param, x);
}

// The chain in device memory (steps[0..count)).
struct Chain {
  const kernels::Step* step = nullptr;
  int count = 0;
};

__global__ void unary_kernel(Chain chain, FormatId fx, const void* x, Strides sx, FormatId fy, void* y,
                             Strides sy, std::size_t n, Policy p) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t last = chain.count == 0 ? 0 : static_cast<std::size_t>(chain.count - 1);
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = load(fx, x, offset_of(sx, i));
    const std::ptrdiff_t out = offset_of(sy, i);
    if (p.compute == kernels::Compute::fp64) {
      double d = v;
      for (int s = 0; s < chain.count; ++s) d = apply(chain.step[s], d);
      store(fy, y, out, d, p.round, p.overflow, p.bits(last, i));
      continue;
    }
    float f = v;
    for (int s = 0; s < chain.count; ++s) {
      f = apply(chain.step[s], f);
      if (p.compute == kernels::Compute::per_op && s + 1 < chain.count)
        f = round_through(fy, f, p.round, p.overflow, p.bits(static_cast<std::size_t>(s), i));
    }
    store(fy, y, out, f, p.round, p.overflow, p.bits(last, i));
  }
}

__global__ void binary_kernel(kernels::Binary op, float alpha, FormatId fa, const void* a, Strides sa, FormatId fb,
                              const void* b, Strides sb, FormatId fy, void* y, Strides sy, std::size_t n,
                              Policy p) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float va = load(fa, a, offset_of(sa, i)), vb = load(fb, b, offset_of(sb, i));
    const std::ptrdiff_t out = offset_of(sy, i);
    if (p.compute == kernels::Compute::fp64)
      store(fy, y, out, kernels::apply_binary<double>(op, alpha, va, vb), p.round, p.overflow, p.bits(0, i));
    else
      store(fy, y, out, kernels::apply_binary<float>(op, alpha, va, vb), p.round, p.overflow, p.bits(0, i));
  }
}

// ---------------------------------------------------------------------------
// The fast path: float32, bfloat16 and float16 operands and output (unary
// ops: E4M3 and E5M2 too), rounding to nearest-even, fp32 compute. Each
// format is one of five kinds, a launch's kinds are kernel arguments (a
// uniform branch per element, no catalog-wide switch); codes other than NaNs decode by the
// hardware (a shift, cvt.f32.f16) and floats other than NaNs encode by cvt
// under IEEE overflow -- the results the portable core gives (cvt_test).

enum Kind : int { kF32, kBf16, kF16, kE4m3, kE5m2 };
template <int K>
using Fp8Of = std::conditional_t<K == kE4m3, float8_e4m3fn, float8_e5m2>;

template <int K>
__device__ float load_k(const void* p, std::ptrdiff_t off) {
  if constexpr (K == kF32) {
    return static_cast<const float*>(p)[off];
  } else if constexpr (K == kE4m3 || K == kE5m2) {
    return lplab::convert<float>(Fp8Of<K>::from_bits(static_cast<const std::uint8_t*>(p)[off]));
  } else {
    const std::uint16_t c = static_cast<const std::uint16_t*>(p)[off];
    if constexpr (K == kBf16)
      return (c & 0x7FFF) <= 0x7F80 ? __uint_as_float(static_cast<unsigned>(c) << 16)
                                    : lplab::convert<float>(bfloat16::from_bits(c));
    else
      return (c & 0x7FFF) <= 0x7C00 ? __half2float(__ushort_as_half(c)) : lplab::convert<float>(float16::from_bits(c));
  }
}

template <int K>
__device__ std::uint32_t encode_k(float v, Overflow o) {
  if constexpr (K == kF32) {
    return __float_as_uint(o == Overflow::ieee ? v : lplab::convert<float>(v, Round::nearest_even, o));
  } else if constexpr (K == kE4m3 || K == kE5m2) {
    return lplab::convert<Fp8Of<K>>(v, Round::nearest_even, o).bits();
  } else if constexpr (K == kBf16) {
    return v == v && o == Overflow::ieee ? detail::cvt_bf16x2(0.0f, v) & 0xFFFF
                                         : lplab::convert<bfloat16>(v, Round::nearest_even, o).bits();
  } else {
    return v == v && o == Overflow::ieee ? detail::cvt_f16x2(0.0f, v) & 0xFFFF
                                         : lplab::convert<float16>(v, Round::nearest_even, o).bits();
  }
}

template <int K>
__device__ void store_k(void* p, std::ptrdiff_t off, float v, Overflow o) {
  if constexpr (K == kF32) static_cast<std::uint32_t*>(p)[off] = encode_k<K>(v, o);
  else if constexpr (K == kE4m3 || K == kE5m2) static_cast<std::uint8_t*>(p)[off] = static_cast<std::uint8_t>(encode_k<K>(v, o));
  else static_cast<std::uint16_t*>(p)[off] = static_cast<std::uint16_t>(encode_k<K>(v, o));
}

// Compute::per_op's rounding between steps (float under IEEE overflow: none).
template <int K>
__device__ float round_k(float v, Overflow o) {
  if constexpr (K == kF32) {
    return o == Overflow::ieee ? v : lplab::convert<float>(v, Round::nearest_even, o);
  } else if constexpr (K == kE4m3 || K == kE5m2) {
    const auto c = static_cast<std::uint8_t>(encode_k<K>(v, o));
    return load_k<K>(&c, 0);
  } else {
    const std::uint16_t c = static_cast<std::uint16_t>(encode_k<K>(v, o));
    return load_k<K>(&c, 0);
  }
}

// A kind known at run time: the same for every thread of a launch, so the
// switch below is a uniform branch, not a divergence. Two kernels serve the
// 25 unary and 27 binary pairs of kinds (one instantiation per pair took
// about 30 s of nvcc per architecture).
template <class F>
__device__ __forceinline__ auto by_kind(int k, F&& f) {
  switch (k) {
    case kF32: return f(std::integral_constant<int, kF32>{});
    case kBf16: return f(std::integral_constant<int, kBf16>{});
    case kF16: return f(std::integral_constant<int, kF16>{});
    case kE4m3: return f(std::integral_constant<int, kE4m3>{});
    default: return f(std::integral_constant<int, kE5m2>{});
  }
}
__device__ __forceinline__ float load_kind(int k, const void* p, std::ptrdiff_t off) {
  return by_kind(k, [&](auto c) { return load_k<decltype(c)::value>(p, off); });
}
__device__ __forceinline__ void store_kind(int k, void* p, std::ptrdiff_t off, float v, Overflow o) {
  by_kind(k, [&](auto c) {
    store_k<decltype(c)::value>(p, off, v, o);
    return 0;
  });
}
__device__ __forceinline__ float round_kind(int k, float v, Overflow o) {
  return by_kind(k, [&](auto c) { return round_k<decltype(c)::value>(v, o); });
}

__global__ void unary_fast_kernel(Chain chain, int xk, const void* x, Strides sx, int yk, void* y, Strides sy,
                                  std::size_t n, bool per_op, Overflow o) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    float f = load_kind(xk, x, offset_of(sx, i));
    for (int s = 0; s < chain.count; ++s) {
      f = apply(chain.step[s], f);
      if (per_op && s + 1 < chain.count) f = round_kind(yk, f, o);
    }
    store_kind(yk, y, offset_of(sy, i), f, o);
  }
}

__global__ void binary_fast_kernel(kernels::Binary op, float alpha, int ak, const void* a, Strides sa, int bk,
                                   const void* b, Strides sb, int yk, void* y, Strides sy, std::size_t n,
                                   Overflow o) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    store_kind(yk, y, offset_of(sy, i),
               kernels::apply_binary<float>(op, alpha, load_kind(ak, a, offset_of(sa, i)),
                                                    load_kind(bk, b, offset_of(sb, i))),
               o);
}

// The kind of a format id: unary ops take all five kinds, binary ops the
// first three (-1: the general path).
int kind_of(FormatId f, bool binary) {
  switch (f) {
    case FormatId::float32: return kF32;
    case FormatId::bfloat16: return kBf16;
    case FormatId::float16: return kF16;
    case FormatId::float8_e4m3fn: return binary ? -1 : kE4m3;
    case FormatId::float8_e5m2: return binary ? -1 : kE5m2;
    default: return -1;
  }
}

bool fast_path(const kernels::ElementwiseOptions& o, std::initializer_list<FormatId> formats, bool binary) {
  if (o.round != Round::nearest_even || o.compute == kernels::Compute::fp64) return false;
  for (FormatId f : formats)
    if (kind_of(f, binary) < 0) return false;
  return true;
}

// The bytes a view spans, on the device (the output's too, so that the
// elements between its strides come back unchanged).
class Staged {
 public:
  Staged(FormatId f, const void* data, const kernels::Layout& l, Memory m)
      : bytes_(extent(l) * kernels::element_bytes(f)), data_(const_cast<void*>(data)) {
    if (m == Memory::device) return;
    buf_ = Buffer<unsigned char>(bytes_);
    buf_.upload(std::span<const unsigned char>(static_cast<const unsigned char*>(data), bytes_));
  }
  void* data() const { return buf_.size() ? buf_.data() : data_; }
  void download() const {
    if (buf_.size()) buf_.download(std::span<unsigned char>(static_cast<unsigned char*>(data_), bytes_));
  }

 private:
  std::size_t bytes_;
  void* data_;  // the caller's
  Buffer<unsigned char> buf_;
};

Policy policy_of(const kernels::ElementwiseOptions& o) { return {o.compute, o.round, o.overflow, o.seed}; }

// The device code is compiled for the floating-point formats
// (LPLAB_FLOAT_FORMAT_CATALOG): an integer operand is refused before any
// work, by its catalog index (the integers follow the floating-point formats).
void refuse_integers(std::initializer_list<FormatId> formats) {
  for (FormatId f : formats)
    if (static_cast<std::size_t>(f) >= lplab::float_format_count && f != FormatId::none)
      throw std::invalid_argument("lplab::cuda: the CUDA backend runs the floating-point formats; an integer "
                                  "format (format id " + std::to_string(static_cast<int>(f)) +
                                  ") runs on the CPU kernels");
}

}  // namespace

void map_unary(std::span<const kernels::Step> chain, const kernels::Operand& x,
               const kernels::Output& y, const kernels::ElementwiseOptions& o, Memory m) {
  kernels::check_map_unary(chain, x, y, o);
  refuse_integers({x.format, y.format});
  detail::require();
  const std::size_t n = y.layout.numel();
  if (n == 0) return;
  Buffer<kernels::Step> steps;
  if (!chain.empty()) steps = Buffer<kernels::Step>(chain);
  const Chain c{steps.data(), static_cast<int>(chain.size())};
  const Staged dx(x.format, x.data, x.layout, m), dy(y.format, y.data, y.layout, m);
  if (fast_path(o, {x.format, y.format}, false)) {
    unary_fast_kernel<<<detail::blocks_for(n), detail::kThreads>>>(
        c, kind_of(x.format, false), dx.data(), strides_of(x.layout), kind_of(y.format, false), dy.data(),
        strides_of(y.layout), n, o.compute == kernels::Compute::per_op, o.overflow);
  } else {
    unary_kernel<<<detail::blocks_for(n), detail::kThreads>>>(c, x.format, dx.data(), strides_of(x.layout), y.format,
                                                             dy.data(), strides_of(y.layout), n, policy_of(o));
  }
  detail::check_kernel("map");
  dy.download();
}

void map_binary(kernels::Binary op, float alpha, const kernels::Operand& a,
                const kernels::Operand& b, const kernels::Output& y,
                const kernels::ElementwiseOptions& o, Memory m) {
  kernels::check_map_binary(op, alpha, a, b, y, o);
  refuse_integers({a.format, b.format, y.format});
  detail::require();
  const std::size_t n = y.layout.numel();
  if (n == 0) return;
  const Staged da(a.format, a.data, a.layout, m), db(b.format, b.data, b.layout, m), dy(y.format, y.data, y.layout, m);
  if (fast_path(o, {a.format, b.format, y.format}, true)) {
    binary_fast_kernel<<<detail::blocks_for(n), detail::kThreads>>>(
        op, alpha, kind_of(a.format, true), da.data(), strides_of(a.layout), kind_of(b.format, true), db.data(),
        strides_of(b.layout), kind_of(y.format, true), dy.data(), strides_of(y.layout), n, o.overflow);
  } else {
    binary_kernel<<<detail::blocks_for(n), detail::kThreads>>>(op, alpha, a.format, da.data(), strides_of(a.layout),
                                                              b.format, db.data(), strides_of(b.layout), y.format,
                                                              dy.data(), strides_of(y.layout), n, policy_of(o));
  }
  detail::check_kernel(kernels::binary_name(op));
  dy.download();
}

}  // namespace lplab::cuda
