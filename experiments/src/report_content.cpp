// What the report shows beyond the experiments' own tables: its plots and
// its summary of headline figures, both drawn from the tables by column name.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "lplab/experiments/format_registry.h"
#include "lplab/experiments/report.h"

namespace lplab::experiments {
namespace {

using Match = std::vector<std::pair<std::string, std::string>>;

const Table* find_table(const std::vector<Table>& tables, const std::string& id) {
  for (const Table& t : tables)
    if (t.id == id) return &t;
  return nullptr;
}

std::function<bool(const Row&)> where(const Table& t, const Match& match) {
  std::vector<std::pair<std::size_t, std::string>> m;
  for (const auto& [c, v] : match) m.emplace_back(t.column(c), v);
  return [m](const Row& r) {
    return std::all_of(m.begin(), m.end(), [&](const auto& p) { return cell_text(r.cells[p.first]) == p.second; });
  };
}

// The cell of `column` in the last row of table `id` whose cells equal the
// texts in `match`; empty when there is none (the summary then says so).
Cell lookup(const std::vector<Table>& tables, const std::string& id, const Match& match, const std::string& column) {
  const Table* t = find_table(tables, id);
  if (t == nullptr) return std::monostate{};
  try {
    const auto keep = where(*t, match);
    const std::size_t col = t->column(column);
    Cell found = std::monostate{};
    for (const Row& r : t->rows)
      if (keep(r)) found = r.cells[col];
    return found;
  } catch (const std::out_of_range&) {
    return std::monostate{};
  }
}

// Each format's positive finite values on a log axis, one line per format.
Plot values_plot(bool narrow) {
  Plot p;
  p.id = narrow ? "format_values_narrow" : "format_values";
  p.title = narrow ? "Every positive value of the 4-, 6- and 8-bit element formats"
                   : "Positive finite values of each format";
  p.xlabel = "value (log scale; values have no unit)";
  p.logx = true;
  p.caption = narrow ? "Each dot is one value. E4M3 ends at 448 and E5M2 at 57344; below each format's "
                       "smallest subnormal everything flushes to zero. FP4 (E2M1) has 7 positive values."
                     : "Where each format's values lie (bf16 and fp16: every 64th code). bf16 spans fp32's "
                       "range with 8 significant bits; fp16 ends at 65504; E8M0 (the MX scale) is powers of two only.";
  int row = 0;
  for (const FormatEntry& e : formats()) {
    if (e.info.bits > 16) continue;
    if (narrow && (e.info.bits > 8 || e.info.mantissa_bits == 0)) continue;
    const std::uint64_t codes = std::uint64_t{1} << e.info.bits;
    const std::uint64_t stride = e.info.bits > 8 ? 64 : 1;
    std::set<double> values;
    for (std::uint64_t c = 0; c < codes; c += stride) {
      const double v = e.to_double(c);
      if (std::isfinite(v) && v > 0) values.insert(v);
    }
    Series s{std::string(e.name), {}, narrow ? "points pt 7 ps 0.5" : "points pt 7 ps 0.35"};
    for (double v : values) s.points.emplace_back(v, row);
    p.series.push_back(std::move(s));
    p.yticks.emplace_back(row, std::string(e.name));
    ++row;
  }
  p.extra.push_back("set key off");
  if (narrow) p.extra.push_back("set xrange [1e-9:1e6]");
  return p;
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

// Legend entries of matmul_error series grouped by (accumulator, promote_every).
void name_accumulators(std::vector<Series>& series) {
  for (Series& s : series) {
    if (s.name == "tensor_core 0") s.name = "tensor_core, no promotion";
    else if (s.name.starts_with("tensor_core ")) s.name = "tensor_core, promoted every " + s.name.substr(12);
    else s.name = s.name.substr(0, s.name.find(' ')) + " accumulator";
  }
}

void add_plot(std::vector<Plot>& plots, Plot p) {
  const bool any = std::any_of(p.series.begin(), p.series.end(), [](const Series& s) { return !s.points.empty(); });
  if (any) plots.push_back(std::move(p));
}

}  // namespace

std::vector<Plot> report_plots(const std::vector<Table>& tables) {
  std::vector<Plot> plots;
  plots.push_back(values_plot(false));
  plots.push_back(values_plot(true));

  if (const Table* t = find_table(tables, "roofline_roofs"); t != nullptr) {
    Plot p;
    p.id = "roofline";
    p.title = "Roofline: this machine measured, H100 SXM from its spec sheet";
    p.xlabel = "arithmetic intensity [FLOP/byte]";
    p.ylabel = "attainable performance [GFLOP/s]";
    p.logx = p.logy = true;
    const std::size_t dev = t->column("device"), dt = t->column("dtype"), pk = t->column("peak_gflops"),
                      bw = t->column("bandwidth_gbs");
    for (const Row& r : t->rows) {
      const std::string d = cell_text(r.cells[dev]), type = cell_text(r.cells[dt]);
      if ((d == "this_cpu" && (type == "fp32" || type == "bf16")) || (d == "h100_sxm" && (type == "bf16" || type == "fp8")))
        p.series.push_back(roof(fmt::format("{} {} roof", d, type), cell_number(r.cells[pk]), cell_number(r.cells[bw]),
                                d == "this_cpu" ? "lines lw 2" : "lines lw 2 dt 2"));
    }
    if (const Table* pts = find_table(tables, "roofline_points"))
      for (Series& s : series_from_table(*pts, "intensity", "measured_gflops", {"op"}, {}, true, true)) {
        s.name += " (measured here)";
        s.style = "points pt 7 ps 1.2";
        p.series.push_back(std::move(s));
      }
    p.caption = "Lines: roofs, min(peak, bandwidth x intensity), this CPU's from an FMA loop and a STREAM triad on "
                "all cores, H100's from NVIDIA's dense peaks and 3.35 TB/s. Points: lplab's kernels measured here at "
                "the lecture's sizes (each op in several dtypes). Each point's own roof uses the bandwidth at its working set (roofline_points).";
    add_plot(plots, std::move(p));
  }

  if (const Table* t = find_table(tables, "matmul_error"); t != nullptr) {
    Plot p;
    p.id = "matmul_error_e4m3";
    p.title = "Matmul error vs k: E4M3 inputs, |N(0,1)|, per accumulator";
    p.xlabel = "k (inner dimension)";
    p.ylabel = "max relative error of an output";
    p.logx = p.logy = true;
    p.series = series_from_table(*t, "k", "rel_err_max", {"accumulator", "promote_every"},
                                 where(*t, {{"distribution", "half_normal"}, {"input", "float8_e4m3fn"}}), true, true);
    name_accumulators(p.series);
    p.extra.push_back("set arrow from graph 0, first 0.02 to graph 1, first 0.02 nohead dt 3 lc rgb '#888888'");
    p.extra.push_back("set label '2% (DeepSeek-V3, k = 4096)' at graph 0.02, first 0.026 textcolor rgb '#666666'");
    p.caption = "The tensor-core model of Hopper's fp8 accumulation (13 fraction bits) loses accuracy as k grows; "
                "promoting the partial sum into fp32 every 128 products (DeepSeek-V3 section 3.3.2) removes the "
                "growth. fp32 accumulation stays near 1e-7 (missing points: exactly zero error).";
    add_plot(plots, std::move(p));
    Plot q;
    q.id = "matmul_error_bf16";
    q.title = "Matmul error vs k: bf16 inputs, N(0,1), per accumulator";
    q.xlabel = "k (inner dimension)";
    q.ylabel = "||C - C_exact|| / ||C_exact||";
    q.logx = q.logy = true;
    q.series = series_from_table(*t, "k", "rel_err_norm", {"accumulator", "promote_every"},
                                 where(*t, {{"distribution", "normal"}, {"input", "bfloat16"}}), true, true);
    name_accumulators(q.series);
    q.caption = "Accumulating in fp16 or bf16 (rounding after every addition) grows like sqrt(k) times the format's "
                "unit roundoff, and stagnates once the partial sums dwarf the products.";
    add_plot(plots, std::move(q));
  }

  if (const Table* t = find_table(tables, "underflow_scales"); t != nullptr) {
    Plot p;
    p.id = "underflow_vs_scale";
    p.title = "Fraction flushed to zero vs scale: N(0, sigma^2) values, per dtype";
    p.xlabel = "sigma (standard deviation of the values)";
    p.ylabel = "fraction of values that became 0";
    p.logx = true;
    p.series = series_from_table(*t, "sigma", "frac_zero", {"dtype"},
                                 where(*t, {{"distribution", "normal"}, {"scaling", "none"}, {"overflow", "ieee"}}), true);
    for (Series& s : series_from_table(*t, "sigma", "frac_zero", {"dtype"},
                                       where(*t, {{"distribution", "normal"}, {"scaling", "block"}}), true)) {
      s.style = "linespoints dt 2";
      p.series.push_back(std::move(s));
    }
    p.extra.push_back("set yrange [-0.02:1.02]");
    p.caption = "Solid: plain conversion; dashed: MX and NVFP4 block scaling (a shared scale per 32 or 16 values), which "
                "moves every block into the element format's range, so the fraction stays flat across 18 decades.";
    add_plot(plots, std::move(p));
    Plot q;
    q.id = "overflow_vs_scale";
    q.title = "Fraction overflowed (inf, NaN or saturated) vs scale, per dtype";
    q.xlabel = "sigma (standard deviation of the values)";
    q.ylabel = "fraction of values beyond the format's max";
    q.logx = true;
    const std::size_t ov = t->column("frac_overflow"), nan = t->column("frac_nan");
    Table sum = *t;
    sum.columns.push_back({"lost", ""});
    for (Row& r : sum.rows) r.cells.push_back(cell_number(r.cells[ov]) + cell_number(r.cells[nan]));
    q.series = series_from_table(sum, "sigma", "lost", {"dtype"},
                                 where(sum, {{"distribution", "normal"}, {"scaling", "none"}, {"overflow", "ieee"}}), true);
    q.extra.push_back("set yrange [-0.02:1.02]");
    q.caption = "E4M3 overflows from sigma of about 100 (max 448), fp16 from about 10^4 (max 65504); bf16 and fp32 "
                "never in this range.";
    add_plot(plots, std::move(q));
  }

  if (const Table* t = find_table(tables, "error_ulp_histogram"); t != nullptr) {
    Plot p;
    p.id = "ulp_error_histogram";
    p.title = "Conversion error in ULPs of N(0,1) values: bf16 and E4M3 by rounding mode";
    p.xlabel = "|error| [ULP of the result's binade] (lower bin edge)";
    p.ylabel = "fraction of values";
    for (const char* dtype : {"bfloat16", "float8_e4m3fn"})
      for (const char* round : {"nearest_even", "toward_zero", "stochastic"})
        for (Series& s : series_from_table(*t, "ulp_lo", "fraction", {"dtype", "round"},
                                           where(*t, {{"dtype", dtype}, {"round", round}}))) {
          s.style = std::string(dtype) == "bfloat16" ? "steps lw 2" : "steps lw 2 dt 2";
          p.series.push_back(std::move(s));
        }
    p.caption = "Round to nearest keeps every error within half an ULP, spread evenly; toward zero spreads it over a "
                "whole ULP; stochastic rounding's error is larger (triangular on [0, 1)) but unbiased on average.";
    add_plot(plots, std::move(p));
  }

  if (const Table* t = find_table(tables, "footprint_training"); t != nullptr) {
    Plot p;
    p.id = "footprint_recipes";
    p.title = "Training memory per parameter, by recipe (weights, gradients, master copy, Adam)";
    p.ylabel = "bytes per parameter";
    p.xlabel = "";
    const std::size_t name = t->column("recipe"), bytes = t->column("bytes_per_param");
    Series s{"bytes per parameter", {}, "boxes"};
    for (std::size_t i = 0; i < t->rows.size(); ++i) {
      p.categories.push_back(cell_text(t->rows[i].cells[name]));
      s.points.emplace_back(static_cast<double>(i), cell_number(t->rows[i].cells[bytes]));
    }
    p.series.push_back(std::move(s));
    p.extra.push_back("set key off");
    p.extra.push_back("set yrange [0:*]");
    p.extra.push_back("set offsets 0, 0, graph 0.08, 0");
    p.caption = "Activations excluded. Mixed precision with fp32 master weights and Adam costs 16 bytes per "
                "parameter (ZeRO section 3.1), the same as plain fp32: its saving is in activations and speed.";
    add_plot(plots, std::move(p));
  }

  if (const Table* t = find_table(tables, "training_steps"); t != nullptr) {
    Plot p;
    p.id = "training_underflow";
    p.title = "Two-layer model: fraction of gradient values that underflow, per recipe";
    p.xlabel = "SGD step";
    p.ylabel = "fraction of gradient values flushed to 0";
    p.series = series_from_table(*t, "step", "grad_underflow_frac", {"recipe"});
    p.caption = "fp16 without loss scaling loses a growing share of its gradients to underflow; static or dynamic "
                "loss scaling (Micikevicius et al. 2017) shifts them into fp16's range; bf16 has fp32's range.";
    add_plot(plots, std::move(p));
    Plot q;
    q.id = "training_loss";
    q.title = "Two-layer model: loss relative to the fp32 run, per recipe";
    q.xlabel = "SGD step";
    q.ylabel = "loss / fp32 loss at the same step";
    q.logy = true;
    q.series = series_from_table(*t, "step", "loss_vs_fp32", {"recipe"}, {}, false, true);
    // Skipped steps (a non-finite gradient: no update) as large marks on
    // their recipe's curve, one legend entry per recipe that skipped any.
    const std::size_t skipped = t->column("skipped");
    for (Series& s : series_from_table(*t, "step", "loss_vs_fp32", {"recipe"},
                                       [skipped](const Row& r) { return cell_number(r.cells[skipped]) == 1; }, false,
                                       true)) {
      s.name = "skipped step (" + s.name + ")";
      s.style = "points pt 7 ps 1.5";
      q.series.push_back(std::move(s));
    }
    q.caption = "1 means the recipe trains exactly like fp32. Large dots mark skipped steps (a non-finite gradient: "
                "the update is dropped and a dynamic scale halves); none drawn means no recipe skipped a step.";
    add_plot(plots, std::move(q));
    Plot r;
    r.id = "training_loss_scale";
    r.title = "Two-layer model: the fp16 loss scale per step";
    r.xlabel = "SGD step";
    r.ylabel = "loss scale";
    r.logy = true;
    const auto is_static = where(*t, {{"recipe", "fp16_static"}}), is_dynamic = where(*t, {{"recipe", "fp16_dynamic"}});
    r.series = series_from_table(*t, "step", "loss_scale", {"recipe"},
                                 [&](const Row& row) { return is_static(row) || is_dynamic(row); }, false, true);
    r.extra.push_back("set offsets 0, 0, graph 0.05, graph 0.05");  // keep the static line off the frame
    r.caption = "The static scale stays where it was set; the dynamic one (PyTorch GradScaler's rules) doubles after "
                "each run of finite steps and halves on a skipped step, so it grows as the gradients shrink.";
    add_plot(plots, std::move(r));
  }
  return plots;
}

Table report_summary(const std::vector<Table>& tables) {
  Table t;
  t.id = "summary";
  t.title = "Summary: headline figures (measured figures are this machine's)";
  t.columns = {{"figure", ""}, {"value", ""}, {"expected", ""}, {"source", ""}};
  std::uint64_t row = 0;
  auto add = [&](const std::string& figure, const Cell& value, const std::string& expected, const std::string& source) {
    t.add(row++, {figure, value.index() == 0 ? Cell(std::string("(not computed)")) : value, expected, source});
  };
  auto fmtd = [](const Cell& c, const char* spec) -> Cell {
    if (c.index() != 1 && c.index() != 2) return c;
    return fmt::format(fmt::runtime(spec), cell_number(c));
  };
  const FormatEntry* e4m3 = find_format("float8_e4m3fn");
  const FormatEntry* e5m2 = find_format("float8_e5m2");
  add("E4M3 max / E5M2 max", fmt::format("{} / {}", e4m3->info.max, e5m2->info.max), "448 / 57344 (lecture)", "finfo");
  add("4x8x20 tensor bytes: fp32, bf16, fp8, fp4",
      fmt::format("{}, {}, {}, {}",
                  cell_text(lookup(tables, "footprint_tensor", {{"shape", "4x8x20"}, {"dtype", "float32"}}, "bytes")),
                  cell_text(lookup(tables, "footprint_tensor", {{"shape", "4x8x20"}, {"dtype", "bfloat16"}}, "bytes")),
                  cell_text(lookup(tables, "footprint_tensor", {{"shape", "4x8x20"}, {"dtype", "float8_e4m3fn"}}, "bytes")),
                  cell_text(lookup(tables, "footprint_tensor", {{"shape", "4x8x20"}, {"dtype", "float4_e2m1fn"}}, "bytes"))),
      "2560, 1280, 640, 320", "footprint_tensor");
  add("bits per element: MXFP8, MXFP6, MXFP4, NVFP4",
      fmt::format("{}, {}, {}, {}", cell_text(lookup(tables, "footprint_formats", {{"dtype", "mxfp8_e4m3"}}, "storage_bits")),
                  cell_text(lookup(tables, "footprint_formats", {{"dtype", "mxfp6_e2m3"}}, "storage_bits")),
                  cell_text(lookup(tables, "footprint_formats", {{"dtype", "mxfp4"}}, "storage_bits")),
                  cell_text(lookup(tables, "footprint_formats", {{"dtype", "nvfp4"}}, "storage_bits"))),
      "8.25, 6.25, 4.25, 4.5", "footprint_formats");
  add("mixed precision + Adam, bytes per parameter",
      lookup(tables, "footprint_training", {{"recipe", "mixed_bf16_adam"}}, "bytes_per_param"), "16 (ZeRO 3.1)",
      "footprint_training");
  add("1e-8 in fp16", lookup(tables, "underflow_values", {{"dtype", "float16"}}, "result"), "0 (lecture)",
      "underflow_values");
  add("1e-8 in bf16", lookup(tables, "underflow_values", {{"dtype", "bfloat16"}}, "result_torch"), "1.0012e-08 (lecture)",
      "underflow_values");
  add("1e-8 in E4M3 / E5M2",
      fmt::format("{} / {}", cell_text(lookup(tables, "underflow_values", {{"dtype", "float8_e4m3fn"}}, "result")),
                  cell_text(lookup(tables, "underflow_values", {{"dtype", "float8_e5m2"}}, "result"))),
      "0 / 0", "underflow_values");
  {
    const Match glorot = {{"init", "glorot_uniform"}, {"layout", "out_in"}, {"dtype", "float32"}};
    const Match he = {{"init", "he_normal"}, {"layout", "out_in"}, {"dtype", "float32"}};
    add("Glorot / He std of the lecture's 256x512 weight, as its code draws it (uniform Glorot, fan_in = t.size(1))",
        fmt::format("{} / {} (closed forms {} / {})",
                    cell_text(fmtd(lookup(tables, "underflow_init", glorot, "std_sample"), "{:.4f}")),
                    cell_text(fmtd(lookup(tables, "underflow_init", he, "std_sample"), "{:.4f}")),
                    cell_text(fmtd(lookup(tables, "underflow_init", glorot, "std_closed_form"), "{:.4f}")),
                    cell_text(fmtd(lookup(tables, "underflow_init", he, "std_closed_form"), "{:.4f}"))),
        "0.0782 / 0.1104 printed in the lecture's notes: wrong, see underflow_init", "underflow_init");
  }
  add("lecture's square().sqrt() 'rel-err', bf16",
      fmtd(lookup(tables, "error_square_sqrt", {{"dtype", "bfloat16"}}, "lecture_metric"), "{:.4f}"),
      "1.41: compares |x| with x, not an error", "error_square_sqrt");
  add("true relative error of square().sqrt(), bf16 / fp16",
      fmt::format("{} / {}", cell_text(fmtd(lookup(tables, "error_square_sqrt", {{"dtype", "bfloat16"}}, "true_rel_err"), "{:.3g}")),
                  cell_text(fmtd(lookup(tables, "error_square_sqrt", {{"dtype", "float16"}}, "true_rel_err"), "{:.3g}"))),
      "about 0: both steps are correctly rounded", "error_square_sqrt");
  add("SQNR of MXFP8 E4M3 on N(0,1) [dB]",
      fmtd(lookup(tables, "error_conversion", {{"dtype", "mxfp8_e4m3"}}, "sqnr_db"), "{:.1f}"), ">= 20 (torchao's test)",
      "error_conversion");
  // The running sum's last bfloat16 row: the label states this run's terms
  // and stored addend (exact / step), read from the row itself.
  if (const Table* st = find_table(tables, "error_stagnation"); st != nullptr) {
    const std::size_t dtype = st->column("dtype"), step = st->column("step"), exact = st->column("exact"),
                      nearest = st->column("nearest"), stochastic = st->column("stochastic");
    const Row* last = nullptr;
    for (const Row& r : st->rows)
      if (cell_text(r.cells[dtype]) == "bfloat16" &&
          (last == nullptr || cell_number(r.cells[step]) > cell_number(last->cells[step])))
        last = &r;
    if (last != nullptr) {
      const double steps = cell_number(last->cells[step]), sum = cell_number(last->cells[exact]);
      add(fmt::format("bf16 running sum of {} adds of {:.5g}: nearest / stochastic (true {:.5g})", steps,
                      sum / steps, sum),
          fmt::format("{} / {}", cell_text(fmtd(last->cells[nearest], "{:.4g}")),
                      cell_text(fmtd(last->cells[stochastic], "{:.4g}"))),
          "nearest stagnates; stochastic stays near the true sum", "error_stagnation");
    }
  }
  const Match tc = {{"distribution", "half_normal"}, {"input", "float8_e4m3fn"}, {"accumulator", "tensor_core"}, {"k", "4096"}};
  Match tc0 = tc, tc128 = tc;
  tc0.emplace_back("promote_every", "0");
  tc128.emplace_back("promote_every", "128");
  add("E4M3 matmul, k = 4096, tensor-core accumulation: max rel. error without / with promotion",
      fmt::format("{} / {}", cell_text(fmtd(lookup(tables, "matmul_error", tc0, "rel_err_max"), "{:.3g}")),
                  cell_text(fmtd(lookup(tables, "matmul_error", tc128, "rel_err_max"), "{:.3g}"))),
      "nearly 2% / small (DeepSeek-V3 3.3.2, inputs unstated)", "matmul_error");
  add("fp16 training without loss scaling: gradient underflow at the last step",
      fmtd(lookup(tables, "training_steps", {{"recipe", "fp16"}}, "grad_underflow_frac"), "{:.3g}"),
      "> 0: why loss scaling exists", "training_steps");
  add("fp16 with static loss scaling: gradient underflow at the last step",
      fmtd(lookup(tables, "training_steps", {{"recipe", "fp16_static"}}, "grad_underflow_frac"), "{:.3g}"),
      "below unscaled fp16's", "training_steps");
  add("fp16 with dynamic loss scaling (GradScaler's defaults): underflow at the last step, final scale",
      fmt::format("{} at scale {}",
                  cell_text(fmtd(lookup(tables, "training_steps", {{"recipe", "fp16_dynamic"}}, "grad_underflow_frac"),
                                 "{:.3g}")),
                  cell_text(fmtd(lookup(tables, "training_steps", {{"recipe", "fp16_dynamic"}}, "loss_scale"), "{:.4g}"))),
      "near 0: the scale grows as the gradients shrink", "training_steps");
  add("two-layer forward FLOPs (B=16384, D=32768, K=8192)",
      fmtd(lookup(tables, "accounting_matmul", {{"name", "two_layer_forward"}}, "flops"), "{:.4g}"), "4.398e13 (lecture)",
      "accounting_matmul");
  add("GPT-4 (2e25 FLOPs) H100-days at MFU 0.5: lecture's 1979e12 / dense 989e12",
      fmt::format("{} / {}",
                  cell_text(fmtd(lookup(tables, "accounting_budget", {{"budget", "gpt4"}, {"device", "h100_sxm_sparse_bf16"}}, "device_days"), "{:.3g}")),
                  cell_text(fmtd(lookup(tables, "accounting_budget", {{"budget", "gpt4"}, {"device", "h100_sxm"}}, "device_days"), "{:.3g}"))),
      "2.34e5 / 4.68e5: 1979 TFLOP/s is the sparse peak", "accounting_budget");
  add("H100 SXM bf16 accelerator intensity [FLOP/byte]",
      fmtd(lookup(tables, "roofline_roofs", {{"device", "h100_sxm"}, {"dtype", "bf16"}}, "ridge_flop_per_byte"), "{:.1f}"),
      "989 / 3.35 = 295.2 (295.4 uses 1979 / 2 = 989.5)", "roofline_roofs");
  const std::string n_ops = cell_text(lookup(tables, "roofline_ops", {{"op", "matmul"}, {"dtype", "bfloat16"}}, "n"));
  add(fmt::format("bf16 matmul intensity, n = {} [FLOP/byte]", n_ops),
      fmtd(lookup(tables, "roofline_ops", {{"op", "matmul"}, {"dtype", "bfloat16"}}, "intensity"), "{:.2f}"),
      "n/3 with 2n^3 FLOPs (341.33 at n = 1024; 341.17 counts (2n-1)n^2)", "roofline_ops");
  add("this CPU: fp32 FMA peak [GFLOP/s] / STREAM bandwidth [GB/s]",
      fmt::format("{} / {}", cell_text(fmtd(lookup(tables, "roofline_roofs", {{"device", "this_cpu"}, {"dtype", "fp32"}}, "peak_gflops"), "{:.1f}")),
                  cell_text(fmtd(lookup(tables, "roofline_roofs", {{"device", "this_cpu"}, {"dtype", "fp32"}}, "bandwidth_gbs"), "{:.1f}"))),
      "measured", "roofline_roofs");
  const std::string n_points = cell_text(lookup(tables, "roofline_points", {{"op", "matmul"}, {"dtype", "float32"}}, "n"));
  add(fmt::format("this CPU: fp32 matmul n = {} [GFLOP/s], fraction of the FMA peak", n_points),
      fmt::format("{}, {}", cell_text(fmtd(lookup(tables, "roofline_points", {{"op", "matmul"}, {"dtype", "float32"}}, "measured_gflops"), "{:.1f}")),
                  cell_text(fmtd(lookup(tables, "roofline_points", {{"op", "matmul"}, {"dtype", "float32"}}, "fraction_of_roof"), "{:.2f}"))),
      "measured; at most 1 (no point above its roof)", "roofline_points");
  return t;
}

}  // namespace lplab::experiments
