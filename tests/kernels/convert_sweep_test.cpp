// The bulk conversion against the scalar core on every SIMD target, over the
// float input sets of the sweeps (support/inputs.h): in the exhaustive build
// all 2^32 float inputs under nearest-even with both overflow policies, and
// the 2^28 decision-covering set under every other rounding (stochastic
// included), flag counts included.
//
// One pass per input chunk: the scalar result of each (policy, input) is
// computed once and every target's bulk result is compared against it; the
// chunks run on every core, each thread forcing its own target
// (ScopedSimdTarget is per thread).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "lplab/kernels.h"
#include "support/inputs.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

using kernels::ConvertOptions;
using kernels::FlagCounts;

constexpr std::uint64_t kChunk = std::uint64_t{1} << 16;

struct Policy {
  Round round;
  Overflow overflow;
  bool stats;
};

struct Mismatch {
  std::mutex m;
  std::uint64_t chunks = 0;
  std::string first;
  void record(const std::string& what) {
    std::lock_guard lock(m);
    if (chunks++ == 0) first = what;
  }
};

// Sweeps `Inputs` for format T under each policy on every target.
template <class T, class Inputs>
void sweep(const std::vector<Policy>& policies) {
  using Code = typename T::storage_type;
  const auto targets = kernels::simd_targets();
  ASSERT_FALSE(targets.empty());
  Mismatch bad;
  constexpr std::uint64_t seed = 0x5EED;
  const std::uint64_t chunks = (Inputs::count + kChunk - 1) / kChunk;
  std::atomic<std::uint64_t> next{0}, visited{0};
  auto chunk = [&](std::uint64_t c) {
    const std::uint64_t begin = c * kChunk;
    const std::size_t n = static_cast<std::size_t>(std::min(kChunk, Inputs::count - begin));
    thread_local std::vector<float> in;
    thread_local std::vector<Code> ref, out;
    in.resize(n);
    ref.resize(n);
    out.resize(n);
    for (std::size_t j = 0; j < n; ++j) in[j] = detail::bit_cast<float>(Inputs::bits(begin + j));
    for (const Policy& p : policies) {
      // The scalar core, element by element, with the same random bits.
      FlagCounts ref_counts;
      for (std::size_t j = 0; j < n; ++j) {
        const std::uint32_t bits =
            p.round == Round::stochastic ? kernels::stochastic_bits(seed, begin + j) : 0;
        Flags f;
        ref[j] = lplab::convert<T>(in[j], p.round, p.overflow, p.stats ? &f : nullptr, bits).bits();
        ref_counts.add(f);
      }
      for (const kernels::SimdTarget& t : targets) {
        kernels::ScopedSimdTarget scope(t.id);
        FlagCounts counts;
        kernels::convert(std::span<const float>(in), std::span(reinterpret_cast<T*>(out.data()), n),
                         ConvertOptions{.round = p.round, .overflow = p.overflow, .seed = seed,
                                        .stats = p.stats ? &counts : nullptr, .first_index = begin});
        if (std::memcmp(ref.data(), out.data(), n * sizeof(Code)) != 0 ||
            (p.stats && !(counts == ref_counts))) {
          std::size_t j = 0;
          while (j < n && ref[j] == out[j]) ++j;
          char buf[160];
          if (j < n) {
            std::snprintf(buf, sizeof buf, "%s round %d overflow %d: input 0x%08x scalar 0x%x bulk 0x%x",
                          t.name.c_str(), static_cast<int>(p.round), static_cast<int>(p.overflow),
                          detail::bit_cast<std::uint32_t>(in[j]), unsigned{ref[j]}, unsigned{out[j]});
          } else {
            std::snprintf(buf, sizeof buf, "%s round %d overflow %d: flag counts differ in chunk at 0x%llx",
                          t.name.c_str(), static_cast<int>(p.round), static_cast<int>(p.overflow),
                          static_cast<unsigned long long>(begin));
          }
          bad.record(buf);
        }
      }
    }
    visited.fetch_add(1);
  };
  // Chunks handed out one at a time to a worker per core.
  auto worker = [&] {
    for (std::uint64_t c; (c = next.fetch_add(1)) < chunks;) chunk(c);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::max(1u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  EXPECT_EQ(visited.load(), chunks);
  EXPECT_EQ(bad.chunks, 0u) << "first: " << bad.first;
  std::printf("  %s: %llu inputs x %zu policies x %zu targets, 0 differences expected, %llu chunks differ\n",
              T::descriptor.name.c_str(), static_cast<unsigned long long>(Inputs::count),
              policies.size(), targets.size(), static_cast<unsigned long long>(bad.chunks));
}

template <class T>
class BulkSweep : public ::testing::Test {};
TYPED_TEST_SUITE(BulkSweep, SmallFormats, FormatNames);

// Every float input (the quick build: the quick set), nearest-even, values.
TYPED_TEST(BulkSweep, all_floats_nearest_even_both_overflow_policies) {
  sweep<TypeParam, OracleInputs>({{Round::nearest_even, Overflow::ieee, false},
                                  {Round::nearest_even, Overflow::saturate, false}});
}

// Every rounding decision (2^28 inputs), every rounding, values and flags.
TYPED_TEST(BulkSweep, decision_space_every_rounding_with_flags) {
  std::vector<Policy> policies;
  for (Round r : {Round::nearest_even, Round::nearest_away, Round::toward_zero, Round::upward,
                  Round::downward, Round::stochastic})
    for (Overflow o : {Overflow::ieee, Overflow::saturate}) policies.push_back({r, o, true});
  sweep<TypeParam, ReferenceInputs>(policies);
}

}  // namespace
}  // namespace lplab::testing
