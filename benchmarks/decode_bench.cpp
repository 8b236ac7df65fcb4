// Decodes (format -> float, and -> bfloat16 and float16) of the data users
// have, each beside a memcpy of its output's bytes from the same run (issue
// 44: ≥ 0.5× in cache, ≥ 0.9× out of cache). Every catalog format is decoded
// from four kinds of codes:
//   quarter: N(0, (max/4)^2) rounded in (kernels_bench's data: a tensor
//            scaled to its format's range; almost no subnormals);
//   normal:  N(0, 1) rounded in: unscaled activations (for E4M3, 1.2 % of
//            them subnormal; for E8M0, the scales of N(0, 1) blocks);
//   mx:      the element codes of an MX quantization of N(0, 1) (OCP MX
//            v1.0: 32 elements share an E8M0 scale, so each block's small
//            elements land in the subnormals and zero);
//   codes:   every code in turn (NaN, infinities, subnormals, zeros).
// Sub-byte formats are decoded from one code per byte (packed.h's unpacked
// form). Into bfloat16 and float16 the conversion rounds to nearest-even
// (exact wherever the value is representable: every FP8/FP6/FP4 value in
// bfloat16; in float16 all but E5M2FNUZ's and E4M3B11FNUZ's smallest and
// E8M0's, E3M4's largest). At the end a table per output type prints each
// rate and its ratio to the memcpy, with the CPU model and the SIMD target.
//
//   build/release/benchmarks/decode_bench [--benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true]
//   LPLAB_SIMD_TARGET=AVX2 build/release/benchmarks/decode_bench   (a lower target)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "bench_rates.h"
#include "lplab/kernels.h"

namespace {

constexpr std::size_t kInCache = std::size_t{1} << 14;  // 16K values: 64 KiB of floats out
// Out of cache: floats out of at least 64 MiB and 1.5 x the largest cache
// (bench_rates.h; 2^27 values, 512 MiB, where the L3 is 300 MiB).
const std::size_t kOutOfCache = bench::out_of_cache_bytes() / sizeof(float);

enum class Data { quarter, normal, mx, codes };
constexpr const char* kDataNames[] = {"quarter", "normal", "mx", "codes"};

// N(0, sigma^2) floats (bench_rates.h's N(0, 1) sample, drawn once per
// size, scaled).
std::vector<float> gaussian(std::size_t n, double sigma) {
  static std::map<std::size_t, std::vector<float>> drawn;
  std::vector<float>& base = drawn[n];
  if (base.empty()) base = bench::normal<float>(n, 7);
  std::vector<float> v(base);
  for (float& x : v) x = static_cast<float>(x * sigma);
  return v;
}

// Whether an OCP MX scheme (kernels/scaling.h's list, E8M0 scales) has T as
// its element format.
#define LPLAB_MX_ELEMENT(name, Elem, Scale, ...) \
  || (std::is_same_v<T, lplab::Elem> && std::is_same_v<lplab::Scale, lplab::float8_e8m0fnu>)
template <class T>
constexpr bool kHasMx = false LPLAB_BLOCK_SCHEMES(LPLAB_MX_ELEMENT);
#undef LPLAB_MX_ELEMENT

template <class T>
std::vector<T> codes_of(Data data, std::size_t n) {
  namespace k = lplab::kernels;
  std::vector<T> out(n);
  switch (data) {
    case Data::quarter:
      k::convert(std::span<const float>(gaussian(n, std::min(double(lplab::finfo<T>::max) / 4, 1e30))),
                 std::span(out));
      break;
    case Data::normal: k::convert(std::span<const float>(gaussian(n, 1.0)), std::span(out)); break;
    case Data::mx:
      if constexpr (kHasMx<T>) {
        const k::BlockScaling<T, lplab::float8_e8m0fnu> s{};
        std::vector<lplab::float8_e8m0fnu> scales(k::scales_needed(s, n));
        k::quantize(s, std::span<const float>(gaussian(n, 1.0)), std::span(out), std::span(scales));
      }
      break;
    case Data::codes: {
      constexpr std::uint64_t count = std::uint64_t{1} << lplab::finfo<T>::bits;
      for (std::size_t i = 0; i < n; ++i) out[i] = T::from_bits(i % count);
      break;
    }
  }
  return out;
}

template <class T, class To>
void BM_decode(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto data = static_cast<Data>(state.range(1));
  if (data == Data::mx && !kHasMx<T>) {
    state.SkipWithError("no MX scheme has this element format");
    return;
  }
  const std::vector<T> in = codes_of<T>(data, n);
  std::vector<To> out(n);
  for (auto _ : state) {
    lplab::kernels::convert(std::span<const T>(in), std::span(out));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  bench::rate_counter(state, "values/s", static_cast<double>(n));
  state.SetLabel(lplab::kernels::current_simd_target().name);
}

// The baseline: a memcpy of the output's bytes (n values of To).
template <class To>
void BM_memcpy(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<To> in(n);
  std::vector<To> out(n);
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), n * sizeof(To));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  bench::rate_counter(state, "values/s", static_cast<double>(n));
}

// The output types: float, and the two 16-bit formats ML code widens into.
struct Output {
  const char* name;
  void (*memcpy)(benchmark::State&);
};
const Output kOutputs[] = {{"float", BM_memcpy<float>},
                           {"bfloat16", BM_memcpy<lplab::bfloat16>},
                           {"float16", BM_memcpy<lplab::float16>}};
constexpr int kOutputCount = 3;

struct Format {
  const char* name;
  void (*bench[kOutputCount])(benchmark::State&);
};
// Every catalog format but float32 itself (formats/catalog.h's list).
#define LPLAB_DECODE_FORMAT(type, names, description)                                          \
  Format{lplab::type::descriptor.name.c_str(),                                                 \
         {BM_decode<lplab::type, float>, BM_decode<lplab::type, lplab::bfloat16>,               \
          BM_decode<lplab::type, lplab::float16>}},
const Format kAll[] = {LPLAB_FORMAT_CATALOG(LPLAB_DECODE_FORMAT)};
#undef LPLAB_DECODE_FORMAT
const std::vector<Format> kFormats = [] {
  std::vector<Format> v;
  for (const Format& f : kAll)
    if (std::string_view(f.name) != "float32") v.push_back(f);
  return v;
}();
const std::size_t kSizes[] = {kInCache, kOutOfCache};  // (kOutOfCache set before main runs)

std::string run_name(const std::string& format, const std::string& to, std::size_t n, int data) {
  return "decode/" + format + "->" + to + "/n:" + std::to_string(n) + "/data:" + std::to_string(data);
}

void register_all() {
  const std::vector<std::int64_t> sizes = {static_cast<std::int64_t>(kInCache), static_cast<std::int64_t>(kOutOfCache)};
  for (int o = 0; o < kOutputCount; ++o) {
    const std::string to = kOutputs[o].name;
    for (const Format& f : kFormats) {
      if (to == f.name) continue;  // bfloat16 -> bfloat16 is a copy
      benchmark::RegisterBenchmark(("decode/" + std::string(f.name) + "->" + to).c_str(), f.bench[o])
          ->ArgsProduct({sizes, {0, 1, 2, 3}})
          ->ArgNames({"n", "data"});
    }
    benchmark::RegisterBenchmark(("memcpy/" + to).c_str(), kOutputs[o].memcpy)->ArgsProduct({sizes})->ArgNames({"n"});
  }
}

void summary() {
  std::printf("\nCPU: %s; SIMD target: %s; in cache %zu values, out of cache %zu (largest cache %zu MiB)\n",
              lplab::kernels::cpu_model().c_str(), lplab::kernels::current_simd_target().name.c_str(), kInCache,
              kOutOfCache, bench::largest_cache_bytes() >> 20);
  for (const Output& o : kOutputs) {
    const std::string to = o.name;
    const bool narrow = to != "float";
    std::printf("\ndecode -> %s, G values/s and the ratio to a float memcpy of n values%s (same run)\n", o.name,
                narrow ? " | to a memcpy of the output's bytes" : "");
    std::printf("%-19s %-6s", "format", "where");
    for (const char* d : kDataNames) std::printf(" %*s", narrow ? 22 : 16, d);
    std::printf("\n");
    for (const Format& f : kFormats) {
      if (to == f.name) continue;
      for (std::size_t n : kSizes) {
        const double base = bench::rate("memcpy/float/n:" + std::to_string(n));
        const double bytes = bench::rate("memcpy/" + to + "/n:" + std::to_string(n));
        std::printf("%-19s %-6s", f.name, n == kInCache ? "in" : "out");
        for (int d = 0; d < 4; ++d) {
          const double r = bench::rate(run_name(f.name, to, n, d));
          if (std::isnan(r))
            std::printf(" %*s", narrow ? 22 : 16, "-");
          else if (narrow)
            std::printf("  %6.3f (%4.2fx|%4.2fx)", r / 1e9, r / base, r / bytes);
          else
            std::printf("  %6.3f (%5.2fx)", r / 1e9, r / base);
        }
        std::printf("\n");
      }
    }
    std::printf("memcpy of %s: %.3f G values/s in cache, %.3f out of cache\n", o.name,
                bench::rate("memcpy/" + to + "/n:" + std::to_string(kInCache)) / 1e9,
                bench::rate("memcpy/" + to + "/n:" + std::to_string(kOutOfCache)) / 1e9);
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
