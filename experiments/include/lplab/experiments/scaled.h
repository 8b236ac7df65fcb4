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
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/experiments/recipe_rows.h"
#include "lplab/formats.h"
#include "lplab/kernels/integer_scaling.h"
#include "lplab/kernels/recipes.h"
#include "lplab/kernels/scaling.h"

namespace lplab::experiments::scaled {

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

// A matrix scheme (blocks of block_rows x block_size, kernels/scaling.h) on rows of `cols`.
template <class Elem, class Scale>
RoundTrip round_trip(const kernels::BlockScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols) {
  std::vector<Elem> q(x.size());
  std::vector<Scale> sc(kernels::scales_needed(s, x.size(), cols));
  float s_enc = 1.0f;
  kernels::quantize(s, x, cols, q, sc, &s_enc);
  RoundTrip r;
  r.y.resize(x.size());
  kernels::dequantize(s, q, cols, sc, r.y, s_enc);
  record_elements(r, q);
  return r;
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

// An integer scheme (kernels/integer_scaling.h). `elem` is each value's
// integer multiple of its group's scale: the code less its zero point (less
// the mid-point for a floating zero point), and +-elem_max for a code at
// either end of the element's range, which is where the group clips (so
// elem_max is qmax - qmin, no multiple reaching it otherwise); integers have
// no subnormals (smallest normal 1).
template <class Elem, class Scale>
RoundTrip round_trip(const kernels::IntegerScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols) {
  using kernels::ZeroPoint;
  const std::size_t groups = kernels::groups_needed(s, x.size(), cols);
  std::vector<Elem> q(x.size()), z(groups);
  std::vector<Scale> sc(groups), fz(groups);
  RoundTrip r;
  r.y.resize(x.size());
  const ZeroPoint kind = kernels::integer_rule_spec(s.rule).zero;
  if (kind == ZeroPoint::none) {
    kernels::quantize(s, x, cols, q, sc);
    kernels::dequantize(s, q, cols, sc, r.y);
  } else if (kind == ZeroPoint::integer) {
    kernels::quantize(s, x, cols, q, sc, z);
    kernels::dequantize(s, q, cols, sc, z, r.y);
  } else {
    kernels::quantize(s, x, cols, q, sc, fz);
    kernels::dequantize(s, q, cols, sc, fz, r.y);
  }
  const double qmin = static_cast<double>(finfo<Elem>::min), qmax = static_cast<double>(finfo<Elem>::max);
  r.elem_max = qmax - qmin;
  r.elem_smallest_normal = 1;
  r.elem.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double c = static_cast<double>(q[i]);
    const double zero = kind == ZeroPoint::integer    ? static_cast<double>(z[kernels::group_of(s, i, cols)])
                        : kind == ZeroPoint::floating ? kernels::integer_mid_point<Elem>()
                                                      : 0.0;
    r.elem[i] = c == qmax && c != zero ? r.elem_max : c == qmin && c != zero ? -r.elem_max : c - zero;
  }
  return r;
}

}  // namespace detail

// How a scheme scales, which is also its `scaling` label in tables.
enum class Kind {
  block,    // OCP MX v1.0 and NVFP4: a scale per block of 32 or 16 values
  tensor,   // Transformer Engine's current scaling: one scale from the tensor's own amax
  delayed,  // Transformer Engine's DelayedScaling: row t scaled by the amaxes of the rows before it
  tile,     // DeepSeek-V3's fine-grained tiles, fp32 scales
  recipe,   // one treatment of a named recipe's operands (recipe_rows.h)
  integer,  // integer codes with a scale (and zero point) per group (kernels/integer_scaling.h)
};

inline constexpr std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::block: return "block";
    case Kind::tensor: return "tensor";
    case Kind::delayed: return "delayed";
    case Kind::tile: return "tile";
    case Kind::recipe: return "recipe";
    case Kind::integer: return "integer";
  }
  return "?";
}

// The row length the experiments read a sample in when they quantize it
// through a scheme (a hidden size): the rows are the tiles' geometry and
// delayed scaling's steps.
inline constexpr std::size_t kSampleRow = 1024;

// What that means for each kind of scheme, for the experiments' table notes.
inline std::string sample_rows_note() {
  return "the schemes read the values as a matrix of rows of " + std::to_string(kSampleRow) +
         " (the last may be shorter): deepseek_1x128 scales each 1 x 128 tile, deepseek_128x128 each 128 x 128 "
         "block (fp32 scales, DeepSeek-V3 section 3.3.1), nvfp4_2d and nvfp4_te_2d each 16 x 16 block (NVFP4 "
         "training's weights); the _delayed rows are Transformer Engine's "
         "DelayedScaling (margin 0, history 1024, max) with each row one training step: row t is scaled by the "
         "amaxes of the rows before it, row 0 by TE's initial scale 1; a recipe's rows (recipe/uses, lplab "
         "recipe show) are each distinct treatment of its GEMM operands, Hadamard transform and stochastic "
         "rounding (cvt.rs, Philox seed 0) included; a transformed operand is transformed back before it is "
         "measured; the integer schemes' groups run along each row (int8_channel: one scale per row, "
         "int4_g128: per 128 values of a row)";
}

// One scheme: its name (as in the MX specification and Transformer Engine),
// its kind, and its round trip of a matrix of rows of `cols` values.
using In = std::span<const float>;
struct Scheme {
  std::string_view name;
  Kind kind;
  RoundTrip (*round_trip)(In x, std::size_t cols);
};

// Every scheme, declared once. Delayed scaling takes TE's defaults (margin 0,
// an amax history of 1024 steps, its max): row t is scaled by the amaxes of
// rows t - 1024 .. t - 1, row 0 by TE's initial scale 1. The DeepSeek-V3
// schemes are E4M3 with 1 x 128 activation tiles and 128 x 128 weight blocks.
#define LPLAB_BLOCK_SCHEME_ENTRY(s, ...) \
  Scheme{#s, Kind::block, [](In x, std::size_t) { return detail::round_trip(kernels::s, x); }},
// (A matrix scheme of fp32 scales -- DeepSeek-V3's tiles, TE's
// Float8BlockScaling -- is of the tile kind.)
#define LPLAB_MATRIX_SCHEME_ENTRY(s, ...)                                                                     \
  Scheme{#s,                                                                                                  \
         std::same_as<std::remove_cvref_t<decltype(kernels::s)>::scale_type, float32> ? Kind::tile : Kind::block, \
         [](In x, std::size_t c) { return detail::round_trip(kernels::s, x, c); }},
#define LPLAB_INTEGER_SCHEME_ENTRY(s, ...) \
  Scheme{#s, Kind::integer, [](In x, std::size_t c) { return detail::round_trip(kernels::s, x, c); }},
inline constexpr auto schemes = std::to_array<Scheme>({
    LPLAB_BLOCK_SCHEMES(LPLAB_BLOCK_SCHEME_ENTRY)  // kernels/scaling.h
    LPLAB_MATRIX_BLOCK_SCHEMES(LPLAB_MATRIX_SCHEME_ENTRY)
    {"fp8_e4m3_tensor", Kind::tensor, [](In x, std::size_t) { return detail::round_trip(kernels::fp8_e4m3_tensor, x); }},
    {"fp8_e5m2_tensor", Kind::tensor, [](In x, std::size_t) { return detail::round_trip(kernels::fp8_e5m2_tensor, x); }},
    {"fp8_e4m3_delayed", Kind::delayed, [](In x, std::size_t c) { return detail::round_trip(kernels::fp8_e4m3_delayed, x, c); }},
    {"fp8_e5m2_delayed", Kind::delayed, [](In x, std::size_t c) { return detail::round_trip(kernels::fp8_e5m2_delayed, x, c); }},
    LPLAB_INTEGER_SCHEMES(LPLAB_INTEGER_SCHEME_ENTRY)  // kernels/integer_scaling.h
});
#undef LPLAB_INTEGER_SCHEME_ENTRY
#undef LPLAB_MATRIX_SCHEME_ENTRY
#undef LPLAB_BLOCK_SCHEME_ENTRY

// The scheme called `name`, or nullptr.
inline const Scheme* find_scheme(std::string_view name) {
  for (const Scheme& s : schemes)
    if (s.name == name) return &s;
  return nullptr;
}

// The names of the schemes of the given kinds (none given: every scheme), in
// the table's order.
inline std::vector<std::string_view> scheme_names(std::initializer_list<Kind> kinds = {}) {
  std::vector<std::string_view> v;
  for (const Scheme& s : schemes)
    if (kinds.size() == 0 || std::find(kinds.begin(), kinds.end(), s.kind) != kinds.end()) v.push_back(s.name);
  return v;
}

// The schemes and the recipes (kernels/recipes.h), each by name: the
// choices of the experiments' `schemes` parameters.
inline std::vector<std::string> scheme_and_recipe_names(std::initializer_list<Kind> kinds = {}) {
  std::vector<std::string> v;
  for (std::string_view s : scheme_names(kinds)) v.emplace_back(s);
  for (const kernels::Recipe& r : kernels::recipes()) v.emplace_back(r.name);
  return v;
}

// The rows `names` ask for: a scheme is itself, a recipe its operands'
// treatments that lplab runs (recipe_rows.h), each once, in order. Why a
// recipe's other treatments are not run goes to *not_run, one line each.
inline std::vector<std::string> expand(const std::vector<std::string>& names,
                                       std::vector<std::string>* not_run = nullptr) {
  std::vector<std::string> rows;
  auto add = [&](const std::string& s) {
    if (std::find(rows.begin(), rows.end(), s) == rows.end()) rows.push_back(s);
  };
  for (const std::string& n : names) {
    const std::vector<RecipeRow> rr = recipe_rows(n);
    if (rr.empty()) {
      add(n);
      continue;
    }
    for (const RecipeRow& r : rr) {
      if (r.not_run.empty())
        add(r.name);
      else if (not_run != nullptr)
        not_run->push_back(r.name + " is not run: " + r.not_run);
    }
  }
  return rows;
}

// How the row called `name` rounds its elements: every scheme to nearest-even,
// a recipe's gradients stochastically (cvt.rs).
inline const char* rounding_of(std::string_view name) {
  RecipeRow row;
  if (find_scheme(name) == nullptr && find_recipe_row(name, row))
    return row.operand.round == Round::stochastic ? "stochastic" : "nearest_even";
  return "nearest_even";
}

// How the row called `name` scales: its scheme's kind, or Kind::recipe.
inline Kind kind_of(std::string_view name) {
  const Scheme* s = find_scheme(name);
  return s != nullptr ? s->kind : Kind::recipe;
}

// The round trip of x, a matrix of rows of `cols` values (0: one row),
// through the scheme or recipe row called `name`; std::invalid_argument for
// a name that is neither.
inline RoundTrip round_trip(std::string_view name, std::span<const float> x, std::size_t cols = 0) {
  const std::size_t c = cols == 0 ? std::max<std::size_t>(x.size(), 1) : cols;
  if (const Scheme* s = find_scheme(name)) return s->round_trip(x, c);
  RecipeRow row;
  if (find_recipe_row(name, row)) return recipe_round_trip(row, x, c);
  throw std::invalid_argument("unknown scaling scheme " + std::string(name));
}

}  // namespace lplab::experiments::scaled
