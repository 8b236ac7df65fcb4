// SIMD kernels of the bulk conversion, once per Highway target. Included by
// the per-format translation units (convert_format.cpp.in) after
// hwy/foreach_target.h; the include guard toggles per target as Highway asks.
//
// The general steps of both directions are integer code -- no
// floating-point instruction touches a value -- so they cannot depend on
// MXCSR's DAZ/FTZ bits or the rounding mode a caller may have set. Two paths
// use floating-point instructions, and only while the dispatcher found DAZ
// and FTZ clear (EncodeArgs::float_arithmetic_exact): F16C's conversion into
// binary16, whose rounding mode is in its immediate, not MXCSR's; and
// decoding by an exact float multiplication (DecodeVector's kMul). Every
// path equals the scalar core (round.h), which the general steps follow:
//
//   float -> format:  value = sig * 2^(E1 - 150), E1 = max(exponent field, 1)
//     1. split sign and magnitude; sig = mantissa + implicit bit;
//     2. s = bits to drop = 23 - M + max(0, emin - (E1 - 127)), clamped to 25
//        (past that every bit of sig is below a quarter ulp, as in round.h);
//     3. kept = (sig + increment(R)) >> s, plus the stochastic carry;
//     4. code = kept + (max(E1 - 127, emin) + bias - 1) << M: the carry of a
//        round-up runs into the exponent field, subnormals need no case;
//     5. overflow (code > max_code), zero, NaN, infinity and sign per the
//        target's encoding, exactly as round.h's pack_* functions.
//   format -> float:  normal codes move the exponent and mantissa into place
//     and add the bias difference; subnormal codes go through an exact
//     int -> float conversion of their mantissa; specials by encoding.
//
// Lanes the kernel declines (only float subnormals into a format whose
// normal range reaches below float's, i.e. E8M0) are redone by the scalar
// core after the vector store.
#if defined(LPLAB_KERNELS_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LPLAB_KERNELS_CONVERT_INL_H_
#undef LPLAB_KERNELS_CONVERT_INL_H_
#else
#define LPLAB_KERNELS_CONVERT_INL_H_
#endif

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"
#include "kernel_args.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Whether the vector kernels serve format D (every catalog format does; a
// user's format outside these bounds takes the scalar core).
template <Descriptor D>
constexpr bool kVectorFormat = [] {
  using L = lplab::detail::Layout<D>;
  if (L::bits > 16 || L::M >= 23 || L::E > 8) return false;
  if (D.encoding == Encoding::integer) return true;  // (convert_integer-inl.h)
  if (D.has_subnormals) {
    // Signed, or unsigned with a zero (UE5M3): the sign lane is dropped.
    return L::emin - L::M >= -126 || (L::E == 8 && D.bias == 127);
  }
  // Without subnormals: only the E8M0 shape (unsigned, 2^-127 .. 2^127).
  return !D.is_signed && L::E == 8 && L::M == 0 && D.bias == 127;
}();

// The two 16-bit IEEE layouts with paths of their own (F16C for binary16,
// shifts and add-and-truncate for bfloat16): signed, with subnormals.
template <Descriptor D>
constexpr bool kBinary16 = lplab::detail::Layout<D>::E == 5 && lplab::detail::Layout<D>::M == 10 && D.bias == 15 &&
                           D.encoding == Encoding::ieee && D.is_signed && D.has_subnormals;
template <Descriptor D>
constexpr bool kBfloat16 = lplab::detail::Layout<D>::E == 8 && lplab::detail::Layout<D>::M == 7 && D.bias == 127 &&
                           D.encoding == Encoding::ieee && D.is_signed && D.has_subnormals;

// ---------------------------------------------------------------------------
// float -> format, in named steps. EncodeFromFloat gives each vector of
// inputs to the first of these that takes it:
//   a. a whole-array path where the format and policy allow one: F16C's
//      conversion into binary16 (EncodeBinary16F16C), bfloat16's
//      add-and-truncate (EncodeBfloat16Nearest);
//   b. a fast vector, when every lane is in the common range:
//      FastNormalVector (normal in, normal out, one shift for all lanes) or,
//      for the formats with 3 exponent bits or fewer, FastFiniteVector
//      (finite in, no overflow);
//   c. GeneralVector: steps 1-5 of this file's header for any lanes, which
//      declines only float subnormals into E8M0 (redone by EncodeScalarLane);
// and the tail, shorter than a vector, to EncodeScalarLane.

// The codes overflow and the special inputs produce in format D (as round.h's
// pack_* functions).
template <Descriptor D>
struct SpecialCodes {
  using L = lplab::detail::Layout<D>;
  static constexpr std::uint32_t max_code = static_cast<std::uint32_t>(L::max_code);
  static constexpr std::uint32_t nan_code = static_cast<std::uint32_t>(L::nan_code);
  static constexpr std::uint32_t inf_code = static_cast<std::uint32_t>(L::inf_code);
  // IEEE overflow of a finite value: infinity, or NaN in an fn format
  // (invalid), or max where the format has neither.
  static constexpr std::uint32_t ieee_overflow_code = L::has_inf ? inf_code : (L::has_nan ? nan_code : max_code);
  static constexpr bool ieee_overflow_invalid = !L::has_inf && L::has_nan;
};

// Step 3's increment. Added to a significand before its `drop` bits (2^s - 1)
// are shifted out, it rounds as R asks, as round.h's round_increment does:
// to nearest by half an ulp less one, plus the kept part's lowest bit (ties to
// even) or plus one (ties away); upward every dropped bit of a positive value,
// downward of a negative one; toward zero nothing, and stochastic nothing
// either (its carry is added apart). `kept` is the significand shifted right
// by s.
template <Round R, class DU, class V = hn::Vec<DU>>
HWY_INLINE V RoundingIncrement(DU du, V drop, V kept, hn::Mask<DU> negative) {
  if constexpr (R == Round::nearest_even) {
    return hn::Add(hn::ShiftRight<1>(drop), hn::And(kept, hn::Set(du, 1)));
  } else if constexpr (R == Round::nearest_away) {
    return hn::Add(hn::ShiftRight<1>(drop), hn::Set(du, 1));
  } else if constexpr (R == Round::upward) {
    return hn::IfThenZeroElse(negative, drop);
  } else if constexpr (R == Round::downward) {
    return hn::IfThenElseZero(negative, drop);
  } else {
    (void)drop, (void)kept, (void)negative;
    return hn::Zero(du);
  }
}

// One element by the scalar core (round.h), with its flags.
template <Descriptor D, Round R, bool kStats>
HWY_INLINE void EncodeScalarLane(const EncodeArgs& a, lplab::kernels::detail::StochasticKey key, std::size_t j,
                                 FlagCounts& tally) {
  using Code = lplab::detail::code_t<D>;
  const std::uint32_t xb = lplab::detail::bit_cast<std::uint32_t>(a.in[j]);
  const std::uint32_t index_low = static_cast<std::uint32_t>(a.first_index);
  const std::uint32_t bits =
      R == Round::stochastic
          ? lplab::kernels::detail::stochastic_bits_keyed(key, index_low + static_cast<std::uint32_t>(j))
          : 0;
  Flags f;
  static_cast<Code*>(a.out)[j] =
      lplab::detail::convert_code<D, lplab::detail::binary32>(xb, R, a.overflow, bits, kStats ? &f : nullptr);
  if constexpr (kStats) tally.add(f);
}

// Step 3's stochastic carry for the lanes of inputs [i, i + N): 1 where the
// top 32 bits of the dropped fraction (`dropped`, from the unclamped shift
// s; sig < 2^24, so a right shift of 24 or more already gives zero) plus the
// element's random bits -- hash32(hash32(index ^ k0) + k1), random.h's, lane
// by lane -- reach 2^32, else 0.
template <class DU, class V = hn::Vec<DU>>
HWY_INLINE V StochasticCarry(DU du, V dropped, V s, std::size_t i, const EncodeArgs& a,
                             lplab::kernels::detail::StochasticKey key) {
  const V k32 = hn::Set(du, 32);
  const auto s_le_32 = hn::Lt(s, hn::Set(du, 33));  // (Highway 1.0.3 has no unsigned <=)
  const V left = (dropped << hn::Sub(k32, hn::Min(s, k32)));
  const V right = (dropped >> hn::Min(hn::IfThenZeroElse(s_le_32, hn::Sub(s, k32)), hn::Set(du, 31)));
  const V frac32 = hn::IfThenElse(s_le_32, left, right);
  const V idx = hn::Iota(du, static_cast<std::uint32_t>(a.first_index) + static_cast<std::uint32_t>(i));
  auto hash = [&](V v) {
    v = hn::Xor(v, hn::ShiftRight<16>(v));
    v = hn::Mul(v, hn::Set(du, 0x21F0AAADu));
    v = hn::Xor(v, hn::ShiftRight<15>(v));
    v = hn::Mul(v, hn::Set(du, 0x735A2D97u));
    return hn::Xor(v, hn::ShiftRight<15>(v));
  };
  const V bits = hash(hn::Add(hash(hn::Xor(idx, hn::Set(du, key.k0))), hn::Set(du, key.k1)));
  const V sum = hn::Add(frac32, bits);
  return hn::IfThenElseZero(hn::Lt(sum, frac32), hn::Set(du, 1));
}

// The integer formats' kernels (IntegerVector, EncodeIntegers, IntegerToFloat).
#include "convert_integer-inl.h"

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// One vector of floats into binary16 by F16C's vcvtps2ph, rounding as R asks
// (one of the four IEEE directions); under saturation a finite magnitude
// past 65504 is clamped to it first. Valid while MXCSR's DAZ and FTZ are
// clear (EncodeArgs::float_arithmetic_exact).
template <Round R, class DF>
HWY_INLINE void StoreBinary16F16C(DF df, hn::Vec<DF> v, bool saturate, std::uint16_t* out) {
  const hn::RebindToUnsigned<DF> du;
  constexpr int imm = (R == Round::nearest_even  ? _MM_FROUND_TO_NEAREST_INT
                       : R == Round::toward_zero ? _MM_FROUND_TO_ZERO
                       : R == Round::upward      ? _MM_FROUND_TO_POS_INF
                                                 : _MM_FROUND_TO_NEG_INF) |
                      _MM_FROUND_NO_EXC;
  if (saturate) {
    const auto k_mag = hn::Set(du, 0x7FFFFFFFu);
    const auto k_inf = hn::Set(du, 0x7F800000u);
    const auto k_max_mag = hn::Set(du, 0x477FE000u);  // 65504 = 1.9990234375 * 2^15
    const auto xb = hn::BitCast(du, v);
    const auto m = hn::And(xb, k_mag);
    const auto clamp = hn::And(hn::Gt(m, k_max_mag), hn::Not(hn::Gt(m, k_inf)));
    v = hn::BitCast(df, hn::IfThenElse(clamp, hn::Or(k_max_mag, hn::AndNot(k_mag, xb)), xb));
  }
#if HWY_TARGET == HWY_AVX2
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtps_ph(v.raw, imm));
#else
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtps_ph(v.raw, imm));
#endif
}
#endif

// bfloat16 to nearest-even with IEEE overflow, for every non-NaN input
// (finite, infinite or subnormal): the code is the high half of
// x + 0x7FFF + lsb (round.h's first fast path; a carry into the exponent is
// the round-up, into 0x7F80 the overflow). NaNs keep sign and payload and
// get the quiet bit. Returns the 32-bit lanes whose high halves are the codes.
template <class DU, class V = hn::Vec<DU>>
HWY_INLINE V Bfloat16NearestHigh(DU du, V v) {
  const auto y = hn::Add(hn::Add(v, hn::Set(du, 0x7FFFu)), hn::And(hn::ShiftRight<16>(v), hn::Set(du, 1)));
  return hn::IfThenElse(hn::Gt(hn::And(v, hn::Set(du, 0x7FFFFFFFu)), hn::Set(du, 0x7F800000u)),
                        hn::Or(v, hn::Set(du, 0x00400000u)), y);
}

// a. binary16 from float: F16C's vcvtps2ph rounds correctly in the four IEEE
// directions given in its immediate, with IEEE overflow and NaN handling
// equal to round.h's -- while MXCSR's DAZ and FTZ are off, which the
// dispatcher checked (float_arithmetic_exact). Saturation clamps the input
// magnitude to 65504 first. (The exhaustive sweep holds it to the scalar
// core on all 2^32 inputs.) Returns the inputs done, whole vectors from 0.
template <Descriptor D, Round R, bool kStats>
HWY_INLINE std::size_t EncodeBinary16F16C(const EncodeArgs& a) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kBinary16<D> && !kStats && R != Round::stochastic && R != Round::nearest_away) {
    if (!a.float_arithmetic_exact) return 0;
    const hn::ScalableTag<float> df;
    const std::size_t N = hn::Lanes(df);
    const bool saturate = a.overflow == Overflow::saturate;
    auto* out = static_cast<std::uint16_t*>(a.out);
    std::size_t i = 0;
    for (; i + N <= a.n; i += N) StoreBinary16F16C<R>(df, hn::LoadU(df, a.in + i), saturate, out + i);
    return i;
  }
#endif
  (void)a;
  return 0;
}

// a. bfloat16 (float's exponent field, 16 bits dropped) under nearest-even
// with IEEE overflow (Bfloat16NearestHigh). Two vectors' high halves are
// gathered by one ConcatOdd instead of two narrowings.
// Returns the inputs done, pairs of whole vectors from 0.
template <Descriptor D, Round R, bool kStats>
HWY_INLINE std::size_t EncodeBfloat16Nearest(const EncodeArgs& a) {
#if HWY_TARGET == HWY_SCALAR
  // One lane: the same steps as a plain loop, which the compiler vectorizes
  // for the baseline ISA.
  if constexpr (kBfloat16<D> && R == Round::nearest_even && !kStats) {
    if (a.overflow == Overflow::saturate) return 0;
    auto* out = static_cast<std::uint16_t*>(a.out);
    for (std::size_t i = 0; i < a.n; ++i) {
      const std::uint32_t u = lplab::detail::bit_cast<std::uint32_t>(a.in[i]);
      const std::uint32_t r = (u & 0x7FFFFFFFu) > 0x7F800000u ? u | 0x00400000u : u + 0x7FFFu + ((u >> 16) & 1u);
      out[i] = static_cast<std::uint16_t>(r >> 16);
    }
    return a.n;
  }
#else  // (one lane: nothing to concatenate)
  if constexpr (kBfloat16<D> && R == Round::nearest_even && !kStats) {
    if (a.overflow == Overflow::saturate) return 0;
    const hn::ScalableTag<std::uint32_t> du;
    const hn::RebindToFloat<decltype(du)> df;
    const hn::Repartition<std::uint16_t, decltype(du)> d16;
    const std::size_t N = hn::Lanes(du);
    const auto rounded = [&](hn::Vec<decltype(du)> v) { return Bfloat16NearestHigh(du, v); };
    auto* out = static_cast<std::uint16_t*>(a.out);
    std::size_t i = 0;
    for (; i + 2 * N <= a.n; i += 2 * N) {
      const auto y0 = rounded(hn::BitCast(du, hn::LoadU(df, a.in + i)));
      const auto y1 = rounded(hn::BitCast(du, hn::LoadU(df, a.in + i + N)));
      hn::StoreU(hn::ConcatOdd(d16, hn::BitCast(d16, y1), hn::BitCast(d16, y0)), d16, out + i);
    }
    return i;
  }
#endif
  (void)a;
  return 0;
}

// Whether the fast vectors serve D under R (never with flags counted).
template <Descriptor D, Round R, bool kStats>
constexpr bool kFastAny = R != Round::stochastic && !kStats && D.is_signed && lplab::detail::Layout<D>::M > 0;
// Formats with few exponent bits (FP6, FP4) see subnormal results as often
// as normal ones: for them the fast vector takes every finite,
// non-overflowing vector (variable shifts); the others take normal ones.
template <Descriptor D, Round R, bool kStats>
constexpr bool kFastFinite =
    kFastAny<D, R, kStats> && lplab::detail::Layout<D>::E <= 3 && lplab::detail::Layout<D>::has_negative_zero;
template <Descriptor D, Round R, bool kStats>
constexpr bool kFastNormal = kFastAny<D, R, kStats> && !kFastFinite<D, R, kStats>;

// Whether a finite value past max becomes max whatever the rounding: under
// saturation and in a format with neither infinity nor NaN (pack_overflow).
// The fast vectors then clamp instead of declining.
template <Descriptor D>
HWY_INLINE bool ClampsOverflow(const EncodeArgs& a) {
  return a.overflow == Overflow::saturate || D.encoding == Encoding::none;
}

// b. Every lane normal in float and normal in the target (round.h's second
// fast path, with one constant shift s = 23 - M):
// code = (mag + increment) >> s - (127 - bias) << M; or zero, exact in every
// rounding (+-0; +0 where the format has no -0: a relu's output, a sparse
// tensor). Stores the vector and returns true, or returns false when a lane
// is outside that range.
template <Descriptor D, Round R, class DU, class V = hn::Vec<DU>>
HWY_INLINE bool FastNormalVector(DU du, V x, bool clamp_overflow, lplab::detail::code_t<D>* HWY_RESTRICT out) {
  using L = lplab::detail::Layout<D>;
  constexpr int M = L::M;
  constexpr int s_normal = 23 - M;
  constexpr std::uint32_t lo_field = L::emin + 127 < 1 ? 1u : static_cast<std::uint32_t>(L::emin + 127);
  constexpr std::uint32_t hi_field = L::emax + 127 > 254 ? 254u : static_cast<std::uint32_t>(L::emax + 127);
  const hn::RebindToSigned<DU> di;
  const hn::Rebind<lplab::detail::code_t<D>, DU> dc;
  const V k_max_code = hn::Set(du, SpecialCodes<D>::max_code);
  const V m = hn::And(x, hn::Set(du, 0x7FFFFFFFu));
  const auto negative = hn::RebindMask(du, hn::Lt(hn::BitCast(di, x), hn::Zero(di)));
  const V inc = RoundingIncrement<R>(du, hn::Set(du, (1u << s_normal) - 1), hn::ShiftRight<s_normal>(m), negative);
  V c = hn::Sub(hn::ShiftRight<s_normal>(hn::Add(m, inc)), hn::Set(du, static_cast<std::uint32_t>(127 - D.bias) << M));
  if (clamp_overflow) c = hn::Min(c, k_max_code);
  const auto zero = hn::Eq(m, hn::Zero(du));
  c = hn::IfThenZeroElse(zero, c);
  const auto in_range = hn::Lt(hn::Sub(m, hn::Set(du, lo_field << 23)), hn::Set(du, (hi_field + 1 - lo_field) << 23));
  const auto ok = hn::And(hn::Or(in_range, zero), hn::Lt(c, hn::Set(du, SpecialCodes<D>::max_code + 1)));
  if (HWY_UNLIKELY(!hn::AllTrue(du, ok))) return false;
  V sign = hn::ShiftLeft<L::E + M>(hn::ShiftRight<31>(x));
  if constexpr (!L::has_negative_zero) sign = hn::IfThenZeroElse(zero, sign);
  const V r = hn::Or(c, sign);
  hn::StoreU(hn::DemoteTo(dc, hn::BitCast(di, r)), dc, out);
  return true;
}

// b. Steps 1-4 without the special cases, for every lane finite and none
// overflowing; subnormal and zero results included, with their sign (these
// formats have -0). Stores the vector and returns true, or returns false.
template <Descriptor D, Round R, class DU, class V = hn::Vec<DU>>
HWY_INLINE bool FastFiniteVector(DU du, V x, bool clamp_overflow, lplab::detail::code_t<D>* HWY_RESTRICT out) {
  using L = lplab::detail::Layout<D>;
  constexpr int M = L::M;
  const hn::RebindToSigned<DU> di;
  const hn::Rebind<lplab::detail::code_t<D>, DU> dc;
  const V one = hn::Set(du, 1);
  const V k_max_code = hn::Set(du, SpecialCodes<D>::max_code);
  const V m = hn::And(x, hn::Set(du, 0x7FFFFFFFu));
  const V e1 = hn::Max(hn::ShiftRight<23>(m), one);
  const V sig = hn::Sub(m, hn::ShiftLeft<23>(hn::Sub(e1, one)));
  const V s = hn::Add(hn::BitCast(du, hn::Max(hn::Sub(hn::Set(di, L::emin + 127), hn::BitCast(di, e1)), hn::Zero(di))),
                      hn::Set(du, 23 - M));
  const V sc = hn::Min(s, hn::Set(du, 25));
  const V drop = hn::Sub((one << sc), one);
  const auto negative = hn::RebindMask(du, hn::Lt(hn::BitCast(di, x), hn::Zero(di)));
  const V inc = RoundingIncrement<R>(du, drop, (sig >> sc), negative);
  V c = hn::Add((hn::Add(sig, inc) >> sc),
                hn::ShiftLeft<M>(hn::Add(hn::Max(e1, hn::Set(du, static_cast<std::uint32_t>(L::emin + 127))),
                                         hn::Set(du, static_cast<std::uint32_t>(D.bias - 128)))));
  if (clamp_overflow) c = hn::Min(c, k_max_code);
  const auto ok = hn::And(hn::Lt(m, hn::Set(du, 0x7F800000u)), hn::Lt(c, hn::Set(du, SpecialCodes<D>::max_code + 1)));
  if (HWY_UNLIKELY(!hn::AllTrue(du, ok))) return false;
  const V r = hn::Or(c, hn::ShiftLeft<L::E + M>(hn::ShiftRight<31>(x)));
  hn::StoreU(hn::DemoteTo(dc, hn::BitCast(di, r)), dc, out);
  return true;
}

// c. Steps 1-5 for the N lanes of inputs [i, i + N): stores them, counts
// their flags (kStats) and redoes the lanes it declines (float subnormals
// into E8M0) by the scalar core.
template <Descriptor D, Round R, bool kStats, class DU, class V = hn::Vec<DU>>
HWY_INLINE void GeneralVector(DU du, V x, std::size_t i, const EncodeArgs& a,
                              lplab::kernels::detail::StochasticKey key, FlagCounts& tally) {
  using L = lplab::detail::Layout<D>;
  using SC = SpecialCodes<D>;
  constexpr int M = L::M;
  constexpr int emin = L::emin;
  const hn::RebindToSigned<DU> di;
  const hn::Rebind<lplab::detail::code_t<D>, DU> dc;
  const std::size_t N = hn::Lanes(du);
  const bool saturate = a.overflow == Overflow::saturate;
  const V one = hn::Set(du, 1);
  const V k_inf = hn::Set(du, 0x7F800000u);
  const V k_max_code = hn::Set(du, SC::max_code);
  const V overflow_code = hn::Set(du, saturate ? SC::max_code : SC::ieee_overflow_code);
  const bool overflow_invalid = !saturate && SC::ieee_overflow_invalid;

  // Step 1: sign, magnitude, significand.
  const V mag = hn::And(x, hn::Set(du, 0x7FFFFFFFu));
  const V sign_bit = hn::ShiftRight<31>(x);  // 0 or 1
  const auto neg = hn::Eq(sign_bit, one);
  const V fe = hn::ShiftRight<23>(mag);
  const V e1 = hn::Max(fe, one);
  const V sig = hn::Sub(mag, hn::ShiftLeft<23>(hn::Sub(e1, one)));

  // Step 2: bits to drop.
  const V extra = hn::BitCast(du, hn::Max(hn::Sub(hn::Set(di, emin + 127), hn::BitCast(di, e1)), hn::Zero(di)));
  const V s = hn::Add(extra, hn::Set(du, 23 - M));
  const V sc = hn::Min(s, hn::Set(du, 25));
  const V drop_mask = hn::Sub((one << sc), one);

  // Step 3: round by increment and truncation.
  V kept = (hn::Add(sig, RoundingIncrement<R>(du, drop_mask, (sig >> sc), neg)) >> sc);
  const V dropped = hn::And(sig, drop_mask);
  if constexpr (R == Round::stochastic) kept = hn::Add(kept, StochasticCarry(du, dropped, s, i, a, key));

  // Step 4: the magnitude code.
  const V e_field = hn::Max(e1, hn::Set(du, static_cast<std::uint32_t>(emin + 127)));
  const V code = hn::Add(kept, hn::ShiftLeft<M>(hn::Add(e_field, hn::Set(du, static_cast<std::uint32_t>(D.bias - 128)))));

  // Step 5: overflow, zero, specials, sign.
  const auto is_nan = hn::Gt(mag, k_inf);
  const auto is_inf = hn::Eq(mag, k_inf);
  const auto is_zero_in = hn::Eq(mag, hn::Zero(du));
  const auto is_finite_nz = hn::Not(hn::Or(is_zero_in, hn::Gt(mag, hn::Set(du, 0x7F7FFFFFu))));
  const auto none = hn::FirstN(du, 0);
  const auto ovf = hn::Gt(code, k_max_code);
  V ovf_code = overflow_code;
  if constexpr (R == Round::toward_zero) {
    ovf_code = k_max_code;
  } else if constexpr (R == Round::upward) {
    ovf_code = hn::IfThenElse(neg, k_max_code, overflow_code);
  } else if constexpr (R == Round::downward) {
    ovf_code = hn::IfThenElse(neg, overflow_code, k_max_code);
  }
  V r = hn::IfThenElse(ovf, ovf_code, code);
  // Infinite inputs: infinity where the format has it and the policy is
  // IEEE; else an overflow of the finite kind.
  if constexpr (L::has_inf) {
    r = hn::IfThenElse(is_inf, saturate ? k_max_code : hn::Set(du, SC::inf_code), r);
  } else {
    r = hn::IfThenElse(is_inf, overflow_code, r);
  }
  // NaN inputs (pack_nan).
  if constexpr (D.encoding == Encoding::ieee) {
    const V payload = hn::ShiftRight<23 - M>(hn::And(mag, hn::Set(du, 0x7FFFFFu)));
    r = hn::IfThenElse(is_nan, hn::Or(payload, hn::Set(du, SC::inf_code | static_cast<std::uint32_t>(L::quiet_bit))), r);
  } else {
    r = hn::IfThenElse(is_nan, hn::Set(du, D.encoding == Encoding::none ? SC::max_code : SC::nan_code), r);
  }
  // Zero results and inputs keep their sign only where the format has -0.
  constexpr int sign_shift = 31 - (L::E + L::M);  // the float sign bit moved down to the target's
  const auto zero_result = hn::Eq(r, hn::Zero(du));
  V sign_field = hn::ShiftLeft<31 - sign_shift>(sign_bit);
  if constexpr (!L::has_negative_zero && L::has_zero) {
    sign_field = hn::IfThenZeroElse(zero_result, sign_field);
  }
  if constexpr (D.encoding == Encoding::fnuz || D.encoding == Encoding::none) {
    // fnuz: one unsigned NaN; none: a NaN input becomes +max.
    sign_field = hn::IfThenZeroElse(is_nan, sign_field);
  }
  if constexpr (D.is_signed) r = hn::Or(r, sign_field);

  // Underflow: tiny (a subnormal or zero result) and inexact (round.h step 4;
  // IEEE 754-2019 7.5): an exact subnormal result raises nothing.
  auto underflow = hn::And(hn::And(is_finite_nz, hn::Lt(code, hn::Set(du, 1u << M))), hn::Ne(dropped, hn::Zero(du)));
  // An fn format's IEEE overflow is NaN, and invalid; the directed
  // roundings that point back to zero give max instead (pack_overflow).
  auto invalid = none;
  if (overflow_invalid) {
    invalid = hn::And(hn::And(is_finite_nz, ovf), hn::Eq(ovf_code, hn::Set(du, SC::nan_code)));
  }
  if constexpr (D.encoding == Encoding::none) invalid = hn::Or(invalid, is_nan);
  if constexpr (!L::has_inf) {
    if (overflow_invalid) invalid = hn::Or(invalid, is_inf);
  }
  auto decline = none;
  // An unsigned format holds no negative number: a negative input, -inf
  // included, is invalid and NaN (round_pack's step 1), -0 is +0; E8M0, which
  // has no zero, takes a zero input the same way.
  auto bad = none;
  if constexpr (!D.is_signed) {
    bad = D.has_subnormals ? hn::AndNot(hn::Or(is_nan, is_zero_in), neg)
                           : hn::AndNot(is_nan, hn::Or(neg, is_zero_in));
    r = hn::IfThenElse(bad, hn::Set(du, D.encoding == Encoding::none ? SC::max_code : SC::nan_code), r);
    invalid = hn::Or(hn::AndNot(bad, invalid), bad);
    underflow = hn::AndNot(bad, underflow);
  }
  if constexpr (!D.has_subnormals) {
    // Float subnormals land in E8M0's lowest binade: the scalar core.
    decline = hn::And(hn::Eq(fe, hn::Zero(du)), hn::Not(hn::Or(neg, is_zero_in)));
    underflow = none;
  }
  hn::StoreU(hn::DemoteTo(dc, hn::BitCast(di, r)), dc, static_cast<lplab::detail::code_t<D>*>(a.out) + i);

  if constexpr (kStats) {
    // An infinite input overflows where it cannot stay infinite.
    const auto inf_overflows = saturate || !L::has_inf ? is_inf : none;
    auto inexact_m = hn::Or(hn::And(is_finite_nz, hn::Or(hn::Ne(dropped, hn::Zero(du)), ovf)), inf_overflows);
    auto overflow_f = hn::Or(hn::And(is_finite_nz, ovf), inf_overflows);
    if constexpr (!D.is_signed) {
      // Negative (or, into E8M0, zero) inputs: invalid only (pack_infinity's
      // and round_pack's first step come before any other flag).
      inexact_m = hn::AndNot(hn::Or(bad, decline), inexact_m);
      overflow_f = hn::AndNot(hn::Or(bad, decline), overflow_f);
    }
    const auto keep = hn::Not(decline);
    tally.inexact += hn::CountTrue(du, hn::And(keep, inexact_m));
    tally.underflow += hn::CountTrue(du, hn::And(keep, underflow));
    tally.overflow += hn::CountTrue(du, hn::And(keep, overflow_f));
    tally.invalid += hn::CountTrue(du, hn::And(keep, invalid));
  }
  if constexpr (!D.has_subnormals) {
    if (HWY_UNLIKELY(!hn::AllFalse(du, decline))) {
      for (std::size_t j = i; j < i + N; ++j) {
        const std::uint32_t xb = lplab::detail::bit_cast<std::uint32_t>(a.in[j]);
        const bool declined = (xb & 0x7F800000u) == 0 && (xb & 0x7FFFFFFFu) != 0 && (xb >> 31) == 0;
        if (declined) EncodeScalarLane<D, R, kStats>(a, key, j, tally);
      }
    }
  }
}

template <Descriptor D, Round R, bool kStats>
HWY_ATTR void EncodeFloatingPoint(const EncodeArgs& a) {
  const hn::ScalableTag<std::uint32_t> du;
  const hn::RebindToFloat<decltype(du)> df;
  const std::size_t N = hn::Lanes(du);
  const lplab::kernels::detail::StochasticKey key = lplab::kernels::detail::stochastic_key(a.seed, a.first_index);
  const bool clamp_overflow = ClampsOverflow<D>(a);
  auto* HWY_RESTRICT out = static_cast<lplab::detail::code_t<D>*>(a.out);
  FlagCounts tally;  // the flags counted (kStats), summed over lanes

  std::size_t i = EncodeBinary16F16C<D, R, kStats>(a);
  if (i == 0) i = EncodeBfloat16Nearest<D, R, kStats>(a);
  for (; i + N <= a.n; i += N) {
    const auto x = hn::BitCast(du, hn::LoadU(df, a.in + i));
    if constexpr (kFastNormal<D, R, kStats>) {
      if (FastNormalVector<D, R>(du, x, clamp_overflow, out + i)) continue;
    }
    if constexpr (kFastFinite<D, R, kStats>) {
      if (FastFiniteVector<D, R>(du, x, clamp_overflow, out + i)) continue;
    }
    GeneralVector<D, R, kStats>(du, x, i, a, key, tally);
  }
  for (; i < a.n; ++i) EncodeScalarLane<D, R, kStats>(a, key, i, tally);
  if constexpr (kStats) *a.stats += tally;
}

template <Descriptor D, Round R, bool kStats>
HWY_ATTR void EncodeFromFloat(const EncodeArgs& a) {
  // (The integers' own kernel; the floating-point paths above are not
  // instantiated for them.)
  if constexpr (D.encoding == Encoding::integer) EncodeIntegers<D, R, kStats>(a);
  else EncodeFloatingPoint<D, R, kStats>(a);
}


// ---------------------------------------------------------------------------
// format -> float (exact: every value of a vector format is a float)

// Formats whose codes are binary16 bit patterns after a shift (the F16C
// route): one byte per code, an exponent field of 1..5 bits (a 5-bit one
// only under IEEE encoding, since binary16's top binade is its infinities
// and NaNs), signed (a sign bit at the top of the code), and a bias that keeps every
// value times 2^(15 - bias) a normal float (binary16 spans 2^-24 .. 2^16:
// 2^(15 - bias - 24) >= 2^-126 and 2^(15 - bias + 16) <= 2^127, so
// -96 <= bias <= 117). The FP8, FP6 and FP4 formats of OCP, ml_dtypes and
// the MX spec qualify, except E5M2FNUZ (its top binade holds numbers).
template <Descriptor D>
constexpr bool kHalfPattern = [] {
  using L = lplab::detail::Layout<D>;
  if (!kVectorFormat<D> || !D.is_signed || !D.has_subnormals || L::bits > 8 || L::E < 1 || L::E > 5) return false;
  if (L::E == 5 && D.encoding != Encoding::ieee) return false;
  return D.bias >= -96 && D.bias <= 117;
}();

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// The F16C route of kHalfPattern's formats, every code in the same few steps
// (no branch, no subnormal operand: in effect the table of 256 codes in
// registers). HalfPattern, steps 1-3, on 16-bit lanes:
//   1. each code at the top of a 16-bit lane (bits above the format's width
//      shift out), its sign at binary16's;
//   2. the magnitude shifted down so that its exponent field is the low E
//      bits of binary16's and its mantissa binary16's top M bits (an
//      arithmetic shift: the sign's copies masked off). A normal code reads
//      2^(e - 15) * 1.m, a subnormal 2^-14 * 0.m: the code's value times
//      2^(bias - 15);
//   3. the format's specials made binary16's: IEEE's top binade gets
//      binary16's (an or; the mantissa, a NaN's payload, kept), fn's NaN
//      becomes binary16's quiet NaN 0x7E00 with the code's sign (an add of
//      0x7E00 minus the NaN's pattern), fnuz's 0x80 binary16's 0xFE00.
// HalfToFloat, steps 4-5, on half as many float lanes:
//   4. vcvtph2ps, exact for every binary16 code while DAZ is off (the caller's
//      kMul says so), a NaN quieted with its payload moved up 13 bits, as the
//      scalar core's pack_nan;
//   5. times 2^(15 - bias): exact (kHalfPattern keeps the product a normal
//      float), a NaN passing through unchanged.
template <Descriptor D, class D16, class VC>
HWY_INLINE hn::Vec<D16> HalfPattern(D16 d16, VC codes) {
  using L = lplab::detail::Layout<D>;
  const hn::RebindToSigned<D16> di16;
  constexpr int kPlace = 10 - L::M;  // binary16's mantissa above the code's
  constexpr std::uint32_t kMag16 = static_cast<std::uint32_t>(L::mag_mask) << kPlace;
  const auto top = hn::ShiftLeft<16 - L::bits>(hn::PromoteTo(d16, codes));           // step 1
  auto h = hn::BitCast(d16, hn::ShiftRight<5 - L::E>(hn::BitCast(di16, top)));        // step 2
  if constexpr (L::E < 5) h = hn::And(h, hn::Set(d16, static_cast<std::uint16_t>(0x8000u | kMag16)));
  if constexpr (D.encoding == Encoding::ieee && L::E < 5) {                          // step 3
    const auto mag16 = hn::BitCast(di16, hn::And(h, hn::Set(d16, 0x7FFF)));
    const auto special = hn::Gt(mag16, hn::Set(di16, static_cast<std::int16_t>((L::inf_code << kPlace) - 1)));
    h = hn::Or(h, hn::IfThenElseZero(hn::RebindMask(d16, special), hn::Set(d16, 0x7C00)));
  } else if constexpr (D.encoding == Encoding::fn) {
    const auto nan = hn::Eq(hn::And(h, hn::Set(d16, 0x7FFF)), hn::Set(d16, static_cast<std::uint16_t>(kMag16)));
    h = hn::Add(h, hn::IfThenElseZero(nan, hn::Set(d16, static_cast<std::uint16_t>(0x7E00u - kMag16))));
  } else if constexpr (D.encoding == Encoding::fnuz) {
    h = hn::IfThenElse(hn::Eq(h, hn::Set(d16, 0x8000)), hn::Set(d16, 0xFE00), h);
  }
  return h;
}

template <Descriptor D, class DF, class V16>
HWY_INLINE hn::Vec<DF> HalfToFloat(DF df, V16 h) {
#if HWY_TARGET == HWY_AVX2  // step 4
  auto f = hn::Vec<DF>{_mm256_cvtph_ps(h.raw)};
#else
  auto f = hn::Vec<DF>{_mm512_cvtph_ps(h.raw)};
#endif
  if constexpr (D.bias != 15) f = hn::Mul(f, hn::Set(df, static_cast<float>(lplab::detail::exp2i(15 - D.bias))));  // step 5
  return f;
}
#endif

// One vector of codes at `p` to floats. kMul: binary16, and the formats of
// kHalfPattern, by F16C's vcvtph2ps (valid while DAZ is off, which the
// dispatcher checked); every other format, and every format without kMul,
// decodes the same whatever DAZ and FTZ say.
template <Descriptor D, bool kMul, class DU, class DC, class Code>
HWY_INLINE hn::Vec<hn::RebindToFloat<DU>> DecodeFloatVector(DU du, DC dc, const Code* HWY_RESTRICT p) {
  using L = lplab::detail::Layout<D>;
  constexpr int M = L::M;
  constexpr int sign_shift = 31 - (L::E + L::M);
  const hn::RebindToSigned<DU> di;
  const hn::RebindToFloat<DU> df;
  using VU = hn::Vec<DU>;
  const VU k_code_mask = hn::Set(du, static_cast<std::uint32_t>(L::sign_mask | L::mag_mask));
  const VU k_mag_mask = hn::Set(du, static_cast<std::uint32_t>(L::mag_mask));
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kBinary16<D> && kMul) {
    // binary16: F16C's vcvtph2ps, exact (subnormals included while DAZ is
    // off, which kMul says), NaNs quieted with their payload, as below.
#if HWY_TARGET == HWY_AVX2
    return hn::Vec<decltype(df)>{_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
#else
    return hn::Vec<decltype(df)>{_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
#endif
  }
  if constexpr (kHalfPattern<D> && kMul) {
    return HalfToFloat<D>(df, HalfPattern<D>(hn::Rebind<std::uint16_t, DU>(), hn::LoadU(dc, p)));
  }
#endif
  if constexpr (kBfloat16<D>) {
    // bfloat16: the code is float's high half; a NaN gets the quiet bit.
    // (The magnitude is below 2^31: a signed compare, one instruction on x86.)
    const VU bits = hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(dc, p)));
    const VU quiet = hn::Or(bits, hn::Set(du, 0x00400000u));
    const auto nan = hn::Gt(hn::BitCast(di, hn::And(bits, hn::Set(du, 0x7FFFFFFFu))), hn::Set(di, 0x7F800000));
    return hn::BitCast(df, hn::IfThenElse(hn::RebindMask(du, nan), quiet, bits));
  }
    // Bits above the format's width are ignored, as Float::from_bits does.
    VU c = hn::PromoteTo(du, hn::LoadU(dc, p));
    if constexpr (L::bits != 8 * sizeof(Code)) c = hn::And(c, k_code_mask);
    const VU mag = hn::And(c, k_mag_mask);
    VU bits;
    if constexpr (!D.has_subnormals) {
      // E8M0: code c is 2^(c - 127); code 0 is float's subnormal 2^-127.
      bits = hn::IfThenElse(hn::Eq(c, hn::Zero(du)), hn::Set(du, 0x00400000u),
                            hn::ShiftLeft<23>(c));
      bits = hn::IfThenElse(hn::Eq(c, hn::Set(du, 0xFFu)), hn::Set(du, 0x7FC00000u), bits);
    } else {
      if constexpr (L::E == 8) {
        // Same exponent field as float (bfloat16): the bits move up.
        bits = hn::ShiftLeft<23 - M>(mag);
      } else {
        // A normal code's fields placed in a float's, the exponent rebiased
        // by an integer add: its value exactly. A subnormal code (exponent
        // field 0, value 0.m * 2^(1 - bias)) is placed with exponent field 1,
        // reading 1.m * 2^(1 - bias), and 2^(1 - bias) is subtracted: exact
        // (Sterbenz), zero giving +0. Every operand and result is a normal
        // float (E < 8: 2^(1 - bias - M) is far above 2^-126), so the
        // arithmetic never meets a subnormal: no microcode assist for
        // subnormal operands (an earlier decode multiplied the fields, read
        // as a float subnormal, by 2^(127 - bias), and ran 4-25x slower on
        // data with small values), and no dependence on DAZ or FTZ.
        const VU normal = hn::Add(hn::ShiftLeft<23 - M>(mag),
                                  hn::Set(du, static_cast<std::uint32_t>(127 - D.bias) << 23));
        // (A vector without subnormal codes, the common case of scaled data,
        // skips the fix-up: a test and a predictable branch.)
        // (Signed lanes: mag is below 2^31, and AVX2 compares only signed.)
        const auto is_sub = hn::RebindMask(du, hn::Lt(hn::BitCast(di, mag), hn::Set(di, 1 << M)));
        bits = normal;
        if (!hn::AllFalse(du, is_sub)) {
          const auto one_binade = hn::BitCast(df, hn::Add(normal, hn::Set(du, 1u << 23)));
          const auto sub = hn::Sub(one_binade, hn::Set(df, static_cast<float>(lplab::detail::exp2i(1 - D.bias))));
          bits = hn::IfThenElse(is_sub, hn::BitCast(du, sub), normal);
        }
      }
      if constexpr (D.encoding == Encoding::ieee) {
        // Infinity and NaN (quiet bit set, payload kept: pack_nan).
        const VU k_inf_code = hn::Set(du, static_cast<std::uint32_t>(L::inf_code));
        const VU payload = hn::ShiftLeft<23 - M>(hn::And(mag, hn::Set(du, static_cast<std::uint32_t>(L::mant_mask))));
        bits = hn::IfThenElse(hn::Eq(mag, k_inf_code), hn::Set(du, 0x7F800000u), bits);
        bits = hn::IfThenElse(hn::Gt(mag, k_inf_code), hn::Or(payload, hn::Set(du, 0x7FC00000u)), bits);
      } else if constexpr (D.encoding == Encoding::fn) {
        bits = hn::IfThenElse(hn::Eq(mag, k_mag_mask), hn::Set(du, 0x7FC00000u), bits);
      } else if constexpr (D.encoding == Encoding::fnuz) {
        // The single NaN, 0x80..., decodes as a negative NaN.
        bits = hn::IfThenElse(hn::Eq(c, hn::Set(du, static_cast<std::uint32_t>(L::sign_mask))),
                              hn::Set(du, 0x7FC00000u), bits);
      }
      if constexpr (D.is_signed) {
        bits = hn::Or(bits, hn::ShiftLeft<sign_shift>(hn::And(c, hn::Set(du, static_cast<std::uint32_t>(L::sign_mask)))));
      }
    }
  return hn::BitCast(df, bits);
}

// DecodeFloatVector, or for an integer format IntegerToFloat.
template <Descriptor D, bool kMul, class DU, class DC, class Code>
HWY_INLINE hn::Vec<hn::RebindToFloat<DU>> DecodeVector(DU du, DC dc, const Code* HWY_RESTRICT p) {
  if constexpr (D.encoding == Encoding::integer) return IntegerToFloat<D>(du, dc, p);
  else return DecodeFloatVector<D, kMul>(du, dc, p);
}

// Whole vectors of codes [i, n) decoded, two at a time, each vector of floats
// handed to store(df, f, index); returns how far it got. The F16C route
// where it serves, DecodeVector's steps elsewhere. (The stores are functors
// holding their pointer by value, not lambdas capturing by reference: a
// closure's captures are reloaded after every store that might alias them.)
template <Descriptor D, bool kMul, class Code, class Store>
HWY_INLINE std::size_t DecodeEachVector(const Code* HWY_RESTRICT in, std::size_t i, std::size_t n, Store store) {
  const hn::ScalableTag<std::uint32_t> du;
  const hn::RebindToFloat<decltype(du)> df;
  const hn::Rebind<Code, decltype(du)> dc;
  const std::size_t N = hn::Lanes(du);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kHalfPattern<D> && kMul) {
    // The F16C route on whole vectors of 16-bit lanes (2N codes), each half
    // then widened by vcvtph2ps: half the integer steps of DecodeVector's.
    const hn::ScalableTag<std::uint16_t> d16;
    const hn::Half<decltype(d16)> dh;
    const hn::Rebind<Code, decltype(d16)> dc2;
    for (; i + 2 * N <= n; i += 2 * N) {
      const auto h = HalfPattern<D>(d16, hn::LoadU(dc2, in + i));
      store(df, HalfToFloat<D>(df, hn::LowerHalf(dh, h)), i);
      store(df, HalfToFloat<D>(df, hn::UpperHalf(dh, h)), i + N);
    }
  }
#endif
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto f0 = DecodeVector<D, kMul>(du, dc, in + i);
    const auto f1 = DecodeVector<D, kMul>(du, dc, in + i + N);
    store(df, f0, i);
    store(df, f1, i + N);
  }
  for (; i + N <= n; i += N) store(df, DecodeVector<D, kMul>(du, dc, in + i), i);
  return i;
}

struct StoreFloats {
  float* HWY_RESTRICT out;
  template <class DF>
  HWY_INLINE void operator()(DF df, hn::Vec<DF> f, std::size_t i) const { hn::StoreU(f, df, out + i); }
};

// Whole vectors of codes [0, n) to floats; returns how many were done.
template <Descriptor D, bool kMul, class Code>
HWY_INLINE std::size_t DecodeVectors(const Code* HWY_RESTRICT in, float* HWY_RESTRICT out, std::size_t n) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kBfloat16<D>) {
    // bfloat16, a whole vector of codes at a time: a NaN gets the quiet bit
    // (0x0040) in the 16-bit lanes, then each half widens into float's high
    // half (DecodeVector's steps, on twice the lanes). Only targets wider
    // than one 16-byte block get here: DecodeToFloat gives the others
    // DecodeBfloat16Plain.
    const hn::ScalableTag<std::uint32_t> du;
    const hn::RebindToFloat<decltype(du)> df;
    const std::size_t N = hn::Lanes(du);
    const hn::ScalableTag<std::uint16_t> d16;
    const hn::RebindToSigned<decltype(d16)> di16;
    const hn::Half<decltype(d16)> dh;
    for (; i + 2 * N <= n; i += 2 * N) {
      const auto c = hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(in) + i);
      const auto nan = hn::Gt(hn::BitCast(di16, hn::And(c, hn::Set(d16, 0x7FFF))), hn::Set(di16, 0x7F80));
      const auto q = hn::IfThenElse(hn::RebindMask(d16, nan), hn::Or(c, hn::Set(d16, 0x0040)), c);
      hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LowerHalf(dh, q)))), df, out + i);
      hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::UpperHalf(dh, q)))), df, out + i + N);
    }
  }
#endif
  return DecodeEachVector<D, kMul>(in, i, n, StoreFloats{out});
}

// bfloat16 to float as a plain loop, which the compiler vectorizes (in
// 16-bit lanes) better than the steps below on targets of one 16-byte block
// and on the one-lane target: a NaN's quiet bit 0x0040 set without a branch,
// since (c & 0x7FFF) > 0x7F80 exactly when (c & 0x7FFF) + 0x7F reaches 0x8000.
template <class Code>
HWY_INLINE void DecodeBfloat16Plain(const Code* HWY_RESTRICT in, float* HWY_RESTRICT out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t c = in[i];
    out[i] = lplab::detail::bit_cast<float>((c | ((((c & 0x7FFFu) + 0x7Fu) >> 9) & 0x40u)) << 16);
  }
}

#if HWY_TARGET == HWY_SCALAR
// The one-lane target: plain loops that the compiler vectorizes for the
// baseline ISA where Highway's one-lane vectors would not be, and for the
// formats of one byte a table of the 256 codes (the scalar core's values).
// Returns how many codes were done (all, or none for the other formats).
template <Descriptor D, class Code>
HWY_INLINE std::size_t DecodePlain(const Code* HWY_RESTRICT in, float* HWY_RESTRICT out, std::size_t n, bool exact) {
  using L = lplab::detail::Layout<D>;
  if constexpr (kBinary16<D>) {
    // binary16 by DecodeVector's exact multiplication (while DAZ is off).
    if (!exact) return 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t h = in[i], mag = h & 0x7FFFu;
      const float scaled = lplab::detail::bit_cast<float>(mag << 13) * 0x1p112f;
      const std::uint32_t special = 0x7F800000u | (mag & 0x3FFu) << 13 | (mag > 0x7C00u ? 0x00400000u : 0u);
      out[i] = lplab::detail::bit_cast<float>((mag >= 0x7C00u ? special : lplab::detail::bit_cast<std::uint32_t>(scaled)) |
                                              (h & 0x8000u) << 16);
    }
    return n;
  } else if constexpr (sizeof(Code) == 1) {
    static const auto table = [] {
      std::array<float, 256> t{};
      for (std::uint32_t c = 0; c < 256; ++c)
        t[c] = lplab::detail::bit_cast<float>(lplab::detail::convert_code<lplab::detail::binary32, D>(
            static_cast<Code>(c & (L::sign_mask | L::mag_mask)), Round::nearest_even, Overflow::ieee, 0, nullptr));
      return t;
    }();
    for (std::size_t i = 0; i < n; ++i) out[i] = table[in[i]];
    return n;
  } else {
    (void)in, (void)out, (void)n, (void)exact;
    return 0;
  }
}
#endif

template <Descriptor D>
HWY_ATTR void DecodeToFloat(const DecodeArgs& a) {
  using Code = lplab::detail::code_t<D>;
  const Code* HWY_RESTRICT in = static_cast<const Code*>(a.in);
  float* HWY_RESTRICT out = a.out;
  const std::size_t n = a.n;
  if constexpr (kBfloat16<D> && (HWY_TARGET == HWY_SCALAR || HWY_MAX_BYTES == 16)) {
    DecodeBfloat16Plain(in, out, n);
    return;
  }
#if HWY_TARGET == HWY_SCALAR
  if (DecodePlain<D>(in, out, n, a.float_arithmetic_exact) == n) return;
#endif
  // (Only the F16C routes depend on DAZ: the other formats take one path.)
  std::size_t i = 0;
  if constexpr (kBinary16<D> || kHalfPattern<D>)
    i = a.float_arithmetic_exact ? DecodeVectors<D, true>(in, out, n) : DecodeVectors<D, false>(in, out, n);
  else
    i = DecodeVectors<D, false>(in, out, n);
  for (; i < n; ++i) {
    out[i] = lplab::detail::bit_cast<float>(
        lplab::detail::convert_code<lplab::detail::binary32, D>(in[i], Round::nearest_even,
                                                              Overflow::ieee, 0, nullptr));
  }
}

// ---------------------------------------------------------------------------
// format -> bfloat16 / float16 where every value is exact there (Widen16Args)

// Whether every value of D is a value of the 16-bit format To: the mantissa
// fits and every value lies on To's grid within its range (a vector format's
// values are floats, so bfloat16 needs only M <= 7; binary16 also needs the
// smallest nonzero magnitude 2^(emin - M) >= 2^-24 and the largest < 2^16).
template <Descriptor D, bool kToHalf>
constexpr bool kExactIn16 = [] {
  using L = lplab::detail::Layout<D>;
  if (!kVectorFormat<D> || kBinary16<D> || kBfloat16<D>) return false;
  // (An integer's values need M significant bits, bfloat16 holds 8.)
  if (D.encoding == Encoding::integer) return kToHalf ? L::M <= 11 : L::M <= 8;
  if (!kToHalf) return L::M <= 7;
  return D.has_subnormals && L::M <= 10 && L::emin - L::M >= -24 && L::emax <= 15;
}();

// One vector of floats, each exactly a 16-bit value, as that value's codes in
// half as many bytes: bfloat16 is the high half of the float (the low half is
// zero: exact; a decoded NaN's payload lies in the high half), binary16 F16C's
// vcvtps2ph (exact on a representable value, a NaN's payload moved down 13
// bits, as the scalar core's pack_nan).
template <bool kToHalf, class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::uint16_t, DF>> Narrow16(DF df, hn::Vec<DF> f) {
  const hn::Rebind<std::uint16_t, DF> d16;
  if constexpr (kToHalf) {
#if HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
    return hn::Vec<decltype(d16)>{_mm256_cvtps_ph(f.raw, _MM_FROUND_TO_NEAREST_INT)};
#elif HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    return hn::Vec<decltype(d16)>{_mm512_cvtps_ph(f.raw, _MM_FROUND_TO_NEAREST_INT)};
#else
    (void)df, (void)f;
    return hn::Zero(d16);  // not reached: Widen16 declines first
#endif
  } else {
    // (A logical shift: 0 .. 0xFFFF in signed lanes, which the unsigned
    // saturating pack keeps as they are.)
    const hn::RebindToSigned<DF> di;
    const hn::RebindToUnsigned<DF> du;
    return hn::DemoteTo(d16, hn::BitCast(di, hn::ShiftRight<16>(hn::BitCast(du, f))));
  }
}

// Each vector of floats narrowed to the 16-bit codes (Narrow16) and stored.
template <bool kToHalf>
struct StoreNarrow16 {
  std::uint16_t* HWY_RESTRICT out;
  template <class DF>
  HWY_INLINE void operator()(DF df, hn::Vec<DF> f, std::size_t i) const {
    hn::StoreU(Narrow16<kToHalf>(df, f), hn::Rebind<std::uint16_t, DF>(), out + i);
  }
};

template <Descriptor D, bool kToHalf, bool kMul>
HWY_INLINE void Widen16Vectors(const Widen16Args& a) {
  using Code = lplab::detail::code_t<D>;
  const Code* HWY_RESTRICT in = static_cast<const Code*>(a.in);
  std::uint16_t* HWY_RESTRICT out = a.out;
  std::size_t i = DecodeEachVector<D, kMul>(in, 0, a.n, StoreNarrow16<kToHalf>{out});
  using To = std::conditional_t<kToHalf, lplab::float16, lplab::bfloat16>;
  for (; i < a.n; ++i) {
    out[i] = static_cast<std::uint16_t>(lplab::detail::convert_code<To::descriptor, D>(
        in[i], Round::nearest_even, Overflow::ieee, 0, nullptr));
  }
}

// Returns whether it did the call (nothing written otherwise).
template <Descriptor D>
HWY_ATTR bool Widen16(const Widen16Args& a) {
  using L = lplab::detail::Layout<D>;
  // Overflow::saturate turns an infinite value into the largest finite one.
  if (a.overflow == Overflow::saturate && L::has_inf) return false;
  if (a.to_float16) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    if constexpr (kExactIn16<D, true>) {
      // vcvtps2ph writes binary16 subnormals exactly only while FTZ is off.
      if (!a.float_arithmetic_exact) return false;
      Widen16Vectors<D, true, true>(a);
      return true;
    }
#endif
    return false;
  }
  if constexpr (kExactIn16<D, false>) {
    if (a.float_arithmetic_exact) Widen16Vectors<D, false, true>(a);
    else Widen16Vectors<D, false, false>(a);
    return true;
  }
  return false;
}

// One entry per format, with the run-time policies turned into template
// arguments once per call.
template <Descriptor D>
HWY_ATTR void Encode(const EncodeArgs& a) {
  lplab::detail::with_round(a.round, [&]<Round R>() {
    if (a.stats != nullptr) EncodeFromFloat<D, R, true>(a);
    else EncodeFromFloat<D, R, false>(a);
    return 0;
  });
}

}  // namespace lplab::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
