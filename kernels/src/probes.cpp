// The machine probes of lplab/kernels/probes.h, compiled for every SIMD
// target and called through LPLAB_DISPATCH like every other kernel.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "probes.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lplab/kernels/probes.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::probe::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// a slightly below 1 and a tiny b keep every chain finite and normal.
template <class T>
HWY_INLINE double FmaLoop(std::size_t iters) {
  const hn::ScalableTag<T> d;
  const auto a = hn::Set(d, T(0.999999)), b = hn::Set(d, T(1e-7));
  hn::Vec<decltype(d)> acc[kFmaChains];
  for (int i = 0; i < kFmaChains; ++i) acc[i] = hn::Set(d, static_cast<T>(i));
  for (std::size_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kFmaChains; ++i) acc[i] = hn::MulAdd(acc[i], a, b);
  }
  auto s = acc[0];
  for (int i = 1; i < kFmaChains; ++i) s = hn::Add(s, acc[i]);
  // A volatile store keeps the chains' results used, so none is elided.
  [[maybe_unused]] static volatile T sink;
  sink = hn::GetLane(s);
  return 2.0 * kFmaChains * static_cast<double>(hn::Lanes(d)) * static_cast<double>(iters);
}

HWY_NOINLINE double FmaF32(std::size_t iters) { return FmaLoop<float>(iters); }
HWY_NOINLINE double FmaF64(std::size_t iters) { return FmaLoop<double>(iters); }
HWY_NOINLINE std::size_t F32Lanes() { return hn::Lanes(hn::ScalableTag<float>()); }

// [lo, hi) in whole vectors where the index is a multiple of the lanes, single
// lanes before and after.
template <class Store>
HWY_INLINE void Sweep(std::size_t lo, std::size_t hi, Store store_at) {
  const hn::ScalableTag<double> d;
  const std::size_t N = hn::Lanes(d);
  std::size_t i = lo;
  for (; i < hi && i % N != 0; ++i) store_at(hn::CappedTag<double, 1>(), i);
  for (; i + N <= hi; i += N) store_at(d, i);
  for (; i < hi; ++i) store_at(hn::CappedTag<double, 1>(), i);
}

// Vectorised by hand: the library's baseline x86-64 (SSE2) loops cannot
// saturate a cache level's bandwidth, and GCC would turn a plain copy loop
// into a memcpy call.
HWY_NOINLINE void CopySweep(const double* HWY_RESTRICT a, double* HWY_RESTRICT c, std::size_t lo,
                            std::size_t hi, bool nt) {
  Sweep(lo, hi, [&](auto d, std::size_t i) {
    if (nt && hn::Lanes(d) > 1) hn::Stream(hn::Load(d, a + i), d, c + i);
    else hn::StoreU(hn::LoadU(d, a + i), d, c + i);
  });
}

HWY_NOINLINE void TriadSweep(double* HWY_RESTRICT a, const double* HWY_RESTRICT b,
                             const double* HWY_RESTRICT c, double scalar, std::size_t lo,
                             std::size_t hi, bool nt) {
  Sweep(lo, hi, [&](auto d, std::size_t i) {
    const auto v = hn::MulAdd(hn::Set(d, scalar), hn::LoadU(d, c + i), hn::LoadU(d, b + i));
    if (nt && hn::Lanes(d) > 1) hn::Stream(v, d, a + i);
    else hn::StoreU(v, d, a + i);
  });
}

}  // namespace lplab::kernels::probe::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include <stdexcept>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "dispatch.h"

namespace lplab::kernels::probe {

HWY_EXPORT(FmaF32);
HWY_EXPORT(FmaF64);
HWY_EXPORT(F32Lanes);
HWY_EXPORT(CopySweep);
HWY_EXPORT(TriadSweep);

double fma_f32(std::size_t iters) { return LPLAB_DISPATCH(FmaF32)(iters); }
double fma_f64(std::size_t iters) { return LPLAB_DISPATCH(FmaF64)(iters); }
std::size_t f32_lanes() { return LPLAB_DISPATCH(F32Lanes)(); }

void stream_copy(const double* a, double* c, std::size_t lo, std::size_t hi, bool nt) {
  LPLAB_DISPATCH(CopySweep)(a, c, lo, hi, nt);
}
void stream_triad(double* a, const double* b, const double* c, double s, std::size_t lo,
                  std::size_t hi, bool nt) {
  LPLAB_DISPATCH(TriadSweep)(a, b, c, s, lo, hi, nt);
}

bool has_bf16_dot() {
#if defined(__x86_64__)
  __builtin_cpu_init();  // (callable before static constructors have run)
  return __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

namespace {
#if defined(__x86_64__)
// VDPBF16PS is one instruction of one width: no Highway op, so no targets.
__attribute__((target("avx512f,avx512bf16"))) double bf16_dot_loop(std::size_t iters) {
  __m512 acc[kBf16Chains];
  // Operands 1.0 (bf16 0x3F80) and +0: every sum stays exact and finite.
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3F80);
  const __m512bh b = (__m512bh)_mm512_set1_epi16(0x0000);
  for (int i = 0; i < kBf16Chains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (std::size_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kBf16Chains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
  for (int i = 1; i < kBf16Chains; ++i) s = _mm512_add_ps(s, acc[i]);
  [[maybe_unused]] static volatile float sink;
  sink = _mm512_reduce_add_ps(s);
  constexpr double kFlopsPerInstruction = 16 * 2 * 2;  // lanes x products x (mul + add)
  return kFlopsPerInstruction * kBf16Chains * static_cast<double>(iters);
}
#endif
}  // namespace

double bf16_dot(std::size_t iters) {
  if (!has_bf16_dot())
    throw std::invalid_argument("lplab::kernels::probe::bf16_dot: this CPU has no AVX512-BF16 (VDPBF16PS)");
#if defined(__x86_64__)
  return bf16_dot_loop(iters);
#else
  return 0;
#endif
}

}  // namespace lplab::kernels::probe

#endif  // HWY_ONCE
