// The power-of-two scale rules (scale_rules.h: floor, ceil, rceil, even,
// ceil_amax) for every MX element format with an E8M0 scale. LPLAB_SWEEP=full
// walks all 2^31 non-negative float patterns (amax is a magnitude: the
// negative half are the same amaxes), the quick label the quick float set's
// magnitudes. Written apart from scale_rules.h's integer
// arithmetic on amax's bits:
//
// 1. The two roundings to a power of two the rules are built on, against
//    CUDA's __nv_cvt_float_to_e8m0(v, satfinite, round toward zero / up) on
//    every v: scale_rules::binade_of's floor(log2 v), and that plus one
//    unless v is a power of two.
// 2. Each rule against its definition in double, from CUDA's two codes for
//    amax (F = floor(log2 amax), C = ceil(log2 amax)) and exact comparisons:
//      floor      F - emax_elem
//      ceil       the least X with amax <= max_elem * 2^X
//      rceil      the least X with q <= 2^X, q = amax * float(1 / max_elem)
//                 in float32 (cuBLAS's and Transformer Engine's product)
//      even       amax rounded to 1 + M bits, ties away (floor(amax *
//                 2^(M - F) + 1/2) * 2^(F - M)), then floor's formula
//      ceil_amax  C - emax_elem
//    each clamped to E8M0's [-127, 127]. Where ceil and rceil part (one amax
//    per format: q subnormal) the sweep counts it and the count is checked.
// 3. Transformer Engine's power-of-two scale (compute_scale_from_amax with
//    force_pow_2_scales: s = max_elem / amax as a float32 division, FLT_MAX
//    where it is infinite, mantissa cleared) is ceil's: -ilogb(s) equals
//    ceil's X for every amax > 0 -- on every finite amax for E4M3 (full),
//    with the other rules for every format. (fl(max_elem / amax) could only
//    differ by rounding up to a power of two 2^j, which needs an amax within
//    2^-25 relative above max_elem * 2^-j: a float, whose neighbours are
//    2^-24 or more apart, relatively; a subnormal amax makes s overflow,
//    and both give -127.) At amax = 0 TE's scale is 1 where ceil gives 2^-127.
//
// block_scale's scale and factor are checked against 2^X for every X, and the
// non-finite amaxes give the NaN scale (lplab's rule; CUDA's satfinite
// conversion gives 2^127 for an infinity: docs/recipes.md).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "lplab/kernels/scale_rules.h"
#include "support/bulk_check.h"
#if LPLAB_HAVE_CUDA_ORACLE
#include "support/cuda_oracles.h"
#endif
#include "support/inputs.h"

namespace lplab::testing {
namespace {

using kernels::ScaleRule;
using E8M0 = float8_e8m0fnu;
namespace sr = kernels::scale_rules;

constexpr ScaleRule kPowerOfTwoRules[] = {ScaleRule::floor, ScaleRule::ceil, ScaleRule::rceil, ScaleRule::even,
                                          ScaleRule::ceil_amax};

// An element format's constants as the specs give them (OCP MX v1.0 table 1
// and section 5.3), written out: max, emax, stored mantissa bits.
struct ElemSpec {
  const char* name;
  double max;
  int emax, mantissa;
};

template <class Elem>
constexpr ElemSpec spec_of();
template <> constexpr ElemSpec spec_of<float8_e4m3fn>() { return {"e4m3fn", 448.0, 8, 3}; }
template <> constexpr ElemSpec spec_of<float8_e5m2>() { return {"e5m2", 57344.0, 15, 2}; }
template <> constexpr ElemSpec spec_of<float6_e2m3fn>() { return {"e2m3fn", 7.5, 2, 3}; }
template <> constexpr ElemSpec spec_of<float6_e3m2fn>() { return {"e3m2fn", 28.0, 4, 2}; }
template <> constexpr ElemSpec spec_of<float4_e2m1fn>() { return {"e2m1fn", 6.0, 2, 1}; }

int clamp_e8m0(int x) { return x < -127 ? -127 : x > 127 ? 127 : x; }

// 2^k in double for -200 <= k <= 200 (std::ldexp, once).
double pow2(int k) {
  static const std::array<double, 401> table = [] {
    std::array<double, 401> t{};
    for (int i = 0; i < 401; ++i) t[static_cast<std::size_t>(i)] = std::ldexp(1.0, i - 200);
    return t;
  }();
  return table[static_cast<std::size_t>(k + 200)];
}

struct Want {
  int x[std::size(kPowerOfTwoRules)];
};

// Transformer Engine's power-of-two scale as TE evaluates it, as an X: the
// float32 quotient (IEEE division, nearest-even; FLT_MAX for an infinite
// one), -ilogb of it (its mantissa cleared), for amax > 0.
int te_pow2_x(float max, float amax) {
  float s = max / amax;
  if (std::isinf(s)) s = std::numeric_limits<float>::max();
  return clamp_e8m0(-std::ilogb(s));
}

// The references for one finite amax > 0 with F = floor(log2 amax) and
// C = ceil(log2 amax), each clamped to [-127, 127] (CUDA's codes less 127).
template <class Elem>
Want references(float amax_f, int F, int C) {
  constexpr ElemSpec e = spec_of<Elem>();
  constexpr float rcp = static_cast<float>(1.0 / e.max);
  const double amax = amax_f;
  Want w{};
  // Below 2^-126 (F = -127 after the clamp, or -126 for [2^-126, ...) is
  // fine) every rule but rceil is -127: emax >= 2 and max >= 6 put each
  // formula at -128 or less.
  static_assert(e.emax >= 2 && e.max >= 6);
  const bool tiny = amax < 0x1p-126;
  w.x[0] = tiny ? -127 : clamp_e8m0(F - e.emax);
  int c = F - e.emax;  // amax < 2^(F + 1) <= max * 2^(c + 1)
  if (!(amax <= e.max * pow2(c))) ++c;
  w.x[1] = tiny ? -127 : clamp_e8m0(c);
  // rceil: q < 2^(F + 1) / 4 (max >= 6 > 4), and q > 0 or q = 0.
  const double q = amax_f * rcp;  // the float32 product
  int k = F - 3 - e.emax;
  if (q == 0) {
    k = -127;
  } else {
    while (k > -200 && q <= pow2(k - 1)) --k;
    while (!(q <= pow2(k))) ++k;
  }
  w.x[2] = clamp_e8m0(k);
  const double scaled = amax * pow2(e.mantissa - F) + 0.5;  // below 2^(M + 2): exact, an int's
  const double rounded = static_cast<double>(static_cast<std::int32_t>(scaled)) * pow2(F - e.mantissa);
  w.x[3] = tiny ? -127 : clamp_e8m0(F + (rounded >= pow2(F + 1)) - e.emax);
  w.x[4] = tiny ? -127 : clamp_e8m0(C - e.emax);
  return w;
}

// One format's tallies.
struct Counts {
  std::atomic<std::uint64_t> bad{0}, ceil_vs_rceil{0};
  std::atomic<std::uint64_t> first_bad{~std::uint64_t{0}};
  std::atomic<int> first_rule{-1};
  void add(std::uint64_t b, std::uint64_t parted, std::uint32_t first, int rule) {
    bad += b;
    ceil_vs_rceil += parted;
    if (b == 0) return;
    std::uint64_t cur = first_bad.load();
    while (first < cur && !first_bad.compare_exchange_weak(cur, first)) {
    }
    if (first <= cur) first_rule = rule;  // the rule of the lowest bad amax (close enough across threads)
  }
};

using MxElements = std::tuple<float8_e4m3fn, float8_e5m2, float6_e2m3fn, float6_e3m2fn, float4_e2m1fn>;
constexpr std::size_t kFormats = std::tuple_size_v<MxElements>;

// f.template operator()<Elem, I>() for each MX element format.
template <class F>
void for_each_format(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f.template operator()<std::tuple_element_t<I, MxElements>, I>(), ...);
  }(std::make_index_sequence<kFormats>{});
}

// The amaxes of the sweep: every finite non-negative float (full), or the
// quick set's (its negative and non-finite patterns skipped).
std::uint64_t amax_count(const SweepExtent& ext) { return ext.full ? 0x7F80'0000u : ext.range_count(); }
bool amax_at(const SweepExtent& ext, std::uint64_t i, std::uint32_t& bits) {
  bits = ext.full ? static_cast<std::uint32_t>(i) : ext.range_bits(i);
  return bits < 0x7F80'0000u;
}

#if LPLAB_HAVE_CUDA_ORACLE
// One amax, one format: the five rules against their references.
struct Tally {
  std::uint64_t bad = 0, parted = 0;
  std::uint32_t first = 0;
  int rule = -1;
};
template <class Elem>
void check_one(std::uint32_t bits, float amax, int F, int C, Tally& t) {
  const Want w = amax == 0 ? Want{{-127, -127, -127, -127, -127}} : references<Elem>(amax, F, C);
  t.parted += w.x[1] != w.x[2];
  if (amax != 0 && te_pow2_x(static_cast<float>(spec_of<Elem>().max), amax) != w.x[1] && t.bad++ == 0)
    t.first = bits, t.rule = 1;  // reported as ceil's: TE's power of two is ceil (3. above)
  for (std::size_t r = 0; r < std::size(kPowerOfTwoRules); ++r) {
    if (sr::power_of_two_exponent<Elem, E8M0>(kPowerOfTwoRules[r], bits) == w.x[r]) continue;
    if (t.bad++ == 0) t.first = bits, t.rule = static_cast<int>(r);
  }
}

// The low 12 bits of the decision-covering set (support/inputs.h): in the
// full sweep the rules are checked on its amaxes, every pattern of the top 20
// bits (sign, exponent and 11 leading significand bits: where each rule but
// rceil decides: ceil at max_sig's 1 + M <= 4 bits and any bit below, even at
// the leading 1 + M bits, ceil_amax at any bit) with 16 low patterns.
const std::array<bool, 4096>& decision_set() {
  static const std::array<bool, 4096> set = [] {
    std::array<bool, 4096> s{};
    for (std::uint32_t low : DecisionFloats::kLow12) s[low] = true;
    return s;
  }();
  return set;
}

// Every amax once: CUDA's two codes and binade_of against them; the five
// formats' rules from them (full sweep: on the decision-covering set, which
// took 12 s of CPU here where every amax took 200 s; docs/recipes.md).
void sweep(const SweepExtent& ext, std::array<Counts, kFormats>& counts, Counts& roundings, Counts& te_pow2,
           std::atomic<std::uint64_t>& seen, std::atomic<std::uint64_t>& ruled_seen) {
  for_each_chunk(amax_count(ext), std::uint64_t{1} << 16, [&](std::uint64_t begin, std::size_t n) {
    std::array<Tally, kFormats> t{};
    Tally rt, tt;
    std::uint64_t here = 0, ruled = 0;
    for (std::size_t j = 0; j < n; ++j) {
      std::uint32_t bits = 0;
      if (!amax_at(ext, begin + j, bits)) continue;
      ++here;
      const float amax = detail::bit_cast<float>(bits);
      const int F = static_cast<int>(__nv_cvt_float_to_e8m0(amax, __NV_SATFINITE, cudaRoundZero)) - 127;
      int C = static_cast<int>(__nv_cvt_float_to_e8m0(amax, __NV_SATFINITE, cudaRoundPosInf)) - 127;
      if (bits != 0) {
        const sr::Binade b = sr::binade_of(bits);
        if (clamp_e8m0(b.floor_log2) != F && rt.bad++ == 0) rt.first = bits, rt.rule = 0;
        if (clamp_e8m0(b.floor_log2 + (b.sig != sr::kOne)) != C && rt.bad++ == 0) rt.first = bits, rt.rule = 1;
        if (te_pow2_x(448.0f, amax) != sr::power_of_two_exponent<float8_e4m3fn, E8M0>(ScaleRule::ceil, bits) &&
            tt.bad++ == 0)
          tt.first = bits;
      }
      if (ext.full && !decision_set()[bits & 0xFFF]) continue;
      ++ruled;
      // (Above 2^127 the satfinite code is 2^127; ceil(log2 amax) is 128.)
      if (F == 127 && bits != 0x7F00'0000u) C = 128;
      for_each_format([&]<class Elem, std::size_t I>() { check_one<Elem>(bits, amax, F, C, t[I]); });
    }
    seen += here;
    ruled_seen += ruled;
    roundings.add(rt.bad, 0, rt.first, rt.rule);
    te_pow2.add(tt.bad, 0, tt.first, 0);
    for (std::size_t f = 0; f < kFormats; ++f) counts[f].add(t[f].bad, t[f].parted, t[f].first, t[f].rule);
  });
}
#endif

TEST(ScaleRuleSweep, every_power_of_two_rule_on_every_amax) {
#if LPLAB_HAVE_CUDA_ORACLE
  const SweepExtent ext = SweepExtent::from_environment();
  std::array<Counts, kFormats> counts;
  Counts roundings, te_pow2;
  std::atomic<std::uint64_t> seen{0}, ruled{0};
  sweep(ext, counts, roundings, te_pow2, seen, ruled);
  if (ext.full) {
    EXPECT_EQ(ruled.load(), 0x7F80'0000u >> 8) << "the decision-covering set's finite non-negative floats";
  }
  EXPECT_EQ(te_pow2.bad.load(), 0u) << "Transformer Engine's power-of-two scale differs from ceil for E4M3 at amax bits 0x"
                                   << std::hex << te_pow2.first_bad.load();
  EXPECT_EQ(roundings.bad.load(), 0u) << "binade_of against CUDA's "
                                      << (roundings.first_rule.load() == 0 ? "toward zero" : "upward")
                                      << " at 0x" << std::hex << roundings.first_bad.load();
  if (ext.full) {
    EXPECT_EQ(seen.load(), 0x7F80'0000u) << "every finite non-negative float";
  }
  EXPECT_GT(seen.load(), 1000u);
  for_each_format([&]<class Elem, std::size_t I>() {
    const Counts& c = counts[I];
    SCOPED_TRACE(spec_of<Elem>().name);
    const int r = c.first_rule.load();
    EXPECT_EQ(c.bad.load(), 0u) << "first at amax bits 0x" << std::hex << c.first_bad.load() << " rule "
                                << (r < 0 ? "?" : std::string(lplab::enum_name(kPowerOfTwoRules[r])));
    // ceil and rceil part at the one amax whose q = amax * (1 / max) is
    // subnormal and rounds down to 2^-127: the float after max * 2^-127.
    // (The decision-covering set holds it: its low 12 bits are 0x001.)
    if (ext.full) {
      EXPECT_EQ(c.ceil_vs_rceil.load(), 1u);
    } else {
      EXPECT_LE(c.ceil_vs_rceil.load(), 1u);
    }
    const float after = std::nextafter(static_cast<float>(std::ldexp(spec_of<Elem>().max, -127)), 1.0f);
    const auto after_bits = detail::bit_cast<std::uint32_t>(after);
    EXPECT_EQ((sr::power_of_two_exponent<Elem, E8M0>(ScaleRule::ceil, after_bits)), -126);
    EXPECT_EQ((sr::power_of_two_exponent<Elem, E8M0>(ScaleRule::rceil, after_bits)), -127);
  });
#else
  GTEST_SKIP() << "CUDA's headers (the oracle) were not found";
#endif
}

// block_scale turns X into the E8M0 scale 2^X and the factor 2^-X, for every
// rule and every X a rule can give; a block holding a NaN or an infinity gets
// the NaN scale and the factor 0.
TEST(ScaleRules, block_scale_is_two_to_the_x_and_nonfinite_blocks_are_nan) {
  for_each_format([&]<class Elem, std::size_t I>() {
    for (ScaleRule rule : kPowerOfTwoRules) {
      for (int fl = -149; fl <= 127; ++fl) {
        const float amax = std::ldexp(1.0f, fl) * 1.5f;
        if (!std::isfinite(amax) || amax == 0) continue;
        const auto bits = detail::bit_cast<std::uint32_t>(amax);
        const int x = sr::power_of_two_exponent<Elem, E8M0>(rule, bits);
        E8M0 scale;
        float factor = 0;
        sr::block_scale<Elem, E8M0>(rule, bits, 1.0f, scale, factor);
        ASSERT_EQ(static_cast<double>(scale), std::ldexp(1.0, x)) << lplab::enum_name(rule) << " amax " << amax;
        ASSERT_EQ(static_cast<double>(factor), std::ldexp(1.0, -x)) << lplab::enum_name(rule) << " amax " << amax;
      }
      for (std::uint32_t bits : {0x7F80'0000u, 0x7FC0'0000u, 0x7F80'0001u}) {
        E8M0 scale;
        float factor = 1;
        sr::block_scale<Elem, E8M0>(rule, bits, 1.0f, scale, factor);
        EXPECT_TRUE(isnan(scale)) << lplab::enum_name(rule);
        EXPECT_EQ(factor, 0.0f);
      }
    }
  });
}

#if defined(__x86_64__)
// rceil's product is rounded on integers: flush-to-zero, denormals-are-zero
// and the directed rounding modes in MXCSR change no X (a float multiply
// would: FTZ flushes the subnormal q of an amax just above max * 2^-127,
// rounding upward lifts q above 2^k at amax = 448 * 2^k).
TEST(ScaleRules, rceil_ignores_the_floating_point_environment) {
  std::vector<std::uint32_t> amaxes;
  for (std::uint32_t b = 0; b < 0x7F80'0000u; b += 0x1357u) amaxes.push_back(b);
  for (int k = -127; k <= 110; ++k) {
    const auto at = detail::bit_cast<std::uint32_t>(std::ldexp(448.0f, k));
    for (std::uint32_t d : {0u, 1u, 2u}) amaxes.push_back(at + d), amaxes.push_back(at - d);
  }
  auto run = [&] {
    std::vector<int> x;
    for (std::uint32_t b : amaxes) x.push_back(sr::power_of_two_exponent<float8_e4m3fn, E8M0>(ScaleRule::rceil, b));
    return x;
  };
  const std::vector<int> plain = run();
  const unsigned saved = _mm_getcsr();
  // FTZ (bit 15) and DAZ (bit 6); rounding up (0x4000), down (0x2000), to zero (0x6000).
  for (unsigned bits : {0x8040u, 0x4000u, 0x2000u, 0x6000u}) {
    _mm_setcsr((saved & ~0x6000u) | bits);
    const std::vector<int> other = run();
    _mm_setcsr(saved);
    EXPECT_EQ(plain, other) << "MXCSR bits 0x" << std::hex << bits;
  }
  EXPECT_EQ(plain[amaxes.size() - 6 * 238 + 6 * 127], 0);  // amax = 448: X = 0
}
#endif

// Values a wrong rule gets wrong (scaling.h's examples), E4M3 into E8M0.
TEST(ScaleRules, the_documented_examples) {
  auto x = [](ScaleRule r, float amax) {
    return sr::power_of_two_exponent<float8_e4m3fn, E8M0>(r, detail::bit_cast<std::uint32_t>(amax));
  };
  EXPECT_EQ(x(ScaleRule::floor, 500.0f), 0);       // 500 saturates to 448
  EXPECT_EQ(x(ScaleRule::ceil, 500.0f), 1);        // 250
  EXPECT_EQ(x(ScaleRule::rceil, 500.0f), 1);
  EXPECT_EQ(x(ScaleRule::even, 500.0f), 1);        // 500 = 1.953 * 2^8 rounds to 2^9
  EXPECT_EQ(x(ScaleRule::even, 495.0f), 0);        // 1.934 * 2^8 rounds to 1.875 * 2^8
  EXPECT_EQ(x(ScaleRule::even, 496.0f), 1);        // 1.9375 * 2^8, the tie, goes away to 2^9
  EXPECT_EQ(x(ScaleRule::ceil_amax, 300.0f), 1);   // ceil(log2 300) = 9
  EXPECT_EQ(x(ScaleRule::ceil, 300.0f), 0);        // 300 <= 448
  EXPECT_EQ(x(ScaleRule::ceil_amax, 256.0f), 0);   // a power of two
  EXPECT_EQ(x(ScaleRule::ceil, 448.0f), 0);
  EXPECT_EQ(x(ScaleRule::rceil, 448.0f), 0);
  EXPECT_EQ(x(ScaleRule::ceil, std::nextafter(448.0f, 1e9f)), 1);
  EXPECT_EQ(x(ScaleRule::rceil, std::nextafter(448.0f, 1e9f)), 1);
  EXPECT_EQ(x(ScaleRule::rceil, 0.0f), -127);
  EXPECT_EQ(x(ScaleRule::rceil, 0x1p127f), 119);  // 2^127 / 448 -> 2^119 (ceil of 1.14 * 2^118)
  // TE's power-of-two scale is ceil's (3. above), also just above 448, where
  // fl(448 / amax) = 1 - 2^-23 stays below 1.
  for (float amax : {500.0f, 448.0f, std::nextafter(448.0f, 1e9f), 1.0f, 0x1p127f, 0x1p-149f, 3e-39f})
    EXPECT_EQ(te_pow2_x(448.0f, amax), x(ScaleRule::ceil, amax)) << amax;
  EXPECT_EQ(te_pow2_x(448.0f, std::nextafter(448.0f, 1e9f)), 1);
}

}  // namespace
}  // namespace lplab::testing
