// error: how far a value moves when it is stored in a narrow format --
// relative and ULP error per rounding mode, SQNR of formats and block
// schemes, the bias of stochastic against nearest rounding, a long sum that
// stagnates under nearest rounding, the elementwise kernels against an fp64
// reference, and the lecture's "rel-err 1.41" for x.square().sqrt().
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lplab/lab/experiment.h"
#include "lplab/lab/report_parts.h"
#include "lplab/experiments/runner.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/ops.h"
#include "lplab/kernels/random.h"
#include "lplab/experiments/sampling.h"
#include "lplab/experiments/scaled.h"

namespace lplab::experiments {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// The spacing of the format's values in the binade of x: 2^(e - nmant), e the
// exponent of x clamped to the normal range (below it, the subnormal spacing;
// above the largest binade, that binade's spacing). An integer's spacing is
// 1 everywhere.
double ulp_at(const FinfoValues& info, double x) {
  if (info.encoding == Encoding::integer) return 1.0;
  const int emin = std::ilogb(info.smallest_normal);
  const int emax = std::ilogb(info.max);
  const int e = x == 0 ? emin : std::clamp(std::ilogb(x), emin, emax);
  return std::ldexp(1.0, e - info.nmant);
}

// Error statistics of y against x, over the finite nonzero x; a non-finite y
// is an infinite error. NaN and infinite x are counted apart: they have no
// error to measure.
struct ErrorStats {
  std::uint64_t n = 0, nonfinite = 0;
  double rel_sum = 0, rel_max = 0, ulp_sum = 0, ulp_max = 0;
  double signal = 0, noise = 0;  // sum x^2, sum (y - x)^2
  std::vector<std::uint64_t> hist;

  void add(double x, double y, double ulp) {
    if (!std::isfinite(x)) ++nonfinite;
    if (!std::isfinite(x) || x == 0) return;
    const double d = std::isfinite(y) ? std::fabs(y - x) : inf;
    const double rel = d / std::fabs(x);
    ++n;
    rel_sum += rel;
    rel_max = std::max(rel_max, rel);
    signal += x * x;
    noise += d * d;
    if (ulp > 0) {
      const double u = d / ulp;
      ulp_sum += u;
      ulp_max = std::max(ulp_max, u);
      // bins of width 1/(size-1) over [0, 1), the last one [1, inf)
      const std::size_t bins = hist.size() - 1;
      const auto b = u >= 1 ? bins : static_cast<std::size_t>(u * static_cast<double>(bins));
      ++hist[std::min(b, bins)];
    }
  }
  double sqnr_db() const { return noise == 0 ? inf : 10.0 * std::log10(signal / noise); }
};

struct Setup {
  std::size_t n;
  std::uint64_t seed;
  double sigma;
  Overflow overflow;
  std::size_t bins;
};

Setup setup(const Context& ctx) {
  return {static_cast<std::size_t>(ctx.params.integer("n")),
          static_cast<std::uint64_t>(ctx.params.integer("seed")), ctx.params.real("sigma"),
          parse_overflow(ctx.params.text("overflow")), static_cast<std::size_t>(ctx.params.integer("bins"))};
}

// ---------------------------------------------------------------------------
// error_conversion and error_ulp_histogram.

ErrorStats conversion_stats(const FormatEntry& f, std::span<const double> xd, Round r, const Setup& s,
                            unsigned threads) {
  ErrorStats st;
  st.hist.assign(s.bins + 1, 0);
  // Every format rounds the double sample once (no float32 tensor between).
  for_each_rounded(f, xd, {.round = r, .overflow = s.overflow, .seed = s.seed, .threads = threads},
                   [&](std::size_t first, std::span<const double> y) {
                     if (Progress::interrupted()) throw Interrupted();
                     for (std::size_t j = 0; j < y.size(); ++j)
                       st.add(xd[first + j], y[j], ulp_at(f.info, xd[first + j]));
                   });
  return st;
}

void conversion_tables(const Context& ctx, const Setup& s, Table& conv, Table& hist) {
  std::vector<double> xd;
  if (!ctx.input.empty()) xd.assign(ctx.input.begin(), ctx.input.end());
  else xd = sampling::normal(s.n, s.sigma, s.seed);
  const std::vector<float> xf = sampling::to_float(xd);
  std::vector<Round> rounds;
  for (const std::string& r : ctx.params.list("rounds")) rounds.push_back(parse_round(r));
  std::vector<std::string> asked, not_run;
  for (const std::string& sc : ctx.params.list("schemes"))
    if (sc != "none") asked.push_back(sc);
  // A recipe's name stands for its operands' treatments (scaled::expand).
  const std::vector<std::string> schemes = scaled::expand(asked, &not_run);

  std::uint64_t point = 0;
  const auto emit = [&](std::uint64_t p, const std::string& dtype, const char* round,
                        const ErrorStats& st, bool has_ulp) {
    const double n = static_cast<double>(st.n);
    conv.add(p, {dtype, round, static_cast<std::int64_t>(st.n), static_cast<std::int64_t>(st.nonfinite),
                 st.rel_sum / n, st.rel_max,
                 has_ulp ? Cell{st.ulp_sum / n} : Cell{}, has_ulp ? Cell{st.ulp_max} : Cell{},
                 st.sqnr_db()});
    if (!has_ulp) return;
    for (std::size_t b = 0; b <= s.bins; ++b) {
      const double lo = static_cast<double>(b) / static_cast<double>(s.bins);
      const double hi = b == s.bins ? inf : static_cast<double>(b + 1) / static_cast<double>(s.bins);
      hist.add(p * (s.bins + 1) + b, {dtype, round, lo, hi, static_cast<std::int64_t>(st.hist[b]),
                                      static_cast<double>(st.hist[b]) / n});
    }
  };
  for (const FormatEntry* f : ctx.dtypes) {
    for (Round r : rounds) {
      const std::uint64_t p = point++;
      ctx.progress.step();
      if (!ctx.shard.owns(p)) continue;
      emit(p, std::string(f->name), round_name(r), conversion_stats(*f, xd, r, s, ctx.threads), true);
    }
  }
  for (const std::string& sc : schemes) {
    const std::uint64_t p = point++;
    ctx.progress.step();
    if (!ctx.shard.owns(p)) continue;
    const scaled::RoundTrip rt = scaled::round_trip(sc, xf, scaled::kSampleRow);
    ErrorStats st;
    st.hist.assign(s.bins + 1, 0);
    // Against the double sample: what the fp32 tensor already lost counts.
    for (std::size_t i = 0; i < xf.size(); ++i) st.add(xd[i], rt.y[i], 0);
    emit(p, sc, scaled::rounding_of(sc), st, false);
  }
  const std::string source =
      ctx.input.empty() ? fmt::format("{} draws of N(0, {}^2), seed {}", s.n, s.sigma, s.seed)
                        : fmt::format("the {} values of {}", ctx.input.size(), ctx.input_name);
  conv.notes = {
      "values: " + source + ", each rounded once into each format; the scheme rows quantize them as an "
      "fp32 tensor (as a framework holds them) and are measured against the values themselves",
      "n: the finite nonzero values measured; n_nonfinite: NaN and infinite values, which have no error "
      "and are left out; zeros are left out of the relative errors (every format but E8M0 holds 0)",
      "rel_err = |y - x| / |x| over the finite nonzero x; ulp = |y - x| / ulp(x), ulp(x) the format's "
      "spacing in the binade of x (subnormal spacing below the normal range): nearest roundings give "
      "at most 0.5, directed ones less than 1, stochastic less than 1",
      "sqnr_db = 10 log10(sum x^2 / sum (y - x)^2); torchao's MX tests require >= 20 dB for MXFP8 "
      "E4M3. Scheme rows (OCP MX v1.0 block scales, NVFP4, per-tensor FP8, DeepSeek-V3 tiles) round to "
      "nearest-even and saturate (a recipe's gradients round stochastically, as cvt.rs); their ULP cells are "
      "empty because the spacing depends on each block's scale",
      scaled::sample_rows_note(),
      fmt::format("overflow policy of the plain conversions: {}", ctx.params.text("overflow"))};
  conv.notes.insert(conv.notes.end(), not_run.begin(), not_run.end());
  hist.notes = {"count of elements whose error in ULPs lies in [ulp_lo, ulp_hi); fraction = count / n",
                "plain formats only (scheme rows have no single ULP)"};
}

// ---------------------------------------------------------------------------
// error_stochastic_bias: one value converted many times.

void bias_table(const Context& ctx, const Setup& s, Table& t) {
  const auto draws = static_cast<std::size_t>(ctx.params.integer("draws"));
  const double anchor = ctx.params.real("bias_value");
  std::uint64_t grid = 0;
  for (const FormatEntry* f : ctx.dtypes) {
    // base: the anchor rounded down (toward -inf) onto the format's grid; ulp:
    // the distance to the next value above it, in the direction the values
    // step (for a negative power of two that is the finer binade's spacing);
    // the values are base + k ulp / 3, k = 0..3, thirds of the way between
    // the two neighbours.
    const double base = f->to_double(f->from_double(anchor, Round::downward, Overflow::saturate, 0, nullptr));
    const double above = f->to_double(
        f->from_double(std::nextafter(base, INFINITY), Round::upward, Overflow::saturate, 0, nullptr));
    const double ulp = above - base;
    if (!(ulp > 0) || !std::isfinite(ulp))
      throw UsageError(fmt::format("error: bias_value {} has no value of {} above it", anchor, f->name));
    for (int k = 0; k <= 3; ++k) {
      const std::uint64_t g = grid++;
      ctx.progress.step();
      if (!ctx.shard.owns(g)) continue;
      const double x = base + k * ulp / 3.0;
      const double nearest = f->to_double(f->from_double(x, Round::nearest_even, Overflow::saturate, 0, nullptr));
      // Errors are summed in ulps of x, small numbers, so that the variance
      // does not cancel against x^2.
      double sum = 0, sum2 = 0;
      for (std::size_t i = 0; i < draws; ++i) {
        if (i % 4096 == 4095 && Progress::interrupted()) throw Interrupted();
        const std::uint32_t bits = kernels::stochastic_bits(s.seed + g, i);
        const double y = f->to_double(f->from_double(x, Round::stochastic, Overflow::saturate, bits, nullptr));
        const double e = (y - x) / ulp;
        sum += e;
        sum2 += e * e;
      }
      const double d = static_cast<double>(draws);
      const double bias_ulp = sum / d;
      const double var = std::max(0.0, sum2 / d - bias_ulp * bias_ulp);
      t.add(g, {std::string(f->name), x, static_cast<std::int64_t>(k), ulp, nearest, (nearest - x) / ulp,
                x + bias_ulp * ulp, bias_ulp, std::sqrt(var / d), static_cast<std::int64_t>(draws)});
    }
  }
  t.notes = {
      fmt::format("value = base + k*ulp/3, base = {} rounded toward zero into the format; each is "
                  "converted {} times with stochastic rounding (random bits kernels::stochastic_bits)",
                  anchor, draws),
      "nearest_err_ulp: nearest-even's error, the same every time (-1/3 ulp for k = 1, +1/3 for k = 2); "
      "stochastic_bias_ulp: mean of the draws minus the value, which is 0 up to the standard error "
      "stochastic_se_ulp: stochastic rounding is unbiased, nearest rounding is not"};
}

// ---------------------------------------------------------------------------
// error_stagnation: a running sum kept in the format.

void stagnation_table(const Context& ctx, const Setup& s, Table& t) {
  const auto terms = static_cast<std::uint64_t>(ctx.params.integer("terms"));
  const auto every = std::max<std::uint64_t>(1, terms / static_cast<std::uint64_t>(ctx.params.integer("stagnation_rows")));
  const double addend = ctx.params.real("addend");
  const std::uint64_t rows = terms / every;
  for (std::size_t j = 0; j < ctx.dtypes.size(); ++j) {
    const FormatEntry& f = *ctx.dtypes[j];
    const std::uint64_t first = j * rows;
    bool any = false;
    for (std::uint64_t r = 0; r < rows; ++r) any = any || ctx.shard.owns(first + r);
    ctx.progress.step();
    if (!any) continue;
    // The addend as stored in the format; exact = step * a is the true sum of
    // the stored addends, so the columns differ by accumulation alone.
    const double a = f.to_double(f.from_double(addend, Round::nearest_even, Overflow::ieee, 0, nullptr));
    double nearest = 0, stochastic = 0;
    for (std::uint64_t step = 1; step <= terms; ++step) {
      if (step % 4096 == 0 && Progress::interrupted()) throw Interrupted();
      // The sum of two values of a format of at most 24 significant bits is
      // exact in double, so each add is rounded once, as a storage-format
      // accumulator rounds it.
      nearest = f.to_double(f.from_double(nearest + a, Round::nearest_even, Overflow::ieee, 0, nullptr));
      const std::uint32_t bits = kernels::stochastic_bits(s.seed, step);
      stochastic = f.to_double(f.from_double(stochastic + a, Round::stochastic, Overflow::ieee, bits, nullptr));
      if (step % every == 0 && step / every <= rows) {
        const std::uint64_t g = first + step / every - 1;
        if (ctx.shard.owns(g))
          t.add(g, {std::string(f.name), static_cast<std::int64_t>(step), static_cast<double>(step) * a,
                    nearest, stochastic});
      }
    }
  }
  t.notes = {
      fmt::format("a running sum of {} copies of {} (rounded into the format), rounded into the format "
                  "after every add: nearest-even, and stochastic (seed {})", terms, addend, s.seed),
      "nearest stops growing once the addend is below half an ulp of the sum; stochastic rounding adds "
      "the addend in expectation and stays near the true sum"};
}

// ---------------------------------------------------------------------------
// error_ops and error_square_sqrt: the elementwise kernels.

struct OpCase {
  const char* name;
  std::vector<kernels::Step> chain;
  bool positive;  // sqrt and rsqrt take |x|
  double (*exact)(double);
};

const std::vector<OpCase>& op_cases() {
  using kernels::Step;
  using kernels::Unary;
  static const std::vector<OpCase> cases = {
      {"gelu_tanh", {Step{Unary::gelu_tanh}}, false, [](double x) { return kernels::ops::GeluTanh{}(x); }},
      {"gelu_erf", {Step{Unary::gelu_erf}}, false, [](double x) { return kernels::ops::GeluErf{}(x); }},
      {"square", {Step{Unary::square}}, false, [](double x) { return x * x; }},
      {"sqrt", {Step{Unary::sqrt}}, true, [](double x) { return std::sqrt(x); }},
      {"rsqrt", {Step{Unary::rsqrt}}, true, [](double x) { return 1.0 / std::sqrt(x); }},
      {"square_sqrt", {Step{Unary::square}, Step{Unary::sqrt}}, false, [](double x) { return std::fabs(x); }},
  };
  return cases;
}

constexpr kernels::Compute computes[] = {kernels::Compute::per_op, kernels::Compute::fused,
                                         kernels::Compute::fp64};
const char* compute_name(kernels::Compute c) {
  return c == kernels::Compute::per_op ? "per_op" : c == kernels::Compute::fused ? "fused" : "fp64";
}

// The sample rounded into T (nearest-even, saturating), as T values.
template <class T>
std::vector<T> stored_sample(std::span<const float> xf, bool positive) {
  std::vector<float> v(xf.begin(), xf.end());
  if (positive)
    for (float& e : v) e = std::fabs(e);
  std::vector<T> out(v.size());
  kernels::convert(std::span<const float>(v), std::span<T>(out), Round::nearest_even, Overflow::saturate);
  return out;
}

template <class T>
std::vector<T> apply(const OpCase& op, const std::vector<T>& x, kernels::Compute c) {
  std::vector<T> y(x.size());
  kernels::View<const T> xv(x.data(), {x.size()});
  kernels::View<T> yv(y.data(), {y.size()});
  kernels::map(std::span<const kernels::Step>(op.chain), xv, yv, {.compute = c});
  return y;
}

void ops_table(const Context& ctx, std::span<const float> xf, Table& t) {
  std::uint64_t point = 0;
  for (const OpCase& op : op_cases()) {
    for (const FormatEntry* f : ctx.dtypes) {
      const std::uint64_t first = point;
      point += std::size(computes);
      ctx.progress.step();
      if (!f->info.is_signed) continue;  // E8M0 holds no negative values nor zero
      if (f->declared != nullptr) continue;  // no compiled elementwise kernel (note below)
      bool any = false;
      for (std::uint64_t g = first; g < point; ++g) any = any || ctx.shard.owns(g);
      if (!any) continue;
      visit_format(*f, [&]<class T>(std::type_identity<T>) {
        const std::vector<T> x = stored_sample<T>(xf, op.positive);
        const std::vector<T> ref = apply(op, x, kernels::Compute::fp64);
        for (std::size_t c = 0; c < std::size(computes); ++c) {
          if (!ctx.shard.owns(first + c)) continue;
          const std::vector<T> y = computes[c] == kernels::Compute::fp64 ? ref : apply(op, x, computes[c]);
          std::uint64_t n = 0, same = 0;
          double sum = 0, mx = 0;
          for (std::size_t i = 0; i < x.size(); ++i) {
            const double e = op.exact(static_cast<double>(x[i]));
            // A result beyond the format's range is an overflow, not a rounding error.
            if (!std::isfinite(e) || std::fabs(e) > f->info.max) continue;
            const double yi = static_cast<double>(y[i]);
            const double u = yi == e ? 0.0 : std::isfinite(yi) ? std::fabs(yi - e) / ulp_at(f->info, e) : inf;
            ++n;
            same += y[i].bits() == ref[i].bits();
            sum += u;
            mx = std::max(mx, u);
          }
          const double d = static_cast<double>(n);
          t.add(first + c, {op.name, std::string(f->name), compute_name(computes[c]), static_cast<std::int64_t>(n),
                            sum / d, mx, static_cast<double>(same) / d});
        }
      });
    }
  }
  t.notes = {
      "ulp: |y - f(x)| / ulp(f(x)) against f evaluated in double on the stored input x (for "
      "square_sqrt f(x) = |x|); elements whose exact result lies beyond the format's max are left out",
      "compute: per_op rounds into the format after every op (what a framework does), fused keeps fp32 "
      "through the chain and rounds once, fp64 evaluates in double and rounds once (the reference)",
      "frac_matches_fp64: fraction of results bit-identical to the fp64 reference; the fp64 rows show "
      "<= 0.5 ulp (correct rounding, up to double rounding from double into the format)",
      "gelu's formula 0.5 x (1 + tanh(u)) cancels for x << 0, where tanh(u) -> -1: in fp32 the "
      "result keeps only a few correct bits there, which the float32 rows' large ulp_max show (an "
      "absolute error of the order of fp32 epsilon times |x|); rsqrt's two fp32 roundings give up to 1.5 ulp in float32. "
      "Narrower formats hide both behind their own coarser ulp",
      "sqrt and rsqrt take |x|; unsigned formats (E8M0) are skipped"};
}

void square_sqrt_table(const Context& ctx, std::span<const float> xf, Table& t) {
  const OpCase& op = op_cases().back();
  std::uint64_t g = 0;
  for (const FormatEntry* f : ctx.dtypes) {
    const std::uint64_t p = g++;
    ctx.progress.step();
    if (!f->info.is_signed || f->declared != nullptr || !ctx.shard.owns(p)) continue;
    visit_format(*f, [&]<class T>(std::type_identity<T>) {
      const std::vector<T> x = stored_sample<T>(xf, false);
      const std::vector<T> y = apply(op, x, kernels::Compute::per_op);
      const std::vector<T> yf = apply(op, x, kernels::Compute::fused);
      double xx = 0, lecture = 0, true_err = 0, fused_err = 0, rel_max = 0;
      std::uint64_t exact = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double xi = static_cast<double>(x[i]), yi = static_cast<double>(y[i]);
        const double a = std::fabs(xi);
        xx += xi * xi;
        lecture += (yi - xi) * (yi - xi);
        true_err += (yi - a) * (yi - a);
        fused_err += (static_cast<double>(yf[i]) - a) * (static_cast<double>(yf[i]) - a);
        if (a != 0) rel_max = std::max(rel_max, std::fabs(yi - a) / a);
        exact += yi == a;
      }
      t.add(p, {std::string(f->name), static_cast<std::int64_t>(x.size()), std::sqrt(lecture / xx),
                std::sqrt(true_err / xx), rel_max, static_cast<double>(exact) / static_cast<double>(x.size()),
                std::sqrt(fused_err / xx)});
    });
  }
  t.notes = {
      "the lecture's dtype benchmark prints \"rel-err 1.41\" for every dtype: it compares "
      "y = x.square().sqrt() with x, but y = |x|. Its metric ||y - x|| / ||x|| is then "
      "sqrt(sum_{x<0} (2x)^2 / sum x^2) = sqrt(4 * 1/2) = sqrt(2) = 1.414 for a symmetric sample, "
      "whatever the dtype: lecture_metric reproduces it (FP6 and FP4 drift from it, 1.36 for E2M1, "
      "because their squares of small values round to 0, so y is not even |x| there)",
      "true_rel_err = ||y - |x||| / ||x|| is the real error (per_op: the square rounded into the "
      "format first, as torch does); true_rel_err_max = max |y - |x|| / |x|; frac_exact: y == |x|; "
      "fused_rel_err: the same chain kept in fp32 and rounded once (exact for these formats unless the "
      "fp32 square underflows)"};
}

std::vector<Table> run(const Context& ctx) {
  if (ctx.dtypes.empty()) throw UsageError("error: no dtypes given");
  // The samples as double and float, their codes and results, and the
  // per-sample errors: about 48 bytes a sample at the most.
  const double n = static_cast<double>(ctx.input.empty() ? ctx.params.integer("n") : ctx.input.size());
  require_memory(48.0 * n, fmt::format("error: {} samples", shortest(n)));
  for (const FormatEntry* f : ctx.dtypes)
    if (!f->info.is_signed)
      throw UsageError(fmt::format(
          "error: {} has no negative values and no zero (an MX scale format): every signed value it is asked "
          "to hold is NaN, an infinite error; its effect on data shows in the scheme rows (--param schemes)",
          f->name));
  if (!ctx.input.empty()) {
    std::size_t nan = 0, infinite = 0, zero = 0;
    for (double x : ctx.input) {
      nan += std::isnan(x);
      infinite += std::isinf(x);
      zero += x == 0;
    }
    if (nan + infinite + zero == ctx.input.size())
      throw UsageError(fmt::format("error: {} holds no finite nonzero value ({} NaN, {} infinite, {} zero): "
                                   "there is no error to measure",
                                   ctx.input_name, nan, infinite, zero));
  }
  // bias_value needs a format value above it in every dtype (checked before any work).
  for (const FormatEntry* f : ctx.dtypes) {
    const double anchor = ctx.params.real("bias_value");
    if (!(anchor < f->info.max))
      throw UsageError(fmt::format("error: bias_value {} is not below {}'s max {}", anchor, f->name, f->info.max));
  }
  const Setup s = setup(ctx);
  Table conv{"error_conversion", "Conversion error per format and rounding mode",
             {{"dtype", ""}, {"round", ""}, {"n", ""}, {"n_nonfinite", ""}, {"rel_err_mean", ""}, {"rel_err_max", ""},
              {"ulp_mean", "ulp"}, {"ulp_max", "ulp"}, {"sqnr_db", "dB"}}, {}, {}};
  Table hist{"error_ulp_histogram", "Histogram of conversion errors in ULPs",
             {{"dtype", ""}, {"round", ""}, {"ulp_lo", "ulp"}, {"ulp_hi", "ulp"}, {"count", ""}, {"fraction", ""}},
             {}, {}};
  Table bias{"error_stochastic_bias", "Stochastic against nearest rounding of one value, many draws",
             {{"dtype", ""}, {"value", ""}, {"k", ""}, {"ulp", ""}, {"nearest", ""}, {"nearest_err_ulp", "ulp"},
              {"stochastic_mean", ""}, {"stochastic_bias_ulp", "ulp"}, {"stochastic_se_ulp", "ulp"}, {"draws", ""}},
             {}, {}};
  Table stag{"error_stagnation", "A running sum kept in the format: nearest stagnates, stochastic does not",
             {{"dtype", ""}, {"step", ""}, {"exact", ""}, {"nearest", ""}, {"stochastic", ""}}, {}, {}};
  Table ops{"error_ops", "Elementwise kernels against an fp64 reference, in ULPs",
            {{"op", ""}, {"dtype", ""}, {"compute", ""}, {"n", ""}, {"ulp_mean", "ulp"}, {"ulp_max", "ulp"},
             {"frac_matches_fp64", ""}}, {}, {}};
  Table sq{"error_square_sqrt", "x.square().sqrt(): the lecture's metric against the true error",
           {{"dtype", ""}, {"n", ""}, {"lecture_metric", ""}, {"true_rel_err", ""}, {"true_rel_err_max", ""},
            {"frac_exact", ""}, {"fused_rel_err", ""}}, {}, {}};

  const std::size_t nd = ctx.dtypes.size();
  std::vector<std::string> asked;
  for (const std::string& sc : ctx.params.list("schemes"))
    if (sc != "none") asked.push_back(sc);
  const std::size_t schemes = scaled::expand(asked).size();
  ctx.progress.set_total(nd * ctx.params.list("rounds").size() + schemes + 4 * nd + nd +
                         op_cases().size() * nd + nd);
  conversion_tables(ctx, s, conv, hist);
  bias_table(ctx, s, bias);
  stagnation_table(ctx, s, stag);
  // The op tables always use the generated sample: the lecture's benchmark
  // draws x ~ N(0, 1).
  const std::vector<float> xf = sampling::to_float(sampling::normal(s.n, s.sigma, s.seed + 1));
  ops_table(ctx, xf, ops);
  square_sqrt_table(ctx, xf, sq);
  std::vector<std::string> declared;
  for (const FormatEntry* f : ctx.dtypes)
    if (f->declared != nullptr) declared.emplace_back(f->name);
  if (!declared.empty()) {
    const std::string note = fmt::format(
        "{}: no rows here -- a declared format converts through the scalar core, and the elementwise "
        "kernels are compiled per catalog format ('lplab formats')",
        fmt::join(declared, ", "));
    ops.notes.push_back(note);
    sq.notes.push_back(note);
  }
  return {conv, hist, bias, stag, ops, sq};
}

// Notes that state numbers read them from the table they annotate
// (Experiment::summarize: after an unsharded run or a merge, when every row
// is there): where each running sum ended.
void summarize(std::vector<Table>& tables) {
  for (Table& t : tables) {
    if (t.id != "error_stagnation" || t.rows.empty()) continue;
    const std::size_t c_dtype = t.column("dtype"), c_step = t.column("step"), c_exact = t.column("exact"),
                      c_nearest = t.column("nearest"), c_stochastic = t.column("stochastic");
    std::vector<std::string> order;
    std::vector<const Row*> last;
    for (const Row& r : t.rows) {
      const std::string& d = std::get<std::string>(r.cells[c_dtype]);
      const auto it = std::find(order.begin(), order.end(), d);
      if (it == order.end()) {
        order.push_back(d);
        last.push_back(&r);
      } else {
        const Row*& l = last[static_cast<std::size_t>(it - order.begin())];
        if (std::get<std::int64_t>(r.cells[c_step]) > std::get<std::int64_t>(l->cells[c_step])) l = &r;
      }
    }
    std::vector<std::string> parts;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const Row& r = *last[k];
      const double exact = std::get<double>(r.cells[c_exact]), nearest = std::get<double>(r.cells[c_nearest]),
                   stochastic = std::get<double>(r.cells[c_stochastic]);
      if (exact == 0) {
        parts.push_back(fmt::format("{}: the addend itself rounds to 0, so every column is 0", order[k]));
        continue;
      }
      parts.push_back(fmt::format("{}: nearest ends at {} ({:.3g}% of the true {}), stochastic at {} ({:.3g}%)",
                                  order[k], shortest(nearest), 100 * nearest / exact, shortest(exact),
                                  shortest(stochastic), 100 * stochastic / exact));
    }
    t.notes.push_back(fmt::format("This run, after {} adds: {}", std::get<std::int64_t>(last[0]->cells[c_step]),
                                  fmt::join(parts, "; ")));
  }
}

// The report's plots of this experiment's tables.
std::vector<Plot> drawn_plots(const std::vector<Table>& tables) {
  std::vector<Plot> plots;
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
  return plots;
}

// The report's headline figures from this experiment's tables.
void headline_figures(const std::vector<Table>& tables, Headlines& h) {
  h.add("lecture's square().sqrt() 'rel-err', bf16",
      formatted(lookup(tables, "error_square_sqrt", {{"dtype", "bfloat16"}}, "lecture_metric"), "{:.4f}"),
      "1.41: compares |x| with x, not an error", "error_square_sqrt");
  h.add("true relative error of square().sqrt(), bf16 / fp16",
      fmt::format("{} / {}", cell_text(formatted(lookup(tables, "error_square_sqrt", {{"dtype", "bfloat16"}}, "true_rel_err"), "{:.3g}")),
                  cell_text(formatted(lookup(tables, "error_square_sqrt", {{"dtype", "float16"}}, "true_rel_err"), "{:.3g}"))),
      "about 0: both steps are correctly rounded", "error_square_sqrt");
  h.add("SQNR of MXFP8 E4M3 on N(0,1) [dB]",
      formatted(lookup(tables, "error_conversion", {{"dtype", "mxfp8_e4m3"}}, "sqnr_db"), "{:.1f}"), ">= 20 (torchao's test)",
      "error_conversion");
  // The 4-bit weight formats side by side: GPTQ's INT4 with groups of 128
  // (4.16 bits per value), NVFP4 (4.5) and MXFP4 (4.25); INT8 per channel
  // beside MXFP8.
  const auto sqnr = [&](const char* scheme) {
    return cell_text(formatted(lookup(tables, "error_conversion", {{"dtype", scheme}}, "sqnr_db"), "{:.1f}"));
  };
  h.add("SQNR on N(0,1) [dB]: INT4 g128 (GPTQ) / NVFP4 / MXFP4",
        fmt::format("{} / {} / {}", sqnr("int4_g128"), sqnr("nvfp4"), sqnr("mxfp4")),
        "4.16, 4.5 and 4.25 bits per value (footprint_formats)", "error_conversion");
  h.add("SQNR on N(0,1) [dB]: INT8 per channel / MXFP8 E4M3",
        fmt::format("{} / {}", sqnr("int8_channel"), sqnr("mxfp8_e4m3")),
        "8.03 (rows of 1024) and 8.25 bits per value", "error_conversion");
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
      h.add(fmt::format("bf16 running sum of {} adds of {:.5g}: nearest / stochastic (true {:.5g})", steps,
                      sum / steps, sum),
          fmt::format("{} / {}", cell_text(formatted(last->cells[nearest], "{:.4g}")),
                      cell_text(formatted(last->cells[stochastic], "{:.4g}"))),
          "nearest stagnates; stochastic stays near the true sum", "error_stagnation");
    }
  }
}

}  // namespace

Experiment error_experiment() {
  // Every scheme by default; a recipe's name adds its operands' rows.
  std::vector<std::string> scheme_choices{"none"};
  for (const std::string& s : scaled::scheme_and_recipe_names()) scheme_choices.push_back(s);
  std::string scheme_default;
  for (std::string_view s : scaled::scheme_names()) scheme_default += (scheme_default.empty() ? "" : ",") + std::string(s);
  std::vector<std::string> round_choices, overflow_choices;
  for (const EnumEntry<Round>& r : enum_entries<Round>()) round_choices.emplace_back(r.name);
  for (const EnumEntry<Overflow>& o : enum_entries<Overflow>()) overflow_choices.emplace_back(o.name);
  return Experiment{
      .name = "error",
      .summary = "conversion error (relative, ULP, SQNR), stochastic rounding's bias, stagnation, op error",
      .params = {
          {"n", ParamType::integer, "65536", 2, 1 << 26, "sample size", {}},
          {"seed", ParamType::integer, "0", 0, 1e15, "seed of the sample and of stochastic rounding", {}},
          {"sigma", ParamType::real, "1", 1e-30, 1e30, "standard deviation of the normal sample", {}},
          {"overflow", ParamType::text, "saturate", 0, 0, "overflow policy of the plain conversions",
           overflow_choices},
          {"rounds", ParamType::list, enum_names_text<Round>(","), 0, 0, "rounding modes of error_conversion",
           round_choices},
          {"schemes", ParamType::list, scheme_default, 0, 0, "scaling schemes in error_conversion, and recipes (lplab recipe --list), each of whose "
           "operand treatments is a row (none: no rows)",
           scheme_choices},
          {"bins", ParamType::integer, "8", 1, 1000, "histogram bins over [0, 1) ulp (plus one for >= 1)", {}},
          {"draws", ParamType::integer, "100000", 1, 1e9, "stochastic draws per value in error_stochastic_bias", {}},
          {"bias_value", ParamType::real, "0.1", -1e30, 1e30, "the value error_stochastic_bias starts from", {}},
          {"terms", ParamType::integer, "10000", 1, 1e9, "terms of the running sum in error_stagnation", {}},
          {"addend", ParamType::real, "1e-4", -1e30, 1e30, "each term of the running sum", {}},
          {"stagnation_rows", ParamType::integer, "10", 1, 10000, "rows per dtype in error_stagnation", {}},
      },
      .default_dtypes = {"float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float6_e2m3fn", "float6_e3m2fn",
       "float4_e2m1fn"},
      .takes_input = true,
      .report_params = {{"n", "65536"}, {"draws", "100000"}},
      .run = run,
      .quick_params = {{"n", "1024"}, {"draws", "2000"}, {"terms", "2000"}},
      .summarize = summarize,
      .takes_declared_formats = true,
      .place = 30,
      .plots = drawn_plots,
      .headlines = headline_figures,
      .regression = {.pinned = true,
                     // SLEEF's float32 gelu/tanh differ per SIMD target by up to 0.3%.
                     .tolerance = [](std::string_view table, const std::vector<std::string>& row) {
                       return table == "error_ops" && std::find(row.begin(), row.end(), "float32") != row.end()
                                  ? 1e-2
                                  : 0.0;
                     }},
  };
}

}  // namespace lplab::experiments
