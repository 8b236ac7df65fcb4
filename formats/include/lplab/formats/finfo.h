// finfo<T>: the format's constants, every field of torch.finfo and of
// numpy/ml_dtypes finfo, plus what neither reports. All exact and constexpr.
#pragma once

#include <cstdint>

#include "lplab/formats/value.h"

namespace lplab {

namespace detail {
// Largest d with 10^d <= 2^n: floor(n * log10(2)) without floating point.
constexpr int decimal_digits_of_bits(int n) {
  int d = 0;
  for (std::uint64_t p = 10; p <= (std::uint64_t{1} << n); p *= 10) ++d;
  return d;
}

// 10^-d correctly rounded, as Python's 10 ** -d that torch and numpy use.
inline constexpr double kNegativePowersOfTen[] = {1e0,  1e-1, 1e-2,  1e-3,  1e-4,  1e-5,
                                                  1e-6, 1e-7, 1e-8,  1e-9,  1e-10, 1e-11,
                                                  1e-12, 1e-13, 1e-14, 1e-15, 1e-16};

template <class T>
constexpr double decode_value(std::uint64_t code) {
  return static_cast<double>(T::from_bits(code));
}
}  // namespace detail

template <class T>
struct finfo;

template <Descriptor D>
struct finfo<Float<D>> {
 private:
  using T = Float<D>;
  using L = detail::Layout<D>;
  static constexpr int p = L::M + 1;  // precision in bits, the implicit one included
  static constexpr std::uint64_t one_code = static_cast<std::uint64_t>(D.bias) << L::M;
  static_assert(detail::decode_value<T>(one_code) == 1.0, "finfo needs 1.0 to be representable");

 public:
  static constexpr const char* name = D.name.text;
  static constexpr Descriptor descriptor = D;

  // --- torch.finfo ---
  static constexpr int bits = L::bits;
  // Distance from 1.0 to the next larger value.
  static constexpr double eps = detail::decode_value<T>(one_code + 1) - 1.0;
  static constexpr double max = detail::decode_value<T>(L::max_code);
  // The lowest finite value: -max, or for an unsigned format its smallest value
  // (ml_dtypes: float8_e8m0fnu min = 2^-127).
  static constexpr double min = D.is_signed ? -max : detail::decode_value<T>(0);
  static constexpr double tiny = detail::exp2i(L::emin);
  static constexpr double smallest_normal = tiny;
  // torch: 10^-digits10, digits10 = floor((p - 1) * log10(2)) (c10 numeric_limits).
  static constexpr int digits10 = detail::decimal_digits_of_bits(p - 1);
  static constexpr double resolution_torch = detail::kNegativePowersOfTen[digits10];

  // --- numpy / ml_dtypes finfo ---
  // Distance from 1.0 to the next smaller value (a subnormal step where 1.0 is
  // the smallest normal, as in FP6 E2M3 and FP4).
  static constexpr double epsneg = 1.0 - detail::decode_value<T>(one_code - 1);
  static constexpr double smallest_subnormal = detail::exp2i(L::emin - (D.has_subnormals ? L::M : 0));
  static constexpr int nmant = L::M;
  static constexpr int nexp = L::E;
  static constexpr int iexp = L::E;
  static constexpr int machep = -L::M;  // eps = 2^machep
  static constexpr int negep = [] {     // epsneg = 2^negep
    int e = 0;
    for (double v = 1.0; v > epsneg; v /= 2) --e;
    return e;
  }();
  static constexpr int minexp = L::emin;      // smallest normal = 2^minexp
  static constexpr int maxexp = L::emax + 1;  // smallest power of two that overflows
  // numpy: floor(-log10(eps)); ml_dtypes sets 1 by hand for every 8-bit format
  // (its _finfo.py), which lplab follows so that the two agree.
  static constexpr int precision = bits == 8 ? 1 : detail::decimal_digits_of_bits(L::M);
  // numpy/ml_dtypes: 10^-precision rounded into the format (e4m3fn: 0.1015625).
  static constexpr double resolution_numpy =
      static_cast<double>(T(detail::kNegativePowersOfTen[precision]));

  // --- beyond both ---
  static constexpr bool has_infinity = L::has_inf;
  static constexpr bool has_nan = L::has_nan;
  static constexpr bool has_negative_zero = L::has_negative_zero;
  static constexpr bool has_zero = L::has_zero;
  static constexpr bool has_subnormals = D.has_subnormals;
  static constexpr bool is_signed = D.is_signed;
  static constexpr int exponent_bits = L::E;
  static constexpr int mantissa_bits = L::M;
  static constexpr int bias = D.bias;
  static constexpr Encoding encoding = D.encoding;
  static constexpr std::uint64_t max_code = L::max_code;
  // Codes: the canonical quiet NaN and +infinity this library produces.
  static constexpr std::uint64_t nan_code = L::nan_code;
  static constexpr std::uint64_t inf_code = L::inf_code;
  static constexpr std::uint64_t nan_codes = [] {  // how many codes are NaN
    const std::uint64_t per_sign = D.encoding == Encoding::ieee ? (std::uint64_t{1} << L::M) - 1
                                   : D.encoding == Encoding::fn ? 1
                                                                : 0;
    if (D.encoding == Encoding::fnuz) return std::uint64_t{1};
    return per_sign * (D.is_signed ? 2 : 1);
  }();
  // Under round-to-nearest-even, values from max up to this midpoint round to
  // max; the midpoint itself is a tie that goes to the even neighbour.
  static constexpr double overflow_threshold = max + detail::exp2i(L::emax - L::M - 1);
  // Whether that tie overflows: yes when max's integral significand is odd
  // (e5m2 61440, float16 65520, and E8M0 whose significand is always 1), no
  // when even (e4m3fn: 464 rounds to 448).
  static constexpr bool threshold_tie_overflows = L::M == 0 || (L::max_code & 1) != 0;
  static constexpr std::uint64_t finite_codes =
      (std::uint64_t{1} << L::bits) - nan_codes - (L::has_inf ? (D.is_signed ? 2 : 1) : 0);
  static constexpr std::uint64_t finite_values = finite_codes - (L::has_negative_zero ? 1 : 0);
  // Binades holding normal values, and all nonzero values: from the smallest
  // subnormal 2^(emin - M) to max's binade 2^emax.
  static constexpr int normal_binades = L::emax - L::emin + 1;
  static constexpr int binades = L::emax - (L::emin - (D.has_subnormals ? L::M : 0)) + 1;
};

}  // namespace lplab
