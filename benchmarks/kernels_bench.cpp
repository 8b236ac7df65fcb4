// Bulk conversion throughput, every figure beside its baseline from the same
// run: lplab's scalar loop, a plain copy of the same bytes, the bare hardware
// conversion loops (vcvtps2ph, vcvtneps2bf16) where the CPU has them, and
// every SIMD target of lplab's kernels. At the end a table prints each rate
// and its ratio to the baseline the issue names, with the CPU model.
//
//   build/release/benchmarks/kernels_bench --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "bench_rates.h"
#include "lplab/kernels.h"

namespace {

using lplab::Overflow;
using lplab::Round;

constexpr std::size_t kInCache = std::size_t{1} << 14;    // 16K values: 64 KiB of floats
constexpr std::size_t kOutOfCache = std::size_t{1} << 24;  // 16M values: 64 MiB of floats

// N(0, sigma); by default N(0, 1), and for a conversion into T N(0, 1) scaled
// to a quarter of T's range, as tensors are scaled before a cast.
const std::vector<float>& inputs(std::size_t n, double sigma = 1.0) {
  static std::map<std::pair<std::size_t, double>, std::vector<float>> sets;
  auto& v = sets[{n, sigma}];
  if (v.empty()) {
    std::mt19937 rng(7);
    std::normal_distribution<double> dist(0.0, 1.0);
    v.resize(n);
    for (float& x : v) x = static_cast<float>(dist(rng) * sigma);
  }
  return v;
}
template <class T>
double sigma_for() {
  return std::min(static_cast<double>(lplab::finfo<T>::max) / 4, 1e30);
}

using bench::rate;

void record(benchmark::State& state, std::size_t n) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  bench::rate_counter(state, "values/s", static_cast<double>(n));
}

// --- lplab bulk, on a given target (index into simd_targets()) ---------------

template <class T>
void BM_bulk_from_float(benchmark::State& state) {
  const auto targets = lplab::kernels::simd_targets();
  const auto t = static_cast<std::size_t>(state.range(1));
  if (t >= targets.size()) {
    state.SkipWithError("target not available on this CPU");
    return;
  }
  const auto round = static_cast<Round>(state.range(2));
  lplab::kernels::ScopedSimdTarget scope(targets[t].id);
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const auto& in = inputs(n, sigma_for<T>());
  std::vector<T> out(n);
  for (auto _ : state) {
    lplab::kernels::convert(std::span<const float>(in), std::span(out), round);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  record(state, n);
  state.SetLabel(targets[t].name);
}

template <class T>
void BM_bulk_to_float(benchmark::State& state) {
  const auto targets = lplab::kernels::simd_targets();
  const auto t = static_cast<std::size_t>(state.range(1));
  if (t >= targets.size()) {
    state.SkipWithError("target not available on this CPU");
    return;
  }
  lplab::kernels::ScopedSimdTarget scope(targets[t].id);
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  std::vector<T> in(n);
  lplab::kernels::convert(std::span<const float>(inputs(n, sigma_for<T>())), std::span(in));
  std::vector<float> out(n);
  for (auto _ : state) {
    lplab::kernels::convert(std::span<const T>(in), std::span(out));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  record(state, n);
  state.SetLabel(targets[t].name);
}

// MX quantization (block scaling, scaling.h): MXFP8 E4M3 elements with E8M0
// scales, and MXFP4 straight into packed bytes, on the best target.
void BM_mxfp8_quantize(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const auto& in = inputs(n);
  const auto& s = lplab::kernels::mxfp8_e4m3;
  std::vector<lplab::float8_e4m3fn> q(n);
  std::vector<lplab::float8_e8m0fnu> scales(lplab::kernels::scales_needed(s, n));
  for (auto _ : state) {
    lplab::kernels::quantize(s, std::span<const float>(in), q, scales);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  record(state, n);
  state.SetLabel(lplab::kernels::current_simd_target().name);
}

void BM_mxfp4_quantize_packed(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const auto& in = inputs(n);
  const auto& s = lplab::kernels::mxfp4;
  std::vector<std::uint8_t> bytes(lplab::kernels::packed_bytes<lplab::float4_e2m1fn>(n));
  std::vector<lplab::float8_e8m0fnu> scales(lplab::kernels::scales_needed(s, n));
  for (auto _ : state) {
    lplab::kernels::quantize_packed(s, std::span<const float>(in), bytes, scales);
    benchmark::DoNotOptimize(bytes.data());
    benchmark::ClobberMemory();
  }
  record(state, n);
  state.SetLabel(lplab::kernels::current_simd_target().name);
}

// Out of cache on every core (threads = 0) and on one: float -> E4M3, float
// -> bf16, MXFP8 and MXFP4 (packed) quantization, the ratio in the summary.
void BM_threads(benchmark::State& state, int kind, unsigned threads) {
  const std::size_t n = kOutOfCache;
  const auto& in = inputs(n);
  std::vector<lplab::float8_e4m3fn> e4m3(n);
  std::vector<lplab::bfloat16> bf16(kind == 1 ? n : 0);
  std::vector<std::uint8_t> bytes(lplab::kernels::packed_bytes<lplab::float4_e2m1fn>(n));
  std::vector<lplab::float8_e8m0fnu> scales(n / 32);
  const lplab::kernels::ConvertOptions o{.threads = threads};
  for (auto _ : state) {
    switch (kind) {
      case 0: lplab::kernels::convert(std::span<const float>(in), std::span(e4m3), o); break;
      case 1: lplab::kernels::convert(std::span<const float>(in), std::span(bf16), o); break;
      case 2: lplab::kernels::quantize(lplab::kernels::mxfp8_e4m3, std::span<const float>(in), std::span(e4m3),
                                       std::span(scales), nullptr, threads); break;
      default: lplab::kernels::quantize_packed(lplab::kernels::mxfp4, std::span<const float>(in), std::span(bytes),
                                               std::span(scales), nullptr, threads); break;
    }
    benchmark::DoNotOptimize(e4m3.data());
    benchmark::DoNotOptimize(bytes.data());
    benchmark::ClobberMemory();
  }
  record(state, n);
}

// --- baselines -----------------------------------------------------------

// lplab's scalar core, one call per value.
template <class T>
void BM_scalar_from_float(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const auto& in = inputs(n, sigma_for<T>());
  std::vector<T> out(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) out[i] = lplab::convert<T>(in[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  record(state, n);
}

// A copy of the same bytes: read n floats, write n codes of sizeof(Code)
// (the low bytes of each float), the memory traffic of any conversion.
template <class Code>
void BM_copy_bytes(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const auto& in = inputs(n);
  std::vector<Code> out(n);
  for (auto _ : state) {
    const auto* src = reinterpret_cast<const std::uint32_t*>(in.data());
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Code>(src[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  record(state, n);
}

#if defined(__x86_64__)
// The bare vcvtps2ph loop (F16C, 8 lanes), rounding from the immediate.
template <int kImm>
__attribute__((target("avx2,f16c"))) void cvtps2ph_loop(const float* in, std::uint16_t* out,
                                                        std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), kImm);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = 0;  // n is a multiple of 8 here
}
// The same with AVX-512 (16 lanes) where the CPU has it. (GCC 12's
// _mm512_cvtps_ph reads an uninitialised pass-through operand it then masks
// away entirely: a false -Wmaybe-uninitialized.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <int kImm>
__attribute__((target("avx512f"))) void cvtps2ph512_loop(const float* in, std::uint16_t* out,
                                                         std::size_t n) {
  for (std::size_t i = 0; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(in + i), kImm);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
  }
}
#pragma GCC diagnostic pop

template <int kImm>
void BM_vcvtps2ph(benchmark::State& state) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!__builtin_cpu_supports("f16c")) {
    state.SkipWithError("no F16C on this CPU");
    return;
  }
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const auto& in = inputs(n);
  std::vector<std::uint16_t> out(n);
  for (auto _ : state) {
    if (avx512) cvtps2ph512_loop<kImm>(in.data(), out.data(), n);
    else cvtps2ph_loop<kImm>(in.data(), out.data(), n);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  record(state, n);
  state.SetLabel(avx512 ? "zmm" : "ymm");
}

// The bare vcvtneps2bf16 loop (AVX512-BF16): round-to-nearest-even, but
// subnormal inputs and outputs flushed -- not lplab's semantics, a speed bound.
__attribute__((target("avx512f,avx512bf16,avx512vl"))) void cvtneps2bf16_loop(
    const float* in, std::uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i + 16 <= n; i += 16) {
    const __m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), reinterpret_cast<const __m256i&>(h));
  }
}

void BM_vcvtneps2bf16(benchmark::State& state) {
  if (!lplab::kernels::probe::has_bf16_dot()) {
    state.SkipWithError("no AVX512-BF16 on this CPU");
    return;
  }
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const auto& in = inputs(n);
  std::vector<std::uint16_t> out(n);
  for (auto _ : state) {
    cvtneps2bf16_loop(in.data(), out.data(), n);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  record(state, n);
}
#endif

// The CPU extensions' kernels (cpu_extensions.cpp) against the same call
// with them forbidden, on the best target, N(0, 1) data: range(1) the
// kernel (0: float -> bf16, 1: fp16 add, 2: fp16 mul),
// range(2) 1 allowed, 0 forbidden. Values per second count outputs.
void BM_extensions(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const int kind = static_cast<int>(state.range(1));
  lplab::kernels::force_thread_cpu_extensions(state.range(2) != 0);
  const auto& in = inputs(n);
  std::vector<lplab::float16> a(n), b(n), y(n);
  std::vector<lplab::bfloat16> bf(n);
  lplab::kernels::convert(std::span<const float>(in), std::span(a));
  for (std::size_t i = 0; i < n; ++i) b[i] = a[(i * 7919) % n];
  using lplab::kernels::View;
  const View<const lplab::float16> va(a.data(), {n}), vb(b.data(), {n});
  const View<lplab::float16> vy(y.data(), {n});
  for (auto _ : state) {
    switch (kind) {
      case 0: lplab::kernels::convert(std::span<const float>(in), std::span(bf)); break;
      case 1: lplab::kernels::add(va, vb, vy); break;
      default: lplab::kernels::mul(va, vb, vy); break;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::DoNotOptimize(bf.data());
    benchmark::ClobberMemory();
  }
  record(state, n);
  std::string used;
  for (const std::string& e : lplab::kernels::cpu_extensions()) used += (used.empty() ? "" : ",") + e;
  state.SetLabel(lplab::kernels::current_simd_target().name + (used.empty() ? "" : "+" + used));
  lplab::kernels::force_thread_cpu_extensions(true);
}

constexpr int kMaxTargets = 6;
constexpr auto kRne = static_cast<std::int64_t>(Round::nearest_even);

void register_all() {
  const std::vector<std::int64_t> sizes_in = {static_cast<std::int64_t>(kInCache)};
  const std::vector<std::int64_t> sizes_all = {static_cast<std::int64_t>(kInCache),
                                               static_cast<std::int64_t>(kOutOfCache)};
  const auto targets = lplab::kernels::simd_targets();
  std::vector<std::int64_t> target_args;
  for (std::size_t t = 0; t < targets.size() && t < kMaxTargets; ++t)
    target_args.push_back(static_cast<std::int64_t>(t));

  auto from = [&](const char* name, auto fn, const std::vector<std::int64_t>& rounds,
                  const std::vector<std::int64_t>& ts, const std::vector<std::int64_t>& sizes) {
    benchmark::RegisterBenchmark(name, fn)->ArgsProduct({sizes, ts, rounds})->ArgNames({"n", "target", "round"});
  };
  const std::vector<std::int64_t> best = {0};
  const std::vector<std::int64_t> rne = {kRne};
  const std::vector<std::int64_t> four = {0, 2, 3, 4};  // nearest_even, toward_zero, upward, downward
  from("bulk/float->e4m3", BM_bulk_from_float<lplab::float8_e4m3fn>, rne, target_args, sizes_all);
  from("bulk/float->e5m2", BM_bulk_from_float<lplab::float8_e5m2>, rne, target_args, sizes_all);
  from("bulk/float->fp16", BM_bulk_from_float<lplab::float16>, four, best, sizes_all);
  from("bulk/float->bf16", BM_bulk_from_float<lplab::bfloat16>, rne, target_args, sizes_all);
  from("bulk/float->fp16 rne", BM_bulk_from_float<lplab::float16>, rne, target_args, sizes_all);
  from("bulk/float->e2m1", BM_bulk_from_float<lplab::float4_e2m1fn>, rne, target_args, sizes_all);
  from("bulk/float->e2m3", BM_bulk_from_float<lplab::float6_e2m3fn>, rne, best, sizes_in);
  from("bulk/float->e8m0", BM_bulk_from_float<lplab::float8_e8m0fnu>, rne, best, sizes_in);
  // One call on 1 and 1024 values: the C++ side of the Python binding's
  // per-call overhead (benchmarks/python_bench.py).
  from("call/float->bf16", BM_bulk_from_float<lplab::bfloat16>, rne, best, {1, 1024});
  from("bulk/float->e4m3 stochastic", BM_bulk_from_float<lplab::float8_e4m3fn>,
       {static_cast<std::int64_t>(Round::stochastic)}, best, sizes_in);
  auto to = [&](const char* name, auto fn, const std::vector<std::int64_t>& ts,
                const std::vector<std::int64_t>& sizes) {
    benchmark::RegisterBenchmark(name, fn)->ArgsProduct({sizes, ts})->ArgNames({"n", "target"});
  };
  to("bulk/e4m3->float", BM_bulk_to_float<lplab::float8_e4m3fn>, target_args, sizes_all);
  to("bulk/e5m2->float", BM_bulk_to_float<lplab::float8_e5m2>, target_args, sizes_all);
  to("bulk/fp16->float", BM_bulk_to_float<lplab::float16>, target_args, sizes_all);
  to("bulk/bf16->float", BM_bulk_to_float<lplab::bfloat16>, target_args, sizes_all);
  to("bulk/e2m1->float", BM_bulk_to_float<lplab::float4_e2m1fn>, target_args, sizes_all);

  auto base = [&](const char* name, auto fn, const std::vector<std::int64_t>& sizes) {
    benchmark::RegisterBenchmark(name, fn)->ArgsProduct({sizes})->ArgNames({"n"});
  };
  base("mx/float->mxfp8_e4m3", BM_mxfp8_quantize, sizes_all);
  base("mx/float->mxfp4 packed", BM_mxfp4_quantize_packed, sizes_all);
  const char* kinds[] = {"float->e4m3", "float->bf16", "mxfp8_e4m3", "mxfp4 packed"};
  for (int k = 0; k < 4; ++k)
    for (unsigned threads : {1u, 0u})
      benchmark::RegisterBenchmark(("threads/" + std::string(kinds[k]) + (threads == 0 ? "/all" : "/one")).c_str(),
                                   BM_threads, k, threads)
          ->UseRealTime();
  const char* ext_kinds[] = {"ext/float->bf16", "ext/fp16 add", "ext/fp16 mul"};
  for (int k = 0; k < 3; ++k)
    benchmark::RegisterBenchmark(ext_kinds[k], BM_extensions)
        ->ArgsProduct({sizes_all, {k}, {1, 0}})
        ->ArgNames({"n", "kind", "extensions"});
  base("scalar/float->e4m3", BM_scalar_from_float<lplab::float8_e4m3fn>, sizes_in);
  base("scalar/float->e5m2", BM_scalar_from_float<lplab::float8_e5m2>, sizes_in);
  base("copy/4->1 bytes", BM_copy_bytes<std::uint8_t>, sizes_all);
  base("copy/4->2 bytes", BM_copy_bytes<std::uint16_t>, sizes_all);
#if defined(__x86_64__)
  base("hw/vcvtps2ph rne", BM_vcvtps2ph<_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC>, sizes_in);
  base("hw/vcvtps2ph rz", BM_vcvtps2ph<_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC>, sizes_in);
  base("hw/vcvtps2ph ru", BM_vcvtps2ph<_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC>, sizes_in);
  base("hw/vcvtps2ph rd", BM_vcvtps2ph<_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC>, sizes_in);
  base("hw/vcvtneps2bf16", BM_vcvtneps2bf16, sizes_in);
#endif
}


void summary() {
  const std::string in = "n:" + std::to_string(kInCache);
  const std::string out = "n:" + std::to_string(kOutOfCache);
  std::printf("\nCPU: %s; best SIMD target: %s\n", lplab::kernels::cpu_model().c_str(),
              lplab::kernels::simd_targets().front().name.c_str());
  std::printf("%-44s %-8s %10s  %s\n", "conversion", "target", "G values/s", "ratio to baseline");
  auto line = [&](const std::string& name, const std::string& baseline, const char* what) {
    const double r = rate(name), b = baseline.empty() ? NAN : rate(baseline);
    std::printf("%-44s %-8s %10.3f  ", name.c_str(), bench::label(name).c_str(), r / 1e9);
    if (!std::isnan(b)) std::printf("%.2fx %s", r / b, what);
    std::printf("\n");
  };
  const std::string rne = "/round:" + std::to_string(kRne);
  for (const char* f : {"e4m3", "e5m2"}) {
    line(std::string("bulk/float->") + f + "/" + in + "/target:0" + rne,
         std::string("scalar/float->") + f + "/" + in, "lplab scalar loop");
    line(std::string("bulk/float->") + f + "/" + out + "/target:0" + rne, "copy/4->1 bytes/" + out,
         "copy of the same bytes");
    line(std::string("bulk/") + f + "->float/" + in + "/target:0", "", "");
    line(std::string("bulk/") + f + "->float/" + out + "/target:0", "copy/4->1 bytes/" + out,
         "copy of the same bytes");
  }
  const char* modes[] = {"rne", "", "rz", "ru", "rd"};
  for (int r : {0, 2, 3, 4}) {
    line("bulk/float->fp16/" + in + "/target:0/round:" + std::to_string(r),
         std::string("hw/vcvtps2ph ") + modes[r] + "/" + in, "bare vcvtps2ph loop");
  }
  line("bulk/float->fp16/" + out + "/target:0" + rne, "copy/4->2 bytes/" + out, "copy of the same bytes");
  line("bulk/float->bf16/" + in + "/target:0" + rne, "hw/vcvtneps2bf16/" + in, "bare vcvtneps2bf16 loop");
  line("bulk/float->bf16/" + out + "/target:0" + rne, "copy/4->2 bytes/" + out, "copy of the same bytes");
  line("bulk/float->e2m1/" + in + "/target:0" + rne, "", "");
  line("bulk/float->e2m1/" + out + "/target:0" + rne, "copy/4->1 bytes/" + out, "copy of the same bytes");
  line("bulk/fp16->float/" + out + "/target:0", "copy/4->2 bytes/" + out, "copy of the same bytes");
  line("bulk/bf16->float/" + out + "/target:0", "copy/4->2 bytes/" + out, "copy of the same bytes");
  line("mx/float->mxfp8_e4m3/" + in, "bulk/float->e4m3/" + in + "/target:0" + rne, "plain float->e4m3");
  line("mx/float->mxfp4 packed/" + in, "bulk/float->e2m1/" + in + "/target:0" + rne, "plain float->e2m1");
  line("mx/float->mxfp8_e4m3/" + out, "copy/4->1 bytes/" + out, "copy of the same bytes");
  std::printf("\nCPU extensions (best target, N(0, 1) data): allowed against forbidden, G values/s\n");
  const char* ext_kinds[] = {"ext/float->bf16", "ext/fp16 add", "ext/fp16 mul"};
  for (int k = 0; k < 3; ++k)
    for (const std::string& size : {in, out}) {
      const std::string stem = std::string(ext_kinds[k]) + "/" + size + "/kind:" + std::to_string(k);
      const double on = rate(stem + "/extensions:1"), off = rate(stem + "/extensions:0");
      std::printf("  %-18s %-10s %8.3f %8.3f  %.2fx  (%s)\n", ext_kinds[k] + 4, size.c_str(), on / 1e9, off / 1e9,
                  on / off, bench::label(stem + "/extensions:1").c_str());
    }
  std::printf("\nout of cache (%zu values), every core against one (G values/s):\n", kOutOfCache);
  for (const char* k : {"float->e4m3", "float->bf16", "mxfp8_e4m3", "mxfp4 packed"}) {
    const double one = rate(std::string("threads/") + k + "/one"), all = rate(std::string("threads/") + k + "/all");
    std::printf("  %-14s %8.3f %8.3f  %.2fx\n", k, one / 1e9, all / 1e9, all / one);
  }
  std::printf("\nper target, in cache (float->e4m3 / e4m3->float, G values/s):\n");
  const auto targets = lplab::kernels::simd_targets();
  for (std::size_t t = 0; t < targets.size() && t < kMaxTargets; ++t) {
    std::printf("  %-8s %8.3f %8.3f\n", targets[t].name.c_str(),
                rate("bulk/float->e4m3/" + in + "/target:" + std::to_string(t) + rne) / 1e9,
                rate("bulk/e4m3->float/" + in + "/target:" + std::to_string(t)) / 1e9);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::AddCustomContext("cpu_model", lplab::kernels::cpu_model());
  benchmark::AddCustomContext("simd_target", lplab::kernels::current_simd_target().name);
  bench::Collector reporter({"values/s"});
  benchmark::RunSpecifiedBenchmarks(&reporter);
  summary();
  benchmark::Shutdown();
  return 0;
}
