// The tensor-core model (tensor_core_step.h) in float lanes, twice the lanes
// of tensor_core_simd.cpp's double kernel, for operands whose products are
// exact floats: every finite operand of at most 12 significant bits, 0 or
// between 2^-50 and 2^60 (fp16, fp8, fp6 and fp4 values, and bf16 and tf32
// values of that range: N(0,1) data), and a model with F <= 25 and blocks
// of at most 32. The scalar
// tensor_core::dot / mma::chain is its reference, as for the double kernel
// (mma_test.cpp, matmul_test.cpp compare them bit for bit on every target).
// Per row of A and vector of columns, the chain's C in a float register,
// per block of products:
//   1. E in int32 lanes: C's exponent (at least emin_out) or zero_exponent
//      for C = 0, and e(a) + e(b) for each product (a zero operand's
//      exponent is -100000: a zero product never decides E);
//   2-3. C's term (C times 2^(F - E), truncated: an integer shift of its
//      significand) and each product a b (exact) times 2^(F - E) (exact: a
//      power of two; when every product is zero, 2^min(F - E, 126)),
//      truncated to an int32 (each below 2^(F + 2) <= 2^27), summed in
//      int32: exact, unless the model's bound (block x (2^(F + 2) - 1) +
//      2^(F + 1) - 1) passes 2^31 - 1 and an addition wraps, which is
//      detected and the tile's block summed again in double halves;
//   4. in int32 lanes: |S| cut to the output type's grid (truncated, or
//      rounded to nearest-even for fp16 C and D, the exponent clamped at
//      emin_out), converted to float exactly and scaled by 2^(E - F) in
//      exact steps, 2^emax_out or more an infinity, zero +0; on AVX-512 for
//      fp32 D one conversion and one vscalefps toward zero (embedded
//      rounding). In double halves after a wrapped sum.
// Specials (a NaN or an infinity among the products or C) follow IEEE's sum
// of the non-finite terms; a tile whose rows and columns hold none looks for
// them only in its chains' C (an input C, an overflow of step 4). Promotion
// adds the chain into an fp32 sum.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensor_core_narrow.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "hwy/highway.h"
#include "kernel_args.h"
#include "tensor_core.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct NarrowArgs {
  const TensorCoreModel* model;
  std::size_t k;
  const float* b;          // packed: the k rows of columns [vN, vN + N) at b[(v k + t) N + lane]
  const std::int32_t* eb;  // their alignment exponents, packed alike
  // Block scales (MmaAlgorithm::scaled; blocks of `block` products, one per
  // step): their exponents, B's packed esb[(v blocks + q) N + lane]; the
  // rows' are NarrowTile's esa.
  std::size_t blocks;
  const std::int32_t* esb;
  // Whether a block's sum can leave int32 (then a wrapped one is redone in
  // double), and whether step 4 runs in int32 lanes (else always in double).
  bool may_overflow;
  bool int_step4;
};

#if HWY_TARGET != HWY_SCALAR
// float to int32 toward zero: the instruction itself (Highway's ConvertTo
// adds a fix-up for values past int32's range, five more operations; every
// value here lies below 2^27, and a special product's lane is replaced).
template <class DI, class VF>
HWY_ATTR HWY_INLINE hn::Vec<DI> TruncToInt32(DI di, VF v) {
#if HWY_TARGET == HWY_AVX3
  (void)di;
  return hn::Vec<DI>{_mm512_cvttps_epi32(v.raw)};
#elif HWY_TARGET == HWY_AVX2
  (void)di;
  return hn::Vec<DI>{_mm256_cvttps_epi32(v.raw)};
#elif HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
  (void)di;
  return hn::Vec<DI>{_mm_cvttps_epi32(v.raw)};
#else
  return hn::ConvertTo(di, v);
#endif
}

// kR rows of A against kV vectors of columns: chain q is row q / kV
// against vector q % kV.
template <std::size_t kR, std::size_t kV>
HWY_ATTR HWY_INLINE void NarrowTile(const NarrowArgs& c, const float* const* HWY_RESTRICT ar,
                                    const std::int32_t* const* HWY_RESTRICT er, const std::int32_t* const* esa,
                                    const float* const* cr, std::size_t j, bool maybe_special,
                                    double* HWY_RESTRICT result) {
  constexpr std::size_t kQ = kR * kV;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Half<decltype(df)> dfh;
  const hn::Half<decltype(di)> dih;
  const hn::Repartition<double, decltype(df)> dd;
  const hn::RebindToSigned<decltype(dd)> ddi;
  using VF = hn::Vec<decltype(df)>;
  using VI = hn::Vec<decltype(di)>;
  using VD = hn::Vec<decltype(dd)>;
  const std::size_t N = hn::Lanes(df), k = c.k;
  const TensorCoreModel& model = *c.model;
  const int F = model.fraction_bits, R = model.result_bits;
  const std::size_t block = static_cast<std::size_t>(model.block);
  const auto zero_f = hn::Zero(df);
  const auto zero_d = hn::Zero(dd);
  const auto zero_exp = hn::Set(di, model.zero_exponent);
  const auto out_emin = hn::Set(di, model.emin_out);
  const auto out_emin64 = hn::Set(ddi, model.emin_out);
  const auto inf = hn::Set(dd, HUGE_VAL);
  const auto sign_mask = hn::Set(dd, -0.0);
  const auto overflow_at = hn::BitCast(dd, hn::ShiftLeft<52>(hn::Set(ddi, model.emax_out + 1023)));
  const auto nan = hn::Set(df, std::numeric_limits<float>::quiet_NaN());
  // 2^e (exponent fields e + 127 and e + 1023) and floor(log2 |v|) of a
  // nonzero normal v.
  auto pow2f = [&](VI e) HWY_ATTR { return hn::BitCast(df, hn::ShiftLeft<23>(hn::Add(e, hn::Set(di, 127)))); };
  auto pow2d = [&](auto e) HWY_ATTR { return hn::BitCast(dd, hn::ShiftLeft<52>(hn::Add(e, hn::Set(ddi, 1023)))); };
  auto exponent_f = [&](VF v) HWY_ATTR {
    return hn::Sub(hn::And(hn::ShiftRight<23>(hn::BitCast(di, v)), hn::Set(di, 0xff)), hn::Set(di, 127));
  };
  auto exponent_d = [&](VD v) HWY_ATTR {
    return hn::Sub(hn::And(hn::ShiftRight<52>(hn::BitCast(ddi, v)), hn::Set(ddi, 0x7ff)), hn::Set(ddi, 1023));
  };
  const hn::RebindToUnsigned<decltype(di)> du;
  const auto one = hn::Set(di, 1);
  const auto lo31 = hn::Set(di, 31);
  const auto inf_f = hn::Set(df, HUGE_VALF);
  const auto overflow_f = hn::Set(df, std::ldexp(1.0f, std::min(model.emax_out, 127)));  // read where emax_out < 128
  // Logical shifts of int32 lanes (t below may be 2^31).
  auto shl = [&](VI x, VI n) HWY_ATTR { return hn::BitCast(di, hn::Shl(hn::BitCast(du, x), hn::BitCast(du, n))); };
  auto shr = [&](VI x, VI n) HWY_ATTR { return hn::BitCast(di, hn::Shr(hn::BitCast(du, x), hn::BitCast(du, n))); };
  // floor(log2 a) of a >= 0: the exponent of a's conversion (to nearest: it
  // may round up to the next power of two, where a >> e is 0); -1 for 0.
  auto floor_log2 = [&](VI a) HWY_ATTR {
    const VI e = hn::Min(hn::Max(exponent_f(hn::ConvertTo(df, a)), hn::Zero(di)), lo31);
    return hn::IfThenElse(hn::Eq(shr(a, e), hn::Zero(di)), hn::Sub(e, one), e);
  };
  // p as p1 + p2, each clamped to [-126, 127] so that 2^p1 and 2^p2 are
  // normal floats (pow2f): x 2^p as x 2^p1 2^p2 where -252 <= p <= 254.
  struct Split {
    VI p1, p2;
  };
  auto split = [&](VI p) HWY_ATTR {
    const VI p1 = hn::Min(hn::Max(p, hn::Set(di, -126)), hn::Set(di, 127));
    return Split{p1, hn::Min(hn::Max(hn::Sub(p, p1), hn::Set(di, -126)), hn::Set(di, 127))};
  };
  // C's term: C times 2^(F - e_full), truncated toward zero, as an int32
  // (|term| < 2^(F + 1)). C is mag 2^(max(field, 1) - 150), mag its 24-bit
  // significand; e_full >= C's exponent, so the shift left is at most
  // F - 23 <= 2 and a shift right of 31 or more leaves 0. (A special C's
  // lane is replaced; its term is bounded by the clamps.)
  auto c_term = [&](VF cv, VI e_full) HWY_ATTR {
    const VI bits = hn::BitCast(di, cv);
    const VI field = hn::And(hn::ShiftRight<23>(bits), hn::Set(di, 0xff));
    const VI mag = hn::Or(hn::And(bits, hn::Set(di, 0x7FFFFF)),
                          hn::IfThenZeroElse(hn::Eq(field, hn::Zero(di)), hn::Set(di, 0x800000)));
    const VI shift = hn::Sub(hn::Add(hn::Max(field, one), hn::Set(di, F - 150)), e_full);
    const VI left = hn::Min(hn::Max(shift, hn::Zero(di)), hn::Set(di, 2));
    const VI right = hn::Min(hn::Max(hn::Neg(shift), hn::Zero(di)), lo31);
    const VI term = shr(shl(mag, left), right);
    return hn::IfThenElse(hn::Lt(bits, hn::Zero(di)), hn::Neg(term), term);
  };
  // Step 4 in int32 lanes (c.int_step4: R <= 24, emin_out >= -126,
  // emax_out <= 128): S units of 2^(e_full - F), |S| < 2^31, to the output
  // type. Its grid in units is 2^g, g = max(lead, emin_out + F - e_full) -
  // (R - 1), lead = floor(log2 |S|); |S| truncated (or rounded to
  // nearest-even) to a multiple of 2^g is an integer of at most 24
  // significant bits (25 where it rounded up to a power of two, an even
  // one), so the conversion to float is exact, and so are the scalings by
  // 2^(e_full - F) (in two, each a float) to a value on the output type's
  // grid; 2^emax_out or more is an infinity (2^128: the multiplication's
  // own overflow). A zero is +0.
  // fp32 D truncated to 24 or 14 bits (not fp16's nearest): on AVX-512,
  // step 4 by embedded rounding toward zero (below).
  const bool fp32_truncated = !model.nearest && (R == 24 || R == 14) && model.emin_out == -126 &&
                              model.emax_out == 128;
  // fp16 C and D: step 4 is IEEE's conversion of S 2^(e_full - F) to
  // binary16 (nearest-even, the subnormals' grid 2^-24, 2^16 an infinity).
  const bool fp16_nearest = model.nearest && R == 11 && model.emin_out == -14 && model.emax_out == 16;
  (void)fp32_truncated, (void)fp16_nearest;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  // v (a float) to binary16 to nearest-even and back exactly (vcvtps2ph,
  // vcvtph2ps); adding +0 makes -0 +0.
  auto binary16 = [&](VF v) HWY_ATTR {
#if HWY_TARGET == HWY_AVX3
    const VF h{_mm512_cvtph_ps(_mm512_cvtps_ph(v.raw, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))};
#else
    const VF h{_mm256_cvtph_ps(_mm256_cvtps_ph(v.raw, _MM_FROUND_TO_NEAREST_INT))};
#endif
    return hn::Add(h, zero_f);
  };
#endif
#if HWY_TARGET == HWY_AVX3
  // S rounded to odd at 24 bits: converted toward zero (S's integer part
  // where it fits), the lost bits' OR in the last bit.
  auto odd24 = [&](VI S) HWY_ATTR {
    const VF x{_mm512_cvt_roundepi32_ps(S.raw, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)};
    const VI lost = hn::IfThenElseZero(hn::Ne(TruncToInt32(di, x), S), one);
    return hn::BitCast(df, hn::Or(hn::BitCast(di, x), lost));
  };
#endif
  // (fp16 D reaches step4 only on targets below AVX2: every block of an fp16
  // D is plain, as no such preset has block scales and each has F >= 2 and
  // E >= min(zero_exponent, emin_out) >= F - 126 (mma_test checks it); the
  // int32 steps below are right for any model.)
  auto step4 = [&](VI S, VI e_full) HWY_ATTR {
#if HWY_TARGET == HWY_AVX3
    if (fp32_truncated) {
      // S converted toward zero is |S| truncated to 24 bits, x; then x 2^p,
      // p = e_full - F, by vscalefps (x 2^p rounded once, for any p) toward
      // zero: exact on fp32's normal grid, which x's 24 bits fit, and
      // truncation onto its subnormal grid, which x's grid refines there.
      // 2^128 or more must be an infinity (step 4's overflow), where toward
      // zero gives the largest float: there the same scaling to nearest,
      // which is an infinity exactly then (below 2^128 x 2^p is a float).
      // E8M13 then clears 10 more bits.
      const VF x{_mm512_cvt_roundepi32_ps(S.raw, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)};
      const VF pf = hn::ConvertTo(df, hn::Sub(e_full, hn::Set(di, F)));
      const __m512 rz = _mm512_scalef_round_ps(x.raw, pf.raw, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
      const __m512 rn = _mm512_scalef_round_ps(x.raw, pf.raw, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      VF r{_mm512_mask_mov_ps(rz, _mm512_fpclass_ps_mask(rn, 0x18), rn)};  // 0x18: +inf, -inf
      if (R == 14) r = hn::BitCast(df, hn::And(hn::BitCast(di, r), hn::Set(di, ~0x3FF)));
      return r;
    }
#endif
    const VI a = hn::Abs(S);
    const VI g = hn::Sub(hn::Max(floor_log2(a), hn::Sub(hn::Set(di, model.emin_out + F), e_full)), hn::Set(di, R - 1));
    const VI gc = hn::Min(hn::Max(g, hn::Zero(di)), lo31);
    const VI kept = shr(a, gc);
    VI t;
    if (model.nearest) {
      // Up where the rest is above half the grid, or half with kept odd;
      // nothing where the grid is 2^32 or coarser (a < 2^31 is below half;
      // not reached by the fp16-output presets, whose operands' exponents
      // are each at least -14, but by the model's arithmetic).
      const VI rest = hn::Sub(a, shl(kept, gc));
      const VI half = hn::ShiftRight<1>(shl(one, gc));  // gc <= 31: below 2^31
      const auto tie = hn::And(hn::Eq(rest, half), hn::Ne(hn::And(kept, one), hn::Zero(di)));
      const auto up = hn::And(hn::Or(hn::Gt(rest, half), tie), hn::Gt(gc, hn::Zero(di)));
      t = hn::IfThenZeroElse(hn::Gt(g, lo31), shl(hn::Add(kept, hn::IfThenElseZero(up, one)), gc));
    } else {
      t = shl(kept, gc);
    }
    // t may be 2^31 (rounded up from lead 30, g >= 7): halve it where g >= 1.
    const VI half_once = hn::Min(gc, one);
    const VI th = shr(t, half_once);
    const VF f = hn::ConvertTo(df, hn::IfThenElse(hn::Lt(S, hn::Zero(di)), hn::Neg(th), th));
    const Split p = split(hn::Add(hn::Sub(e_full, hn::Set(di, F)), half_once));
    VF r = hn::Mul(hn::Mul(f, pow2f(p.p1)), pow2f(p.p2));
    if (model.emax_out < 128)
      r = hn::IfThenElse(hn::Ge(hn::Abs(r), overflow_f), hn::Or(inf_f, hn::And(r, hn::SignBit(df))), r);
    return r;
  };
  // Step 4 on half a vector in double lanes: units of 2^(E - F) to the
  // output type (the block's sum where int32 does not hold it).
  auto step4_wide = [&](VD units, hn::Vec<decltype(ddi)> E) HWY_ATTR {
    const auto sum = hn::Mul(units, pow2d(hn::Sub(E, hn::Set(ddi, F))));  // exact
    const auto lead = hn::Max(exponent_d(sum), out_emin64);
    const auto scaled = hn::Mul(sum, pow2d(hn::Sub(hn::Set(ddi, R - 1), lead)));
    auto r = hn::Mul(model.nearest ? hn::Round(scaled) : hn::Trunc(scaled), pow2d(hn::Sub(lead, hn::Set(ddi, R - 1))));
    r = hn::IfThenElse(hn::Ge(hn::Abs(r), overflow_at), hn::Or(inf, hn::And(r, sign_mask)), r);
    return hn::IfThenElse(hn::Eq(r, zero_d), zero_d, r);  // a zero result is +0
  };
  // Step 4 of a plain block (the block loop: no shifts, 2^(F - E) = down a
  // normal float, so that 2^(E - F) is one too, its bits 254 << 23 less
  // down's), for fp32 D (truncated to 24 or 14 bits) and fp16 D. On
  // AVX-512: for fp32 D of a quiet block (below 2^128) S converted and
  // scaled toward zero, as step4's, without the overflow's second scaling;
  // for fp16 D S rounded to odd at 24 bits (odd24), scaled by one
  // multiplication (exact: a plain block has E - F >= -126, so a nonzero
  // |S| 2^(E - F) of 24 bits is a normal float), then binary16 to
  // nearest-even: rounding to odd with 13 bits more than binary16's 11 makes
  // the two roundings one. On AVX2 in double halves (below).
  auto step4_plain = [&](VI S, VF down) HWY_ATTR {
    const VF up = hn::BitCast(df, hn::Sub(hn::Set(di, 254 << 23), hn::BitCast(di, down)));
#if HWY_TARGET == HWY_AVX2
    // S 2^(E - F) in double halves, exact (every nonzero one at least
    // 2^-126, a normal float), each half's significand cut to 24 bits by
    // `cut`, then converted to float exactly (2^128 or more: the
    // conversion's infinity).
    const __m256d lo = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(S.raw)),
                                     _mm256_cvtps_pd(_mm256_castps256_ps128(up.raw)));
    const __m256d hi = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(S.raw, 1)),
                                     _mm256_cvtps_pd(_mm256_extractf128_ps(up.raw, 1)));
    auto to_float = [&](auto cut) HWY_ATTR {
      return VF{_mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(cut(lo))), _mm256_cvtpd_ps(cut(hi)), 1)};
    };
    if (fp32_truncated) {
      // fp32 D: truncated to R bits (a mask).
      const __m256d keep = _mm256_castsi256_pd(_mm256_set1_epi64x(~((std::int64_t{1} << (52 - (R - 1))) - 1)));
      return to_float([&](__m256d d) HWY_ATTR { return _mm256_and_pd(d, keep); });
    }
    // fp16 D: rounded to odd at 24 bits (the 29 bits below cut, their OR in
    // the last bit kept), then to binary16 to nearest-even (vcvtps2ph):
    // rounding to odd with 13 bits more than binary16's 11 makes the two
    // roundings one. (S 2^(E - F) is exact in double: no value is rounded
    // before the odd cut.)
    const __m256i low = _mm256_set1_epi64x((std::int64_t{1} << 29) - 1);
    const __m256i odd_bit = _mm256_set1_epi64x(std::int64_t{1} << 29);
    return binary16(to_float([&](__m256d d) HWY_ATTR {
      const __m256i bits = _mm256_castpd_si256(d);
      const __m256i exact = _mm256_cmpeq_epi64(_mm256_and_si256(bits, low), _mm256_setzero_si256());
      return _mm256_castsi256_pd(_mm256_or_si256(_mm256_andnot_si256(low, bits), _mm256_andnot_si256(exact, odd_bit)));
    }));
#elif HWY_TARGET == HWY_AVX3
    if (fp32_truncated) {
      const __m512 x = _mm512_cvt_roundepi32_ps(S.raw, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
      VF r{_mm512_mul_round_ps(x, up.raw, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)};
      if (R == 14) r = hn::BitCast(df, hn::And(hn::BitCast(di, r), hn::Set(di, ~0x3FF)));
      return r;
    }
    return binary16(hn::Mul(odd24(S), up));
#else
    (void)S, (void)up;
    return zero_f;  // never called: the block loop calls it on AVX3 and AVX2 alone
#endif
  };
  const float* HWY_RESTRICT bv[kV];
  const std::int32_t* HWY_RESTRICT ebv[kV];
  VF vc[kQ];
  HWY_ALIGN float promoted[kQ][hn::MaxLanes(df)] = {};
  HWY_ALIGN float lanes[hn::MaxLanes(df)];
  for (std::size_t v = 0; v < kV; ++v) {
    bv[v] = c.b + (j / N + v) * k * N;
    ebv[v] = c.eb + (j / N + v) * k * N;
  }
  for (std::size_t q = 0; q < kQ; ++q)
    vc[q] = cr[q / kV] != nullptr ? hn::LoadU(df, cr[q / kV] + j + (q % kV) * N) : zero_f;
  // The block [start, end) of chain q again, its sum in double halves
  // (exact below 2^53), and step 4 there: where an int32 sum wrapped.
  auto wide_block = [&](std::size_t q, std::size_t start, std::size_t end, VF dn, VF cv, VI e_full) HWY_ATTR {
    const float* HWY_RESTRICT arow = ar[q / kV];
    const float* HWY_RESTRICT bcol = bv[q % kV];
    const VI term = c_term(cv, e_full);
    VD lo = hn::PromoteTo(dd, hn::LowerHalf(dih, term)), hi = hn::PromoteTo(dd, hn::UpperHalf(dih, term));
    for (std::size_t t = start; t < end; ++t) {
      const VI p = TruncToInt32(di, hn::Mul(hn::Mul(hn::Set(df, arow[t]), hn::Load(df, bcol + t * N)), dn));
      lo = hn::Add(lo, hn::PromoteTo(dd, hn::LowerHalf(dih, p)));
      hi = hn::Add(hi, hn::PromoteTo(dd, hn::UpperHalf(dih, p)));
    }
    const auto e_lo = hn::PromoteTo(ddi, hn::LowerHalf(dih, e_full));
    const auto e_hi = hn::PromoteTo(ddi, hn::UpperHalf(dih, e_full));
    return hn::Combine(df, hn::DemoteTo(dfh, step4_wide(hi, e_hi)), hn::DemoteTo(dfh, step4_wide(lo, e_lo)));
  };
  // Whether some chain's C is not finite (an input C, or an overflow of
  // step 4): with maybe_special, the blocks that take the specials' path.
  bool c_special = false;
  for (std::size_t q = 0; q < kQ; ++q) c_special = c_special || !hn::AllTrue(df, hn::IsFinite(vc[q]));
  // Where a zero C's exponent decides nothing: without block scales every
  // nonzero product's exponent is at least -100 (each narrow operand's at
  // least -50), and where zero_exponent and emin_out are at most that, E
  // is the products' whatever a zero C's is (fp32 D); where every product
  // is zero too, S = 0 and D = +0 whatever E is. Then a zero C may count at
  // emin_out, as step 1 counts a subnormal one; a special C's lane takes
  // the specials' sum, whatever E is.
  const bool zero_c_moot = c.esb == nullptr && std::max(model.zero_exponent, model.emin_out) <= -100;
  std::size_t in_chain = 0;
  for (std::size_t start = 0; start < k; start += block) {
    const std::size_t end = std::min(k, start + block);
    VI E[kQ], es[kQ];
    VF special[kQ];
    hn::Mask<decltype(df)> any_special[kQ];
    HWY_UNROLL(8) for (std::size_t q = 0; q < kQ; ++q) {
      // Step 1: C (a zero C at zero_exponent), then the products. With
      // block scales a product's exponent is e(a) + e(b) + es, es the
      // block's scales' exponents: E is kept less es until step 4.
      if (zero_c_moot) {
#if HWY_TARGET == HWY_AVX3
        // vgetexpps: floor(log2 |C|) (a subnormal's own, below emin_out;
        // a zero's, an infinity's and a NaN's converted to int32's least).
        E[q] = hn::Max(TruncToInt32(di, VF{_mm512_getexp_ps(vc[q].raw)}), out_emin);
#else
        E[q] = hn::Max(exponent_f(vc[q]), out_emin);  // a zero's -127
#endif
      } else {
        const auto c_zero = hn::RebindMask(di, hn::Eq(vc[q], zero_f));
        E[q] = hn::IfThenElse(c_zero, zero_exp, hn::Max(exponent_f(vc[q]), out_emin));
      }
      es[q] = hn::Zero(di);
      if (c.esb != nullptr) {
        const std::size_t blk = start / block;
        es[q] = hn::Add(hn::Set(di, esa[q / kV][blk]), hn::Load(di, c.esb + ((j / N + q % kV) * c.blocks + blk) * N));
        E[q] = hn::Sub(E[q], es[q]);
      }
      if (!(maybe_special || c_special)) continue;  // no special term in this block
      any_special[q] = hn::Not(hn::IsFinite(vc[q]));
      special[q] = hn::IfThenElseZero(any_special[q], vc[q]);
      if (maybe_special || !hn::AllFalse(df, any_special[q])) {
        // Specials: IEEE's sum of the non-finite terms.
        for (std::size_t t = start; t < end; ++t) {
          const auto prod = hn::Mul(hn::Set(df, ar[q / kV][t]), hn::Load(df, bv[q % kV] + t * N));
          const auto fin = hn::IsFinite(prod);
          special[q] = hn::IfThenElse(fin, special[q], hn::IfThenElse(any_special[q], hn::Add(special[q], prod), prod));
          any_special[q] = hn::Or(any_special[q], hn::Not(fin));
        }
      }
    }
    // (One vector of B's exponents live at a time: an array of them went
    // through the stack.)
    for (std::size_t t = start; t < end; ++t)
      for (std::size_t v = 0; v < kV; ++v) {
        const auto eb_t = hn::Load(di, ebv[v] + t * N);
        for (std::size_t r = 0; r < kR; ++r)
          E[r * kV + v] = hn::Max(E[r * kV + v], hn::Add(hn::Set(di, er[r][t]), eb_t));
      }
    // Steps 2-3: C's term, then the products, on the grid 2^(E - F), summed
    // in int32: the products in partial sums of at most 16 (below 2^31),
    // each added to the block's sum; where the model's bound lets that sum
    // wrap (c.may_overflow), a wrapped addition is detected and the tile's
    // block is done again in double halves (wide_block).
    VF down[kQ];
    VI units[kQ];
    auto wrapped = hn::Zero(di);
    // C's term by the products' scaling `down` where there are no block
    // scales and F - E <= 126 in every lane of the tile (the least E; a C
    // below 2^(F - 125) with every product zero fails it, as does a lane
    // with C and every product zero, needlessly): C 2^(F - E) is exact but
    // for bits below 1 (it is below 2^(F + 1)), so one multiplication and
    // the truncating conversion; else c_term's shifts. Without block scales
    // E <= 128 (C's exponent, at most 128 for a special C; a product's at
    // most 118), so that with no shifts and F >= 2, 2^(F - E) and 2^(E - F)
    // are normal floats in every lane: a `plain` block, each by one
    // subtraction and shift. Where moreover E <= F + 97 in every lane
    // (`quiet`), no sum of step 4 (below 2^31 units of 2^(E - F)) reaches
    // 2^128.
    bool shifts = c.esb != nullptr, quiet = false;
    if (!shifts) {
      VI least = E[0], most = E[0];
      for (std::size_t q = 1; q < kQ; ++q) least = hn::Min(least, E[q]), most = hn::Max(most, E[q]);
      shifts = !hn::AllFalse(di, hn::Lt(least, hn::Set(di, F - 126)));
      quiet = hn::AllFalse(di, hn::Gt(most, hn::Set(di, F + 97)));
    }
    const bool plain = !shifts && F >= 2;
    for (std::size_t q = 0; q < kQ; ++q) {
      down[q] = plain ? hn::BitCast(df, hn::ShiftLeft<23>(hn::Sub(hn::Set(di, F + 127), E[q])))
                      : pow2f(hn::Max(hn::Min(hn::Sub(hn::Set(di, F), E[q]), hn::Set(di, 126)), hn::Set(di, -126)));
      units[q] = HWY_UNLIKELY(shifts) ? c_term(vc[q], hn::Add(E[q], es[q])) : TruncToInt32(di, hn::Mul(vc[q], down[q]));
    }
    for (std::size_t first = start; first < end; first += 16) {
      const std::size_t last = std::min(end, first + 16);
      VI part[kQ];
      for (std::size_t q = 0; q < kQ; ++q) part[q] = hn::Zero(di);
      for (std::size_t t = first; t < last; ++t) {
        VF b_t[kV];
        for (std::size_t v = 0; v < kV; ++v) b_t[v] = hn::Load(df, bv[v] + t * N);
        for (std::size_t r = 0; r < kR; ++r) {
          const auto at = hn::Set(df, ar[r][t]);
          for (std::size_t v = 0; v < kV; ++v) {
            const std::size_t q = r * kV + v;
            part[q] = hn::Add(part[q], TruncToInt32(di, hn::Mul(hn::Mul(at, b_t[v]), down[q])));
          }
        }
      }
      for (std::size_t q = 0; q < kQ; ++q) {
        const auto sum = hn::Add(units[q], part[q]);
        // (x + y wrapped where the sum's sign differs from both x's and y's.)
        if (c.may_overflow) wrapped = hn::Or(wrapped, hn::And(hn::Xor(units[q], sum), hn::Xor(part[q], sum)));
        units[q] = sum;
      }
    }
    const bool wide = !c.int_step4 || (c.may_overflow && !hn::AllFalse(di, hn::Lt(wrapped, hn::Zero(di))));
    VF r[kQ];
    if (HWY_UNLIKELY(wide)) {
      for (std::size_t q = 0; q < kQ; ++q) r[q] = wide_block(q, start, end, down[q], vc[q], hn::Add(E[q], es[q]));
    } else if (plain && ((HWY_TARGET == HWY_AVX3 && (fp32_truncated ? quiet : fp16_nearest)) ||
                         (HWY_TARGET == HWY_AVX2 && (fp32_truncated || fp16_nearest)))) {
      HWY_UNROLL(8) for (std::size_t q = 0; q < kQ; ++q) r[q] = step4_plain(units[q], down[q]);
    } else {
      HWY_UNROLL(8) for (std::size_t q = 0; q < kQ; ++q) r[q] = step4(units[q], hn::Add(E[q], es[q]));
    }
    if (maybe_special || c_special) {
      for (std::size_t q = 0; q < kQ; ++q)
        vc[q] = hn::IfThenElse(any_special[q], hn::IfThenElse(hn::IsNaN(special[q]), nan, special[q]), r[q]);
    } else {
      for (std::size_t q = 0; q < kQ; ++q) vc[q] = r[q];
    }
    // An overflow (step 4's infinity) makes a special C for the next block,
    // as does a special C before it; a quiet block of an fp32 output has
    // neither where it had no special C.
    if (!maybe_special && (c_special || wide || !quiet || model.emax_out < 128)) {
      auto nonfinite = hn::Not(hn::IsFinite(vc[0]));
      for (std::size_t q = 1; q < kQ; ++q) nonfinite = hn::Or(nonfinite, hn::Not(hn::IsFinite(vc[q])));
      c_special = !hn::AllFalse(df, nonfinite);
    }
    in_chain += end - start;
    if (model.promote_every > 0 && in_chain == static_cast<std::size_t>(model.promote_every)) {
      for (std::size_t q = 0; q < kQ; ++q) {
        hn::Store(vc[q], df, lanes);
        for (std::size_t l = 0; l < N; ++l) promoted[q][l] = promoted[q][l] + lanes[l];
        vc[q] = zero_f;
      }
      in_chain = 0;
    }
  }
  for (std::size_t q = 0; q < kQ; ++q) {
    hn::Store(vc[q], df, lanes);
    for (std::size_t l = 0; l < N; ++l) {
      float x = lanes[l];
      if (model.promote_every > 0) x = in_chain == 0 ? promoted[q][l] : promoted[q][l] + lanes[l];
      result[q * N + l] = static_cast<double>(x);
    }
  }
}
#endif

// Rows [0, m) of out (m x n), as tensor_core_simd.cpp's TensorCoreRows.
HWY_ATTR void NarrowRows(const TensorCoreModel& model, std::size_t m, std::size_t n, std::size_t k,
                         const float* HWY_RESTRICT a, const std::int32_t* HWY_RESTRICT ea,
                         const float* HWY_RESTRICT b, const std::int32_t* HWY_RESTRICT eb, std::size_t ldb,
                         std::size_t panel, const float* HWY_RESTRICT c_in, double* HWY_RESTRICT out,
                         const unsigned char* row_special, const unsigned char* col_flags, std::size_t blocks,
                         const std::int32_t* esa, const std::int32_t* esb) {
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<float> df;
  const std::size_t N = hn::Lanes(df);
  // 4 rows x 2 vectors where there are 32 registers (AVX-512: each vector of
  // B serves 4 rows), 2 x 2 with 16.
  constexpr std::size_t kR = HWY_TARGET == HWY_AVX3 ? 4 : 2, kV = 2;
  std::vector<unsigned char> col_special(ldb / N, 0);
  for (std::size_t j = 0; j < ldb; ++j) col_special[j / N] |= col_flags[j];
  // A block's sum: at most `block` products below 2^(F + 2) and C's term
  // below 2^(F + 1), integers.
  const std::int64_t F = model.fraction_bits;
  const std::int64_t largest = model.block * ((std::int64_t{1} << (F + 2)) - 1) + (std::int64_t{1} << (F + 1)) - 1;
  const bool int_step4 = model.result_bits <= 24 && model.emin_out >= -126 && model.emax_out <= 128;
  const NarrowArgs args{&model, k, b, eb, blocks, esb, largest > std::numeric_limits<std::int32_t>::max(), int_step4};
  std::vector<double> result(kR * kV * N);
  for (std::size_t first = 0; first < ldb; first += panel) {
    const std::size_t last = std::min(ldb, first + panel);
    for (std::size_t i = 0; i < m;) {
      const std::size_t rows = i + kR <= m ? kR : 1;
      const float* ar[kR];
      const std::int32_t* er[kR];
      const std::int32_t* sr[kR];
      const float* cr[kR];
      bool row_flag = false;
      for (std::size_t r = 0; r < rows; ++r) {
        ar[r] = a + (i + r) * k;
        er[r] = ea + (i + r) * k;
        sr[r] = esa != nullptr ? esa + (i + r) * blocks : nullptr;
        cr[r] = c_in != nullptr ? c_in + (i + r) * ldb : nullptr;
        row_flag = row_flag || row_special[i + r] != 0;
      }
      for (std::size_t j = first; j < last;) {
        const std::size_t vectors = j + kV * N <= last ? kV : 1;
        bool special = row_flag;
        for (std::size_t v = 0; v < vectors; ++v) special = special || col_special[j / N + v] != 0;
        if (rows == kR && vectors == kV) NarrowTile<kR, kV>(args, ar, er, sr, cr, j, special, result.data());
        else if (rows == kR) NarrowTile<kR, 1>(args, ar, er, sr, cr, j, special, result.data());
        else if (vectors == kV) NarrowTile<1, kV>(args, ar, er, sr, cr, j, special, result.data());
        else NarrowTile<1, 1>(args, ar, er, sr, cr, j, special, result.data());
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t l = 0; l < vectors * N && j + l < n; ++l)
            out[(i + r) * n + j + l] = result[r * vectors * N + l];
        j += vectors * N;
      }
      i += rows;
    }
  }
#else
  (void)model, (void)m, (void)n, (void)k, (void)a, (void)ea, (void)b, (void)eb, (void)ldb, (void)panel, (void)c_in,
      (void)out, (void)row_special, (void)col_flags, (void)blocks, (void)esa, (void)esb;
  std::abort();  // never dispatched: NarrowLanes() is 0
#endif
}

// Floats per vector; 0 where the kernel does not run (SCALAR: no halves).
HWY_ATTR std::size_t NarrowLanes() {
#if HWY_TARGET != HWY_SCALAR && HWY_HAVE_FLOAT64
  return hn::Lanes(hn::ScalableTag<float>());
#else
  return 0;
#endif
}

}  // namespace lplab::kernels::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <new>

#include "hwy/aligned_allocator.h"
#include "row_bands.h"

namespace lplab::kernels::detail {

HWY_EXPORT(NarrowRows);
HWY_EXPORT(NarrowLanes);

namespace {
constexpr std::int32_t kNoExponent = -100000;  // a zero operand's

// Whether x's products with the other operands are exact floats the kernel
// can scale: 0, a NaN or an infinity, or at most 12 significant bits with
// 2^-50 <= |x| < 2^60. (Then a nonzero product's exponent is at least
// -100, so that where one decides E, 2^(F - E) <= 2^126 is a float.) On the
// bits, without a branch, so that the loops over every operand vectorise.
constexpr std::uint32_t kNarrowLow = (127 - 50) << 23, kNarrowHigh = (127 + 60) << 23;
std::uint32_t narrow_value(std::uint32_t u) {
  const std::uint32_t mag = u & 0x7FFFFFFFu;
  return static_cast<std::uint32_t>(mag == 0) | static_cast<std::uint32_t>(mag >= 0x7F800000u) |
         (static_cast<std::uint32_t>(mag - kNarrowLow < kNarrowHigh - kNarrowLow) &
          static_cast<std::uint32_t>((u & 0xFFFu) == 0));
}
bool all_narrow(const float* x, std::size_t n) {
  std::uint32_t ok = 1;
  for (std::size_t i = 0; i < n; ++i) ok &= narrow_value(std::bit_cast<std::uint32_t>(x[i]));
  return ok != 0;
}

// floor(log2 |x|), at least emin (every narrow value is a normal float); a
// zero's kNoExponent, a NaN's or an infinity's 0 (the block is decided by
// the specials).
std::int32_t operand_exponent(float x, int emin) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const auto field = static_cast<std::int32_t>((u >> 23) & 0xFF);
  const std::int32_t e = std::max(field - 127, emin);
  return (u & 0x7FFFFFFFu) == 0 ? kNoExponent : field == 0xFF ? 0 : e;
}
}  // namespace

bool tensor_core_narrow(const MatmulProblem& p, const TensorCoreModel& model, double* out, unsigned threads,
                        const double* c_in, const TensorCoreScales* scales) {
  if (model.block > 32 || model.fraction_bits > 25 || p.k == 0) return false;
  const std::size_t lanes = LPLAB_DISPATCH(NarrowLanes)();
  if (lanes == 0 || !float_arithmetic_exact()) return false;
  const std::size_t m = p.m, n = p.n, k = p.k;
  if (!all_narrow(p.a, m * k) || !all_narrow(p.b, k * n)) return false;
  if (c_in != nullptr)
    for (std::size_t i = 0; i < m * n; ++i)
      if (static_cast<double>(static_cast<float>(c_in[i])) != c_in[i] && !std::isnan(c_in[i])) return false;
  const std::size_t ldb = (n + lanes - 1) / lanes * lanes;
  // Block scales: one per block of products (a step); each finite and
  // nonzero (a NaN scale makes its products NaN: the scalar model's).
  const std::size_t blocks = scales != nullptr ? k / scales->block : 0;
  if (scales != nullptr && scales->block != static_cast<std::size_t>(model.block)) return false;
  std::vector<std::int32_t> esa(m * blocks), esb(ldb * blocks, 0);
  const PanelIndex at_b(k, lanes), at_s(blocks, lanes);
  auto scale_exponent = [&](float s, std::int32_t& e) {
    if (!(std::isfinite(s) && s > 0)) return false;
    e = std::max(std::ilogb(s), scales->emin);
    return true;
  };
  for (std::size_t i = 0; i < m * blocks; ++i)
    if (!scale_exponent(scales->a[i], esa[i])) return false;
  for (std::size_t j = 0; j < n && blocks > 0; ++j)
    for (std::size_t q = 0; q < blocks; ++q)
      if (!scale_exponent(scales->b_t[j * blocks + q], esb[at_s(q, j)])) return false;
  std::vector<std::int32_t> ea(m * k);
  hwy::AlignedFreeUniquePtr<float[]> bp = hwy::AllocateAligned<float>(k * ldb);
  hwy::AlignedFreeUniquePtr<std::int32_t[]> eb = hwy::AllocateAligned<std::int32_t>(k * ldb);
  if (bp == nullptr || eb == nullptr) throw std::bad_alloc();
  std::vector<unsigned char> row_special(m, 0), col_special(ldb, 0);
  // (Loops without branches, which the compiler vectorises: a special is
  // an exponent field of 0xFF.)
  const auto special = [](float x) {
    return static_cast<std::uint32_t>((std::bit_cast<std::uint32_t>(x) & 0x7F800000u) == 0x7F800000u);
  };
  for (std::size_t r = 0; r < m; ++r) {
    std::uint32_t any = 0;
    for (std::size_t t = 0; t < k; ++t) {
      const std::size_t i = r * k + t;
      ea[i] = operand_exponent(p.a[i], model.emin_a);
      any |= special(p.a[i]);
    }
    row_special[r] = static_cast<unsigned char>(any);
  }
  {
    std::vector<std::uint32_t> any(n, 0);
    for (std::size_t t = 0; t < k; ++t)
      for (std::size_t j = 0; j < n; ++j) any[j] |= special(p.b[t * n + j]);
    for (std::size_t j = 0; j < n; ++j) col_special[j] = static_cast<unsigned char>(any[j]);
  }
  // B a vector of columns at a time, in the order the kernel reads it
  // (at_b(t, j) for j in that vector is contiguous); columns past n zero.
  for (std::size_t v = 0; v < ldb / lanes; ++v)
    for (std::size_t t = 0; t < k; ++t) {
      const std::size_t at = at_b(t, v * lanes), j0 = v * lanes;
      const std::size_t here = std::min(lanes, n - std::min(n, j0));
      const float* row = p.b + t * n + j0;
      for (std::size_t l = 0; l < here; ++l) {
        bp[at + l] = row[l];
        eb[at + l] = operand_exponent(row[l], model.emin_b);
      }
      for (std::size_t l = here; l < lanes; ++l) bp[at + l] = 0.0f, eb[at + l] = kNoExponent;
    }
  // Panels of whole vectors whose B, 8 bytes a value, fills at most half of
  // a 512 KiB L2 cache.
  const std::size_t panel =
      std::max<std::size_t>(lanes, (std::size_t{256} << 10) / (8 * std::max<std::size_t>(k, 1)) / lanes * lanes);
  std::vector<float> cin(c_in != nullptr ? m * ldb : 0, 0.0f);
  for (std::size_t i = 0; c_in != nullptr && i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) cin[i * ldb + j] = static_cast<float>(c_in[i * n + j]);
  for_row_bands(m, threads, [&](std::size_t first, std::size_t rows) {
    LPLAB_DISPATCH(NarrowRows)(model, rows, n, k, p.a + first * k, ea.data() + first * k, bp.get(), eb.get(), ldb,
                               panel, c_in != nullptr ? cin.data() + first * ldb : nullptr, out + first * n,
                               row_special.data() + first, col_special.data(), blocks,
                               blocks > 0 ? esa.data() + first * blocks : nullptr, blocks > 0 ? esb.data() : nullptr);
  });
  return true;
}

}  // namespace lplab::kernels::detail
#endif
