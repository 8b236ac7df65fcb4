// This machine's roofs: the kernels' probes (lplab/kernels/probes.h) run on
// every thread at once, timed, calibrated and repeated as the Empirical
// Roofline Toolkit does. The probes dispatch like every kernel, so the roofs
// are those of the SIMD target the kernels run (LPLAB_SIMD_TARGET included).
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
#include <cpuid.h>
#endif

#include "hwy/aligned_allocator.h"
#include "lplab/kernels/probes.h"
#include "lplab/kernels/targets.h"
#include "lplab/lab/machine_peaks.h"

namespace lplab::experiments::machine {

namespace {

// One loop of `kind` on the calling thread, in the SIMD target the kernels
// dispatch to (lplab/kernels/probes.h); returns the FLOPs done.
double loop(PeakKind kind, std::size_t iters) {
  switch (kind) {
    case PeakKind::fp32_fma: return kernels::probe::fma_f32(iters);
    case PeakKind::fp64_fma: return kernels::probe::fma_f64(iters);
    case PeakKind::bf16_dot: return kernels::probe::bf16_dot(iters);
  }
  return 0;
}

// One run of the loop on every thread at once: all threads' FLOPs over the
// longest thread's time, each thread's clock started after every thread is
// running (a latch), so that starting threads does not count.
double run_peak(PeakKind kind, unsigned threads, std::size_t iters) {
  std::vector<double> flops(threads), secs(threads);
  const std::int64_t target = kernels::current_simd_target().id;  // the workers run the caller's
  std::latch ready(threads);
  {
    // jthread: if starting one fails, those already started are joined as
    // the vector unwinds (std::thread would call std::terminate).
    std::vector<std::jthread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const kernels::ScopedSimdTarget pin(target);
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

// The best figure measured so far in this process, per (what, threads, size,
// SIMD target): a roof is the most the machine was seen to do, so every
// later measurement in the same process (the roofline's and the throughput
// experiment's, in one report) can only raise it, and all of them print the
// same roof.
std::mutex g_best_mutex;
using BestKey = std::tuple<int, unsigned, std::size_t, std::int64_t>;
std::map<BestKey, double>& best_seen() {
  static std::map<BestKey, double> m;
  return m;
}
double keep_best(int what, unsigned threads, std::size_t size, double value) {
  const std::lock_guard<std::mutex> lock(g_best_mutex);
  double& best = best_seen()[{what, threads, size, kernels::current_simd_target().id}];
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

bool has_avx512_bf16() { return kernels::probe::has_bf16_dot(); }

bool has_amx_bf16() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return ((edx >> 22) & 1u) != 0;  // CPUID.(EAX=07H,ECX=0):EDX[bit 22] AMX-BF16 (Intel SDM vol. 2A)
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
  const std::int64_t target = kernels::current_simd_target().id;  // the workers run the caller's
  const auto parallel = [&](auto&& body) {
    // One thread: this one. Starting a worker costs tens of microseconds,
    // a few percent of a run over cache-sized arrays -- enough to put the
    // single-threaded elementwise points, timed on the calling thread, above
    // this roof.
    if (threads == 1) return body(std::size_t{0}, n);
    std::vector<std::jthread> pool;  // joined on scope exit, also when a start fails
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const kernels::ScopedSimdTarget pin(target);
        body(n * t / threads, n * (t + 1) / threads);
      });
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
              kernels::probe::stream_copy(a.get(), c.get(), lo, hi, nt);
          });
        },
        repetitions);
    const double triad_s = best_seconds(
        [&] {
          parallel([&](std::size_t lo, std::size_t hi) {
            for (std::size_t p = 0; p < passes; ++p)
              kernels::probe::stream_triad(a.get(), b.get(), c.get(), scalar, lo, hi, nt);
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

