// Float -> format conversions over the float input set (all 2^32 patterns in
// the exhaustive build): against CUDA's host conversions for every (format,
// rounding, overflow) CUDA offers, and against the independent Reference for
// every format under every rounding and overflow policy, flags included.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>

#include "lplab/experiments/parallel.h"
#include "support/cuda_oracles.h"
#include "support/inputs.h"
#include "support/reference.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

using experiments::parallel_count;

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

class CudaOracle : public ::testing::TestWithParam<CudaConversion> {};

TEST_P(CudaOracle, matches_bit_for_bit) {
  const CudaConversion& c = GetParam();
  with_target(c.target, [&]<class T>() {
    constexpr bool has_nan = finfo<T>::has_nan;
    std::atomic<std::uint64_t> nan_inputs{0};
    const auto res = parallel_count(OracleInputs::count, [&](std::uint64_t i) {
      const float x = detail::bit_cast<float>(OracleInputs::bits(i));
      const std::uint32_t cuda = c.from_float(x);
      if (has_nan && std::isnan(x)) {  // CUDA canonicalizes NaN; compare classes
        nan_inputs.fetch_add(1, std::memory_order_relaxed);
        return !(isnan(T::from_bits(cuda)) && isnan(convert<T>(x, c.round, c.overflow)));
      }
      return cuda != cuda_expected<T>(x, c.round, c.overflow);
    });
    ::testing::Test::RecordProperty("inputs", std::to_string(res.visited));
    ::testing::Test::RecordProperty("mismatches", std::to_string(res.hits));
    EXPECT_EQ(res.visited, OracleInputs::count);
    EXPECT_GT(nan_inputs.load() + (has_nan ? 0 : 1), 0u);
    if (res.first_hit) {
      const std::uint32_t xb = OracleInputs::bits(*res.first_hit);
      const float x = detail::bit_cast<float>(xb);
      ADD_FAILURE() << res.hits << " mismatches; first: x=" << hex(xb) << " (" << x
                    << ") cuda=" << hex(c.from_float(x))
                    << " lplab=" << hex(convert<T>(x, c.round, c.overflow).bits());
    }
  });
}

INSTANTIATE_TEST_SUITE_P(f32, CudaOracle, ::testing::ValuesIn(cuda_conversions()),
                         [](const auto& info) { return "f32_to_" + info.param.name; });

template <class T>
class ReferenceSweep : public ::testing::Test {};

TYPED_TEST_SUITE(ReferenceSweep, SmallFormats, FormatNames);

// Every rounding (stochastic with a per-input random draw) and both overflow
// policies, value and flags, in one pass over the inputs.
TYPED_TEST(ReferenceSweep, all_policies_match_reference) {
  using T = TypeParam;
  const Reference ref(T::descriptor);
  constexpr std::size_t kCombos = std::size(kAllRounds) * std::size(kAllOverflows);
  std::array<std::atomic<std::uint64_t>, kCombos> value_bad{}, flags_bad{};
  std::array<std::atomic<std::uint64_t>, kCombos> first{};
  for (auto& f : first) f = ~std::uint64_t{0};
  const auto res = parallel_count(ReferenceInputs::count, [&](std::uint64_t i) {
    const float x = detail::bit_cast<float>(ReferenceInputs::bits(i));
    const auto p = ref.prepare(Real{std::isnan(x), std::isnan(x) ? 0.0 : x, false});
    const std::uint32_t random = mix32(i);
    bool bad = false;
    std::size_t k = 0;
    for (Round r : kAllRounds) {
      for (Overflow o : kAllOverflows) {
        Flags flags;
        const T got = convert<T>(x, r, o, &flags, random);
        const Expect want = ref.round(p, r, o, random);
        const bool vbad = !ref.matches(want, got.bits());
        const bool fbad = flags.bits != want.flags;
        if (vbad || fbad) {
          bad = true;
          (vbad ? value_bad : flags_bad)[k].fetch_add(1, std::memory_order_relaxed);
          std::uint64_t cur = first[k].load();
          while (i < cur && !first[k].compare_exchange_weak(cur, i)) {
          }
        }
        ++k;
      }
    }
    return bad;
  });
  EXPECT_EQ(res.visited, ReferenceInputs::count);
  ::testing::Test::RecordProperty("mismatching_inputs", std::to_string(res.hits));
  std::size_t k = 0;
  for (Round r : kAllRounds) {
    for (Overflow o : kAllOverflows) {
      const char* on = o == Overflow::ieee ? "ieee" : "saturate";
      if (value_bad[k] != 0 || flags_bad[k] != 0) {
        const std::uint32_t xb = ReferenceInputs::bits(first[k]);
        const float x = detail::bit_cast<float>(xb);
        Flags f;
        const T got = convert<T>(x, r, o, &f, mix32(first[k]));
        const Expect want = ref.round(Real{std::isnan(x), std::isnan(x) ? 0.0 : x, false}, r, o,
                                      mix32(first[k]));
        ADD_FAILURE() << round_name(r) << "/" << on << ": " << value_bad[k] << " value and "
                      << flags_bad[k] << " flag mismatches; first x=" << hex(xb) << " (" << x
                      << "): lplab " << hex(got.bits()) << " flags " << int(f.bits)
                      << ", reference " << (want.nan ? "nan" : std::to_string(want.value))
                      << " flags " << int(want.flags);
      }
      ++k;
    }
  }
}

}  // namespace
}  // namespace lplab::testing
