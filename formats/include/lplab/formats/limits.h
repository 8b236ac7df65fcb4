// std::numeric_limits for every lplab format, derived from the same layout as
// finfo (and checked against it in the tests). Members that a format cannot
// give meaningfully (infinity() without infinities, quiet_NaN() without NaN)
// return T(), as the standard prescribes, with has_infinity / has_quiet_NaN false.
#pragma once

#include <limits>

#include "lplab/formats/finfo.h"

namespace std {

template <lplab::Descriptor D>
class numeric_limits<lplab::Float<D>> {
  using T = lplab::Float<D>;
  using L = lplab::detail::Layout<D>;
  using F = lplab::finfo<T>;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = D.is_signed;
  static constexpr bool integer = D.encoding == lplab::Encoding::integer;
  static constexpr bool is_integer = integer;
  static constexpr bool is_exact = integer;
  static constexpr bool has_infinity = L::has_inf;
  static constexpr bool has_quiet_NaN = L::has_nan;
  // IEEE formats with at least two mantissa bits have NaN codes with the quiet bit clear.
  static constexpr bool has_signaling_NaN = D.encoding == lplab::Encoding::ieee && L::M >= 2;
  static constexpr float_denorm_style has_denorm = D.has_subnormals ? denorm_present : denorm_absent;
  static constexpr bool has_denorm_loss = false;
  static constexpr float_round_style round_style = integer ? round_toward_zero : round_to_nearest;
  static constexpr bool is_iec559 =
      D.encoding == lplab::Encoding::ieee && D.is_signed && D.has_subnormals;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = integer ? L::M : L::M + 1;
  static constexpr int digits10 = F::digits10;
  static constexpr int max_digits10 = lplab::detail::decimal_digits_of_bits(L::M + 1) + 2;
  static constexpr int radix = 2;
  // C convention: 2^(min_exponent - 1) is the smallest normal value.
  static constexpr int min_exponent = L::emin + 1;
  static constexpr int max_exponent = L::emax + 1;
  static constexpr int min_exponent10 = [] {  // smallest k with 10^k >= smallest normal
    int k = 0;
    double p = 1.0;
    while (p / 10 >= F::tiny) { p /= 10; --k; }
    while (p < F::tiny) { p *= 10; ++k; }
    return k;
  }();
  static constexpr int max_exponent10 = [] {  // largest k with 10^k <= max
    int k = 0;
    double p = 1.0;
    while (p * 10 <= F::max) { p *= 10; ++k; }
    while (p > F::max) { p /= 10; --k; }
    return k;
  }();
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  // (An integer's min() is its lowest, as std::numeric_limits<int>.)
  static constexpr T min() noexcept {
    if constexpr (integer) return lowest();
    return T::from_bits(D.has_subnormals ? L::mant_mask + 1 : 0);
  }
  static constexpr T lowest() noexcept {
    // Unsigned: zero where the format has one (UE5M3), else its smallest value (E8M0).
    if constexpr (integer) return T::from_bits(L::sign_mask);  // -2^M (two's complement), or 0
    return D.is_signed ? T::from_bits(L::sign_mask | L::max_code) : T::from_bits(0);
  }
  static constexpr T max() noexcept { return T::from_bits(L::max_code); }
  static constexpr T epsilon() noexcept { return integer ? T() : T(F::eps); }
  static constexpr T round_error() noexcept { return integer ? T() : T(0.5); }
  static constexpr T infinity() noexcept { return L::has_inf ? T::from_bits(L::inf_code) : T(); }
  static constexpr T quiet_NaN() noexcept { return L::has_nan ? T::from_bits(L::nan_code) : T(); }
  static constexpr T signaling_NaN() noexcept {
    return has_signaling_NaN ? T::from_bits(L::inf_code | 1) : T();
  }
  static constexpr T denorm_min() noexcept { return integer ? T() : D.has_subnormals ? T::from_bits(1) : min(); }
};

}  // namespace std
