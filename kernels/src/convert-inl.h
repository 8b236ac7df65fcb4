// SIMD kernels of the bulk conversion, once per Highway target. Included by
// the per-format translation units (convert_format.cpp.in) after
// hwy/foreach_target.h; the include guard toggles per target as Highway asks.
//
// Both directions are integer code only -- no floating-point instruction
// touches a value -- so the results cannot depend on MXCSR's DAZ/FTZ bits or
// the rounding mode a caller may have set, and they equal the scalar core's
// (round.h) by the same steps:
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

#include <cstddef>
#include <cstdint>

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
  if (D.has_subnormals) {
    return D.is_signed && (L::emin - L::M >= -126 || (L::E == 8 && D.bias == 127));
  }
  // Without subnormals: only the E8M0 shape (unsigned, 2^-127 .. 2^127).
  return !D.is_signed && L::E == 8 && L::M == 0 && D.bias == 127;
}();

// ---------------------------------------------------------------------------
// float -> format

template <Descriptor D, Round R, bool kStats>
HWY_ATTR void EncodeFromFloat(const EncodeArgs& a) {
  using L = lplab::detail::Layout<D>;
  using Code = lplab::detail::code_t<D>;
  constexpr int M = L::M;
  constexpr int emin = L::emin;
  const hn::ScalableTag<std::uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::RebindToFloat<decltype(du)> df;
  const hn::Rebind<Code, decltype(du)> dc;
  const std::size_t N = hn::Lanes(du);
  using VU = hn::Vec<decltype(du)>;

  const float* HWY_RESTRICT in = a.in;
  Code* HWY_RESTRICT out = static_cast<Code*>(a.out);
  const std::size_t n = a.n;
  const bool saturate = a.overflow == Overflow::saturate;

  const VU one = hn::Set(du, 1);
  const VU k_mag = hn::Set(du, 0x7FFFFFFFu);
  const VU k_inf = hn::Set(du, 0x7F800000u);
  const VU k_max_code = hn::Set(du, static_cast<std::uint32_t>(L::max_code));
  // Signed-bit position of the target: the float sign bit moved down.
  constexpr int sign_shift = 31 - (L::E + L::M);
  // Codes the overflow and special cases produce (as round.h's pack_*).
  constexpr std::uint32_t max_code = static_cast<std::uint32_t>(L::max_code);
  constexpr std::uint32_t nan_code = static_cast<std::uint32_t>(L::nan_code);
  constexpr std::uint32_t inf_code = static_cast<std::uint32_t>(L::inf_code);
  // IEEE overflow of a finite value: infinity, or NaN in an fn format
  // (invalid), or max where the format has neither.
  constexpr std::uint32_t ieee_overflow_code =
      L::has_inf ? inf_code : (L::has_nan ? nan_code : max_code);
  constexpr bool ieee_overflow_invalid = !L::has_inf && L::has_nan;
  const VU overflow_code = hn::Set(du, saturate ? max_code : ieee_overflow_code);
  const bool overflow_invalid = !saturate && ieee_overflow_invalid;

  const lplab::kernels::detail::StochasticKey key =
      lplab::kernels::detail::stochastic_key(a.seed, a.first_index);
  const std::uint32_t index_low = static_cast<std::uint32_t>(a.first_index);

  std::uint64_t c_inexact = 0, c_underflow = 0, c_overflow = 0, c_invalid = 0;

  // The common case first: a vector whose every value is normal in float
  // and lands in the target's normal range (round.h's second fast path, with
  // a constant shift): code = (mag + increment) >> s - (127 - bias) << M.
  // Vectors with any other lane take the general steps below.
  // Formats with few exponent bits (FP6, FP4) see subnormal results as often
  // as normal ones: for them the fast path takes every finite, non-overflowing
  // vector instead (kFastFinite, variable shifts).
  constexpr bool kFastAny = R != Round::stochastic && !kStats && D.is_signed && M > 0;
  constexpr bool kFastFinite = kFastAny && L::E <= 3 && L::has_negative_zero;
  constexpr bool kFastNormal = kFastAny && !kFastFinite;
  constexpr int s_normal = 23 - M;
  constexpr std::uint32_t lo_field = emin + 127 < 1 ? 1u : static_cast<std::uint32_t>(emin + 127);
  constexpr std::uint32_t hi_field =
      L::emax + 127 > 254 ? 254u : static_cast<std::uint32_t>(L::emax + 127);
  const VU k_lo_mag = hn::Set(du, lo_field << 23);
  const VU k_span = hn::Set(du, (hi_field + 1 - lo_field) << 23);
  const VU k_bias_adjust = hn::Set(du, static_cast<std::uint32_t>(127 - D.bias) << M);
  const VU k_max_plus_1 = hn::Set(du, max_code + 1);
  const VU k_half_minus_1 = hn::Set(du, (1u << (s_normal - 1)) - 1);
  // A finite value past max becomes max, whatever the rounding, under
  // saturation and in a format with neither infinity nor NaN (pack_overflow):
  // the fast paths then clamp instead of declining.
  const bool clamp_overflow = saturate || D.encoding == Encoding::none;
  const VU k_drop = hn::Set(du, (1u << s_normal) - 1);

  std::size_t i = 0;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  // binary16 from float: F16C's vcvtps2ph rounds correctly in the four IEEE
  // directions given in its immediate, with IEEE overflow and NaN handling
  // equal to round.h's -- while MXCSR's DAZ and FTZ are off, which the
  // dispatcher checked (float_arithmetic_exact). Saturation clamps the input
  // magnitude to 65504 first. (The exhaustive sweep holds it to the scalar
  // core on all 2^32 inputs.)
  constexpr bool kBinary16 = L::E == 5 && M == 10 && D.bias == 15 && D.encoding == Encoding::ieee;
  if constexpr (kBinary16 && !kStats && R != Round::stochastic && R != Round::nearest_away) {
    if (a.float_arithmetic_exact) {
      constexpr int imm = (R == Round::nearest_even  ? _MM_FROUND_TO_NEAREST_INT
                           : R == Round::toward_zero ? _MM_FROUND_TO_ZERO
                           : R == Round::upward      ? _MM_FROUND_TO_POS_INF
                                                     : _MM_FROUND_TO_NEG_INF) |
                          _MM_FROUND_NO_EXC;
      const VU k_max_mag = hn::Set(du, 0x477FE000u);  // 65504 = 1.9990234375 * 2^15
      for (; i + N <= n; i += N) {
        auto v = hn::LoadU(df, in + i);
        if (saturate) {
          const VU xb = hn::BitCast(du, v);
          const VU m = hn::And(xb, k_mag);
          const auto clamp = hn::And(hn::Gt(m, k_max_mag), hn::Not(hn::Gt(m, k_inf)));
          v = hn::BitCast(df, hn::IfThenElse(clamp, hn::Or(k_max_mag, hn::AndNot(k_mag, xb)), xb));
        }
#if HWY_TARGET == HWY_AVX2
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(v.raw, imm));
#else
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtps_ph(v.raw, imm));
#endif
      }
    }
  }
#endif
  // bfloat16 (float's exponent field, 16 bits dropped) under nearest-even
  // with IEEE overflow: for every non-NaN input, finite, infinite or
  // subnormal, the code is the high half of x + 0x7FFF + lsb (round.h's first
  // fast path; a carry into the exponent is the round-up, into 0x7F80 the
  // overflow). NaNs keep sign and payload and get the quiet bit. Two vectors'
  // high halves are gathered by one ConcatOdd instead of two narrowings.
#if HWY_TARGET != HWY_SCALAR  // (one lane: nothing to concatenate)
  constexpr bool kBfloat16 = L::E == 8 && M == 7 && D.bias == 127 && D.encoding == Encoding::ieee;
  if constexpr (kBfloat16 && R == Round::nearest_even && !kStats) {
    if (!saturate) {
      const hn::Repartition<std::uint16_t, decltype(du)> d16;
      const VU k_round = hn::Set(du, 0x7FFFu);
      const VU k_quiet = hn::Set(du, 0x00400000u);
      auto rounded = [&](VU v) {
        const VU y = hn::Add(hn::Add(v, k_round), hn::And(hn::ShiftRight<16>(v), one));
        return hn::IfThenElse(hn::Gt(hn::And(v, k_mag), k_inf), hn::Or(v, k_quiet), y);
      };
      for (; i + 2 * N <= n; i += 2 * N) {
        const VU y0 = rounded(hn::BitCast(du, hn::LoadU(df, in + i)));
        const VU y1 = rounded(hn::BitCast(du, hn::LoadU(df, in + i + N)));
        hn::StoreU(hn::ConcatOdd(d16, hn::BitCast(d16, y1), hn::BitCast(d16, y0)), d16,
                   reinterpret_cast<std::uint16_t*>(out) + i);
      }
    }
  }
#endif
  for (; i + N <= n; i += N) {
    const VU x = hn::BitCast(du, hn::LoadU(df, in + i));
    if constexpr (kFastNormal) {
      const VU m = hn::And(x, k_mag);
      VU inc_n;
      if constexpr (R == Round::nearest_even) {
        inc_n = hn::Add(k_half_minus_1, hn::And(hn::ShiftRight<s_normal>(m), one));
      } else if constexpr (R == Round::nearest_away) {
        inc_n = hn::Add(k_half_minus_1, one);
      } else if constexpr (R == Round::upward) {
        inc_n = hn::IfThenZeroElse(hn::RebindMask(du, hn::Lt(hn::BitCast(di, x), hn::Zero(di))), k_drop);
      } else if constexpr (R == Round::downward) {
        inc_n = hn::IfThenElseZero(hn::RebindMask(du, hn::Lt(hn::BitCast(di, x), hn::Zero(di))), k_drop);
      } else {
        inc_n = hn::Zero(du);
      }
      VU c = hn::Sub(hn::ShiftRight<s_normal>(hn::Add(m, inc_n)), k_bias_adjust);
      if (clamp_overflow) c = hn::Min(c, k_max_code);
      const auto ok = hn::And(hn::Lt(hn::Sub(m, k_lo_mag), k_span), hn::Lt(c, k_max_plus_1));
      if (HWY_LIKELY(hn::AllTrue(du, ok))) {
        const VU r = hn::Or(c, hn::ShiftLeft<L::E + M>(hn::ShiftRight<31>(x)));
        hn::StoreU(hn::DemoteTo(dc, hn::BitCast(di, r)), dc, out + i);
        continue;
      }
    }
    if constexpr (kFastFinite) {
      // Steps 1-4 without the special cases: every lane finite and no lane
      // overflowing; subnormal and zero results included (with their sign:
      // these formats have -0).
      const VU m = hn::And(x, k_mag);
      const VU e1f = hn::Max(hn::ShiftRight<23>(m), one);
      const VU sigf = hn::Sub(m, hn::ShiftLeft<23>(hn::Sub(e1f, one)));
      const VU sf = hn::Add(
          hn::BitCast(du, hn::Max(hn::Sub(hn::Set(di, emin + 127), hn::BitCast(di, e1f)), hn::Zero(di))),
          hn::Set(du, 23 - M));
      const VU scf = hn::Min(sf, hn::Set(du, 25));
      const VU dropf = hn::Sub((one << scf), one);
      VU incf;
      if constexpr (R == Round::nearest_even) {
        incf = hn::Add(hn::ShiftRight<1>(dropf), hn::And((sigf >> scf), one));
      } else if constexpr (R == Round::nearest_away) {
        incf = hn::Add(hn::ShiftRight<1>(dropf), one);
      } else if constexpr (R == Round::upward) {
        incf = hn::IfThenZeroElse(hn::RebindMask(du, hn::Lt(hn::BitCast(di, x), hn::Zero(di))), dropf);
      } else if constexpr (R == Round::downward) {
        incf = hn::IfThenElseZero(hn::RebindMask(du, hn::Lt(hn::BitCast(di, x), hn::Zero(di))), dropf);
      } else {
        incf = hn::Zero(du);
      }
      VU c = hn::Add(
          (hn::Add(sigf, incf) >> scf),
          hn::ShiftLeft<M>(hn::Add(hn::Max(e1f, hn::Set(du, static_cast<std::uint32_t>(emin + 127))),
                                   hn::Set(du, static_cast<std::uint32_t>(D.bias - 128)))));
      if (clamp_overflow) c = hn::Min(c, k_max_code);
      const auto ok = hn::And(hn::Lt(m, k_inf), hn::Lt(c, k_max_plus_1));
      if (HWY_LIKELY(hn::AllTrue(du, ok))) {
        const VU r = hn::Or(c, hn::ShiftLeft<L::E + M>(hn::ShiftRight<31>(x)));
        hn::StoreU(hn::DemoteTo(dc, hn::BitCast(di, r)), dc, out + i);
        continue;
      }
    }
    // Step 1: sign, magnitude, significand.
    const VU mag = hn::And(x, k_mag);
    const VU sign_bit = hn::ShiftRight<31>(x);  // 0 or 1
    const auto neg = hn::Eq(sign_bit, one);
    const VU fe = hn::ShiftRight<23>(mag);
    const VU e1 = hn::Max(fe, one);
    const VU sig = hn::Sub(mag, hn::ShiftLeft<23>(hn::Sub(e1, one)));

    // Step 2: bits to drop.
    const VU extra = hn::BitCast(
        du, hn::Max(hn::Sub(hn::Set(di, emin + 127), hn::BitCast(di, e1)), hn::Zero(di)));
    const VU s = hn::Add(extra, hn::Set(du, 23 - M));
    const VU sc = hn::Min(s, hn::Set(du, 25));
    const VU drop_mask = hn::Sub((one << sc), one);

    // Step 3: round by increment and truncation.
    VU inc;
    if constexpr (R == Round::nearest_even) {
      inc = hn::Add(hn::ShiftRight<1>(drop_mask), hn::And((sig >> sc), one));
    } else if constexpr (R == Round::nearest_away) {
      inc = hn::Add(hn::ShiftRight<1>(drop_mask), one);
    } else if constexpr (R == Round::upward) {
      inc = hn::IfThenZeroElse(neg, drop_mask);
    } else if constexpr (R == Round::downward) {
      inc = hn::IfThenElseZero(neg, drop_mask);
    } else {
      inc = hn::Zero(du);
    }
    VU kept = (hn::Add(sig, inc) >> sc);
    const VU dropped = hn::And(sig, drop_mask);
    if constexpr (R == Round::stochastic) {
      // The top 32 bits of the dropped fraction, from the unclamped s
      // (sig < 2^24, so a right shift of 24 or more already gives zero).
      const VU k32 = hn::Set(du, 32);
      const auto s_le_32 = hn::Lt(s, hn::Set(du, 33));  // (Highway 1.0.3 has no unsigned <=)
      const VU left = (dropped << hn::Sub(k32, hn::Min(s, k32)));
      const VU right = (dropped >> hn::Min(hn::IfThenZeroElse(s_le_32, hn::Sub(s, k32)),
                                          hn::Set(du, 31)));
      const VU frac32 = hn::IfThenElse(s_le_32, left, right);
      const VU idx = hn::Iota(du, index_low + static_cast<std::uint32_t>(i));
      // hash32(hash32(i ^ k0) + k1), lane by lane (random.h).
      auto hash = [&](VU v) {
        v = hn::Xor(v, hn::ShiftRight<16>(v));
        v = hn::Mul(v, hn::Set(du, 0x21F0AAADu));
        v = hn::Xor(v, hn::ShiftRight<15>(v));
        v = hn::Mul(v, hn::Set(du, 0x735A2D97u));
        return hn::Xor(v, hn::ShiftRight<15>(v));
      };
      const VU bits = hash(hn::Add(hash(hn::Xor(idx, hn::Set(du, key.k0))), hn::Set(du, key.k1)));
      const VU sum = hn::Add(frac32, bits);
      kept = hn::Add(kept, hn::IfThenElseZero(hn::Lt(sum, frac32), one));
    }

    // Step 4: the magnitude code.
    const VU e_field = hn::Max(e1, hn::Set(du, static_cast<std::uint32_t>(emin + 127)));
    const VU code = hn::Add(
        kept, hn::ShiftLeft<M>(hn::Add(e_field, hn::Set(du, static_cast<std::uint32_t>(
                                                             D.bias - 128)))));

    // Step 5: overflow, zero, specials, sign.
    const auto is_nan = hn::Gt(mag, k_inf);
    const auto is_inf = hn::Eq(mag, k_inf);
    const auto is_zero_in = hn::Eq(mag, hn::Zero(du));
    const auto is_finite_nz = hn::Not(hn::Or(is_zero_in, hn::Gt(mag, hn::Set(du, 0x7F7FFFFFu))));
    const auto none = hn::FirstN(du, 0);
    const auto ovf = hn::Gt(code, k_max_code);
    VU ovf_code = overflow_code;
    if constexpr (R == Round::toward_zero) {
      ovf_code = k_max_code;
    } else if constexpr (R == Round::upward) {
      ovf_code = hn::IfThenElse(neg, k_max_code, overflow_code);
    } else if constexpr (R == Round::downward) {
      ovf_code = hn::IfThenElse(neg, overflow_code, k_max_code);
    }
    VU r = hn::IfThenElse(ovf, ovf_code, code);
    // Infinite inputs: infinity where the format has it and the policy is
    // IEEE; else an overflow of the finite kind.
    if constexpr (L::has_inf) {
      r = hn::IfThenElse(is_inf, saturate ? k_max_code : hn::Set(du, inf_code), r);
    } else {
      r = hn::IfThenElse(is_inf, overflow_code, r);
    }
    // NaN inputs (pack_nan).
    if constexpr (D.encoding == Encoding::ieee) {
      const VU payload = hn::ShiftRight<23 - M>(hn::And(mag, hn::Set(du, 0x7FFFFFu)));
      r = hn::IfThenElse(is_nan,
                         hn::Or(payload, hn::Set(du, inf_code | static_cast<std::uint32_t>(L::quiet_bit))),
                         r);
    } else {
      r = hn::IfThenElse(is_nan, hn::Set(du, D.encoding == Encoding::none ? max_code : nan_code), r);
    }
    // Zero results and inputs keep their sign only where the format has -0.
    const auto zero_result = hn::Eq(r, hn::Zero(du));
    VU sign_field = hn::ShiftLeft<31 - sign_shift>(sign_bit);
    if constexpr (!L::has_negative_zero && L::has_zero) {
      sign_field = hn::IfThenZeroElse(zero_result, sign_field);
    }
    if constexpr (D.encoding == Encoding::fnuz || D.encoding == Encoding::none) {
      // fnuz: one unsigned NaN; none: a NaN input becomes +max.
      sign_field = hn::IfThenZeroElse(is_nan, sign_field);
    }
    if constexpr (D.is_signed) r = hn::Or(r, sign_field);

    auto underflow = hn::And(is_finite_nz, hn::Lt(code, hn::Set(du, 1u << M)));
    // An fn format's IEEE overflow is NaN, and invalid; the directed
    // roundings that point back to zero give max instead (pack_overflow).
    auto invalid = none;
    if (overflow_invalid) {
      invalid = hn::And(hn::And(is_finite_nz, ovf), hn::Eq(ovf_code, hn::Set(du, nan_code)));
    }
    if constexpr (D.encoding == Encoding::none) invalid = hn::Or(invalid, is_nan);
    if constexpr (!L::has_inf) {
      if (overflow_invalid) invalid = hn::Or(invalid, is_inf);
    }
    auto decline = none;
    if constexpr (!D.has_subnormals) {
      // E8M0: no zero; negative, zero and (as above) -inf inputs are invalid.
      const VU invalid_nan = hn::Set(du, nan_code);
      const auto bad = hn::AndNot(is_nan, hn::Or(neg, is_zero_in));
      r = hn::IfThenElse(bad, invalid_nan, r);
      invalid = hn::Or(hn::AndNot(bad, invalid), bad);
      // Float subnormals land in E8M0's lowest binade: the scalar core.
      decline = hn::And(hn::Eq(fe, hn::Zero(du)), hn::Not(hn::Or(neg, is_zero_in)));
      underflow = none;
    }
    hn::StoreU(hn::DemoteTo(dc, hn::BitCast(di, r)), dc, out + i);

    if constexpr (kStats) {
      // An infinite input overflows where it cannot stay infinite.
      const auto inf_overflows = saturate || !L::has_inf ? is_inf : none;
      auto inexact_m =
          hn::Or(hn::And(is_finite_nz, hn::Or(hn::Ne(dropped, hn::Zero(du)), ovf)), inf_overflows);
      auto overflow_f = hn::Or(hn::And(is_finite_nz, ovf), inf_overflows);
      if constexpr (!D.has_subnormals) {
        // Negative or zero into E8M0: invalid only (pack_infinity's and
        // round_pack's first step come before any other flag).
        const auto bad = hn::AndNot(is_nan, hn::Or(neg, is_zero_in));
        inexact_m = hn::AndNot(hn::Or(bad, decline), inexact_m);
        overflow_f = hn::AndNot(hn::Or(bad, decline), overflow_f);
      }
      const auto keep = hn::Not(decline);
      c_inexact += hn::CountTrue(du, hn::And(keep, inexact_m));
      c_underflow += hn::CountTrue(du, hn::And(keep, underflow));
      c_overflow += hn::CountTrue(du, hn::And(keep, overflow_f));
      c_invalid += hn::CountTrue(du, hn::And(keep, invalid));
    }
    if constexpr (!D.has_subnormals) {
      if (HWY_UNLIKELY(!hn::AllFalse(du, decline))) {
        for (std::size_t j = i; j < i + N; ++j) {
          const std::uint32_t xb = lplab::detail::bit_cast<std::uint32_t>(in[j]);
          if ((xb & 0x7F800000u) != 0 || (xb & 0x7FFFFFFFu) == 0 || (xb >> 31) != 0) continue;
          Flags f;
          const std::uint32_t bits =
              R == Round::stochastic
                  ? lplab::kernels::detail::stochastic_bits_keyed(
                        key, index_low + static_cast<std::uint32_t>(j))
                  : 0;
          out[j] = lplab::detail::convert_code<D, lplab::detail::binary32>(xb, R, a.overflow, bits,
                                                                           kStats ? &f : nullptr);
          if constexpr (kStats) {
            c_inexact += f.inexact();
            c_underflow += f.underflow();
            c_overflow += f.overflow();
            c_invalid += f.invalid();
          }
        }
      }
    }
  }
  // The tail: the scalar core, element by element.
  for (; i < n; ++i) {
    const std::uint32_t xb = lplab::detail::bit_cast<std::uint32_t>(in[i]);
    Flags f;
    const std::uint32_t bits =
        R == Round::stochastic
            ? lplab::kernels::detail::stochastic_bits_keyed(key,
                                                            index_low + static_cast<std::uint32_t>(i))
            : 0;
    out[i] = lplab::detail::convert_code<D, lplab::detail::binary32>(xb, R, a.overflow, bits,
                                                                     kStats ? &f : nullptr);
    if constexpr (kStats) {
      c_inexact += f.inexact();
      c_underflow += f.underflow();
      c_overflow += f.overflow();
      c_invalid += f.invalid();
    }
  }
  if constexpr (kStats) {
    a.stats->inexact += c_inexact;
    a.stats->underflow += c_underflow;
    a.stats->overflow += c_overflow;
    a.stats->invalid += c_invalid;
  }
}

// ---------------------------------------------------------------------------
// format -> float (exact: every value of a vector format is a float)

// One vector of codes at `p` to floats. kMul: decode by an exact float
// multiplication (valid while DAZ and FTZ are off), else by integer code alone.
template <Descriptor D, bool kMul, class DU, class DC, class Code>
HWY_INLINE hn::Vec<hn::RebindToFloat<DU>> DecodeVector(DU du, DC dc, const Code* HWY_RESTRICT p) {
  using L = lplab::detail::Layout<D>;
  constexpr int M = L::M;
  constexpr int sign_shift = 31 - (L::E + L::M);
  const hn::RebindToSigned<DU> di;
  const hn::RebindToFloat<DU> df;
  using VU = hn::Vec<DU>;
  const VU k_code_mask = hn::Set(du, static_cast<std::uint32_t>(L::sign_mask | L::mag_mask));
  const VU k_mag_mask = hn::Set(du, static_cast<std::uint32_t>(L::mag_mask));
  // 2^(127 - bias), a normal float for every vector format with E < 8.
  const auto k_scale = hn::Set(df, static_cast<float>(lplab::detail::exp2i(L::E < 8 ? 127 - D.bias : 0)));
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
        if constexpr (kMul) {
          // The code's fields placed in a float's, read as a float, times
          // 2^(127 - bias): exact, subnormal codes included (their field is
          // zero, so they read as float subnormals). Only valid while DAZ is
          // off, which the dispatcher checked.
          bits = hn::BitCast(du, hn::Mul(hn::BitCast(df, hn::ShiftLeft<23 - M>(mag)), k_scale));
        } else {
          const VU normal = hn::Add(hn::ShiftLeft<23 - M>(mag),
                                    hn::Set(du, static_cast<std::uint32_t>(127 - D.bias) << 23));
          // Subnormal codes: mant * 2^(emin - M); the int -> float conversion
          // is exact (mant < 2^M) and the exponent adjustment keeps it normal.
          const VU as_float = hn::BitCast(du, hn::ConvertTo(df, hn::BitCast(di, mag)));
          const VU sub = hn::Add(as_float, hn::Set(du, static_cast<std::uint32_t>(L::emin - M) << 23));
          const auto is_sub = hn::Lt(mag, hn::Set(du, 1u << M));
          bits = hn::IfThenElse(is_sub, hn::IfThenZeroElse(hn::Eq(mag, hn::Zero(du)), sub), normal);
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

template <Descriptor D>
HWY_ATTR void DecodeToFloat(const DecodeArgs& a) {
  using Code = lplab::detail::code_t<D>;
  const hn::ScalableTag<std::uint32_t> du;
  const hn::RebindToFloat<decltype(du)> df;
  const hn::Rebind<Code, decltype(du)> dc;
  const std::size_t N = hn::Lanes(du);
  const Code* HWY_RESTRICT in = static_cast<const Code*>(a.in);
  float* HWY_RESTRICT out = a.out;
  const std::size_t n = a.n;
  auto run = [&]<bool kMul>() {
    std::size_t i = 0;
    for (; i + 2 * N <= n; i += 2 * N) {
      const auto f0 = DecodeVector<D, kMul>(du, dc, in + i);
      const auto f1 = DecodeVector<D, kMul>(du, dc, in + i + N);
      hn::StoreU(f0, df, out + i);
      hn::StoreU(f1, df, out + i + N);
    }
    for (; i + N <= n; i += N) hn::StoreU(DecodeVector<D, kMul>(du, dc, in + i), df, out + i);
    return i;
  };
  std::size_t i = a.float_arithmetic_exact ? run.template operator()<true>() : run.template operator()<false>();
  for (; i < n; ++i) {
    out[i] = lplab::detail::bit_cast<float>(
        lplab::detail::convert_code<lplab::detail::binary32, D>(in[i], Round::nearest_even,
                                                              Overflow::ieee, 0, nullptr));
  }
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
