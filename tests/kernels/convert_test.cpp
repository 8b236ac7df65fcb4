// Bulk conversion (lplab/kernels/convert.h) against the scalar core, on every
// SIMD target this machine runs: one test body, run once per target.
//
// Quick set here; tests/kernels/convert_sweep_test.cpp runs all 2^32 float
// inputs. Each comparison is bit for bit, flag counts included.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "lplab/kernels.h"
#include "support/inputs.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

using kernels::ConvertOptions;
using kernels::FlagCounts;

constexpr Round kRounds[] = {Round::nearest_even, Round::nearest_away, Round::toward_zero,
                             Round::upward, Round::downward, Round::stochastic};
constexpr Overflow kOverflows[] = {Overflow::ieee, Overflow::saturate};

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

template <class T>
std::uint64_t code(T v) {
  if constexpr (std::is_same_v<T, float>) return detail::bit_cast<std::uint32_t>(v);
  else return v.bits();
}

// The quick float inputs (every top-16-bit pattern with the tie-probing low
// halves), in an order that mixes classes within every vector. Under the
// sanitizers, which look for memory and undefined-behaviour errors rather
// than wrong values (the release build checks every value of the set), the
// top-16-bit patterns whose last three bits are zero: every sign and exponent,
// 16 leading mantissa patterns each, every low half -- an eighth of the set.
#if defined(LPLAB_SANITIZED)
constexpr std::uint64_t kTopStride = 8;
#else
constexpr std::uint64_t kTopStride = 1;
#endif
const std::vector<float>& quick_inputs() {
  static const std::vector<float> v = [] {
    std::vector<float> out;
    out.reserve(QuickFloats::count / kTopStride);
    for (std::uint64_t i = 0; i < QuickFloats::count; ++i)
      if ((i / QuickFloats::kPer) % kTopStride == 0) out.push_back(detail::bit_cast<float>(QuickFloats::bits(i)));
    return out;
  }();
  return v;
}

// Calls body(target_name) once per SIMD target, with that target forced.
// (Not a template: the format-pair tests call it 182 times.)
void for_each_target(const std::function<void(const std::string&)>& body) {
  const auto targets = kernels::simd_targets();
  ASSERT_FALSE(targets.empty());
  for (const kernels::SimdTarget& t : targets) {
    SCOPED_TRACE("SIMD target " + t.name);
    kernels::ScopedSimdTarget scope(t.id);
    body(t.name);
  }
}

template <class T>
std::vector<std::uint64_t> codes_of(const std::vector<T>& v) {
  std::vector<std::uint64_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = code(v[i]);
  return out;
}

// Names the first difference of out from ref (codes of the input in).
void report_difference(const std::vector<std::uint64_t>& in, const std::vector<std::uint64_t>& ref,
                       const std::vector<std::uint64_t>& out, const std::string& what) {
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (ref[i] != out[i]) {
      if (bad++ == 0) first = i;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << ref.size() << " differ; first: input "
                     << hex(in[first]) << " scalar " << hex(ref[first]) << " bulk " << hex(out[first]);
}

// Asserts out == ref element by element, naming the first difference.
template <class From, class To>
void expect_same(const std::vector<From>& in, const std::vector<To>& ref, const std::vector<To>& out,
                 const std::string& what) {
  ASSERT_EQ(ref.size(), out.size());
  // Codes are the whole object (no padding): equal bytes are equal codes.
  if (std::memcmp(ref.data(), out.data(), ref.size() * sizeof(To)) == 0) return;
  report_difference(codes_of(in), codes_of(ref), codes_of(out), what);
}

void expect_counts(const FlagCounts& got, const FlagCounts& want, const std::string& what) {
  EXPECT_EQ(got, want) << what;
}

template <class T>
class BulkConvert : public ::testing::Test {};
TYPED_TEST_SUITE(BulkConvert, SmallFormats, FormatNames);

TYPED_TEST(BulkConvert, float_to_format_every_policy_with_flags) {
  using T = TypeParam;
  const std::vector<float>& in = quick_inputs();
  for (Round r : kRounds) {
    for (Overflow o : kOverflows) {
      FlagCounts ref_counts;
      std::vector<T> ref(in.size());
      kernels::convert_reference(std::span(in), std::span(ref),
                                 ConvertOptions{.round = r, .overflow = o, .seed = 42, .stats = &ref_counts});
      // A wrong kernel would have to match these, too: the quick set makes
      // every flag fire for every format under every policy.
      EXPECT_GT(ref_counts.inexact, 0u);
      EXPECT_GT(ref_counts.underflow + ref_counts.invalid, 0u);
      for_each_target([&](const std::string& target) {
        const std::string what = target + " " + round_name(r) + " " + overflow_name(o);
        std::vector<T> out(in.size());
        kernels::convert(std::span(in), std::span(out), r, o, 42);
        expect_same(in, ref, out, what);
        FlagCounts counts;
        std::vector<T> out2(in.size());
        kernels::convert(std::span(in), std::span(out2),
                         ConvertOptions{.round = r, .overflow = o, .seed = 42, .stats = &counts});
        expect_same(in, ref, out2, what + " with stats");
        EXPECT_EQ(counts.inexact, ref_counts.inexact) << what;
        EXPECT_EQ(counts.underflow, ref_counts.underflow) << what;
        EXPECT_EQ(counts.overflow, ref_counts.overflow) << what;
        EXPECT_EQ(counts.invalid, ref_counts.invalid) << what;
        // An unaligned slice that starts at element 3 and ends off a vector
        // boundary converts exactly as inside the whole.
        const std::size_t n = in.size() - 8;
        std::vector<T> part(n);
        kernels::convert(std::span(in).subspan(3, n), std::span(part),
                         ConvertOptions{.round = r, .overflow = o, .seed = 42, .first_index = 3});
        std::vector<T> ref_part(ref.begin() + 3, ref.begin() + 3 + static_cast<std::ptrdiff_t>(n));
        expect_same(std::vector<float>(in.begin() + 3, in.begin() + 3 + static_cast<std::ptrdiff_t>(n)),
                    ref_part, part, what + " slice");
      });
    }
  }
}

TYPED_TEST(BulkConvert, format_to_float_every_code) {
  using T = TypeParam;
  // Every code, then (formats of at most a byte) 4,103 more whose pattern
  // moves one code every 64: each code at every lane of the vector loops,
  // in pairs of any target's widest vectors and in the tail.
  const std::uint64_t count = code_count<T>();
  std::vector<T> in(count + (count <= 256 ? 64 * 64 + 7 : 0));
  for (std::uint64_t i = 0; i < in.size(); ++i) in[i] = T::from_bits((i < count ? i : i + i / 64) % count);
  std::vector<float> ref(in.size());
  kernels::convert_reference(std::span<const T>(in), std::span(ref), ConvertOptions{});
  for_each_target([&](const std::string& target) {
    std::vector<float> out(in.size());
    kernels::convert(std::span<const T>(in), std::span(out));
    expect_same(in, ref, out, target);
  });
}

// Every code of the source format into every format, under every policy.
// The reference rounds the source's values as floats: every value of a
// format of at most 16 bits is a float (decoding is exact; a test above
// proves the bulk decode equal to the scalar one), so rounding that float
// is rounding the value itself. The scalar float -> T reference is the one
// the float inputs above are checked against, so this file instantiates it
// once per format rather than once per pair of formats (a per-pair
// reference was half of this file's compile time).
template <class From, class... To>
void format_to_formats(FormatList<To...>) {
  std::vector<From> in;
  for (std::uint64_t c = 0; c < code_count<From>(); ++c)
    if (sanitized_sweep_visits<From>(c)) in.push_back(From::from_bits(c));
  std::vector<float> values(in.size());
  kernels::convert_reference(std::span<const From>(in), std::span(values), ConvertOptions{});
  auto one = [&]<class T>() {
    for (Round r : kRounds) {
      for (Overflow o : kOverflows) {
        FlagCounts ref_counts;
        std::vector<T> ref(in.size());
        kernels::convert_reference(std::span<const float>(values), std::span(ref),
                                   ConvertOptions{.round = r, .overflow = o, .seed = 9, .stats = &ref_counts});
        for_each_target([&](const std::string& target) {
          FlagCounts counts;
          std::vector<T> out(in.size());
          kernels::convert(std::span<const From>(in), std::span(out),
                           ConvertOptions{.round = r, .overflow = o, .seed = 9, .stats = &counts});
          const std::string what = target + " -> " + T::descriptor.name.c_str() + " " + round_name(r);
          expect_same(in, ref, out, what);
          expect_counts(counts, ref_counts, what);
          if constexpr (std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>) {
            // Without flags, FP8/FP6/FP4 into 16 bits takes the widening
            // kernels (Widen16): every code at every lane, as above (where
            // the result depends on the code's index, stochastic rounding of
            // an inexact value, each code at its own index only).
            const bool by_index = r == Round::stochastic;
            std::vector<From> many(in.size() + (in.size() <= 256 && !by_index ? 64 * 64 + 7 : 0));
            std::vector<T> many_ref(many.size());
            for (std::size_t i = 0; i < many.size(); ++i) {
              const std::size_t c = (i < in.size() ? i : i + i / 64) % in.size();
              many[i] = in[c];
              many_ref[i] = ref[c];
            }
            std::vector<T> plain(many.size());
            kernels::convert(std::span<const From>(many), std::span(plain),
                             ConvertOptions{.round = r, .overflow = o, .seed = 9});
            expect_same(many, many_ref, plain, what + " (no flags)");
          }
        });
      }
    }
  };
  (one.template operator()<To>(), ...);
}

TYPED_TEST(BulkConvert, format_to_every_format_every_code) {
#if defined(LPLAB_SANITIZED)
  // (Under the sanitizers the floating-point targets: the integer kernels
  // run there in BulkConvertInteger below, every policy and code.)
  format_to_formats<TypeParam>(float_formats{});
#else
  format_to_formats<TypeParam>(all_formats{});
#endif
}

// The integer formats: float -> integer under every rounding and all three
// overflow policies (wrap included), flags counted, on every target, against
// the scalar core (which tests/formats/integer_test.cpp holds to the C
// library's rounding); every code to float; every code into every format.
template <class T>
class BulkConvertInteger : public ::testing::Test {};
TYPED_TEST_SUITE(BulkConvertInteger, IntegerFormats, FormatNames);

TYPED_TEST(BulkConvertInteger, float_to_integer_every_policy_with_flags) {
  using T = TypeParam;
  // The quick set, then every integer k in [-300, 300] with k +- 1/2 and
  // their neighbours (ties and the range's ends at every lane).
  std::vector<float> in = quick_inputs();
  for (int k = -300; k <= 300; ++k)
    for (float x : {static_cast<float>(k), k + 0.5f, std::nextafter(k + 0.5f, -1e9f), std::nextafter(k + 0.5f, 1e9f)})
      in.push_back(x);
  for (Round r : kRounds) {
    for (Overflow o : {Overflow::ieee, Overflow::saturate, Overflow::wrap}) {
      FlagCounts ref_counts;
      std::vector<T> ref(in.size());
      kernels::convert_reference(std::span<const float>(in), std::span(ref),
                                 ConvertOptions{.round = r, .overflow = o, .seed = 42, .stats = &ref_counts});
      EXPECT_GT(ref_counts.inexact, 0u);
      EXPECT_GT(ref_counts.underflow, 0u);
      EXPECT_GT(ref_counts.overflow, 0u);
      EXPECT_GT(ref_counts.invalid, 0u);
      for_each_target([&](const std::string& target) {
        const std::string what = target + " " + round_name(r) + " " + overflow_name(o);
        std::vector<T> out(in.size());
        kernels::convert(std::span<const float>(in), std::span(out), r, o, 42);
        expect_same(in, ref, out, what);
        FlagCounts counts;
        kernels::convert(std::span<const float>(in), std::span(out),
                         ConvertOptions{.round = r, .overflow = o, .seed = 42, .stats = &counts});
        expect_same(in, ref, out, what + " with stats");
        expect_counts(counts, ref_counts, what);
      });
    }
  }
}

TYPED_TEST(BulkConvertInteger, integer_to_float_every_code_every_lane) {
  using T = TypeParam;
  // Every code, with bits above the width set in half of them (ignored), at
  // every lane position of the vector loops and in the tail.
  const std::uint64_t count = code_count<T>();
  std::vector<T> in(64 * 64 + 7);
  for (std::uint64_t i = 0; i < in.size(); ++i) {
    typename T::storage_type raw{};
    const std::uint64_t c = (i + i / 64) % count | (i % 2 ? ~std::uint64_t{0} << finfo<T>::bits : 0);
    raw = static_cast<typename T::storage_type>(c);
    std::memcpy(&in[i], &raw, sizeof raw);
  }
  std::vector<float> ref(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) ref[i] = static_cast<float>(T::from_bits(in[i].bits()));
  for_each_target([&](const std::string& target) {
    std::vector<float> out(in.size());
    kernels::convert(std::span<const T>(in), std::span(out));
    expect_same(in, ref, out, target);
    std::vector<bfloat16> wide(in.size()), wide_ref(in.size());
    kernels::convert(std::span<const T>(in), std::span(wide));
    for (std::size_t i = 0; i < in.size(); ++i) wide_ref[i] = bfloat16(ref[i]);
    expect_same(in, wide_ref, wide, target + " to bfloat16");
  });
}

TYPED_TEST(BulkConvertInteger, integer_to_every_format_every_code) {
  format_to_formats<TypeParam>(all_formats{});
}

TEST(BulkConvert, forcing_a_target_runs_its_code) {
  for_each_target([](const std::string& target) {
    EXPECT_EQ(target, kernels::detail::dispatched_target_name());
    EXPECT_EQ(target, kernels::current_simd_target().name);
  });
  EXPECT_THROW(kernels::force_simd_target(3), std::invalid_argument);
}

TEST(BulkConvert, lengths_must_match_and_nothing_is_written_otherwise) {
  std::vector<float> in(10, 1.0f);
  std::vector<float16> out(9, float16::from_bits(0x1234));
  EXPECT_THROW(kernels::convert(std::span<const float>(in), std::span(out)), std::invalid_argument);
  for (float16 v : out) EXPECT_EQ(v.bits(), 0x1234);
  std::vector<float> empty_in;
  std::vector<float8_e4m3fn> empty_out;
  kernels::convert(std::span<const float>(empty_in), std::span(empty_out));  // no-op
}

TEST(BulkConvert, containers_convert_directly) {
  const std::vector<float> in = {1.0f, 448.0f, 464.0f, 465.0f, -1e-8f};
  std::vector<float8_e4m3fn> out(in.size());
  kernels::convert(in, out);
  EXPECT_EQ(out[0].bits(), 0x38);  // 1.0
  EXPECT_EQ(out[1].bits(), 0x7E);  // 448 = max
  EXPECT_EQ(out[2].bits(), 0x7E);  // 464: the tie below the NaN code rounds to even, 448
  EXPECT_EQ(out[3].bits(), 0x7F);  // 465 overflows: NaN (IEEE policy)
  EXPECT_EQ(out[4].bits(), 0x80);  // -0
  kernels::convert(in, out, Round::nearest_even, Overflow::saturate);
  EXPECT_EQ(out[3].bits(), 0x7E);
}

// Random bits depend only on (seed, index): thread counts, slices and the
// 2^32 boundary of the index change nothing.
TEST(BulkConvert, stochastic_is_independent_of_threads_and_chunking) {
  const std::size_t n = (std::size_t{3} << 18) + 17;
  std::vector<float> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = 1.0f + static_cast<float>(i % 977) * 0x1p-12f;
  std::vector<bfloat16> ref(n);
  kernels::convert_reference(std::span<const float>(in), std::span(ref),
                             ConvertOptions{.round = Round::stochastic, .seed = 5});
  for (unsigned threads : {1u, 2u, 3u, 0u}) {
    std::vector<bfloat16> out(n);
    kernels::convert(std::span<const float>(in), std::span(out),
                     ConvertOptions{.round = Round::stochastic, .seed = 5, .threads = threads});
    expect_same(in, ref, out, "threads " + std::to_string(threads));
  }
  std::vector<bfloat16> pieces(n);
  for (std::size_t b = 0; b < n; b += 1000) {
    const std::size_t len = std::min<std::size_t>(1000, n - b);
    kernels::convert(std::span<const float>(in).subspan(b, len), std::span(pieces).subspan(b, len),
                     ConvertOptions{.round = Round::stochastic, .seed = 5, .first_index = b});
  }
  expect_same(in, ref, pieces, "in pieces");
  // Across the 2^32 boundary of the index.
  const std::uint64_t base = (std::uint64_t{1} << 32) - 37;
  std::vector<float8_e5m2> a(100), b(100);
  const ConvertOptions o{.round = Round::stochastic, .seed = 11, .first_index = base};
  kernels::convert_reference(std::span<const float>(in).first(100), std::span(a), o);
  kernels::convert(std::span<const float>(in).first(100), std::span(b), o);
  expect_same(std::vector<float>(in.begin(), in.begin() + 100), a, b, "2^32 boundary");
  // A different seed gives different bits.
  std::vector<bfloat16> other(n);
  kernels::convert(std::span<const float>(in), std::span(other), Round::stochastic, Overflow::ieee, 6);
  EXPECT_NE(std::memcmp(other.data(), ref.data(), n * sizeof(bfloat16)), 0);
}

// 1.03125 lies a quarter of the way from 1 to 1.125 in E4M3: stochastic
// rounding must go up with probability 1/4, and the mean must be unbiased.
TEST(BulkConvert, stochastic_rounding_is_unbiased) {
  const std::size_t n = std::size_t{1} << 20;
  std::vector<float> in(n, 1.03125f);
  std::vector<float8_e4m3fn> out(n);
  kernels::convert(std::span<const float>(in), std::span(out), Round::stochastic, Overflow::ieee, 2024);
  std::size_t up = 0;
  for (auto v : out) {
    ASSERT_TRUE(v.bits() == 0x38 || v.bits() == 0x39) << hex(v.bits());
    up += v.bits() == 0x39;
  }
  const double p = static_cast<double>(up) / static_cast<double>(n);
  // Binomial sd = sqrt(0.25 * 0.75 / 2^20) = 4.2e-4: allow 5 sd.
  EXPECT_NEAR(p, 0.25, 0.0021);
}

// The traps the issue lists, each a golden value a wrong kernel gets wrong.
TEST(BulkConvert, known_traps_of_fast_conversions) {
  for_each_target([](const std::string&) {
    // Highway 1.0.3's DemoteTo(f32 -> bf16) truncates and makes low-payload
    // NaNs infinite; vcvtneps2bf16 flushes subnormal inputs.
    const std::vector<float> bf_in = {
        detail::bit_cast<float>(0x3F808000u),  // tie: 1 + 2^-8 -> even, 1.0
        detail::bit_cast<float>(0x3F818000u),  // tie -> even, up: 0x3F82
        detail::bit_cast<float>(0x3F808001u),  // above the tie: up
        detail::bit_cast<float>(0x7F800001u),  // sNaN, low payload: NaN, not infinity
        detail::bit_cast<float>(0x00010000u),  // subnormal 2^-133: kept
        detail::bit_cast<float>(0x80008000u),  // -2^-134, a tie: -0
        detail::bit_cast<float>(0x00018000u),  // 1.5 * 2^-133, a tie: up to 2^-132
    };
    std::vector<bfloat16> bf(bf_in.size());
    kernels::convert(bf_in, bf);
    const std::uint16_t bf_want[] = {0x3F80, 0x3F82, 0x3F81, 0x7FC0, 0x0001, 0x8000, 0x0002};
    for (std::size_t i = 0; i < bf.size(); ++i) EXPECT_EQ(bf[i].bits(), bf_want[i]) << i;

    // float -> fp16 -> e4m3 rounds twice: 1.0625 + 2^-20 is above the e4m3
    // tie 1.0625 but fp16 rounds it onto the tie, which then goes to even 1.0.
    std::vector<float> x = {1.0625f + 0x1p-20f, std::nanf(""), -std::nanf(""), 70000.0f, 131000.0f};
    std::vector<float8_e4m3fn> e4(x.size());
    kernels::convert(x, e4);
    EXPECT_EQ(e4[0].bits(), 0x39);  // 1.125
    EXPECT_EQ(e4[1].bits(), 0x7F);  // NaN stays NaN (not Inf, not 448)
    EXPECT_EQ(e4[2].bits(), 0xFF);
    // ... and through a fp16 tensor the two-step path is what the user asked for:
    std::vector<float16> h(x.size());
    kernels::convert(x, h);
    kernels::convert(h, e4);
    EXPECT_EQ(e4[0].bits(), 0x38);
    // E5M2 inputs in [65536, 131072) overflow: infinity under IEEE, 57344 saturated; never NaN.
    std::vector<float8_e5m2> e5(x.size());
    kernels::convert(x, e5);
    EXPECT_EQ(e5[1].bits() & 0x7F, 0x7E);  // NaN input: quiet NaN
    EXPECT_EQ(e5[3].bits(), 0x7C);
    EXPECT_EQ(e5[4].bits(), 0x7C);
    kernels::convert(x, e5, Round::nearest_even, Overflow::saturate);
    EXPECT_EQ(e5[3].bits(), 0x7B);
    EXPECT_EQ(e5[4].bits(), 0x7B);
  });
}

// Underflow is counted where the result is tiny and inexact (IEEE 754-2019
// 7.5, round.h step 4), on every target: exact subnormal results and zeros
// count no flag, inexact tiny ones count underflow and inexact, and a value
// that rounds up into the smallest normal counts inexact only. 67 copies: whole
// vectors on every target, and a scalar tail.
// want_each: the counts of one copy of `values`.
template <class T>
void expect_bulk_flags(const std::vector<float>& values, Round r, const FlagCounts& want_each,
                       const std::string& what) {
  std::vector<float> in;
  for (int k = 0; k < 67; ++k) in.insert(in.end(), values.begin(), values.end());
  const std::uint64_t n = 67;
  const FlagCounts want{want_each.inexact * n, want_each.underflow * n, want_each.overflow * n,
                        want_each.invalid * n};
  FlagCounts ref;
  std::vector<T> ref_out(in.size());
  kernels::convert_reference(std::span<const float>(in), std::span(ref_out),
                             ConvertOptions{.round = r, .seed = 3, .stats = &ref});
  expect_counts(ref, want, what + " scalar reference");
  for_each_target([&](const std::string& target) {
    FlagCounts got;
    std::vector<T> out(in.size());
    kernels::convert(std::span<const float>(in), std::span(out),
                     ConvertOptions{.round = r, .seed = 3, .stats = &got});
    expect_same(in, ref_out, out, target + " " + what);
    expect_counts(got, want, target + " " + what);
  });
}

TEST(BulkConvert, underflow_counts_tiny_inexact_results_only) {
  for (Round r : kRounds) {
    const std::string rn = round_name(r);
    // Exact subnormals and zeros: no flag.
    expect_bulk_flags<float16>({0x1p-24f, -0x1p-24f, 1023 * 0x1p-24f, 0.0f, -0.0f, 3 * 0x1p-20f}, r, {},
                               "float16 exact " + rn);
    expect_bulk_flags<float8_e4m3fn>({0x1p-9f, -7 * 0x1p-9f, 0.0f, 0x1p-7f}, r, {}, "e4m3 exact " + rn);
    expect_bulk_flags<float8_e5m2>({0x1p-16f, -3 * 0x1p-16f, -0.0f}, r, {}, "e5m2 exact " + rn);
    expect_bulk_flags<bfloat16>({0x1p-133f, -0x1p-126f + 0x1p-133f}, r, {}, "bf16 exact " + rn);
    expect_bulk_flags<float6_e2m3fn>({0.125f, -0.875f}, r, {}, "e2m3 exact " + rn);
    expect_bulk_flags<float4_e2m1fn>({0.5f, -0.5f, 0.0f}, r, {}, "e2m1 exact " + rn);
    expect_bulk_flags<float8_e8m0fnu>({0x1p-127f}, r, {}, "e8m0 exact " + rn);
    // Below E8M0's smallest value: rounded or clamped up to it, both flags.
    expect_bulk_flags<float8_e8m0fnu>({0x1p-128f, 0x1.8p-128f, 0x1p-149f}, r, {3, 3, 0, 0}, "e8m0 below " + rn);
  }
  // Tiny and inexact: 3 * 2^-26 (0.75 of float16's subnormal quantum), 1.25 * 2^-9 in E4M3.
  for (Round r : {Round::nearest_even, Round::toward_zero, Round::upward}) {
    expect_bulk_flags<float16>({3 * 0x1p-26f, -3 * 0x1p-26f}, r, {2, 2, 0, 0}, std::string("float16 tiny ") + round_name(r));
    expect_bulk_flags<float8_e4m3fn>({1.25f * 0x1p-9f}, r, {1, 1, 0, 0}, std::string("e4m3 tiny ") + round_name(r));
    expect_bulk_flags<float8_e5m2>({1.5f * 0x1p-16f}, r, {1, 1, 0, 0}, std::string("e5m2 tiny ") + round_name(r));
  }
  // Rounding up into the smallest normal from below: inexact, not tiny.
  expect_bulk_flags<float16>({0x1p-14f - 0x1p-26f}, Round::nearest_even, {1, 0, 0, 0}, "float16 up to normal");
  expect_bulk_flags<float16>({0x1p-14f - 0x1p-30f}, Round::upward, {1, 0, 0, 0}, "float16 upward to normal");
  expect_bulk_flags<float8_e4m3fn>({0x1p-6f - 0x1p-12f}, Round::nearest_even, {1, 0, 0, 0}, "e4m3 up to normal");

  // Decoding into float is exact: every code of a format, no underflow (and
  // nothing else, under the IEEE policy).
  for_each_target([](const std::string& target) {
    auto decode_all = [&]<class T>() {
      std::vector<T> in(code_count<T>());
      for (std::uint64_t c = 0; c < in.size(); ++c) in[c] = T::from_bits(c);
      std::vector<float> out(in.size());
      FlagCounts got;
      kernels::convert(std::span<const T>(in), std::span(out), ConvertOptions{.stats = &got});
      expect_counts(got, FlagCounts{}, target + " decode " + T::descriptor.name.c_str());
    };
    decode_all.template operator()<float16>();
    decode_all.template operator()<bfloat16>();
    decode_all.template operator()<float8_e4m3fn>();
    decode_all.template operator()<float8_e5m2>();
    decode_all.template operator()<float8_e8m0fnu>();
    // Exact subnormals between formats: float16's 2^-16 multiples into E5M2.
    std::vector<float16> h;
    for (int k = 0; k < 67; ++k)
      for (std::uint16_t c : {0x0100, 0x0200, 0x0300, 0x8100, 0x0000}) h.push_back(float16::from_bits(c));
    std::vector<float8_e5m2> e5(h.size());
    FlagCounts got;
    kernels::convert(std::span<const float16>(h), std::span(e5), ConvertOptions{.stats = &got});
    expect_counts(got, FlagCounts{}, target + " float16 -> e5m2 exact subnormals");
    EXPECT_EQ(e5[0].bits(), 0x01);
    EXPECT_EQ(e5[3].bits(), 0x81);
  });
}

// float -> bfloat16 to nearest-even under IEEE overflow without flags, by
// AVX-512 BF16's vcvtne2ps2bf16 where the CPU has it (cpu_extensions.cpp;
// it reads subnormal inputs as zeros, which the kernel mends), and with the
// extensions forbidden: both against the scalar core on the quick inputs,
// a subnormal at every lane of a 32-lane block among normals, NaNs with
// payloads, and lengths and offsets that leave tails.
TEST(BulkConvert, bfloat16_with_and_without_extensions) {
  std::vector<float> in = quick_inputs();
  for (std::size_t lane = 0; lane < 32; ++lane)
    for (float tiny : {0x1.8p-140f, -0x1.fffffcp-127f, 0x1p-149f, 0x1.00018p-133f}) {
      std::vector<float> block(32, 1.0f + static_cast<float>(lane) * 0x1p-10f);
      block[lane] = tiny;
      in.insert(in.end(), block.begin(), block.end());
    }
  for (std::uint32_t bits : {0x7F800001u, 0xFFBFFFFFu, 0x7FC12345u, 0x7F7FFFFFu, 0xFF7F8000u, 0x00008000u})
    in.push_back(std::bit_cast<float>(bits));
  std::vector<bfloat16> want(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) want[i] = lplab::convert<bfloat16>(in[i], Round::nearest_even, Overflow::ieee);
  bool ran = false;
  for (bool extensions : {true, false}) {
    kernels::force_thread_cpu_extensions(extensions);
    for_each_target([&](const std::string& target) {
      const std::vector<std::string> used = kernels::cpu_extensions();
      const bool bf16 = std::find(used.begin(), used.end(), "AVX512_BF16") != used.end();
      EXPECT_TRUE(extensions || !bf16);
      ran |= bf16;
      std::vector<bfloat16> out(in.size());
      kernels::convert(std::span<const float>(in), std::span(out));
      for (std::size_t i = 0; i < in.size(); ++i)
        ASSERT_EQ(out[i].bits(), want[i].bits()) << target << (extensions ? "" : " without extensions") << " input "
                                                 << hex(detail::bit_cast<std::uint32_t>(in[i]));
      for (std::size_t offset : {1u, 17u})
        for (std::size_t len : {1u, 15u, 16u, 17u, 31u, 33u, 95u}) {
          std::vector<bfloat16> part(len, bfloat16::from_bits(0x1234));
          kernels::convert(std::span<const float>(in).subspan(offset, len), std::span(part));
          for (std::size_t i = 0; i < len; ++i)
            ASSERT_EQ(part[i].bits(), want[offset + i].bits()) << target << " offset " << offset << " length " << len;
        }
    });
  }
  kernels::force_thread_cpu_extensions(true);
  if (!ran) std::printf("note: this CPU lacks AVX-512 BF16 (or AVX3): vcvtne2ps2bf16 did not run here\n");
}

#if defined(__x86_64__)
// vcvtps2ph and float arithmetic depend on MXCSR's DAZ and FTZ bits; lplab's
// kernels use integer code only, so a caller's DAZ/FTZ changes nothing.
TEST(BulkConvert, results_do_not_depend_on_daz_or_ftz) {
  std::vector<float> in;
  for (std::uint32_t b = 1; b < 0x01000000u; b += 0x1F3) in.push_back(detail::bit_cast<float>(b));
  auto run = [&] {
    std::vector<std::uint32_t> all_e4;
    std::vector<float16> h(in.size());
    std::vector<bfloat16> bf(in.size());
    std::vector<float8_e8m0fnu> e8(in.size());
    std::vector<float> back(in.size());
    kernels::convert(std::span<const float>(in), std::span(h), Round::upward);
    kernels::convert(std::span<const float>(in), std::span(bf));
    kernels::convert(std::span<const float>(in), std::span(e8), Round::upward);
    kernels::convert(std::span<const bfloat16>(bf), std::span(back));
    std::vector<float8_e4m3fn> e4(256);
    for (unsigned c = 0; c < 256; ++c) e4[c] = float8_e4m3fn::from_bits(c);
    std::vector<float> e4_back(256);
    kernels::convert(std::span<const float8_e4m3fn>(e4), std::span(e4_back));
    for (float v : e4_back) all_e4.push_back(detail::bit_cast<std::uint32_t>(v));
    std::vector<std::uint32_t> all;
    for (auto v : h) all.push_back(v.bits());
    for (auto v : bf) all.push_back(v.bits());
    for (auto v : e8) all.push_back(v.bits());
    for (float v : back) all.push_back(detail::bit_cast<std::uint32_t>(v));
    all.insert(all.end(), all_e4.begin(), all_e4.end());
    return all;
  };
  for_each_target([&](const std::string&) {
    const auto plain = run();
    const unsigned saved = _mm_getcsr();
    for (unsigned bits : {0x8040u, 0x8000u, 0x0040u}) {  // FTZ (bit 15), DAZ (bit 6)
      _mm_setcsr(saved | bits);
      const auto flushed = run();
      _mm_setcsr(saved);
      EXPECT_EQ(plain, flushed) << "MXCSR bits " << hex(bits);
    }
    // fp16 upward of the smallest float subnormal is fp16's smallest subnormal.
    EXPECT_EQ(plain[0], 0x0001u);
  });
}
#endif

}  // namespace
}  // namespace lplab::testing
