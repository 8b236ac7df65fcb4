// Elementwise ops on low-precision tensors out of cache, every figure beside
// its baselines from the same run:
//  - memcpy of the bytes the op moves (the memory-speed roof of one core);
//  - lplab's scalar path: a loop of scalar conversions around the same op
//    (lplab::convert, the core every fast path equals bit for bit);
//  - for transposed inputs, the bare transposing copy of the same bytes
//    (the engine's tile walk and streamed lines, no conversion);
// for relu, scale and add in float, bf16, fp16, E4M3 and E5M2, on a
// contiguous and a transposed input, on every SIMD target this CPU runs (one
// thread), and on every core (threads = 0, best target). A table at the end
// gives each rate in bytes moved per second, its ratio to memcpy and the
// transposed / contiguous ratio, with the CPU model.
//
//   build/release/benchmarks/elementwise_bench --benchmark_min_time=0.3
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "bench_rates.h"
#include "lplab/kernels.h"

namespace {

using lplab::kernels::View;

// Every array takes kArrayBytes: at least 64 MiB and 1.5 x the largest
// cache (bench_rates.h; 512 MiB where the L3 is 300 MiB), kCols columns of
// rows<T>() rows, so that no iteration finds its data in a cache.
constexpr std::size_t kCols = 4096;
const std::size_t kArrayBytes = bench::out_of_cache_bytes();
template <class T>
std::size_t rows() {
  return kArrayBytes / sizeof(T) / kCols;
}
constexpr const char* kOps[] = {"relu", "scale", "add"};
constexpr const char* kFormats[] = {"float", "bf16", "fp16", "e4m3", "e5m2"};
constexpr int kMaxTargets = 6;

using bench::normal;
using bench::rate;

void bytes(benchmark::State& state, double per_iteration) { bench::rate_counter(state, "B/s", per_iteration); }


// memcpy of n bytes (n read, n written).
void BM_memcpy(benchmark::State& state, std::size_t n) {
  std::vector<unsigned char> src(n, 1), dst(n);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  bytes(state, 2.0 * static_cast<double>(n));
}

#if defined(__x86_64__)
// The bare transposing copy y = x^T of a kRows x 4096 matrix of Code as the
// engine walks a transposed input (strided_walk.h): tiles one cache line of
// y wide and 16 KiB of codes tall, the next tile's lines of x prefetched,
// 16-byte blocks transposed in registers by unpacking (SSE2) into a buffer,
// whose rows are y's lines, written whole by streaming stores; no
// conversion: the bound of a transposed view's traffic on this machine.
template <class Code>
void transpose_bare(const Code* x, Code* y) {
  const std::size_t kRows = rows<Code>();
  constexpr std::size_t L = 16 / sizeof(Code), kTc = 64 / sizeof(Code), kTr = 16384 / 64;
  auto lo = [](__m128i a, __m128i b) {
    if constexpr (sizeof(Code) == 1) return _mm_unpacklo_epi8(a, b);
    else if constexpr (sizeof(Code) == 2) return _mm_unpacklo_epi16(a, b);
    else return _mm_unpacklo_epi32(a, b);
  };
  auto hi = [](__m128i a, __m128i b) {
    if constexpr (sizeof(Code) == 1) return _mm_unpackhi_epi8(a, b);
    else if constexpr (sizeof(Code) == 2) return _mm_unpackhi_epi16(a, b);
    else return _mm_unpackhi_epi32(a, b);
  };
  // x's lines of the tile at (r0, c0): kTc columns of x^T (rows of x), kTr codes of each.
  auto prefetch_tile = [&](std::size_t r0, std::size_t c0) {
    for (std::size_t c = c0; c < c0 + kTc; ++c)
      for (std::size_t r = r0; r < r0 + kTr; r += 64 / sizeof(Code))
        _mm_prefetch(reinterpret_cast<const char*>(x + c * kRows + r), _MM_HINT_T0);
  };
  // Bands of 16 tile columns, walked row of tiles by row of tiles.
  for (std::size_t band = 0; band < kCols; band += 16 * kTc)
    for (std::size_t r0 = 0; r0 < kRows; r0 += kTr)
      for (std::size_t c0 = band; c0 < band + 16 * kTc; c0 += kTc) {
        if (c0 + kTc < band + 16 * kTc) prefetch_tile(r0, c0 + kTc);
        else if (r0 + kTr < kRows) prefetch_tile(r0 + kTr, band);
        alignas(64) Code tile[kTr * kTc];
        for (std::size_t c = c0; c < c0 + kTc; c += L)
          for (std::size_t r = r0; r < r0 + kTr; r += L) {
            __m128i v[L], t[L];
            for (std::size_t k = 0; k < L; ++k) v[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + (c + k) * kRows + r));
            for (std::size_t round = 1; round < L; round *= 2) {
              for (std::size_t k = 0; k < L / 2; ++k) {
                t[2 * k] = lo(v[k], v[k + L / 2]);
                t[2 * k + 1] = hi(v[k], v[k + L / 2]);
              }
              for (std::size_t k = 0; k < L; ++k) v[k] = t[k];
            }
            for (std::size_t k = 0; k < L; ++k) _mm_store_si128(reinterpret_cast<__m128i*>(tile + (r - r0 + k) * kTc + (c - c0)), v[k]);
          }
        // Each row of the tile one line of y, written whole.
        for (std::size_t r = 0; r < kTr; ++r)
          for (std::size_t b = 0; b < 64; b += 16)
            _mm_stream_si128(reinterpret_cast<__m128i*>(reinterpret_cast<char*>(y + (r0 + r) * kCols + c0) + b),
                             _mm_load_si128(reinterpret_cast<const __m128i*>(reinterpret_cast<const char*>(tile + r * kTc) + b)));
      }
  _mm_sfence();
}

template <class Code>
void BM_transpose(benchmark::State& state) {
  const std::size_t n = rows<Code>() * kCols;
  std::vector<Code> x(n, 1);
  // Streamed lines: y 64-byte aligned.
  const std::unique_ptr<Code, decltype(&std::free)> y(static_cast<Code*>(std::aligned_alloc(64, n * sizeof(Code))),
                                                      &std::free);
  std::fill(y.get(), y.get() + n, Code{});
  for (auto _ : state) {
    transpose_bare(x.data(), y.get());
    benchmark::DoNotOptimize(y.get());
    benchmark::ClobberMemory();
  }
  bytes(state, 2.0 * static_cast<double>(n * sizeof(Code)));
}
#endif

float apply(int op, float a, float b) {
  switch (op) {
    case 0: return a > 0 ? a : (std::isnan(a) ? a : 0.0f);
    case 1: return 0.5f * a;
    default: return a + b;
  }
}

// The inputs of format T: N(0, 1) rounded in, drawn once (each array
// takes seconds to draw at these sizes).
template <class T>
const std::vector<T>& inputs(int which) {
  static const std::vector<T> x = normal<T>(rows<T>() * kCols, 3), x2 = normal<T>(rows<T>() * kCols, 4);
  return which == 0 ? x : x2;
}

// op on a rows<T>() x 4096 tensor (transposed: the input viewed as a
// 4096 x rows<T>() tensor's transpose), on SIMD target `target` (index into
// simd_targets(); -1: best) with `threads` threads.
template <class T>
void BM_op(benchmark::State& state, int op, bool transposed, int target, unsigned threads) {
  const auto targets = lplab::kernels::simd_targets();
  if (target >= static_cast<int>(targets.size())) {
    state.SkipWithError("target not available on this CPU");
    return;
  }
  lplab::kernels::ScopedSimdTarget pin(target < 0 ? targets.front().id : targets[static_cast<std::size_t>(target)].id);
  const std::size_t kRows = rows<T>(), n = kRows * kCols;
  const std::vector<T>&x = inputs<T>(0), &x2 = inputs<T>(1);
  std::vector<T> y(n);
  View<const T> vx(x.data(), {kRows, kCols}), vx2(x2.data(), {kRows, kCols});
  // (The transposed view reads the same codes as a kCols x kRows array.)
  if (transposed) vx = View<const T>(x.data(), {kCols, kRows}).transpose(0, 1);
  const View<T> vy(y.data(), {kRows, kCols});
  const lplab::kernels::ElementwiseOptions o{.threads = threads};
  for (auto _ : state) {
    switch (op) {
      case 0: lplab::kernels::relu(vx, vy, o); break;
      case 1: lplab::kernels::scale(vx, 0.5f, vy, o); break;
      default: lplab::kernels::add(vx, vx2, vy, o); break;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  bytes(state, static_cast<double>(n * sizeof(T)) * (op == 2 ? 3 : 2));
  state.SetLabel(lplab::kernels::current_simd_target().name);
}

// The scalar path: decode, op and round element by element with the core.
template <class T>
void BM_scalar(benchmark::State& state, int op) {
  const std::size_t n = rows<T>() * kCols;
  const std::vector<T>&x = inputs<T>(0), &x2 = inputs<T>(1);
  std::vector<T> y(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i)
      y[i] = lplab::convert<T>(apply(op, static_cast<float>(x[i]), static_cast<float>(x2[i])));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  bytes(state, static_cast<double>(n * sizeof(T)) * (op == 2 ? 3 : 2));
}

template <class T>
void register_format(const std::string& name, int targets) {
  for (int op = 0; op < 3; ++op) {
    const std::string base = std::string(kOps[op]) + "/" + name;
    for (bool tr : {false, true}) {
      const std::string layout = tr ? "/transposed" : "/contiguous";
      for (int t = 0; t < targets; ++t)
        benchmark::RegisterBenchmark((base + layout + "/target:" + std::to_string(t)).c_str(), BM_op<T>, op, tr, t, 1u)
            ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark((base + layout + "/threads:all").c_str(), BM_op<T>, op, tr, -1, 0u)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    if constexpr (!std::is_same_v<T, float>)
      benchmark::RegisterBenchmark(("scalar/" + base).c_str(), BM_scalar<T>, op)->Unit(benchmark::kMillisecond);
  }
}


void summary() {
  const auto targets = lplab::kernels::simd_targets();
  const int nt = std::min<int>(kMaxTargets, static_cast<int>(targets.size()));
  std::printf("\nCPU: %s; %u hardware threads; arrays of %zu MiB (largest cache %zu MiB), 4096 columns; rates in "
              "GB/s moved (read + written)\n",
              lplab::kernels::cpu_model().c_str(), std::thread::hardware_concurrency(), kArrayBytes >> 20,
              bench::largest_cache_bytes() >> 20);
  std::printf("the bare transposing copy (the engine's walk, no conversion), against memcpy of the same bytes:\n");
  for (std::size_t size : {4, 2, 1}) {
    const double copy = rate("memcpy/" + std::to_string(kArrayBytes)), t = rate("transpose/" + std::to_string(size));
    std::printf("  %zu-byte elements: %6.2f GB/s, %.2fx memcpy\n", size, t / 1e9, t / copy);
  }
  std::printf("%-12s %-8s %-10s %8s %7s %8s %7s %9s %8s\n", "op/format", "target", "memcpy", "contig", "x copy",
              "transp", "x copy", "tr/contig", "x scalar");
  for (int f = 0; f < 5; ++f) {
    const double copy = rate("memcpy/" + std::to_string(kArrayBytes));
    for (const char* op : kOps) {
      const std::string base = std::string(op) + "/" + kFormats[f];
      const double scalar = rate("scalar/" + base);
      auto line = [&](const std::string& which, const std::string& label) {
        const double c = rate(base + "/contiguous/" + which), t = rate(base + "/transposed/" + which);
        std::printf("%-12s %-8s %10.2f %8.2f %6.2fx %8.2f %6.2fx %8.2fx %7.1fx\n", base.c_str(), label.c_str(),
                    copy / 1e9, c / 1e9, c / copy, t / 1e9, t / copy, t / c, c / scalar);
      };
      for (int t = 0; t < nt; ++t) line("target:" + std::to_string(t), targets[static_cast<std::size_t>(t)].name);
      line("threads:all", "all/" + targets.front().name);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const int targets = std::min<int>(kMaxTargets, static_cast<int>(lplab::kernels::simd_targets().size()));
  benchmark::RegisterBenchmark(("memcpy/" + std::to_string(kArrayBytes)).c_str(), BM_memcpy, kArrayBytes);
#if defined(__x86_64__)
  benchmark::RegisterBenchmark("transpose/4", BM_transpose<std::uint32_t>)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("transpose/2", BM_transpose<std::uint16_t>)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("transpose/1", BM_transpose<std::uint8_t>)->Unit(benchmark::kMillisecond);
#endif
  register_format<float>("float", targets);
  register_format<lplab::bfloat16>("bf16", targets);
  register_format<lplab::float16>("fp16", targets);
  register_format<lplab::float8_e4m3fn>("e4m3", targets);
  register_format<lplab::float8_e5m2>("e5m2", targets);
  benchmark::AddCustomContext("cpu_model", lplab::kernels::cpu_model());
  bench::Collector reporter({"B/s"});
  benchmark::RunSpecifiedBenchmarks(&reporter);
  summary();
  benchmark::Shutdown();
  return 0;
}
