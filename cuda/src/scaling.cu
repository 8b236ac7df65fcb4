// Block scaling on the device (lplab/cuda.h): the CPU's plan (plans.h:
// checks, sizes, the tensor scale), the tensor's amax (for a tensor scale) by
// an unsigned maximum of |x|'s bits, then one thread per block: its amax,
// scale_rules::block_scale, and quantize_element for each element -- the
// rules the CPU's vector loops compute (scale_rules.h).
#include "common.cuh"
#include "lplab/kernels/plans.h"
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

// |x|'s bits for a block's amax; a NaN counts as 0 under the rules that
// leave NaNs out (scale_rules::keeps_nonfinite: CUDA's fmaxf, as TE reads it).
__device__ std::uint32_t magnitude_bits(float x, bool without_nan) {
  const std::uint32_t a = __float_as_uint(x) & sr::kMagMask;
  return without_nan && a > sr::kInfBits ? 0u : a;
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
  const bool te = rule == kernels::ScaleRule::amax_ratio_te, keeps = sr::keeps_nonfinite(rule);
  for (std::size_t b = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const std::size_t first = b * bs, last = min(n, first + bs);
    std::uint32_t amax = 0;
    for (std::size_t i = first; i < last; ++i) amax = max(amax, magnitude_bits(x[i], keeps));
    Scale scale;
    float factor;
    sr::block_scale<Elem, Scale>(rule, amax, s_enc, scale, factor);
    scales[b] = scale;
    const bool nonfinite = !keeps && sr::is_nonfinite(amax);
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
  const bool te = rule == kernels::ScaleRule::amax_ratio_te, keeps = sr::keeps_nonfinite(rule);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t padded = (n + 31) / 32 * 32;  // every lane of a warp runs every exchange
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < padded; i += stride) {
    const float v = i < n ? x[i] : 0.0f;
    std::uint32_t amax = magnitude_bits(v, keeps);
    for (unsigned o = bs / 2; o > 0; o /= 2) amax = max(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
    // The group's first lane computes the scale; the others take its factor.
    Scale scale{};
    float factor = 0.0f;
    const unsigned lane = threadIdx.x % 32, first = lane & ~(bs - 1);
    if (lane == first) sr::block_scale<Elem, Scale>(rule, amax, s_enc, scale, factor);
    factor = __shfl_sync(0xFFFFFFFFu, factor, static_cast<int>(first));
    if (i < n && lane == first) scales[i / bs] = scale;
    if (i < n) elems[i] = sr::quantize_element<Elem>(v, factor, te, !keeps && sr::is_nonfinite(amax));
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

}  // namespace

template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void quantize(const kernels::BlockScaling<Elem, Scale>& s, DeviceSpan<const float> x, DeviceSpan<Elem> elems,
              DeviceSpan<Scale> scales, float* tensor_scale) {
  const kernels::BlockPlan p = kernels::plan_block_quantize(s, x.size, elems.size, scales.size, tensor_scale);
  detail::require();
  const kernels::TensorEncoding enc = kernels::tensor_encoding<Elem, Scale>(p, p.tensor_scale ? amax_bits(x) : 0);
  if (tensor_scale != nullptr) *tensor_scale = enc.stored;
  if (p.blocks == 0) return;
  constexpr std::size_t IE = catalog_index<Elem>(), IS = catalog_index<Scale>();
  const std::size_t bs = p.block_size;
  if (32 % bs == 0)
    quantize_lanes_kernel<IE, IS><<<detail::blocks_for(x.size), detail::kThreads>>>(
        p.rule, static_cast<unsigned>(bs), x.data, x.size, elems.data, scales.data, enc.s_enc);
  else
    quantize_kernel<IE, IS><<<detail::blocks_for(p.blocks), detail::kThreads>>>(
        p.rule, bs, x.data, x.size, elems.data, scales.data, p.blocks, enc.s_enc);
  detail::check_kernel("quantize");
}

template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void dequantize(const kernels::BlockScaling<Elem, Scale>& s, DeviceSpan<const Elem> elems,
                DeviceSpan<const Scale> scales, DeviceSpan<float> y, float tensor_scale) {
  const kernels::BlockPlan p = kernels::plan_block_dequantize(s, elems.size, scales.size, y.size);
  detail::require();
  if (p.n == 0) return;
  dequantize_kernel<catalog_index<Elem>(), catalog_index<Scale>()><<<detail::blocks_for(p.n), detail::kThreads>>>(
      p.rule, p.tensor_scale, p.block_size, elems.data, scales.data, y.data, p.n, tensor_scale);
  detail::check_kernel("dequantize");
}

template <kernels::BlockElement Elem, kernels::BlockScale Scale>
void quantize(const kernels::BlockScaling<Elem, Scale>& s, std::span<const float> x,
              std::span<std::type_identity_t<Elem>> elems, std::span<std::type_identity_t<Scale>> scales,
              float* tensor_scale) {
  kernels::plan_block_quantize(s, x.size(), elems.size(), scales.size(), tensor_scale);
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
  kernels::plan_block_dequantize(s, elems.size(), scales.size(), y.size());
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
  const kernels::TensorPlan p = kernels::plan_tensor_quantize(s, x.size, out.size, history);
  detail::require();
  const std::uint32_t m = amax_bits(x);
  const float current = m > sr::kInfBits ? sr::float_of(0x7FC0'0000u) : sr::float_of(m);  // kernels::amax's
  const float scale = kernels::tensor_scale_for(s, p.amax(current));
  if (x.size > 0) {
    scale_convert_kernel<catalog_index<Elem>()><<<detail::blocks_for(x.size), detail::kThreads>>>(x.data, x.size,
                                                                                                 out.data, scale);
    detail::check_kernel("quantize");
  }
  return {scale, current};
}

template <kernels::BlockElement Elem>
void dequantize(const kernels::TensorScaling<Elem>&, DeviceSpan<const Elem> elems, float scale, DeviceSpan<float> y) {
  kernels::plan_tensor_dequantize(elems.size, y.size);
  detail::require();
  if (y.size == 0) return;
  unscale_kernel<catalog_index<Elem>()><<<detail::blocks_for(y.size), detail::kThreads>>>(elems.data, y.size, y.data,
                                                                                          scale);
  detail::check_kernel("dequantize");
}

template <kernels::BlockElement Elem>
kernels::TensorScaleResult quantize(const kernels::TensorScaling<Elem>& s, std::span<const float> x,
                                    std::span<std::type_identity_t<Elem>> out, std::span<const float> history) {
  kernels::plan_tensor_quantize(s, x.size(), out.size(), history);
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
  kernels::plan_tensor_dequantize(elems.size(), y.size());
  detail::require();
  const Buffer<Elem> de(elems);
  const Buffer<float> dy(y.size());
  dequantize(s, DeviceSpan<const Elem>(de.span()), scale, dy.span());
  dy.download(y);
}

// Every pair and element the CPU library is compiled for, from the same
// lists (scaling_formats.h).
#define LPLAB_CUDA_SCALING(E, S, storage)                                                                     \
  template void quantize<E, S>(const kernels::BlockScaling<E, S>&, DeviceSpan<const float>, DeviceSpan<E>,   \
                               DeviceSpan<S>, float*);                                                       \
  template void dequantize<E, S>(const kernels::BlockScaling<E, S>&, DeviceSpan<const E>,                    \
                                 DeviceSpan<const S>, DeviceSpan<float>, float);                             \
  template void quantize<E, S>(const kernels::BlockScaling<E, S>&, std::span<const float>, std::span<E>,     \
                               std::span<S>, float*);                                                        \
  template void dequantize<E, S>(const kernels::BlockScaling<E, S>&, std::span<const E>, std::span<const S>, \
                                 std::span<float>, float);
#define LPLAB_CUDA_SCALING_ELEM(E)                                                                            \
  template kernels::TensorScaleResult quantize<E>(const kernels::TensorScaling<E>&, DeviceSpan<const float>,    \
                                                  DeviceSpan<E>, std::span<const float>);                      \
  template void dequantize<E>(const kernels::TensorScaling<E>&, DeviceSpan<const E>, float, DeviceSpan<float>); \
  template kernels::TensorScaleResult quantize<E>(const kernels::TensorScaling<E>&, std::span<const float>,     \
                                                  std::span<E>, std::span<const float>);                       \
  template void dequantize<E>(const kernels::TensorScaling<E>&, std::span<const E>, float, std::span<float>);
LPLAB_BLOCK_PAIRS(LPLAB_CUDA_SCALING)
LPLAB_SCALING_ELEMENTS(LPLAB_CUDA_SCALING_ELEM)
#undef LPLAB_CUDA_SCALING_ELEM
#undef LPLAB_CUDA_SCALING

}  // namespace lplab::cuda
