// Every matrix-unit preset (lplab mma --list) as a matmul's accumulator,
// against lplab's fp32 GEMM (Accumulator::fp32) at the same size in the same
// run, on one thread: C = A B with A and B of N(0,1) samples rounded to
// nearest into the instruction's operand types (block-scaled instructions:
// every block of 32 or 16 scaled by a power of two, 2^-8 .. 2^8, or an E4M3
// scale); an fp32 GEMM of the same size, timed before and after the presets
// (the median of 5 runs each; the faster counts), is the baseline. The summary table
// gives each preset's rate, its ratio to the baseline and the algorithm it
// runs.
//
//   build/release/benchmarks/mma_bench                      # 256^3, every preset
//   build/release/benchmarks/mma_bench --sizes=256,1024     # and 1024^3
//   build/release/benchmarks/mma_bench --benchmark_filter=cdna3 --threads=2
//   (--sizes: multiples of 128 up to 4096; --warmup=S: seconds of fp32 GEMM
//   before the first timing, 0 to 3600, 30 unless given;
//   --repeats=N: each preset's rate the median of N runs, 1 unless given)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "bench_rates.h"
#include "lplab/kernels.h"
#include "lplab/kernels/mma.h"

namespace {

namespace k = lplab::kernels;
using bench::rate;

// The finite values of a narrow type, sorted.
const std::vector<double>& values_of(k::MmaType t) {
  static std::map<k::MmaType, std::vector<double>> cache;
  auto [it, added] = cache.try_emplace(t);
  if (added) {
    for (std::uint64_t code = 0; code < (std::uint64_t{1} << k::mma_type_info(t).bits); ++code)
      if (const double x = k::mma_decode(t, code); std::isfinite(x)) it->second.push_back(x);
    std::sort(it->second.begin(), it->second.end());
  }
  return it->second;
}

// x rounded to the nearest value of type t (the largest where it lies past).
float nearest(k::MmaType t, float x) {
  if (t == k::MmaType::f32 || t == k::MmaType::f64) return x;
  if (t == k::MmaType::tf32) return std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) & ~0x1FFFu);
  const std::vector<double>& v = values_of(t);
  const auto it = std::lower_bound(v.begin(), v.end(), static_cast<double>(x));
  if (it == v.end()) return static_cast<float>(v.back());
  if (it == v.begin()) return static_cast<float>(*it);
  return static_cast<float>(x - *(it - 1) < *it - x ? *(it - 1) : *it);
}

std::vector<float> operand(k::MmaType t, std::size_t count, std::uint32_t seed) {
  std::vector<float> x = bench::normal<float>(count, seed);
  for (float& v : x) v = nearest(t, v);
  return x;
}

unsigned g_threads = 1;
double g_warmup = 30;  // seconds of fp32 GEMM before any timing
int g_repeats = 1;     // runs per preset, the median reported

// Load on the core before the first timing, so that the presets timed first
// and last meet the same clock.
void warm_up(double seconds) {
  const std::size_t n = 256;
  const auto a = bench::normal<float>(n * n, 1), b = bench::normal<float>(n * n, 2);
  std::vector<float> c(n * n);
  const k::MatmulOptions o{.accumulator = k::Accumulator::fp32, .threads = g_threads};
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    k::matmul(n, n, n, a.data(), b.data(), c.data(), o);
    benchmark::DoNotOptimize(c.data());
  }
}

// Operands in buffers of their own, 64-byte aligned. (With std::vector's
// operands, as the presets have, the fp32 GEMM ran at 55-65 GFLOP/s at 256^3
// in some runs and 110-123 in others on the same machine; in these buffers,
// 16 bytes off the alignment or not, at 105-120. The faster baseline makes
// the lower ratio.)
struct Aligned {
  float* p;
  explicit Aligned(const std::vector<float>& x)
      : p(static_cast<float*>(std::aligned_alloc(64, (x.size() * sizeof(float) + 63) / 64 * 64))) {
    if (p == nullptr) throw std::bad_alloc();
    std::copy(x.begin(), x.end(), p);
  }
  ~Aligned() { std::free(p); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
};

void BM_fp32(benchmark::State& state, std::size_t n) {
  const Aligned a(bench::normal<float>(n * n, 1)), b(bench::normal<float>(n * n, 2));
  Aligned c(std::vector<float>(n * n));
  const k::MatmulOptions o{.accumulator = k::Accumulator::fp32, .threads = g_threads};
  for (auto _ : state) {
    k::matmul(n, n, n, a.p, b.p, c.p, o);
    benchmark::DoNotOptimize(c.p);
  }
  bench::rate_counter(state, "FLOP/s", 2.0 * n * n * n);
  state.SetLabel(k::current_simd_target().name);
}

void BM_preset(benchmark::State& state, const k::MmaInstruction* i, std::size_t n) {
  const auto a = operand(i->a, n * n, 1), b = operand(i->b, n * n, 2);
  std::vector<double> d(n * n);
  k::MatmulOptions o;
  o.accumulator = k::instruction_accumulator(i->name);
  o.threads = g_threads;
  const k::MatmulProblem p{n, n, n, a.data(), b.data(), {}, {}};
  const bool scaled = i->scale != k::MmaType::none;
  const std::size_t block = scaled ? static_cast<std::size_t>(i->model.scale_block) : 1;
  std::vector<float> sa(scaled ? n * n / block : 0), sb(sa.size());
  std::mt19937 rng(3);
  for (auto* s : {&sa, &sb})
    for (float& x : *s)
      x = i->scale == k::MmaType::ue8m0 ? std::ldexp(1.0f, static_cast<int>(rng() % 17) - 8)
                                        : nearest(k::MmaType::ue4m3, std::ldexp(1.0f, static_cast<int>(rng() % 9)) * 1.3f);
  for (auto _ : state) {
    if (scaled)
      k::matmul_block_scaled_instruction(p, sa.data(), sb.data(), static_cast<int>(block), static_cast<int>(block),
                                         k::mma_format_name(i->scale), k::mma_format_name(i->scale), o, d.data());
    else
      k::matmul_accumulate(p, o, d.data());
    benchmark::DoNotOptimize(d.data());
  }
  bench::rate_counter(state, "FLOP/s", 2.0 * n * n * n);
  state.SetLabel(k::mma_parameters(*i));
}

std::string preset_run(const k::MmaInstruction& i, std::size_t n) { return "mma/" + i.name + "/" + std::to_string(n); }
std::string fp32_run(std::size_t n) { return "fp32/" + std::to_string(n); }
// The baseline: fp32 GEMM timed before and after the presets, the faster
// (the lower ratio) of the two.
double baseline(std::size_t n) { return std::fmax(rate(fp32_run(n)), rate(fp32_run(n) + "/after")); }

void summary(const std::vector<std::size_t>& sizes) {
  std::printf("\nCPU: %s; SIMD target: %s; threads: %u\n", k::cpu_model().c_str(), k::current_simd_target().name.c_str(),
              g_threads);
  for (std::size_t n : sizes)
    std::printf("lplab fp32 GEMM %zu^3: %.1f GFLOP/s (the faster of %.1f before the presets and %.1f after)\n", n,
                baseline(n) / 1e9, rate(fp32_run(n)) / 1e9, rate(fp32_run(n) + "/after") / 1e9);
  std::printf("\n%-72s", "preset");
  for (std::size_t n : sizes) std::printf(" %9s %7s", (std::to_string(n) + "^3 GF/s").c_str(), "ratio");
  std::printf("  model\n");
  std::map<std::string, std::pair<double, int>> worst;  // algorithm -> (lowest ratio, presets)
  for (const k::MmaInstruction& i : k::mma_instructions()) {
    if (std::isnan(rate(preset_run(i, sizes[0])))) continue;
    std::printf("%-72s", i.name.c_str());
    for (std::size_t n : sizes) {
      const double r = rate(preset_run(i, n)), base = baseline(n);
      std::printf(" %9.2f %7.3f", r / 1e9, r / base);
      auto& w = worst[k::mma_algorithm_name(i.model.algorithm)];
      if (!std::isnan(r)) w.first = w.second == 0 ? r / base : std::min(w.first, r / base), ++w.second;
    }
    std::printf("  %s\n", k::mma_parameters(i).c_str());
  }
  std::printf("\n%-20s %8s %14s\n", "algorithm", "runs", "lowest ratio");
  for (const auto& [alg, w] : worst) std::printf("%-20s %8d %14.4f\n", alg.c_str(), w.second, w.first);
}

// The whole decimal number `text` (digits only, below 10^9), else -1.
long whole_number(const char* text) {
  const std::size_t digits = std::strspn(text, "0123456789");
  if (digits == 0 || digits > 9 || text[digits] != '\0') return -1;
  return std::strtol(text, nullptr, 10);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes{256};
  std::vector<char*> args;
  for (int a = 0; a < argc; ++a) {
    if (std::strncmp(argv[a], "--sizes=", 8) == 0) {
      sizes.clear();
      const std::string list = argv[a] + 8;
      for (std::size_t from = 0; from <= list.size();) {
        const std::size_t to = std::min(list.find(',', from), list.size());
        const long n = whole_number(list.substr(from, to - from).c_str());
        from = to + 1;
        if (n <= 0 || n % 128 != 0 || n > 4096) {
          std::fprintf(stderr, "mma_bench: --sizes takes multiples of 128 up to 4096, e.g. --sizes=256,1024\n");
          return 2;
        }
        sizes.push_back(static_cast<std::size_t>(n));
      }
    } else if (std::strncmp(argv[a], "--warmup=", 9) == 0) {
      // Decimal digits with at most one point (strtod alone would also take
      // blanks, signs, hexadecimal and exponents).
      char* end = nullptr;
      const char* text = argv[a] + 9;
      const std::size_t digits = std::strspn(text, "0123456789.");
      const char* point = std::strchr(text, '.');
      const bool decimal = digits > 0 && text[digits] == '\0' && std::strcmp(text, ".") != 0 &&
                           (point == nullptr || std::strchr(point + 1, '.') == nullptr);
      g_warmup = decimal ? std::strtod(text, &end) : -1;
      if (!decimal || *end != '\0' || !(g_warmup >= 0 && g_warmup <= 3600)) {
        std::fprintf(stderr, "mma_bench: --warmup takes seconds from 0 to 3600, e.g. --warmup=30\n");
        return 2;
      }
    } else if (std::strncmp(argv[a], "--repeats=", 10) == 0) {
      const long n = whole_number(argv[a] + 10);
      if (n < 1 || n > 1000) {
        std::fprintf(stderr, "mma_bench: --repeats takes a count from 1 to 1000, e.g. --repeats=3\n");
        return 2;
      }
      g_repeats = static_cast<int>(n);
    } else if (std::strncmp(argv[a], "--threads=", 10) == 0) {
      const long n = whole_number(argv[a] + 10);
      if (n < 0 || n > 1024) {
        std::fprintf(stderr, "mma_bench: --threads takes a count from 0 (every core) to 1024, e.g. --threads=2\n");
        return 2;
      }
      g_threads = static_cast<unsigned>(n);
    } else {
      args.push_back(argv[a]);
    }
  }
  int n_args = static_cast<int>(args.size());
  for (std::size_t n : sizes) {
    benchmark::RegisterBenchmark(fp32_run(n).c_str(), BM_fp32, n)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Repetitions(5)
        ->ReportAggregatesOnly();
    for (const k::MmaInstruction& i : k::mma_instructions()) {
      auto* b = benchmark::RegisterBenchmark(preset_run(i, n).c_str(), BM_preset, &i, n)
                    ->Unit(benchmark::kMillisecond)
                    ->UseRealTime();
      if (g_repeats > 1) b->Repetitions(g_repeats)->ReportAggregatesOnly();
    }
    benchmark::RegisterBenchmark((fp32_run(n) + "/after").c_str(), BM_fp32, n)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Repetitions(5)
        ->ReportAggregatesOnly();
  }
  benchmark::Initialize(&n_args, args.data());
  if (benchmark::ReportUnrecognizedArguments(n_args, args.data())) return 2;
  warm_up(g_warmup);
  bench::Collector reporter({"FLOP/s"});
  benchmark::RunSpecifiedBenchmarks(&reporter);
  summary(sizes);
  benchmark::Shutdown();
  return 0;
}
