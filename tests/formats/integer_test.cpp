// The integer formats (Encoding::integer: int8, uint8, int4, uint4, int2,
// uint2, int1, uint1) in the scalar core, against references written apart
// from it: each code's value from two's complement arithmetic, and float ->
// integer under every rounding and overflow policy from the C library's
// rounding functions (nearbyint, round, trunc, ceil, floor) in binary64,
// where every float is exact, with the range applied by comparison and
// wrap-around by fmod. ml_dtypes and numpy are compared in
// python/tests/test_integers.py; all 2^32 floats into int8 and int4 in
// tests/kernels/integer_sweep_test.cpp.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "lplab/formats.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

constexpr Round kAllRounds[] = {Round::nearest_even, Round::nearest_away, Round::toward_zero,
                                Round::upward,       Round::downward,     Round::stochastic};
constexpr Overflow kAllOverflows[] = {Overflow::ieee, Overflow::saturate, Overflow::wrap};

template <class T>
class Integer : public ::testing::Test {};
TYPED_TEST_SUITE(Integer, IntegerFormats, FormatNames);

// The range of an N-bit integer, from N and the signedness alone.
template <class T>
struct Range {
  static constexpr int bits = finfo<T>::bits;
  static constexpr bool is_signed = T::descriptor.is_signed;
  static constexpr double lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
  static constexpr double hi = is_signed ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
  static constexpr double modulus = std::ldexp(1.0, bits);
};

// The value of a code by two's complement: the code minus 2^N where its top
// bit is set (signed formats).
template <class T>
double twos_complement_value(std::uint64_t c) {
  const double v = static_cast<double>(c);
  return Range<T>::is_signed && c >= (std::uint64_t{1} << (Range<T>::bits - 1)) ? v - Range<T>::modulus : v;
}

// The code of an integer-valued v in the format's width (v mod 2^N).
template <class T>
std::uint64_t code_of_integer(double v) {
  double m = std::fmod(v, Range<T>::modulus);
  if (m < 0) m += Range<T>::modulus;
  return static_cast<std::uint64_t>(m);
}

struct Expected {
  std::uint64_t code;
  std::uint8_t flags;  // Flag bits: inexact 1, underflow 2, overflow 4, invalid 8
};

// The reference: x rounded to an integer by the C library (binary64, exact
// for a float), then fitted to the range.
template <class T>
Expected reference(float xf, Round r, Overflow o, std::uint32_t random) {
  constexpr std::uint8_t kInexact = 1, kUnderflow = 2, kOverflow = 4, kInvalid = 8;
  const double x = xf;
  if (std::isnan(x)) return {0, kInvalid};
  if (std::isinf(x)) {
    if (o == Overflow::wrap) return {0, kInvalid};
    return {code_of_integer<T>(x > 0 ? Range<T>::hi : Range<T>::lo), kOverflow | kInexact};
  }
  double v = 0;
  switch (r) {
    case Round::nearest_even: v = std::nearbyint(x); break;  // the default FE_TONEAREST
    case Round::nearest_away: v = std::round(x); break;
    case Round::toward_zero: v = std::trunc(x); break;
    case Round::upward: v = std::ceil(x); break;
    case Round::downward: v = std::floor(x); break;
    case Round::stochastic: {
      // Away from zero iff floor(f * 2^32) + R >= 2^32, f the fraction of |x|.
      const double t = std::trunc(std::fabs(x)), f = std::fabs(x) - t;
      const double f32 = std::floor(std::ldexp(f, 32));
      v = std::copysign(t + (f32 + random >= std::ldexp(1.0, 32) ? 1.0 : 0.0), x);
      break;
    }
  }
  std::uint8_t flags = 0;
  if (v != x) flags |= kInexact;
  if (v != x && v == 0) flags |= kUnderflow;
  if (v < Range<T>::lo || v > Range<T>::hi) {
    flags |= kOverflow | kInexact;
    if (o != Overflow::wrap) v = v < Range<T>::lo ? Range<T>::lo : Range<T>::hi;
  }
  return {code_of_integer<T>(v), flags};
}

// Floats at and around every decision of an integer format of up to 8 bits:
// each integer k in [-260, 260], k +- 1/4, 1/2, 3/4, the floats either side
// of k and of k +- 1/2; zeros, subnormals and the extremes of float; powers
// of two from 2^-149 to 2^127 either side of zero (2^23 on, every float is an
// integer; 2^31 and 2^32 cross numpy's int32); infinities and NaN.
std::vector<float> decision_inputs() {
  std::vector<float> v;
  auto both_sides = [&](float x) {
    v.push_back(x);
    v.push_back(std::nextafter(x, -INFINITY));
    v.push_back(std::nextafter(x, INFINITY));
  };
  for (int k = -260; k <= 260; ++k) {
    both_sides(static_cast<float>(k));
    both_sides(k + 0.5f);
    v.push_back(k + 0.25f);
    v.push_back(k + 0.75f);
  }
  for (int e = -149; e <= 127; ++e) {
    both_sides(std::ldexp(1.0f, e));
    both_sides(-std::ldexp(1.0f, e));
  }
  for (float x : {0.0f, -0.0f, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(), INFINITY,
                  -INFINITY, NAN, -NAN, 8388607.5f, 16777217.0f, 2147483648.0f, 4294967296.0f, -2147483904.0f})
    v.push_back(x);
  return v;
}

TYPED_TEST(Integer, every_code_is_its_twos_complement_value) {
  using T = TypeParam;
  for (std::uint64_t c = 0; c < code_count<T>(); ++c) {
    const T x = T::from_bits(c);
    EXPECT_EQ(static_cast<double>(x), twos_complement_value<T>(c)) << "code " << c;
    EXPECT_EQ(static_cast<float>(x), static_cast<float>(twos_complement_value<T>(c))) << "code " << c;
    // Bits above the width are ignored, as ml_dtypes' intN ignores them.
    EXPECT_EQ(T::from_bits(c | (~std::uint64_t{0} << finfo<T>::bits)).bits(), c);
    // Back to the same code, exactly, under every policy.
    for (Round r : kAllRounds)
      for (Overflow o : kAllOverflows) {
        Flags f;
        EXPECT_EQ(convert<T>(static_cast<float>(x), r, o, &f, 0x9E3779B9u).bits(), c);
        EXPECT_FALSE(f.any()) << "code " << c;
      }
  }
}

TYPED_TEST(Integer, float_to_integer_every_policy_against_the_c_library) {
  using T = TypeParam;
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  std::size_t compared = 0, wrapped = 0, inexact = 0;
  for (float x : decision_inputs()) {
    for (Round r : kAllRounds) {
      for (Overflow o : kAllOverflows) {
        // Stochastic rounding sees a spread of random words: each input
        // under three, from 0 to 2^32 - 1.
        for (std::uint32_t random : {0u, 0x80000000u, 0xFFFFFFFFu}) {
          if (r != Round::stochastic && random != 0) continue;
          const Expected want = reference<T>(x, r, o, random);
          Flags f;
          const T got = convert<T>(x, r, o, &f, random);
          ASSERT_EQ(got.bits(), want.code) << x << " (" << std::hexfloat << x << std::defaultfloat << ") "
                                           << round_name(r) << " " << overflow_name(o) << " R=" << random;
          ASSERT_EQ(f.bits, want.flags) << x << " " << round_name(r) << " " << overflow_name(o);
          ++compared;
          wrapped += o == Overflow::wrap && (want.flags & 4) != 0 && want.code != 0;
          inexact += (want.flags & 1) != 0;
        }
      }
    }
  }
  // A wrong implementation has to meet these too: wrap-around that keeps a
  // nonzero code, and rounding everywhere.
  EXPECT_GT(wrapped, 100u);
  EXPECT_GT(inexact, compared / 3);
}

// ml_dtypes' astype (its _src/intn_numpy.h: truncate toward zero to an int,
// NaN and infinities 0, keep the low N bits) is Round::toward_zero with
// Overflow::wrap; hand-worked cases from its rule, int4 and uint4.
TEST(IntegerCases, ml_dtypes_astype_is_toward_zero_with_wrap) {
  const auto astype4 = [](float x) {
    return static_cast<double>(convert<int4>(x, Round::toward_zero, Overflow::wrap));
  };
  EXPECT_EQ(astype4(7.9f), 7);
  EXPECT_EQ(astype4(-7.9f), -7);
  EXPECT_EQ(astype4(8.7f), -8);   // 8 = 0b1000
  EXPECT_EQ(astype4(17.0f), 1);   // 17 = 0b1'0001
  EXPECT_EQ(astype4(-9.0f), 7);   // -9 = ...1'0111
  EXPECT_EQ(astype4(NAN), 0);
  EXPECT_EQ(astype4(INFINITY), 0);
  EXPECT_EQ(static_cast<double>(convert<uint4>(-1.5f, Round::toward_zero, Overflow::wrap)), 15);
  // The quantizers' rule instead: nearest-even, saturated (PTX cvt.rni.sat.s8.f32).
  EXPECT_EQ(static_cast<double>(convert<int8>(-200.0f, Round::nearest_even, Overflow::saturate)), -128);
  EXPECT_EQ(static_cast<double>(convert<int8>(126.5f)), 126);
  EXPECT_EQ(static_cast<double>(convert<int8>(127.5f)), 127);  // 128 is past max: saturated
  EXPECT_EQ(static_cast<double>(convert<uint8>(-0.4f)), 0);
  EXPECT_EQ(static_cast<double>(convert<int8>(NAN)), 0);
}

TYPED_TEST(Integer, finfo_and_numeric_limits_give_the_range) {
  using T = TypeParam;
  using F = finfo<T>;
  using NL = std::numeric_limits<T>;
  EXPECT_EQ(F::min, Range<T>::lo);
  EXPECT_EQ(F::max, Range<T>::hi);
  EXPECT_EQ(static_cast<double>(NL::lowest()), Range<T>::lo);
  EXPECT_EQ(static_cast<double>(NL::min()), Range<T>::lo);
  EXPECT_EQ(static_cast<double>(NL::max()), Range<T>::hi);
  EXPECT_TRUE(NL::is_integer);
  EXPECT_TRUE(NL::is_exact);
  EXPECT_EQ(NL::is_signed, Range<T>::is_signed);
  // numeric_limits' digits: the value bits (ml_dtypes' intN: N - 1 signed, N unsigned).
  EXPECT_EQ(NL::digits, Range<T>::bits - (Range<T>::is_signed ? 1 : 0));
  EXPECT_FALSE(F::has_nan);
  EXPECT_FALSE(F::has_infinity);
  EXPECT_FALSE(F::has_negative_zero);
  EXPECT_EQ(F::finite_values, code_count<T>());
  EXPECT_EQ(F::encoding, Encoding::integer);
}

TYPED_TEST(Integer, order_negation_and_nextafter_follow_the_values) {
  using T = TypeParam;
  for (std::uint64_t a = 0; a < code_count<T>(); ++a) {
    const T x = T::from_bits(a);
    const double va = twos_complement_value<T>(a);
    for (std::uint64_t b = 0; b < code_count<T>(); ++b) {
      const T y = T::from_bits(b);
      const double vb = twos_complement_value<T>(b);
      ASSERT_EQ(x < y, va < vb) << a << " " << b;
      ASSERT_EQ(x == y, va == vb) << a << " " << b;
      if (va != vb) ASSERT_EQ(static_cast<double>(nextafter(x, y)), va + (va < vb ? 1 : -1)) << a << " " << b;
    }
    // Two's complement negation wraps: -(-2^(N-1)) is itself.
    EXPECT_EQ((-x).bits(), code_of_integer<T>(-va)) << a;
    EXPECT_EQ(static_cast<double>(abs(x)), va == Range<T>::lo && va < 0 ? va : std::fabs(va)) << a;
  }
}

// Sums and products round once into the format: under wrap as ml_dtypes'
// intN arithmetic (int4: 7 + 1 = -8), saturated otherwise.
TEST(IntegerCases, arithmetic_rounds_once_then_wraps_or_saturates) {
  const int4 seven(7.0f), one(1.0f), three(3.0f);
  EXPECT_EQ(static_cast<double>(add(seven, one, Round::nearest_even, Overflow::wrap)), -8);
  EXPECT_EQ(static_cast<double>(add(seven, one)), 7);
  EXPECT_EQ(static_cast<double>(mul(three, three, Round::nearest_even, Overflow::wrap)), -7);  // 9 - 16
  EXPECT_EQ(static_cast<double>(div(seven, int4(2.0f))), 4);  // 3.5 to even
  EXPECT_EQ(static_cast<double>(div(three, int4(2.0f), Round::toward_zero)), 1);
}

}  // namespace
}  // namespace lplab::testing
