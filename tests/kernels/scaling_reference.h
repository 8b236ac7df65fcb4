// A scalar reference for block and tensor scaling, written from the rules as
// scaling.h states them and independently of kernels/src/scaling.cpp: amax
// with std::fabs and std::isnan/isinf, the power-of-two exponent from
// std::ilogb and std::log2 on doubles, the exact quotient x / 2^X in double
// (std::ldexp) rounded once by lplab::convert, one element at a time.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "lplab/formats.h"
#include "lplab/kernels/scaling.h"

namespace lplab::testing {

template <class Elem, class Scale>
struct RefBlockResult {
  std::vector<Elem> elems;
  std::vector<Scale> scales;
  float tensor_scale = 1.0f;
};

// max |x_i| over x, and whether some x_i is NaN or infinite.
struct RefAmax {
  double amax = 0;
  bool nonfinite = false;
  bool nan = false;
};

inline RefAmax ref_amax(std::span<const float> x) {
  RefAmax r;
  for (float v : x) {
    if (std::isnan(v)) {
      r.nan = r.nonfinite = true;
    } else if (std::isinf(v)) {
      r.nonfinite = true;
      r.amax = std::numeric_limits<double>::infinity();
    } else {
      r.amax = std::max(r.amax, std::fabs(static_cast<double>(v)));
    }
  }
  return r;
}

// The shared exponent X of a power-of-two rule for a finite amax.
template <class Elem, class Scale>
int ref_shared_exponent(kernels::ScaleRule rule, double amax) {
  // The powers of two the scale format holds, from its smallest positive value
  // and its largest value (E8M0: 2^-127 .. 2^127).
  const double smallest =
      finfo<Scale>::has_zero ? finfo<Scale>::smallest_subnormal : finfo<Scale>::min;
  const int lo = std::ilogb(smallest);
  const int hi = std::ilogb(finfo<Scale>::max);
  if (amax == 0) return lo;
  // OCP MX v1.0 section 6.3: floor(log2(amax)) - emax of the element format.
  const int emax_elem = std::ilogb(finfo<Elem>::max);
  const int fl = std::ilogb(amax);
  int x = fl - emax_elem;
  switch (rule) {
    case kernels::ScaleRule::ceil:  // the least X with amax <= max * 2^X
      x = static_cast<int>(std::ceil(std::log2(amax / finfo<Elem>::max)));
      while (amax > std::ldexp(static_cast<double>(finfo<Elem>::max), x)) ++x;
      while (amax <= std::ldexp(static_cast<double>(finfo<Elem>::max), x - 1)) --x;
      break;
    case kernels::ScaleRule::rceil: {  // ceil(log2 q), q the float32 product amax * float(1 / max)
      const double q = static_cast<float>(amax) * static_cast<float>(1.0 / finfo<Elem>::max);
      if (q == 0) return lo;
      x = std::ilogb(q) + (q != std::ldexp(1.0, std::ilogb(q)));
      break;
    }
    case kernels::ScaleRule::even: {  // amax to 1 + M bits, ties away, then floor's formula
      const double ulp = std::ldexp(1.0, fl - finfo<Elem>::mantissa_bits);
      x = std::ilogb(std::floor(amax / ulp + 0.5) * ulp) - emax_elem;
      break;
    }
    case kernels::ScaleRule::ceil_amax: x = fl + (amax != std::ldexp(1.0, fl)) - emax_elem; break;
    default: break;
  }
  if (x < lo) x = lo;
  if (x > hi) x = hi;
  return x;
}

// The NVFP4 / Transformer Engine global encode scale.
template <class Elem, class Scale>
float ref_encode_scale(const RefAmax& t) {
  if (t.nonfinite || t.amax == 0) return 1.0f;
  const float numerator = lplab::convert<float>(finfo<Elem>::max * finfo<Scale>::max,
                                                Round::nearest_even, Overflow::saturate);
  const float s = numerator / static_cast<float>(t.amax);
  return std::isinf(s) ? std::numeric_limits<float>::max() : s;
}

// Runs of block_size elements (the flat form). tensor_amax_of: the tensor
// whose amax gives the tensor scale, x itself where it is not given (a
// matrix's block gathered into x takes its matrix's).
template <class Elem, class Scale>
RefBlockResult<Elem, Scale> ref_quantize(const kernels::BlockScaling<Elem, Scale>& s,
                                         std::span<const float> x,
                                         std::optional<std::span<const float>> tensor_amax_of = std::nullopt) {
  RefBlockResult<Elem, Scale> r;
  const std::size_t n = x.size();
  const auto bs = static_cast<std::size_t>(s.block_size);
  if (s.tensor_scale) r.tensor_scale = ref_encode_scale<Elem, Scale>(ref_amax(tensor_amax_of.value_or(x)));
  const float s_enc = r.tensor_scale;
  r.elems.resize(n);
  for (std::size_t begin = 0; begin < n; begin += bs) {
    const std::size_t end = std::min(n, begin + bs);
    const RefAmax a = ref_amax(x.subspan(begin, end - begin));
    if (a.nonfinite) {
      r.scales.push_back(Scale::from_bits(finfo<Scale>::nan_code));
      for (std::size_t i = begin; i < end; ++i) r.elems[i] = Elem::from_bits(0);
      continue;
    }
    if (s.rule == kernels::ScaleRule::amax_ratio) {
      // The documented float32 formula, operation by operation.
      const float amax = static_cast<float>(a.amax);
      const float s_dec = amax / static_cast<float>(finfo<Elem>::max);
      float v = s_dec * s_enc;
      if (v == 0 && !finfo<Scale>::has_zero) v = static_cast<float>(finfo<Scale>::min);
      const Scale scale = lplab::convert<Scale>(v, Round::nearest_even, Overflow::saturate);
      const float sf = static_cast<float>(scale);
      float k = 0;
      if (sf != 0) {
        k = s_enc / sf;
        if (k > std::numeric_limits<float>::max()) k = std::numeric_limits<float>::max();
      }
      r.scales.push_back(scale);
      for (std::size_t i = begin; i < end; ++i) {
        const float y = x[i] * k;
        r.elems[i] = lplab::convert<Elem>(y, Round::nearest_even, Overflow::saturate);
      }
    } else {
      const int e = ref_shared_exponent<Elem, Scale>(s.rule, a.amax);
      r.scales.push_back(lplab::convert<Scale>(std::ldexp(1.0, e)));
      for (std::size_t i = begin; i < end; ++i) {
        const double q = std::ldexp(static_cast<double>(x[i]), -e);  // exact in double
        r.elems[i] = lplab::convert<Elem>(q, Round::nearest_even, Overflow::saturate);
      }
    }
  }
  return r;
}

template <class Elem, class Scale>
std::vector<float> ref_dequantize(const kernels::BlockScaling<Elem, Scale>& s,
                                  std::span<const Elem> elems, std::span<const Scale> scales,
                                  float tensor_scale) {
  std::vector<float> y(elems.size());
  const auto bs = static_cast<std::size_t>(s.block_size);
  for (std::size_t i = 0; i < elems.size(); ++i) {
    const double sc = static_cast<double>(scales[i / bs]);
    const double e = static_cast<double>(elems[i]);
    if (std::isnan(sc)) {
      y[i] = std::numeric_limits<float>::quiet_NaN();
    } else if (s.tensor_scale) {
      y[i] = static_cast<float>(e) * static_cast<float>(sc) / tensor_scale;
    } else {
      // A power of two (or an E4M3 scale) times an element with few bits: the
      // double product is exact, rounded to float once.
      y[i] = lplab::convert<float>(e * sc);
    }
  }
  return y;
}

// Per-tensor scaling, by the formula in scaling.h.
template <class Elem>
float ref_tensor_scale(int margin, double amax) {
  if (amax == 0 || std::isnan(amax) || std::isinf(amax)) return 1.0f;
  const float q = static_cast<float>(finfo<Elem>::max) / static_cast<float>(amax);
  // Dividing by 2^margin, rounded once: the exact value q * 2^-margin in
  // double, then to float.
  const float scale = lplab::convert<float>(std::ldexp(static_cast<double>(q), -margin));
  if (std::isinf(scale)) return std::numeric_limits<float>::max();
  if (scale == 0) return std::numeric_limits<float>::denorm_min();
  return scale;
}

template <class Elem>
std::vector<Elem> ref_tensor_quantize(std::span<const float> x, float scale) {
  std::vector<Elem> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    out[i] = lplab::convert<Elem>(x[i] * scale, Round::nearest_even, Overflow::saturate);
  return out;
}

// Fine-grained tile scaling (scaling.h's TileScaling), element by element:
// each element's tile found from its row and column, the tile's amax over
// every element of it, the float32 operations rounded once from double (the
// quotient and product of two floats, rounded to float, as float
// arithmetic gives them).
template <class Elem>
struct RefTiles {
  std::vector<Elem> elems;
  std::vector<float> scales, y;
};

template <class Elem>
RefTiles<Elem> ref_tile_quantize(const kernels::TileScaling<Elem>& s, std::span<const float> x, std::size_t cols) {
  const std::size_t n = x.size(), rows = (n + cols - 1) / cols;
  const auto tr = static_cast<std::size_t>(s.tile_rows), tc = static_cast<std::size_t>(s.tile_cols);
  const std::size_t across = (cols + tc - 1) / tc, down = (rows + tr - 1) / tr;
  auto tile_of = [&](std::size_t i) { return (i / cols / tr) * across + (i % cols) / tc; };
  std::vector<double> amax(across * down, 0.0);
  std::vector<bool> special(across * down, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) special[tile_of(i)] = true;
    else amax[tile_of(i)] = std::max(amax[tile_of(i)], std::abs(static_cast<double>(x[i])));
  }
  const double max_elem = static_cast<double>(finfo<Elem>::max);
  RefTiles<Elem> r;
  r.scales.resize(across * down);
  std::vector<float> factor(across * down);
  for (std::size_t t = 0; t < r.scales.size(); ++t) {
    if (special[t]) {
      r.scales[t] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const double a = std::max(amax[t], static_cast<double>(s.amax_floor));
    factor[t] = static_cast<float>(max_elem / a);
    r.scales[t] = static_cast<float>(a / max_elem);
  }
  r.elems.resize(n);
  r.y.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t t = tile_of(i);
    if (special[t]) {
      r.elems[i] = Elem::from_bits(0);
      r.y[i] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const float scaled = static_cast<float>(static_cast<double>(x[i]) * factor[t]);
    r.elems[i] = lplab::convert<Elem>(scaled, Round::nearest_even, Overflow::saturate);
    r.y[i] = static_cast<float>(static_cast<double>(r.elems[i]) * r.scales[t]);
  }
  return r;
}

}  // namespace lplab::testing
