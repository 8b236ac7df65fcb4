// The sweeps' second half: the bulk kernels (lplab/kernels/convert.h) on the
// SIMD targets against the scalar results a sweep has already computed for a
// chunk of inputs -- one pass per input, every result compared with one
// reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "lplab/kernels.h"

namespace lplab::testing {

// The seed of the random bits the sweeps use for stochastic rounding: input i
// gets kernels::stochastic_bits(kSweepSeed, i), in the scalar core and in the
// bulk kernels alike.
inline constexpr std::uint64_t kSweepSeed = 0x5EED;

// Calls fn(begin, n) for consecutive chunks of [0, count) on every core,
// handing chunks out one at a time.
template <class F>
void for_each_chunk(std::uint64_t count, std::uint64_t chunk, F&& fn) {
  std::atomic<std::uint64_t> next{0};
  auto worker = [&] {
    for (std::uint64_t c; (c = next.fetch_add(1)) * chunk < count;) {
      const std::uint64_t begin = c * chunk;
      fn(begin, static_cast<std::size_t>(std::min(chunk, count - begin)));
    }
  };
  std::vector<std::thread> pool;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

// The SIMD targets a sweep runs: every target this build and CPU run that is
// no better than the one the kernels dispatch to now. Normally that is all of
// them; with LPLAB_SIMD_TARGET=AVX2 on an AVX-512 machine it is what an
// AVX2-only machine runs, so that machine's sweeps can be measured here.
inline const std::vector<kernels::SimdTarget>& sweep_targets() {
  static const std::vector<kernels::SimdTarget> targets = [] {
    const std::int64_t native = kernels::current_simd_target().id;
    std::vector<kernels::SimdTarget> out;
    for (const kernels::SimdTarget& t : kernels::simd_targets())
      if (t.id >= native) out.push_back(t);  // lower bits are the better targets
    return out;
  }();
  return targets;
}

// Mismatches found by the bulk checks of one sweep: a count and the first.
class BulkMismatches {
 public:
  void record(const std::string& what) {
    std::lock_guard lock(m_);
    if (count_++ == 0) first_ = what;
  }
  std::uint64_t count() const { return count_; }
  const std::string& first() const { return first_; }

 private:
  std::mutex m_;
  std::uint64_t count_ = 0;
  std::string first_;
};

// Converts in[0, n) (index `first_index` for the stochastic random bits) with
// the bulk kernels on each of `targets` (the target the thread dispatches to
// when empty), values alone and with flag counts when `expect_counts` is
// given, and records each target whose codes or counts differ from the scalar
// core's `expect`.
template <class T>
void check_bulk(std::span<const float> in, std::span<const typename T::storage_type> expect,
                const kernels::FlagCounts* expect_counts, Round r, Overflow o,
                std::uint64_t first_index, BulkMismatches& bad,
                std::span<const kernels::SimdTarget> targets = {}) {
  using Code = typename T::storage_type;
  thread_local std::vector<Code> out;
  out.resize(in.size());
  const kernels::SimdTarget dispatched{0, kernels::current_simd_target().name};
  for (const kernels::SimdTarget& t : targets.empty() ? std::span(&dispatched, 1) : targets) {
    std::optional<kernels::ScopedSimdTarget> scope;
    if (t.id != 0) scope.emplace(t.id);
    // Values alone exercise the fast paths, which stochastic rounding never
    // takes; with flag counts, the general path.
    const int first_pass = expect_counts != nullptr && r == Round::stochastic ? 1 : 0;
    for (int with_stats = first_pass; with_stats <= (expect_counts != nullptr ? 1 : 0); ++with_stats) {
      kernels::FlagCounts counts;
      kernels::convert(in, std::span(reinterpret_cast<T*>(out.data()), in.size()),
                       kernels::ConvertOptions{.round = r, .overflow = o, .seed = kSweepSeed,
                                               .stats = with_stats ? &counts : nullptr,
                                               .first_index = first_index});
      const bool codes_differ = std::memcmp(out.data(), expect.data(), in.size() * sizeof(Code)) != 0;
      if (!codes_differ && (!with_stats || counts == *expect_counts)) continue;
      std::size_t j = 0;
      while (j < in.size() && out[j] == expect[j]) ++j;
      char buf[200];
      if (j < in.size()) {
        std::snprintf(buf, sizeof buf, "%s %s round %d overflow %d%s: input 0x%08x scalar 0x%x bulk 0x%x",
                      T::descriptor.name.c_str(), t.name.c_str(), static_cast<int>(r),
                      static_cast<int>(o), with_stats ? " with flags" : "",
                      detail::bit_cast<std::uint32_t>(in[j]), unsigned{expect[j]}, unsigned{out[j]});
      } else {
        std::snprintf(buf, sizeof buf, "%s %s round %d overflow %d: flag counts differ in the chunk at %llu",
                      T::descriptor.name.c_str(), t.name.c_str(), static_cast<int>(r),
                      static_cast<int>(o), static_cast<unsigned long long>(first_index));
      }
      bad.record(buf);
    }
  }
}

}  // namespace lplab::testing
