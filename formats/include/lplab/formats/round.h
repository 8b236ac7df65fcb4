// The one rounding algorithm: an exact finite value (sign, significand,
// exponent, sticky bit) to a code of any format, under any rounding and
// overflow policy. Conversions and every arithmetic operation end here.
#pragma once

#include <cstdint>
#include <limits>

#include "lplab/formats/decode.h"
#include "lplab/formats/policy.h"

namespace lplab::detail {

template <Descriptor D>
using code_t = typename Layout<D>::storage;

template <Descriptor D>
LPLAB_HD constexpr code_t<D> with_sign(bool neg, std::uint64_t mag) noexcept {
  using L = Layout<D>;
  return static_cast<code_t<D>>(neg ? (mag | L::sign_mask) : mag);
}

// A NaN result. IEEE targets keep the sign and the leading payload bits and
// set the quiet bit (IEEE 754-2019 6.2.3); fn keeps the sign; fnuz has a single
// NaN. A format without NaN (FP6/FP4) gets +max, as CUDA's conversions and
// PTX cvt ... satfinite give for NaN inputs.
template <Descriptor D>
LPLAB_HD constexpr code_t<D> pack_nan(bool neg, std::uint64_t payload, Flags* flags) noexcept {
  using L = Layout<D>;
  if constexpr (D.encoding == Encoding::ieee) {
    return with_sign<D>(neg, L::inf_code | L::quiet_bit | (payload >> (64 - L::M)));
  } else if constexpr (D.encoding == Encoding::fn) {
    return with_sign<D>(neg, L::nan_code);
  } else if constexpr (D.encoding == Encoding::fnuz) {
    return static_cast<code_t<D>>(L::nan_code);
  } else {
    raise(flags, Flag::invalid);
    return static_cast<code_t<D>>(L::max_code);
  }
}

// NaN produced from non-NaN operands: the default quiet NaN.
template <Descriptor D>
LPLAB_HD constexpr code_t<D> invalid_nan(Flags* flags) noexcept {
  raise(flags, Flag::invalid);
  return pack_nan<D>(false, 0, flags);
}

// A result beyond the largest finite magnitude (an infinite operand, or a
// finite value that rounded past max). `toward_max` is true where IEEE 754
// 7.4 delivers the largest finite number instead of infinity.
template <Descriptor D>
LPLAB_HD constexpr code_t<D> pack_overflow(bool neg, bool toward_max, Overflow o,
                                           Flags* flags) noexcept {
  using L = Layout<D>;
  if (o == Overflow::saturate || toward_max) return with_sign<D>(neg, L::max_code);
  if constexpr (L::has_inf) {
    return with_sign<D>(neg, L::inf_code);
  } else if constexpr (L::has_nan) {  // keeps the sign, as CUDA and ml_dtypes (-464.1 -> 0xFF)
    raise(flags, Flag::invalid);
    return pack_nan<D>(neg, 0, flags);
  } else {
    return with_sign<D>(neg, L::max_code);
  }
}

template <Descriptor D>
LPLAB_HD constexpr code_t<D> pack_infinity(bool neg, Overflow o, Flags* flags) noexcept {
  using L = Layout<D>;
  if (neg && !D.is_signed) return invalid_nan<D>(flags);
  if (L::has_inf && o == Overflow::ieee) return with_sign<D>(neg, L::inf_code);
  raise(flags, Flag::overflow);
  raise(flags, Flag::inexact);
  return pack_overflow<D>(neg, false, o, flags);
}

// Zero: signed where the format has -0; E8M0 has no zero at all, so a zero
// becomes NaN (as ml_dtypes; CUDA's __nv_cvt_float_to_e8m0 gives 2^-127).
template <Descriptor D>
LPLAB_HD constexpr code_t<D> pack_zero(bool neg, Flags* flags) noexcept {
  using L = Layout<D>;
  if constexpr (!L::has_zero) return invalid_nan<D>(flags);
  else return with_sign<D>(neg && L::has_negative_zero, 0);
}

// Rounds value = (-1)^neg * 2^(e - FracBits) * sig, 2^FracBits <= sig <
// 2^(FracBits+1), to format D. (Arithmetic folds the bits it could not keep
// into sig's last bit, a "jammed" sticky bit, so sig is exact enough.)
//
//   sig:  1 f f f f f f f f f f f f f f f f f f f f f f f   (FracBits = 23)
//         |<- kept: M+1 bits ->|<- s bits to drop ------>|
//   s = FracBits - M, plus the extra shift of results below the normal range.
//   Rounding adds an increment below the kept bits and truncates: the carry
//   out of the dropped bits is the round-up.
template <Descriptor D, int FracBits, class U>
LPLAB_HD constexpr code_t<D> round_pack(bool neg, U sig, int e, Round r, Overflow o,
                                        std::uint32_t random, Flags* flags) noexcept {
  using L = Layout<D>;
  constexpr int W = std::numeric_limits<U>::digits;
  static_assert(FracBits + 3 <= W, "sig needs headroom for the rounding increment");

  // Step 1: a format without negative numbers cannot hold this one.
  if (neg && !D.is_signed) return invalid_nan<D>(flags);

  // Step 2: the exponent of the result's quantum, 2^(e_eff - M): the value's
  // own binade, or the lowest binade for values below it.
  const bool below_normal = e < L::emin;
  const int e_eff = below_normal ? L::emin : e;
  const int s = FracBits - L::M + (e_eff - e);  // bits of sig to drop

  // Step 3: round. Past FracBits + 2 dropped bits every bit of sig lies below
  // a quarter ulp and any larger shift gives the same result, so the shift is
  // clamped to stay inside U; only the stochastic fraction needs the true s.
  std::uint64_t kept;
  bool exact;
  if (FracBits <= L::M && s <= 0) {  // widening: nothing to drop
    kept = static_cast<std::uint64_t>(sig) << -s;
    exact = true;
  } else {
    const int sc = s > FracBits + 2 ? FracBits + 2 : s;
    const U mask = static_cast<U>((U{1} << sc) - 1);
    const U half = U{1} << (sc - 1);
    U inc = 0;
    switch (r) {
      case Round::nearest_even: inc = half - 1 + ((sig >> sc) & 1); break;
      case Round::nearest_away: inc = half; break;
      case Round::toward_zero: inc = 0; break;
      case Round::upward: inc = neg ? 0 : mask; break;
      case Round::downward: inc = neg ? mask : 0; break;
      case Round::stochastic: inc = 0; break;
    }
    kept = static_cast<std::uint64_t>((sig + inc) >> sc);
    exact = (sig & mask) == 0;
    if (r == Round::stochastic) {
      // The top 32 bits of the dropped fraction, from the true shift s.
      std::uint32_t frac32;
      if (s <= 32) frac32 = static_cast<std::uint32_t>(static_cast<std::uint64_t>(sig & mask) << (32 - s));
      else if (s - 32 < W) frac32 = static_cast<std::uint32_t>((sig & mask) >> (s - 32));
      else frac32 = 0;
      kept += (static_cast<std::uint64_t>(frac32) + random) >> 32;
    }
  }

  // Step 5: assemble the magnitude code. For a normal result kept is in
  // [2^M, 2^(M+1)], and adding (biased exponent - 1) << M both drops the
  // implicit bit and carries a rounded-up 2^(M+1) into the next binade; for a
  // subnormal result the exponent term is zero.
  std::int64_t code = static_cast<std::int64_t>(kept) +
                      static_cast<std::int64_t>(e_eff + D.bias - 1) *
                          static_cast<std::int64_t>(std::uint64_t{1} << L::M);
  if (!exact) raise(flags, Flag::inexact);
  if constexpr (L::has_zero) {
    if (code < static_cast<std::int64_t>(std::uint64_t{1} << L::M)) raise(flags, Flag::underflow);
    if (code == 0) return pack_zero<D>(neg, flags);
  } else if (below_normal) {  // E8M0: values below the smallest become the smallest
    raise(flags, Flag::underflow);
    if (code < 0) {
      raise(flags, Flag::inexact);
      code = 0;
    }
  }

  // Step 6: overflow, decided after rounding (IEEE 754-2019 7.4).
  if (code > static_cast<std::int64_t>(L::max_code)) {
    raise(flags, Flag::overflow);
    raise(flags, Flag::inexact);
    const bool toward_max = r == Round::toward_zero || (r == Round::upward && neg) ||
                            (r == Round::downward && !neg);
    return pack_overflow<D>(neg, toward_max, o, flags);
  }

  // Step 7: sign.
  return with_sign<D>(neg, static_cast<std::uint64_t>(code));
}

// Conversion between any two formats, on codes.
template <Descriptor To, Descriptor From>
LPLAB_HD constexpr code_t<To> convert_code(code_t<From> x, Round r, Overflow o,
                                           std::uint32_t random, Flags* flags) noexcept {
  using U = std::conditional_t<(Layout<From>::M < 32), std::uint32_t, std::uint64_t>;
  using LF = Layout<From>;
  using LT = Layout<To>;
  // Fast path, nearest-even narrowing of a value that lands in the target's
  // normal range: steps 2-5 collapse to one add and one shift on the code,
  //   code = (mag + (half - 1) + lsb) >> s - (bias_from - bias_to) << M_to
  // with the carry of a round-up running into the exponent field. Anything else
  // (a subnormal or overflowing result, NaN, other roundings) takes the general
  // path below; the two agree on every input (exhaustive tests).
  if constexpr (LF::M > LT::M && To.is_signed) {
    constexpr int s = LF::M - LT::M;
    constexpr std::uint64_t lo_field = static_cast<std::uint64_t>(LT::emin + From.bias);
    constexpr std::uint64_t hi_field = static_cast<std::uint64_t>(LT::emax + From.bias);
    const U mag = static_cast<U>(x & LF::mag_mask);
    const std::uint64_t field = mag >> LF::M;
    if (r == Round::nearest_even && field >= lo_field && field <= hi_field &&
        (!From.has_subnormals || field != 0) && field != LF::exp_field_max) {
      const U rounded = mag + ((U{1} << (s - 1)) - 1) + ((mag >> s) & 1);
      const std::int64_t code = static_cast<std::int64_t>(rounded >> s) -
                                (static_cast<std::int64_t>(From.bias - To.bias) << LT::M);
      if (code <= static_cast<std::int64_t>(LT::max_code)) {
        if ((mag & ((U{1} << s) - 1)) != 0) raise(flags, Flag::inexact);
        return with_sign<To>((x & LF::sign_mask) != 0, static_cast<std::uint64_t>(code));
      }
    }
  }
  const Decoded<U> d = decode<From, U>(x);
  switch (d.kind) {
    case Kind::nan: return pack_nan<To>(d.neg, d.payload, flags);
    case Kind::infinite: return pack_infinity<To>(d.neg, o, flags);
    case Kind::zero: return pack_zero<To>(d.neg, flags);
    case Kind::finite: break;
  }
  return round_pack<To, Layout<From>::M, U>(d.neg, d.sig, d.exp, r, o, random, flags);
}

}  // namespace lplab::detail
