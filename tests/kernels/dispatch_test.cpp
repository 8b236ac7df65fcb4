// One dispatch mechanism (kernels/src/dispatch.h): every kernel, the machine
// probes included, runs the target that LPLAB_SIMD_TARGET / force_simd_target
// choose, and a kernel compiled for one target only is called safely.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <string>

#include "lplab/kernels/probes.h"
#include "lplab/kernels/targets.h"

namespace dispatch_static {
const char* dispatched_name();
const char* static_name();
}  // namespace dispatch_static

namespace {

using namespace lplab::kernels;

// Lanes of one vector of float per Highway target name (hwy/targets.h): the
// widths a probe forced to that target must measure.
std::size_t float_lanes_of(const std::string& target) {
  static const std::map<std::string, std::size_t> lanes = {
      {"AVX3_SPR", 16}, {"AVX3_ZEN4", 16}, {"AVX3", 16}, {"AVX2", 8},  {"SSE4", 4},
      {"SSSE3", 4},     {"SSE2", 4},       {"EMU128", 4}, {"NEON", 4}, {"SCALAR", 1}};
  const auto it = lanes.find(target);
  return it == lanes.end() ? 0 : it->second;
}

// The roofs are measured in the target every kernel runs: forcing a target
// changes the vector width the FMA probe works in (the experiments'
// own Highway loop, before, always took the CPU's best).
TEST(Dispatch, ProbesRunTheForcedTarget) {
  for (const SimdTarget& t : simd_targets()) {
    SCOPED_TRACE(t.name);
    const std::size_t lanes = float_lanes_of(t.name);
    ASSERT_NE(lanes, 0u) << "no lane count known for target " << t.name;
    const ScopedSimdTarget pin(t.id);
    EXPECT_EQ(probe::f32_lanes(), lanes);
    constexpr std::size_t kIters = 3;
    EXPECT_EQ(probe::fma_f32(kIters), 2.0 * probe::kFmaChains * static_cast<double>(lanes) * kIters);
    const std::size_t lanes64 = lanes > 1 ? lanes / 2 : 1;
    EXPECT_EQ(probe::fma_f64(kIters), 2.0 * probe::kFmaChains * static_cast<double>(lanes64) * kIters);
  }
}

// STREAM's kernels compute what they say on every target, the unaligned
// edges of [lo, hi) included, with and without non-temporal stores.
TEST(Dispatch, StreamProbesOnEveryTarget) {
  constexpr std::size_t kN = 67;
  alignas(64) double a[kN], b[kN], c[kN];
  for (const SimdTarget& t : simd_targets()) {
    SCOPED_TRACE(t.name);
    const ScopedSimdTarget pin(t.id);
    for (const bool nt : {false, true}) {
      for (std::size_t i = 0; i < kN; ++i) a[i] = static_cast<double>(i), b[i] = 1.0, c[i] = -1.0;
      probe::stream_copy(a, c, 3, kN - 2, nt);
      for (std::size_t i = 0; i < kN; ++i)
        ASSERT_EQ(c[i], i >= 3 && i < kN - 2 ? static_cast<double>(i) : -1.0) << i;
      probe::stream_triad(a, b, c, 2.0, 1, kN - 5, nt);
      for (std::size_t i = 0; i < kN; ++i) {
        const double copied = i >= 3 && i < kN - 2 ? static_cast<double>(i) : -1.0;
        ASSERT_EQ(a[i], i >= 1 && i < kN - 5 ? 1.0 + 2.0 * copied : static_cast<double>(i)) << i;
      }
    }
  }
}

TEST(Dispatch, Bf16DotProbeCountsItsFlopsOrRefuses) {
  if (!probe::has_bf16_dot()) {
    EXPECT_THROW(probe::bf16_dot(1), std::invalid_argument);
    return;
  }
  // 16 lanes x 2 products x 2 FLOPs per VDPBF16PS, kBf16Chains per round.
  EXPECT_EQ(probe::bf16_dot(5), 64.0 * probe::kBf16Chains * 5);
}

// A kernel file compiled for a single target has a one-entry dispatch table
// (hwy/highway.h). Indexing it by the process's target -- what the kernels
// did before LPLAB_DISPATCH, once any kernel had made Highway choose the
// CPU's best -- reads past the table's end; LPLAB_DISPATCH calls the one
// entry, whatever target is chosen or forced.
TEST(Dispatch, SingleTargetTableIsNeverIndexedPastItsEnd) {
  (void)detail::dispatched_target_name();  // Highway has chosen the CPU's target
  EXPECT_STREQ(dispatch_static::dispatched_name(), dispatch_static::static_name());
  for (const SimdTarget& t : simd_targets()) {
    const ScopedSimdTarget pin(t.id);
    EXPECT_STREQ(dispatch_static::dispatched_name(), dispatch_static::static_name()) << t.name;
  }
}

}  // namespace
