// The CUDA backend's throughput on the GPU, timed by CUDA events
// (UseManualTime), each kernel against a baseline measured in the same run:
//   - conversions, block quantization and elementwise ops against a
//     device-to-device copy (cudaMemcpyAsync) of the same bytes, as
//     "of_copy" = (the op's bytes read + written per second) / the copy's;
//   - the emulated matmuls against cuBLASLt's GEMM of the same shape and
//     operand type, as "of_cublas" = (the emulation's products per second) /
//     cuBLASLt's; cuBLASLt's own TFLOP/s are reported as such.
// Without a GPU the program says so and exits 0 having run nothing.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "lplab/cuda.h"
#include "lplab/kernels/random.h"

namespace {

using namespace lplab;

// Bytes per second of each baseline, by name, as measured earlier in the run.
std::map<std::string, double>& baselines() {
  static std::map<std::string, double> b;
  return b;
}

class Events {
 public:
  Events() {
    cudaEventCreate(&start_);
    cudaEventCreate(&stop_);
  }
  ~Events() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  template <class F>
  double seconds(F&& f) {
    cudaEventRecord(start_);
    f();
    cudaEventRecord(stop_);
    cudaEventSynchronize(stop_);
    float ms = 0;
    cudaEventElapsedTime(&ms, start_, stop_);
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_, stop_;
};

// n floats in [-4096, 4096): the first n of one table made once.
std::span<const float> inputs(std::size_t n) {
  static const std::vector<float> x = [] {
    std::vector<float> v(std::size_t{1} << 28);
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>(static_cast<double>(kernels::splitmix64(i) >> 11) * 0x1p-50 - 4096.0);
    return v;
  }();
  return std::span<const float>(x).first(n);
}

// Runs `f` under CUDA events; rate = bytes / second; ratio to `baseline`.
template <class F>
void timed(benchmark::State& state, double bytes, const char* baseline, F&& f) {
  Events ev;
  f();  // warm-up (and the cuBLASLt heuristic)
  double total = 0;
  for (auto _ : state) {
    const double s = ev.seconds(f);
    state.SetIterationTime(s);
    total += s;
  }
  const double rate = bytes * static_cast<double>(state.iterations()) / total;
  state.counters["GB/s"] = rate * 1e-9;
  if (baseline != nullptr) {
    if (const auto it = baselines().find(baseline); it != baselines().end()) state.counters["of_copy"] = rate / it->second;
  }
}

constexpr std::size_t kN = std::size_t{1} << 28;  // 256M elements: 1 GiB of floats, far beyond L2

void BM_copy(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0));
  cuda::Buffer<unsigned char> a(bytes), b(bytes);
  cudaMemset(a.data(), 1, bytes);
  timed(state, 2.0 * bytes, nullptr, [&] { cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice); });
  baselines()["copy"] = state.counters["GB/s"] * 1e9;
}

template <class To>
void BM_encode(benchmark::State& state, kernels::ConvertOptions o) {
  const cuda::Buffer<float> x(inputs(kN));
  cuda::Buffer<To> y(kN);
  state.SetLabel(cuda::hardware_conversion<To>(o) ? "cvt instruction" : "portable core");
  timed(state, kN * (4.0 + sizeof(To)), "copy",
        [&] { cuda::convert(cuda::DeviceSpan<const float>(x.span()), y.span(), o); });
}

template <class From>
void BM_decode(benchmark::State& state) {
  const cuda::Buffer<float> x(inputs(kN));
  cuda::Buffer<From> c(kN);
  cuda::convert(cuda::DeviceSpan<const float>(x.span()), c.span(), {.overflow = Overflow::saturate});
  cuda::Buffer<float> y(kN);
  timed(state, kN * (4.0 + sizeof(From)), "copy",
        [&] { cuda::convert(cuda::DeviceSpan<const From>(c.span()), y.span()); });
}

template <class Elem, class Scale>
void BM_quantize(benchmark::State& state, kernels::BlockScaling<Elem, Scale> s) {
  const cuda::Buffer<float> x(inputs(kN));
  cuda::Buffer<Elem> q(kN);
  cuda::Buffer<Scale> sc(kernels::scales_needed(s, kN));
  float ts = 0;
  timed(state, kN * (4.0 + sizeof(Elem)) + static_cast<double>(sc.size()), "copy", [&] {
    cuda::quantize(s, cuda::DeviceSpan<const float>(x.span()), q.span(), sc.span(), &ts);
  });
}

template <class Elem>
void BM_quantize_tensor(benchmark::State& state) {
  const cuda::Buffer<float> x(inputs(kN));
  cuda::Buffer<Elem> q(kN);
  timed(state, kN * (4.0 + sizeof(Elem)), "copy", [&] {
    cuda::quantize(kernels::TensorScaling<Elem>{}, cuda::DeviceSpan<const float>(x.span()), q.span());
  });
}

// e4m3 -> relu -> e4m3: the general path (a format switch, the portable core).
void BM_relu_e4m3(benchmark::State& state) {
  const cuda::Buffer<float> xf(inputs(kN));
  cuda::Buffer<float8_e4m3fn> x(kN), y(kN);
  cuda::convert(cuda::DeviceSpan<const float>(xf.span()), x.span(), {.overflow = Overflow::saturate});
  const kernels::Layout l({kN});
  const kernels::Step relu[] = {{kernels::Unary::relu}};
  state.SetLabel("general path");
  timed(state, kN * 2.0, "copy", [&] {
    cuda::map_unary(relu, {kernels::FormatId::float8_e4m3fn, x.data(), l},
                    {kernels::FormatId::float8_e4m3fn, y.data(), l}, {}, cuda::Memory::device);
  });
}

// bf16 -> relu -> bf16, and the transposed read of a square matrix.
void BM_relu_bf16(benchmark::State& state) {
  const bool transposed = state.range(0) != 0;
  const std::size_t side = std::size_t{1} << 14;  // 2^28 elements
  const cuda::Buffer<float> xf(inputs(kN));
  cuda::Buffer<bfloat16> x(kN), y(kN);
  cuda::convert(cuda::DeviceSpan<const float>(xf.span()), x.span());
  kernels::Layout lx({side, side});
  if (transposed) lx = lx.transpose(0, 1);
  const kernels::Layout ly({side, side});
  const kernels::Step relu[] = {{kernels::Unary::relu}};
  state.SetLabel(transposed ? "fast path, input transposed" : "fast path");
  timed(state, kN * 4.0, "copy", [&] {
    cuda::map_unary(relu, {kernels::FormatId::bfloat16, x.data(), lx},
                    {kernels::FormatId::bfloat16, y.data(), ly}, {}, cuda::Memory::device);
  });
}

void BM_add_bf16(benchmark::State& state) {
  const cuda::Buffer<float> xf(inputs(kN / 2));
  cuda::Buffer<bfloat16> a(kN / 2), y(kN / 2);
  cuda::convert(cuda::DeviceSpan<const float>(xf.span()), a.span());
  const kernels::Layout l({kN / 2});
  timed(state, kN / 2 * 6.0, "copy", [&] {
    cuda::map_binary(kernels::Binary::add, 1.0f, {kernels::FormatId::bfloat16, a.data(), l},
                     {kernels::FormatId::float32, xf.data(), l},
                     {kernels::FormatId::bfloat16, y.data(), l}, {}, cuda::Memory::device);
  });
}

// cuBLASLt: TFLOP/s at m = n = k, and the products per second for the
// emulations' ratio.
template <class T, class TC>
void BM_cublas(benchmark::State& state, const char* key) {
  const auto s = static_cast<std::size_t>(state.range(0));
  const cuda::Buffer<float> xf(inputs(s * s));
  cuda::Buffer<T> a(s * s), b(s * s);
  cuda::Buffer<TC> c(s * s);
  if constexpr (std::is_same_v<T, float>) {
    cudaMemcpy(a.data(), xf.data(), s * s * 4, cudaMemcpyDeviceToDevice);
    cudaMemcpy(b.data(), xf.data(), s * s * 4, cudaMemcpyDeviceToDevice);
  } else {
    cuda::convert(cuda::DeviceSpan<const float>(xf.span()), a.span(), {.overflow = Overflow::saturate});
    cuda::convert(cuda::DeviceSpan<const float>(xf.span()), b.span(), {.overflow = Overflow::saturate});
  }
  const double products = static_cast<double>(s) * s * s;
  timed(state, products, nullptr, [&] {
    cuda::cublas_matmul<T, T, TC>(s, s, s, cuda::DeviceSpan<const T>(a.span()), cuda::DeviceSpan<const T>(b.span()),
                                  c.span());
  });
  const double rate = state.counters["GB/s"] * 1e9;  // products per second here
  state.counters.erase("GB/s");
  state.counters["TFLOP/s"] = 2.0 * rate * 1e-12;
  baselines()[key] = rate;
}

// The emulated accumulators (host operands: the API copies them in; the
// copies are outside the kernel's share but inside the time).
template <class T>
void BM_emulated(benchmark::State& state, kernels::MatmulOptions o, const char* key) {
  const auto s = static_cast<std::size_t>(state.range(0));
  std::vector<T> a(s * s);
  kernels::convert(inputs(s * s), std::span<T>(a), {.overflow = Overflow::saturate});
  std::vector<float> c(s * s);
  Events ev;
  double total = 0;
  for (auto _ : state) {
    const double t = ev.seconds([&] { cuda::matmul(s, s, s, a.data(), a.data(), c.data(), o); });
    state.SetIterationTime(t);
    total += t;
  }
  const double rate = static_cast<double>(s) * s * s * static_cast<double>(state.iterations()) / total;
  state.counters["Gproducts/s"] = rate * 1e-9;
  if (const auto it = baselines().find(key); it != baselines().end()) state.counters["of_cublas"] = rate / it->second;
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  const std::vector<cuda::Device> d = cuda::devices(&why);
  if (d.empty()) {
    std::printf("cuda_bench: no CUDA device (%s): nothing measured\n", why.c_str());
    return 0;
  }
  std::printf("GPU: %s, sm_%d%d, %d SMs, %.1f GiB\n", d[0].name.c_str(), d[0].major, d[0].minor, d[0].multiprocessors,
              static_cast<double>(d[0].memory_bytes) / (1 << 30));
  const kernels::ConvertOptions sat{.overflow = Overflow::saturate};
  benchmark::RegisterBenchmark("copy/1.25GiB", BM_copy)->Arg(static_cast<std::int64_t>(kN * 5 / 4))->UseManualTime();
  benchmark::RegisterBenchmark("convert/float->bf16", BM_encode<bfloat16>, kernels::ConvertOptions{})->UseManualTime();
  benchmark::RegisterBenchmark("convert/float->fp16", BM_encode<float16>, kernels::ConvertOptions{})->UseManualTime();
  benchmark::RegisterBenchmark("convert/float->e4m3/sat", BM_encode<float8_e4m3fn>, sat)->UseManualTime();
  benchmark::RegisterBenchmark("convert/float->e5m2/sat", BM_encode<float8_e5m2>, sat)->UseManualTime();
  benchmark::RegisterBenchmark("convert/float->e4m3/ieee", BM_encode<float8_e4m3fn>, kernels::ConvertOptions{})
      ->UseManualTime();
  benchmark::RegisterBenchmark("convert/float->e2m1/sat", BM_encode<float4_e2m1fn>, sat)->UseManualTime();
  benchmark::RegisterBenchmark("convert/float->bf16/stochastic", BM_encode<bfloat16>,
                               kernels::ConvertOptions{.round = Round::stochastic, .seed = 1})
      ->UseManualTime();
  benchmark::RegisterBenchmark("convert/bf16->float", BM_decode<bfloat16>)->UseManualTime();
  benchmark::RegisterBenchmark("convert/e4m3->float", BM_decode<float8_e4m3fn>)->UseManualTime();
  benchmark::RegisterBenchmark("quantize/mxfp8_e4m3", BM_quantize<float8_e4m3fn, float8_e8m0fnu>, kernels::mxfp8_e4m3)
      ->UseManualTime();
  benchmark::RegisterBenchmark("quantize/nvfp4", BM_quantize<float4_e2m1fn, float8_e4m3fn>, kernels::nvfp4)
      ->UseManualTime();
  benchmark::RegisterBenchmark("quantize/fp8_e4m3_tensor", BM_quantize_tensor<float8_e4m3fn>)->UseManualTime();
  benchmark::RegisterBenchmark("map/relu/bf16", BM_relu_bf16)->Arg(0)->Arg(1)->UseManualTime();
  benchmark::RegisterBenchmark("map/relu/e4m3", BM_relu_e4m3)->UseManualTime();
  benchmark::RegisterBenchmark("map/add/bf16+float", BM_add_bf16)->UseManualTime();
  benchmark::RegisterBenchmark("cublas/fp32", BM_cublas<float, float>, "fp32")->Arg(4096)->UseManualTime();
  benchmark::RegisterBenchmark("cublas/bf16", BM_cublas<bfloat16, float>, "bf16")->Arg(4096)->Arg(8192)->UseManualTime();
  benchmark::RegisterBenchmark("cublas/e4m3", BM_cublas<float8_e4m3fn, float>, "e4m3")->Arg(4096)->Arg(8192)->UseManualTime();
  benchmark::RegisterBenchmark("emulated/bf16/hopper_wgmma_bf16", BM_emulated<bfloat16>,
                               kernels::MatmulOptions{.accumulator = kernels::accumulators::hopper_wgmma_bf16}, "bf16")
      ->Arg(1024)->UseManualTime()->Iterations(3);
  benchmark::RegisterBenchmark("emulated/e4m3/hopper_wgmma_fp8", BM_emulated<float8_e4m3fn>,
                               kernels::MatmulOptions{.accumulator = kernels::accumulators::hopper_wgmma_fp8}, "e4m3")
      ->Arg(1024)->UseManualTime()->Iterations(3);
  benchmark::RegisterBenchmark("emulated/bf16/fp16_chain", BM_emulated<bfloat16>,
                               kernels::MatmulOptions{.accumulator = kernels::Accumulator::fp16}, "bf16")
      ->Arg(1024)->UseManualTime()->Iterations(3);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
