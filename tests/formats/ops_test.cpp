// Classification, sign operations, comparisons and nextafter over every code
// (every pair of codes for comparisons), against values decoded independently.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "support/reference.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

template <class T>
class Ops : public ::testing::Test {};
TYPED_TEST_SUITE(Ops, SmallFormats, FormatNames);

TYPED_TEST(Ops, classification_of_every_code) {
  using T = TypeParam;
  for (std::uint64_t c = 0; c < code_count<T>(); ++c) {
    const RefDecoded r = ref_decode(T::descriptor, c);
    const T x = T::from_bits(c);
    const bool nan = r.cls == RefClass::nan;
    const double v = r.value;
    EXPECT_EQ(isnan(x), nan) << c;
    EXPECT_EQ(isinf(x), !nan && std::isinf(v)) << c;
    EXPECT_EQ(isfinite(x), !nan && std::isfinite(v)) << c;
    if (nan) {
      EXPECT_EQ(fpclassify(x), FP_NAN) << c;
      continue;
    }
    EXPECT_EQ(signbit(x), std::signbit(v)) << c;
    int want = std::fpclassify(v);
    if (want != FP_ZERO && want != FP_INFINITE)
      want = std::fabs(v) < finfo<T>::tiny ? FP_SUBNORMAL : FP_NORMAL;
    EXPECT_EQ(fpclassify(x), want) << c;
    EXPECT_EQ(is_subnormal(x), want == FP_SUBNORMAL) << c;
    EXPECT_EQ(isnormal(x), want == FP_NORMAL) << c;
    EXPECT_EQ(is_zero(x), v == 0) << c;
    const T ax = abs(x);
    EXPECT_EQ(static_cast<double>(ax), std::fabs(v)) << c;
    const T nx = -x;
    if (!T::descriptor.is_signed) {
      EXPECT_TRUE(isnan(nx)) << c;
    } else if (v == 0 && !finfo<T>::has_negative_zero) {
      EXPECT_EQ(nx.bits(), x.bits()) << c;
    } else {
      EXPECT_EQ(static_cast<double>(nx), -v) << c;
      EXPECT_NE(signbit(nx), signbit(x)) << c;
    }
  }
}

TYPED_TEST(Ops, comparisons_of_every_pair) {
  using T = TypeParam;
  // 16-bit formats: every code against a spread of 1024 codes.
  const std::uint64_t n = code_count<T>();
  const std::uint64_t step_b = n > 256 ? n / 1024 + 1 : 1;
  for (std::uint64_t a = 0; a < n; ++a) {
    if (!sanitized_sweep_visits<T>(a)) continue;
    const RefDecoded ra = ref_decode(T::descriptor, a);
    for (std::uint64_t b = 0; b < n; b += step_b) {
      const RefDecoded rb = ref_decode(T::descriptor, b);
      const T x = T::from_bits(a), y = T::from_bits(b);
      if (ra.cls == RefClass::nan || rb.cls == RefClass::nan) {
        ASSERT_FALSE(x == y || x < y || x <= y || x > y || x >= y) << a << " " << b;
        ASSERT_TRUE(x != y);
        continue;
      }
      ASSERT_EQ(x == y, ra.value == rb.value) << a << " " << b;
      ASSERT_EQ(x < y, ra.value < rb.value) << a << " " << b;
      ASSERT_EQ(x <= y, ra.value <= rb.value) << a << " " << b;
      ASSERT_EQ(x > y, ra.value > rb.value) << a << " " << b;
      ASSERT_EQ(x >= y, ra.value >= rb.value) << a << " " << b;
    }
  }
}

TYPED_TEST(Ops, nextafter_walks_the_sorted_values) {
  using T = TypeParam;
  // The sorted distinct values, from the independent decoder.
  std::vector<double> values;
  for (std::uint64_t c = 0; c < code_count<T>(); ++c) {
    const RefDecoded r = ref_decode(T::descriptor, c);
    if (r.cls == RefClass::number) values.push_back(r.value);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  const T top = T(INFINITY), bottom = T::descriptor.is_signed ? T(-INFINITY) : T::from_bits(0);
  const bool has_inf = finfo<T>::has_infinity;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const T x = T(values[i]);
    const T up = nextafter(x, has_inf ? top : std::numeric_limits<T>::max());
    if (i + 1 < values.size()) {
      EXPECT_EQ(static_cast<double>(up), values[i + 1]) << values[i];
    }
    if (i > 0 && T::descriptor.is_signed) {
      const T down = nextafter(x, has_inf ? bottom : std::numeric_limits<T>::lowest());
      EXPECT_EQ(static_cast<double>(down), values[i - 1]) << values[i];
    }
    EXPECT_EQ(nextafter(x, x).bits(), x.bits());
  }
  // Past max: infinity, NaN where NaN is the only non-finite (E4M3: 448 -> NaN),
  // or max itself where there is neither.
  const T mx = std::numeric_limits<T>::max();
  const T past = nextafter(mx, T(INFINITY));
  if (finfo<T>::has_infinity) {
    EXPECT_TRUE(isinf(past));
  } else if (finfo<T>::has_nan) {
    EXPECT_TRUE(isnan(past));
  } else {
    EXPECT_EQ(past.bits(), mx.bits());
  }
}

TEST(OpsNegativeZero, signs_and_fnuz) {
  EXPECT_EQ(nextafter(float16::from_bits(0x0001), float16(0.0f)).bits(), 0x0000);
  EXPECT_EQ(nextafter(float16::from_bits(0x8001), float16(0.0f)).bits(), 0x8000);
  EXPECT_EQ(nextafter(float8_e4m3fnuz::from_bits(0x81), float8_e4m3fnuz(0.0f)).bits(), 0x00);
  EXPECT_EQ(nextafter(float16(0.0f), float16(-1.0f)).bits(), 0x8001);
  EXPECT_TRUE(float16::from_bits(0x8000) == float16(0.0f));
  EXPECT_TRUE(isnan(-float8_e4m3fnuz::from_bits(0x80)));
  EXPECT_EQ((-float8_e4m3fnuz(0.0f)).bits(), 0x00);
}

}  // namespace
}  // namespace lplab::testing
