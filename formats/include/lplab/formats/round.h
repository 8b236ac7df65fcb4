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

// Rounds value = (-1)^neg * 2^(e - FracBits) * (sig + delta), with
// 2^FracBits <= sig < 2^(FracBits+1), to format D. `sticky` says 0 < delta < 1
// (bits lost below sig's last bit); arithmetic needs it, conversions do not.
//
//   sig:  1 f f f f f f f f f f f f f f f f f f f f f f f   (FracBits = 23)
//         |<- kept: M+1 bits ->|R|<- rest ---------------->|
//   with  s = FracBits - M (+ the extra shift of subnormal results)
//   R is the half-ulp bit; R with rest decides the rounding.
template <Descriptor D, int FracBits, class U>
LPLAB_HD constexpr code_t<D> round_pack(bool neg, U sig, int e, bool sticky, Round r, Overflow o,
                                        std::uint32_t random, Flags* flags) noexcept {
  using L = Layout<D>;
  constexpr int W = std::numeric_limits<U>::digits;
  static_assert(FracBits < W);

  // Step 1: a format without negative numbers cannot hold this one.
  if (neg && !D.is_signed) return invalid_nan<D>(flags);

  // Step 2: the exponent of the result's quantum, 2^(e_eff - M): the value's
  // own binade, or the lowest binade for values below it.
  const bool below_normal = e < L::emin;
  const int e_eff = below_normal ? L::emin : e;
  const int s = FracBits - L::M + (e_eff - e);  // bits of sig to discard

  // Step 3: split sig into kept bits and a rounding remainder, compared to half
  // an ulp. frac32 is the top 32 bits of the discarded fraction (stochastic).
  std::uint64_t kept;
  int vs_half;  // -1 below half an ulp, 0 exactly half, +1 above
  bool exact;
  std::uint32_t frac32;
  if (s <= 0) {
    kept = static_cast<std::uint64_t>(sig) << -s;
    exact = !sticky;
    vs_half = -1;
    frac32 = 0;
  } else if (s < W) {
    kept = static_cast<std::uint64_t>(sig >> s);
    const U rem = sig & static_cast<U>((U{1} << s) - 1);
    const U half = U{1} << (s - 1);
    vs_half = rem > half ? 1 : rem < half ? -1 : (sticky ? 1 : 0);
    exact = rem == 0 && !sticky;
    frac32 = static_cast<std::uint32_t>(s >= 32 ? rem >> (s - 32) : rem << (32 - s));
  } else {  // all of sig is discarded; the half-ulp bit is sig's top bit or above it
    kept = 0;
    vs_half = s - 1 > FracBits ? -1 : (sig == (U{1} << FracBits) && !sticky) ? 0 : 1;
    exact = false;
    frac32 = s - 32 < W ? static_cast<std::uint32_t>(sig >> (s - 32)) : 0;
  }

  // Step 4: round the kept integer.
  bool up = false;
  switch (r) {
    case Round::nearest_even: up = vs_half > 0 || (vs_half == 0 && (kept & 1) != 0); break;
    case Round::nearest_away: up = vs_half >= 0; break;
    case Round::toward_zero: up = false; break;
    case Round::upward: up = !exact && !neg; break;
    case Round::downward: up = !exact && neg; break;
    case Round::stochastic:
      up = ((static_cast<std::uint64_t>(frac32) + random) >> 32) != 0;
      break;
  }
  kept += up ? 1 : 0;

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
  const Decoded<U> d = decode<From, U>(x);
  switch (d.kind) {
    case Kind::nan: return pack_nan<To>(d.neg, d.payload, flags);
    case Kind::infinite: return pack_infinity<To>(d.neg, o, flags);
    case Kind::zero: return pack_zero<To>(d.neg, flags);
    case Kind::finite: break;
  }
  return round_pack<To, Layout<From>::M, U>(d.neg, d.sig, d.exp, false, r, o, random, flags);
}

}  // namespace lplab::detail
