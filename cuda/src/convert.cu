// Conversions on the device (lplab/cuda.h): each thread converts four
// consecutive elements (one 16-byte load of floats, one packed store), a
// grid-stride loop over the groups, the last n % 4 elements one by one.
// Element i is lplab::convert<T>(in[i], round, overflow, nullptr,
// stochastic_bits(seed, first_index + i)) -- the CPU's rule -- computed by the
// hardware's cvt where PTX has one for the policy (common.cuh), NaN inputs
// excepted, and by the portable core otherwise.
#include <cuda_fp16.h>

#include <type_traits>

#include "common.cuh"
#include "lplab/kernels/plans.h"
#include "lplab/kernels/random.h"

namespace lplab::cuda {
namespace {

template <class T>
struct alignas(4 * sizeof(T)) Pack4 {
  T v[4];
};

// Kernels take formats by catalog index (nvcc's host stubs cannot spell a
// format type, whose descriptor is a class-type template argument) and
// codes by untyped pointer; F::In and F::Out are the element types.

// The portable core: any format, any policy. R and O fix the rounding and
// overflow policy at compile time (the common ones: nearest-even and
// stochastic, each with both overflow policies), so that the conversion's
// policy branches fold away; -1 reads them at run time.
template <std::size_t I, int R = -1, int O = -1>
struct Encode {
  using T = catalog_format<I>;
  using In = float;
  using Out = T;
  Round round;
  Overflow overflow;
  std::uint64_t seed, first;
  __device__ T one(float x, std::size_t i) const {
    const Round r = R < 0 ? round : static_cast<Round>(R);
    const Overflow o = O < 0 ? overflow : static_cast<Overflow>(O);
    const std::uint32_t bits = r == Round::stochastic ? kernels::stochastic_bits(seed, first + i) : 0;
    return lplab::convert<T>(x, r, o, nullptr, bits);
  }
  __device__ void four(const float* x, T* y, std::size_t i) const {
    for (int j = 0; j < 4; ++j) y[j] = one(x[j], i + j);
  }
};

// Decoding is exact. bfloat16 and float16 codes other than NaNs decode by
// the hardware (a shift; cvt.f32.f16); one-byte formats through a table
// of their 256 values in shared memory (decode8_kernel below).
template <std::size_t I>
struct Decode {
  using T = catalog_format<I>;
  using In = T;
  using Out = float;
  __device__ float one(T x, std::size_t) const {
    if constexpr (std::is_same_v<T, bfloat16>) {
      if ((x.bits() & 0x7FFF) <= 0x7F80) return __uint_as_float(static_cast<unsigned>(x.bits()) << 16);
    } else if constexpr (std::is_same_v<T, float16>) {
      if ((x.bits() & 0x7FFF) <= 0x7C00) return __half2float(__ushort_as_half(x.bits()));
    }
    return lplab::convert<float>(x);
  }
  __device__ void four(const T* x, float* y, std::size_t i) const {
    for (int j = 0; j < 4; ++j) y[j] = one(x[j], i + j);
  }
};

// A hardware pair conversion (nearest-even; the policy the instruction
// implements), NaN inputs through the portable core: PTX leaves a NaN's
// code to the implementation, lplab keeps the payload's top bits.
template <std::size_t I, class Pair>
struct Hardware {
  using T = catalog_format<I>;
  using In = float;
  using Out = T;
  Pair pair;  // (hi, lo) -> packed codes, lo in the low half
  Overflow overflow;
  __device__ T one(float x, std::size_t) const {
    return lplab::convert<T>(x, Round::nearest_even, overflow);
  }
  __device__ void four(const float* x, T* y, std::size_t i) const {
    using S = typename T::storage_type;
    constexpr int kBits = 8 * sizeof(S);
    for (int j = 0; j < 4; j += 2) {
      const auto packed = pair(x[j + 1], x[j]);
      y[j] = T::from_bits(static_cast<S>(packed));
      y[j + 1] = T::from_bits(static_cast<S>(packed >> kBits));
    }
    for (int j = 0; j < 4; ++j)
      if (x[j] != x[j]) y[j] = one(x[j], i + j);
  }
};

struct Bf16Pair {
  __device__ std::uint32_t operator()(float hi, float lo) const { return detail::cvt_bf16x2(hi, lo); }
};
struct F16Pair {
  __device__ std::uint32_t operator()(float hi, float lo) const { return detail::cvt_f16x2(hi, lo); }
};
// The FP8 pairs exist from sm_89 on; hardware_conversion() selects them only
// on such a device, so on older targets their body is never reached.
struct E4m3Pair {
  __device__ std::uint16_t operator()(float hi, float lo) const {
#if defined(LPLAB_CUDA_HAVE_CVT_FP8)
    return detail::cvt_e4m3x2(hi, lo);
#else
    __trap();
    return 0;
#endif
  }
};
struct E5m2Pair {
  __device__ std::uint16_t operator()(float hi, float lo) const {
#if defined(LPLAB_CUDA_HAVE_CVT_FP8)
    return detail::cvt_e5m2x2(hi, lo);
#else
    __trap();
    return 0;
#endif
  }
};

template <class F>
__global__ void convert_kernel(const void* in_codes, void* out_codes, std::size_t n, F f, bool vector) {
  using In = typename F::In;
  using Out = typename F::Out;
  const auto* in = static_cast<const In*>(in_codes);
  auto* out = static_cast<Out*>(out_codes);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t groups = vector ? n / 4 : 0;
  for (std::size_t g = tid; g < groups; g += stride) {
    const Pack4<In> x = reinterpret_cast<const Pack4<In>*>(in)[g];
    Pack4<Out> y;
    f.four(x.v, y.v, 4 * g);
    reinterpret_cast<Pack4<Out>*>(out)[g] = y;
  }
  for (std::size_t i = 4 * groups + tid; i < n; i += stride) out[i] = f.one(in[i], i);
}

// One-byte formats: 256 values in shared memory, four codes a thread.
template <std::size_t I>
__global__ void decode8_kernel(const void* in_codes, float* out, std::size_t n, bool vector) {
  using T = catalog_format<I>;
  __shared__ float table[256];
  for (unsigned c = threadIdx.x; c < 256; c += blockDim.x)
    table[c] = lplab::convert<float>(T::from_bits(static_cast<typename T::storage_type>(c)));
  __syncthreads();
  const auto* in = static_cast<const std::uint8_t*>(in_codes);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t groups = vector ? n / 4 : 0;
  for (std::size_t g = tid; g < groups; g += stride) {
    const std::uint32_t c = reinterpret_cast<const std::uint32_t*>(in)[g];
    reinterpret_cast<float4*>(out)[g] =
        make_float4(table[c & 0xFF], table[(c >> 8) & 0xFF], table[(c >> 16) & 0xFF], table[c >> 24]);
  }
  for (std::size_t i = 4 * groups + tid; i < n; i += stride) out[i] = table[in[i]];
}

template <class F>
void launch(const void* in, void* out, std::size_t n, const F& f) {
  using In = typename F::In;
  using Out = typename F::Out;
  if (n == 0) return;
  const bool vector = reinterpret_cast<std::uintptr_t>(in) % alignof(Pack4<In>) == 0 &&
                      reinterpret_cast<std::uintptr_t>(out) % alignof(Pack4<Out>) == 0;
  convert_kernel<<<detail::blocks_for((n + 3) / 4), detail::kThreads>>>(in, out, n, f, vector);
  detail::check_kernel("convert");
}

void check_call(std::size_t in, std::size_t out, const kernels::ConvertOptions& o) {
  kernels::plan_convert(in, out);
  if (o.stats != nullptr) detail::fail("convert: flags are counted on the CPU only (options.stats)");
  if (o.round == Round::stochastic && o.first_index > ~std::uint64_t{0} - in)
    detail::fail("convert: first_index + n overflows the stochastic index");
  detail::require();
}

bool fp8_cvt() {
  static const bool has = [] {
    const Device d = require_device();
    return d.major * 10 + d.minor >= 89;
  }();
  return has;
}

}  // namespace

template <class To>
bool hardware_conversion(const kernels::ConvertOptions& o) {
  if (o.round != Round::nearest_even) return false;
  if constexpr (std::is_same_v<To, bfloat16> || std::is_same_v<To, float16>) return o.overflow == Overflow::ieee;
  if constexpr (std::is_same_v<To, float8_e4m3fn> || std::is_same_v<To, float8_e5m2>)
    return o.overflow == Overflow::saturate && fp8_cvt();
  return false;
}

template <class To>
void convert(DeviceSpan<const float> in, DeviceSpan<To> out, const kernels::ConvertOptions& o) {
  check_call(in.size, out.size, o);
  const std::size_t n = in.size;
  if (hardware_conversion<To>(o)) {
    if constexpr (std::is_same_v<To, bfloat16>) return launch(in.data, out.data, n, Hardware<catalog_index<To>(), Bf16Pair>{{}, o.overflow});
    if constexpr (std::is_same_v<To, float16>) return launch(in.data, out.data, n, Hardware<catalog_index<To>(), F16Pair>{{}, o.overflow});
    if constexpr (std::is_same_v<To, float8_e4m3fn>)
      return launch(in.data, out.data, n, Hardware<catalog_index<To>(), E4m3Pair>{{}, o.overflow});
    if constexpr (std::is_same_v<To, float8_e5m2>)
      return launch(in.data, out.data, n, Hardware<catalog_index<To>(), E5m2Pair>{{}, o.overflow});
  }
  constexpr std::size_t I = catalog_index<To>();
  const Encode<I> e{o.round, o.overflow, o.seed, o.first_index};
  constexpr int rne = static_cast<int>(Round::nearest_even), sr = static_cast<int>(Round::stochastic);
  constexpr int ieee = static_cast<int>(Overflow::ieee), sat = static_cast<int>(Overflow::saturate);
  const bool ie = o.overflow == Overflow::ieee, sa = o.overflow == Overflow::saturate;
  if (o.round == Round::nearest_even && ie) return launch(in.data, out.data, n, Encode<I, rne, ieee>{o.round, o.overflow, o.seed, o.first_index});
  if (o.round == Round::nearest_even && sa) return launch(in.data, out.data, n, Encode<I, rne, sat>{o.round, o.overflow, o.seed, o.first_index});
  if (o.round == Round::stochastic && ie) return launch(in.data, out.data, n, Encode<I, sr, ieee>{o.round, o.overflow, o.seed, o.first_index});
  if (o.round == Round::stochastic && sa) return launch(in.data, out.data, n, Encode<I, sr, sat>{o.round, o.overflow, o.seed, o.first_index});
  launch(in.data, out.data, n, e);
}

template <class From>
void convert(DeviceSpan<const From> in, DeviceSpan<float> out, const kernels::ConvertOptions& o) {
  check_call(in.size, out.size, o);
  constexpr std::size_t I = catalog_index<From>();
  if constexpr (sizeof(From) == 1) {
    if (in.size == 0) return;
    const bool vector = reinterpret_cast<std::uintptr_t>(in.data) % 4 == 0 &&
                        reinterpret_cast<std::uintptr_t>(out.data) % 16 == 0;
    decode8_kernel<I><<<detail::blocks_for((in.size + 3) / 4), detail::kThreads>>>(in.data, out.data, in.size, vector);
    detail::check_kernel("convert");
  } else {
    launch(in.data, out.data, in.size, Decode<I>{});
  }
}

template <class To>
void convert(std::span<const float> in, std::span<To> out, const kernels::ConvertOptions& o) {
  check_call(in.size(), out.size(), o);
  if (in.empty()) return;
  const Buffer<float> din(in);
  const Buffer<To> dout(out.size());
  convert(DeviceSpan<const float>(din.span()), dout.span(), o);
  dout.download(out);
}

template <class From>
void convert(std::span<const From> in, std::span<float> out, const kernels::ConvertOptions& o) {
  check_call(in.size(), out.size(), o);
  if (in.empty()) return;
  const Buffer<From> din(in);
  const Buffer<float> dout(out.size());
  convert(DeviceSpan<const From>(din.span()), dout.span(), o);
  dout.download(out);
}

#define LPLAB_CUDA_INSTANTIATE(type, names, description)                                                     \
  template bool hardware_conversion<type>(const kernels::ConvertOptions&);                                  \
  template void convert<type>(DeviceSpan<const float>, DeviceSpan<type>, const kernels::ConvertOptions&);   \
  template void convert<type>(DeviceSpan<const type>, DeviceSpan<float>, const kernels::ConvertOptions&);   \
  template void convert<type>(std::span<const float>, std::span<type>, const kernels::ConvertOptions&);     \
  template void convert<type>(std::span<const type>, std::span<float>, const kernels::ConvertOptions&);
LPLAB_FLOAT_FORMAT_CATALOG(LPLAB_CUDA_INSTANTIATE)  // (the integers: the CPU kernels)
#undef LPLAB_CUDA_INSTANTIATE

}  // namespace lplab::cuda
