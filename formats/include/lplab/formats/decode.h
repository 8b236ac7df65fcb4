// Decoding a code of any format into sign, class, and an exact significand and
// exponent: the common input of conversion and arithmetic.
#pragma once

#include <cstdint>

#include "lplab/formats/descriptor.h"

namespace lplab {

// What a code or a number is: zero, a finite nonzero number, an infinity or
// NaN (the class of IEEE 754-2019 section 5.7.2, without the sign and the
// normal/subnormal split). Decoded codes and numbers read from text
// (decimal.h's Decimal) carry it.
enum class ValueKind : std::uint8_t { zero, finite, infinite, nan };

}  // namespace lplab

namespace lplab::detail {

// ValueKind by the name the core's internals use.
using Kind = ValueKind;

// value = (-1)^neg * sig * 2^(exp - M) with 2^M <= sig < 2^(M+1) for finite
// nonzero codes, M being the format's mantissa bits: subnormals come out
// normalized. `payload` holds a NaN's mantissa field left-aligned in 64 bits.
template <class U>
struct Decoded {
  Kind kind;
  bool neg;
  U sig;
  int exp;
  std::uint64_t payload;
};

template <Descriptor D, class U = typename Layout<D>::storage>
LPLAB_HD constexpr Decoded<U> decode(std::uint64_t code) noexcept {
  using L = Layout<D>;
  const bool neg = (code & L::sign_mask) != 0;
  if constexpr (D.encoding == Encoding::integer) {
    // An integer: its magnitude (two's complement negated), normalized.
    const std::uint64_t v = (neg ? 0 - code : code) & (L::sign_mask | L::mag_mask);
    if (v == 0) return {Kind::zero, false, 0, 0, 0};
    const int t = top_bit(v);  // v <= 2^M, so t <= M and the shift is exact
    return {Kind::finite, neg, static_cast<U>(v << (L::M - t)), t, 0};
  }
  const std::uint64_t mag = code & L::mag_mask;
  // Step 1: NaN and infinity, per encoding.
  if constexpr (D.encoding == Encoding::ieee) {
    if (mag > L::inf_code) {
      const std::uint64_t payload = L::M > 0 ? (mag & L::mant_mask) << (64 - L::M) : 0;
      return {Kind::nan, neg, 0, 0, payload};
    }
    if (mag == L::inf_code) return {Kind::infinite, neg, 0, 0, 0};
  } else if constexpr (D.encoding == Encoding::fn) {
    if (mag == L::mag_mask) return {Kind::nan, neg, 0, 0, 0};
  } else if constexpr (D.encoding == Encoding::fnuz) {
    if (code == L::sign_mask) return {Kind::nan, true, 0, 0, 0};
  }
  const std::uint64_t field = mag >> L::M;
  const U mant = static_cast<U>(mag & L::mant_mask);
  // Step 2: zero and subnormals (exponent field zero), normalized.
  if (D.has_subnormals && field == 0) {
    if (mant == 0) return {Kind::zero, neg, 0, 0, 0};
    const int shift = L::M - top_bit(mant);
    return {Kind::finite, neg, static_cast<U>(mant << shift), L::emin - shift, 0};
  }
  // Step 3: normal codes.
  return {Kind::finite, neg, static_cast<U>(mant | (U{1} << L::M)),
          static_cast<int>(field) - D.bias, 0};
}

}  // namespace lplab::detail
