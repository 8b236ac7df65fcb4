// Sign operations, classification, comparison and nextafter: exact operations
// on codes, no rounding involved.
#pragma once

#include <cmath>
#include <cstdint>

#include "lplab/formats/value.h"

namespace lplab {

template <Descriptor D>
LPLAB_HD constexpr bool isnan(Float<D> x) noexcept {
  using L = detail::Layout<D>;
  const std::uint64_t c = x.bits(), mag = c & L::mag_mask;
  if constexpr (D.encoding == Encoding::ieee) return mag > L::inf_code;
  else if constexpr (D.encoding == Encoding::fn) return mag == L::mag_mask;
  else if constexpr (D.encoding == Encoding::fnuz) return c == L::sign_mask;
  else return false;
}

template <Descriptor D>
LPLAB_HD constexpr bool isinf(Float<D> x) noexcept {
  using L = detail::Layout<D>;
  if constexpr (L::has_inf) return (x.bits() & L::mag_mask) == L::inf_code;
  else return false;
}

template <Descriptor D>
LPLAB_HD constexpr bool isfinite(Float<D> x) noexcept { return !isnan(x) && !isinf(x); }

template <Descriptor D>
LPLAB_HD constexpr bool is_zero(Float<D> x) noexcept {
  using L = detail::Layout<D>;
  return L::has_zero && (x.bits() & L::mag_mask) == 0 && !isnan(x);
}

// The sign bit as stored; the fnuz NaN (0x80) reports true, as its code says.
template <Descriptor D>
LPLAB_HD constexpr bool signbit(Float<D> x) noexcept {
  return (x.bits() & detail::Layout<D>::sign_mask) != 0;
}

template <Descriptor D>
LPLAB_HD constexpr bool isnormal(Float<D> x) noexcept {
  using L = detail::Layout<D>;
  if (!isfinite(x) || is_zero(x)) return false;
  return !D.has_subnormals || ((x.bits() & L::mag_mask) >> L::M) != 0;
}

template <Descriptor D>
LPLAB_HD constexpr bool is_subnormal(Float<D> x) noexcept {
  return isfinite(x) && !is_zero(x) && !isnormal(x);
}

// FP_NAN, FP_INFINITE, FP_ZERO, FP_SUBNORMAL or FP_NORMAL, as std::fpclassify.
template <Descriptor D>
LPLAB_HD constexpr int fpclassify(Float<D> x) noexcept {
  if (isnan(x)) return FP_NAN;
  if (isinf(x)) return FP_INFINITE;
  if (is_zero(x)) return FP_ZERO;
  return isnormal(x) ? FP_NORMAL : FP_SUBNORMAL;
}

// Negation flips the sign bit (IEEE 754-2019 5.5.1), except where the result
// would not be a code of the same value class: the fnuz zero stays zero and
// its NaN stays NaN, and in an unsigned format only NaN can be negated.
//
// An integer negates in two's complement and wraps, as ml_dtypes' intN and
// C's int8_t do after conversion: -(-8) is -8 in int4; in an unsigned
// integer -x is 2^N - x.
template <Descriptor D>
LPLAB_HD constexpr Float<D> operator-(Float<D> x) noexcept {
  using L = detail::Layout<D>;
  if constexpr (D.encoding == Encoding::integer) {
    return Float<D>::from_bits(0 - static_cast<std::uint64_t>(x.bits()));
  } else if constexpr (!D.is_signed) {
    return isnan(x) ? x : Float<D>::from_bits(L::nan_code);
  } else if constexpr (D.encoding == Encoding::fnuz) {
    if ((x.bits() & L::mag_mask) == 0) return x;
  }
  return Float<D>::from_bits(x.bits() ^ L::sign_mask);
}

template <Descriptor D>
LPLAB_HD constexpr Float<D> operator+(Float<D> x) noexcept { return x; }

// (An integer's abs is its negation where negative: abs(-8) is -8 in int4, as
// std::abs of the sign-extended value stored back.)
template <Descriptor D>
LPLAB_HD constexpr Float<D> abs(Float<D> x) noexcept {
  if constexpr (D.encoding == Encoding::integer) return signbit(x) ? -x : x;
  if (isnan(x)) return x;
  return Float<D>::from_bits(x.bits() & detail::Layout<D>::mag_mask);
}

namespace detail {
// Position on the number line: magnitude codes are ordered like values, so a
// signed magnitude code orders finite and infinite values (both zeros are 0).
template <Descriptor D>
LPLAB_HD constexpr std::int64_t ordinal(Float<D> x) noexcept {
  if constexpr (D.encoding == Encoding::integer)  // the sign-extended value
    return static_cast<std::int64_t>(x.bits()) - (signbit(x) ? static_cast<std::int64_t>(Layout<D>::sign_mask) * 2 : 0);
  const auto mag = static_cast<std::int64_t>(x.bits() & Layout<D>::mag_mask);
  return signbit(x) ? -mag : mag;
}
}  // namespace detail

// IEEE 754-2019 5.11 comparisons: NaN is unordered, -0 == +0.
template <Descriptor D>
LPLAB_HD constexpr bool operator==(Float<D> a, Float<D> b) noexcept {
  return !isnan(a) && !isnan(b) && detail::ordinal(a) == detail::ordinal(b);
}
template <Descriptor D>
LPLAB_HD constexpr bool operator<(Float<D> a, Float<D> b) noexcept {
  return !isnan(a) && !isnan(b) && detail::ordinal(a) < detail::ordinal(b);
}
template <Descriptor D>
LPLAB_HD constexpr bool operator>(Float<D> a, Float<D> b) noexcept { return b < a; }
template <Descriptor D>
LPLAB_HD constexpr bool operator<=(Float<D> a, Float<D> b) noexcept {
  return !isnan(a) && !isnan(b) && detail::ordinal(a) <= detail::ordinal(b);
}
template <Descriptor D>
LPLAB_HD constexpr bool operator>=(Float<D> a, Float<D> b) noexcept { return b <= a; }
template <Descriptor D>
LPLAB_HD constexpr bool operator!=(Float<D> a, Float<D> b) noexcept { return !(a == b); }

// The next representable value after x in the direction of y (C 7.12.11.3).
// Past the largest finite value comes infinity, or NaN where the format's only
// non-finite code is NaN (E4M3: 448 -> NaN); a format with neither stays at
// max. Toward zero from E8M0's smallest value, which has no zero below it,
// stays at the smallest.
template <Descriptor D>
LPLAB_HD constexpr Float<D> nextafter(Float<D> x, Float<D> y) noexcept {
  using L = detail::Layout<D>;
  if (isnan(x)) return x;
  if (isnan(y)) return y;
  if (x == y) return y;
  const bool up = x < y;  // direction on the number line
  if constexpr (D.encoding == Encoding::integer)  // one step; x < y leaves room
    return Float<D>::from_bits(up ? x.bits() + 1u : x.bits() - 1u);
  if (is_zero(x))  // the smallest subnormal, with the sign of the direction
    return Float<D>::from_bits(up ? 1 : (L::sign_mask | 1));
  const std::uint64_t mag = x.bits() & L::mag_mask;
  const bool away = up != signbit(x);  // magnitude grows
  if (away) {
    if (mag >= L::max_code) {
      if (isinf(x)) return x;
      const bool neg = signbit(x);
      if constexpr (L::has_inf) return Float<D>::from_bits(detail::with_sign<D>(neg, L::inf_code));
      else if constexpr (D.encoding == Encoding::fnuz) return Float<D>::from_bits(L::nan_code);
      else if constexpr (L::has_nan) return Float<D>::from_bits(detail::with_sign<D>(neg, L::nan_code));
      else return x;
    }
    return Float<D>::from_bits(x.bits() + 1);
  }
  if (mag == 0) return x;  // E8M0's smallest value
  if (mag == 1 && D.encoding == Encoding::fnuz) return Float<D>::from_bits(0);
  return Float<D>::from_bits(x.bits() - 1);
}

}  // namespace lplab
