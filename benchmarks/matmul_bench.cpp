// Compute kernels' throughput, every figure beside its baseline from the same
// run:
//  - matmul, Accumulator::fp32, m = n = k = 2048, per input dtype, 1 and 2
//    threads, against Eigen's fp32 GEMM built for this machine (-march=native)
//    and the core's measured FMA peak;
//  - the emulated accumulators (fp16, bf16, tensor_core, fp64) and
//    matrix-unit instructions at 512^3 against the fp32 path at 512^3, and
//    DeepSeek-V3's fp32-scaled tiles through Hopper's FP8 wgmma, each block
//    of K promoted with its scales;
// (Elementwise ops: elementwise_bench.)
// A table at the end prints each figure and its ratio, with the CPU model
// and the SIMD target.
//
//   build/release/benchmarks/matmul_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bench_rates.h"
#include "lplab/kernels.h"

#if LPLAB_BENCH_ONEDNN
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace bench {
void eigen_native_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c);
const char* eigen_native_isa();
}  // namespace bench

namespace {

using lplab::kernels::Accumulator;
using lplab::kernels::MatmulOptions;
using lplab::kernels::View;


using bench::normal;
using bench::rate;

void flops(benchmark::State& state, double per_iteration) { bench::rate_counter(state, "FLOP/s", per_iteration); }

// The kernels' FMA probe (lplab/kernels/probes.h), the same loop the
// roofline experiment's roof is measured with, in the dispatched target.
void BM_fma_peak(benchmark::State& state) {
  double f = 0;
  for (auto _ : state) f = lplab::kernels::probe::fma_f32(1 << 20);
  flops(state, f);
  state.SetLabel(std::to_string(lplab::kernels::probe::f32_lanes()) + " lanes");
}

void BM_eigen_native(benchmark::State& state, std::size_t n) {
  const auto a = normal<float>(n * n, 1), b = normal<float>(n * n, 2);
  std::vector<float> c(n * n);
  for (auto _ : state) {
    bench::eigen_native_gemm(n, n, n, a.data(), b.data(), c.data());
    benchmark::DoNotOptimize(c.data());
  }
  flops(state, 2.0 * n * n * n);
  state.SetLabel(bench::eigen_native_isa());
}

template <class T>
void BM_matmul(benchmark::State& state, lplab::kernels::AccumulatorModel acc, std::size_t n, unsigned threads) {
  const auto a = normal<T>(n * n, 1), b = normal<T>(n * n, 2);
  std::vector<float> c(n * n);
  const MatmulOptions o{.accumulator = acc, .threads = threads};
  for (auto _ : state) {
    lplab::kernels::matmul(n, n, n, a.data(), b.data(), c.data(), o);
    benchmark::DoNotOptimize(c.data());
  }
  flops(state, 2.0 * n * n * n);
  state.SetLabel(lplab::kernels::current_simd_target().name);
}

// DeepSeek-V3's tiles (A: 1 x 128, B transposed: 128 x 128, fp32 scales)
// from N(0,1) data through an instruction, each block of K promoted with its
// two scales (matmul.h): what the fp32 promotion adds to the plain chain.
void BM_matmul_fp32_tiles(benchmark::State& state, lplab::kernels::AccumulatorModel acc, std::size_t n) {
  using E = lplab::float8_e4m3fn;
  using S = lplab::float32;
  namespace k = lplab::kernels;
  const auto x = normal<float>(n * n, 1), y = normal<float>(n * n, 2);
  std::vector<E> ea(n * n), eb(n * n);
  std::vector<S> sa(k::scales_needed(k::deepseek_1x128, n * n, n)), sb(k::scales_needed(k::deepseek_128x128, n * n, n));
  k::quantize(k::deepseek_1x128, std::span<const float>(x), n, std::span(ea), std::span(sa));
  k::quantize(k::deepseek_128x128, std::span<const float>(y), n, std::span(eb), std::span(sb));
  std::vector<float> c(n * n);
  const MatmulOptions o{.accumulator = acc, .threads = 1};
  using Op = k::BlockScaledOperand<E, S>;
  for (auto _ : state) {
    k::matmul(n, n, n, Op{k::deepseek_1x128, ea.data(), sa.data()}, Op{k::deepseek_128x128, eb.data(), sb.data()},
              c.data(), o);
    benchmark::DoNotOptimize(c.data());
  }
  flops(state, 2.0 * n * n * n);
  state.SetLabel(lplab::kernels::current_simd_target().name);
}

#if LPLAB_BENCH_ONEDNN
// oneDNN's matmul, C (f32) = A * B with A, B in `dt`, on `threads` OpenMP
// threads: the CPU's native GEMM for that type, or an error where oneDNN has
// no implementation for this CPU (f16 needs AVX512-FP16 or AMX).
void BM_onednn(benchmark::State& state, dnnl::memory::data_type dt, int threads) {
  using dnnl::memory;
  omp_set_num_threads(threads);
  const memory::dim n = 2048;
  try {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream s(eng);
    const memory::desc ab_md({n, n}, dt, memory::format_tag::ab);
    const memory::desc c_md({n, n}, memory::data_type::f32, memory::format_tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ab_md, ab_md, c_md), eng);
    const dnnl::matmul prim(pd);
    memory a(ab_md, eng), b(ab_md, eng), c(c_md, eng);
    const auto values = normal<float>(static_cast<std::size_t>(n * n), 5);
    for (memory* m : {&a, &b}) {
      void* p = m->get_data_handle();
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (dt == memory::data_type::f32) static_cast<float*>(p)[i] = values[i];
        else if (dt == memory::data_type::bf16) static_cast<std::uint16_t*>(p)[i] = lplab::bfloat16(values[i]).bits();
        else static_cast<std::uint16_t*>(p)[i] = lplab::float16(values[i]).bits();
      }
    }
    for (auto _ : state) {
      prim.execute(s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
      s.wait();
    }
    flops(state, 2.0 * n * n * n);
    state.SetLabel(pd.impl_info_str());
  } catch (const dnnl::error& e) {
    state.SkipWithError(("oneDNN has no matmul for this type on this CPU: " + std::string(e.what())).c_str());
  }
}
#endif


template <class T>
void register_type(const std::string& name) {
  for (unsigned threads : {1u, 2u})
    benchmark::RegisterBenchmark(("matmul/" + name + "/fp32/2048/threads:" + std::to_string(threads)).c_str(),
                                 BM_matmul<T>, Accumulator::fp32, std::size_t{2048}, threads)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
}

void register_all() {
  benchmark::RegisterBenchmark("peak/fma fp32", BM_fma_peak);
  benchmark::RegisterBenchmark("eigen-native/fp32/2048", BM_eigen_native, std::size_t{2048})->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("eigen-native/fp32/512", BM_eigen_native, std::size_t{512})->Unit(benchmark::kMillisecond);
#if LPLAB_BENCH_ONEDNN
  for (int threads : {1, 2}) {
    const std::string t = "/threads:" + std::to_string(threads);
    benchmark::RegisterBenchmark(("onednn/f32/2048" + t).c_str(), BM_onednn, dnnl::memory::data_type::f32, threads)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark(("onednn/bf16/2048" + t).c_str(), BM_onednn, dnnl::memory::data_type::bf16, threads)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark(("onednn/f16/2048" + t).c_str(), BM_onednn, dnnl::memory::data_type::f16, threads)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  }
#endif
  register_type<float>("float");
  register_type<lplab::bfloat16>("bf16");
  register_type<lplab::float16>("fp16");
  register_type<lplab::float8_e4m3fn>("e4m3");
  register_type<lplab::float8_e5m2>("e5m2");
  auto at512 = [](const char* name, auto fn, Accumulator acc) {
    benchmark::RegisterBenchmark(name, fn, acc, std::size_t{512}, 1u)->Unit(benchmark::kMillisecond);
  };
  at512("matmul/float/fp32/512", BM_matmul<float>, Accumulator::fp32);
  at512("matmul/bf16/bf16/512", BM_matmul<lplab::bfloat16>, Accumulator::bf16);
  at512("matmul/fp16/fp16/512", BM_matmul<lplab::float16>, Accumulator::fp16);
  at512("matmul/e4m3/tensor_core/512", BM_matmul<lplab::float8_e4m3fn>, Accumulator::tensor_core);
  at512("matmul/bf16/tensor_core/512", BM_matmul<lplab::bfloat16>, Accumulator::tensor_core);
  at512("matmul/e4m3/fp64/512", BM_matmul<lplab::float8_e4m3fn>, Accumulator::fp64);
  at512("matmul/bf16/bf16_dot2/512", BM_matmul<lplab::bfloat16>, Accumulator::bf16_dot2);
  // Matrix-unit instructions (mma.h), chained over k.
  const auto instruction = [](const char* name, auto fn, const char* preset) {
    benchmark::RegisterBenchmark(name, fn, lplab::kernels::instruction_accumulator(preset), std::size_t{512}, 1u)
        ->Unit(benchmark::kMillisecond);
  };
  instruction("matmul/e4m3/hopper.wgmma.f32.e4m3.e4m3/512", BM_matmul<lplab::float8_e4m3fn>,
              "hopper.wgmma.f32.e4m3.e4m3");
  instruction("matmul/bf16/ampere.mma.m16n8k16.f32.bf16.bf16.f32/512", BM_matmul<lplab::bfloat16>,
              "ampere.mma.m16n8k16.f32.bf16.bf16.f32");
  instruction("matmul/fp16/hopper.wgmma.f16.f16.f16/512", BM_matmul<lplab::float16>, "hopper.wgmma.f16.f16.f16");
  instruction("matmul/bf16/cdna3.mfma.f32_32x32x8_bf16/512", BM_matmul<lplab::bfloat16>,
              "cdna3.mfma.f32_32x32x8_bf16");
  benchmark::RegisterBenchmark("matmul/e4m3/hopper.wgmma.f32.e4m3.e4m3/deepseek_tiles/512", BM_matmul_fp32_tiles,
                               lplab::kernels::instruction_accumulator("hopper.wgmma.f32.e4m3.e4m3"),
                               std::size_t{512})
      ->Unit(benchmark::kMillisecond);
}


void summary() {
  std::printf("\nCPU: %s; SIMD target: %s; fp32 GEMM copy: %s\n", lplab::kernels::cpu_model().c_str(),
              lplab::kernels::current_simd_target().name.c_str(), lplab::kernels::gemm_f32_isa());
  const double peak = rate("peak/fma fp32");
  const double eigen_ = rate("eigen-native/fp32/2048");
  std::printf("FMA peak of one core: %.1f GFLOP/s; Eigen (native) fp32 GEMM 2048^3: %.1f GFLOP/s (%.0f%% of peak)\n\n",
              peak / 1e9, eigen_ / 1e9, 100 * eigen_ / peak);
  std::printf("%-44s %10s  %s\n", "matmul 2048^3, fp32 accumulator", "GFLOP/s", "ratio");
  for (const char* t : {"float", "bf16", "fp16", "e4m3", "e5m2"})
    for (int threads : {1, 2}) {
      const std::string name = std::string("matmul/") + t + "/fp32/2048/threads:" + std::to_string(threads);
      const double r = rate(name);
      std::printf("%-44s %10.1f  %.2fx Eigen native (1 thread), %.0f%% of %d-core peak\n", name.c_str(), r / 1e9,
                  r / eigen_, 100 * r / (peak * threads), threads);
    }
  std::printf("\n%-44s %10s  %s\n", "oneDNN matmul 2048^3 (native)", "GFLOP/s", "ratio");
#if LPLAB_BENCH_ONEDNN
  for (const char* t : {"f32", "bf16", "f16"})
    for (int threads : {1, 2}) {
      const std::string name = std::string("onednn/") + t + "/2048/threads:" + std::to_string(threads);
      const double r = rate(name);
      if (std::isnan(r)) std::printf("%-44s %10s  (no oneDNN kernel for it on this CPU)\n", name.c_str(), "-");
      else std::printf("%-44s %10.1f  %.2fx Eigen native (1 thread), %.0f%% of %d-core fp32 peak\n", name.c_str(),
                       r / 1e9, r / eigen_, 100 * r / (peak * threads), threads);
    }
#else
  std::printf("(oneDNN not built in: install libdnnl-dev)\n");
#endif
  std::printf("\n%-44s %10s  %s\n", "emulated accumulators 512^3", "GFLOP/s", "ratio to lplab fp32 at 512^3");
  const double f512 = rate("matmul/float/fp32/512");
  for (const char* name : {"matmul/float/fp32/512", "matmul/bf16/bf16/512", "matmul/fp16/fp16/512",
                           "matmul/e4m3/tensor_core/512", "matmul/bf16/tensor_core/512", "matmul/e4m3/fp64/512",
                           "matmul/bf16/bf16_dot2/512", "matmul/e4m3/hopper.wgmma.f32.e4m3.e4m3/512",
                           "matmul/bf16/ampere.mma.m16n8k16.f32.bf16.bf16.f32/512",
                           "matmul/fp16/hopper.wgmma.f16.f16.f16/512", "matmul/bf16/cdna3.mfma.f32_32x32x8_bf16/512",
                           "matmul/e4m3/hopper.wgmma.f32.e4m3.e4m3/deepseek_tiles/512"})
    std::printf("%-56s %10.3f  %.4fx\n", name, rate(name) / 1e9, rate(name) / f512);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::AddCustomContext("cpu_model", lplab::kernels::cpu_model());
  benchmark::AddCustomContext("simd_target", lplab::kernels::current_simd_target().name);
  bench::Collector reporter({"FLOP/s", "B/s"});
  benchmark::RunSpecifiedBenchmarks(&reporter);
  summary();
  benchmark::Shutdown();
  return 0;
}
