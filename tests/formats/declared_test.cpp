// Formats declared at run time (formats/declared.h) against the compiled
// formats: every compiled format with subnormals, declared from its own
// descriptor, must give the same code as convert<T> -- value and flags -- for
// every rounding, overflow policy and stochastic draw, on every code's value,
// its neighbours, every midpoint between neighbours and random doubles of
// every magnitude; the same for decimal text; and decode every code to the
// same value and text. The compiled formats are validated against CUDA's
// conversions, MPFR and ml_dtypes (conversion_sweep_test, arith_sweep_test,
// interop_test), so this carries that validation over to the declared path.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "lplab/formats.h"
#include "lplab/formats/declared.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

constexpr Round kRounds[] = {Round::nearest_even, Round::nearest_away, Round::toward_zero,
                             Round::upward,       Round::downward,     Round::stochastic};
constexpr Overflow kOverflows[] = {Overflow::ieee, Overflow::saturate};
constexpr std::uint32_t kRandoms[] = {0, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0x12345678u};

// Inputs that decide a conversion into T: each finite value, the doubles
// either side, the midpoint to the next value and the doubles either side of
// it, specials, values beyond double-precision neighbours of the range, and
// random doubles across 2^-1074 .. 2^1023. Codes are sampled for wide formats.
template <class T>
std::vector<double> inputs() {
  std::vector<double> x = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e308, -1e308, 5e-324, -5e-324,
                           std::bit_cast<double>(std::uint64_t{0x7ff0000000000001}),  // signalling NaN
                           std::bit_cast<double>(std::uint64_t{0xfff8000000012345})};
  const std::uint64_t codes = std::uint64_t{1} << finfo<T>::bits;
  const std::uint64_t step = codes > (1u << 16) ? codes / 40000 + 1 : 1;
  for (std::uint64_t c = 0; c < codes; c += step) {
    if (!sanitized_sweep_visits<T>(c)) continue;
    const double v = static_cast<double>(T::from_bits(c));
    if (!std::isfinite(v)) continue;
    const double next = static_cast<double>(T::from_bits(c + 1 < codes ? c + 1 : c));
    for (double y : {v, std::nextafter(v, -INFINITY), std::nextafter(v, INFINITY)}) x.push_back(y);
    if (std::isfinite(next) && std::fabs(next) > std::fabs(v)) {
      const double mid = v + (next - v) / 2;
      for (double y : {mid, std::nextafter(mid, -INFINITY), std::nextafter(mid, INFINITY), v + (next - v) / 4})
        x.push_back(y);
    }
  }
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<int> exponent(-1074, 1023);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < 20000; ++i) x.push_back((i % 2 ? -1 : 1) * std::ldexp(mantissa(rng), exponent(rng)));
  for (int i = 0; i < 20000; ++i) {  // near the format's range
    const int e = std::uniform_int_distribution<int>(finfo<T>::minexp - finfo<T>::nmant - 3, finfo<T>::maxexp + 2)(rng);
    x.push_back((i % 2 ? -1 : 1) * std::ldexp(mantissa(rng), e));
  }
  return x;
}

std::string policy(Round r, Overflow o, std::uint32_t random) {
  return "round " + std::to_string(static_cast<int>(r)) + ", overflow " + std::to_string(static_cast<int>(o)) +
         ", random " + std::to_string(random);
}

template <class T>
void same_as_compiled() {
  constexpr Descriptor D = T::descriptor;
  std::string why;
  const std::optional<DeclaredFormat> f = DeclaredFormat::make(D, &why);
  ASSERT_TRUE(f) << why;
  EXPECT_EQ(f->layout().max_code, finfo<T>::max_code);

  // Every code (sampled for float32): the same value and text.
  const std::uint64_t codes = std::uint64_t{1} << finfo<T>::bits;
  const std::uint64_t step = codes > (1u << 16) ? 65521 : 1;
  for (std::uint64_t c = 0; c < codes; c += step) {
    if (!sanitized_sweep_visits<T>(c)) continue;
    const double want = static_cast<double>(T::from_bits(c)), got = f->to_double(c);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << c;
    } else {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(want)) << std::hex << c;
    }
    ASSERT_EQ(f->to_text(c), to_string(T::from_bits(c))) << std::hex << c;
  }

  // Every policy on every input: the same code and the same flags.
  std::uint64_t compared = 0;
  for (double x : inputs<T>())
    for (Round r : kRounds)
      for (Overflow o : kOverflows)
        for (std::uint32_t random : kRandoms) {
          if (r != Round::stochastic && random != 0) continue;
          Flags want_flags{}, got_flags{};
          const std::uint64_t want = convert<T>(x, r, o, &want_flags, random).bits();
          const std::uint64_t got = f->from_double(x, r, o, random, &got_flags);
          ASSERT_EQ(got, want) << std::hexfloat << x << " " << policy(r, o, random);
          ASSERT_EQ(got_flags.bits, want_flags.bits) << std::hexfloat << x << " " << policy(r, o, random);
          ++compared;
        }
  EXPECT_GT(compared, 100000u / kSanitizedStride);

  // Text rounded once, including numbers beyond double's range.
  for (const char* text : {"1.0625000000000000000001", "1.00390625000000000000001", "-0.1", "1e400", "-1e400",
                           "1e-400", "-1e-400", "1e5000", "1e-5000", "0x1.0000000000000000001p-7", "inf", "-nan",
                           "0", "-0", "448", "464", "464.0000000000000000001", "57344", "61440", "65520"})
    for (Round r : kRounds)
      for (Overflow o : kOverflows)
        for (std::uint32_t random : kRandoms) {
          if (r != Round::stochastic && random != 0) continue;
          const std::optional<Decimal> d = parse_decimal(text);
          ASSERT_TRUE(d) << text;
          Flags want_flags{}, got_flags{};
          const std::uint64_t want = convert<T>(*d, r, o, &want_flags, random).bits();
          ASSERT_EQ(f->from_decimal(*d, r, o, random, &got_flags), want) << text << " " << policy(r, o, random);
          ASSERT_EQ(got_flags.bits, want_flags.bits) << text << " " << policy(r, o, random);
        }
}

// Every catalog format a layout can declare: the floating-point formats with
// subnormals (E8M0 has none; an integer is no e<E>m<M> layout).
template <class T>
struct declarable
    : std::bool_constant<T::descriptor.has_subnormals && T::descriptor.encoding != Encoding::integer> {};
using DeclarableFormats = lplab::testing::typed_lists::filter<all_formats, declarable>::type;

template <class T>
class DeclaredTwin : public ::testing::Test {};
TYPED_TEST_SUITE(DeclaredTwin, DeclarableFormats, FormatNames);
TYPED_TEST(DeclaredTwin, matches_the_compiled_format) { same_as_compiled<TypeParam>(); }

// Whether two values of a field are the same: doubles by their bits (NaN is
// the same NaN, -0 is not +0), the rest by ==.
template <class V>
bool same_field(const V& a, const V& b) {
  return a == b;
}
bool same_field(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

template <class V>
std::string field_text(const V& v) {
  std::ostringstream s;
  if constexpr (std::is_same_v<V, Encoding>) s << encoding_name(v);
  else if constexpr (std::is_same_v<V, double>)
    s << std::hexfloat << v << " (bits " << std::hex << std::bit_cast<std::uint64_t>(v) << ")";
  else s << v;
  return s.str();
}

// Every field of `got` is `want`'s (LPLAB_FINFO_FIELDS: none left out).
void expect_same_finfo(const FinfoValues& want, const FinfoValues& got, const std::string& where) {
#define LPLAB_EXPECT_SAME_FIELD(name, kind, doc)                                                              \
  EXPECT_TRUE(same_field(want.name, got.name))                                                                \
      << where << ": " #name " is " << field_text(got.name) << ", want " << field_text(want.name);
  LPLAB_FINFO_FIELDS(LPLAB_EXPECT_SAME_FIELD)
#undef LPLAB_EXPECT_SAME_FIELD
}

// The declared twin's finfo is the compiled format's, field by field: the
// twin made from the descriptor and the one parsed from its layout text.
TYPED_TEST(DeclaredTwin, finfo_matches_the_compiled_format) {
  using T = TypeParam;
  std::string why;
  const std::optional<DeclaredFormat> made = DeclaredFormat::make(T::descriptor, &why);
  ASSERT_TRUE(made) << why;
  const std::optional<DeclaredFormat> parsed = DeclaredFormat::parse(made->name(), &why);
  ASSERT_TRUE(parsed) << made->name() << ": " << why;
  expect_same_finfo(finfo<T>::values, made->finfo(), made->name());
  expect_same_finfo(finfo<T>::values, parsed->finfo(), made->name() + " (parsed)");
  EXPECT_EQ(made->finfo(), finfo<T>::values);  // no NaN field: == holds
}

// finfo's fields as the run-time layer derived them for a declared format
// before finfo_values (runtime/src/formats.cpp's finfo_record: std::ldexp and
// the format's own conversions; has_zero and max_code added from the layout).
FinfoValues finfo_by_ldexp(const DeclaredFormat& f) {
  const Descriptor& d = f.descriptor();
  const detail::LayoutValues& l = f.layout();
  const auto value = [&](std::uint64_t c) { return f.to_double(c); };
  const std::uint64_t one = static_cast<std::uint64_t>(d.bias) << l.M;
  FinfoValues r{};
  r.bits = l.bits, r.exponent_bits = l.E, r.mantissa_bits = l.M, r.bias = d.bias;
  r.is_signed = d.is_signed, r.has_infinity = l.has_inf, r.has_nan = l.has_nan, r.has_zero = l.has_zero;
  r.has_negative_zero = l.has_negative_zero, r.has_subnormals = d.has_subnormals;
  r.encoding = d.encoding;
  const bool has_one = d.bias >= 1 && one < l.max_code;
  r.eps = has_one ? value(one + 1) - 1.0 : NAN;
  r.epsneg = has_one ? 1.0 - value(one - 1) : NAN;
  r.max = value(l.max_code);
  r.min = d.is_signed ? -r.max : value(0);
  r.tiny = r.smallest_normal = std::ldexp(1.0, l.emin);
  r.smallest_subnormal = std::ldexp(1.0, l.emin - (d.has_subnormals ? l.M : 0));
  r.digits10 = detail::decimal_digits_of_bits(l.M);
  r.resolution_torch = detail::kNegativePowersOfTen[r.digits10];
  r.machep = -l.M;
  r.negep = 0;
  for (double v = 1.0; has_one && v > r.epsneg; v /= 2) --r.negep;
  r.nmant = l.M, r.nexp = r.iexp = l.E;
  r.minexp = l.emin, r.maxexp = l.emax + 1;
  r.precision = l.bits == 8 ? 1 : detail::decimal_digits_of_bits(l.M);
  r.resolution_numpy = value(f.from_double(detail::kNegativePowersOfTen[r.precision]));
  r.overflow_threshold = r.max + std::ldexp(1.0, l.emax - l.M - 1);
  r.threshold_tie_overflows = l.M == 0 || (l.max_code & 1) != 0;
  r.max_code = l.max_code, r.nan_code = l.nan_code, r.inf_code = l.inf_code;
  const std::uint64_t per_sign = d.encoding == Encoding::ieee ? (std::uint64_t{1} << l.M) - 1
                                 : d.encoding == Encoding::fn ? 1
                                                              : 0;
  r.nan_codes = d.encoding == Encoding::fnuz ? 1 : per_sign * (d.is_signed ? 2 : 1);
  r.finite_codes = (std::uint64_t{1} << l.bits) - r.nan_codes - (l.has_inf ? (d.is_signed ? 2 : 1) : 0);
  r.finite_values = r.finite_codes - (l.has_negative_zero ? 1 : 0);
  r.normal_binades = l.emax - l.emin + 1;
  r.binades = l.emax - (l.emin - (d.has_subnormals ? l.M : 0)) + 1;
  return r;
}

// Every declarable layout of up to 14 exponent and 8 mantissa bits, with
// biases that put 1.0 inside, at the edges of and outside the range: the
// same fields, bit for bit, as the derivation above -- NaN eps and epsneg and
// negep 0 where 1.0 is not a value or is max.
TEST(DeclaredFinfo, every_layout_as_the_run_time_derivation_gave_it) {
  int layouts = 0, without_one = 0;
  for (int e = 1; e <= kDeclaredMaxExponentBits; ++e)
    for (int m = 0; m <= 8; ++m)
      for (int bias : {-3, 0, 1, 2, (1 << (e - 1)) - 1, 1 << (e - 1), (1 << e) - 1, (1 << e) + 1, 40})
        for (Encoding enc : {Encoding::ieee, Encoding::fn, Encoding::fnuz, Encoding::none})
          for (bool is_signed : {true, false}) {
            const Descriptor d{.name = "declared", .exponent_bits = e, .mantissa_bits = m, .bias = bias,
                               .encoding = enc, .is_signed = is_signed};
            const std::optional<DeclaredFormat> f = DeclaredFormat::make(d);
            if (!f) continue;
            ++layouts;
            const FinfoValues got = f->finfo();
            if (std::isnan(got.eps)) ++without_one;
            expect_same_finfo(finfo_by_ldexp(*f), got, f->name());
          }
  EXPECT_GT(layouts, 1000);
  EXPECT_GT(without_one, 100);
}

// Layouts whose values miss 1.0, by hand. e3m4:bias=10: max 0b0'110'1111 =
// 1.9375 * 2^(6-10) = 0.12109375; 0.1 = 1.6 * 2^-4 rounds to 26 * 2^-8 =
// 0.1015625. e2m1:bias=3:fn: 1.0 = 0b0'11'0 is max itself.
TEST(DeclaredFinfo, without_one_eps_and_epsneg_are_nan) {
  const FinfoValues f = DeclaredFormat::parse("e3m4:bias=10")->finfo();
  EXPECT_TRUE(std::isnan(f.eps));
  EXPECT_TRUE(std::isnan(f.epsneg));
  EXPECT_EQ(f.negep, 0);
  EXPECT_EQ(f.machep, -4);
  EXPECT_EQ(f.max, 0.12109375);
  EXPECT_EQ(f.tiny, 0x1p-9);
  EXPECT_EQ(f.smallest_subnormal, 0x1p-13);
  EXPECT_EQ(f.resolution_numpy, 0.1015625);
  EXPECT_EQ(f.overflow_threshold, 0.12109375 + 0x1p-9);
  EXPECT_TRUE(f.threshold_tie_overflows);
  EXPECT_EQ(f.maxexp, -3);
  EXPECT_EQ(f.minexp, -9);
  EXPECT_NE(f, f);  // NaN fields: == is false, as for a double

  const FinfoValues g = DeclaredFormat::parse("e2m1:bias=3:fn")->finfo();
  EXPECT_EQ(g.max, 1.0);
  EXPECT_TRUE(std::isnan(g.eps));
  EXPECT_TRUE(std::isnan(g.epsneg));
  EXPECT_EQ(g.negep, 0);
  EXPECT_EQ(g.max_code, 0x6u);
  EXPECT_EQ(g.nan_code, 0x7u);
}

// Values a wrong declaration would get wrong: ml_dtypes' float8_e3m4 has max
// 15.5 = 1.9375 * 2^3, smallest normal 2^-2 and subnormal 2^-6; 0.3 rounds to
// 1.0011b * 2^-2 = 0.296875 (code 0x13); 15.75 is the tie above max, odd max
// significand 1.1111b: it overflows to inf (0x70).
TEST(Declared, e3m4_from_text) {
  std::string why;
  const auto f = DeclaredFormat::parse("e3m4:bias=3:ieee", &why);
  ASSERT_TRUE(f) << why;
  EXPECT_EQ(f->name(), "e3m4:bias=3:ieee");
  EXPECT_EQ(f->to_double(f->layout().max_code), 15.5);
  EXPECT_EQ(f->to_double(0x10), 0.25);
  EXPECT_EQ(f->to_double(0x01), 0.015625);
  EXPECT_EQ(f->from_double(0.3), 0x13u);
  EXPECT_EQ(f->to_text(0x13), "0.296875");
  EXPECT_EQ(f->from_double(15.75), 0x70u);
  EXPECT_EQ(f->from_double(15.75, Round::nearest_even, Overflow::saturate), 0x6fu);
  EXPECT_EQ(f->from_double(-15.75), 0xf0u);
  // The default bias is IEEE's 2^(E-1) - 1, the default encoding ieee.
  EXPECT_EQ(DeclaredFormat::parse("e3m4")->name(), "e3m4:bias=3:ieee");
  EXPECT_EQ(DeclaredFormat::parse("e4m3:fn")->name(), "e4m3:bias=7:fn");
  // The tie above E4M3's max 448 = 1.110b * 2^8 goes to the even max.
  EXPECT_EQ(DeclaredFormat::parse("e4m3:fn")->from_double(464), 0x7eu);
  EXPECT_EQ(DeclaredFormat::parse("e5m2:bias=15:unsigned")->name(), "e5m2:bias=15:ieee:unsigned");
}

TEST(Declared, bad_declarations_say_why) {
  const std::pair<const char*, const char*> bad[] = {
      {"e3", "starts e<exponent bits>m<mantissa bits>"},
      {"x3m4", "starts e<exponent bits>m<mantissa bits>"},
      {"e3m4:bias=x", "bias=<integer> once"},
      {"e3m4:bias=3:bias=4", "bias=<integer> once"},
      {"e3m4:ieee:fn", "one encoding"},
      {"e3m4:big", "unknown option 'big'"},
      {"e3m4:", "unknown option ''"},
      {"e15m2", "exponent bits must be 1 to 14"},
      {"e0m3", "exponent bits must be 1 to 14"},
      {"e-1m3", "exponent bits must be 1 to 14"},
      {"e5m24", "mantissa bits must be 0 to 23"},
      {"e3m0", "IEEE encoding needs a mantissa"},
      {"e4m3:fnuz:unsigned", "fnuz encodes NaN in the sign bit"},
      {"e12m3", "its values must be doubles"},
      {"e8m7:bias=-1000", "its values must be doubles"},
  };
  for (const auto& [text, reason] : bad) {
    std::string why;
    EXPECT_FALSE(DeclaredFormat::parse(text, &why)) << text;
    EXPECT_NE(why.find(reason), std::string::npos) << text << ": " << why;
  }
}

}  // namespace
}  // namespace lplab::testing
