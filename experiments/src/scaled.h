// Scaled quantization by scheme name: the block schemes of OCP MX v1.0 and
// NVFP4, and per-tensor FP8 scaling, as a round trip x -> elements + scales
// -> y, for the experiments that compare schemes with plain formats.
#pragma once

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

}  // namespace detail

// The round trip of x through the scheme called `name` (one of block_schemes
// or tensor_schemes); std::invalid_argument for any other name.
inline RoundTrip round_trip(std::string_view name, std::span<const float> x) {
  if (name == "mxfp8_e4m3") return detail::round_trip(kernels::mxfp8_e4m3, x);
  if (name == "mxfp8_e5m2") return detail::round_trip(kernels::mxfp8_e5m2, x);
  if (name == "mxfp6_e2m3") return detail::round_trip(kernels::mxfp6_e2m3, x);
  if (name == "mxfp6_e3m2") return detail::round_trip(kernels::mxfp6_e3m2, x);
  if (name == "mxfp4") return detail::round_trip(kernels::mxfp4, x);
  if (name == "nvfp4") return detail::round_trip(kernels::nvfp4, x);
  if (name == "fp8_e4m3_tensor") return detail::round_trip(kernels::fp8_e4m3_tensor, x);
  if (name == "fp8_e5m2_tensor") return detail::round_trip(kernels::fp8_e5m2_tensor, x);
  throw std::invalid_argument("unknown scaling scheme " + std::string(name));
}

}  // namespace lplab::experiments::scaled
