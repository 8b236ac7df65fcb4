// finfo against what the libraries report (ml_dtypes 0.6.0 and numpy 2.4
// finfo for the formats they share, torch.finfo's definitions), and
// numeric_limits against finfo.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/typed.h"

namespace lplab::testing {
namespace {

// Values printed by ml_dtypes.finfo / numpy.finfo (fields as Python floats).
struct Expected {
  int bits;
  double eps, epsneg, max, min, tiny, smallest_subnormal, resolution_numpy;
  int machep, negep, nmant, nexp, iexp, maxexp, minexp, precision;
  double resolution_torch;  // torch.finfo: 10^-digits10
};

template <class T>
Expected expected();
// clang-format off
template <> Expected expected<float32>() { return {32, 0x1p-23, 0x1p-24, 3.4028234663852886e+38, -3.4028234663852886e+38, 0x1p-126, 0x1p-149, 9.999999974752427e-07, -23, -24, 23, 8, 8, 128, -126, 6, 1e-6}; }
template <> Expected expected<float16>() { return {16, 0.0009765625, 0.00048828125, 65504, -65504, 6.103515625e-05, 5.960464477539063e-08, 0.0010004043579101562, -10, -11, 10, 5, 5, 16, -14, 3, 1e-3}; }
template <> Expected expected<bfloat16>() { return {16, 0.0078125, 0.00390625, 3.3895313892515355e+38, -3.3895313892515355e+38, 1.1754943508222875e-38, 9.183549615799121e-41, 0.010009765625, -7, -8, 7, 8, 8, 128, -126, 2, 1e-2}; }
template <> Expected expected<float8_e4m3fn>() { return {8, 0.125, 0.0625, 448, -448, 0.015625, 0.001953125, 0.1015625, -3, -4, 3, 4, 4, 9, -6, 1, 1}; }
template <> Expected expected<float8_e5m2>() { return {8, 0.25, 0.125, 57344, -57344, 6.103515625e-05, 1.52587890625e-05, 0.09375, -2, -3, 2, 5, 5, 16, -14, 1, 1}; }
template <> Expected expected<float8_e4m3fnuz>() { return {8, 0.125, 0.0625, 240, -240, 0.0078125, 0.0009765625, 0.1015625, -3, -4, 3, 4, 4, 8, -7, 1, 1}; }
template <> Expected expected<float8_e5m2fnuz>() { return {8, 0.25, 0.125, 57344, -57344, 3.0517578125e-05, 7.62939453125e-06, 0.09375, -2, -3, 2, 5, 5, 16, -15, 1, 1}; }
template <> Expected expected<float8_e8m0fnu>() { return {8, 1.0, 0.5, 1.7014118346046923e+38, 5.877471754111438e-39, 5.877471754111438e-39, 5.877471754111438e-39, 0.125, 0, -1, 0, 8, 8, 128, -127, 1, 1}; }
template <> Expected expected<float6_e2m3fn>() { return {6, 0.125, 0.125, 7.5, -7.5, 1.0, 0.125, 1.0, -3, -3, 3, 2, 2, 3, 0, 0, 1}; }
template <> Expected expected<float6_e3m2fn>() { return {6, 0.25, 0.125, 28, -28, 0.25, 0.0625, 1.0, -2, -3, 2, 3, 3, 5, -2, 0, 1}; }
template <> Expected expected<float4_e2m1fn>() { return {4, 0.5, 0.5, 6, -6, 1.0, 0.5, 1.0, -1, -1, 1, 2, 2, 3, 0, 0, 1}; }
template <> Expected expected<float8_e3m4>() { return {8, 0.0625, 0.03125, 15.5, -15.5, 0.25, 0.015625, 0.09375, -4, -5, 4, 3, 3, 4, -2, 1, 0.1}; }
template <> Expected expected<float8_e4m3>() { return {8, 0.125, 0.0625, 240, -240, 0.015625, 0.001953125, 0.1015625, -3, -4, 3, 4, 4, 8, -6, 1, 1}; }
template <> Expected expected<float8_e4m3b11fnuz>() { return {8, 0.125, 0.0625, 30, -30, 0.0009765625, 0.0001220703125, 0.1015625, -3, -4, 3, 4, 4, 5, -10, 1, 1}; }
// clang-format on

template <class T>
class Finfo : public ::testing::Test {};
TYPED_TEST_SUITE(Finfo, AllFormats, FormatNames);

TYPED_TEST(Finfo, matches_ml_dtypes_numpy_and_torch) {
  using F = finfo<TypeParam>;
  const Expected e = expected<TypeParam>();
  EXPECT_EQ(F::bits, e.bits);
  EXPECT_EQ(F::eps, e.eps);
  EXPECT_EQ(F::epsneg, e.epsneg);
  EXPECT_EQ(F::max, e.max);
  EXPECT_EQ(F::min, e.min);
  EXPECT_EQ(F::tiny, e.tiny);
  EXPECT_EQ(F::smallest_normal, e.tiny);
  EXPECT_EQ(F::smallest_subnormal, e.smallest_subnormal);
  EXPECT_EQ(F::resolution_numpy, e.resolution_numpy);
  EXPECT_EQ(F::resolution_torch, e.resolution_torch);
  EXPECT_EQ(F::machep, e.machep);
  EXPECT_EQ(F::negep, e.negep);
  EXPECT_EQ(F::nmant, e.nmant);
  EXPECT_EQ(F::nexp, e.nexp);
  EXPECT_EQ(F::iexp, e.iexp);
  EXPECT_EQ(F::maxexp, e.maxexp);
  EXPECT_EQ(F::minexp, e.minexp);
  EXPECT_EQ(F::precision, e.precision);
  EXPECT_EQ(std::ldexp(1.0, F::machep), F::eps);
  EXPECT_EQ(std::ldexp(1.0, F::negep), F::epsneg);
}

TYPED_TEST(Finfo, beyond_the_libraries_is_consistent_with_the_codes) {
  using T = TypeParam;
  using F = finfo<T>;
  // The threshold: values just below it round to max; at it, per the tie flag.
  const double below = std::nextafter(F::overflow_threshold, 0.0);
  EXPECT_EQ(static_cast<double>(convert<T>(below)), F::max);
  const T at = convert<T>(F::overflow_threshold);
  EXPECT_EQ(static_cast<double>(at) == F::max, !F::threshold_tie_overflows || (!F::has_infinity && !F::has_nan));
  // Codes of the canonical NaN and infinity.
  if (F::has_nan) {
    EXPECT_TRUE(isnan(T::from_bits(F::nan_code)));
  }
  if (F::has_infinity) {
    EXPECT_TRUE(isinf(T::from_bits(F::inf_code)));
  }
  // Dynamic range: binades from smallest subnormal to max.
  EXPECT_EQ(std::ilogb(F::max) - std::ilogb(F::smallest_subnormal) + 1, F::binades);
}

TEST(FinfoCounts, finite_values_and_binades) {
  EXPECT_EQ(finfo<float8_e4m3fn>::finite_codes, 254u);
  EXPECT_EQ(finfo<float8_e4m3fn>::finite_values, 253u);
  EXPECT_EQ(finfo<float8_e5m2>::finite_codes, 248u);  // 256 - 2 inf - 6 NaN
  EXPECT_EQ(finfo<float8_e4m3fnuz>::finite_values, 255u);
  EXPECT_EQ(finfo<float8_e8m0fnu>::finite_values, 255u);
  EXPECT_EQ(finfo<float16>::finite_codes, 63488u);  // 65536 - 2 inf - 2046 NaN
  EXPECT_EQ(finfo<float4_e2m1fn>::finite_values, 15u);
  EXPECT_EQ(finfo<float16>::binades, 40);           // 2^-24 .. 2^15
  EXPECT_EQ(finfo<bfloat16>::binades, 261);         // 2^-133 .. 2^127
  EXPECT_EQ(finfo<float8_e4m3fn>::binades, 18);     // 2^-9 .. 2^8
  EXPECT_EQ(finfo<float8_e5m2>::binades, 32);       // 2^-16 .. 2^15
}

template <class T>
class Limits : public ::testing::Test {};
TYPED_TEST_SUITE(Limits, AllFormats, FormatNames);

TYPED_TEST(Limits, agree_with_finfo_and_with_native_float) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  using F = finfo<T>;
  EXPECT_TRUE(L::is_specialized);
  EXPECT_EQ(L::has_infinity, F::has_infinity);
  EXPECT_EQ(L::has_quiet_NaN, F::has_nan);
  EXPECT_EQ(static_cast<double>(L::max()), F::max);
  EXPECT_EQ(static_cast<double>(L::lowest()), F::min);
  EXPECT_EQ(static_cast<double>(L::min()), F::tiny);
  EXPECT_EQ(static_cast<double>(L::epsilon()), F::eps);
  EXPECT_EQ(static_cast<double>(L::denorm_min()), F::smallest_subnormal);
  EXPECT_EQ(L::digits, F::nmant + 1);
  EXPECT_EQ(L::digits10, static_cast<int>(std::floor(F::nmant * std::log10(2.0))));
  EXPECT_EQ(L::max_exponent, F::maxexp);
  EXPECT_EQ(L::min_exponent, F::minexp + 1);
  if (L::has_infinity) {
    EXPECT_TRUE(isinf(L::infinity()));
  }
  if (L::has_quiet_NaN) {
    EXPECT_TRUE(isnan(L::quiet_NaN()));
  }
  if (L::has_signaling_NaN) {
    EXPECT_TRUE(isnan(L::signaling_NaN()));
  }
  if constexpr (std::is_same_v<T, float32>) {  // the model agrees with the native type
    using N = std::numeric_limits<float>;
    EXPECT_EQ(L::digits10, N::digits10);
    EXPECT_EQ(L::max_digits10, N::max_digits10);
    EXPECT_EQ(L::min_exponent10, N::min_exponent10);
    EXPECT_EQ(L::max_exponent10, N::max_exponent10);
    EXPECT_EQ(L::is_iec559, N::is_iec559);
    EXPECT_EQ(L::has_signaling_NaN, N::has_signaling_NaN);
  }
}

}  // namespace
}  // namespace lplab::testing
