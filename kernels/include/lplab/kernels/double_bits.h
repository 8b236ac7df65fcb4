// binary64 on its bits, portable (LPLAB_HD, no libm): the classification,
// powers of two and exponents the portable core needs in place of isfinite,
// isnan, ldexp and ilogb, so that device code computes what the host does
// (checked against libm in matmul_test).
#pragma once

#include <cstdint>

#include "lplab/formats/config.h"
#include "lplab/formats/value.h"

namespace lplab::kernels::double_bits {

// binary64's constants, as the format core derives them from its descriptor.
using Binary64 = lplab::detail::Layout<lplab::detail::binary64>;
inline constexpr std::uint64_t kExpMask = Binary64::inf_code;  // the exponent field: 0x7FF0'0000'0000'0000
inline constexpr std::uint64_t kSignMask = Binary64::sign_mask;
inline constexpr int kBias = lplab::detail::binary64.bias;  // 1023
static_assert(kExpMask == 0x7FF0'0000'0000'0000 && Binary64::nan_code == 0x7FF8'0000'0000'0000);

LPLAB_HD constexpr std::uint64_t bits_of(double x) noexcept { return lplab::detail::bit_cast<std::uint64_t>(x); }
LPLAB_HD constexpr bool is_finite(double x) noexcept { return (bits_of(x) & kExpMask) != kExpMask; }
LPLAB_HD constexpr bool is_nan(double x) noexcept { return (bits_of(x) & ~kSignMask) > kExpMask; }
LPLAB_HD constexpr double infinity(bool neg) noexcept {
  return lplab::detail::bit_cast<double>(kExpMask | (neg ? kSignMask : 0));
}
LPLAB_HD constexpr double quiet_nan() noexcept { return lplab::detail::bit_cast<double>(Binary64::nan_code); }

// 2^e for a normal exponent, emin = -1022 <= e <= emax = 1023, from its bits.
LPLAB_HD constexpr double pow2(int e) noexcept {
  return lplab::detail::bit_cast<double>(static_cast<std::uint64_t>(e + kBias) << Binary64::M);
}

// x * 2^n (ldexp), exact where the result is normal: at most two
// power-of-two factors, so for |n| up to about 2000.
LPLAB_HD constexpr double scale2(double x, int n) noexcept {
  constexpr int emax = Binary64::emax, emin = Binary64::emin;  // 1023, -1022
  if (n > emax) return x * pow2(emax) * pow2(n - emax);
  if (n < emin) return x * pow2(emin) * pow2(n - emin);
  return x * pow2(n);
}

// floor(log2|x|) of a nonzero finite x (ilogb), subnormals included.
LPLAB_HD constexpr int exponent_of(double x) noexcept {
  const std::uint64_t b = bits_of(x) & ~kSignMask;
  const int field = static_cast<int>(b >> Binary64::M);
  if (field != 0) return field - kBias;
  return lplab::detail::top_bit(b) + Binary64::emin - Binary64::M;  // subnormal: 2^-1074 times its integer
}

}  // namespace lplab::kernels::double_bits
