// Block and tensor scaling: the fast path (kernels/src/scaling.cpp) against
// the scalar reference (scaling_reference.h) bit for bit on random and
// adversarial tensors for every scheme and SIMD target, and golden values from
// the specifications. Also the kernels' lists declared once: every
// enumeration's names, and the block pairs against their concepts.
#include "lplab/kernels/scaling.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/scaling_reference.h"
#include "lplab/kernels/accumulator.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/targets.h"

namespace lplab::kernels {
namespace {

using lplab::testing::ref_dequantize;
using lplab::testing::ref_quantize;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// --- descriptors ------------------------------------------------------------

static_assert(bits_per_element(mxfp8_e4m3) == 8.25 && bits_per_element(mxfp8_e5m2) == 8.25);
static_assert(bits_per_element(mxfp6_e2m3) == 6.25 && bits_per_element(mxfp6_e3m2) == 6.25);
static_assert(bits_per_element(mxfp4) == 4.25 && bits_per_element(nvfp4) == 4.5);
// 1024 NVFP4 elements: 4096 element bits, 64 scales of 8 bits, one fp32.
static_assert(storage_bits(nvfp4, 1024) == 4096 + 512 + 32);
static_assert(storage_bits(mxfp8_e4m3, 33) == 33 * 8 + 2 * 8);
static_assert(scales_needed(mxfp8_e4m3, 0) == 0 && scales_needed(mxfp8_e4m3, 32) == 1 &&
              scales_needed(mxfp8_e4m3, 33) == 2 && scales_needed(nvfp4, 33) == 3);
static_assert(mxfp4.block_size == 32 && mxfp4.rule == ScaleRule::floor && !mxfp4.tensor_scale);
static_assert(nvfp4.block_size == 16 && nvfp4.rule == ScaleRule::amax_ratio && nvfp4.tensor_scale);

// --- fast path == reference -------------------------------------------------

template <class Elem, class Scale, int BlockSize, ScaleRule Rule, bool Tensor = false>
struct Case {
  static constexpr BlockScaling<Elem, Scale> scheme{
      .block_size = BlockSize, .rule = Rule, .tensor_scale = Tensor};
  static std::string name() {
    const std::string rule(lplab::enum_name(Rule));
    return std::string(finfo<Elem>::name) + "_x" + std::to_string(BlockSize) + "_" +
           finfo<Scale>::name + "_" + rule + (Tensor ? "_tensor" : "");
  }
};

struct CaseNames {
  template <class C>
  static std::string GetName(int) {
    return C::name();
  }
};

using E8M0 = float8_e8m0fnu;
using Cases = ::testing::Types<
    // The OCP MX schemes, both scale rules.
    Case<float8_e4m3fn, E8M0, 32, ScaleRule::floor>, Case<float8_e4m3fn, E8M0, 32, ScaleRule::ceil>,
    Case<float8_e5m2, E8M0, 32, ScaleRule::floor>, Case<float8_e5m2, E8M0, 32, ScaleRule::ceil>,
    Case<float6_e2m3fn, E8M0, 32, ScaleRule::floor>, Case<float6_e2m3fn, E8M0, 32, ScaleRule::ceil>,
    Case<float6_e3m2fn, E8M0, 32, ScaleRule::floor>, Case<float6_e3m2fn, E8M0, 32, ScaleRule::ceil>,
    Case<float4_e2m1fn, E8M0, 32, ScaleRule::floor>, Case<float4_e2m1fn, E8M0, 32, ScaleRule::ceil>,
    Case<float8_e4m3fn, E8M0, 32, ScaleRule::rceil>, Case<float8_e4m3fn, E8M0, 32, ScaleRule::even>,
    Case<float8_e4m3fn, E8M0, 32, ScaleRule::ceil_amax>, Case<float4_e2m1fn, E8M0, 32, ScaleRule::rceil>,
    Case<float6_e3m2fn, E8M0, 32, ScaleRule::even>, Case<float8_e5m2, E8M0, 32, ScaleRule::ceil_amax>,
    Case<float4_e2m1fn, float8_e4m3fn, 16, ScaleRule::rceil>,
    // NVFP4, and the same template with other block sizes and pairings.
    Case<float4_e2m1fn, float8_e4m3fn, 16, ScaleRule::amax_ratio, true>,
    Case<float4_e2m1fn, float8_e4m3fn, 7, ScaleRule::amax_ratio, true>,
    Case<float4_e2m1fn, E8M0, 32, ScaleRule::amax_ratio>,
    Case<float8_e4m3fn, float8_e4m3fn, 16, ScaleRule::floor>,
    Case<float8_e4m3fnuz, E8M0, 32, ScaleRule::floor>,
    Case<float8_e5m2fnuz, E8M0, 32, ScaleRule::ceil>,
    Case<float8_e4m3fn, E8M0, 1, ScaleRule::floor>, Case<float6_e3m2fn, E8M0, 5, ScaleRule::ceil>>;

template <class C>
class ScalingTest : public ::testing::Test {};
TYPED_TEST_SUITE(ScalingTest, Cases, CaseNames);

// Tensors that hit the decisions: per block a random magnitude anywhere in
// float's range, elements that are exact powers of two, exactly max_elem * 2^k
// (where the ceil rule must not step up), just above it (where it must), few
// significant bits (ties of the element rounding), zeros of both signs, float
// subnormals, values near FLT_MAX, and now and then a NaN or an infinity.
std::vector<float> adversarial(std::size_t n, int block, double max_elem, std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<float> x(n);
  int e = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % static_cast<std::size_t>(block) == 0)
      e = uniform(0, 3) == 0 ? uniform(-150, 127) : uniform(-30, 30);
    const float sign = uniform(0, 1) ? -1.0f : 1.0f;
    const int ei = std::clamp(e - uniform(0, 14), -149, 127);
    double v;
    switch (uniform(0, 19)) {
      case 0:
        v = 0.0;
        break;
      case 1:
        v = std::ldexp(1.0, ei);
        break;
      case 2:
        v = std::ldexp(max_elem, std::clamp(e, -149, 119));
        break;
      case 3:
        v = std::ldexp(max_elem, std::clamp(e, -149, 119)) * (1 + 0x1p-23);
        break;
      case 4:
      case 5:
      case 6:
        v = std::ldexp(static_cast<double>(uniform(1, 63)), std::clamp(ei - 5, -149, 121));
        break;
      case 7:
        v = std::bit_cast<float>(static_cast<std::uint32_t>(uniform(1, 0x7FFFFF)));
        break;
      case 8:
        v = std::numeric_limits<float>::max() / static_cast<float>(uniform(1, 16));
        break;
      default:
        v = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng), ei);
    }
    // Rounded to float (the cases above FLT_MAX held at FLT_MAX).
    x[i] = sign * static_cast<float>(std::min(v, double{std::numeric_limits<float>::max()}));
    if (uniform(0, 499) == 0) x[i] = uniform(0, 1) ? kNaN : sign * kInf;
  }
  return x;
}

// Tensors of ordinary data: normal(0, 1) with a few outliers.
std::vector<float> gaussian(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = d(rng) * (rng() % 64 == 0 ? 100.0f : 1.0f);
  return x;
}

template <class Elem, class Scale>
void expect_matches_reference(const BlockScaling<Elem, Scale>& s, const std::vector<float>& x,
                              const std::string& what) {
  const std::size_t n = x.size();
  const auto ref = ref_quantize(s, std::span<const float>(x));
  std::vector<Elem> elems(n);
  std::vector<Scale> scales(scales_needed(s, n));
  float tensor_scale = -1.0f;
  quantize(s, x, elems, scales, &tensor_scale);
  ASSERT_EQ(bits(tensor_scale), bits(ref.tensor_scale)) << what;
  for (std::size_t b = 0; b < scales.size(); ++b)
    ASSERT_EQ(scales[b].bits(), ref.scales[b].bits()) << what << ", block " << b;
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(elems[i].bits(), ref.elems[i].bits()) << what << ", element " << i << " = " << x[i];

  std::vector<float> y(n);
  dequantize(s, elems, scales, y, tensor_scale);
  const auto ref_y = ref_dequantize(s, std::span<const Elem>(ref.elems),
                                    std::span<const Scale>(ref.scales), ref.tensor_scale);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(bits(y[i]), bits(ref_y[i])) << what << ", dequantized element " << i;

  if constexpr (PackedFormat<Elem>) {
    std::vector<std::uint8_t> packed(packed_bytes<Elem>(n)), expect(packed_bytes<Elem>(n));
    pack(std::span<const Elem>(elems), std::span<std::uint8_t>(expect));
    std::vector<Scale> packed_scales(scales.size());
    float packed_tensor_scale = -1.0f;
    quantize_packed(s, x, packed, packed_scales, &packed_tensor_scale);
    ASSERT_EQ(packed, expect) << what;
    ASSERT_EQ(bits(packed_tensor_scale), bits(tensor_scale));
    for (std::size_t b = 0; b < scales.size(); ++b)
      ASSERT_EQ(packed_scales[b].bits(), scales[b].bits()) << what;
    std::vector<float> py(n);
    dequantize_packed(s, packed, scales, py, tensor_scale);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(bits(py[i]), bits(y[i])) << what;
  }
}

TYPED_TEST(ScalingTest, fast_path_matches_reference) {
  constexpr auto s = TypeParam::scheme;
  using Elem = typename decltype(s)::element_type;
  const double max_elem = finfo<Elem>::max;
  // Lengths around the block size and the 1024-float chunk of the fast path.
  const std::size_t lengths[] = {1, 2, 5, 15, 16, 17, 31, 32, 33, 47, 64, 100, 1023, 1025, 3001};
  for (const SimdTarget& target : simd_targets()) {
    ScopedSimdTarget pin(target.id);
    for (std::uint32_t seed = 0; seed < 12; ++seed) {
      for (std::size_t n : lengths) {
        const std::string what =
            target.name + ", seed " + std::to_string(seed) + ", n " + std::to_string(n);
        expect_matches_reference(s, adversarial(n, s.block_size, max_elem, seed * 1000 + n),
                                 what + " (adversarial)");
        if (seed < 3) expect_matches_reference(s, gaussian(n, seed), what + " (gaussian)");
      }
    }
  }
}

// On two threads (a tensor of two shares of 256K elements and a partial
// last block) against the spec's reference, packed too.
TYPED_TEST(ScalingTest, two_threads_match_the_reference) {
  constexpr auto s = TypeParam::scheme;
  using Elem = typename decltype(s)::element_type;
  using Scale = typename decltype(s)::scale_type;
  const std::size_t n = (std::size_t{1} << 19) + 7;
  const auto x = adversarial(n, s.block_size, finfo<Elem>::max, 77);
  const auto ref = ref_quantize(s, std::span<const float>(x));
  std::vector<Elem> elems(n);
  std::vector<Scale> scales(scales_needed(s, n));
  float tensor_scale = -1.0f;
  quantize(s, std::span<const float>(x), std::span<Elem>(elems), std::span<Scale>(scales), &tensor_scale, 2);
  ASSERT_EQ(bits(tensor_scale), bits(ref.tensor_scale));
  for (std::size_t b = 0; b < scales.size(); ++b) ASSERT_EQ(scales[b].bits(), ref.scales[b].bits()) << "block " << b;
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(elems[i].bits(), ref.elems[i].bits()) << "element " << i;
  if constexpr (PackedFormat<Elem>) {
    std::vector<std::uint8_t> packed(packed_bytes<Elem>(n)), expect(packed_bytes<Elem>(n));
    pack(std::span<const Elem>(ref.elems), std::span<std::uint8_t>(expect));
    std::vector<Scale> packed_scales(scales.size());
    quantize_packed(s, std::span<const float>(x), std::span<std::uint8_t>(packed), std::span<Scale>(packed_scales),
                    &tensor_scale, 0);
    ASSERT_EQ(packed, expect);
  }
}

TYPED_TEST(ScalingTest, never_touches_past_the_end) {
  constexpr auto s = TypeParam::scheme;
  using Elem = typename decltype(s)::element_type;
  using Scale = typename decltype(s)::scale_type;
  // The spans end inside a larger buffer whose tail is NaN: a read past the end
  // would make the last block's scale NaN; a write would change the tail.
  const std::size_t n = static_cast<std::size_t>(s.block_size) * 2 + 1;
  std::vector<float> x(n + 40, kNaN);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  std::vector<Elem> elems(n + 8, Elem::from_bits(0x5));
  std::vector<Scale> scales(scales_needed(s, n) + 2, Scale::from_bits(0x11));
  float ts;
  quantize(s, std::span<const float>(x).first(n), std::span<Elem>(elems).first(n),
           std::span<Scale>(scales).first(scales_needed(s, n)), &ts);
  const Scale last = scales[scales_needed(s, n) - 1];
  EXPECT_FALSE(std::isnan(static_cast<float>(last)));
  for (std::size_t i = n; i < elems.size(); ++i) EXPECT_EQ(elems[i].bits(), 0x5);
  for (std::size_t b = scales_needed(s, n); b < scales.size(); ++b)
    EXPECT_EQ(scales[b].bits(), 0x11);

  std::vector<float> y(n + 8, 7.0f);
  dequantize(s, std::span<const Elem>(elems).first(n),
             std::span<const Scale>(scales).first(scales_needed(s, n)),
             std::span<float>(y).first(n), ts);
  for (std::size_t i = n; i < y.size(); ++i) EXPECT_EQ(y[i], 7.0f);
}

TYPED_TEST(ScalingTest, wrong_sizes_throw_before_writing) {
  constexpr auto s = TypeParam::scheme;
  using Elem = typename decltype(s)::element_type;
  using Scale = typename decltype(s)::scale_type;
  const std::size_t n = 40;
  const std::vector<float> x(n, 1.0f);
  std::vector<Elem> elems(n, Elem::from_bits(0x3));
  std::vector<Scale> scales(scales_needed(s, n) + 1, Scale::from_bits(0x11));
  float ts = -1.0f;
  EXPECT_THROW(quantize(s, x, elems, scales, &ts), std::invalid_argument);
  EXPECT_EQ(scales[0].bits(), 0x11);
  EXPECT_EQ(ts, -1.0f);
  scales.resize(scales_needed(s, n));
  std::vector<Elem> short_elems(n - 1, Elem::from_bits(0x3));
  EXPECT_THROW(quantize(s, x, short_elems, scales, &ts), std::invalid_argument);
  EXPECT_EQ(short_elems[0].bits(), 0x3);
  std::vector<float> y(n + 1, 2.0f);
  EXPECT_THROW(dequantize(s, elems, scales, y, 1.0f), std::invalid_argument);
  EXPECT_EQ(y[0], 2.0f);
  if constexpr (TypeParam::scheme.tensor_scale) {
    EXPECT_THROW(quantize(s, x, elems, scales, nullptr), std::invalid_argument);
  }
}

// --- the lists, each declared once ------------------------------------------

// Every entry of an enumeration's table (enum_table.h) names its value and
// parses back to it, aliases included; the values are the declaration order.
template <class E>
void expect_round_trip() {
  SCOPED_TRACE(enum_noun<E>());
  std::size_t i = 0;
  for (const EnumEntry<E>& x : enum_entries<E>()) {
    EXPECT_EQ(static_cast<std::size_t>(x.value), i++) << x.name;
    EXPECT_STREQ(enum_name(x.value), x.name);
    EXPECT_EQ(enum_parse<E>(x.name), x.value) << x.name;
    for (const char* alias : x.aliases) {
      if (alias == nullptr) continue;
      EXPECT_EQ(enum_parse<E>(alias), x.value) << alias;
    }
  }
  EXPECT_EQ(enum_parse<E>("no_such_name"), std::nullopt);
  EXPECT_STREQ(enum_name(static_cast<E>(enum_count<E>())), "?");
}

TEST(Enumerations, names_round_trip_through_every_table) {
  expect_round_trip<Unary>();
  expect_round_trip<Binary>();
  expect_round_trip<Compute>();
  expect_round_trip<Accumulate>();
  expect_round_trip<ScaleRule>();
  expect_round_trip<AmaxSource>();
  expect_round_trip<TileRule>();
  expect_round_trip<Accumulator>();
}

// The names of this writing, in declaration order: a value added after them
// keeps these (a name renamed, dropped or moved fails).
template <class E>
void expect_names_start(const std::string& known) {
  const std::string all = enum_names_text<E>();
  EXPECT_TRUE(all == known || all.starts_with(known + ", ")) << all;
}

TEST(Enumerations, names_are_the_ones_the_tool_and_python_spell) {
  expect_names_start<Unary>("identity, relu, gelu_tanh, gelu_erf, square, sqrt, rsqrt, pow, scale");
  expect_names_start<Binary>("add, mul, axpy");
  expect_names_start<Compute>("per_op, fused, fp64");
  expect_names_start<Accumulate>("fp64, fp32, storage");
  expect_names_start<ScaleRule>("floor, ceil, amax_ratio, amax_ratio_te");
  expect_names_start<AmaxSource>("current, history_max, history_most_recent");
  expect_names_start<TileRule>("deepseek, te, te_pow2");
  expect_names_start<Accumulator>("fp64, fp32, fp16, bf16, tensor_core, bf16_dot2, instruction");
  EXPECT_STREQ(unary_name(Unary::gelu_tanh), "gelu_tanh");
  EXPECT_STREQ(binary_name(Binary::axpy), "axpy");
  EXPECT_STREQ(accumulator_name(Accumulator::bf16_dot2), "bf16_dot2");
  EXPECT_STREQ(unary_name(static_cast<Unary>(99)), "?");
  // The policies: the device's round_name is the table's name, and the
  // aliases parse (CUDA's _rn/_rz/_ru/_rd, PTX's .rp/.rm/.rs, .satfinite).
  expect_round_trip<Round>();
  expect_round_trip<Overflow>();
  for (const EnumEntry<Round>& r : enum_entries<Round>()) EXPECT_STREQ(round_name(r.value), r.name);
  EXPECT_EQ(enum_parse<Round>("rp"), Round::upward);
  EXPECT_EQ(enum_parse<Round>("rs"), Round::stochastic);
  EXPECT_EQ(enum_parse<Overflow>("satfinite"), Overflow::saturate);
  EXPECT_STREQ(round_aliases(Round::downward).names[1], "rm");
}

// LPLAB_BLOCK_PAIRS against the concepts, for every pair of catalog formats.
#define LPLAB_TEST_CATALOG_NAME(type, names, description) #type,
constexpr std::string_view kCatalogNames[] = {LPLAB_FORMAT_CATALOG(LPLAB_TEST_CATALOG_NAME)};
#undef LPLAB_TEST_CATALOG_NAME

bool listed_pair(std::string_view e, std::string_view s) {
  for (const BlockPairName& p : kBlockPairs)
    if (p.element == e && p.scale == s) return true;
  return false;
}
bool listed_element(std::string_view e) {
  for (std::string_view x : kScalingElements)
    if (x == e) return true;
  return false;
}
bool listed_scale(std::string_view s) {
  for (const BlockPairName& p : kBlockPairs)
    if (p.scale == s) return true;
  return false;
}

template <std::size_t I, std::size_t J>
void expect_pair() {
  const std::string_view e = kCatalogNames[I], s = kCatalogNames[J];
  EXPECT_EQ((BlockPair<catalog_format<I>, catalog_format<J>>), listed_pair(e, s)) << e << " x " << s;
}
template <std::size_t I, std::size_t... J>
void expect_pairs_of(std::index_sequence<J...>) {
  using E = catalog_format<I>;
  const std::string_view e = kCatalogNames[I];
  EXPECT_EQ(BlockElement<E>, listed_element(e)) << e;
  EXPECT_EQ(BlockScale<E>, listed_scale(e)) << e;
  (expect_pair<I, J>(), ...);
}
template <std::size_t... I>
void expect_pairs(std::index_sequence<I...> all) {
  (expect_pairs_of<I>(all), ...);
}

TEST(BlockPairs, the_list_is_what_the_concepts_accept) {
  static_assert(std::size(kCatalogNames) == std::tuple_size_v<catalog_tuple>);
  expect_pairs(std::make_index_sequence<std::tuple_size_v<catalog_tuple>>());
  for (const BlockPairName& p : kBlockPairs) EXPECT_TRUE(listed_element(p.element)) << p.element;
  EXPECT_GE(std::size(kBlockPairs), 14u);  // the 14 of OCP MX and NVFP4, and any added
  EXPECT_TRUE(scaling_elements_text().starts_with(
      "float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float6_e2m3fn, float6_e3m2fn, "
      "float4_e2m1fn"))
      << scaling_elements_text();
  EXPECT_TRUE(block_pairs_text().starts_with("float8_e4m3fn with float8_e8m0fnu or float8_e4m3fn "))
      << block_pairs_text();
  EXPECT_NE(block_pairs_text().find("; float8_e5m2 with float8_e8m0fnu or float8_e4m3fn "), std::string::npos)
      << block_pairs_text();
}

// --- the schemes as data ------------------------------------------------------

TEST(Scaling, invalid_schemes_throw) {
  const std::vector<float> x(4, 1.0f);
  std::vector<float8_e4m3fn> q(4);
  std::vector<float8_e8m0fnu> sc(4);
  auto bad = mxfp8_e4m3;
  bad.block_size = 0;
  EXPECT_THROW(quantize(bad, x, q, sc), std::invalid_argument);
  bad = mxfp8_e4m3;
  bad.block_size = 1;
  bad.tensor_scale = true;  // a power-of-two rule with a tensor scale
  float ts;
  EXPECT_THROW(quantize(bad, x, q, sc, &ts), std::invalid_argument);
}

// --- golden values: OCP MX (floor rule) -----------------------------------------

// One block quantized; returns the scale code.
template <class Elem, class Scale>
unsigned scale_code(const BlockScaling<Elem, Scale>& s, const std::vector<float>& x,
                    std::vector<Elem>* elems = nullptr) {
  std::vector<Elem> q(x.size());
  std::vector<Scale> sc(scales_needed(s, x.size()));
  float ts;
  quantize(s, x, q, sc, &ts);
  if (elems != nullptr) *elems = q;
  return sc.at(0).bits();
}

TEST(Scaling, mxfp8_e4m3_floor_golden) {
  std::vector<float8_e4m3fn> q;
  // amax 448 = 1.75 * 2^8: X = 8 - 8 = 0, E8M0 code 127 + 0 = 127; 448 is 0x7E.
  EXPECT_EQ(scale_code(mxfp8_e4m3, {448.0f, 1.0f, -2.0f}, &q), 127u);
  EXPECT_EQ(q[0].bits(), 0x7E);
  EXPECT_EQ(q[1].bits(), 0x38);  // 1.0 = 0b0'0111'000
  EXPECT_EQ(q[2].bits(), 0xC0);  // -2.0 = 0b1'1000'000
  // amax 1000: floor(log2 1000) = 9, X = 1 (code 128); 1000 / 2 = 500 saturates to 448.
  EXPECT_EQ(scale_code(mxfp8_e4m3, {1000.0f, 3.0f}, &q), 128u);
  EXPECT_EQ(q[0].bits(), 0x7E);
  EXPECT_EQ(q[1].bits(), 0x3C);  // 3 / 2 = 1.5 = 0b0'0111'100
  // amax 1: X = 0 - 8 = -8 (code 119), 1 * 2^8 = 256 = 0b0'1111'000.
  EXPECT_EQ(scale_code(mxfp8_e4m3, {1.0f}, &q), 119u);
  EXPECT_EQ(q[0].bits(), 0x78);
}

TEST(Scaling, floor_and_ceil_rules_differ_at_amax_500) {
  const auto ceil_rule = BlockScaling<float8_e4m3fn, float8_e8m0fnu>{.rule = ScaleRule::ceil};
  std::vector<float8_e4m3fn> q;
  // floor: X = floor(log2 500) - 8 = 0; 500 saturates to 448.
  EXPECT_EQ(scale_code(mxfp8_e4m3, {500.0f}, &q), 127u);
  EXPECT_EQ(q[0].bits(), 0x7E);
  // ceil: X = ceil(log2(500 / 448)) = 1; 500 / 2 = 250 rounds to 256 (0x78), nothing saturates.
  EXPECT_EQ(scale_code(ceil_rule, {500.0f}, &q), 128u);
  EXPECT_EQ(q[0].bits(), 0x78);
  // At exactly max_elem * 2^k the ceil rule does not step up: 448 -> 2^0, 896 -> 2^1.
  EXPECT_EQ(scale_code(ceil_rule, {448.0f}), 127u);
  EXPECT_EQ(scale_code(ceil_rule, {896.0f}), 128u);
  // One ulp above it does: 448.00003 -> 2^1.
  EXPECT_EQ(scale_code(ceil_rule, {std::nextafter(448.0f, 1000.0f)}), 128u);
  // Below max_elem's significand the rules agree: amax 260 gives floor X = 8 - 8 = 0
  // and ceil X = ceil(log2(260 / 448)) = 0.
  EXPECT_EQ(scale_code(ceil_rule, {260.0f}), 127u);
}

TEST(Scaling, mx_golden_per_element_format) {
  // X = floor(log2 amax) - emax_elem with amax at each format's max: 2^0 everywhere.
  EXPECT_EQ(scale_code(mxfp8_e5m2, {57344.0f}), 127u);  // 1.75 * 2^15, emax 15
  EXPECT_EQ(scale_code(mxfp6_e2m3, {7.5f}), 127u);      // 1.875 * 2^2, emax 2
  EXPECT_EQ(scale_code(mxfp6_e3m2, {28.0f}), 127u);     // 1.75 * 2^4, emax 4
  std::vector<float4_e2m1fn> q4;
  EXPECT_EQ(scale_code(mxfp4, {6.0f, 3.0f, -0.5f}, &q4), 127u);  // 1.5 * 2^2, emax 2
  EXPECT_EQ(q4[0].bits(), 0x7);
  EXPECT_EQ(q4[1].bits(), 0x5);
  EXPECT_EQ(q4[2].bits(), 0x9);  // -0.5 = 0b1'00'1
  // E3M2 amax 1: X = 0 - 4 = -4 (code 123), 1 * 16 = 0b0'111'00.
  std::vector<float6_e3m2fn> q6;
  EXPECT_EQ(scale_code(mxfp6_e3m2, {1.0f}, &q6), 123u);
  EXPECT_EQ(q6[0].bits(), 0x1C);
  // MXFP4 amax 7: floor keeps X = 0 and 7 saturates to 6; ceil takes X = 1 and
  // 3.5 ties to even 4 (0x6).
  EXPECT_EQ(scale_code(mxfp4, {7.0f}, &q4), 127u);
  EXPECT_EQ(q4[0].bits(), 0x7);
  EXPECT_EQ(
      scale_code(BlockScaling<float4_e2m1fn, float8_e8m0fnu>{.rule = ScaleRule::ceil}, {7.0f}, &q4),
      128u);
  EXPECT_EQ(q4[0].bits(), 0x6);
  // FLT_MAX = (2 - 2^-23) * 2^127: floor gives X = 127 - 2 = 125 (code 252) and
  // FLT_MAX / 2^125 = 7.9999995 saturates to 6; ceil gives X = ceil(log2(FLT_MAX / 6)) =
  // 126 (code 253) and 3.99999976 rounds to 4 (0x6).
  EXPECT_EQ(scale_code(mxfp4, {std::numeric_limits<float>::max()}, &q4), 252u);
  EXPECT_EQ(q4[0].bits(), 0x7);
  EXPECT_EQ(scale_code(BlockScaling<float4_e2m1fn, float8_e8m0fnu>{.rule = ScaleRule::ceil},
                       {std::numeric_limits<float>::max()}, &q4),
            253u);
  EXPECT_EQ(q4[0].bits(), 0x6);
}

TEST(Scaling, zero_block_takes_the_smallest_scale_and_keeps_zero_signs) {
  std::vector<float8_e4m3fn> q;
  // log2(0) = -inf, clamped to E8M0's smallest exponent: 2^-127, code 0.
  EXPECT_EQ(scale_code(mxfp8_e4m3, {0.0f, -0.0f, 0.0f}, &q), 0u);
  EXPECT_EQ(q[0].bits(), 0x00);
  EXPECT_EQ(q[1].bits(), 0x80);
  std::vector<float4_e2m1fn> q4;
  EXPECT_EQ(scale_code(mxfp4, {-0.0f}, &q4), 0u);
  EXPECT_EQ(q4[0].bits(), 0x8);
  std::vector<float8_e8m0fnu> sc = {float8_e8m0fnu::from_bits(0)};
  std::vector<float> y(3);
  dequantize(mxfp8_e4m3, q, sc, y);
  EXPECT_EQ(bits(y[0]), 0x00000000u);
  EXPECT_EQ(bits(y[1]), 0x80000000u);
}

TEST(Scaling, nan_or_inf_in_a_block_makes_its_scale_nan) {
  for (float special : {kNaN, kInf, -kInf}) {
    // Block 0 holds the special value; block 1 (amax 4: X = 2 - 8 = -6) is unaffected.
    std::vector<float> x(64, 1.0f);
    x[5] = special;
    x[32] = 4.0f;
    std::vector<float8_e4m3fn> q(64);
    std::vector<float8_e8m0fnu> sc(2);
    quantize(mxfp8_e4m3, x, q, sc);
    EXPECT_EQ(sc[0].bits(), 0xFF);  // E8M0 NaN
    for (int i = 0; i < 32; ++i) EXPECT_EQ(q[i].bits(), 0x00) << i;
    EXPECT_EQ(sc[1].bits(), 121u);
    EXPECT_EQ(q[32].bits(), 0x78);  // 4 * 2^6 = 256
    std::vector<float> y(64);
    dequantize(mxfp8_e4m3, q, sc, y);
    for (int i = 0; i < 32; ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
    EXPECT_EQ(y[32], 4.0f);
    EXPECT_EQ(y[33], 1.0f);
  }
}

TEST(Scaling, subnormal_amax_clamps_to_the_smallest_scale) {
  // floor(log2 1e-40) = -133, X = -141, clamped to -127 (code 0). The element is
  // 1e-40 * 2^127 = 0.0170 -> 0.017578125 = 0b0'0001'001.
  std::vector<float8_e4m3fn> q;
  EXPECT_EQ(scale_code(mxfp8_e4m3, {1e-40f, -1e-45f}, &q), 0u);
  EXPECT_EQ(q[0].bits(), 0x09);
  EXPECT_EQ(q[1].bits(), 0x80);  // 2^-149 * 2^127 = 2^-22 rounds to -0
  EXPECT_EQ(
      scale_code(BlockScaling<float8_e4m3fn, float8_e8m0fnu>{.rule = ScaleRule::ceil}, {1e-40f}),
      0u);
}

TEST(Scaling, partial_last_block) {
  // n = 33: block 1 is the single element 1.0 (X = -8, code 119, element 256).
  std::vector<float> x(33, 448.0f);
  x[32] = 1.0f;
  std::vector<float8_e4m3fn> q(33);
  std::vector<float8_e8m0fnu> sc(2);
  quantize(mxfp8_e4m3, x, q, sc);
  EXPECT_EQ(sc[0].bits(), 127u);
  EXPECT_EQ(sc[1].bits(), 119u);
  EXPECT_EQ(q[32].bits(), 0x78);
  std::vector<float> y(33);
  dequantize(mxfp8_e4m3, q, sc, y);
  EXPECT_EQ(y[32], 1.0f);
  EXPECT_EQ(y[0], 448.0f);

  // n = 47 with MXFP4: block 1 holds 15 elements of amax 0.75 (X = -1 - 2 = -3, code 124).
  std::vector<float> x4(47, 6.0f);
  for (int i = 32; i < 47; ++i) x4[i] = i % 2 ? -0.75f : 0.25f;
  std::vector<float4_e2m1fn> q4(47);
  std::vector<float8_e8m0fnu> sc4(2);
  quantize(mxfp4, x4, q4, sc4);
  EXPECT_EQ(sc4[1].bits(), 124u);
  EXPECT_EQ(q4[33].bits(), 0xF);  // -0.75 * 8 = -6
  EXPECT_EQ(q4[32].bits(), 0x4);  // 0.25 * 8 = 2
}

// --- golden values: NVFP4 -----------------------------------------------------

TEST(Scaling, nvfp4_golden_unit_tensor_scale) {
  // amax_t = 6 * 448 = 2688: s_enc = 2688 / 2688 = 1.
  std::vector<float> x(32, 0.0f);
  x[0] = 2688.0f;
  x[1] = -1344.0f;
  x[2] = 448.0f;
  x[16] = 6.0f;
  x[17] = 3.0f;
  x[18] = -1.5f;
  x[19] = 0.5f;
  std::vector<float4_e2m1fn> q(32);
  std::vector<float8_e4m3fn> sc(2);
  float s_enc = 0;
  quantize(nvfp4, x, q, sc, &s_enc);
  EXPECT_EQ(s_enc, 1.0f);
  // Block 0: 2688 / 6 = 448 -> E4M3 0x7E, elements x / 448.
  EXPECT_EQ(sc[0].bits(), 0x7E);
  EXPECT_EQ(q[0].bits(), 0x7);  // 6
  EXPECT_EQ(q[1].bits(), 0xD);  // -3
  EXPECT_EQ(q[2].bits(), 0x2);  // 1
  // Block 1: 6 / 6 = 1 -> 0x38, elements x / 1.
  EXPECT_EQ(sc[1].bits(), 0x38);
  EXPECT_EQ(q[16].bits(), 0x7);
  EXPECT_EQ(q[17].bits(), 0x5);
  EXPECT_EQ(q[18].bits(), 0xB);
  EXPECT_EQ(q[19].bits(), 0x1);
  std::vector<float> y(32);
  dequantize(nvfp4, q, sc, y, s_enc);
  for (int i : {0, 1, 2, 16, 17, 18, 19}) EXPECT_EQ(y[i], x[i]) << i;
}

TEST(Scaling, nvfp4_golden_large_tensor_scale) {
  // amax_t = 1: s_enc = 2688. s_dec = 1 / 6 = 0.16666667f, times 2688 = 448.0000134
  // rounds to 448.0f: scale 0x7E, k = 2688 / 448 = 6.
  std::vector<float> x = {1.0f, 0.5f, -0.25f, 0.0f};
  std::vector<float4_e2m1fn> q(4);
  std::vector<float8_e4m3fn> sc(1);
  float s_enc = 0;
  quantize(nvfp4, x, q, sc, &s_enc);
  EXPECT_EQ(s_enc, 2688.0f);
  EXPECT_EQ(sc[0].bits(), 0x7E);
  EXPECT_EQ(q[0].bits(), 0x7);
  EXPECT_EQ(q[1].bits(), 0x5);
  EXPECT_EQ(q[2].bits(), 0xB);
  std::vector<float> y(4);
  dequantize(nvfp4, q, sc, y, s_enc);  // 6 * 448 / 2688 = 1, exactly
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], x[i]) << i;
}

TEST(Scaling, nvfp4_scale_rounding_saturation_and_zero_scale) {
  // Block 0 fixes s_enc = 1. Block 1, amax 5: 5 / 6 = 0.8333 rounds to E4M3
  // 0.8125 (0x35), and 5 / 0.8125 = 6.15 saturates to 6. Block 2, amax 1e-4:
  // 1e-4 / 6 is below half of E4M3's smallest subnormal 2^-9, so the scale is
  // 0 and the elements are zeros with their signs.
  std::vector<float> x(48, 0.0f);
  x[0] = 2688.0f;
  x[16] = 5.0f;
  x[32] = 1e-4f;
  x[33] = -1e-4f;
  std::vector<float4_e2m1fn> q(48);
  std::vector<float8_e4m3fn> sc(3);
  float s_enc = 0;
  quantize(nvfp4, x, q, sc, &s_enc);
  EXPECT_EQ(s_enc, 1.0f);
  EXPECT_EQ(sc[1].bits(), 0x35);
  EXPECT_EQ(q[16].bits(), 0x7);
  EXPECT_EQ(sc[2].bits(), 0x00);
  EXPECT_EQ(q[32].bits(), 0x0);
  EXPECT_EQ(q[33].bits(), 0x8);
  std::vector<float> y(48);
  dequantize(nvfp4, q, sc, y, s_enc);
  EXPECT_EQ(y[16], 4.875f);  // 6 * 0.8125
  EXPECT_EQ(y[32], 0.0f);
}

TEST(Scaling, nvfp4_follows_the_documented_operation_order) {
  // amax_t = 888: s_enc = 2688 / 888 = 3.02702713f. Block 1, amax 41.625:
  // (41.625 / 6) * s_enc = 6.9375 * 3.02702713 rounds to exactly 21.0f, an E4M3
  // tie between 20 (0x5A) and 22 (0x5B) that goes to even 20. Transformer
  // Engine's order, 41.625 * (s_enc * (1/6)), gives 21.0000019f and 22.
  std::vector<float> x(32, 0.0f);
  x[0] = 888.0f;
  x[16] = 41.625f;
  std::vector<float4_e2m1fn> q(32);
  std::vector<float8_e4m3fn> sc(2);
  float s_enc = 0;
  quantize(nvfp4, x, q, sc, &s_enc);
  EXPECT_EQ(s_enc, 2688.0f / 888.0f);
  EXPECT_EQ(sc[1].bits(), 0x5A);
  EXPECT_EQ(q[16].bits(), 0x7);  // 41.625 * (s_enc / 20) = 6.3 saturates to 6
}

TEST(Scaling, nvfp4_tensor_scale_edge_cases) {
  std::vector<float4_e2m1fn> q(3);
  std::vector<float8_e4m3fn> sc(1);
  float s_enc = 0;
  // All zero: amax_t = 0 gives s_enc = 1; the scale is E4M3 zero.
  quantize(nvfp4, std::vector<float>{0.0f, -0.0f, 0.0f}, q, sc, &s_enc);
  EXPECT_EQ(s_enc, 1.0f);
  EXPECT_EQ(sc[0].bits(), 0x00);
  EXPECT_EQ(q[1].bits(), 0x8);
  // Subnormal amax_t: 2688 / 1e-40 overflows, s_enc = FLT_MAX. s_dec = 1e-40 / 6 =
  // 1.6667e-41, times FLT_MAX 5.67e-3 -> E4M3 3 * 2^-9 (0x03); k = FLT_MAX / 0.00586
  // overflows and is clamped to FLT_MAX, so the zeros stay zeros (not 0 * inf = NaN).
  quantize(nvfp4, std::vector<float>{1e-40f, 0.0f, -0.0f}, q, sc, &s_enc);
  EXPECT_EQ(s_enc, std::numeric_limits<float>::max());
  EXPECT_EQ(sc[0].bits(), 0x03);
  EXPECT_EQ(q[0].bits(), 0x0);  // 1e-40 * FLT_MAX = 0.034 rounds to 0
  EXPECT_EQ(q[1].bits(), 0x0);
  EXPECT_EQ(q[2].bits(), 0x8);
  // A NaN: amax_t is NaN, s_enc = 1; its block's scale is E4M3 NaN (0x7F), elements 0;
  // the other block (amax 6) is as usual.
  std::vector<float> x(32, 1.0f);
  x[3] = kNaN;
  x[16] = 6.0f;
  std::vector<float4_e2m1fn> q2(32);
  std::vector<float8_e4m3fn> sc2(2);
  quantize(nvfp4, x, q2, sc2, &s_enc);
  EXPECT_EQ(s_enc, 1.0f);
  EXPECT_EQ(sc2[0].bits(), 0x7F);
  EXPECT_EQ(q2[0].bits(), 0x0);
  EXPECT_EQ(sc2[1].bits(), 0x38);
  EXPECT_EQ(q2[16].bits(), 0x7);
  std::vector<float> y(32);
  dequantize(nvfp4, q2, sc2, y, s_enc);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[16], 6.0f);
}

// --- per-tensor scaling ---------------------------------------------------------

TEST(TensorScaling, amax) {
  EXPECT_EQ(amax(std::vector<float>{}), 0.0f);
  EXPECT_EQ(amax(std::vector<float>{1.0f, -3.0f, 2.0f}), 3.0f);
  EXPECT_EQ(amax(std::vector<float>{1.0f, -kInf}), kInf);
  EXPECT_TRUE(std::isnan(amax(std::vector<float>{kInf, kNaN, 1.0f})));
  EXPECT_EQ(amax(std::vector<float>{-1e-45f}), 1e-45f);
}

TEST(TensorScaling, e4m3_current_scaling_golden) {
  // amax 2: scale = 448 / 2 = 224; 1 -> 224 (0b0'1110'110), -2 -> -448, 0.5 -> 112.
  const std::vector<float> x = {1.0f, -2.0f, 0.5f};
  std::vector<float8_e4m3fn> q(3);
  const TensorScaleResult r = quantize(fp8_e4m3_tensor, x, q);
  EXPECT_EQ(r.scale, 224.0f);
  EXPECT_EQ(r.amax, 2.0f);
  EXPECT_EQ(q[0].bits(), 0x76);
  EXPECT_EQ(q[1].bits(), 0xFE);
  EXPECT_EQ(q[2].bits(), 0x6E);
  std::vector<float> y(3);
  dequantize(fp8_e4m3_tensor, q, r.scale, y);
  EXPECT_EQ(y, x);
  // margin 1 halves the scale: 112.
  const auto with_margin = TensorScaling<float8_e4m3fn>{.margin = 1};
  EXPECT_EQ(quantize(with_margin, x, q).scale, 112.0f);
  EXPECT_EQ(q[1].bits(), 0xF6);  // -224
}

TEST(TensorScaling, special_amax_gives_unit_scale) {
  std::vector<float8_e4m3fn> q(3);
  EXPECT_EQ(quantize(fp8_e4m3_tensor, std::vector<float>{0.0f, -0.0f, 0.0f}, q).scale, 1.0f);
  EXPECT_EQ(q[1].bits(), 0x80);
  // NaN: scale 1, the NaN stays NaN (E4M3 has one), the rest is x * 1.
  EXPECT_EQ(quantize(fp8_e4m3_tensor, std::vector<float>{kNaN, 2.0f, 1.0f}, q).scale, 1.0f);
  EXPECT_EQ(q[0].bits() & 0x7F, 0x7F);
  EXPECT_EQ(q[1].bits(), 0x40);
  // Infinity: scale 1, saturated to 448.
  EXPECT_EQ(quantize(fp8_e4m3_tensor, std::vector<float>{kInf, 2.0f, 1.0f}, q).scale, 1.0f);
  EXPECT_EQ(q[0].bits(), 0x7E);
  // E5M2 at its max: 57344 / 57344 = 1.
  EXPECT_EQ(tensor_scale_for(fp8_e5m2_tensor, 57344.0f), 1.0f);
  // 448 / 1e-40 overflows: FLT_MAX. 448 * 2^-200 underflows: the smallest float.
  EXPECT_EQ(tensor_scale_for(fp8_e4m3_tensor, 1e-40f), std::numeric_limits<float>::max());
  EXPECT_EQ(tensor_scale_for(TensorScaling<float8_e4m3fn>{.margin = 200}, 1.0f),
            std::numeric_limits<float>::denorm_min());
}

TEST(TensorScaling, delayed_scaling_reads_the_history) {
  const std::vector<float> x = {8.0f, 1.0f};
  const std::vector<float> history = {1.0f, 4.0f, 2.0f};  // history[0] is the most recent
  std::vector<float8_e4m3fn> q(2);
  const auto from_max = TensorScaling<float8_e4m3fn>{.amax = AmaxSource::history_max};
  const TensorScaleResult a = quantize(from_max, x, q, history);
  EXPECT_EQ(a.scale, 112.0f);    // 448 / 4
  EXPECT_EQ(a.amax, 8.0f);       // the tensor's own amax, for the next history entry
  EXPECT_EQ(q[0].bits(), 0x7E);  // 8 * 112 = 896 saturates to 448
  const auto recent = TensorScaling<float8_e4m3fn>{.amax = AmaxSource::history_most_recent};
  EXPECT_EQ(quantize(recent, x, q, history).scale, 448.0f);
  EXPECT_THROW(quantize(recent, x, q), std::invalid_argument);
  std::vector<float8_e4m3fn> short_q(1);
  EXPECT_THROW(quantize(fp8_e4m3_tensor, x, short_q), std::invalid_argument);
}

template <class Elem>
void tensor_matches_reference() {
  for (const SimdTarget& target : simd_targets()) {
    ScopedSimdTarget pin(target.id);
    for (std::uint32_t seed = 0; seed < 20; ++seed) {
      for (std::size_t n : {1u, 7u, 33u, 1024u, 1500u}) {
        const auto x = seed % 2 ? gaussian(n, seed) : adversarial(n, 16, finfo<Elem>::max, seed);
        for (int margin : {0, 1, 3, -2}) {
          const auto s = TensorScaling<Elem>{.margin = margin};
          std::vector<Elem> q(n);
          const TensorScaleResult r = quantize(s, x, q);
          const auto a = lplab::testing::ref_amax(x);
          const float expect_scale = lplab::testing::ref_tensor_scale<Elem>(
              margin, a.nan ? std::numeric_limits<double>::quiet_NaN() : a.amax);
          ASSERT_EQ(bits(r.scale), bits(expect_scale)) << "seed " << seed << ", n " << n;
          const auto expect = lplab::testing::ref_tensor_quantize<Elem>(x, expect_scale);
          for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(q[i].bits(), expect[i].bits()) << i;
          std::vector<float> y(n);
          dequantize(s, q, r.scale, y);
          for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(bits(y[i]), bits(static_cast<float>(expect[i]) / expect_scale)) << i;
        }
      }
    }
  }
}

TEST(TensorScaling, fast_path_matches_reference_e4m3) { tensor_matches_reference<float8_e4m3fn>(); }
TEST(TensorScaling, fast_path_matches_reference_e5m2) { tensor_matches_reference<float8_e5m2>(); }
TEST(TensorScaling, fast_path_matches_reference_e2m1) { tensor_matches_reference<float4_e2m1fn>(); }

// --- delayed scaling (Transformer Engine's DelayedScaling) -------------------

TEST(DelayedScaling, each_step_is_scaled_by_the_steps_before_it) {
  DelayedScaler<float8_e4m3fn> s(DelayedScaling<float8_e4m3fn>{.history_len = 2});
  std::vector<float8_e4m3fn> q(2);
  auto step = [&](float a, float b) {
    const std::vector<float> x = {a, b};
    return s.step(x, q);
  };
  // Step 0 at TE's initial scale 1: 2 is exact in E4M3.
  TensorScaleResult r = step(2.0f, -0.5f);
  EXPECT_EQ(r.scale, 1.0f);
  EXPECT_EQ(r.amax, 2.0f);
  EXPECT_EQ(q[0].bits(), 0x40);
  EXPECT_EQ(s.scale(), 224.0f);  // 448 / 2
  // Step 1's amax doubled: scaled by the old 224, 4 * 224 = 896 saturates to 448.
  r = step(4.0f, 1.0f);
  EXPECT_EQ(r.scale, 224.0f);
  EXPECT_EQ(q[0].bits(), 0x7E);
  EXPECT_EQ(s.scale(), 112.0f);  // max(2, 4)
  // Step 2: the history holds (4, 1); then (1, 1) after step 3 drops the 4.
  r = step(1.0f, 0.0f);
  EXPECT_EQ(r.scale, 112.0f);
  EXPECT_EQ(s.scale(), 112.0f);
  step(1.0f, 0.0f);
  EXPECT_EQ(s.scale(), 448.0f);
  // An all-zero step leaves the history's max, and a NaN keeps the old scale.
  step(0.0f, 0.0f);
  EXPECT_EQ(s.scale(), 448.0f);
  step(std::numeric_limits<float>::quiet_NaN(), 1.0f);
  EXPECT_EQ(s.scale(), 448.0f);

  // most_recent follows the last step alone; the margin halves the scale.
  DelayedScaler<float8_e5m2> recent(DelayedScaling<float8_e5m2>{.margin = 1, .amax = AmaxSource::history_most_recent});
  std::vector<float8_e5m2> q5(1);
  recent.step(std::vector<float>{1024.0f}, q5);
  EXPECT_EQ(recent.scale(), 28.0f);  // (57344 / 1024) / 2
  recent.step(std::vector<float>{0.25f}, q5);
  EXPECT_EQ(recent.scale(), 114688.0f);  // (57344 / 0.25) / 2

  EXPECT_THROW(DelayedScaler<float8_e4m3fn>(DelayedScaling<float8_e4m3fn>{.history_len = 0}), std::invalid_argument);
  EXPECT_THROW(DelayedScaler<float8_e4m3fn>(DelayedScaling<float8_e4m3fn>{.amax = AmaxSource::current}),
               std::invalid_argument);
}

// --- fine-grained tiles (DeepSeek-V3) ---------------------------------------

TEST(TileScaling, deepseek_golden_values) {
  // One 1 x 128 tile of 1..128: factor 448 / 128 = 3.5, scale 128 / 448 = 2/7.
  std::vector<float> x(128);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
  std::vector<float8_e4m3fn> q(128);
  std::vector<float> sc(tile_scales_needed(deepseek_activations, 128, 128)), y(128);
  ASSERT_EQ(sc.size(), 1u);
  quantize(deepseek_activations, x, 128, q, sc);
  EXPECT_EQ(sc[0], 2.0f / 7.0f);
  EXPECT_EQ(static_cast<float>(q[0]), 3.5f);
  EXPECT_EQ(static_cast<float>(q[127]), 448.0f);
  // 3 * 3.5 = 10.5 is a tie between E4M3's 10 and 11 (spacing 1 in [8, 16)): to even, 10.
  EXPECT_EQ(static_cast<float>(q[2]), 10.0f);
  dequantize(deepseek_activations, q, 128, sc, y);
  EXPECT_EQ(y[2], 10.0f * (2.0f / 7.0f));
  // A tile below the floor: a = 1e-4f, so 1e-6 * (448 / 1e-4f) = 4.48 becomes 4.5.
  const std::vector<float> tiny(128, 1e-6f);
  quantize(deepseek_activations, tiny, 128, q, sc);
  EXPECT_EQ(sc[0], 1e-4f / 448.0f);
  EXPECT_EQ(static_cast<float>(q[0]), 4.5f);
  // Weights: 128 x 128 blocks; a 130 x 260 matrix has 2 x 3 of them.
  EXPECT_EQ(tile_scales_needed(deepseek_weights, 130 * 260, 260), 6u);
  EXPECT_EQ(tile_scales_needed(deepseek_activations, 130 * 260, 260), 130u * 3);
  EXPECT_EQ(tile_scales_needed(deepseek_activations, 0, 260), 0u);
}

TEST(TileScaling, matches_the_reference_on_every_shape) {
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const SimdTarget& target : simd_targets()) {
    ScopedSimdTarget pin(target.id);
    for (const auto& [tr, tc] : {std::pair{1, 128}, std::pair{128, 128}, std::pair{2, 3}, std::pair{1, 1}}) {
      const TileScaling<float8_e4m3fn> s{.tile_rows = tr, .tile_cols = tc};
      for (std::size_t cols : {1u, 5u, 128u, 300u}) {
        for (std::size_t n : {1u, 7u, 640u, 3001u}) {
          std::vector<float> x(n);
          // Tiles of very different magnitudes, a zero tile's worth, specials.
          for (std::size_t i = 0; i < n; ++i) x[i] = std::ldexp(normal(gen), static_cast<int>(i / 97 % 40) - 20);
          if (n > 100) x[99] = kNaN, x[n / 2] = kInf, x[n - 2] = 0;
          std::vector<float8_e4m3fn> q(n);
          std::vector<float> sc(tile_scales_needed(s, n, cols)), y(n);
          quantize(s, x, cols, q, sc);
          dequantize(s, q, cols, sc, y);
          const auto ref = lplab::testing::ref_tile_quantize(s, x, cols);
          for (std::size_t t = 0; t < sc.size(); ++t) ASSERT_EQ(bits(sc[t]), bits(ref.scales[t])) << t;
          for (std::size_t i = 0; i < n; ++i) {
            ASSERT_EQ(q[i].bits(), ref.elems[i].bits()) << i << " of " << n << ", cols " << cols;
            ASSERT_EQ(bits(y[i]), bits(ref.y[i])) << i;
          }
        }
      }
    }
  }
  std::vector<float> x(4);
  std::vector<float8_e4m3fn> q(4);
  std::vector<float> sc(1), wrong(2);
  EXPECT_THROW(quantize(deepseek_activations, x, 0, q, sc), std::invalid_argument);
  EXPECT_THROW(quantize(deepseek_activations, x, 4, q, wrong), std::invalid_argument);
  EXPECT_THROW(quantize(TileScaling<float8_e4m3fn>{.tile_rows = 0}, x, 4, q, sc), std::invalid_argument);
}

// The portable rule (scale_rules.h, no libm) against the formula written
// with libm's ldexp, over amax values of every binade and margins whose
// result overflows, is subnormal or underflows.
TEST(TensorScaling, portable_rule_matches_ldexp) {
  const auto reference = [](float amax, int margin) {
    if (amax == 0.0f || !std::isfinite(amax)) return 1.0f;
    const float scale = std::ldexp(static_cast<float>(finfo<float8_e4m3fn>::max) / amax, -margin);
    if (std::isinf(scale)) return std::numeric_limits<float>::max();
    if (scale == 0.0f) return std::numeric_limits<float>::denorm_min();
    return scale;
  };
  std::uint64_t bad = 0, n = 0;
  for (std::uint32_t e = 0; e < 256; ++e)
    for (std::uint32_t m : {0u, 1u, 0x155555u, 0x7FFFFFu})
      for (int margin : {-500, -300, -140, -100, -2, 0, 1, 7, 100, 140, 150, 300, 500}) {
        const float amax = std::bit_cast<float>(e << 23 | m);
        ++n;
        bad += std::bit_cast<std::uint32_t>(scale_rules::tensor_scale<float8_e4m3fn>(amax, margin)) !=
               std::bit_cast<std::uint32_t>(reference(amax, margin));
      }
  EXPECT_EQ(bad, 0u) << "of " << n;
}

}  // namespace
}  // namespace lplab::kernels
