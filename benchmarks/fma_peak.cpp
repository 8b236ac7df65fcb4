// The core's measured fp32 FMA peak, as the Empirical Roofline Toolkit
// measures it: independent chains of vector fused multiply-adds, enough of
// them to cover the FMA latency on every port, for the best SIMD target the
// CPU has (Highway dynamic dispatch).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fma_peak.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 24 chains: more than latency x FMA ports on current x86 cores (4-5 x 2), and
// with a and b within 32 vector registers.
constexpr int kChains = 16;

// Runs `iters` rounds of kChains independent FMA chains; returns the FLOPs done
// (2 per lane per FMA) and a value that depends on every chain.
HWY_NOINLINE double FmaLoop(std::size_t iters, float* sink, double* lanes_out) {
  const hn::ScalableTag<float> d;
  auto a = hn::Set(d, 0.999999f), b = hn::Set(d, 1e-7f);
  hn::Vec<decltype(d)> acc[kChains];
#pragma GCC unroll 32
  for (int i = 0; i < kChains; ++i) acc[i] = hn::Set(d, static_cast<float>(i));
  for (std::size_t it = 0; it < iters; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < kChains; ++i) acc[i] = hn::MulAdd(acc[i], a, b);
  }
  auto s = acc[0];
  for (int i = 1; i < kChains; ++i) s = hn::Add(s, acc[i]);
  *sink = hn::GetLane(s);
  *lanes_out = static_cast<double>(hn::Lanes(d));
  return 2.0 * kChains * static_cast<double>(hn::Lanes(d)) * static_cast<double>(iters);
}

}  // namespace bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bench {
HWY_EXPORT(FmaLoop);
double fma_loop(std::size_t iters, float* sink, double* lanes) {
  return HWY_DYNAMIC_DISPATCH(FmaLoop)(iters, sink, lanes);
}
}  // namespace bench
#endif
