// Float -> int8 and int4 under nearest-even, the quantizers' rule (PTX's
// cvt.rni.sat.s8.f32), on every float (LPLAB_SWEEP=full: all 2^32 patterns;
// the quick suite: the quick float set): the bulk kernels on the SIMD target
// they dispatch to against an independent reference -- the C library's
// nearbyint in binary64, where every float is exact, then the range applied
// by comparison. Saturation and IEEE overflow agree for an integer (no
// infinity, no NaN): the quick set sweeps both, the full sweep saturation.
// The scalar core meets the same
// reference on the decision-covering set under every policy in
// tests/formats/integer_test.cpp, and the kernels meet the scalar core on
// every target in tests/kernels/convert_test.cpp; docs/testing.md argues
// what this sweep adds.
#include <gtest/gtest.h>

#include <atomic>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <vector>

#include "lplab/kernels.h"
#include "support/bulk_check.h"
#include "support/inputs.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

template <class T>
class IntegerSweep : public ::testing::Test {};
using SweptIntegers = ::testing::Types<int8, int4>;
TYPED_TEST_SUITE(IntegerSweep, SweptIntegers, FormatNames);

// The reference code, by the float unit's own rounding: x clamped to
// [lo - 1, hi + 1] (NaN taken to 0), then rounded to an integer by adding and
// subtracting 1.5 * 2^23 -- the sum's quantum is 1, so the addition rounds x
// to nearest even (the default rounding mode, checked) -- and clamped to the
// range [-2^(N-1), 2^(N-1) - 1]. Branch-free, so the compiler vectorizes it:
// the sweep's time is the kernel's. (tests/formats/integer_test.cpp checks
// the scalar core against nearbyint on the decision-covering set.)
template <class T>
std::uint8_t reference_code(float x) {
  constexpr int bits = finfo<T>::bits;
  constexpr float lo = -static_cast<float>(1 << (bits - 1)), hi = static_cast<float>((1 << (bits - 1)) - 1);
  constexpr float kMagic = 0x1.8p23f;
  const float xc = x != x ? 0.0f : std::min(std::max(x, lo - 1), hi + 1);
  const float r = std::min(std::max((xc + kMagic) - kMagic, lo), hi);  // (no -ffast-math: kept as written)
  return static_cast<std::uint8_t>(static_cast<int>(r) & ((1 << bits) - 1));
}

TYPED_TEST(IntegerSweep, nearest_even_every_float_against_the_float_unit) {
  using T = TypeParam;
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  const SweepExtent extent = SweepExtent::from_environment();
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 16;
  std::atomic<std::uint64_t> bad{0}, first_bad{~std::uint64_t{0}}, saturated{0};
  for_each_chunk(extent.range_count(), kChunk, [&](std::uint64_t begin, std::size_t n) {
    std::vector<float> in(n);
    if (extent.full) {
      for (std::size_t j = 0; j < n; ++j) in[j] = detail::bit_cast<float>(static_cast<std::uint32_t>(begin + j));
    } else {
      for (std::size_t j = 0; j < n; ++j) in[j] = detail::bit_cast<float>(extent.range_bits(begin + j));
    }
    std::vector<T> out(n);
    std::vector<std::uint8_t> want(n);
    std::uint64_t chunk_bad = 0, chunk_saturated = 0;
    for (std::size_t j = 0; j < n; ++j) want[j] = reference_code<T>(in[j]);
    for (std::size_t j = 0; j < n; ++j) chunk_saturated += std::fabs(in[j]) > finfo<T>::max + 0.5f;
    // (IEEE overflow takes the same steps as saturation into an integer, and
    // the quick set checks it; the full sweep runs saturation alone.)
    for (Overflow o : {Overflow::saturate, Overflow::ieee}) {
      if (extent.full && o == Overflow::ieee) continue;
      kernels::convert(std::span<const float>(in), std::span(out), Round::nearest_even, o);
      static_assert(sizeof(T) == 1);
      if (std::memcmp(out.data(), want.data(), n) == 0) continue;
      for (std::size_t j = 0; j < n; ++j) {
        if (out[j].bits() != want[j]) {
          ++chunk_bad;
          std::uint64_t cur = first_bad.load();
          while (begin + j < cur && !first_bad.compare_exchange_weak(cur, begin + j)) {
          }
        }
      }
    }
    bad += chunk_bad;
    saturated += chunk_saturated;
  });
  const std::uint64_t f = first_bad.load();
  EXPECT_EQ(bad.load(), 0u) << extent.name() << ": first input "
                            << (f == ~std::uint64_t{0} ? 0.0f : detail::bit_cast<float>(extent.range_bits(f)));
  EXPECT_GT(saturated.load(), extent.range_count() / 4);  // most floats lie past the range
}

}  // namespace
}  // namespace lplab::testing
