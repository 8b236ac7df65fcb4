// Float -> format conversions, one pass per format over the float inputs
// (support/inputs.h; LPLAB_SWEEP=full: all 2^32 patterns). Each chunk of
// inputs is made once and everything that reads it is compared in the same
// pass:
//
// 1. Range (every input of the range set), under the range policies -- each
//    (rounding, overflow) CUDA offers for the format, and nearest-even with
//    both overflow policies:
//    - lplab's scalar core against CUDA's host conversion (cuda_oracles.h);
//    - the bulk kernels on the SIMD target they dispatch to against the
//      scalar core.
// 2. Decision (every input of the decision-covering set, which lies inside
//    the range chunks), under all six roundings and both overflow policies:
//    - the scalar core against the independent Reference, value and flags;
//    - the bulk kernels on every SIMD target against the scalar core, values
//      alone and with flag counts.
//
// docs/testing.md argues why this decides everything the former separate
// sweeps (CUDA, reference and bulk, 43 enumerations) decided.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "support/bulk_check.h"
#if LPLAB_HAVE_CUDA_ORACLE  // CUDA's headers were found (cmake/CudaOracle.cmake)
#include "support/cuda_oracles.h"
#endif
#include "support/inputs.h"
#include "support/reference.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

// The floating-point formats' overflow policies (Overflow::wrap is for the
// integer formats, and ieee in these).
constexpr Overflow kOverflows[] = {Overflow::ieee, Overflow::saturate};

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// A value exactly: shortest round-trip decimal and hexadecimal.
std::string exact(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g (%a)", v, v);
  return buf;
}

// Range inputs per chunk: a multiple of 2^12, so that the decision inputs of a
// chunk lie inside it (DecisionFloats::first_in_chunk).
constexpr std::uint64_t kSweepChunk = std::uint64_t{1} << 16;

void keep_first(std::atomic<std::uint64_t>& first, std::uint64_t i) {
  std::uint64_t cur = first.load();
  while (i < cur && !first.compare_exchange_weak(cur, i)) {
  }
}

// Counts of one comparison and its first failing input.
struct Tally {
  std::atomic<std::uint64_t> bad{0};
  std::atomic<std::uint64_t> first{~std::uint64_t{0}};
  void add(std::uint64_t n, std::uint64_t first_here) {
    if (n == 0) return;
    bad += n;
    keep_first(first, first_here);
  }
};

// A policy of the range pass, with CUDA's conversion where CUDA has one.
struct RangePolicy {
  Round round;
  Overflow overflow;
  FloatConversion cuda;  // .one == nullptr where CUDA has none
  std::string cuda_name;
};

template <class T>
std::vector<RangePolicy> range_policies() {
  std::vector<RangePolicy> out;
  auto add = [&](Round r, Overflow o) -> RangePolicy& {
    for (RangePolicy& p : out)
      if (p.round == r && p.overflow == o) return p;
    return out.emplace_back(RangePolicy{r, o, {}, {}});
  };
#if LPLAB_HAVE_CUDA_ORACLE
  for (const CudaConversion& c : cuda_conversions()) {
    if (with_target(c.target, []<class U>() { return std::is_same_v<U, T>; })) {
      RangePolicy& p = add(c.round, c.overflow);
      p.cuda = c.from_float;
      p.cuda_name = c.name;
    }
  }
#endif
  add(Round::nearest_even, Overflow::ieee);
  add(Round::nearest_even, Overflow::saturate);
  return out;
}

// The scalar core over a chunk, the policy a compile-time constant so that
// the conversion is inlined and specialised (flatten: one loop, no calls).
template <class T, Round R, Overflow O>
[[gnu::flatten]] void scalar_codes_as(std::span<const float> in, typename T::storage_type* out) {
  for (std::size_t j = 0; j < in.size(); ++j) out[j] = convert<T>(in[j], R, O).bits();
}

// f.template operator()<R, O>() for the run-time policy (r, o): the loops
// below are compiled once per policy.
template <class F>
decltype(auto) with_policy(Round r, Overflow o, F&& f) {
  return detail::with_round(r, [&]<Round R>() -> decltype(auto) {
    if (o == Overflow::saturate) return f.template operator()<R, Overflow::saturate>();
    return f.template operator()<R, Overflow::ieee>();
  });
}

template <class T>
void scalar_codes(Round r, Overflow o, std::span<const float> in, typename T::storage_type* out) {
  with_policy(r, o, [&]<Round R, Overflow O>() { scalar_codes_as<T, R, O>(in, out); });
}

// What CUDA must give where lplab gives `ours` for x (docs/cuda-mapping.md):
// CUDA's E8M0 conversion takes |x| and maps zero to 2^-127 (code 0), where
// lplab gives NaN as ml_dtypes does. NaN inputs are compared as classes:
// CUDA canonicalizes NaN, lplab keeps sign and payload (IEEE 754-2019 6.2.3).
template <class T, Round R, Overflow O>
bool cuda_agrees(float x, std::uint32_t cuda, typename T::storage_type ours) {
  if (finfo<T>::has_nan && std::isnan(x)) return isnan(T::from_bits(cuda)) && isnan(T::from_bits(ours));
  if constexpr (std::is_same_v<T, float8_e8m0fnu>) {
    if (x == 0) return cuda == 0x00;
    if (x < 0) return cuda == convert<T>(-x, R, O).bits();
  }
  return cuda == ours;
}

// CUDA's codes against lplab's over a chunk: the number that differ and the
// index of the first. The policy is a compile-time constant, as in
// scalar_codes_as (E8M0 converts |x| again for each negative input).
template <class T, Round R, Overflow O>
[[gnu::flatten]] std::uint64_t cuda_mismatches_as(std::span<const float> in, const std::uint32_t* cuda,
                                                  const typename T::storage_type* ours, std::size_t& first) {
  std::uint64_t bad = 0;
  for (std::size_t j = 0; j < in.size(); ++j) {
    if (!cuda_agrees<T, R, O>(in[j], cuda[j], ours[j]) && bad++ == 0) first = j;
  }
  return bad;
}

template <class T>
std::uint64_t cuda_mismatches(Round r, Overflow o, std::span<const float> in, const std::uint32_t* cuda,
                              const typename T::storage_type* ours, std::size_t& first) {
  return with_policy(r, o, [&]<Round R, Overflow O>() { return cuda_mismatches_as<T, R, O>(in, cuda, ours, first); });
}

template <class T>
class ConversionSweep : public ::testing::Test {};

TYPED_TEST_SUITE(ConversionSweep, SmallFormats, FormatNames);

TYPED_TEST(ConversionSweep, cuda_reference_and_every_simd_target) {
  using T = TypeParam;
  using Code = typename T::storage_type;
  // The decision-covering set's argument needs a lowest kept bit at 13 or above.
  static_assert(finfo<T>::nmant <= 10);
  const SweepExtent ext = SweepExtent::from_environment();
  const Reference ref(T::descriptor);
  const std::vector<RangePolicy> range = range_policies<T>();
  const std::vector<kernels::SimdTarget>& targets = sweep_targets();
  constexpr std::size_t kCombos = std::size(kRounds) * std::size(kOverflows);

  std::vector<Tally> cuda_bad(range.size());
  std::array<Tally, kCombos> value_bad, flags_bad;
  std::atomic<std::uint64_t> range_seen{0}, decision_seen{0}, nan_inputs{0};
  BulkMismatches native_bad, targets_bad;

  for_each_chunk(ext.range_count(), kSweepChunk, [&](std::uint64_t begin, std::size_t n) {
    // 1. Range.
    thread_local std::vector<float> in;
    thread_local std::vector<Code> scalar;
    thread_local std::vector<std::uint32_t> cuda;
    in.resize(n);
    scalar.resize(n);
    cuda.resize(n);
    std::uint64_t nans = 0;
    for (std::size_t j = 0; j < n; ++j) {
      in[j] = detail::bit_cast<float>(ext.range_bits(begin + j));
      nans += std::isnan(in[j]);
    }
    nan_inputs += nans;
    for (std::size_t p = 0; p < range.size(); ++p) {
      const RangePolicy& pol = range[p];
      scalar_codes<T>(pol.round, pol.overflow, in, scalar.data());
      if (pol.cuda.one != nullptr) {
        pol.cuda.many(in.data(), n, cuda.data());
        std::size_t first = 0;
        const std::uint64_t bad = cuda_mismatches<T>(pol.round, pol.overflow, in, cuda.data(), scalar.data(), first);
        cuda_bad[p].add(bad, begin + first);
      }
      check_bulk<T>(in, scalar, nullptr, pol.round, pol.overflow, begin, native_bad);
    }
    range_seen += n;

    // 2. Decision.
    const std::uint64_t k0 = ext.decision_first(begin);
    const std::size_t m = ext.decision_count_in(n);
    thread_local std::vector<float> din;
    thread_local std::array<std::vector<Code>, kCombos> dscalar;
    std::array<kernels::FlagCounts, kCombos> counts{};
    std::array<std::uint64_t, kCombos> vbad{}, fbad{}, first{};
    din.resize(m);
    for (auto& v : dscalar) v.resize(m);
    for (std::size_t j = 0; j < m; ++j) {
      const std::uint64_t k = k0 + j;
      const float x = detail::bit_cast<float>(ext.decision_bits(k));
      din[j] = x;
      const auto prepared = ref.prepare(Real{std::isnan(x), std::isnan(x) ? 0.0 : x, false});
      const std::uint32_t random = kernels::stochastic_bits(kSweepSeed, k);
      std::size_t c = 0;
      for (Round r : kRounds) {
        for (Overflow o : kOverflows) {
          Flags flags;
          const T got = convert<T>(x, r, o, &flags, random);
          dscalar[c][j] = got.bits();
          counts[c].add(flags);
          const Expect want = ref.round(prepared, r, o, random);
          const bool value_differs = !ref.matches(want, got.bits());
          const bool flags_differ = flags.bits != want.flags;
          if ((value_differs || flags_differ) && vbad[c] + fbad[c] == 0) first[c] = k;
          vbad[c] += value_differs;
          fbad[c] += flags_differ && !value_differs;
          ++c;
        }
      }
    }
    std::size_t c = 0;
    for (Round r : kRounds) {
      for (Overflow o : kOverflows) {
        value_bad[c].add(vbad[c], first[c]);
        flags_bad[c].add(fbad[c], first[c]);
        check_bulk<T>(din, dscalar[c], &counts[c], r, o, k0, targets_bad, targets);
        ++c;
      }
    }
    decision_seen += m;
  });

  EXPECT_EQ(range_seen.load(), ext.range_count());
  EXPECT_EQ(decision_seen.load(), ext.decision_count());
  EXPECT_GT(nan_inputs.load(), 0u);
  std::uint64_t cuda_total = 0, cuda_conversions = 0;
  for (std::size_t p = 0; p < range.size(); ++p) {
    if (range[p].cuda.one == nullptr) continue;
    ++cuda_conversions;
    cuda_total += cuda_bad[p].bad;
    if (cuda_bad[p].bad == 0) continue;
    const std::uint32_t xb = ext.range_bits(cuda_bad[p].first);
    const float x = detail::bit_cast<float>(xb);
    ADD_FAILURE() << "f32_to_" << range[p].cuda_name << ": " << cuda_bad[p].bad
                  << " mismatches with CUDA; first: x=" << hex(xb) << " (" << x
                  << ") cuda=" << hex(range[p].cuda.one(x))
                  << " lplab=" << hex(convert<T>(x, range[p].round, range[p].overflow).bits());
  }
  std::uint64_t reference_total = 0;
  std::size_t c = 0;
  for (Round r : kRounds) {
    for (Overflow o : kOverflows) {
      const std::uint64_t vb = value_bad[c].bad, fb = flags_bad[c].bad;
      reference_total += vb + fb;
      if (vb + fb != 0) {
        const std::uint64_t k = std::min(value_bad[c].first.load(), flags_bad[c].first.load());
        const std::uint32_t xb = ext.decision_bits(k);
        const float x = detail::bit_cast<float>(xb);
        const std::uint32_t random = kernels::stochastic_bits(kSweepSeed, k);
        Flags f;
        const T got = convert<T>(x, r, o, &f, random);
        const Expect want = ref.round(Real{std::isnan(x), std::isnan(x) ? 0.0 : x, false}, r, o, random);
        ADD_FAILURE() << round_name(r) << "/" << overflow_name(o) << ": "
                      << vb << " value and " << fb << " flag-only mismatches with the reference; first x="
                      << hex(xb) << " (" << x << "): lplab " << hex(got.bits()) << " flags "
                      << int(f.bits) << ", reference " << (want.nan ? "nan" : exact(want.value))
                      << " flags " << int(want.flags);
      }
      ++c;
    }
  }
  EXPECT_EQ(native_bad.count(), 0u) << "bulk kernels (dispatched target) differ from the scalar core; first: "
                                    << native_bad.first();
  EXPECT_EQ(targets_bad.count(), 0u) << "bulk kernels differ from the scalar core; first: "
                                     << targets_bad.first();
  ::testing::Test::RecordProperty("range_inputs", std::to_string(range_seen.load()));
  ::testing::Test::RecordProperty("decision_inputs", std::to_string(decision_seen.load()));
  std::string target_names;
  for (const auto& t : targets) target_names += (target_names.empty() ? "" : ",") + t.name;
  std::printf("  %s [%s]: %llu range inputs x %zu policies: scalar vs CUDA (%llu conversions) %llu "
              "mismatches, bulk on %s vs scalar %llu differing chunks; %llu decision inputs x %zu "
              "policies: scalar vs reference %llu mismatches, bulk on %s vs scalar %llu differing "
              "chunks\n",
              T::descriptor.name.c_str(), ext.name(), static_cast<unsigned long long>(range_seen.load()),
              range.size(), static_cast<unsigned long long>(cuda_conversions),
              static_cast<unsigned long long>(cuda_total), kernels::current_simd_target().name.c_str(),
              static_cast<unsigned long long>(native_bad.count()),
              static_cast<unsigned long long>(decision_seen.load()), kCombos,
              static_cast<unsigned long long>(reference_total), target_names.c_str(),
              static_cast<unsigned long long>(targets_bad.count()));
}

// Every CUDA conversion of the table is reached by exactly one format's range pass.
#if LPLAB_HAVE_CUDA_ORACLE
TEST(ConversionSweepPlan, every_cuda_conversion_is_swept) {
  std::size_t reached = 0;
  auto count = [&]<class... Ts>(::testing::Types<Ts...>*) {
    ((reached += [] {
       std::size_t k = 0;
       for (const RangePolicy& p : range_policies<Ts>()) k += p.cuda.one != nullptr;
       return k;
     }()),
     ...);
  };
  count(static_cast<SmallFormats*>(nullptr));
  EXPECT_EQ(reached, cuda_conversions().size());
}
#endif

// The decision-covering set holds what docs/testing.md claims of it: every
// value of the top 20 bits with the low 12 bits clear and with each of them
// set alone, each input once. A one-bit slip in its generator fails here.
TEST(ConversionSweepPlan, decision_set_covers_every_decision) {
  std::vector<std::uint16_t> seen(std::size_t{1} << DecisionFloats::kDecidingBits, 0);
  std::vector<std::uint32_t> all;
  all.reserve(DecisionFloats::count);
  for (std::uint64_t k = 0; k < DecisionFloats::count; ++k) {
    const std::uint32_t b = DecisionFloats::bits(k);
    all.push_back(b);
    const std::uint32_t low = b & 0xFFF;
    const int slot = low == 0 ? 12 : (low & (low - 1)) == 0 ? std::countr_zero(low) : -1;
    if (slot >= 0) seen[b >> 12] |= static_cast<std::uint16_t>(1u << slot);
  }
  std::uint64_t incomplete = 0;
  for (std::uint16_t s : seen) incomplete += s != 0x1FFF;
  EXPECT_EQ(incomplete, 0u) << "top-20 values without the sticky-clear or a single-bit input";
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "an input appears twice";
  // Chunks of the range set hold their decision inputs.
  for (std::uint64_t begin : {std::uint64_t{0}, kSweepChunk, std::uint64_t{0xFFFF0000}}) {
    const std::uint64_t k0 = DecisionFloats::first_in_chunk(begin);
    for (std::uint64_t k = k0; k < k0 + DecisionFloats::count_in_chunk(kSweepChunk); ++k) {
      const std::uint64_t b = DecisionFloats::bits(k);
      ASSERT_TRUE(b >= begin && b < begin + kSweepChunk) << k;
    }
  }
}

}  // namespace
}  // namespace lplab::testing
