// Text rounded once (lplab/formats/decimal.h), against MPFR: each string is
// read by mpfr_strtofr at 256 bits toward zero, its ternary value the sticky
// bit, and rounded by the test's own Reference (support/reference.h) -- no
// strtold, no round_pack. The strings sit where double rounding goes wrong:
// exact midpoints between neighbours of each format, a hair above and below
// them, values past double's and long double's range, hexadecimal strings
// longer than 64 bits.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "lplab/formats.h"
#include "support/reference.h"
#include "support/typed.h"

namespace lplab {
namespace {

using testing::Expect;
using testing::Real;
using testing::Reference;

// The number a string denotes, truncated to a double with a sticky bit.
Real mpfr_real(const std::string& s) {
  if (s == "nan" || s == "-nan") return Real{true, 0, false};
  mpfr_t t;
  mpfr_init2(t, 256);
  const int ternary = mpfr_strtofr(t, s.c_str(), nullptr, 0, MPFR_RNDZ);
  const double d = mpfr_get_d(t, MPFR_RNDZ);  // +-0 below double's range, +-DBL_MAX above
  const bool sticky = ternary != 0 || (!mpfr_inf_p(t) && mpfr_cmp_d(t, d) != 0);
  const double signed_d = mpfr_signbit(t) ? -std::fabs(d) : std::fabs(d);
  mpfr_clear(t);
  return Real{false, signed_d, sticky};
}

// The exact decimal expansion of a double (glibc prints every digit).
std::string exact(double v) {
  char buf[1200];
  std::snprintf(buf, sizeof buf, "%.1100g", v);
  std::string s = buf;
  if (s.find('e') == std::string::npos && s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// A decimal a hair above (toward +inf for a positive string) or below an
// exact decimal: 25 more digits.
std::string hair_above(std::string s) {
  if (s.find('e') != std::string::npos) return s;  // exact() never uses an exponent for these
  if (s.find('.') == std::string::npos) s.push_back('.');
  s.append(24, '0');
  s.push_back('1');
  return s;
}
std::string hair_below(std::string s) {
  // Decrement the last digit and append 9s: only for strings ending in 1-9
  // after a point (every exact binary fraction ends in 5).
  if (s.find('.') == std::string::npos || s.back() == '0') return s;
  s.back() = static_cast<char>(s.back() - 1);
  s.append(25, '9');
  return s;
}

template <class T>
std::vector<std::string> strings_for(std::mt19937_64& rng) {
  constexpr int kBits = finfo<T>::bits;
  std::vector<std::string> out = {"0", "-0", "inf", "-inf", "nan", "1e400", "-1e400", "1e-400",
                                  "-1e-400", "1e5000", "-1e-5000", "0x1.0000000000000001p0",
                                  "0x1.00000000000000008p0", "0x1.00000100000000000000001p0",
                                  "1.0625000000000000000001", "1.00390625000000000000001",
                                  "1.000000059604644775390625000001"};
  auto value = [](std::uint64_t c) { return static_cast<double>(T::from_bits(c)); };
  const std::uint64_t codes = std::uint64_t{1} << kBits;
  auto add_around = [&](std::uint64_t c) {
    const double a = value(c), b = value((c + 1) & (codes - 1));
    if (!std::isfinite(a)) return;
    out.push_back(exact(a));
    if (std::isfinite(b) && std::signbit(a) == std::signbit(b) && b != a) {
      const std::string mid = exact(a + (b - a) / 2);  // exact: at most 25 bits
      out.push_back(mid);
      out.push_back(hair_above(mid));
      out.push_back(hair_below(mid));
      if (mid.front() != '-') out.push_back(hair_above(mid).insert(0, 1, '-'));
    }
  };
  if (kBits <= 16) {
    for (std::uint64_t c = 0; c < codes; ++c)
      if (lplab::testing::sanitized_sweep_visits<T>(c)) add_around(c);
  } else {
    for (int i = 0; i < 20000; ++i) add_around(rng() & (codes - 1));
    for (std::uint64_t c = 0; c < 64; ++c) add_around(c);                    // subnormals
    for (std::uint64_t c = 0x7f7fffc0; c < 0x7f800000; ++c) add_around(c);  // the top
  }
  // Random decimals with up to 30 significant digits across the range.
  std::uniform_int_distribution<int> digits(1, 30), digit(0, 9), exp10(-50, 40);
  for (int i = 0; i < 20000; ++i) {
    const int n = digits(rng);
    std::string s;
    if (rng() & 1) s.push_back('-');
    s.push_back(static_cast<char>('1' + digit(rng) % 9));
    s.push_back('.');
    for (int k = 1; k < n; ++k) s.push_back(static_cast<char>('0' + digit(rng)));
    s.append(fmt::format("e{}", exp10(rng)));
    out.push_back(s);
  }
  return out;
}

template <class T>
class DecimalTest : public ::testing::Test {};
TYPED_TEST_SUITE(DecimalTest, testing::AllFormats, testing::FormatNames);

// Every deterministic mode and both overflow policies on every string; the
// stochastic decision (32 fraction bits, which the reference holds exactly
// for formats of at most 11 significant bits) for every format but float32,
// whose 24 + 32 bits the next test covers.
TYPED_TEST(DecimalTest, RoundsOnceAsMpfrSays) {
  using T = TypeParam;
  const Reference ref(T::descriptor);
  std::mt19937_64 rng(20261125);
  constexpr Round modes[] = {Round::nearest_even, Round::nearest_away, Round::toward_zero,
                             Round::upward, Round::downward, Round::stochastic};
  const std::uint32_t randoms[] = {0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x12345678};
  long checked = 0;
  for (const std::string& s : strings_for<T>(rng)) {
    const std::optional<Decimal> d = parse_decimal(s);
    ASSERT_TRUE(d.has_value()) << s;
    const Real real = mpfr_real(s);
    for (Round r : modes) {
      if (r == Round::stochastic && finfo<T>::mantissa_bits > 10) continue;
      for (Overflow o : {Overflow::ieee, Overflow::saturate}) {
        for (std::uint32_t random : randoms) {
          if (r != Round::stochastic && random != 0) continue;
          Flags f;
          const T got = convert<T>(*d, r, o, &f, random);
          const Expect want = ref.round(real, r, o, random);
          ASSERT_TRUE(ref.matches(want, got.bits()) && f.bits == want.flags)
              << s << " mode " << int(r) << " overflow " << int(o) << " random " << random
              << ": got " << got << " flags " << int(f.bits) << ", want "
              << (want.nan ? std::string("nan") : exact(want.value)) << " flags " << int(want.flags);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100000 / static_cast<long>(lplab::testing::kSanitizedStride));
}

// The values a double rounding gets wrong, named: the three, each
// just above a tie that the double in between turns into the tie itself.
TEST(Decimal, JustAboveATieRoundsUp) {
  EXPECT_EQ(convert<float8_e4m3fn>(*parse_decimal("1.0625000000000000000001")).bits(), 0x39u);
  EXPECT_EQ(convert<bfloat16>(*parse_decimal("1.00390625000000000000001")).bits(), 0x3f81u);
  EXPECT_EQ(convert<float>(*parse_decimal("1.000000059604644775390625000001")), 0x1.000002p0f);
  EXPECT_EQ(convert<float>(*parse_decimal("-1.000000059604644775390625000001")), -0x1.000002p0f);
  EXPECT_EQ(convert<float>(*parse_decimal("1.000000059604644775390625")), 1.0f);  // the tie: even
}

// float32's stochastic decision: x = 1 + (k + 1/4) 2^-55 lies k/2^32 + 2^-34
// of an ulp (2^-23) above 1, so exactly k of the 2^32 draws round it up: the
// draw R rounds away iff R >= 2^32 - k (lplab/formats/policy.h). 56 bits: no
// double holds it; the long double printed exactly does.
TEST(Decimal, Float32StochasticFractionIsExact) {
  for (std::uint64_t k : {1ull, 2ull, 3ull, 0x12345ull, 0x80000000ull, 0xFFFFFFFFull}) {
    const long double x = 1.0L + std::ldexp(static_cast<long double>(k) + 0.25L, -55);
    char buf[200];
    std::snprintf(buf, sizeof buf, "%.80Lf", x);
    const std::optional<Decimal> d = parse_decimal(buf);
    ASSERT_TRUE(d.has_value());
    const std::uint32_t threshold = static_cast<std::uint32_t>((std::uint64_t{1} << 32) - k);
    EXPECT_EQ(convert<float>(*d, Round::stochastic, Overflow::ieee, nullptr, threshold), 0x1.000002p0f)
        << buf;
    EXPECT_EQ(convert<float>(*d, Round::stochastic, Overflow::ieee, nullptr, threshold - 1), 1.0f)
        << buf;
  }
}

// Past double's range the number still rounds under the policy, with flags.
TEST(Decimal, BeyondDoubleOverflowsAndUnderflows) {
  Flags f;
  EXPECT_TRUE(isinf(convert<float16>(*parse_decimal("1e400"), Round::nearest_even, Overflow::ieee, &f)));
  EXPECT_TRUE(f.overflow() && f.inexact());
  f = {};
  EXPECT_EQ(convert<float16>(*parse_decimal("1e400"), Round::nearest_even, Overflow::saturate, &f).bits(), 0x7bffu);
  f = {};
  const float16 tiny = convert<float16>(*parse_decimal("-1e-400"), Round::nearest_even, Overflow::ieee, &f);
  EXPECT_EQ(tiny.bits(), 0x8000u);  // -0
  EXPECT_TRUE(f.underflow() && f.inexact());
  EXPECT_EQ(convert<float16>(*parse_decimal("1e-400"), Round::upward).bits(), 0x0001u);
  EXPECT_EQ(convert<float16>(*parse_decimal("1e-5000"), Round::upward).bits(), 0x0001u);
  EXPECT_EQ(convert<float16>(*parse_decimal("1e5000"), Round::toward_zero).bits(), 0x7bffu);
  EXPECT_EQ(parse_decimal("1e400")->nearest, INFINITY);
}

TEST(Decimal, RefusesWhatIsNotOneNumber) {
  for (const char* s : {"", " 1", "1 ", "1.0x", "0x", "e5", "--1", "1e", "nanx", "1,5"})
    EXPECT_FALSE(parse_decimal(s).has_value()) << '"' << s << '"';
  EXPECT_TRUE(parse_decimal("0x1p-7").has_value());
  EXPECT_TRUE(parse_decimal("-inf").has_value());
}

}  // namespace
}  // namespace lplab
