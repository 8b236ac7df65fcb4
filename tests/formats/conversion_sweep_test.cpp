// Float -> format conversions over the float input set (all 2^32 patterns in
// the exhaustive build): against CUDA's host conversions for every (format,
// rounding, overflow) CUDA offers, and against the independent Reference for
// every format under every rounding and overflow policy, flags included. In
// the same pass the bulk kernels (lplab/kernels) on every SIMD target are held
// to the scalar core's results (support/bulk_check.h).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>

#include "support/bulk_check.h"
#if LPLAB_HAVE_CUDA_ORACLE  // CUDA's headers were found (cmake/CudaOracle.cmake)
#include "support/cuda_oracles.h"
#endif
#include "support/inputs.h"
#include "support/reference.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Inputs per chunk: the scalar results of a chunk are kept for the bulk check.
constexpr std::uint64_t kSweepChunk = std::uint64_t{1} << 16;

void keep_first(std::atomic<std::uint64_t>& first, std::uint64_t i) {
  std::uint64_t cur = first.load();
  while (i < cur && !first.compare_exchange_weak(cur, i)) {
  }
}

#if LPLAB_HAVE_CUDA_ORACLE
class CudaOracle : public ::testing::TestWithParam<CudaConversion> {};

// lplab's scalar conversion against CUDA's, and the bulk kernels on every SIMD
// target against lplab's scalar conversion, in one pass over the inputs.
TEST_P(CudaOracle, matches_bit_for_bit) {
  const CudaConversion& c = GetParam();
  with_target(c.target, [&]<class T>() {
    using Code = typename T::storage_type;
    constexpr bool has_nan = finfo<T>::has_nan;
    std::atomic<std::uint64_t> nan_inputs{0}, mismatches{0}, visited{0};
    std::atomic<std::uint64_t> first{~std::uint64_t{0}};
    BulkMismatches bulk_bad;
    for_each_chunk(OracleInputs::count, kSweepChunk, [&](std::uint64_t begin, std::size_t n) {
      thread_local std::vector<float> in;
      thread_local std::vector<Code> scalar;
      in.resize(n);
      scalar.resize(n);
      std::uint64_t bad = 0, nans = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const float x = detail::bit_cast<float>(OracleInputs::bits(begin + j));
        in[j] = x;
        const T ours = convert<T>(x, c.round, c.overflow);
        scalar[j] = ours.bits();
        const std::uint32_t cuda = c.from_float(x);
        bool differs;
        if (has_nan && std::isnan(x)) {  // CUDA canonicalizes NaN; compare classes
          ++nans;
          differs = !(isnan(T::from_bits(cuda)) && isnan(ours));
        } else if constexpr (std::is_same_v<T, float8_e8m0fnu>) {
          differs = cuda != cuda_expected<T>(x, c.round, c.overflow);
        } else {
          differs = cuda != ours.bits();
        }
        if (differs) {
          ++bad;
          keep_first(first, begin + j);
        }
      }
      mismatches += bad;
      nan_inputs += nans;
      visited += n;
      // All 2^32 inputs for the bulk kernels under nearest-even; the other
      // roundings are held to the scalar core on the decision-covering set
      // (ReferenceSweep below), which reaches every rounding decision.
      if (c.round == Round::nearest_even)
        check_bulk<T>(in, scalar, nullptr, c.round, c.overflow, begin, bulk_bad);
    });
    ::testing::Test::RecordProperty("inputs", std::to_string(visited.load()));
    ::testing::Test::RecordProperty("mismatches", std::to_string(mismatches.load()));
    EXPECT_EQ(visited.load(), OracleInputs::count);
    EXPECT_GT(nan_inputs.load() + (has_nan ? 0 : 1), 0u);
    if (mismatches != 0) {
      const std::uint32_t xb = OracleInputs::bits(first);
      const float x = detail::bit_cast<float>(xb);
      ADD_FAILURE() << mismatches << " mismatches; first: x=" << hex(xb) << " (" << x
                    << ") cuda=" << hex(c.from_float(x))
                    << " lplab=" << hex(convert<T>(x, c.round, c.overflow).bits());
    }
    EXPECT_EQ(bulk_bad.count(), 0u) << "bulk kernels differ from the scalar core; first: "
                                    << bulk_bad.first();
    std::printf("  %s: %llu inputs; scalar vs CUDA: %llu mismatches; bulk on %zu SIMD targets vs "
                "scalar (nearest-even only): %llu differing chunks\n",
                c.name.c_str(), static_cast<unsigned long long>(visited.load()),
                static_cast<unsigned long long>(mismatches.load()), kernels::simd_targets().size(),
                static_cast<unsigned long long>(bulk_bad.count()));
  });
}

INSTANTIATE_TEST_SUITE_P(f32, CudaOracle, ::testing::ValuesIn(cuda_conversions()),
                         [](const auto& info) { return "f32_to_" + info.param.name; });
#endif  // LPLAB_HAVE_CUDA_ORACLE

template <class T>
class ReferenceSweep : public ::testing::Test {};

TYPED_TEST_SUITE(ReferenceSweep, SmallFormats, FormatNames);

// Every rounding (stochastic with a per-input random draw) and both overflow
// policies, value and flags, in one pass over the inputs: the scalar core
// against the independent Reference, then the bulk kernels on every SIMD
// target against the scalar core (values alone, and values with flag counts).
TYPED_TEST(ReferenceSweep, all_policies_match_reference) {
  using T = TypeParam;
  using Code = typename T::storage_type;
  const Reference ref(T::descriptor);
  constexpr std::size_t kCombos = std::size(kAllRounds) * std::size(kAllOverflows);
  std::array<std::atomic<std::uint64_t>, kCombos> value_bad{}, flags_bad{};
  std::array<std::atomic<std::uint64_t>, kCombos> first{};
  for (auto& f : first) f = ~std::uint64_t{0};
  std::atomic<std::uint64_t> visited{0}, bad_inputs{0};
  BulkMismatches bulk_bad;
  for_each_chunk(ReferenceInputs::count, kSweepChunk, [&](std::uint64_t begin, std::size_t n) {
    thread_local std::vector<float> in;
    thread_local std::array<std::vector<Code>, kCombos> scalar;
    std::array<kernels::FlagCounts, kCombos> counts{};
    in.resize(n);
    for (auto& v : scalar) v.resize(n);
    std::uint64_t bad_here = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint64_t i = begin + j;
      const float x = detail::bit_cast<float>(ReferenceInputs::bits(i));
      in[j] = x;
      const auto p = ref.prepare(Real{std::isnan(x), std::isnan(x) ? 0.0 : x, false});
      const std::uint32_t random = kernels::stochastic_bits(kSweepSeed, i);
      bool bad = false;
      std::size_t k = 0;
      for (Round r : kAllRounds) {
        for (Overflow o : kAllOverflows) {
          Flags flags;
          const T got = convert<T>(x, r, o, &flags, random);
          scalar[k][j] = got.bits();
          counts[k].add(flags);
          const Expect want = ref.round(p, r, o, random);
          const bool vbad = !ref.matches(want, got.bits());
          const bool fbad = flags.bits != want.flags;
          if (vbad || fbad) {
            bad = true;
            (vbad ? value_bad : flags_bad)[k].fetch_add(1, std::memory_order_relaxed);
            keep_first(first[k], i);
          }
          ++k;
        }
      }
      bad_here += bad;
    }
    std::size_t k = 0;
    for (Round r : kAllRounds) {
      for (Overflow o : kAllOverflows) {
        check_bulk<T>(in, scalar[k], &counts[k], r, o, begin, bulk_bad);
        ++k;
      }
    }
    bad_inputs += bad_here;
    visited += n;
  });
  EXPECT_EQ(visited.load(), ReferenceInputs::count);
  ::testing::Test::RecordProperty("mismatching_inputs", std::to_string(bad_inputs.load()));
  std::size_t k = 0;
  for (Round r : kAllRounds) {
    for (Overflow o : kAllOverflows) {
      const char* on = o == Overflow::ieee ? "ieee" : "saturate";
      if (value_bad[k] != 0 || flags_bad[k] != 0) {
        const std::uint32_t xb = ReferenceInputs::bits(first[k]);
        const float x = detail::bit_cast<float>(xb);
        const std::uint32_t random = kernels::stochastic_bits(kSweepSeed, first[k]);
        Flags f;
        const T got = convert<T>(x, r, o, &f, random);
        const Expect want = ref.round(Real{std::isnan(x), std::isnan(x) ? 0.0 : x, false}, r, o, random);
        ADD_FAILURE() << round_name(r) << "/" << on << ": " << value_bad[k] << " value and "
                      << flags_bad[k] << " flag mismatches; first x=" << hex(xb) << " (" << x
                      << "): lplab " << hex(got.bits()) << " flags " << int(f.bits)
                      << ", reference " << (want.nan ? "nan" : std::to_string(want.value))
                      << " flags " << int(want.flags);
      }
      ++k;
    }
  }
  EXPECT_EQ(bulk_bad.count(), 0u) << "bulk kernels differ from the scalar core; first: "
                                  << bulk_bad.first();
  std::printf("  %s: %llu inputs x %zu policies; bulk on %zu SIMD targets vs scalar: %llu differing "
              "chunks\n",
              T::descriptor.name.c_str(), static_cast<unsigned long long>(visited.load()), kCombos,
              kernels::simd_targets().size(), static_cast<unsigned long long>(bulk_bad.count()));
}

}  // namespace
}  // namespace lplab::testing
