// Block scaling on the device (lplab/cuda.h): the tensor's amax (for a
// tensor scale) by an unsigned maximum of |x|'s bits, then one thread per
// block: its amax, scale_rules::block_scale, and quantize_element for each
// element -- the rules the CPU's vector loops compute (scale_rules.h).
#include "common.cuh"
#include "lplab/kernels/scale_rules.h"

namespace lplab::cuda {
namespace {

namespace sr = kernels::scale_rules;

// out = max over x of |x|'s bits (an atomic maximum; *out starts at 0).
__global__ void amax_kernel(const float* x, std::size_t n, std::uint32_t* out) {
  std::uint32_t m = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    m = max(m, __float_as_uint(x[i]) & sr::kMagMask);
  for (int o = 16; o > 0; o /= 2) m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
  if (threadIdx.x % 32 == 0) atomicMax(out, m);
}

// (Formats by catalog index, codes by untyped pointer: nvcc's host stubs
// cannot spell a format type.)
template <std::size_t IE, std::size_t IS>
__global__ void quantize_kernel(kernels::ScaleRule rule, std::size_t bs, const float* x, std::size_t n,
                                void* elem_codes, void* scale_codes, std::size_t blocks, float s_enc) {
  using Elem = catalog_format<IE>;
  using Scale = catalog_format<IS>;
  auto* elems = static_cast<Elem*>(elem_codes);
  auto* scales = static_cast<Scale*>(scale_codes);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const bool te = rule == kernels::ScaleRule::amax_ratio_te;
  for (std::size_t b = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const std::size_t first = b * bs, last = min(n, first + bs);
    std::uint32_t amax = 0;
    for (std::size_t i = first; i < last; ++i) amax = max(amax, __float_as_uint(x[i]) & sr::kMagMask);
    Scale scale;
    float factor;
    sr::block_scale<Elem, Scale>(rule, amax, s_enc, scale, factor);
    scales[b] = scale;
    const bool nonfinite = sr::is_nonfinite(amax);
    for (std::size_t i = first; i < last; ++i) elems[i] = sr::quantize_element<Elem>(x[i], factor, te, nonfinite);
  }
}

// Blocks of bs elements, bs dividing 32: one element a lane, a warp's 32
// consecutive elements holding 32 / bs whole blocks; each block's amax by
// an exchange within its bs lanes, its scale computed by every lane of the
// group (the same inputs, the same result) and written by the first.
template <std::size_t IE, std::size_t IS>
__global__ void quantize_lanes_kernel(kernels::ScaleRule rule, unsigned bs, const float* x, std::size_t n,
                                      void* elem_codes, void* scale_codes, float s_enc) {
  using Elem = catalog_format<IE>;
  using Scale = catalog_format<IS>;
  auto* elems = static_cast<Elem*>(elem_codes);
  auto* scales = static_cast<Scale*>(scale_codes);
  const bool te = rule == kernels::ScaleRule::amax_ratio_te;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t padded = (n + 31) / 32 * 32;  // every lane of a warp runs every exchange
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < padded; i += stride) {
    const float v = i < n ? x[i] : 0.0f;
    std::uint32_t amax = __float_as_uint(v) & sr::kMagMask;
    for (unsigned o = bs / 2; o > 0; o /= 2) amax = max(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
    // The group's first lane computes the scale; the others take its factor.
    Scale scale{};
    float factor = 0.0f;
    const unsigned lane = threadIdx.x % 32, first = lane & ~(bs - 1);
    if (lane == first) sr::block_scale<Elem, Scale>(rule, amax, s_enc, scale, factor);
    factor = __shfl_sync(0xFFFFFFFFu, factor, static_cast<int>(first));
    if (i < n && lane == first) scales[i / bs] = scale;
    if (i < n) elems[i] = sr::quantize_element<Elem>(v, factor, te, sr::is_nonfinite(amax));
  }
}

// Per-tensor scaling: elem = convert<Elem>(x * scale, nearest_even, saturate).
template <std::size_t IE>
__global__ void scale_convert_kernel(const float* x, std::size_t n, void* elem_codes, float scale) {
  using Elem = catalog_format<IE>;
  auto* elems = static_cast<Elem*>(elem_codes);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    elems[i] = lplab::convert<Elem>(x[i] * scale, Round::nearest_even, Overflow::saturate);
}

template <std::size_t IE>
__global__ void unscale_kernel(const void* elem_codes, std::size_t n, float* y, float scale) {
  using Elem = catalog_format<IE>;
  const auto* elems = static_cast<const Elem*>(elem_codes);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = lplab::convert<float>(elems[i]) / scale;
}

// The largest |x| as bits (NaN bits when x holds a NaN; 0 when empty).
std::uint32_t amax_bits(DeviceSpan<const float> x) {
  if (x.size == 0) return 0;
  const Buffer<std::uint32_t> d(std::vector<std::uint32_t>{0});
  amax_kernel<<<detail::blocks_for(x.size), detail::kThreads>>>(x.data, x.size, d.data());
  detail::check_kernel("amax");
  return d.to_host()[0];
}

template <std::size_t IE, std::size_t IS>
__global__ void dequantize_kernel(kernels::ScaleRule rule, bool tensor, std::size_t bs, const void* elem_codes,
                                  const void* scale_codes, float* y, std::size_t n, float tensor_scale) {
  using Elem = catalog_format<IE>;
  using Scale = catalog_format<IS>;
  const auto* elems = static_cast<const Elem*>(elem_codes);
  const auto* scales = static_cast<const Scale*>(scale_codes);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = sr::dequantize_element<Elem, Scale>(rule, tensor, lplab::convert<float>(elems[i]),
                                               static_cast<float>(scales[i / bs]), tensor_scale);
}

void check_size(const char* fn, const char* what, std::size_t expected, std::size_t given) {
  if (expected != given)
    detail::fail(std::string(fn) + ": " + what + " has " + std::to_string(given) + " elements, expected " +
                 std::to_string(expected));
}

// kernels::quantize's scheme checks, in its words.
template <class Elem, class Scale>
void check_scheme(const char* fn, const kernels::BlockScaling<Elem, Scale>& s) {
  using kernels::ScaleRule;
  if (s.block_size < 1) detail::fail(std::string(fn) + ": block_size must be at least 1");
  if (s.tensor_scale && s.rule != ScaleRule::amax_ratio && s.rule != ScaleRule::amax_ratio_te)
    detail::fail(std::string(fn) + ": a tensor scale needs ScaleRule::amax_ratio or amax_ratio_te");
  if (s.rule == ScaleRule::amax_ratio_te && !s.tensor_scale)
    detail::fail(std::string(fn) + ": ScaleRule::amax_ratio_te (Transformer Engine's NVFP4) needs the tensor scale");
}

}  // namespace

template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void quantize(const kernels::BlockScaling<Elem, Scale>& s, DeviceSpan<const float> x, DeviceSpan<Elem> elems,
              DeviceSpan<Scale> scales, float* tensor_scale) {
  check_scheme("quantize", s);
  check_size("quantize", "elems", x.size, elems.size);
  const auto bs = static_cast<std::size_t>(s.block_size);
  const std::size_t blocks = kernels::scales_needed(s, x.size);
  check_size("quantize", "scales", blocks, scales.size);
  if (s.tensor_scale && tensor_scale == nullptr) detail::fail("quantize: this scheme needs a tensor_scale output");
  detail::require();
  const bool te = s.rule == kernels::ScaleRule::amax_ratio_te;
  const std::uint32_t amax_t = s.tensor_scale ? amax_bits(x) : 0;
  const float s_enc = !s.tensor_scale ? 1.0f
                      : te            ? sr::encode_scale_te<Elem, Scale>(amax_t)
                                      : sr::encode_scale<Elem, Scale>(amax_t);
  if (tensor_scale != nullptr) *tensor_scale = te ? sr::float_of(amax_t) : s_enc;
  if (blocks == 0) return;
  constexpr std::size_t IE = catalog_index<Elem>(), IS = catalog_index<Scale>();
  if (32 % bs == 0)
    quantize_lanes_kernel<IE, IS><<<detail::blocks_for(x.size), detail::kThreads>>>(
        s.rule, static_cast<unsigned>(bs), x.data, x.size, elems.data, scales.data, s_enc);
  else
    quantize_kernel<IE, IS><<<detail::blocks_for(blocks), detail::kThreads>>>(s.rule, bs, x.data, x.size, elems.data,
                                                                              scales.data, blocks, s_enc);
  detail::check_kernel("quantize");
}

template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void dequantize(const kernels::BlockScaling<Elem, Scale>& s, DeviceSpan<const Elem> elems,
                DeviceSpan<const Scale> scales, DeviceSpan<float> y, float tensor_scale) {
  check_scheme("dequantize", s);
  check_size("dequantize", "y", elems.size, y.size);
  check_size("dequantize", "scales", kernels::scales_needed(s, elems.size), scales.size);
  detail::require();
  if (y.size == 0) return;
  dequantize_kernel<catalog_index<Elem>(), catalog_index<Scale>()><<<detail::blocks_for(y.size), detail::kThreads>>>(
      s.rule, s.tensor_scale, static_cast<std::size_t>(s.block_size), elems.data, scales.data, y.data, y.size,
      tensor_scale);
  detail::check_kernel("dequantize");
}

template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void quantize(const kernels::BlockScaling<Elem, Scale>& s, std::span<const float> x,
              std::span<std::type_identity_t<Elem>> elems, std::span<std::type_identity_t<Scale>> scales,
              float* tensor_scale) {
  check_scheme("quantize", s);
  check_size("quantize", "elems", x.size(), elems.size());
  check_size("quantize", "scales", kernels::scales_needed(s, x.size()), scales.size());
  if (s.tensor_scale && tensor_scale == nullptr) detail::fail("quantize: this scheme needs a tensor_scale output");
  detail::require();
  const Buffer<float> dx(x);
  const Buffer<Elem> de(elems.size());
  const Buffer<Scale> ds(scales.size());
  float ts = 0.0f;
  quantize(s, DeviceSpan<const float>(dx.span()), de.span(), ds.span(), &ts);
  de.download(elems);
  ds.download(scales);
  if (tensor_scale != nullptr) *tensor_scale = ts;
}

template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void dequantize(const kernels::BlockScaling<Elem, Scale>& s, std::span<const std::type_identity_t<Elem>> elems,
                std::span<const std::type_identity_t<Scale>> scales, std::span<float> y, float tensor_scale) {
  check_scheme("dequantize", s);
  check_size("dequantize", "y", elems.size(), y.size());
  check_size("dequantize", "scales", kernels::scales_needed(s, elems.size()), scales.size());
  detail::require();
  const Buffer<Elem> de(elems);
  const Buffer<Scale> ds(scales);
  const Buffer<float> dy(y.size());
  dequantize(s, DeviceSpan<const Elem>(de.span()), DeviceSpan<const Scale>(ds.span()), dy.span(), tensor_scale);
  dy.download(y);
}

template <kernels::BlockElement Elem>
kernels::TensorScaleResult quantize(const kernels::TensorScaling<Elem>& s, DeviceSpan<const float> x,
                                    DeviceSpan<Elem> out, std::span<const float> history) {
  check_size("quantize", "out", x.size, out.size);
  if (s.amax != kernels::AmaxSource::current && history.empty())
    detail::fail("quantize: this TensorScaling reads an amax history, and none was given");
  detail::require();
  const std::uint32_t m = amax_bits(x);
  const float current = m > sr::kInfBits ? sr::float_of(0x7FC0'0000u) : sr::float_of(m);  // kernels::amax's
  const float source = s.amax == kernels::AmaxSource::current       ? current
                       : s.amax == kernels::AmaxSource::history_max ? kernels::amax(history)
                                                                    : history[0];
  const float scale = kernels::tensor_scale_for(s, source);
  if (x.size > 0) {
    scale_convert_kernel<catalog_index<Elem>()><<<detail::blocks_for(x.size), detail::kThreads>>>(x.data, x.size,
                                                                                                 out.data, scale);
    detail::check_kernel("quantize");
  }
  return {scale, current};
}

template <kernels::BlockElement Elem>
void dequantize(const kernels::TensorScaling<Elem>&, DeviceSpan<const Elem> elems, float scale, DeviceSpan<float> y) {
  check_size("dequantize", "y", elems.size, y.size);
  detail::require();
  if (y.size == 0) return;
  unscale_kernel<catalog_index<Elem>()><<<detail::blocks_for(y.size), detail::kThreads>>>(elems.data, y.size, y.data,
                                                                                          scale);
  detail::check_kernel("dequantize");
}

template <kernels::BlockElement Elem>
kernels::TensorScaleResult quantize(const kernels::TensorScaling<Elem>& s, std::span<const float> x,
                                    std::span<std::type_identity_t<Elem>> out, std::span<const float> history) {
  check_size("quantize", "out", x.size(), out.size());
  if (s.amax != kernels::AmaxSource::current && history.empty())
    detail::fail("quantize: this TensorScaling reads an amax history, and none was given");
  detail::require();
  const Buffer<float> dx(x);
  const Buffer<Elem> dout(out.size());
  const kernels::TensorScaleResult r = quantize(s, DeviceSpan<const float>(dx.span()), dout.span(), history);
  dout.download(out);
  return r;
}

template <kernels::BlockElement Elem>
void dequantize(const kernels::TensorScaling<Elem>& s, std::span<const std::type_identity_t<Elem>> elems, float scale,
                std::span<float> y) {
  check_size("dequantize", "y", elems.size(), y.size());
  detail::require();
  const Buffer<Elem> de(elems);
  const Buffer<float> dy(y.size());
  dequantize(s, DeviceSpan<const Elem>(de.span()), scale, dy.span());
  dy.download(y);
}

// Every element x scale pair the CPU library is compiled for (scaling.h).
#define LPLAB_CUDA_SCALING(E, S)                                                                              \
  template void quantize<E, S>(const kernels::BlockScaling<E, S>&, DeviceSpan<const float>, DeviceSpan<E>,   \
                               DeviceSpan<S>, float*);                                                       \
  template void dequantize<E, S>(const kernels::BlockScaling<E, S>&, DeviceSpan<const E>,                    \
                                 DeviceSpan<const S>, DeviceSpan<float>, float);                             \
  template void quantize<E, S>(const kernels::BlockScaling<E, S>&, std::span<const float>, std::span<E>,     \
                               std::span<S>, float*);                                                        \
  template void dequantize<E, S>(const kernels::BlockScaling<E, S>&, std::span<const E>, std::span<const S>, \
                                 std::span<float>, float);
#define LPLAB_CUDA_SCALING_ELEM(E)                                                                            \
  LPLAB_CUDA_SCALING(E, float8_e8m0fnu) LPLAB_CUDA_SCALING(E, float8_e4m3fn)                                   \
  template kernels::TensorScaleResult quantize<E>(const kernels::TensorScaling<E>&, DeviceSpan<const float>,    \
                                                  DeviceSpan<E>, std::span<const float>);                      \
  template void dequantize<E>(const kernels::TensorScaling<E>&, DeviceSpan<const E>, float, DeviceSpan<float>); \
  template kernels::TensorScaleResult quantize<E>(const kernels::TensorScaling<E>&, std::span<const float>,     \
                                                  std::span<E>, std::span<const float>);                       \
  template void dequantize<E>(const kernels::TensorScaling<E>&, std::span<const E>, float, std::span<float>);
LPLAB_CUDA_SCALING_ELEM(float8_e4m3fn)
LPLAB_CUDA_SCALING_ELEM(float8_e5m2)
LPLAB_CUDA_SCALING_ELEM(float8_e4m3fnuz)
LPLAB_CUDA_SCALING_ELEM(float8_e5m2fnuz)
LPLAB_CUDA_SCALING_ELEM(float6_e2m3fn)
LPLAB_CUDA_SCALING_ELEM(float6_e3m2fn)
LPLAB_CUDA_SCALING_ELEM(float4_e2m1fn)
#undef LPLAB_CUDA_SCALING_ELEM
#undef LPLAB_CUDA_SCALING

}  // namespace lplab::cuda
