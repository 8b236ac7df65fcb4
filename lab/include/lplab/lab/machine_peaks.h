// This machine's own roofs, measured the way the Empirical Roofline Toolkit
// (ERT, Lo et al. 2014, "Roofline Model Toolkit: A Practical Tool for
// Architectural and Program Analysis") does: a loop of independent fused
// multiply-adds for the compute peak, STREAM-style kernels (McCalpin 1995)
// for the bandwidth. Shared by the roofline and throughput experiments; the
// loops themselves are the kernels' probes (lplab/kernels/probes.h), run in
// the SIMD target every kernel runs, on every thread alike.
#pragma once

#include <chrono>
#include <cstddef>
#include <limits>
#include <string>

namespace lplab::experiments::machine {

enum class PeakKind {
  fp32_fma,  // vector FMA on float in the kernels' SIMD target (lplab/kernels/probes.h)
  fp64_fma,  // the same on double
  bf16_dot,  // VDPBF16PS (AVX512-BF16): bf16 pairs into fp32 lanes; not AMX
};

const char* peak_kind_name(PeakKind k);

// True when the CPU runs VDPBF16PS (checked at run time with CPUID).
bool has_avx512_bf16();
// True when CPUID reports AMX-BF16 (Sapphire Rapids and later): tile units
// whose bf16 rate is far above VDPBF16PS's. lplab has no AMX loop, so the
// bf16 roof it measures is VDPBF16PS's, never this CPU's bf16 peak; the
// roofline says so where this returns true.
bool has_amx_bf16();

// FLOP/s of `kind` on `threads` threads (0: every core), each running the
// loop for about `seconds` (at least 20 ms) after all have started; the best
// of `repetitions` runs (at least 3) and of every earlier call in this
// process with the same kind and threads. Throws
// std::invalid_argument for bf16_dot without AVX512-BF16.
double peak_flops(PeakKind kind, unsigned threads, double seconds = 0.1, int repetitions = 3);

// STREAM copy (c = a, 16 bytes per element of double) and triad (a = b + s c,
// 24 bytes) over arrays of `bytes_per_array` bytes each on `threads` threads,
// each thread first-touching its own part; the best of `repetitions` runs,
// after a warm-up, with ordinary and with non-temporal stores (the better of
// the two), and of every earlier call in this process with the same size and
// threads. Bytes per second as STREAM counts them (no write-allocate
// traffic).
struct Bandwidth {
  double copy = 0, triad = 0;
  double best() const { return copy > triad ? copy : triad; }
};
Bandwidth stream_bandwidth(std::size_t bytes_per_array, unsigned threads, int repetitions = 3);

// The threads a `threads` option of 0 means.
unsigned resolve_threads(unsigned threads);

// Seconds of the fastest of `repetitions` calls of f, after one warm-up call.
template <class F>
double best_seconds(F&& f, int repetitions) {
  using clock = std::chrono::steady_clock;
  f();
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repetitions; ++r) {
    const auto t0 = clock::now();
    f();
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    if (s < best) best = s;
  }
  return best;
}

// "cpu model, SIMD target X, N threads" for the notes beside measured figures.
std::string machine_description(unsigned threads);

}  // namespace lplab::experiments::machine
