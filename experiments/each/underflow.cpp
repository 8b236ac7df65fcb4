// underflow: which values a format flushes to zero, keeps only as subnormals,
// or loses to overflow, across scales from 1e-12 to 1e6 -- the lecture's
// "1e-8 in fp16 is 0" generalised to whole distributions, to weight
// initialisations, and to per-tensor and MX block scaling.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "lplab/lab/experiment.h"
#include "lplab/lab/report_parts.h"
#include "lplab/experiments/runner.h"
#include "lplab/kernels/convert.h"
#include "lplab/experiments/sampling.h"
#include "lplab/experiments/scaled.h"

namespace lplab::experiments {
namespace {

// Outcome counts of one conversion. An element is counted in at most one
// class; finite inputs only (a NaN or infinite input has nothing to lose).
//   zero:      x != 0 and the stored element is 0 (flushed);
//   overflow:  |x| beyond the largest element magnitude and the result is
//              infinite or that largest magnitude (clamped: an IEEE overflow
//              to inf, or a saturation to max under Overflow::saturate or a
//              scaling scheme, or a value between max and the overflow
//              threshold that nearest rounding brings down to max);
//   nan:       the result is NaN (E4M3's IEEE overflow, which has no inf;
//              an MX block holding a non-finite value);
//   subnormal: the stored element is a nonzero subnormal of its format.
// For scaled schemes "element" is the narrow element before the scale is
// applied back, which is where precision is lost.
struct Counts {
  std::uint64_t zero = 0, subnormal = 0, overflow = 0, nan = 0;
  std::uint64_t nonfinite = 0;  // NaN and infinite inputs: counted apart, in no class

  void add(double x, double y, double elem, double elem_max, double elem_smallest_normal) {
    if (!std::isfinite(x)) {
      ++nonfinite;
      return;
    }
    if (std::isnan(y)) {
      ++nan;
    } else if (x != 0 && elem == 0) {
      ++zero;
    } else if (std::isinf(y) || (std::fabs(elem) == elem_max && std::fabs(x) > std::fabs(y))) {
      ++overflow;
    } else if (elem != 0 && std::fabs(elem) < elem_smallest_normal) {
      ++subnormal;
    }
  }
};

// Plain conversion of a sample into one format with nearest-even rounding,
// from the double sample itself: each row shows what storing these values in
// that format does, rounded once (no float32 tensor in between, whose range
// would decide for the narrower formats at the extremes).
Counts convert_counts(const FormatEntry& f, std::span<const double> xd, Overflow overflow, unsigned threads) {
  Counts c;
  for_each_rounded(f, xd, {.round = Round::nearest_even, .overflow = overflow, .threads = threads},
                   [&](std::size_t first, std::span<const double> y) {
                     if (Progress::interrupted()) throw Interrupted();
                     for (std::size_t j = 0; j < y.size(); ++j)
                       c.add(xd[first + j], y[j], y[j], f.info.max, f.info.smallest_normal);
                   });
  return c;
}

// A scaling scheme quantizes an fp32 tensor (xf), as a framework holds it; the
// classes are counted against the double sample (xd), so a value the fp32
// tensor already lost (flushed below 2^-149, inf above 3.4e38) counts as lost.
Counts scheme_counts(std::string_view scheme, std::span<const double> xd, std::span<const float> xf) {
  const scaled::RoundTrip r = scaled::round_trip(scheme, xf, scaled::kSampleRow);
  Counts c;
  for (std::size_t i = 0; i < xf.size(); ++i)
    c.add(xd[i], r.y[i], r.elem[i], r.elem_max, r.elem_smallest_normal);
  return c;
}

// One column set of underflow_scales: a format (plain or per-tensor scaled)
// or a scheme, under one overflow policy.
struct Target {
  std::string dtype;    // the format name, or the scheme's name
  std::string scaling;  // none, or the scheme's kind (scaled::kind_name)
  Overflow overflow = Overflow::ieee;
  const FormatEntry* format = nullptr;  // scaling == none
  std::string scheme;                   // scaling != none
};

std::vector<Target> targets(const Context& ctx) {
  std::vector<Target> t;
  for (const FormatEntry* f : ctx.dtypes) {
    const std::string name(f->name);
    t.push_back({name, "none", Overflow::ieee, f, {}});
    t.push_back({name, "none", Overflow::saturate, f, {}});
    // Per-tensor scaling exists for the two OCP FP8 training formats only
    // (kernels::TensorScaling); it always saturates.
    if (name == "float8_e4m3fn") t.push_back({name, "tensor", Overflow::saturate, nullptr, "fp8_e4m3_tensor"});
    if (name == "float8_e5m2") t.push_back({name, "tensor", Overflow::saturate, nullptr, "fp8_e5m2_tensor"});
  }
  std::vector<std::string> asked;
  for (const std::string& s : ctx.params.list("schemes"))
    if (s != "none") asked.push_back(s);
  // A recipe's name stands for its operands' treatments (scaled::expand).
  for (const std::string& s : scaled::expand(asked))
    t.push_back({s, std::string(scaled::kind_name(scaled::kind_of(s))), Overflow::saturate, nullptr, s});
  return t;
}

std::vector<Cell> fraction_cells(const Counts& c, std::size_t n) {
  const double d = static_cast<double>(n);
  return {static_cast<double>(c.zero) / d, static_cast<double>(c.subnormal) / d,
          static_cast<double>(c.overflow) / d, static_cast<double>(c.nan) / d,
          static_cast<double>(c.nonfinite) / d};
}

Table scales_table(const Context& ctx) {
  Table t{"underflow_scales",
          "Fraction of values flushed to zero, subnormal, overflowed or NaN, per scale and format",
          {{"distribution", ""}, {"sigma", ""}, {"dtype", ""}, {"scaling", ""}, {"overflow", ""},
           {"frac_zero", ""}, {"frac_subnormal", ""}, {"frac_overflow", ""}, {"frac_nan", ""},
           {"frac_nonfinite_input", ""}},
          {},
          {}};
  const std::vector<Target> tg = targets(ctx);
  const bool from_input = !ctx.input.empty();
  const std::vector<std::string> dists =
      from_input ? std::vector<std::string>{"input"} : std::vector<std::string>{"normal", "lognormal"};
  const std::vector<double> sigmas = from_input ? std::vector<double>{0.0} : ctx.params.numbers("sigmas");
  const auto n = static_cast<std::size_t>(ctx.params.integer("n"));
  const auto seed = static_cast<std::uint64_t>(ctx.params.integer("seed"));
  const double shape = ctx.params.real("lognormal_shape");

  ctx.progress.set_total(dists.size() * sigmas.size() * tg.size());
  for (std::size_t d = 0; d < dists.size(); ++d) {
    for (std::size_t s = 0; s < sigmas.size(); ++s) {
      const std::uint64_t base = (d * sigmas.size() + s) * tg.size();
      bool any = false;
      for (std::size_t k = 0; k < tg.size(); ++k) any = any || ctx.shard.owns(base + k);
      if (!any) {
        ctx.progress.step(tg.size());
        continue;
      }
      // One sample per (distribution, sigma), shared by every target, so the
      // rows of a point differ by the format alone.
      const std::uint64_t point_seed = seed * 1000003u + d * 1009u + s;
      std::vector<double> xd;
      if (from_input) xd.assign(ctx.input.begin(), ctx.input.end());
      else if (dists[d] == "normal") xd = sampling::normal(n, sigmas[s], point_seed);
      else xd = sampling::lognormal(n, sigmas[s], shape, point_seed);
      const std::vector<float> xf = sampling::to_float(xd);
      const Cell sigma_cell = from_input ? Cell{} : Cell{sigmas[s]};
      for (std::size_t k = 0; k < tg.size(); ++k) {
        ctx.progress.step();
        if (!ctx.shard.owns(base + k)) continue;
        const Target& g = tg[k];
        const Counts c = g.scaling == "none" ? convert_counts(*g.format, xd, g.overflow, ctx.threads)
                                             : scheme_counts(g.scheme, xd, xf);
        std::vector<Cell> row{dists[d], sigma_cell, g.dtype, g.scaling, overflow_name(g.overflow)};
        for (Cell& v : fraction_cells(c, xd.size())) row.push_back(std::move(v));
        t.add(base + k, std::move(row));
      }
    }
  }
  t.notes = {
      from_input ? fmt::format("values: the {} values of {}, each rounded once into each format; the "
                               "scaled schemes quantize them as an fp32 tensor",
                               ctx.input.size(), ctx.input_name)
                 : fmt::format("values: {} draws per point of normal N(0, sigma^2) and of log-normal "
                               "sigma*exp({}*Z) (median sigma), seed {}, drawn in double and rounded once "
                               "into each format; the scaled schemes quantize them as an fp32 tensor, "
                               "and a value that tensor cannot hold counts as lost",
                               n, shape, seed),
      "frac_zero: nonzero x stored as 0; frac_subnormal: stored as a nonzero subnormal of the element "
      "format; frac_overflow: |x| beyond the largest element and the result is inf or clamped to the "
      "largest magnitude (under saturate, and under ieee for values between max and the overflow "
      "threshold); frac_nan: the result of a finite value is NaN (float8_e4m3fn has no inf, so its ieee "
      "overflow is NaN); frac_nonfinite_input: NaN and infinite values of the input, which have nothing "
      "to lose and are in no other class",
      "conversion rounds to nearest-even; scaling=tensor (Transformer Engine current scaling, "
      "scale = max_elem/amax), block (OCP MX v1.0 section 6.3, E8M0 scales of 32; nvfp4: E4M3 "
      "scales of 16 plus an fp32 tensor scale), delayed (TE's DelayedScaling) and tile (DeepSeek-V3's "
      "E4M3 tiles) always saturate, so they appear once, as saturate",
      scaled::sample_rows_note(),
      "MX's floor rule (OCP MX v1.0 section 6.3) puts a block's amax in the element's top binade "
      "without checking it fits: a block maximum whose significand exceeds the element maximum's "
      "(1.75 for E4M3 and E5M2) saturates, so MX block rows show about 1% overflow at every sigma; "
      "kernels::ScaleRule::ceil avoids it",
      "for scaled rows the classes describe the narrow element before its scale is applied back: a "
      "normal distribution keeps the same fractions at every sigma once scaled, a plain format only "
      "within its range"};
  return t;
}

// The lecture's single values: 1e-8 in each format.
Table values_table(const Context& ctx) {
  Table t{"underflow_values", "Single values rounded into each format (nearest-even, ieee overflow)",
          {{"value", ""}, {"dtype", ""}, {"result", ""}, {"result_torch", ""}, {"code", ""}, {"note", ""}},
          {},
          {}};
  // Each value exactly as typed, rounded once into each format (a double in
  // between would round 65519.99999999999999999999 up to 65520, fp16's
  // overflow threshold, and show -1e-400 as an exact -0).
  const std::vector<std::string> texts = ctx.params.list("values");
  const std::vector<Decimal> values = ctx.params.decimals("values");
  std::uint64_t grid = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Decimal& v = values[i];
    const bool v_nan = v.kind == ValueKind::nan, v_inf = v.kind == ValueKind::infinite;
    const bool v_zero = v.kind == ValueKind::zero;
    for (const FormatEntry* f : ctx.dtypes) {
      const std::uint64_t g = grid++;
      if (!ctx.shard.owns(g)) continue;
      Flags flags;
      const std::uint64_t code = f->from_decimal(v, Round::nearest_even, Overflow::ieee, 0, &flags);
      const double y = f->to_double(code);
      std::string note;
      if (std::isnan(y)) note = v_nan ? "NaN" : "overflow to NaN";
      else if (std::isinf(y)) note = v_inf ? "infinite" : "overflow to inf";
      else if (y == 0 && !v_zero) note = "flushed to zero";
      else if (y != 0 && std::fabs(y) < f->info.smallest_normal) note = flags.inexact() ? "subnormal, rounded" : "subnormal";
      else if (std::fabs(y) == f->info.max && flags.inexact() && std::fabs(v.away_from_zero) > f->info.max)
        note = "rounded to max";
      else note = flags.inexact() ? "normal, rounded" : "exact";
      // torch prints a tensor's elements with 4 digits after the point in
      // scientific mode: 1e-8 in bf16 shows as 1.0012e-08.
      t.add(g, {texts[i], std::string(f->name), y, fmt::format("{:.4e}", y), fmt::format("0x{:x}", code), note});
    }
  }
  t.notes = {
      "value: as written, rounded once into each format from its exact decimal (never through a double); "
      "result: the exact value of the code; result_torch: as torch prints it (4 decimals, scientific); "
      "note: exact, rounded, subnormal, flushed to zero or overflow, from the conversion's IEEE flags",
      "lecture: 1e-8 is 0 in float16 (below half its smallest subnormal, 2^-25 = 2.98e-8), "
      "1.0012e-08 in bfloat16 (exactly 1.34375 * 2^-27 = 1.00117176...e-08: bf16 keeps fp32's "
      "exponent range), and 0 in float8_e4m3fn (smallest subnormal 2^-9) and float8_e5m2 (2^-16)"};
  return t;
}

// Glorot (Glorot & Bengio, AISTATS 2010) and He (He et al., ICCV 2015)
// initialisation of the lecture's 256x512 weight, as the lecture's code draws
// it: the weight t is stored as PyTorch stores a Linear's, (out, in), and the
// code takes fan_in, fan_out = t.size(1), t.size(0) -- 512 and 256 -- and draws
// Glorot *uniform* on (-a, a), a = sqrt(6 / (fan_in + fan_out)), whose
// standard deviation is a / sqrt(3) = sqrt(2 / (fan_in + fan_out)).
Table init_table(const Context& ctx) {
  Table t{"underflow_init", "Weight initialisations: standard deviation and underflow per format",
          {{"init", ""}, {"layout", ""}, {"shape", ""}, {"std_printed", ""}, {"std_closed_form", ""},
           {"std_sample", ""}, {"dtype", ""}, {"frac_zero", ""}, {"frac_subnormal", ""}},
          {},
          {}};
  const auto rows = static_cast<std::size_t>(ctx.params.integer("init_rows"));
  const auto cols = static_cast<std::size_t>(ctx.params.integer("init_cols"));
  const auto seed = static_cast<std::uint64_t>(ctx.params.integer("seed"));
  const double fan_in = static_cast<double>(cols), fan_out = static_cast<double>(rows);
  const double glorot = std::sqrt(2.0 / (fan_in + fan_out));
  const double glorot_bound = std::sqrt(6.0 / (fan_in + fan_out));  // = glorot * sqrt(3)
  const double he = std::sqrt(2.0 / fan_in), he_rows = std::sqrt(2.0 / fan_out);
  struct Init {
    const char* name;
    const char* layout;
    double std;
    Cell printed;
    bool uniform;
  };
  // The lecture's own code first; then He with the other reading of the
  // shape, (in, out), whose fan_in is the row count, labelled as such.
  const Init inits[] = {
      {"glorot_uniform", "out_in", glorot, 0.0782, true},
      {"he_normal", "out_in", he, 0.1104, false},
      {"he_normal", "in_out", he_rows, Cell{}, false},
  };
  const std::string shape = fmt::format("{}x{}", rows, cols);
  std::uint64_t grid = 0;
  for (std::size_t k = 0; k < std::size(inits); ++k) {
    const std::uint64_t first = grid;
    grid += ctx.dtypes.size();
    bool any = false;
    for (std::uint64_t g = first; g < grid; ++g) any = any || ctx.shard.owns(g);
    if (!any) continue;
    const std::vector<double> w =
        inits[k].uniform ? sampling::uniform(rows * cols, -glorot_bound, glorot_bound, seed + 1 + k)
                         : sampling::normal(rows * cols, inits[k].std, seed + 1 + k);
    double mean = 0;
    for (double v : w) mean += v;
    mean /= static_cast<double>(w.size());
    double ss = 0;
    for (double v : w) ss += (v - mean) * (v - mean);
    const double sample_std = std::sqrt(ss / static_cast<double>(w.size() - 1));
    for (std::size_t j = 0; j < ctx.dtypes.size(); ++j) {
      if (!ctx.shard.owns(first + j)) continue;
      const Counts c = convert_counts(*ctx.dtypes[j], w, Overflow::ieee, ctx.threads);
      const double n = static_cast<double>(w.size());
      t.add(first + j, {inits[k].name, inits[k].layout, shape, inits[k].printed, inits[k].std, sample_std,
                        std::string(ctx.dtypes[j]->name), static_cast<double>(c.zero) / n,
                        static_cast<double>(c.subnormal) / n});
    }
  }
  t.notes = {
      fmt::format("the lecture's code draws the {} weight t with fan_in, fan_out = t.size(1), t.size(0) = {}, {}: "
                  "Glorot uniform on (-a, a), a = sqrt(6/({}+{})) = {:.4f}, std a/sqrt(3) = sqrt(2/{}) = {:.4f}; "
                  "He normal std sqrt(2/fan_in) = sqrt(2/{}) = {:.4f} (layout out_in: the lecture's code). Read "
                  "as (in, out), fan_in = {} gives He {:.4f} (layout in_out); Glorot's std is the same either "
                  "way. std_sample: the "
                  "sample standard deviation of the drawn weights (seed {})",
                  shape, cols, rows, cols, rows, glorot_bound, cols + rows, glorot, cols, he, rows, he_rows, seed),
      fmt::format("std_printed: the lecture notes print 0.0782 (Glorot) and 0.1104 (He) for this weight; its "
                  "own code gives {:.4f} and {:.4f}. The printed ratio, 1.412, is sqrt(2), which He/Glorot = "
                  "sqrt((fan_in+fan_out)/fan_in) equals only when fan_in = fan_out; 1/0.0782^2 = 163.5 and "
                  "2/0.1104^2 = 164.1 both give fan_in = fan_out = 164, a square 164x164 layer",
                  glorot, he),
      "frac_zero / frac_subnormal: the weights, drawn in double, rounded once to nearest-even into each "
      "format (classes as in underflow_scales)"};
  return t;
}

std::vector<Table> run(const Context& ctx) {
  if (ctx.dtypes.empty()) throw UsageError("underflow: no dtypes given");
  if (!ctx.input.empty() && std::none_of(ctx.input.begin(), ctx.input.end(), [](double x) { return std::isfinite(x); }))
    throw UsageError(fmt::format("underflow: {} holds no finite value: there is nothing to flush, keep or overflow",
                                 ctx.input_name));
  const std::int64_t n = ctx.params.integer("n");
  const double rows = static_cast<double>(ctx.params.integer("init_rows")),
               cols = static_cast<double>(ctx.params.integer("init_cols"));
  if (rows * cols < 2) throw UsageError("underflow: init_rows x init_cols must be at least 2 (a sample std needs two values)");
  // Doubles, floats, codes and scratch: about 24 bytes a sample and 20 a weight.
  require_memory(24.0 * static_cast<double>(n), "underflow: n = " + std::to_string(n));
  require_memory(20.0 * rows * cols, fmt::format("underflow: a {} x {} weight", rows, cols));
  return {values_table(ctx), scales_table(ctx), init_table(ctx)};
}

// The report's plots of this experiment's tables.
std::vector<Plot> drawn_plots(const std::vector<Table>& tables) {
  std::vector<Plot> plots;
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
  return plots;
}

// The report's headline figures from this experiment's tables.
void headline_figures(const std::vector<Table>& tables, Headlines& h) {
  h.add("1e-8 in fp16", lookup(tables, "underflow_values", {{"dtype", "float16"}}, "result"), "0 (lecture)",
      "underflow_values");
  h.add("1e-8 in bf16", lookup(tables, "underflow_values", {{"dtype", "bfloat16"}}, "result_torch"), "1.0012e-08 (lecture)",
      "underflow_values");
  h.add("1e-8 in E4M3 / E5M2",
      fmt::format("{} / {}", cell_text(lookup(tables, "underflow_values", {{"dtype", "float8_e4m3fn"}}, "result")),
                  cell_text(lookup(tables, "underflow_values", {{"dtype", "float8_e5m2"}}, "result"))),
      "0 / 0", "underflow_values");
  {
    const Match glorot = {{"init", "glorot_uniform"}, {"layout", "out_in"}, {"dtype", "float32"}};
    const Match he = {{"init", "he_normal"}, {"layout", "out_in"}, {"dtype", "float32"}};
    h.add("Glorot / He std of the lecture's 256x512 weight, as its code draws it (uniform Glorot, fan_in = t.size(1))",
        fmt::format("{} / {} (closed forms {} / {})",
                    cell_text(formatted(lookup(tables, "underflow_init", glorot, "std_sample"), "{:.4f}")),
                    cell_text(formatted(lookup(tables, "underflow_init", he, "std_sample"), "{:.4f}")),
                    cell_text(formatted(lookup(tables, "underflow_init", glorot, "std_closed_form"), "{:.4f}")),
                    cell_text(formatted(lookup(tables, "underflow_init", he, "std_closed_form"), "{:.4f}"))),
        "0.0782 / 0.1104 printed in the lecture's notes: wrong, see underflow_init", "underflow_init");
  }
}

}  // namespace

Experiment underflow_experiment() {
  // Per-tensor scaling comes with the fp8 dtypes; the other schemes are chosen.
  std::vector<std::string> choices{"none"};
  for (const std::string& s :
       scaled::scheme_and_recipe_names(
           {scaled::Kind::block, scaled::Kind::delayed, scaled::Kind::tile, scaled::Kind::integer}))
    choices.push_back(s);
  const std::string block_choices = fmt::format("{}", fmt::join(scaled::scheme_names({scaled::Kind::block}), ","));
  return Experiment{
      .name = "underflow",
      .summary = "fractions flushed to zero, subnormal, overflowed or NaN across scales, inits and MX scaling",
      .params = {
          {"sigmas", ParamType::list,
           "1e-12,1e-11,1e-10,1e-9,1e-8,1e-7,1e-6,1e-5,1e-4,1e-3,1e-2,1e-1,1,10,100,1e3,1e4,1e5,1e6",
           1e-300, 1e300, "scales of the distributions (normal std, log-normal median)", {}, true},
          {"n", ParamType::integer, "65536", 32, 1 << 28, "samples per (distribution, sigma)", {}},
          {"seed", ParamType::integer, "0", 0, 1e15, "seed of the samples", {}},
          {"lognormal_shape", ParamType::real, "2", 0, 20,
           "standard deviation of log(x) for the log-normal distribution", {}},
          {"schemes", ParamType::list, block_choices, 0, 0,
           "scaling schemes to compare: MX and NVFP4 blocks, delayed and DeepSeek-V3 tile scaling, and recipes "
           "(each operand treatment of lplab recipe show NAME a row; none: no "
           "scheme rows; per-tensor scaling rows come with the float8_e4m3fn and float8_e5m2 dtypes)",
           choices, false},
          {"values", ParamType::list, "1e-8", -1e300, 1e300, "single values for underflow_values", {}, true},
          {"init_rows", ParamType::integer, "256", 1, 1 << 16, "weight rows (fan_in in the lecture's layout)", {}},
          {"init_cols", ParamType::integer, "512", 1, 1 << 16, "weight columns (fan_out)", {}},
      },
      .default_dtypes = {"float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float6_e2m3fn", "float6_e3m2fn",
       "float4_e2m1fn"},
      .takes_input = true,
      .report_params = {{"n", "65536"}},
      .run = run,
      .quick_params = {{"n", "512"}, {"sigmas", "1e-8,1,1e5"}},
      .takes_declared_formats = true,
      .place = 20,
      .plots = drawn_plots,
      .headlines = headline_figures,
      .regression = {.pinned = true},
  };
}

}  // namespace lplab::experiments
