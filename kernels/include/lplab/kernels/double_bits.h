// binary64 on its bits, portable (LPLAB_HD, no libm): the classification,
// powers of two and exponents the portable core needs in place of isfinite,
// isnan, ldexp and ilogb, so that device code computes what the host does
// (checked against libm in matmul_test).
#pragma once

#include <cstdint>

#include "lplab/formats/config.h"

namespace lplab::kernels::double_bits {

inline constexpr std::uint64_t kExpMask = 0x7FF0'0000'0000'0000;  // the exponent field
inline constexpr std::uint64_t kSignMask = 0x8000'0000'0000'0000;

LPLAB_HD constexpr std::uint64_t bits_of(double x) noexcept { return lplab::detail::bit_cast<std::uint64_t>(x); }
LPLAB_HD constexpr bool is_finite(double x) noexcept { return (bits_of(x) & kExpMask) != kExpMask; }
LPLAB_HD constexpr bool is_nan(double x) noexcept { return (bits_of(x) & ~kSignMask) > kExpMask; }
LPLAB_HD constexpr double infinity(bool neg) noexcept {
  return lplab::detail::bit_cast<double>(kExpMask | (neg ? kSignMask : 0));
}
LPLAB_HD constexpr double quiet_nan() noexcept {
  return lplab::detail::bit_cast<double>(kExpMask | (std::uint64_t{1} << 51));
}

// 2^e for a normal exponent, -1022 <= e <= 1023, from its bits.
LPLAB_HD constexpr double pow2(int e) noexcept {
  return lplab::detail::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
}

// x * 2^n (ldexp), exact where the result is normal: at most two
// power-of-two factors, so for |n| up to about 2000.
LPLAB_HD constexpr double scale2(double x, int n) noexcept {
  if (n > 1023) return x * pow2(1023) * pow2(n - 1023);
  if (n < -1022) return x * pow2(-1022) * pow2(n + 1022);
  return x * pow2(n);
}

// floor(log2|x|) of a nonzero finite x (ilogb), subnormals included.
LPLAB_HD constexpr int exponent_of(double x) noexcept {
  const std::uint64_t b = bits_of(x) & ~kSignMask;
  const int field = static_cast<int>(b >> 52);
  if (field != 0) return field - 1023;
  return lplab::detail::top_bit(b) - 1074;  // subnormal: 2^-1074 times its integer
}

}  // namespace lplab::kernels::double_bits
