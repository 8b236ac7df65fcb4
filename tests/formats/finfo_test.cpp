// finfo against what the libraries report (ml_dtypes 0.6.0 and numpy 2.4
// finfo for the formats they share, torch.finfo's definitions), and
// numeric_limits against finfo.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

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
constexpr Expected expected();
// clang-format off
template <> constexpr Expected expected<float32>() { return {32, 0x1p-23, 0x1p-24, 3.4028234663852886e+38, -3.4028234663852886e+38, 0x1p-126, 0x1p-149, 9.999999974752427e-07, -23, -24, 23, 8, 8, 128, -126, 6, 1e-6}; }
template <> constexpr Expected expected<float16>() { return {16, 0.0009765625, 0.00048828125, 65504, -65504, 6.103515625e-05, 5.960464477539063e-08, 0.0010004043579101562, -10, -11, 10, 5, 5, 16, -14, 3, 1e-3}; }
template <> constexpr Expected expected<bfloat16>() { return {16, 0.0078125, 0.00390625, 3.3895313892515355e+38, -3.3895313892515355e+38, 1.1754943508222875e-38, 9.183549615799121e-41, 0.010009765625, -7, -8, 7, 8, 8, 128, -126, 2, 1e-2}; }
template <> constexpr Expected expected<float8_e4m3fn>() { return {8, 0.125, 0.0625, 448, -448, 0.015625, 0.001953125, 0.1015625, -3, -4, 3, 4, 4, 9, -6, 1, 1}; }
template <> constexpr Expected expected<float8_e5m2>() { return {8, 0.25, 0.125, 57344, -57344, 6.103515625e-05, 1.52587890625e-05, 0.09375, -2, -3, 2, 5, 5, 16, -14, 1, 1}; }
template <> constexpr Expected expected<float8_e4m3fnuz>() { return {8, 0.125, 0.0625, 240, -240, 0.0078125, 0.0009765625, 0.1015625, -3, -4, 3, 4, 4, 8, -7, 1, 1}; }
template <> constexpr Expected expected<float8_e5m2fnuz>() { return {8, 0.25, 0.125, 57344, -57344, 3.0517578125e-05, 7.62939453125e-06, 0.09375, -2, -3, 2, 5, 5, 16, -15, 1, 1}; }
template <> constexpr Expected expected<float8_e8m0fnu>() { return {8, 1.0, 0.5, 1.7014118346046923e+38, 5.877471754111438e-39, 5.877471754111438e-39, 5.877471754111438e-39, 0.125, 0, -1, 0, 8, 8, 128, -127, 1, 1}; }
template <> constexpr Expected expected<float6_e2m3fn>() { return {6, 0.125, 0.125, 7.5, -7.5, 1.0, 0.125, 1.0, -3, -3, 3, 2, 2, 3, 0, 0, 1}; }
template <> constexpr Expected expected<float6_e3m2fn>() { return {6, 0.25, 0.125, 28, -28, 0.25, 0.0625, 1.0, -2, -3, 2, 3, 3, 5, -2, 0, 1}; }
template <> constexpr Expected expected<float4_e2m1fn>() { return {4, 0.5, 0.5, 6, -6, 1.0, 0.5, 1.0, -1, -1, 1, 2, 2, 3, 0, 0, 1}; }
template <> constexpr Expected expected<float8_e3m4>() { return {8, 0.0625, 0.03125, 15.5, -15.5, 0.25, 0.015625, 0.09375, -4, -5, 4, 3, 3, 4, -2, 1, 0.1}; }
template <> constexpr Expected expected<float8_e4m3>() { return {8, 0.125, 0.0625, 240, -240, 0.015625, 0.001953125, 0.1015625, -3, -4, 3, 4, 4, 8, -6, 1, 1}; }
template <> constexpr Expected expected<float8_e4m3b11fnuz>() { return {8, 0.125, 0.0625, 30, -30, 0.0009765625, 0.0001220703125, 0.1015625, -3, -4, 3, 4, 4, 5, -10, 1, 1}; }
// UE5M3 is in neither library: its row is derived by hand from the format
// (unsigned, bias 15, M = 3, max 0xFE), as the others would print it.
template <> constexpr Expected expected<float8_e5m3fnu>() { return {8, 0.125, 0.0625, 114688, 0, 6.103515625e-05, 7.62939453125e-06, 0.1015625, -3, -4, 3, 5, 5, 17, -14, 1, 1}; }
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

// The anchors again, at compile time, against finfo_values itself: the one
// derivation that finfo<T> and the declared formats (declared_test) share.
constexpr bool matches(const FinfoValues& v, const Expected& e) {
  return v.bits == e.bits && v.eps == e.eps && v.epsneg == e.epsneg && v.max == e.max && v.min == e.min &&
         v.tiny == e.tiny && v.smallest_normal == e.tiny && v.smallest_subnormal == e.smallest_subnormal &&
         v.resolution_numpy == e.resolution_numpy && v.resolution_torch == e.resolution_torch &&
         v.machep == e.machep && v.negep == e.negep && v.nmant == e.nmant && v.nexp == e.nexp &&
         v.iexp == e.iexp && v.maxexp == e.maxexp && v.minexp == e.minexp && v.precision == e.precision;
}

TYPED_TEST(Finfo, finfo_values_matches_the_anchors_at_compile_time) {
  using T = TypeParam;
  constexpr Descriptor D = T::descriptor;
  constexpr FinfoValues v =
      finfo_values(D, detail::layout_of(D), &detail::decode_value<T>, &detail::nearest_code<T>);
  static_assert(matches(v, expected<T>()));
  static_assert(v == finfo<T>::values);
  // Every static member of finfo<T> is its field of `values`, with the field's type.
#define LPLAB_SAME_MEMBER(name, kind, doc)                                                        \
  static_assert(std::is_same_v<decltype(finfo<T>::name), const finfo_field_t<FinfoKind::kind>>); \
  static_assert(finfo<T>::name == v.name);
  LPLAB_FINFO_FIELDS(LPLAB_SAME_MEMBER)
#undef LPLAB_SAME_MEMBER
  EXPECT_TRUE(matches(finfo<T>::values, expected<T>()));
}

// Every field of one format per encoding, by hand (designated initializers
// in the fields' order, so a reordered list fails to compile here too).
// e4m3fn: max 0b0'1111'110 = 1.75 * 2^8 = 448, the tie 464 = 448 + 2^(8-3-1)
// rounds to the even max; NaN S.1111.111, 0x78 the infinity field it lacks.
constexpr FinfoValues kE4m3fn{
    .bits = 8, .exponent_bits = 4, .mantissa_bits = 3, .bias = 7, .is_signed = true, .has_infinity = false,
    .has_nan = true, .has_zero = true, .has_negative_zero = true, .has_subnormals = true,
    .encoding = Encoding::fn, .eps = 0.125, .epsneg = 0.0625, .max = 448, .min = -448, .tiny = 0x1p-6,
    .smallest_normal = 0x1p-6, .smallest_subnormal = 0x1p-9, .resolution_torch = 1, .resolution_numpy = 0.1015625,
    .machep = -3, .negep = -4, .nmant = 3, .nexp = 4, .iexp = 4, .maxexp = 9, .minexp = -6, .precision = 1,
    .digits10 = 0, .overflow_threshold = 464, .threshold_tie_overflows = false, .max_code = 0x7e,
    .nan_code = 0x7f, .inf_code = 0x78, .nan_codes = 2, .finite_codes = 254, .finite_values = 253,
    .normal_binades = 15, .binades = 18};
// e5m2: max 0b0'11110'11 = 1.75 * 2^15 = 57344, odd significand: the tie
// 61440 overflows; NaNs 0x7d..0x7f per sign, the quiet one 0x7e.
constexpr FinfoValues kE5m2{
    .bits = 8, .exponent_bits = 5, .mantissa_bits = 2, .bias = 15, .is_signed = true, .has_infinity = true,
    .has_nan = true, .has_zero = true, .has_negative_zero = true, .has_subnormals = true,
    .encoding = Encoding::ieee, .eps = 0.25, .epsneg = 0.125, .max = 57344, .min = -57344, .tiny = 0x1p-14,
    .smallest_normal = 0x1p-14, .smallest_subnormal = 0x1p-16, .resolution_torch = 1, .resolution_numpy = 0.09375,
    .machep = -2, .negep = -3, .nmant = 2, .nexp = 5, .iexp = 5, .maxexp = 16, .minexp = -14, .precision = 1,
    .digits10 = 0, .overflow_threshold = 61440, .threshold_tie_overflows = true, .max_code = 0x7b,
    .nan_code = 0x7e, .inf_code = 0x7c, .nan_codes = 6, .finite_codes = 248, .finite_values = 247,
    .normal_binades = 30, .binades = 32};
// e4m3fnuz: max 0b0'1111'111 = 1.875 * 2^7 = 240, no -0, NaN 0x80 alone.
constexpr FinfoValues kE4m3fnuz{
    .bits = 8, .exponent_bits = 4, .mantissa_bits = 3, .bias = 8, .is_signed = true, .has_infinity = false,
    .has_nan = true, .has_zero = true, .has_negative_zero = false, .has_subnormals = true,
    .encoding = Encoding::fnuz, .eps = 0.125, .epsneg = 0.0625, .max = 240, .min = -240, .tiny = 0x1p-7,
    .smallest_normal = 0x1p-7, .smallest_subnormal = 0x1p-10, .resolution_torch = 1, .resolution_numpy = 0.1015625,
    .machep = -3, .negep = -4, .nmant = 3, .nexp = 4, .iexp = 4, .maxexp = 8, .minexp = -7, .precision = 1,
    .digits10 = 0, .overflow_threshold = 248, .threshold_tie_overflows = true, .max_code = 0x7f,
    .nan_code = 0x80, .inf_code = 0x78, .nan_codes = 1, .finite_codes = 255, .finite_values = 255,
    .normal_binades = 15, .binades = 18};
// e8m0fnu: unsigned powers of two 2^-127 (code 0) .. 2^127 (0xfe), no zero,
// NaN 0xff; every binade normal.
constexpr FinfoValues kE8m0fnu{
    .bits = 8, .exponent_bits = 8, .mantissa_bits = 0, .bias = 127, .is_signed = false, .has_infinity = false,
    .has_nan = true, .has_zero = false, .has_negative_zero = false, .has_subnormals = false,
    .encoding = Encoding::fn, .eps = 1, .epsneg = 0.5, .max = 0x1p127, .min = 0x1p-127, .tiny = 0x1p-127,
    .smallest_normal = 0x1p-127, .smallest_subnormal = 0x1p-127, .resolution_torch = 1, .resolution_numpy = 0.125,
    .machep = 0, .negep = -1, .nmant = 0, .nexp = 8, .iexp = 8, .maxexp = 128, .minexp = -127, .precision = 1,
    .digits10 = 0, .overflow_threshold = 0x1.8p127, .threshold_tie_overflows = true, .max_code = 0xfe,
    .nan_code = 0xff, .inf_code = 0xff, .nan_codes = 1, .finite_codes = 255, .finite_values = 255,
    .normal_binades = 255, .binades = 255};
// e2m1fn: max 0b0'11'1 = 1.5 * 2^2 = 6, every code a number, 1.0 the
// smallest normal (epsneg a subnormal step).
constexpr FinfoValues kE2m1fn{
    .bits = 4, .exponent_bits = 2, .mantissa_bits = 1, .bias = 1, .is_signed = true, .has_infinity = false,
    .has_nan = false, .has_zero = true, .has_negative_zero = true, .has_subnormals = true,
    .encoding = Encoding::none, .eps = 0.5, .epsneg = 0.5, .max = 6, .min = -6, .tiny = 1, .smallest_normal = 1,
    .smallest_subnormal = 0.5, .resolution_torch = 1, .resolution_numpy = 1, .machep = -1, .negep = -1,
    .nmant = 1, .nexp = 2, .iexp = 2, .maxexp = 3, .minexp = 0, .precision = 0, .digits10 = 0,
    .overflow_threshold = 7, .threshold_tie_overflows = true, .max_code = 0x7, .nan_code = 0, .inf_code = 0x6,
    .nan_codes = 0, .finite_codes = 16, .finite_values = 15, .normal_binades = 3, .binades = 4};
static_assert(finfo<float8_e4m3fn>::values == kE4m3fn);
static_assert(finfo<float8_e5m2>::values == kE5m2);
static_assert(finfo<float8_e4m3fnuz>::values == kE4m3fnuz);
static_assert(finfo<float8_e8m0fnu>::values == kE8m0fnu);
static_assert(finfo<float4_e2m1fn>::values == kE2m1fn);

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

// The fields the run-time registry lists (runtime/formats.h), in its order, and finfo<T>'s
// has_zero and max_code: a field dropped from LPLAB_FINFO_FIELDS, or one
// added to FinfoValues beside the list, fails here.
constexpr const char* kRecordFields[] = {
    "bits", "exponent_bits", "mantissa_bits", "bias", "is_signed", "has_infinity", "has_nan", "has_zero",
    "has_negative_zero", "has_subnormals", "encoding", "eps", "epsneg", "max", "min", "tiny", "smallest_normal",
    "smallest_subnormal", "resolution_torch", "resolution_numpy", "machep", "negep", "nmant", "nexp", "iexp",
    "maxexp", "minexp", "precision", "digits10", "overflow_threshold", "threshold_tie_overflows", "max_code",
    "nan_code", "inf_code", "nan_codes", "finite_codes", "finite_values", "normal_binades", "binades"};

// The members of an aggregate: the most initializers it takes.
struct AnyMember {
  template <class V>
  constexpr operator V() const noexcept {  // NOLINT: converts to each member's type on purpose
    return V{};
  }
};
template <class T, class... A>
constexpr std::size_t member_count() {
  if constexpr (requires { T{A{}..., AnyMember{}}; }) return member_count<T, A..., AnyMember>();
  else return sizeof...(A);
}
static_assert(member_count<FinfoValues>() == kFinfoFieldCount);
static_assert(std::size(kRecordFields) == kFinfoFieldCount);

// for_each_finfo_field, as a constant expression: every field once.
static_assert([] {
  std::size_t n = 0;
  for_each_finfo_field(finfo<float16>::values, [&](const char*, const auto&) { ++n; });
  return n;
}() == kFinfoFieldCount);

template <class V>
constexpr FinfoKind kind_of_value() {
  if constexpr (std::is_same_v<V, int>) return FinfoKind::integer;
  else if constexpr (std::is_same_v<V, bool>) return FinfoKind::boolean;
  else if constexpr (std::is_same_v<V, double>) return FinfoKind::real;
  else if constexpr (std::is_same_v<V, FinfoCode>) return FinfoKind::code;
  else if constexpr (std::is_same_v<V, std::uint64_t>) return FinfoKind::count;
  else {
    static_assert(std::is_same_v<V, Encoding>);
    return FinfoKind::encoding;
  }
}

TEST(FinfoFields, list_every_finfo_record_field_once_in_its_order) {
  ASSERT_EQ(kFinfoFieldCount, std::size(kRecordFields));
  for (std::size_t i = 0; i < kFinfoFieldCount; ++i) {
    EXPECT_STREQ(kFinfoFields[i].name, kRecordFields[i]) << i;
    EXPECT_NE(std::string(kFinfoFields[i].doc), "") << kFinfoFields[i].name;
    EXPECT_STRNE(enum_name(kFinfoFields[i].kind), "?") << kFinfoFields[i].name;
  }
}

TEST(FinfoFields, for_each_passes_every_field_typed_by_its_kind) {
  std::size_t i = 0;
  for_each_finfo_field(kE4m3fn, [&](const char* name, const auto& value) {
    ASSERT_LT(i, kFinfoFieldCount);
    EXPECT_STREQ(name, kFinfoFields[i].name);
    EXPECT_EQ(kind_of_value<std::decay_t<decltype(value)>>(), kFinfoFields[i].kind) << name;
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, FinfoCode>) {
      if (std::string_view(name) == "nan_code") {
        EXPECT_EQ(value, (FinfoCode{.code = 0x7f, .bits = 8}));
      }
      if (std::string_view(name) == "max_code") {
        EXPECT_EQ(value, (FinfoCode{.code = 0x7e, .bits = 8}));
      }
    }
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, Encoding>) {
      EXPECT_STREQ(encoding_name(value), "fn");
    }
    ++i;
  });
  EXPECT_EQ(i, kFinfoFieldCount);
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
