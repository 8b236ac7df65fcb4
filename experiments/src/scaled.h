// Scaled quantization by scheme name: the block schemes of OCP MX v1.0 and
// NVFP4, per-tensor FP8 scaling (Transformer Engine's current and delayed
// scaling) and DeepSeek-V3's fine-grained tiles, as a round trip x ->
// elements + scales -> y, for the experiments and specs that compare schemes
// with plain formats. A tensor is a row-major matrix of rows of `cols`
// values (the last one may be shorter): the tiles' geometry, and the steps of
// delayed scaling (row t is step t's tensor).
#pragma once

#include <algorithm>
#include <array>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/formats.h"
#include "lplab/kernels/scaling.h"

namespace lplab::experiments::scaled {

// The block schemes (kernels/scaling.h), named as in the MX specification.
inline constexpr std::array<std::string_view, 6> block_schemes = {
    "mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "nvfp4"};
// Per-tensor FP8 scaling (Transformer Engine's current scaling).
inline constexpr std::array<std::string_view, 2> tensor_schemes = {"fp8_e4m3_tensor",
                                                                   "fp8_e5m2_tensor"};
// Transformer Engine's DelayedScaling recipe with its defaults (margin 0, an
// amax history of 1024 steps, its max): row t is scaled by the amaxes of rows
// t - 1024 .. t - 1, row 0 by TE's initial scale 1.
inline constexpr std::array<std::string_view, 2> delayed_schemes = {"fp8_e4m3_delayed", "fp8_e5m2_delayed"};
// DeepSeek-V3's fine-grained E4M3 scaling, fp32 scales: 1 x 128 activation
// tiles and 128 x 128 weight blocks.
inline constexpr std::array<std::string_view, 2> tile_schemes = {"deepseek_1x128", "deepseek_128x128"};

// Every scheme's name, in the order above.
inline std::vector<std::string_view> all_schemes() {
  std::vector<std::string_view> v(block_schemes.begin(), block_schemes.end());
  v.insert(v.end(), tensor_schemes.begin(), tensor_schemes.end());
  v.insert(v.end(), delayed_schemes.begin(), delayed_schemes.end());
  v.insert(v.end(), tile_schemes.begin(), tile_schemes.end());
  return v;
}

struct RoundTrip {
  std::vector<float> y;     // the dequantized values
  std::vector<double> elem; // each element's value in the element format, before scaling back
  double elem_max = 0;             // the element format's largest finite value
  double elem_smallest_normal = 0; // and its smallest normal
};

namespace detail {

template <class Elem>
void record_elements(RoundTrip& r, const std::vector<Elem>& q) {
  r.elem.resize(q.size());
  for (std::size_t i = 0; i < q.size(); ++i) r.elem[i] = static_cast<double>(q[i]);
  r.elem_max = static_cast<double>(finfo<Elem>::max);
  r.elem_smallest_normal = static_cast<double>(finfo<Elem>::smallest_normal);
}

template <class Elem, class Scale>
RoundTrip round_trip(const kernels::BlockScaling<Elem, Scale>& s, std::span<const float> x) {
  std::vector<Elem> q(x.size());
  std::vector<Scale> sc(kernels::scales_needed(s, x.size()));
  float s_enc = 1.0f;
  kernels::quantize(s, x, q, sc, &s_enc);
  RoundTrip r;
  r.y.resize(x.size());
  kernels::dequantize(s, q, sc, r.y, s_enc);
  record_elements(r, q);
  return r;
}

template <class Elem>
RoundTrip round_trip(const kernels::TensorScaling<Elem>& s, std::span<const float> x) {
  std::vector<Elem> q(x.size());
  const kernels::TensorScaleResult t = kernels::quantize(s, x, q);
  RoundTrip r;
  r.y.resize(x.size());
  kernels::dequantize(s, q, t.scale, r.y);
  record_elements(r, q);
  return r;
}

template <class Elem>
RoundTrip round_trip(const kernels::DelayedScaling<Elem>& s, std::span<const float> x, std::size_t cols) {
  std::vector<Elem> q(x.size());
  kernels::DelayedScaler<Elem> scaler(s);
  kernels::TensorScaling<Elem> plain{.margin = s.margin};
  RoundTrip r;
  r.y.resize(x.size());
  for (std::size_t first = 0; first < x.size(); first += cols) {
    const std::size_t count = std::min(cols, x.size() - first);
    const auto out = std::span<Elem>(q).subspan(first, count);
    const kernels::TensorScaleResult t = scaler.step(x.subspan(first, count), out);
    kernels::dequantize(plain, std::span<const Elem>(out), t.scale, std::span<float>(r.y).subspan(first, count));
  }
  record_elements(r, q);
  return r;
}

template <class Elem>
RoundTrip round_trip(const kernels::TileScaling<Elem>& s, std::span<const float> x, std::size_t cols) {
  std::vector<Elem> q(x.size());
  std::vector<float> sc(kernels::tile_scales_needed(s, x.size(), cols));
  kernels::quantize(s, x, cols, q, sc);
  RoundTrip r;
  r.y.resize(x.size());
  kernels::dequantize(s, q, cols, sc, r.y);
  record_elements(r, q);
  return r;
}

}  // namespace detail

// The round trip of x, a matrix of rows of `cols` values (0: one row),
// through the scheme called `name` (one of all_schemes());
// std::invalid_argument for any other name.
inline RoundTrip round_trip(std::string_view name, std::span<const float> x, std::size_t cols = 0) {
  if (cols == 0) cols = std::max<std::size_t>(x.size(), 1);
  if (name == "mxfp8_e4m3") return detail::round_trip(kernels::mxfp8_e4m3, x);
  if (name == "mxfp8_e5m2") return detail::round_trip(kernels::mxfp8_e5m2, x);
  if (name == "mxfp6_e2m3") return detail::round_trip(kernels::mxfp6_e2m3, x);
  if (name == "mxfp6_e3m2") return detail::round_trip(kernels::mxfp6_e3m2, x);
  if (name == "mxfp4") return detail::round_trip(kernels::mxfp4, x);
  if (name == "nvfp4") return detail::round_trip(kernels::nvfp4, x);
  if (name == "fp8_e4m3_tensor") return detail::round_trip(kernels::fp8_e4m3_tensor, x);
  if (name == "fp8_e5m2_tensor") return detail::round_trip(kernels::fp8_e5m2_tensor, x);
  if (name == "fp8_e4m3_delayed") return detail::round_trip(kernels::fp8_e4m3_delayed, x, cols);
  if (name == "fp8_e5m2_delayed") return detail::round_trip(kernels::fp8_e5m2_delayed, x, cols);
  if (name == "deepseek_1x128") return detail::round_trip(kernels::deepseek_activations, x, cols);
  if (name == "deepseek_128x128") return detail::round_trip(kernels::deepseek_weights, x, cols);
  throw std::invalid_argument("unknown scaling scheme " + std::string(name));
}

}  // namespace lplab::experiments::scaled
