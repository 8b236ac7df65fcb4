// The FMA loops are compiled for every SIMD target Highway knows and the best
// one the CPU runs is picked at run time (foreach_target + HWY_DYNAMIC_DISPATCH,
// as in kernels/ and benchmarks/fma_peak.cpp).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "machine_peaks.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::experiments::machine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Independent accumulator chains: an FMA has a latency of 4 cycles on current
// x86 cores and 2 FMA ports, so at least 4 x 2 = 8 chains keep both ports
// busy; 16 leaves room for 5-cycle latencies and still fits the 32 vector
// registers of AVX-512 with the two operands.
constexpr int kChains = 16;

// `iters` rounds of kChains chained FMAs; returns the FLOPs done (2 per lane
// per FMA) and stores a value depending on every chain, so nothing is elided.
template <class T>
HWY_NOINLINE double FmaLoop(std::size_t iters, T* sink) {
  const hn::ScalableTag<T> d;
  // a slightly below 1 and a tiny b keep every chain finite and normal.
  const auto a = hn::Set(d, T(0.999999)), b = hn::Set(d, T(1e-7));
  hn::Vec<decltype(d)> acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = hn::Set(d, static_cast<T>(i));
  for (std::size_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = hn::MulAdd(acc[i], a, b);
  }
  auto s = acc[0];
  for (int i = 1; i < kChains; ++i) s = hn::Add(s, acc[i]);
  *sink = hn::GetLane(s);
  return 2.0 * kChains * static_cast<double>(hn::Lanes(d)) * static_cast<double>(iters);
}

// STREAM's copy and triad (McCalpin) on [lo, hi), in the widest vectors the
// CPU has: the library is compiled for baseline x86-64, whose SSE2 loops
// cannot saturate a cache level's bandwidth. Vectorised by hand also keeps
// GCC from turning the copy into a memcpy call. `nt`: non-temporal stores
// (hn::Stream), which skip the read-for-ownership of the destination: what
// memcpy and lplab's kernels may do for large arrays, so the roof has to
// allow it. The arrays are vector-aligned (hwy::AllocateAligned).
template <class Store>
HWY_INLINE void Sweep(std::size_t lo, std::size_t hi, Store store_at) {
  const hn::ScalableTag<double> d;
  const std::size_t N = hn::Lanes(d);
  std::size_t i = lo;
  for (; i < hi && i % N != 0; ++i) store_at(hn::CappedTag<double, 1>(), i);
  for (; i + N <= hi; i += N) store_at(d, i);
  for (; i < hi; ++i) store_at(hn::CappedTag<double, 1>(), i);
}

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

HWY_NOINLINE double FmaLoopF32(std::size_t iters, float* sink) { return FmaLoop(iters, sink); }
HWY_NOINLINE double FmaLoopF64(std::size_t iters, double* sink) { return FmaLoop(iters, sink); }

}  // namespace lplab::experiments::machine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <tuple>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "lplab/kernels/targets.h"
#include "machine_peaks.h"

namespace lplab::experiments::machine {

HWY_EXPORT(FmaLoopF32);
HWY_EXPORT(FmaLoopF64);
HWY_EXPORT(CopySweep);
HWY_EXPORT(TriadSweep);

namespace {

#if defined(__x86_64__)
// Chains of VDPBF16PS: its latency is about 6 cycles on Zen 4/5 and Sapphire
// Rapids with up to 2 issued per cycle; 12 chains cover that.
constexpr int kBf16Chains = 12;

// VDPBF16PS on zmm: 32 bf16 pairs -> 16 fp32 lanes, each lane adding two
// products: 16 x 2 x 2 = 64 FLOPs per instruction (Intel SDM, VDPBF16PS).
__attribute__((target("avx512f,avx512bf16"))) double bf16_dot_loop(std::size_t iters,
                                                                     float* sink) {
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
  *sink = _mm512_reduce_add_ps(s);
  return 64.0 * kBf16Chains * static_cast<double>(iters);
}
#endif

// One loop of `kind` on the calling thread; returns the FLOPs done.
double loop(PeakKind kind, std::size_t iters) {
  // Sinks written through a volatile store, so the loops' results are used.
  float f = 0;
  double dd = 0;
  double flops = 0;
  switch (kind) {
    case PeakKind::fp32_fma: flops = HWY_DYNAMIC_DISPATCH(FmaLoopF32)(iters, &f); break;
    case PeakKind::fp64_fma: flops = HWY_DYNAMIC_DISPATCH(FmaLoopF64)(iters, &dd); break;
    case PeakKind::bf16_dot:
#if defined(__x86_64__)
      flops = bf16_dot_loop(iters, &f);
#endif
      break;
  }
  [[maybe_unused]] static volatile double sink;
  sink = static_cast<double>(f) + dd;
  return flops;
}

// One run of the loop on every thread at once: all threads' FLOPs over the
// longest thread's time, each thread's clock started after every thread is
// running (a latch), so that starting threads does not count.
double run_peak(PeakKind kind, unsigned threads, std::size_t iters) {
  std::vector<double> flops(threads), secs(threads);
  std::latch ready(threads);
  {
    // jthread: if starting one fails, those already started are joined as
    // the vector unwinds (std::thread would call std::terminate).
    std::vector<std::jthread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        ready.arrive_and_wait();
        const auto t0 = std::chrono::steady_clock::now();
        flops[t] = loop(kind, iters);
        secs[t] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      });
  }
  double total = 0;
  for (double f : flops) total += f;
  return total / *std::max_element(secs.begin(), secs.end());
}

// The best figure measured so far in this process, per (what, threads): a
// roof is the most the machine was seen to do, so every later measurement
// in the same process (the roofline's and the throughput experiment's, in
// one report) can only raise it, and all of them print the same roof.
std::mutex g_best_mutex;
std::map<std::tuple<int, unsigned, std::size_t>, double>& best_seen() {
  static std::map<std::tuple<int, unsigned, std::size_t>, double> m;
  return m;
}
double keep_best(int what, unsigned threads, std::size_t size, double value) {
  const std::lock_guard<std::mutex> lock(g_best_mutex);
  double& best = best_seen()[{what, threads, size}];
  best = std::max(best, value);
  return best;
}

}  // namespace

const char* peak_kind_name(PeakKind k) {
  switch (k) {
    case PeakKind::fp32_fma: return "fp32_fma";
    case PeakKind::fp64_fma: return "fp64_fma";
    case PeakKind::bf16_dot: return "bf16_dot";
  }
  return "?";
}

bool has_avx512_bf16() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

unsigned resolve_threads(unsigned threads) {
  return threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

double peak_flops(PeakKind kind, unsigned threads, double seconds, int repetitions) {
  if (kind == PeakKind::bf16_dot && !has_avx512_bf16())
    throw std::invalid_argument("peak_flops: this CPU has no AVX512-BF16 (VDPBF16PS)");
  threads = resolve_threads(threads);
  // Calibrate: a run of about a millisecond on one thread gives the rate;
  // scale the iteration count so that one run takes about `seconds` (at
  // least 20 ms: frequency ramps and timer resolution then cost < 1%).
  const std::size_t probe_iters = std::size_t{1} << 16;
  const double rate = run_peak(kind, 1, probe_iters);
  const double flops_per_iter = loop(kind, 1);
  const std::size_t iters = std::max(
      probe_iters, static_cast<std::size_t>(std::max(seconds, 0.02) * rate / flops_per_iter));
  double best = 0;
  for (int r = 0; r < std::max(repetitions, 3); ++r) best = std::max(best, run_peak(kind, threads, iters));
  return keep_best(static_cast<int>(kind), threads, 0, best);
}

Bandwidth stream_bandwidth(std::size_t bytes_per_array, unsigned threads, int repetitions) {
  threads = resolve_threads(threads);
  const std::size_t n = std::max<std::size_t>(bytes_per_array / sizeof(double), threads);
  // Vector-aligned storage, first touched by the thread that later streams
  // it (on a NUMA machine the pages land near that thread).
  auto a = hwy::AllocateAligned<double>(n), b = hwy::AllocateAligned<double>(n),
       c = hwy::AllocateAligned<double>(n);
  if (!a || !b || !c) throw std::bad_alloc();
  // Each thread runs `passes` sweeps over its part per timed run, so that a
  // run moves at least 64 MiB and starting the threads (tens of microseconds)
  // does not count against cache-sized arrays (ERT repeats its kernels the
  // same way).
  constexpr double kMinBytesPerRun = 64.0 * 1024 * 1024;
  const double bytes = static_cast<double>(n) * sizeof(double);
  const auto passes = static_cast<std::size_t>(std::max(1.0, std::ceil(kMinBytesPerRun / bytes)));
  const auto parallel = [&](auto&& body) {
    std::vector<std::jthread> pool;  // joined on scope exit, also when a start fails
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { body(n * t / threads, n * (t + 1) / threads); });
  };
  parallel([&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) a[i] = 1.0, b[i] = 2.0, c[i] = 0.0;
  });
  const double scalar = 3.0;
  Bandwidth best;
  for (const bool nt : {false, true}) {
    const double copy_s = best_seconds(
        [&] {
          parallel([&](std::size_t lo, std::size_t hi) {
            for (std::size_t p = 0; p < passes; ++p)
              HWY_DYNAMIC_DISPATCH(CopySweep)(a.get(), c.get(), lo, hi, nt);
          });
        },
        repetitions);
    const double triad_s = best_seconds(
        [&] {
          parallel([&](std::size_t lo, std::size_t hi) {
            for (std::size_t p = 0; p < passes; ++p)
              HWY_DYNAMIC_DISPATCH(TriadSweep)(a.get(), b.get(), c.get(), scalar, lo, hi, nt);
          });
        },
        repetitions);
    const double moved = bytes * static_cast<double>(passes);
    best.copy = std::max(best.copy, 2 * moved / copy_s);
    best.triad = std::max(best.triad, 3 * moved / triad_s);
  }
  // Keep the arrays' contents observable, so no sweep is elided.
  [[maybe_unused]] static volatile double sink;
  sink = a[n / 2] + c[n / 3];
  constexpr int kCopy = 100, kTriad = 101;  // keys beside the PeakKinds
  best.copy = keep_best(kCopy, threads, bytes_per_array, best.copy);
  best.triad = keep_best(kTriad, threads, bytes_per_array, best.triad);
  return best;
}

std::string machine_description(unsigned threads) {
  return kernels::cpu_model() + ", SIMD target " + kernels::current_simd_target().name + ", " +
         std::to_string(resolve_threads(threads)) + " thread(s)";
}

}  // namespace lplab::experiments::machine

#endif  // HWY_ONCE
