// lplab's side of every documented difference from ml_dtypes 0.6.0
// (docs/ml-dtypes.md), one test per item, with the page's own examples. The
// ml_dtypes side is checked live by tests/python/ml_dtypes_differences.py.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "lplab/formats.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace lplab {
namespace {

float f32(std::uint32_t bits) { return std::bit_cast<float>(bits); }

template <class T>
void expect_code(T got, std::uint64_t want, const char* what) {
  EXPECT_EQ(got.bits(), want) << what << ": got " << got;
}

// 1. Float inputs in (2^-127, 1.5 * 2^-127) into E8M0: the nearest power of
//    two is 2^-127 (code 0x00); ml_dtypes gives 2^-126.
TEST(MlDtypesDifferences, e8m0_just_above_smallest_rounds_to_smallest) {
  Flags f;
  expect_code(convert<float8_e8m0fnu>(std::ldexp(1.25f, -127), Round::nearest_even, Overflow::ieee, &f),
              0x00, "1.25 * 2^-127");
  EXPECT_TRUE(f.inexact());
  // Every float32 in the open interval, and the edges on either side.
  std::uint64_t bad = 0;
  for (std::uint32_t b = 0x00400001; b < 0x00600000; ++b) bad += convert<float8_e8m0fnu>(f32(b)).bits() != 0;
  EXPECT_EQ(bad, 0u);
  expect_code(convert<float8_e8m0fnu>(f32(0x00600000)), 0x01, "1.5 * 2^-127 (tie)");
  expect_code(convert<float8_e8m0fnu>(f32(0x00400000)), 0x00, "2^-127 exactly");
}

// 2. E8M0 products and quotients that underflow: the smallest value with the
//    underflow flag, not NaN (ml_dtypes turns float32's 0 into NaN).
TEST(MlDtypesDifferences, e8m0_underflowing_product_and_quotient) {
  const float8_e8m0fnu tiny(std::ldexp(1.0, -100)), huge(std::ldexp(1.0, 100));
  Flags fm, fd;
  const float8_e8m0fnu p = mul(tiny, tiny, Round::nearest_even, Overflow::ieee, &fm);
  const float8_e8m0fnu q = div(tiny, huge, Round::nearest_even, Overflow::ieee, &fd);
  expect_code(p, 0x00, "2^-100 * 2^-100");
  expect_code(q, 0x00, "2^-100 / 2^100");
  EXPECT_TRUE(fm.underflow() && fm.inexact() && !fm.invalid());
  EXPECT_TRUE(fd.underflow() && fd.inexact() && !fd.invalid());
  // Where the exact result is representable, no flag: 2^-60 * 2^-67 = 2^-127.
  Flags fe;
  expect_code(mul(float8_e8m0fnu(std::ldexp(1.0, -60)), float8_e8m0fnu(std::ldexp(1.0, -67)),
                  Round::nearest_even, Overflow::ieee, &fe),
              0x00, "2^-127 exactly");
  EXPECT_FALSE(fe.underflow() || fe.inexact());
}

// 3. Doubles are rounded once: just below a midpoint means the lower
//    neighbour (ml_dtypes goes through float32 and lands on the midpoint).
TEST(MlDtypesDifferences, doubles_round_once) {
  const auto below = [](double v) { return std::nextafter(v, 0.0); };
  EXPECT_EQ(static_cast<double>(convert<bfloat16>(below(1 + 3 * 0x1p-8))), 1.0078125);
  EXPECT_EQ(static_cast<double>(convert<float8_e4m3fn>(below(1.1875))), 1.125);
  EXPECT_EQ(static_cast<double>(convert<float8_e8m0fnu>(below(1.5))), 1.0);
  // Just below the overflow threshold: the largest finite value.
  expect_code(convert<bfloat16>(below(0x1p128 - 0x1p119)), 0x7F7F, "bf16 max");
  expect_code(convert<float8_e5m2>(below(61440.0)), 0x7B, "E5M2 max 57344");
  expect_code(convert<float8_e4m3fnuz>(below(248.0)), 0x7F, "E4M3FNUZ max 240");
  expect_code(convert<float8_e5m2fnuz>(below(61440.0)), 0x7F, "E5M2FNUZ max 57344");
  expect_code(convert<float8_e8m0fnu>(below(1.5 * 0x1p127)), 0xFE, "E8M0 max 2^127");
  // Rounding the same double through float32 first would have given these:
  // the double-rounding results that lplab must not produce.
  EXPECT_EQ(static_cast<double>(convert<bfloat16>(static_cast<float>(below(1 + 3 * 0x1p-8)))), 1.015625);
  EXPECT_TRUE(isinf(convert<bfloat16>(static_cast<float>(below(0x1p128 - 0x1p119)))));
}

// 4. NaN payloads are kept (IEEE 754-2019 6.2.3) and a signalling NaN is
//    quietened. (lplab's flags describe the value's rounding; a NaN input,
//    signalling or not, raises none: docs/ml-dtypes.md item 4.)
TEST(MlDtypesDifferences, nan_payloads_kept_and_quietened) {
  Flags f;
  expect_code(convert<float16>(f32(0x7FA00000), Round::nearest_even, Overflow::ieee, &f), 0x7F00,
              "sNaN into fp16");
  EXPECT_FALSE(f.inexact() || f.overflow() || f.underflow());
  expect_code(convert<bfloat16>(f32(0x7FA00000)), 0x7FE0, "sNaN into bf16");
  expect_code(convert<bfloat16>(f32(0x7FC12345)), 0x7FC1, "qNaN payload into bf16");
  expect_code(convert<float8_e5m2>(f32(0x7FA00000)), 0x7F, "sNaN into E5M2");
  expect_code(convert<float16>(f32(0xFFC12345)), 0xFE09, "negative qNaN into fp16");
  Flags q;
  (void)convert<float16>(f32(0x7FC12345), Round::nearest_even, Overflow::ieee, &q);
  EXPECT_FALSE(q.invalid()) << "a quiet NaN raises nothing";
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("f16c"))) std::uint16_t hardware_f16(float x) {
  return static_cast<std::uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
}
TEST(MlDtypesDifferences, nan_payloads_as_x86_f16c) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "this CPU has no F16C";
  for (std::uint32_t b : {0x7FA00000u, 0x7FC12345u, 0xFFC00001u, 0x7F800001u, 0xFFBFFFFFu})
    EXPECT_EQ(convert<float16>(f32(b)).bits(), hardware_f16(f32(b))) << std::hex << b;
}
#endif

// 5. NaN into FP6/FP4: +max with invalid, for either sign (as CUDA); ml_dtypes
//    gives -0 for +NaN and +0 for -NaN.
TEST(MlDtypesDifferences, nan_into_fp6_fp4_is_plus_max) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float x : {nan, -nan}) {
    Flags f;
    expect_code(convert<float6_e2m3fn>(x, Round::nearest_even, Overflow::ieee, &f), 0x1F, "E2M3");
    EXPECT_TRUE(f.invalid());
    expect_code(convert<float6_e3m2fn>(x), 0x1F, "E3M2");
    expect_code(convert<float4_e2m1fn>(x), 0x7, "E2M1");
  }
}

// 6. 0/0 in FP6/FP4: the invalid result goes through item 5's conversion.
TEST(MlDtypesDifferences, zero_over_zero_in_fp6_fp4) {
  Flags f;
  expect_code(div(float4_e2m1fn(0.0f), float4_e2m1fn(0.0f), Round::nearest_even, Overflow::ieee, &f),
              0x7, "E2M1 0/0");
  EXPECT_TRUE(f.invalid());
  expect_code(div(float6_e2m3fn(0.0f), float6_e2m3fn(-0.0f)), 0x1F, "E2M3 0/-0");
  expect_code(div(float6_e3m2fn(-0.0f), float6_e3m2fn(0.0f)), 0x1F, "E3M2 -0/0");
}

}  // namespace
}  // namespace lplab
