// Scalar conversion float -> each format: lplab beside CUDA's host conversion
// on the same inputs, in one run. At the end a table gives each pair's
// ns/value and the ratio lplab / CUDA (below 1: lplab is faster).
//
//   build/release/benchmarks/convert_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "lplab/formats.h"

namespace {

constexpr std::size_t kValues = 4096;

enum class Dist { full_range, gaussian };

// Two input sets. full_range: log-uniform over the format's whole range, both
// signs, so subnormal results and overflow are as common as their share of
// binades (a quarter of fp16's, half of FP6 E2M3's): the hard case.
// gaussian: N(0, 1) scaled to the format's max / 4, as tensors are scaled
// before a cast: almost every value lands in the normal range.
template <class T>
const std::vector<float>& inputs(Dist dist) {
  static const std::vector<float> sets[2] = {[] {
    std::mt19937 rng(7);
    const double lo = std::log2(lplab::finfo<T>::smallest_subnormal),
                 hi = std::log2(lplab::finfo<T>::max) + 1;
    std::uniform_real_distribution<double> e(lo, hi);
    std::vector<float> out(kValues);
    for (std::size_t i = 0; i < kValues; ++i)
      out[i] = static_cast<float>(std::exp2(e(rng)) * ((i & 1) ? -1 : 1));
    return out;
  }(), [] {
    std::mt19937 rng(11);
    std::normal_distribution<double> g(0.0, std::min(lplab::finfo<T>::max / 4, 1e30));
    std::vector<float> out(kValues);
    for (auto& v : out) v = static_cast<float>(g(rng));
    return out;
  }()};
  return sets[dist == Dist::gaussian ? 1 : 0];
}

template <class T, class F>
void run(benchmark::State& state, Dist dist, F convert_one) {
  const auto& in = inputs<T>(dist);
  std::vector<std::uint32_t> out(kValues);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kValues; ++i) out[i] = convert_one(in[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kValues));
}

template <class T>
void lplab_convert(benchmark::State& state, Dist dist, lplab::Round r, lplab::Overflow o) {
  run<T>(state, dist, [r, o](float x) -> std::uint32_t { return lplab::convert<T>(x, r, o).bits(); });
}

template <class T, std::uint32_t (*Cuda)(float)>
void cuda_convert(benchmark::State& state, Dist dist) {
  run<T>(state, dist, Cuda);
}

std::uint32_t cuda_f16(float x) { return __half_as_ushort(__float2half_rn(x)); }
std::uint32_t cuda_bf16(float x) { return __bfloat16_as_ushort(__float2bfloat16_rn(x)); }
std::uint32_t cuda_e4m3(float x) { return __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3); }
std::uint32_t cuda_e5m2(float x) { return __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2); }
std::uint32_t cuda_e4m3_sat(float x) { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }
std::uint32_t cuda_e8m0(float x) { return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf); }
std::uint32_t cuda_e2m3(float x) { return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest); }
std::uint32_t cuda_e3m2(float x) { return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest); }
std::uint32_t cuda_e2m1(float x) { return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest); }

using lplab::Overflow;
using lplab::Round;
constexpr Round rne = Round::nearest_even;

template <class T, std::uint32_t (*Cuda)(float)>
void pair(const std::string& label, Round r, Overflow o) {
  for (Dist dist : {Dist::full_range, Dist::gaussian}) {
    const std::string name =
        "convert/" + label + (dist == Dist::gaussian ? "/gaussian" : "/full_range");
    benchmark::RegisterBenchmark((name + "/lplab").c_str(),
                                 [=](benchmark::State& s) { lplab_convert<T>(s, dist, r, o); });
    benchmark::RegisterBenchmark((name + "/cuda").c_str(),
                                 [=](benchmark::State& s) { cuda_convert<T, Cuda>(s, dist); });
  }
}

// Console output as usual, plus the ratio table at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    // With --benchmark_repetitions the median stands for a benchmark;
    // otherwise its single run does.
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.run_type != Run::RT_Iteration && !median) continue;
      const auto items = r.counters.find("items_per_second");
      if (items == r.counters.end()) continue;
      const std::string name = r.run_name.function_name;
      if (median || medians_.count(name) == 0) ns_per_value_[name] = 1e9 / items->second.value;
      if (median) medians_.insert(name);
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n%-44s %10s %10s %14s\n", "conversion (float ->) / inputs", "lplab ns", "cuda ns",
                "lplab / cuda");
    for (const auto& [name, ns] : ns_per_value_) {
      if (name.size() < 6 || name.compare(name.size() - 6, 6, "/lplab") != 0) continue;
      const std::string base = name.substr(0, name.size() - 6);
      const auto c = ns_per_value_.find(base + "/cuda");
      if (c == ns_per_value_.end()) continue;
      std::printf("%-44s %10.3f %10.3f %14.3f\n", base.substr(8).c_str(), ns, c->second, ns / c->second);
    }
  }

 private:
  std::map<std::string, double> ns_per_value_;
  std::set<std::string> medians_;
};

}  // namespace

int main(int argc, char** argv) {
  pair<lplab::float16, cuda_f16>("float16_rne", rne, Overflow::ieee);
  pair<lplab::bfloat16, cuda_bf16>("bfloat16_rne", rne, Overflow::ieee);
  pair<lplab::float8_e4m3fn, cuda_e4m3>("float8_e4m3fn_rne", rne, Overflow::ieee);
  pair<lplab::float8_e4m3fn, cuda_e4m3_sat>("float8_e4m3fn_rne_satfinite", rne, Overflow::saturate);
  pair<lplab::float8_e5m2, cuda_e5m2>("float8_e5m2_rne", rne, Overflow::ieee);
  pair<lplab::float8_e8m0fnu, cuda_e8m0>("float8_e8m0fnu_ru_satfinite", Round::upward, Overflow::saturate);
  pair<lplab::float6_e2m3fn, cuda_e2m3>("float6_e2m3fn_rne", rne, Overflow::saturate);
  pair<lplab::float6_e3m2fn, cuda_e3m2>("float6_e3m2fn_rne", rne, Overflow::saturate);
  pair<lplab::float4_e2m1fn, cuda_e2m1>("float4_e2m1fn_rne", rne, Overflow::saturate);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
