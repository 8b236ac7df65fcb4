// SIMD kernels of the bulk conversion for the integer formats
// (Encoding::integer: int8 .. uint1), once per Highway target. Included by
// convert-inl.h inside its per-target namespace; the include guard toggles
// per target as Highway asks. Integer code throughout, as the float kernels:
// no dependence on MXCSR's rounding mode, DAZ or FTZ.
//
//   float -> integer (round.h's round_pack_integer_as, lane by lane):
//     value = sig * 2^(E1 - 150), E1 = max(exponent field, 1)
//     1. sign, magnitude, sig = mantissa + implicit bit;
//     2. s = 150 - E1 bits of sig lie below the units digit: for s <= 0 the
//        value is at least 2^23, past every vector integer format (16 bits at
//        most), and only wrap-around reads it (its low bits: sig << -s);
//     3. kept = (sig + increment(R)) >> min(s, 25), plus the stochastic carry;
//     4. past the range (kept > 2^M - 1, or > 2^M where signed and negative;
//        or s <= 0): the range's end, or under wrap the low bits;
//     5. NaN -> 0; +-inf -> the range's ends, or 0 under wrap; two's
//        complement, masked to the format's width.
//   integer -> float: the code sign-extended (or masked) and converted, exact.
#if defined(LPLAB_KERNELS_CONVERT_INTEGER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LPLAB_KERNELS_CONVERT_INTEGER_INL_H_
#undef LPLAB_KERNELS_CONVERT_INTEGER_INL_H_
#else
#define LPLAB_KERNELS_CONVERT_INTEGER_INL_H_
#endif

// Steps 1-5 for the N lanes of inputs [i, i + N), stored, their flags counted
// (kStats) as round.h raises them.
template <Descriptor D, Round R, bool kStats, class DU, class V = hn::Vec<DU>>
HWY_INLINE void IntegerVector(DU du, V x, std::size_t i, const EncodeArgs& a,
                              lplab::kernels::detail::StochasticKey key, FlagCounts& tally) {
  using L = lplab::detail::Layout<D>;
  const hn::RebindToSigned<DU> di;
  const hn::Rebind<lplab::detail::code_t<D>, DU> dc;
  const bool wrap = a.overflow == Overflow::wrap;
  const V one = hn::Set(du, 1);
  const V zero = hn::Zero(du);
  const V k_inf = hn::Set(du, 0x7F800000u);

  // Step 1.
  const V mag = hn::And(x, hn::Set(du, 0x7FFFFFFFu));
  const auto neg = hn::Eq(hn::ShiftRight<31>(x), one);
  const V e1 = hn::Max(hn::ShiftRight<23>(mag), one);
  const V sig = hn::Sub(mag, hn::ShiftLeft<23>(hn::Sub(e1, one)));

  // Step 2: s = 150 - E1 as a signed lane; integral inputs (s <= 0) apart.
  const auto s_signed = hn::Sub(hn::Set(di, 150), hn::BitCast(di, e1));
  const auto integral = hn::RebindMask(du, hn::Lt(s_signed, hn::Set(di, 1)));
  const V s = hn::BitCast(du, hn::Max(s_signed, hn::Set(di, 0)));
  const V sc = hn::Min(s, hn::Set(du, 25));
  const V drop_mask = hn::Sub(one << sc, one);

  // Step 3.
  V kept = hn::Add(sig, RoundingIncrement<R>(du, drop_mask, sig >> sc, neg)) >> sc;
  const V dropped = hn::And(sig, drop_mask);
  // (An integral lane, s = 0, has nothing dropped and its kept is replaced
  // below: it takes s = 1, so that no shift reaches 32.)
  if constexpr (R == Round::stochastic) kept = hn::Add(kept, StochasticCarry(du, dropped, hn::Max(s, one), i, a, key));
  // An integral input's low 32 bits: sig << -s (zero from a shift of 32 on).
  const V up = hn::BitCast(du, hn::Neg(s_signed));
  const V low32 = hn::IfThenZeroElse(hn::Gt(up, hn::Set(du, 31)), sig << hn::Min(up, hn::Set(du, 31)));
  kept = hn::IfThenElse(integral, low32, kept);

  // Step 4: the range, -2^M .. 2^M - 1 (signed) or 0 .. 2^M - 1.
  const V limit = hn::IfThenElse(neg, hn::Set(du, static_cast<std::uint32_t>(L::sign_mask)),
                                 hn::Set(du, static_cast<std::uint32_t>(L::max_code)));
  const auto ovf = hn::Or(integral, hn::Gt(kept, limit));
  V r = wrap ? kept : hn::IfThenElse(ovf, limit, kept);

  // Step 5: specials, then two's complement in the format's width.
  const auto is_nan = hn::Gt(mag, k_inf);
  const auto is_inf = hn::Eq(mag, k_inf);
  const auto is_zero_in = hn::Eq(mag, zero);
  r = hn::IfThenZeroElse(hn::Or(is_nan, is_zero_in), r);
  r = hn::IfThenElse(is_inf, wrap ? zero : limit, r);
  r = hn::IfThenElse(neg, hn::Sub(zero, r), r);
  r = hn::And(r, hn::Set(du, static_cast<std::uint32_t>(L::sign_mask | L::mag_mask)));
  hn::StoreU(hn::DemoteTo(dc, hn::BitCast(di, r)), dc, static_cast<lplab::detail::code_t<D>*>(a.out) + i);

  if constexpr (kStats) {
    const auto finite_nz = hn::Not(hn::Or(is_zero_in, hn::Gt(mag, hn::Set(du, 0x7F7FFFFFu))));
    const auto inexact_round = hn::And(finite_nz, hn::AndNot(integral, hn::Ne(dropped, zero)));
    const auto ovf_finite = hn::And(finite_nz, ovf);
    const auto inf_counts = wrap ? hn::FirstN(du, 0) : is_inf;
    tally.inexact += hn::CountTrue(du, hn::Or(hn::Or(inexact_round, ovf_finite), inf_counts));
    tally.underflow += hn::CountTrue(du, hn::And(inexact_round, hn::Eq(kept, zero)));
    tally.overflow += hn::CountTrue(du, hn::Or(ovf_finite, inf_counts));
    tally.invalid += hn::CountTrue(du, wrap ? hn::Or(is_nan, is_inf) : is_nan);
  }
}

template <Descriptor D, Round R, bool kStats>
HWY_INLINE void EncodeIntegers(const EncodeArgs& a) {
  const hn::ScalableTag<std::uint32_t> du;
  const hn::RebindToFloat<decltype(du)> df;
  const std::size_t N = hn::Lanes(du);
  const lplab::kernels::detail::StochasticKey key = lplab::kernels::detail::stochastic_key(a.seed, a.first_index);
  FlagCounts tally;
  std::size_t i = 0;
  for (; i + N <= a.n; i += N) IntegerVector<D, R, kStats>(du, hn::BitCast(du, hn::LoadU(df, a.in + i)), i, a, key, tally);
  for (; i < a.n; ++i) EncodeScalarLane<D, R, kStats>(a, key, i, tally);
  if constexpr (kStats) *a.stats += tally;
}

// One vector of integer codes at `p` to floats: sign-extended from the
// format's top bit (or masked, unsigned; bits above the width ignored, as
// Float::from_bits), then converted, exactly (|value| <= 2^16).
template <Descriptor D, class DU, class DC, class Code>
HWY_INLINE hn::Vec<hn::RebindToFloat<DU>> IntegerToFloat(DU du, DC dc, const Code* HWY_RESTRICT p) {
  using L = lplab::detail::Layout<D>;
  const hn::RebindToSigned<DU> di;
  const hn::RebindToFloat<DU> df;
  const auto c = hn::BitCast(di, hn::PromoteTo(du, hn::LoadU(dc, p)));
  if constexpr (D.is_signed) {
    constexpr int kUp = 32 - L::bits;
    return hn::ConvertTo(df, hn::ShiftRight<kUp>(hn::ShiftLeft<kUp>(c)));
  } else {
    return hn::ConvertTo(df, hn::And(c, hn::Set(di, static_cast<std::int32_t>(L::mag_mask))));
  }
}

#endif  // include guard
