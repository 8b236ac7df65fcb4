// throughput: how fast lplab's kernels run on this CPU, per format, against
// this machine's measured roofs (machine_peaks.h): bulk conversion (GB/s),
// elementwise ops (GB/s and GFLOP/s) and matmul (GFLOP/s).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

#include "lplab/lab/experiment.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/matmul.h"
#include "lplab/lab/machine_peaks.h"
#include "roofline_ops.h"
#include "throughput_rates.h"

namespace lplab::experiments {
namespace {

constexpr double kGiga = 1e9;

// The kernels measured for each dtype, in grid order.
enum class Kind { convert_to, convert_from, relu, gelu_tanh, add, matmul };
constexpr std::array<Kind, 6> kKinds{Kind::convert_to, Kind::convert_from, Kind::relu,
                                     Kind::gelu_tanh,  Kind::add,          Kind::matmul};

struct Measurement {
  std::string kind, op;
  std::size_t n = 0;
  unsigned threads = 1;
  double seconds = 0, bytes = 0, flops = 0;  // flops 0: not counted
};

template <class T>
Measurement measure(Kind kind, std::size_t n, std::size_t mn, unsigned threads, int reps,
                    std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const double elem = sizeof(T), fl = sizeof(float);
  if (kind == Kind::matmul) {
    std::vector<float> x(2 * mn * mn);
    for (float& v : x) v = u(rng);
    std::vector<T> ab(x.size());
    kernels::convert(std::span<const float>(x), std::span<T>(ab));
    std::vector<float> c(mn * mn);
    const kernels::MatmulOptions mo{.accumulator = kernels::Accumulator::fp32, .threads = threads};
    const double s = machine::best_seconds(
        [&] { kernels::matmul(mn, mn, mn, ab.data(), ab.data() + mn * mn, c.data(), mo); }, reps);
    const double d = static_cast<double>(mn);
    return {"matmul", "matmul_fp32_acc", mn, threads, s, 2 * d * d * elem + d * d * fl,
            2 * d * d * d};
  }
  std::vector<float> x(n);
  for (float& v : x) v = u(rng);
  std::vector<T> a(n), b(n), y(n);
  kernels::convert(std::span<const float>(x), std::span<T>(a));
  kernels::convert(std::span<const float>(x), std::span<T>(b));
  const kernels::View<const T> va(a.data(), {n}), vb(b.data(), {n});
  const kernels::View<T> vy(y.data(), {n});
  const kernels::ConvertOptions co{.threads = threads};
  const double dn = static_cast<double>(n);
  const auto time = [&](auto&& f) { return machine::best_seconds(f, reps); };
  switch (kind) {
    case Kind::convert_to:
      return {"convert", "from_float", n, threads,
              time([&] { kernels::convert(std::span<const float>(x), std::span<T>(y), co); }),
              dn * (fl + elem), 0};
    case Kind::convert_from:
      return {"convert", "to_float", n, threads,
              time([&] { kernels::convert(std::span<const T>(a), std::span<float>(x), co); }),
              dn * (fl + elem), 0};
    case Kind::relu:
      return {"elementwise", "relu", n, 1, time([&] { kernels::relu(va, vy); }), 2 * dn * elem, dn};
    case Kind::gelu_tanh:
      return {"elementwise", "gelu_tanh", n, 1, time([&] { kernels::gelu_tanh(va, vy); }),
              2 * dn * elem, kGeluTanhFlops * dn};
    case Kind::add:
      return {"elementwise", "add", n, 1, time([&] { kernels::add(va, vb, vy); }), 3 * dn * elem,
              dn};
    case Kind::matmul: break;
  }
  return {};
}

std::vector<Table> run(const Context& ctx) {
  const auto& p = ctx.params;
  const auto n = static_cast<std::size_t>(p.integer("n"));
  const auto mn = static_cast<std::size_t>(p.integer("matmul_n"));
  const int reps = static_cast<int>(p.integer("reps"));
  const auto seed = static_cast<std::uint64_t>(p.integer("seed"));
  const unsigned threads = machine::resolve_threads(ctx.threads);

  // Buffers held at once: x, a, b, y (at most 4 bytes an element each) and
  // the three STREAM arrays of 4n bytes; the matmul operands in float and T.
  const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  const double need = std::max(7.0 * 4.0 * static_cast<double>(n),
                               8.0 * 3.0 * static_cast<double>(mn) * static_cast<double>(mn));
  if (need > 0.5 * phys)
    throw UsageError("throughput: n / matmul_n need " + py_repr(need / 1e9) +
                     " GB, more than half of this machine's " + py_repr(phys / 1e9) + " GB");

  ctx.progress.set_total(3 + kKinds.size() * ctx.dtypes.size());
  // Roofs. Bandwidth is measured over arrays of the size of the kernels'
  // float array (4n bytes), so a kernel and its roof read from the same level
  // of the memory hierarchy; the elementwise kernels run on one thread and
  // are compared with one thread's bandwidth.
  const double peak = machine::peak_flops(machine::PeakKind::fp32_fma, threads, 0.05, 5);
  ctx.progress.step();
  // At least 5 runs of the roofs: on a shared machine a roof measured in a
  // busy moment would inflate every utilisation.
  const int roof_reps = std::max(reps, 5);
  const machine::Bandwidth bw_all = machine::stream_bandwidth(4 * n, threads, roof_reps);
  ctx.progress.step();
  const machine::Bandwidth bw_one =
      threads == 1 ? bw_all : machine::stream_bandwidth(4 * n, 1, roof_reps);
  ctx.progress.step();
  const throughput::Roofs roofs{.peak_flops = peak, .bandwidth_all = bw_all.best(), .bandwidth_one = bw_one.best()};

  Table t{"throughput",
          "lplab kernels on " + machine::machine_description(threads),
          {{"kind", ""},
           {"op", ""},
           {"dtype", ""},
           {"n", ""},
           {"threads", ""},
           {"seconds", "s"},
           {"bytes", "bytes"},
           {"flops", "FLOP"},
           {"gb_per_s", "GB/s"},
           {"gflop_per_s", "GFLOP/s"},
           {"utilisation", ""}},
          {},
          {"Machine: " + machine::machine_description(threads) + ".",
           "seconds: best of " + std::to_string(reps) + " (roofs: best of " + std::to_string(roof_reps) + ")" +
               " after a warm-up (std::chrono::steady_clock). convert: kernels::convert float -> "
               "dtype (from_float) and back (to_float) on " +
               std::to_string(threads) +
               " thread(s); elementwise: kernels::relu / gelu_tanh / add, dtype in and out, one "
               "thread; matmul: kernels::matmul of n x n dtype operands, fp32 accumulator, float "
               "C, " + std::to_string(threads) + " thread(s), operand decoding included.",
           "bytes: as lplab stores them (one code per byte for FP6/FP4, sizeof(T) per element); "
           "each array read or written once. flops: relu and add n, gelu_tanh 20n (roofline_ops' "
           "convention), matmul 2n^3.",
           "utilisation: convert and elementwise gb_per_s / STREAM bandwidth (best of copy and "
           "triad) over arrays of 4n bytes at the same thread count: " +
               fmt::format("{:.4g}", bw_all.best() / kGiga) + " GB/s on " + std::to_string(threads) +
               " thread(s), " + fmt::format("{:.4g}", bw_one.best() / kGiga) +
               " GB/s on one; matmul gflop_per_s / the measured fp32 FMA peak " +
               fmt::format("{:.4g}", peak / kGiga) + " GFLOP/s."}};
  std::uint64_t g = 0;
  for (const FormatEntry* f : ctx.dtypes)
    for (Kind kind : kKinds) {
      if (ctx.shard.owns(g)) {
        const Measurement m = visit_format(*f, [&]<class T>(std::type_identity<T>) {
          return measure<T>(kind, n, mn, threads, reps, seed + g);
        });
        const throughput::Rates r = throughput::rates(
            {.compute_bound = kind == Kind::matmul, .threads = m.threads, .seconds = m.seconds,
             .bytes = m.bytes, .flops = m.flops},
            roofs);
        t.add(g, {m.kind, m.op, std::string(f->name), static_cast<std::int64_t>(m.n),
                  static_cast<std::int64_t>(m.threads), m.seconds, m.bytes,
                  m.flops > 0 ? Cell{m.flops} : Cell{}, r.gb_per_s, m.flops > 0 ? Cell{r.gflop_per_s} : Cell{},
                  r.utilisation});
      }
      ++g;
      ctx.progress.step();
    }
  return {t};
}

}  // namespace

Experiment throughput_experiment() {
  return {
      "throughput",
      "GB/s and GFLOP/s of lplab's conversion, elementwise and matmul kernels per format",
      {
          {"n", ParamType::integer, "16777216", 1024, 1 << 30,
           "elements of the conversion and elementwise arrays (2^24)", {}, false},
          {"matmul_n", ParamType::integer, "512", 1, 8192, "matrix size of the matmul", {}, false},
          {"reps", ParamType::integer, "5", 1, 1000, "timed repetitions (the best is kept)", {},
           false},
          {"seed", ParamType::integer, "0", 0, 9.0e15, "seed of the operand values", {}, false},
      },
      {"float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float6_e2m3fn",
       "float4_e2m1fn"},
      false,
      {{"n", "4194304"}, {"matmul_n", "256"}, {"reps", "3"}},
      run,
      {{"n", "65536"}, {"matmul_n", "32"}, {"reps", "1"}},
      /*summarize=*/{},
      /*takes_declared_formats=*/false,
      /*place=*/80,
  };
}

}  // namespace lplab::experiments
