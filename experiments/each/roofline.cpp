// roofline: this machine's measured roofs beside the accelerators' promised
// ones, the arithmetic intensity of the lecture's ops (CS336 lecture 2), and
// lplab's kernels placed under this machine's roofs.
//
// Roofline model (Williams, Waterman, Patterson 2009, "Roofline: An
// Insightful Visual Performance Model"): attainable FLOP/s = min(peak,
// bandwidth x intensity), intensity = FLOPs / bytes moved to and from main
// memory; an op is memory-bound where its intensity is below the ridge
// peak / bandwidth.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <cstdint>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "lplab/lab/device_peaks.h"
#include "lplab/lab/experiment.h"
#include "lplab/lab/report_parts.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/packed.h"
#include "lplab/lab/machine_peaks.h"
#include "roofline_ops.h"

namespace lplab::experiments {
namespace {

constexpr double kGiga = 1e9;
// What the measured bf16 roof is: one instruction's rate in lplab's probe
// loop. On a CPU with AMX the bf16 peak is the tiles', many times higher, so
// the roof and its line in the plot never say "peak" alone.
constexpr const char* kBf16Loop = "lplab's VDPBF16PS loop (AVX512-BF16)";

// This CPU's roofs at one thread count.
struct CpuRoofs {
  unsigned threads = 1;
  double fp32 = 0, fp64 = 0, bf16 = 0;  // FLOP/s; bf16 0 without AVX512-BF16
  machine::Bandwidth bw;
};

CpuRoofs measure_roofs(unsigned threads, std::size_t stream_bytes, double seconds, int reps) {
  CpuRoofs r;
  r.threads = machine::resolve_threads(threads);
  r.fp32 = machine::peak_flops(machine::PeakKind::fp32_fma, r.threads, seconds, reps);
  r.fp64 = machine::peak_flops(machine::PeakKind::fp64_fma, r.threads, seconds, reps);
  if (machine::has_avx512_bf16())
    r.bf16 = machine::peak_flops(machine::PeakKind::bf16_dot, r.threads, seconds, reps);
  r.bw = machine::stream_bandwidth(stream_bytes, r.threads, reps);
  return r;
}

// Times op `op` of roofline_ops on T at size n; returns seconds.
template <class T>
double time_op(Op op, std::size_t n, unsigned threads, int reps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const OpCount c = op_count(op, n, 1.0);
  const std::size_t in_elems = c.elements_in;
  std::vector<float> x(in_elems);
  for (float& v : x) v = u(rng);
  std::vector<T> in(in_elems);
  kernels::convert(std::span<const float>(x), std::span<T>(in));
  std::vector<T> out(c.elements_out);
  const kernels::MatmulOptions mo{.accumulator = kernels::Accumulator::fp32, .threads = threads};
  switch (op) {
    case Op::relu:
      return machine::best_seconds(
          [&] { kernels::relu(kernels::View<const T>(in.data(), {n}), kernels::View<T>(out.data(), {n})); },
          reps);
    case Op::gelu_tanh:
      return machine::best_seconds(
          [&] {
            kernels::gelu_tanh(kernels::View<const T>(in.data(), {n}), kernels::View<T>(out.data(), {n}));
          },
          reps);
    case Op::dot:  // [1 x n] @ [n x 1]
      return machine::best_seconds(
          [&] { kernels::matmul(1, 1, n, in.data(), in.data() + n, out.data(), mo); }, reps);
    case Op::matvec:  // [n x n] @ [n x 1]
      return machine::best_seconds(
          [&] { kernels::matmul(n, 1, n, in.data(), in.data() + n * n, out.data(), mo); }, reps);
    case Op::matmul:  // [n x n] @ [n x n]
      return machine::best_seconds(
          [&] { kernels::matmul(n, n, n, in.data(), in.data() + n * n, out.data(), mo); }, reps);
  }
  return 0;
}

// The bytes per element of T as a roofline counts them: packed (sub-byte
// codes as stored), though lplab holds them one to a byte while computing.
double nominal_bytes_per_element(const FormatEntry& f) {
  return visit_format(f, []<class T>(std::type_identity<T>) {
    constexpr std::size_t group = 1 << 12;
    return static_cast<double>(kernels::packed_bytes<T>(group)) / group;
  });
}

// What the three tables share: the roofs measured at ctx.threads threads and
// on one thread, and the machine they were measured on.
struct Measured {
  const CpuRoofs& all;
  const CpuRoofs& one;
  std::string machine_text;
  unsigned threads;
};

Table roofs_table(const Context& ctx, const Measured& m, std::size_t stream_bytes) {
  const CpuRoofs& all = m.all;
  const CpuRoofs& one = m.one;
  const std::string& machine_text = m.machine_text;
  Table roofs{"roofline_roofs",
              "Peak FLOP/s, bandwidth and ridge point of this CPU (measured) and of accelerators "
              "(spec sheets)",
              roof_columns(),
              {},
              {"this_cpu: " + machine_text + "; this_cpu_1thread: the same on one thread.",
               "Measured as the Empirical Roofline Toolkit does: fp32/fp64 from 16 independent "
               "vector FMA chains (Highway's best target), bf16 from VDPBF16PS chains (AVX512-BF16 "
               "only: the rate of lplab's VDPBF16PS loop, not this CPU's bf16 peak, which AMX tile "
               "units set where the CPU has them), bandwidth the better of STREAM copy and triad "
               "over three arrays of " +
                   std::to_string(stream_bytes) + " bytes (far larger than the last-level cache "
                   "when at least 64 MiB).",
               "Accelerator peaks are dense (no 2:4 sparsity); ridge = peak / bandwidth, e.g. "
               "H100 SXM bf16 989e12 / 3.35e12 = 295.2 FLOP/byte. The figure 295.4 that circulates takes "
               "half the sparse peak, 1979e12 / 2 = 989.5e12, and gives 295.37: NVIDIA's dense bf16 figure "
               "is 989 (989.4 unrounded), so 295.2 is the datasheet's own ratio."}};
  std::uint64_t g = 0;
  const auto roof = [&](std::string dev, std::string dtype, double peak, double bw, std::string src) {
    if (ctx.shard.owns(g))
      roofs.add(g, roof_cells(std::move(dev), std::move(dtype), peak, bw, std::move(src)));
    ++g;
  };
  for (const CpuRoofs* r : {&all, &one}) {
    const std::string dev = r == &all ? "this_cpu" : "this_cpu_1thread";
    const std::string src = "measured, " + std::to_string(r->threads) + " thread(s)";
    roof(dev, "fp32", r->fp32, r->bw.best(), src);
    roof(dev, "fp64", r->fp64, r->bw.best(), src);
    if (r->bf16 > 0)
      roof(dev, "bf16", r->bf16, r->bw.best(),
           src + ", " + kBf16Loop + ", not this CPU's bf16 peak" +
               (machine::has_amx_bf16() ? "; its AMX-BF16 tiles, which lplab does not use, go further" : ""));
  }
  for (const DeviceRoof& d : device_roofs())
    roof(std::string(d.device), std::string(d.dtype), d.peak, d.bandwidth, std::string(d.source));

  return roofs;
}

Table ops_table(const Context& ctx, const Measured& m, std::size_t n_elem, std::size_t n_mat,
                const std::vector<std::string>& devices_cols) {
  const CpuRoofs& all = m.all;
  const unsigned threads = m.threads;
  std::uint64_t g = 0;
  // Ops: counts per dtype, bound on each device.
  std::vector<Column> op_cols = {{"op", ""},       {"dtype", ""},           {"n", ""},
                                 {"flops", "FLOP"}, {"bytes", "bytes"},     {"intensity", "FLOP/byte"}};
  for (const std::string& d : devices_cols) op_cols.push_back({"bound_on_" + d, ""});
  Table ops{"roofline_ops",
            "FLOPs, bytes and arithmetic intensity of the lecture's ops",
            op_cols,
            {},
            op_notes()};
  ops.notes.push_back(
      "matmul counts 2n^3 FLOPs (n multiplies and n adds per output, as FLOP counters and "
      "2mnk accounting do): bf16 at n = 1024 gives n/3 = 341.33 FLOP/byte. The figure 341.17 "
      "that circulates counts n - 1 adds per output, (2n - 1) n^2 FLOPs, for (2n - 1)/6 = 341.17; "
      "the difference is 1 part in 2n.");
  ops.notes.push_back(
      "bound_on_<device>: memory where intensity < the device's ridge for that dtype (this_cpu: "
      "the measured fp32 ridge at " + std::to_string(threads) +
      " thread(s), lplab computing every format in fp32; accelerators: device_peaks' dense peak "
      "for the operand width, FP8 on an A100 counted at its BF16 rate), else compute.");
  for (std::size_t oi = 0; oi < kOps.size(); ++oi)
    for (const FormatEntry* f : ctx.dtypes) {
      if (ctx.shard.owns(g)) {
        const Op op = kOps[oi];
        const std::size_t n = is_matrix_op(op) ? n_mat : n_elem;
        const int bits = f->info.bits;
        const double bytes_per_element = nominal_bytes_per_element(*f);
        const OpCount c = op_count(op, n, bytes_per_element);
        std::vector<Cell> row = {std::string(op_name(op)), std::string(f->name),
                                 static_cast<std::int64_t>(n), c.flops, c.bytes, c.flops / c.bytes};
        const auto bound = [&](double peak, double bw) {
          return Cell{std::string(c.flops / c.bytes < peak / bw ? "memory" : "compute")};
        };
        // lplab's kernels compute every format in fp32 (decoding is exact):
        // the fp32 roof is theirs on this CPU.
        row.push_back(bound(all.fp32, all.bw.best()));
        for (const DevicePeaks& d : kDevices) row.push_back(bound(device_peak(d, bits), d.bandwidth));
        ops.add(g, std::move(row));
      }
      ++g;
    }

  return ops;
}

Table points_table(const Context& ctx, const Measured& m, std::size_t n_elem, std::size_t n_mat, int reps,
                   std::uint64_t seed) {
  const CpuRoofs& all = m.all;
  const CpuRoofs& one = m.one;
  const std::string& machine_text = m.machine_text;
  const unsigned threads = m.threads;
  std::uint64_t g = 0;
  // Measured points.
  Table points{"roofline_points",
               "lplab's kernels on this machine's roofline (" + machine_text + ")",
               {{"op", ""},
                {"dtype", ""},
                {"n", ""},
                {"threads", ""},
                {"seconds", "s"},
                {"intensity", "FLOP/byte"},
                {"measured_gflops", "GFLOP/s"},
                {"bandwidth_gbs", "GB/s"},
                {"attainable_gflops", "GFLOP/s"},
                {"fraction_of_roof", ""}},
               {},
               {"Kernels, T in and T out: relu and gelu_tanh are kernels::relu / gelu_tanh; dot "
                "[1 x n][n x 1], matvec [n x n][n x 1] and matmul [n x n][n x n] are "
                "kernels::matmul with the fp32 accumulator. relu, gelu_tanh and dot run on one "
                "thread (the elementwise kernels take no thread count), matvec and matmul on " +
                    std::to_string(threads) + ". Seconds: best of " + std::to_string(reps) +
                    " after a warm-up.",
                "measured_gflops counts the op's nominal FLOPs (roofline_ops); intensity is its "
                "nominal bytes. Each point has its own roof, as the Empirical Roofline Toolkit "
                "draws one per memory level: bandwidth_gbs is STREAM's (the better of copy and "
                "triad) over arrays of the op's own size at the same thread count -- the cache "
                "level the op's operands live in -- and attainable = min(fp32 peak of "
                "roofline_roofs, bandwidth_gbs x intensity). matmul of a narrow format includes "
                "decoding the operands to float."}};
  // A roof is the best the machine ever shows, so it takes more trials than
  // a point (ERT keeps the best of many): best of 3 runs of a cache-sized
  // STREAM, against best of 3 of relu, left relu float32 1.1x above its roof
  // in one report of five here. The levels are cache-sized: 15 trials cost
  // tens of milliseconds.
  const int roof_trials = std::max(15, 3 * reps);
  std::map<std::pair<std::size_t, unsigned>, double> level_bw;
  const auto level_bandwidth = [&](std::size_t bytes, unsigned th) {
    auto it = level_bw.find({bytes, th});
    if (it == level_bw.end())
      it = level_bw.emplace(std::pair{bytes, th}, machine::stream_bandwidth(bytes, th, roof_trials).best()).first;
    return it->second;
  };
  std::vector<std::string> above;
  for (std::size_t oi = 0; oi < kOps.size(); ++oi)
    for (const FormatEntry* f : ctx.dtypes) {
      if (ctx.shard.owns(g)) {
        const Op op = kOps[oi];
        const bool matrix = is_matrix_op(op);
        const std::size_t n = matrix ? n_mat : n_elem;
        const CpuRoofs& r = matrix ? all : one;
        const double s = visit_format(*f, [&]<class T>(std::type_identity<T>) {
          return time_op<T>(op, n, r.threads, reps, seed + g);
        });
        const double bytes_per_element = nominal_bytes_per_element(*f);
        // lplab holds sub-byte codes one to a byte while computing; the
        // nominal (packed) bytes are what a roofline plots.
        const OpCount c = op_count(op, n, bytes_per_element);
        const double intensity = c.flops / c.bytes;
        // The bandwidth of the level the operands live in: STREAM over
        // arrays of the op's size per operand (two for the elementwise ops,
        // three for the matrix ops), measured once per size and threads.
        const auto per_array = static_cast<std::size_t>(c.bytes / (matrix ? 3.0 : 2.0));
        const double bw = level_bandwidth(std::max<std::size_t>(per_array, 4096), r.threads);
        const double attainable = std::min(r.fp32, bw * intensity);
        const double measured = c.flops / s;
        points.add(g, {std::string(op_name(op)), std::string(f->name), static_cast<std::int64_t>(n),
                       static_cast<std::int64_t>(r.threads), s, intensity, measured / kGiga, bw / kGiga,
                       attainable / kGiga, measured / attainable});
        if (measured > attainable)
          above.push_back(fmt::format("{} {} ({:.2f}x)", op_name(op), f->name, measured / attainable));
      }
      ++g;
      ctx.progress.step();
    }
  // A measured point above its roof means the roof was measured wrong (a
  // busy machine, a throttled core): the table says so rather than explain
  // it away.
  if (above.empty())
    points.notes.push_back("Every point lies at or below its roof.");
  else
    points.notes.push_back(fmt::format(
        "THE ROOF MEASUREMENT FAILED: {} measured above the roof, which cannot happen when the roof is "
        "right; the peak or bandwidth of this run is too low (a busy or throttled machine). Rerun it.",
        fmt::join(above, ", ")));
  return points;
}

std::vector<Table> run(const Context& ctx) {
  const auto& p = ctx.params;
  const auto n_elem = static_cast<std::size_t>(p.integer("n"));
  const auto n_mat = static_cast<std::size_t>(p.integer("n_matmul"));
  const auto stream_bytes = static_cast<std::size_t>(p.integer("stream_bytes"));
  const int reps = static_cast<int>(p.integer("reps"));
  const double peak_seconds = p.real("peak_seconds");
  const auto seed = static_cast<std::uint64_t>(p.integer("seed"));
  const unsigned threads = machine::resolve_threads(ctx.threads);

  // Memory the measurements hold at once: STREAM's three arrays, or an
  // operand set of the largest op in float and in the format.
  const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  const double need = std::max(3.0 * static_cast<double>(stream_bytes),
                               8.0 * (2.0 * n_mat * n_mat + n_mat * n_mat + 2.0 * n_elem));
  if (need > 0.5 * phys)
    throw UsageError("roofline: stream_bytes / n / n_matmul need " + py_repr(need / 1e9) +
                     " GB, more than half of this machine's " + py_repr(phys / 1e9) + " GB");

  const std::vector<std::string> devices_cols = [] {
    std::vector<std::string> v{"this_cpu"};
    for (const DevicePeaks& d : kDevices) v.emplace_back(d.name);
    return v;
  }();

  ctx.progress.set_total(2 + kOps.size() * ctx.dtypes.size());
  // Roofs, at ctx.threads threads and on one thread (the elementwise kernels
  // run on the calling thread).
  const CpuRoofs all = measure_roofs(threads, stream_bytes, peak_seconds, reps);
  ctx.progress.step();
  const CpuRoofs one = threads == 1 ? all : measure_roofs(1, stream_bytes, peak_seconds, reps);
  ctx.progress.step();
  const std::string machine_text = machine::machine_description(threads);

  const Measured m{all, one, machine_text, threads};
  return {roofs_table(ctx, m, stream_bytes), ops_table(ctx, m, n_elem, n_mat, devices_cols),
          points_table(ctx, m, n_elem, n_mat, reps, seed)};
}

// A roof: min(peak, bandwidth * intensity) on a log grid of intensities.
Series roof(const std::string& name, double peak_gflops, double bandwidth_gbs, const std::string& style) {
  Series s{name, {}, style};
  for (double e = -4; e <= 14.001; e += 0.25) {
    const double i = std::exp2(e);
    s.points.emplace_back(i, std::min(peak_gflops, bandwidth_gbs * i));
  }
  return s;
}

// The report's plots of this experiment's tables.
std::vector<Plot> drawn_plots(const std::vector<Table>& tables) {
  std::vector<Plot> plots;
  if (const Table* t = find_table(tables, "roofline_roofs"); t != nullptr) {
    Plot p;
    p.id = "roofline";
    p.title = "Roofline: this machine measured, H100 SXM from its spec sheet";
    p.xlabel = "arithmetic intensity [FLOP/byte]";
    p.ylabel = "attainable performance [GFLOP/s]";
    p.logx = p.logy = true;
    const std::size_t dev = t->column("device"), dt = t->column("dtype"), pk = t->column("peak_gflops"),
                      bw = t->column("bandwidth_gbs"), src = t->column("source");
    std::string bf16_note;
    for (const Row& r : t->rows) {
      const std::string d = cell_text(r.cells[dev]), type = cell_text(r.cells[dt]);
      const bool drawn = (d == "this_cpu" && (type == "fp32" || type == "bf16")) ||
                         (d == "h100_sxm" && (type == "bf16" || type == "fp8"));
      if (!drawn) continue;
      // This CPU's bf16 line is a loop's rate, not a roof of the hardware's.
      const bool loop = d == "this_cpu" && type == "bf16";
      const std::string name =
          loop ? fmt::format("{} bf16: VDPBF16PS loop, not peak", d) : fmt::format("{} {} roof", d, type);
      p.series.push_back(roof(name, cell_number(r.cells[pk]), cell_number(r.cells[bw]),
                              d == "this_cpu" ? "lines lw 2" : "lines lw 2 dt 2"));
      if (loop)
        bf16_note = fmt::format(" The this_cpu bf16 line is {}, not this CPU's bf16 peak{}.", kBf16Loop,
                                cell_text(r.cells[src]).find("AMX") != std::string::npos
                                    ? ": its AMX-BF16 tiles, which lplab does not use, go further"
                                    : "");
    }
    if (const Table* pts = find_table(tables, "roofline_points"))
      for (Series& s : series_from_table(*pts, "intensity", "measured_gflops", {"op"}, {}, true, true)) {
        s.name += " (measured here)";
        s.style = "points pt 7 ps 1.2";
        p.series.push_back(std::move(s));
      }
    p.caption = "Lines: roofs, min(peak, bandwidth x intensity), this CPU's from an FMA loop and a STREAM triad on "
                "all cores, H100's from NVIDIA's dense peaks and 3.35 TB/s. Points: lplab's kernels measured here at "
                "the lecture's sizes (each op in several dtypes). Each point's own roof uses the bandwidth at its working set (roofline_points)." +
                bf16_note;
    add_plot(plots, std::move(p));
  }
  return plots;
}

// The report's headline figures from this experiment's tables.
void headline_figures(const std::vector<Table>& tables, Headlines& h) {
  h.add("H100 SXM bf16 accelerator intensity [FLOP/byte]",
      formatted(lookup(tables, "roofline_roofs", {{"device", "h100_sxm"}, {"dtype", "bf16"}}, "ridge_flop_per_byte"), "{:.1f}"),
      "989 / 3.35 = 295.2 (295.4 uses 1979 / 2 = 989.5)", "roofline_roofs");
  const std::string n_ops = cell_text(lookup(tables, "roofline_ops", {{"op", "matmul"}, {"dtype", "bfloat16"}}, "n"));
  h.add(fmt::format("bf16 matmul intensity, n = {} [FLOP/byte]", n_ops),
      formatted(lookup(tables, "roofline_ops", {{"op", "matmul"}, {"dtype", "bfloat16"}}, "intensity"), "{:.2f}"),
      "n/3 with 2n^3 FLOPs (341.33 at n = 1024; 341.17 counts (2n-1)n^2)", "roofline_ops");
  h.add("this CPU: fp32 FMA peak [GFLOP/s] / STREAM bandwidth [GB/s]",
      fmt::format("{} / {}", cell_text(formatted(lookup(tables, "roofline_roofs", {{"device", "this_cpu"}, {"dtype", "fp32"}}, "peak_gflops"), "{:.1f}")),
                  cell_text(formatted(lookup(tables, "roofline_roofs", {{"device", "this_cpu"}, {"dtype", "fp32"}}, "bandwidth_gbs"), "{:.1f}"))),
      "measured", "roofline_roofs");
  const std::string n_points = cell_text(lookup(tables, "roofline_points", {{"op", "matmul"}, {"dtype", "float32"}}, "n"));
  h.add(fmt::format("this CPU: fp32 matmul n = {} [GFLOP/s], fraction of the FMA peak", n_points),
      fmt::format("{}, {}", cell_text(formatted(lookup(tables, "roofline_points", {{"op", "matmul"}, {"dtype", "float32"}}, "measured_gflops"), "{:.1f}")),
                  cell_text(formatted(lookup(tables, "roofline_points", {{"op", "matmul"}, {"dtype", "float32"}}, "fraction_of_roof"), "{:.2f}"))),
      "measured; at most 1 (no point above its roof)", "roofline_points");
}

}  // namespace

Experiment roofline_experiment() {
  return {
      "roofline",
      "this CPU's measured roofs vs accelerators' spec peaks; intensity of relu, gelu, dot, matvec, "
      "matmul",
      {
          {"n", ParamType::integer, "1048576", 1, 1 << 28,
           "elements of the elementwise ops and of dot (lecture: 1024 x 1024)", {}, false},
          {"n_matmul", ParamType::integer, "1024", 1, 16384,
           "matrix size of matvec and matmul (lecture: 1024)", {}, false},
          {"stream_bytes", ParamType::integer, "268435456", 1 << 16, 68719476736.0,
           "bytes of each STREAM array (256 MiB)", {}, false},
          {"reps", ParamType::integer, "5", 1, 1000, "timed repetitions (the best is kept)", {},
           false},
          {"peak_seconds", ParamType::real, "0.1", 1e-3, 10, "seconds of each FMA-loop run", {},
           false},
          {"seed", ParamType::integer, "0", 0, 9.0e15, "seed of the operand values", {}, false},
      },
      {"float32", "bfloat16", "float8_e4m3fn", "float4_e2m1fn"},
      false,
      {{"stream_bytes", "67108864"}, {"reps", "3"}, {"peak_seconds", "0.05"}},
      run,
      {{"n", "65536"}, {"n_matmul", "128"}, {"stream_bytes", "4194304"}, {"reps", "1"}, {"peak_seconds", "0.005"}},
      /*summarize=*/{},
      /*takes_declared_formats=*/false,
      /*place=*/70,
      /*plots=*/drawn_plots,
      /*headlines=*/headline_figures,
  };
}

}  // namespace lplab::experiments
