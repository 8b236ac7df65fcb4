// The one rounding algorithm: an exact finite value (sign, significand,
// exponent) to a code of any format, under any rounding and
// overflow policy. Conversions and every arithmetic operation end here.
#pragma once

#include <cstdint>
#include <limits>

#include "lplab/formats/decode.h"
#include "lplab/formats/policy.h"

namespace lplab::detail {

template <Descriptor D>
using code_t = typename Layout<D>::storage;

// The code of a signed magnitude: the sign bit set, or for an integer format
// two's complement (int4: 8 -> 0b1000, 1 -> 0b1111).
template <Descriptor D>
LPLAB_HD constexpr code_t<D> with_sign(bool neg, std::uint64_t mag) noexcept {
  using L = Layout<D>;
  if constexpr (D.encoding == Encoding::integer)
    return static_cast<code_t<D>>((neg ? 0 - mag : mag) & (L::sign_mask | L::mag_mask));
  return static_cast<code_t<D>>(neg ? (mag | L::sign_mask) : mag);
}

// A NaN result. IEEE targets keep the sign and the leading payload bits and
// set the quiet bit (IEEE 754-2019 6.2.3); fn keeps the sign; fnuz has a single
// NaN. A format without NaN (FP6/FP4) gets +max, as CUDA's conversions and
// PTX cvt ... satfinite give for NaN inputs; an integer gets 0, as PTX's cvt
// to .s8/.u8 ("NaN results are converted to 0") and ml_dtypes' astype.
template <Descriptor D>
LPLAB_HD constexpr code_t<D> pack_nan(bool neg, std::uint64_t payload, Flags* flags) noexcept {
  using L = Layout<D>;
  if constexpr (D.encoding == Encoding::integer) {
    raise(flags, Flag::invalid);
    return 0;
  } else if constexpr (D.encoding == Encoding::ieee) {
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

// An infinite operand. Into an integer: wrap-around has no low bits to keep,
// so 0 and invalid (ml_dtypes' astype gives 0); otherwise the end of the
// range it points to (PTX cvt.sat: +inf -> 127, -inf -> -128 or 0 unsigned).
template <Descriptor D>
LPLAB_HD constexpr code_t<D> pack_infinity(bool neg, Overflow o, Flags* flags) noexcept {
  using L = Layout<D>;
  if constexpr (D.encoding == Encoding::integer) {
    if (o == Overflow::wrap) return invalid_nan<D>(flags);
    raise(flags, Flag::overflow);
    raise(flags, Flag::inexact);
    return !neg ? static_cast<code_t<D>>(L::max_code) : static_cast<code_t<D>>(L::sign_mask);
  }
  if (neg && !D.is_signed) return invalid_nan<D>(flags);
  // (Overflow::wrap is ieee in a floating-point format.)
  if (L::has_inf && o != Overflow::saturate) return with_sign<D>(neg, L::inf_code);
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

// What round-by-truncation adds below the kept bits for rounding r, where
// `mask` covers the dropped bits and `lsb` is the kept integer's last bit: a
// carry out of the dropped bits is the round-up. (Stochastic rounding adds its
// random bits separately.)
template <Round r, class U>
LPLAB_HD constexpr U round_increment(U mask, U lsb, bool neg) noexcept {
  if constexpr (r == Round::nearest_even) return (mask >> 1) + lsb;
  else if constexpr (r == Round::nearest_away) return (mask >> 1) + 1;
  else if constexpr (r == Round::upward) return neg ? 0 : mask;
  else if constexpr (r == Round::downward) return neg ? mask : 0;
  else return 0;
}

// Step 3 of round_pack_as (and of its integer twin): sig rounded with its
// last s > 0 bits dropped. Past FracBits + 2 dropped bits every bit of sig
// lies below a quarter ulp and any larger shift gives the same result, so
// the shift is clamped to stay inside U; only the stochastic fraction (the
// top 32 bits of the dropped part, plus the random bits: a carry past 2^32
// rounds up) reads the true s.
struct Dropped {
  std::uint64_t kept;
  bool exact;
};
template <int FracBits, Round r, class U>
LPLAB_HD constexpr Dropped round_dropped(bool neg, U sig, int s, std::uint32_t random) noexcept {
  constexpr int W = std::numeric_limits<U>::digits;
  const int sc = s > FracBits + 2 ? FracBits + 2 : s;
  const U mask = static_cast<U>((U{1} << sc) - 1);
  const U inc = round_increment<r>(mask, static_cast<U>((sig >> sc) & 1), neg);
  Dropped d{static_cast<std::uint64_t>((sig + inc) >> sc), (sig & mask) == 0};
  if constexpr (r == Round::stochastic) {
    std::uint32_t frac32;
    if (s <= 32) frac32 = static_cast<std::uint32_t>(static_cast<std::uint64_t>(sig & mask) << (32 - s));
    else if (s - 32 < W) frac32 = static_cast<std::uint32_t>((sig & mask) >> (s - 32));
    else frac32 = 0;
    d.kept += (static_cast<std::uint64_t>(frac32) + random) >> 32;
  } else {
    (void)random;
  }
  return d;
}

// round_pack_as for an integer format: the value (-1)^neg * sig *
// 2^(e - FracBits) rounded to an integer (quantum 2^0), then fitted to the
// format's range [-2^M, 2^M - 1] (signed) or [0, 2^M - 1]:
//   1. s = FracBits - e bits of sig lie below the units digit; none when
//      s <= 0 (the value is an integer already);
//   2. kept = (sig + increment) >> s, as round_pack_as's step 3, plus the
//      stochastic carry;
//   3. out of range: saturate (Overflow::ieee and saturate alike: an integer
//      has neither infinity nor NaN) or, under Overflow::wrap, keep the low
//      bits of the rounded integer, two's complement (C's conversion between
//      integer types; ml_dtypes' astype is toward_zero + wrap);
//   4. two's complement.
// Flags: inexact where rounding changed the value, underflow where a nonzero
// value became 0, overflow (and inexact) out of range.
template <Descriptor D, int FracBits, Round r, class U>
LPLAB_HD constexpr code_t<D> round_pack_integer_as(bool neg, U sig, int e, Overflow o, std::uint32_t random,
                                                   Flags* flags) noexcept {
  using L = Layout<D>;
  constexpr std::uint64_t width_mask = L::sign_mask | L::mag_mask;
  // Step 1: bits below the units digit.
  const int s = FracBits - e;
  std::uint64_t kept;  // the rounded magnitude; only its low 64 bits where it is huge
  bool exact = true, huge = false;
  if (s <= 0) {
    kept = -s < 64 ? static_cast<std::uint64_t>(sig) << -s : 0;
    // At least 2^63 (bits shifted out): past every integer format's range.
    huge = -s >= 64 || (kept >> -s) != static_cast<std::uint64_t>(sig);
  } else {
    // Step 2: round, as round_pack_as's step 3.
    const Dropped d = round_dropped<FracBits, r>(neg, sig, s, random);
    kept = d.kept;
    exact = d.exact;
  }
  if (!exact) {
    raise(flags, Flag::inexact);
    if (kept == 0) raise(flags, Flag::underflow);
  }
  // Step 3: the range, which reaches -2^M below zero where signed.
  const std::uint64_t limit = neg ? (D.is_signed ? L::sign_mask : 0) : L::max_code;
  if (huge || kept > limit) {
    raise(flags, Flag::overflow);
    raise(flags, Flag::inexact);
    if (o != Overflow::wrap) kept = limit;
  }
  // Step 4: two's complement.
  return with_sign<D>(neg, kept & width_mask);
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
template <Descriptor D, int FracBits, Round r, class U>
LPLAB_HD constexpr code_t<D> round_pack_as(bool neg, U sig, int e, Overflow o,
                                           std::uint32_t random, Flags* flags) noexcept {
  using L = Layout<D>;
  constexpr int W = std::numeric_limits<U>::digits;
  static_assert(FracBits + 3 <= W, "sig needs headroom for the rounding increment");

  if constexpr (D.encoding == Encoding::integer)
    return round_pack_integer_as<D, FracBits, r, U>(neg, sig, e, o, random, flags);
  // Step 1: a format without negative numbers cannot hold this one.
  if (neg && !D.is_signed) return invalid_nan<D>(flags);

  // Step 2: the exponent of the result's quantum, 2^(e_eff - M): the value's
  // own binade, or the lowest binade for values below it.
  const bool below_normal = e < L::emin;
  const int e_eff = below_normal ? L::emin : e;
  const int s = FracBits - L::M + (e_eff - e);  // bits of sig to drop

  // Step 3: round (round_dropped), unless nothing is dropped.
  std::uint64_t kept;
  bool exact;
  if (FracBits <= L::M && s <= 0) {  // widening: nothing to drop
    kept = static_cast<std::uint64_t>(sig) << -s;
    exact = true;
  } else {
    const Dropped d = round_dropped<FracBits, r>(neg, sig, s, random);
    kept = d.kept;
    exact = d.exact;
  }

  // Step 4: assemble the magnitude code. For a normal result kept is in
  // [2^M, 2^(M+1)], and adding (biased exponent - 1) << M both drops the
  // implicit bit and carries a rounded-up 2^(M+1) into the next binade; for a
  // subnormal result the exponent term is zero.
  std::int64_t code = static_cast<std::int64_t>(kept) +
                      static_cast<std::int64_t>(e_eff + D.bias - 1) *
                          static_cast<std::int64_t>(std::uint64_t{1} << L::M);
  //
  // Underflow under default exception handling (IEEE 754-2019 7.5): the
  // result is tiny and inexact. Tiny: the result rounded at the format's own
  // precision, subnormal quantum included, lies below the smallest normal
  // 2^emin (code < 2^M); a value that rounds up to 2^emin is not tiny. An
  // exact subnormal result (2^-24 into float16) raises nothing.
  if (!exact) raise(flags, Flag::inexact);
  if constexpr (L::has_zero) {
    if (!exact && code < static_cast<std::int64_t>(std::uint64_t{1} << L::M)) raise(flags, Flag::underflow);
    if (code == 0) return pack_zero<D>(neg, flags);
  } else if (below_normal) {  // E8M0: values below the smallest become the smallest
    // Tiny, and never exact (E8M0 holds nothing below 2^emin): a clamp up
    // or a rounding to 2^emin, underflow and inexact both.
    raise(flags, Flag::underflow);
    if (code < 0) {
      raise(flags, Flag::inexact);
      code = 0;
    }
  }

  // Step 5: overflow, decided after rounding (IEEE 754-2019 7.4).
  if (code > static_cast<std::int64_t>(L::max_code)) {
    raise(flags, Flag::overflow);
    raise(flags, Flag::inexact);
    const bool toward_max = r == Round::toward_zero || (r == Round::upward && neg) ||
                            (r == Round::downward && !neg);
    return pack_overflow<D>(neg, toward_max, o, flags);
  }

  // Step 6: sign.
  return with_sign<D>(neg, static_cast<std::uint64_t>(code));
}

// The rounding mode is a template parameter of the algorithm, so that each
// mode compiles to straight-line code; this dispatches a run-time mode once.
template <class F>
LPLAB_HD constexpr decltype(auto) with_round(Round r, F&& f) {
  switch (r) {
    case Round::nearest_away: return f.template operator()<Round::nearest_away>();
    case Round::toward_zero: return f.template operator()<Round::toward_zero>();
    case Round::upward: return f.template operator()<Round::upward>();
    case Round::downward: return f.template operator()<Round::downward>();
    case Round::stochastic: return f.template operator()<Round::stochastic>();
    case Round::nearest_even: break;
  }
  return f.template operator()<Round::nearest_even>();
}

template <Descriptor D, int FracBits, class U>
LPLAB_HD constexpr code_t<D> round_pack(bool neg, U sig, int e, Round r, Overflow o,
                                        std::uint32_t random, Flags* flags) noexcept {
  return with_round(r, [&]<Round R>() {
    return round_pack_as<D, FracBits, R, U>(neg, sig, e, o, random, flags);
  });
}

// Conversion between any two formats, on codes.
template <Descriptor To, Descriptor From, Round r>
LPLAB_HD constexpr code_t<To> convert_code_as(code_t<From> x, Overflow o, std::uint32_t random,
                                              Flags* flags) noexcept {
  using U = std::conditional_t<(Layout<From>::M < 32), std::uint32_t, std::uint64_t>;
  using LF = Layout<From>;
  using LT = Layout<To>;
  // Two fast paths for narrowing conversions; every input they decline takes
  // the general path at the end, and the two agree on every input (the
  // exhaustive tests run both).
  //
  // 1. Both formats have the same exponent field (bfloat16 from float32):
  // the target's values are the source's with the last s mantissa bits
  // dropped, subnormals included, and the sign lands in place by the shift:
  //   code = (x + increment) >> s
  // for every finite input whose result is finite (and, when flags are
  // asked for, not tiny: the general path decides underflow).
  constexpr bool same_exponent_field =
      LF::E == LT::E && From.bias == To.bias && From.has_subnormals == To.has_subnormals &&
      From.encoding == Encoding::ieee && To.encoding == Encoding::ieee && From.is_signed &&
      To.is_signed && LF::M > LT::M;
  if constexpr (same_exponent_field && r != Round::stochastic) {
    constexpr int s = LF::M - LT::M;
    constexpr U mask = (U{1} << s) - 1;
    const U mag = static_cast<U>(x & LF::mag_mask);
    const bool neg = (x & LF::sign_mask) != 0;
    const U inc = round_increment<r>(mask, static_cast<U>((mag >> s) & 1), neg);
    const std::uint64_t rounded_mag = static_cast<std::uint64_t>((mag + inc) >> s);
    // NaN and infinite inputs fail the first test too: their rounded
    // magnitude is the target's infinity or above.
    if (rounded_mag <= LT::max_code && (flags == nullptr || rounded_mag > LT::mant_mask)) {
      if ((mag & mask) != 0) raise(flags, Flag::inexact);
      return static_cast<code_t<To>>((static_cast<U>(x) + inc) >> s);
    }
  }
  // 2. Otherwise, a normal value that lands in the target's normal range:
  // steps 2-4 collapse to an add and a shift on the magnitude code,
  //   code = (mag + increment) >> s  -  (bias_from - bias_to) << M_to,
  // the carry of a round-up running into the exponent field. Subnormal and
  // overflowing results, specials, stochastic rounding and negative values
  // into an unsigned format are declined.
  constexpr bool integer = From.encoding == Encoding::integer || To.encoding == Encoding::integer;
  if constexpr (!same_exponent_field && !integer && LF::M > LT::M && From.is_signed &&
                r != Round::stochastic) {
    constexpr int s = LF::M - LT::M;
    // Source exponent fields whose values are normal in both formats.
    constexpr std::int64_t lo = std::int64_t{LT::emin} + From.bias;
    constexpr std::int64_t hi = std::int64_t{LT::emax} + From.bias;
    constexpr std::uint64_t lo_field = lo < 1 ? 1 : static_cast<std::uint64_t>(lo);
    constexpr std::uint64_t hi_field =
        hi >= static_cast<std::int64_t>(LF::exp_field_max) ? LF::exp_field_max - 1
                                                          : static_cast<std::uint64_t>(hi);
    constexpr U lo_mag = static_cast<U>(lo_field << LF::M);
    constexpr U span = static_cast<U>((hi_field + 1 - lo_field) << LF::M);
    constexpr U mask = (U{1} << s) - 1;
    const U mag = static_cast<U>(x & LF::mag_mask);
    // For an unsigned target the sign bit stays in, so negatives fail the test.
    const U key = To.is_signed ? mag : static_cast<U>(x);
    if (static_cast<U>(key - lo_mag) < span) {
      const bool neg = (x & LF::sign_mask) != 0;
      // The kept integer's last bit is the implicit bit itself (always 1)
      // when the target has no mantissa bits (E8M0).
      const U lsb = LT::M == 0 ? U{1} : static_cast<U>((mag >> s) & 1);
      const U inc = round_increment<r>(mask, lsb, neg);
      const std::uint64_t code = static_cast<std::uint64_t>((mag + inc) >> s) -
                                 (static_cast<std::uint64_t>(From.bias - To.bias) << LT::M);
      if (code <= LT::max_code) {
        if ((mag & mask) != 0) raise(flags, Flag::inexact);
        return with_sign<To>(neg, code);
      }
    }
  }
  // 3. A finite value far outside the target's range rounds as every other
  // value of its sign out there does, so the general path runs on one
  // representative, with constant arguments the compiler folds:
  // - far below: e < emin - M - 2 (source subnormals included). Step 3 of
  //   round_pack_as then clamps its shift, and every such value gives the
  //   same code and flags as 2^(emin - M - 3) (zero or the smallest value,
  //   by direction; underflow, inexact);
  // - far above: e > emax. Every such value overflows in step 5, as 2^(emax+1).
  // Stochastic rounding is declined: its fraction reads the true shift. This
  // is most of a sweep over every float into a narrow format (the exhaustive
  // tests check each input against CUDA's conversion and the reference).
  if constexpr (From.encoding == Encoding::ieee && !integer && From.is_signed && LF::M > LT::M &&
                r != Round::stochastic) {
    constexpr int tiny_e = LT::emin - LT::M - 3;  // the representative's exponent
    constexpr std::int64_t tiny_field = std::int64_t{tiny_e} + 1 + From.bias;  // first field kept out
    constexpr std::int64_t huge_field = std::int64_t{LT::emax} + 1 + From.bias;
    const U mag = static_cast<U>(x & LF::mag_mask);
    const bool neg = (x & LF::sign_mask) != 0;
    if constexpr (tiny_field > 0) {
      if (mag != 0 && mag < (static_cast<U>(tiny_field) << LF::M))
        return round_pack_as<To, LF::M, r, U>(neg, U{1} << LF::M, tiny_e, o, 0, flags);
    }
    if constexpr (huge_field < static_cast<std::int64_t>(LF::exp_field_max)) {
      if (mag >= (static_cast<U>(huge_field) << LF::M) && mag < static_cast<U>(LF::inf_code))
        return round_pack_as<To, LF::M, r, U>(neg, U{1} << LF::M, LT::emax + 1, o, 0, flags);
    }
  }
  const Decoded<U> d = decode<From, U>(x);
  switch (d.kind) {
    case Kind::nan: return pack_nan<To>(d.neg, d.payload, flags);
    case Kind::infinite: return pack_infinity<To>(d.neg, o, flags);
    case Kind::zero: return pack_zero<To>(d.neg, flags);
    case Kind::finite: break;
  }
  return round_pack_as<To, Layout<From>::M, r, U>(d.neg, d.sig, d.exp, o, random, flags);
}

template <Descriptor To, Descriptor From>
LPLAB_HD constexpr code_t<To> convert_code(code_t<From> x, Round r, Overflow o,
                                           std::uint32_t random, Flags* flags) noexcept {
  return with_round(r, [&]<Round R>() { return convert_code_as<To, From, R>(x, o, random, flags); });
}

}  // namespace lplab::detail
