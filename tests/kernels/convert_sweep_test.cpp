// The bulk kernels on all 2^32 float inputs (exhaustive build; the quick set
// otherwise) under nearest-even, for the (format, overflow policy) pairs that
// CUDA has no conversion for: tests/formats/conversion_sweep_test.cpp already
// holds the bulk kernels to the scalar core on every input of every CUDA
// conversion, and on the 2^28 decision-covering set under every policy.
// Together every format runs all 2^32 inputs under nearest-even with both
// overflow policies on every SIMD target.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <vector>

#include "support/bulk_check.h"
#include "support/inputs.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

template <class T>
void sweep_nearest_even(Overflow o) {
  using Code = typename T::storage_type;
  BulkMismatches bad;
  std::atomic<std::uint64_t> visited{0};
  for_each_chunk(OracleInputs::count, std::uint64_t{1} << 16, [&](std::uint64_t begin, std::size_t n) {
    thread_local std::vector<float> in;
    thread_local std::vector<Code> scalar;
    in.resize(n);
    scalar.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
      in[j] = detail::bit_cast<float>(OracleInputs::bits(begin + j));
      scalar[j] = convert<T>(in[j], Round::nearest_even, o).bits();
    }
    check_bulk<T>(in, scalar, nullptr, Round::nearest_even, o, begin, bad);
    visited += n;
  });
  EXPECT_EQ(visited.load(), OracleInputs::count);
  EXPECT_EQ(bad.count(), 0u) << "first: " << bad.first();
  std::printf("  %s nearest_even %s: %llu inputs on %zu SIMD targets, %llu differing chunks\n",
              T::descriptor.name.c_str(), o == Overflow::ieee ? "ieee" : "saturate",
              static_cast<unsigned long long>(visited.load()), kernels::simd_targets().size(),
              static_cast<unsigned long long>(bad.count()));
}

TEST(BulkSweep, float16_nearest_even_saturate) { sweep_nearest_even<float16>(Overflow::saturate); }
TEST(BulkSweep, bfloat16_nearest_even_saturate) { sweep_nearest_even<bfloat16>(Overflow::saturate); }
TEST(BulkSweep, float8_e4m3fnuz_nearest_even_ieee) { sweep_nearest_even<float8_e4m3fnuz>(Overflow::ieee); }
TEST(BulkSweep, float8_e4m3fnuz_nearest_even_saturate) {
  sweep_nearest_even<float8_e4m3fnuz>(Overflow::saturate);
}
TEST(BulkSweep, float8_e5m2fnuz_nearest_even_ieee) { sweep_nearest_even<float8_e5m2fnuz>(Overflow::ieee); }
TEST(BulkSweep, float8_e5m2fnuz_nearest_even_saturate) {
  sweep_nearest_even<float8_e5m2fnuz>(Overflow::saturate);
}
TEST(BulkSweep, float8_e8m0fnu_nearest_even_ieee) { sweep_nearest_even<float8_e8m0fnu>(Overflow::ieee); }
TEST(BulkSweep, float8_e8m0fnu_nearest_even_saturate) {
  sweep_nearest_even<float8_e8m0fnu>(Overflow::saturate);
}

}  // namespace
}  // namespace lplab::testing
