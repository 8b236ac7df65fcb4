// Double inputs (rounded once, never through float), and the float32 model
// against the machine's own IEEE binary32 arithmetic and conversions under all
// four hardware rounding modes. This file sets the floating-point environment
// (compiled with -frounding-math); the library never does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <random>
#include <vector>

#include "lplab/lab/parallel.h"
#if LPLAB_HAVE_CUDA_ORACLE  // CUDA's headers were found (cmake/CudaOracle.cmake)
#include "support/cuda_oracles.h"
#endif
#include "support/reference.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

// The floating-point formats' overflow policies (Overflow::wrap is for the
// integer formats, and ieee in these).
constexpr Overflow kOverflows[] = {Overflow::ieee, Overflow::saturate};

// Doubles that matter for a format: every value, every midpoint between
// neighbours (and past max), each nudged by +-1 and +-2^20 double ulps, plus
// 200,000 random doubles spread over the format's range and beyond.
template <class T>
std::vector<double> boundary_doubles() {
  std::vector<double> values;
  for (std::uint64_t c = 0; c < code_count<T>(); ++c) {
    const RefDecoded r = ref_decode(T::descriptor, c);
    if (r.cls == RefClass::number && std::isfinite(r.value)) values.push_back(std::fabs(r.value));
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  const double gap = values.back() - values[values.size() - 2];
  values.push_back(values.back() + gap);  // virtual neighbour past max
  std::vector<double> out;
  auto nudge = [&](double v) {
    out.push_back(v);
    double up = v, down = v;
    for (int k = 0; k < 2; ++k) {
      up = std::nextafter(up, INFINITY);
      down = std::nextafter(down, 0.0);
      out.push_back(up);
      out.push_back(down);
    }
    out.push_back(v * (1 + 0x1p-32));
    out.push_back(v * (1 - 0x1p-32));
  };
  for (std::size_t i = 0; i + 1 < values.size(); ++i) {
    nudge(values[i]);
    nudge(values[i] + (values[i + 1] - values[i]) / 2);
  }
  nudge(values.back());
  std::mt19937_64 rng(42);
  const double lo = std::log2(finfo<T>::smallest_subnormal) - 4, hi = std::log2(finfo<T>::max) + 4;
  std::uniform_real_distribution<double> e(lo, hi);
  for (int i = 0; i < 200000; ++i) out.push_back(std::exp2(e(rng)));
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) out.push_back(-out[i]);
  out.push_back(0.0);
  out.push_back(-0.0);
  out.push_back(INFINITY);
  out.push_back(-INFINITY);
  out.push_back(NAN);
  return out;
}

template <class T>
class DoubleInputs : public ::testing::Test {};
TYPED_TEST_SUITE(DoubleInputs, SmallFormats, FormatNames);

TYPED_TEST(DoubleInputs, every_policy_matches_reference) {
  using T = TypeParam;
  const Reference ref(T::descriptor);
  const auto inputs = boundary_doubles<T>();
  std::uint64_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const double x = inputs[i];
    const auto p = ref.prepare(Real{std::isnan(x), std::isnan(x) ? 0.0 : x, false});
    for (Round r : kRounds) {
      for (Overflow o : kOverflows) {
        Flags f;
        const std::uint32_t rnd = mix32(i);
        const T got = convert<T>(x, r, o, &f, rnd);
        const Expect want = ref.round(p, r, o, rnd);
        if (!ref.matches(want, got.bits()) || f.bits != want.flags) {
          if (bad++ == 0)
            first = std::to_string(x) + " " + round_name(r) + ": lplab " +
                    std::to_string(static_cast<double>(got)) + " ref " + std::to_string(want.value);
        }
      }
    }
  }
  EXPECT_EQ(bad, 0u) << first;
}

#if LPLAB_HAVE_CUDA_ORACLE
TEST(DoubleInputs, cuda_double_conversions) {
  for (const CudaConversion& c : cuda_conversions()) {
    if (c.from_double == nullptr) continue;
    with_target(c.target, [&]<class T>() {
      std::uint64_t bad = 0, checked = 0;
      for (double x : boundary_doubles<T>()) {
        const std::uint32_t cuda = c.from_double(x);
        ++checked;
        if (std::isnan(x) && finfo<T>::has_nan) {
          bad += !(isnan(T::from_bits(cuda)) && isnan(convert<T>(x, c.round, c.overflow)));
          continue;
        }
        if (cuda != cuda_expected<T>(x, c.round, c.overflow)) {
          if (bad++ == 0)
            ADD_FAILURE() << c.name << " x=" << x << " cuda=" << cuda
                          << " lplab=" << +convert<T>(x, c.round, c.overflow).bits();
        }
      }
      EXPECT_GT(checked, 400000u);
      EXPECT_EQ(bad, 0u) << c.name;
    });
  }
}
#endif  // LPLAB_HAVE_CUDA_ORACLE

// The float32 model against the hardware. 2^22 random bit patterns for
// conversions from double, 2^21 operand pairs for arithmetic, per rounding mode.
struct HardwareMode {
  Round round;
  int fe;
};
constexpr HardwareMode kHardwareModes[] = {{Round::nearest_even, FE_TONEAREST},
                                           {Round::toward_zero, FE_TOWARDZERO},
                                           {Round::upward, FE_UPWARD},
                                           {Round::downward, FE_DOWNWARD}};

std::uint64_t random_bits(std::uint64_t i) {
  return (static_cast<std::uint64_t>(mix32(2 * i)) << 32) | mix32(2 * i + 1);
}

TEST(Float32Model, conversion_from_double_matches_hardware) {
  for (const auto& m : kHardwareModes) {
    std::fesetround(m.fe);
    std::uint64_t bad = 0;
    for (std::uint64_t i = 0; i < (1u << 22); ++i) {
      // Doubles near the float range, with random low bits.
      std::uint64_t b = random_bits(i);
      const std::uint64_t e = 1023 - 160 + (b >> 52) % 320;
      b = (b & 0x800FFFFFFFFFFFFFull) | (e << 52);
      const double x = detail::bit_cast<double>(b);
      const volatile double vx = x;
      const float native = static_cast<float>(vx);
      bad += detail::bit_cast<std::uint32_t>(native) != convert<float32>(x, m.round).bits();
    }
    std::fesetround(FE_TONEAREST);
    EXPECT_EQ(bad, 0u) << round_name(m.round);
  }
}

TEST(Float32Model, arithmetic_matches_hardware) {
  for (const auto& m : kHardwareModes) {
    std::uint64_t bad[5] = {};
    std::fesetround(m.fe);
    for (std::uint64_t i = 0; i < (1u << 21); ++i) {
      const std::uint64_t b = random_bits(i);
      // Mostly close exponents (cancellation, ties), sometimes anything.
      std::uint32_t ua = static_cast<std::uint32_t>(b), ub = static_cast<std::uint32_t>(b >> 32);
      if ((i & 3) != 0) ub = (ub & 0x80FFFFFFu) | (ua & 0x7F000000u);
      const volatile float a = detail::bit_cast<float>(ua), c = detail::bit_cast<float>(ub);
      const float32 la = float32::from_bits(ua), lc = float32::from_bits(ub);
      auto same = [](float native, float32 ours) {
        const std::uint32_t n = detail::bit_cast<std::uint32_t>(native);
        return std::isnan(native) ? isnan(ours) : n == ours.bits();
      };
      bad[0] += !same(a + c, add(la, lc, m.round));
      bad[1] += !same(a - c, sub(la, lc, m.round));
      bad[2] += !same(a * c, mul(la, lc, m.round));
      bad[3] += !same(a / c, div(la, lc, m.round));
      bad[4] += !same(std::sqrt(a), sqrt(la, m.round));
    }
    std::fesetround(FE_TONEAREST);
    for (int k = 0; k < 5; ++k) EXPECT_EQ(bad[k], 0u) << "op " << k << " " << round_name(m.round);
  }
}

TEST(Float32Model, fma_matches_hardware) {
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < (1u << 20); ++i) {
    const std::uint64_t b = random_bits(i);
    std::uint32_t ua = static_cast<std::uint32_t>(b), ub = static_cast<std::uint32_t>(b >> 32);
    std::uint32_t uc = mix32(i + 12345);
    ua = (ua & 0x83FFFFFFu) | 0x3C000000u;  // exponents near 1 so that a*b and c interact
    ub = (ub & 0x83FFFFFFu) | 0x3C000000u;
    uc = (uc & 0x87FFFFFFu) | 0x38000000u;
    const volatile float a = detail::bit_cast<float>(ua), bb = detail::bit_cast<float>(ub),
                         c = detail::bit_cast<float>(uc);
    const float native = std::fma(a, bb, c);
    bad += detail::bit_cast<std::uint32_t>(native) !=
           fma(float32::from_bits(ua), float32::from_bits(ub), float32::from_bits(uc)).bits();
  }
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace lplab::testing
