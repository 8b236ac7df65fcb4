// Golden anchors: hand-written literals from the specifications, checked at
// compile time (static_assert) and at run time (policies, flags).
#include <gtest/gtest.h>

#include <limits>

#include "lplab/formats.h"

namespace lplab {
namespace {

// Compile-time: the defaults of PyTorch and ml_dtypes.
static_assert(float8_e4m3fn(448.0f).bits() == 0x7E);  // 0b0'1111'110 = 1.75 * 2^8
static_assert(float8_e4m3fn(464.0f).bits() == 0x7E);  // tie above max rounds to even 448
static_assert(float8_e4m3fn(465.0f).bits() == 0x7F);  // past the tie: NaN (no infinity)
static_assert(float8_e4m3fn(-465.0f).bits() == 0xFF);
static_assert(float8_e5m2(57344.0f).bits() == 0x7B);  // 0b0'11110'11 = 1.75 * 2^15
static_assert(float8_e5m2(61440.0f).bits() == 0x7C);  // tie above max rounds to inf
static_assert(float8_e5m2(61439.0f).bits() == 0x7B);
static_assert(float16(65504.0f).bits() == 0x7BFF);
static_assert(float16(65520.0f).bits() == 0x7C00);   // Eigen's anchor: 65536 -> 0x7c00 too
static_assert(float16(65519.996f).bits() == 0x7BFF);
static_assert(float16(1e-8f).bits() == 0x0000);      // below half of 2^-24: underflows to 0
static_assert(bfloat16(1e-8f).bits() == 0x322C);     // bf16 keeps it: 1.0011e-8
static_assert(float16(5.9604645e-8f).bits() == 0x0001);  // 2^-24
static_assert(bfloat16(1.0f).bits() == 0x3F80);
static_assert(float8_e4m3fnuz(240.0f).bits() == 0x7F);  // 0b0'1111'111 = 1.875 * 2^7
static_assert(float8_e4m3fnuz(-0.0f).bits() == 0x00);   // no negative zero
static_assert(float8_e4m3fnuz(1e9f).bits() == 0x80);    // the single NaN
static_assert(float8_e5m2fnuz(57344.0f).bits() == 0x7F);
static_assert(float8_e8m0fnu(1.0f).bits() == 0x7F);     // 2^0, bias 127
static_assert(float8_e8m0fnu(3.0f).bits() == 0x81);     // tie 2|4: significand 1 is odd, up to 4
static_assert(float8_e8m0fnu(0.0f).bits() == 0xFF);     // no zero: NaN
static_assert(float6_e2m3fn(7.5f).bits() == 0x1F);      // 0b0'11'111 = 1.875 * 2^2
static_assert(float6_e2m3fn(100.0f).bits() == 0x1F);    // no inf or NaN: saturates
static_assert(float6_e3m2fn(28.0f).bits() == 0x1F);     // 0b0'111'11 = 1.75 * 2^4
static_assert(float4_e2m1fn(6.0f).bits() == 0x7);       // 0b0'11'1 = 1.5 * 2^2
static_assert(float4_e2m1fn(-5.0f).bits() == 0xE);      // tie 4|6 -> 4 (even), negative
static_assert(float4_e2m1fn(0.25f).bits() == 0x0);      // tie 0|0.5 -> 0
// ml_dtypes' E3M4, E4M3 and E4M3B11FNUZ (ml_dtypes README, "Specifications").
static_assert(float8_e3m4(15.5f).bits() == 0x6F);       // 0b0'110'1111 = 1.9375 * 2^3
static_assert(float8_e3m4(15.75f).bits() == 0x70);      // tie above max, odd significand: inf
static_assert(float8_e3m4(0.015625f).bits() == 0x01);   // 2^-6, the smallest subnormal
static_assert(float8_e4m3(240.0f).bits() == 0x77);      // 0b0'1110'111 = 1.875 * 2^7
static_assert(float8_e4m3(248.0f).bits() == 0x78);      // tie above max: inf, unlike E4M3FN's 256 = 0x78
static_assert(float8_e4m3fn(256.0f).bits() == 0x78);
static_assert(float8_e4m3b11fnuz(30.0f).bits() == 0x7F);  // 0b0'1111'111 = 1.875 * 2^(15 - 11)
static_assert(float8_e4m3b11fnuz(32.0f).bits() == 0x80);  // past max: the single NaN
static_assert(float8_e4m3b11fnuz(-0.0f).bits() == 0x00);  // no negative zero
static_assert(float8_e4m3b11fnuz(0x1p-13f).bits() == 0x01);  // 2^(1 - 11 - 3)
// UE5M3 (PTX ISA 13.4 preview): unsigned, bias 15, NaN 0xFF alone.
static_assert(float8_e5m3fnu(114688.0f).bits() == 0xFE);  // 0b11111'110 = 1.75 * 2^16
static_assert(float8_e5m3fnu(122880.0f).bits() == 0xFF);  // tie above max (1.875 * 2^16): no inf, NaN
static_assert(float8_e5m3fnu(1.0f).bits() == 0x78);       // 0b01111'000
static_assert(float8_e5m3fnu(0x1p-14f).bits() == 0x08);   // the smallest normal
static_assert(float8_e5m3fnu(0x1p-17f).bits() == 0x01);   // the smallest subnormal
static_assert(float8_e5m3fnu(-1.0f).bits() == 0xFF);      // no negative numbers: NaN
static_assert(float8_e5m3fnu(-0.0f).bits() == 0x00);      // nor a negative zero
static_assert(static_cast<float>(float8_e4m3fn::from_bits(0x01)) == 0.001953125f);  // 2^-9
static_assert(static_cast<double>(float8_e5m2::from_bits(0x7C)) == std::numeric_limits<double>::infinity());

// The lecture's point: fp16 underflows 1e-8 to zero, bf16 does not.
static_assert(static_cast<float>(float16(1e-8f)) == 0.0f);
static_assert(static_cast<float>(bfloat16(1e-8f)) > 0.0f);

// finfo anchors, compile time.
static_assert(finfo<float8_e4m3fn>::max == 448 && finfo<float8_e5m2>::max == 57344);
static_assert(finfo<float8_e4m3fn>::overflow_threshold == 464 &&
              !finfo<float8_e4m3fn>::threshold_tie_overflows);
static_assert(finfo<float8_e5m2>::overflow_threshold == 61440 &&
              finfo<float8_e5m2>::threshold_tie_overflows);
static_assert(finfo<float16>::overflow_threshold == 65520 && finfo<float16>::threshold_tie_overflows);
static_assert(!std::numeric_limits<float8_e4m3fn>::has_infinity);
static_assert(std::numeric_limits<float8_e5m2>::has_infinity);
static_assert(!std::numeric_limits<float4_e2m1fn>::has_quiet_NaN);

TEST(Golden, policies_at_e4m3fn_max) {
  // Saturation turns overflow and infinities into +-448, as __NV_SATFINITE.
  EXPECT_EQ(convert<float8_e4m3fn>(1e6f, Round::nearest_even, Overflow::saturate).bits(), 0x7E);
  EXPECT_EQ(convert<float8_e4m3fn>(-INFINITY, Round::nearest_even, Overflow::saturate).bits(), 0xFE);
  // IEEE 754 7.4: toward zero never overflows to infinity/NaN.
  EXPECT_EQ(convert<float8_e4m3fn>(1e6f, Round::toward_zero).bits(), 0x7E);
  EXPECT_EQ(convert<float8_e4m3fn>(449.0f, Round::upward).bits(), 0x7F);
  EXPECT_EQ(convert<float8_e4m3fn>(-449.0f, Round::upward).bits(), 0xFE);
  EXPECT_EQ(convert<float8_e4m3fn>(-449.0f, Round::downward).bits(), 0xFF);
  EXPECT_EQ(convert<float8_e4m3fn>(464.0f, Round::nearest_away).bits(), 0x7F);  // tie away
}

TEST(Golden, e5m2_and_fp16_infinities) {
  EXPECT_EQ(convert<float8_e5m2>(INFINITY).bits(), 0x7C);
  EXPECT_EQ(convert<float8_e5m2>(INFINITY, Round::toward_zero).bits(), 0x7C);  // inf stays inf
  EXPECT_EQ(convert<float8_e5m2>(1e9f, Round::toward_zero).bits(), 0x7B);      // finite: max
  EXPECT_EQ(convert<float8_e5m2>(1e9f, Round::downward).bits(), 0x7B);
  EXPECT_EQ(convert<float8_e5m2>(-1e9f, Round::downward).bits(), 0xFC);
  EXPECT_EQ(convert<float16>(65536.0f).bits(), 0x7C00);
  EXPECT_EQ(convert<float16>(65536.0f, Round::nearest_even, Overflow::saturate).bits(), 0x7BFF);
}

TEST(Golden, flags) {
  Flags f;
  convert<float8_e4m3fn>(465.0f, Round::nearest_even, Overflow::ieee, &f);
  EXPECT_TRUE(f.overflow() && f.inexact() && f.invalid() && !f.underflow());
  f.clear();
  convert<float8_e4m3fn>(448.0f, Round::nearest_even, Overflow::ieee, &f);
  EXPECT_FALSE(f.any());
  f.clear();
  convert<float16>(1e-8f, Round::nearest_even, Overflow::ieee, &f);
  EXPECT_TRUE(f.underflow() && f.inexact() && !f.overflow());
  f.clear();
  convert<float16>(5.9604645e-8f, Round::nearest_even, Overflow::ieee, &f);  // exact subnormal
  EXPECT_FALSE(f.any());  // tiny but exact: no underflow (IEEE 754-2019 7.5)
  f.clear();
  convert<float4_e2m1fn>(NAN, Round::nearest_even, Overflow::ieee, &f);
  EXPECT_TRUE(f.invalid());
  f.clear();
  convert<float8_e8m0fnu>(-1.0f, Round::nearest_even, Overflow::ieee, &f);
  EXPECT_TRUE(f.invalid());
}

// Underflow under default exception handling (IEEE 754-2019 7.5): raised
// when the result is tiny and inexact, as SoftFloat and x86 (MXCSR, underflow
// masked) do. An exact subnormal result raises nothing, under every rounding.
template <class T, class X>
Flags flags_of(X x, Round r = Round::nearest_even, std::uint64_t* bits = nullptr) {
  Flags f;
  const T y = convert<T>(x, r, Overflow::ieee, &f, 0x9E3779B9u);
  if (bits != nullptr) *bits = y.bits();
  return f;
}

TEST(Golden, underflow_is_tiny_and_inexact) {
  constexpr Round kAll[] = {Round::nearest_even, Round::nearest_away, Round::toward_zero,
                            Round::upward,       Round::downward,     Round::stochastic};
  std::uint64_t bits = 0;
  for (Round r : kAll) {
    SCOPED_TRACE(round_name(r));
    // Exact subnormal results, from float and from double: no flag at all.
    EXPECT_FALSE(flags_of<float16>(0x1p-24f, r, &bits).any());
    EXPECT_EQ(bits, 0x0001u);
    EXPECT_FALSE(flags_of<float16>(-0x1p-24, r, &bits).any());
    EXPECT_EQ(bits, 0x8001u);
    EXPECT_FALSE(flags_of<float16>(1023 * 0x1p-24f, r, &bits).any());  // the largest subnormal
    EXPECT_EQ(bits, 0x03FFu);
    EXPECT_FALSE(flags_of<float8_e4m3fn>(0x1p-9f, r, &bits).any());
    EXPECT_EQ(bits, 0x01u);
    EXPECT_FALSE(flags_of<float8_e4m3fn>(-7 * 0x1p-9f, r, &bits).any());
    EXPECT_EQ(bits, 0x87u);
    EXPECT_FALSE(flags_of<float8_e5m2>(0x1p-16f, r, &bits).any());
    EXPECT_EQ(bits, 0x01u);
    EXPECT_FALSE(flags_of<float4_e2m1fn>(0.5f, r, &bits).any());  // E2M1's one subnormal
    EXPECT_EQ(bits, 0x1u);
    EXPECT_FALSE(flags_of<bfloat16>(0x1p-133f, r, &bits).any());
    EXPECT_EQ(bits, 0x0001u);
    EXPECT_FALSE(flags_of<float32>(0x1p-149, r, &bits).any());
    EXPECT_EQ(bits, 0x00000001u);
    // Between formats: float16 2^-16 into E5M2 (the same exponent field),
    // E5M2's smallest subnormal into float16 (widening), float16's into float.
    EXPECT_FALSE(flags_of<float8_e5m2>(float16::from_bits(0x0100), r, &bits).any());
    EXPECT_EQ(bits, 0x01u);
    EXPECT_FALSE(flags_of<float16>(float8_e5m2::from_bits(0x01), r, &bits).any());
    EXPECT_EQ(bits, 0x0100u);
    EXPECT_FALSE(flags_of<float32>(float16::from_bits(0x0001), r).any());
    // Zero in, zero out: exact, no flag.
    EXPECT_FALSE(flags_of<float16>(0.0f, r).any());
    EXPECT_FALSE(flags_of<float8_e4m3fn>(-0.0, r).any());
  }
  // Tiny and inexact: underflow and inexact. 3 * 2^-26 = 0.75 * 2^-24 rounds
  // to 2^-24 (nearest) or to 0 (toward zero).
  Flags f = flags_of<float16>(3 * 0x1p-26f, Round::nearest_even, &bits);
  EXPECT_TRUE(f.underflow() && f.inexact() && !f.overflow() && !f.invalid());
  EXPECT_EQ(bits, 0x0001u);
  f = flags_of<float16>(3 * 0x1p-26f, Round::toward_zero, &bits);
  EXPECT_TRUE(f.underflow() && f.inexact());
  EXPECT_EQ(bits, 0x0000u);
  f = flags_of<float16>(1.5f * 0x1p-24f, Round::nearest_even, &bits);  // a tie, to even 2^-23
  EXPECT_TRUE(f.underflow() && f.inexact());
  EXPECT_EQ(bits, 0x0002u);
  f = flags_of<float8_e4m3fn>(1.25f * 0x1p-9f, Round::nearest_even, &bits);
  EXPECT_TRUE(f.underflow() && f.inexact());
  EXPECT_EQ(bits, 0x01u);
  // Rounding up from below into the smallest normal: inexact, not tiny.
  f = flags_of<float16>(0x1p-14f - 0x1p-26f, Round::nearest_even, &bits);
  EXPECT_TRUE(f.inexact() && !f.underflow());
  EXPECT_EQ(bits, 0x0400u);
  f = flags_of<float16>(0x1p-14f - 0x1p-30f, Round::upward, &bits);
  EXPECT_TRUE(f.inexact() && !f.underflow());
  EXPECT_EQ(bits, 0x0400u);
  // The tie 1023.5 * 2^-24 = 2^-14 - 2^-25 rounds to even, 2^-14: not tiny by
  // the delivered result (policy.h; IEEE's unbounded-exponent rule would
  // call it tiny, 2^-14 - 2^-25 having 11 significant bits).
  f = flags_of<float16>(0x1p-14f - 0x1p-25f, Round::nearest_even, &bits);
  EXPECT_TRUE(f.inexact() && !f.underflow());
  EXPECT_EQ(bits, 0x0400u);
  f = flags_of<float16>(0x1p-14f - 0x1p-30f, Round::downward, &bits);  // stays subnormal
  EXPECT_TRUE(f.inexact() && f.underflow());
  EXPECT_EQ(bits, 0x03FFu);
  // E8M0 has no zero: 2^-127 itself is exact (no flag); anything below is
  // rounded or clamped up to it, inexact, and raises underflow.
  EXPECT_FALSE(flags_of<float8_e8m0fnu>(0x1p-127f, Round::nearest_even, &bits).any());
  EXPECT_EQ(bits, 0x00u);
  for (double x : {0x1p-128, 0x1.8p-128, 0x1p-200}) {
    for (Round r : kAll) {
      f = flags_of<float8_e8m0fnu>(x, r, &bits);
      EXPECT_TRUE(f.underflow() && f.inexact() && !f.invalid()) << x << " " << round_name(r);
      EXPECT_EQ(bits, 0x00u);
    }
  }
  // Arithmetic: an exact subnormal result raises nothing, an inexact one both.
  const float16 a = float16::from_bits(0x0400), b = float16::from_bits(0x0401);  // 2^-14, 2^-14 + 2^-24
  f.clear();
  EXPECT_EQ(sub(b, a, Round::nearest_even, Overflow::ieee, &f).bits(), 0x0001u);
  EXPECT_FALSE(f.any());
  f.clear();
  EXPECT_EQ(mul(float16(0x1p-12f), float16(0x1p-12f), Round::nearest_even, Overflow::ieee, &f).bits(), 0x0001u);
  EXPECT_FALSE(f.any());
  f.clear();
  EXPECT_EQ(mul(float16(0x1p-12f), float16(0x1.8p-13f), Round::nearest_even, Overflow::ieee, &f).bits(),
            0x0001u);  // 0.75 * 2^-24
  EXPECT_TRUE(f.underflow() && f.inexact());
}

TEST(Golden, stochastic_rounding_is_reproducible_and_unbiased) {
  // 1 + 1/4 ulp in bf16: rounds up for exactly a quarter of the draws.
  const float x = 1.0f + 0.25f * 0.0078125f;
  int ups = 0;
  for (std::uint32_t k = 0; k < 1024; ++k) {
    const std::uint32_t r = k << 22;
    const bfloat16 y = convert<bfloat16>(x, Round::stochastic, Overflow::ieee, nullptr, r);
    EXPECT_EQ(y.bits(), convert<bfloat16>(x, Round::stochastic, Overflow::ieee, nullptr, r).bits());
    ups += y.bits() == 0x3F81;
  }
  EXPECT_EQ(ups, 256);
}

TEST(Golden, nan_payload_and_sign_are_kept) {
  const float qnan_payload = detail::bit_cast<float>(0xFFC12345u);
  EXPECT_EQ(convert<float16>(qnan_payload).bits(), 0xFE00 | (0x412345u >> 13));
  EXPECT_EQ(convert<bfloat16>(qnan_payload).bits(), 0xFFC1);
  EXPECT_EQ(convert<float8_e4m3fn>(qnan_payload).bits(), 0xFF);
  EXPECT_EQ(convert<float8_e4m3fnuz>(qnan_payload).bits(), 0x80);
  EXPECT_EQ(convert<float8_e8m0fnu>(qnan_payload).bits(), 0xFF);
  // A signalling NaN comes out quiet.
  EXPECT_EQ(convert<float16>(detail::bit_cast<float>(0x7F800001u)).bits(), 0x7E00);
  // Through double and back: payload preserved, as x86 hardware does.
  EXPECT_EQ(detail::bit_cast<std::uint32_t>(convert<float>(convert<double>(qnan_payload))),
            0xFFC12345u);
}

TEST(Golden, double_rounding_trap_is_avoided) {
  // 1 + 2^-11 is the fp16 tie between 1 and 1 + 2^-10; x lies just above it.
  // Through float the 2^-40 is lost and the tie rounds to even (1.0); rounding
  // the double once gives the correct 1 + 2^-10.
  const double x = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(convert<float16>(static_cast<float>(x)).bits(), 0x3C00);
  EXPECT_EQ(convert<float16>(x).bits(), 0x3C01);
  // Likewise at e4m3fn's overflow threshold: 464 + tiny must overflow to NaN.
  EXPECT_EQ(convert<float8_e4m3fn>(464.0 + 0x1p-40).bits(), 0x7F);
  EXPECT_EQ(convert<float8_e4m3fn>(static_cast<float>(464.0 + 0x1p-40)).bits(), 0x7E);
}

TEST(Golden, user_defined_formats) {
  using e3m4 = Float<Descriptor{.name = "float8_e3m4", .exponent_bits = 3, .mantissa_bits = 4,
                                .bias = 3, .encoding = Encoding::fn}>;
  using e4m3_inf = Float<Descriptor{.name = "float8_e4m3", .exponent_bits = 4,
                                    .mantissa_bits = 3, .bias = 7, .encoding = Encoding::ieee}>;
  EXPECT_EQ(finfo<e3m4>::max, 30);  // 0b0'111'1110 = 1.875 * 2^4
  EXPECT_EQ(finfo<e3m4>::smallest_subnormal, 0.015625);
  EXPECT_EQ(finfo<e4m3_inf>::max, 240);  // IEEE-style E4M3: 0b0'1110'111 = 1.875 * 2^7
  EXPECT_TRUE(isinf(e4m3_inf(1000.0f)));
  EXPECT_EQ(static_cast<float>(e3m4(3.14159f)), 3.125f);
}

}  // namespace
}  // namespace lplab
