// training: a few SGD steps of the two-layer linear model of Stanford CS336
// lecture 2 ("PyTorch and resource accounting"),
//
//   h1 = x w1   (B x D)(D x D)        h2 = h1 w2   (B x D)(D x K)
//   loss = mean(h2^2) = sum(h2^2) / (B K),
//
// forward and hand-written backward through lplab::kernels::matmul, under the
// mixed-precision recipes of practice, with the FLOPs of every issued matmul
// counted against the 6 * tokens * params rule.
//
// Backward, with g2 = dloss/dh2 = 2 h2 / (B K):
//   dw2 = h1^T g2   (D x B)(B x K)      g1 = g2 w2^T   (B x K)(K x D)
//   dw1 = x^T g1    (D x B)(B x D)      (dx = g1 w1^T is not needed: x is data)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/lab/report_parts.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/random.h"
#include "lplab/kernels/scaling.h"
#include "lplab/experiments/sampling.h"

namespace lplab::experiments {
namespace {

namespace k = lplab::kernels;

// The recipes, in the order of the `recipes` parameter's choices.
enum class Recipe { fp32, bf16, fp16, fp16_static, fp16_dynamic, fp8_tensor, fp8_mx };
const std::vector<std::string> kRecipeNames = {"fp32",         "bf16",       "fp16",  "fp16_static",
                                               "fp16_dynamic", "fp8_tensor", "fp8_mx"};

Recipe recipe_named(const std::string& s) {
  for (std::size_t i = 0; i < kRecipeNames.size(); ++i)
    if (kRecipeNames[i] == s) return static_cast<Recipe>(i);
  throw UsageError("training: unknown recipe '" + s + "'");
}

using sampling::gaussian;

// Streams of the generator: the two weights, then one batch per step.
constexpr std::uint64_t kStreamW1 = 1, kStreamW2 = 2, kStreamBatch = 16;

struct Config {
  std::size_t b, d, kk;  // batch (tokens), hidden width, output width
  double lr, init_scale, static_scale, dynamic_init;
  std::int64_t steps, growth_interval;  // growth_interval resolved: never 0
  std::uint64_t seed;
  unsigned threads;
  k::ScaleRule mx_rule;
};

// Matmul FLOPs issued, 2 m n k per product, by pass.
struct FlopCount {
  double forward = 0, backward = 0;
};

// Roundings into a gradient format: how many values were rounded and how
// many of them were nonzero before and zero after (underflow to zero).
struct Underflow {
  std::uint64_t rounded = 0, flushed = 0;
};

template <class T>
std::vector<T> transpose(const std::vector<T>& a, std::size_t rows, std::size_t cols) {
  std::vector<T> t(a.size());
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) t[j * rows + i] = a[i * cols + j];
  return t;
}

// x rounded to nearest-even into T (float, bf16, fp16), counting into *u the
// nonzero values that become zero.
template <class T, class S>
std::vector<T> round_into(const std::vector<S>& x, Underflow* u = nullptr) {
  std::vector<T> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if constexpr (std::is_same_v<T, float>)
      out[i] = static_cast<float>(x[i]);
    else
      out[i] = lplab::convert<T>(static_cast<double>(x[i]), Round::nearest_even, Overflow::ieee);
    if (u != nullptr && x[i] != 0 && static_cast<double>(out[i]) == 0) ++u->flushed;
  }
  if (u != nullptr) u->rounded += x.size();
  return out;
}

template <class T>
std::vector<float> to_float(const std::vector<T>& x) {
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(static_cast<double>(x[i]));
  return out;
}

// kernels::matmul, adding the 2 m n k FLOPs it issues to `flops`.
template <class TA, class TB, class TC>
void counted_matmul(double& flops, std::size_t m, std::size_t n, std::size_t depth, const TA* a, const TB* b, TC* c,
                    const k::MatmulOptions& options) {
  flops += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(depth);
  k::matmul(m, n, depth, a, b, c, options);
}
template <class EA, class SA, class EB, class SB, class TC>
void counted_matmul(double& flops, std::size_t m, std::size_t n, std::size_t depth,
                    const k::BlockScaledOperand<EA, SA>& a, const k::BlockScaledOperand<EB, SB>& b_transposed, TC* c,
                    const k::MatmulOptions& options) {
  flops += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(depth);
  k::matmul(m, n, depth, a, b_transposed, c, options);
}

struct Model {
  std::vector<float> w1, w2;  // the fp32 master weights, D x D and D x K
};

// What one step reports.
struct StepResult {
  double loss = 0;
  Underflow underflow;
  bool finite = true;           // every weight gradient finite
  std::vector<float> dw1, dw2;  // unscaled by the loss scale, in fp32
};

// The loss mean(h2^2), in double, and its gradient 2 h2 / numel times the
// loss scale, into g2 (one function for every recipe's step).
template <class H, class G>
double loss_and_gradient(const std::vector<H>& h2, double scale, std::vector<G>& g2) {
  const double count = static_cast<double>(h2.size());
  g2.resize(h2.size());
  double loss = 0;
  for (std::size_t i = 0; i < h2.size(); ++i) {
    const double v = static_cast<double>(h2[i]);
    loss += v * v;
    g2[i] = static_cast<G>(scale * 2.0 * v / count);
  }
  return loss / count;
}

// One step of a 16- or 32-bit recipe: working copies of the weights and the
// batch in T, matmuls with T operands accumulated in fp32 and rounded into T
// (activations and gradients in T), the loss gradient multiplied by `scale`.
template <class T>
StepResult step_plain(const Config& c, const Model& m, const std::vector<float>& x, double scale, FlopCount& f) {
  const std::size_t b = c.b, d = c.d, kk = c.kk;
  const k::MatmulOptions opt{.accumulator = k::Accumulator::fp32, .threads = c.threads};
  StepResult r;
  const std::vector<T> xq = round_into<T>(x), w1 = round_into<T>(m.w1), w2 = round_into<T>(m.w2);
  std::vector<T> h1(b * d), h2(b * kk);
  counted_matmul(f.forward, b, d, d, xq.data(), w1.data(), h1.data(), opt);
  counted_matmul(f.forward, b, kk, d, h1.data(), w2.data(), h2.data(), opt);
  std::vector<double> g2;
  r.loss = loss_and_gradient(h2, scale, g2);
  const std::vector<T> g2q = round_into<T>(g2, &r.underflow);
  // The weight and input gradients: fp32 sums, then rounded into T.
  std::vector<float> dw2(d * kk), g1(b * d), dw1(d * d);
  const std::vector<T> h1t = transpose(h1, b, d), w2t = transpose(w2, d, kk), xt = transpose(xq, b, d);
  counted_matmul(f.backward, d, kk, b, h1t.data(), g2q.data(), dw2.data(), opt);
  counted_matmul(f.backward, b, d, kk, g2q.data(), w2t.data(), g1.data(), opt);
  const std::vector<T> g1q = round_into<T>(g1, &r.underflow);
  counted_matmul(f.backward, d, d, b, xt.data(), g1q.data(), dw1.data(), opt);
  r.dw1 = to_float(round_into<T>(dw1, &r.underflow));
  r.dw2 = to_float(round_into<T>(dw2, &r.underflow));
  for (auto* g : {&r.dw1, &r.dw2})
    for (float& v : *g) {
      r.finite = r.finite && std::isfinite(v);
      v = static_cast<float>(v / scale);
    }
  return r;
}

// FP8 with one scale per tensor (Transformer Engine's current scaling):
// E4M3 for the batch, weights and activations, E5M2 for the gradients g2 and
// g1, the matmuls fed the fp8 codes with the descales as scale_a and scale_b
// and accumulated in fp32; weight gradients stay in fp32.
StepResult step_fp8_tensor(const Config& c, const Model& m, const std::vector<float>& x, FlopCount& f) {
  const std::size_t b = c.b, d = c.d, kk = c.kk;
  StepResult r;
  auto q43 = [](const std::vector<float>& v, std::vector<float8_e4m3fn>& out) {
    out.resize(v.size());
    return 1.0f / k::quantize(k::fp8_e4m3_tensor, v, out).scale;
  };
  auto q52 = [&r](const std::vector<float>& v, std::vector<float8_e5m2>& out) {
    out.resize(v.size());
    const float descale = 1.0f / k::quantize(k::fp8_e5m2_tensor, v, out).scale;
    for (std::size_t i = 0; i < v.size(); ++i) r.underflow.flushed += v[i] != 0 && static_cast<double>(out[i]) == 0;
    r.underflow.rounded += v.size();
    return descale;
  };
  auto opt = [&c](float sa, float sb) {
    return k::MatmulOptions{.accumulator = k::Accumulator::fp32, .scale_a = sa, .scale_b = sb, .threads = c.threads};
  };
  std::vector<float8_e4m3fn> xq, w1q, w2q, h1q;
  const float sx = q43(x, xq), sw1 = q43(m.w1, w1q), sw2 = q43(m.w2, w2q);
  std::vector<float> h1(b * d), h2(b * kk);
  counted_matmul(f.forward, b, d, d, xq.data(), w1q.data(), h1.data(), opt(sx, sw1));
  const float sh1 = q43(h1, h1q);
  counted_matmul(f.forward, b, kk, d, h1q.data(), w2q.data(), h2.data(), opt(sh1, sw2));
  std::vector<float> g2;
  r.loss = loss_and_gradient(h2, 1.0, g2);
  std::vector<float8_e5m2> g2q, g1q;
  const float sg2 = q52(g2, g2q);
  r.dw2.resize(d * kk);
  r.dw1.resize(d * d);
  std::vector<float> g1(b * d);
  const auto h1t = transpose(h1q, b, d), w2t = transpose(w2q, d, kk), xt = transpose(xq, b, d);
  counted_matmul(f.backward, d, kk, b, h1t.data(), g2q.data(), r.dw2.data(), opt(sh1, sg2));
  counted_matmul(f.backward, b, d, kk, g2q.data(), w2t.data(), g1.data(), opt(sg2, sw2));
  const float sg1 = q52(g1, g1q);
  counted_matmul(f.backward, d, d, b, xt.data(), g1q.data(), r.dw1.data(), opt(sx, sg1));
  for (const auto* g : {&r.dw1, &r.dw2})
    for (float v : *g) r.finite = r.finite && std::isfinite(v);
  return r;
}

// MXFP8 (OCP MX v1.0): every matmul operand quantized in blocks of 32 along
// its contraction dimension, E4M3 elements for the batch, weights and
// activations, E5M2 for the gradients, E8M0 scales; a tensor that is
// contracted along both of its dimensions (h1, g2, x, w2) is quantized once
// per layout, as MX training recipes do (arXiv 2506.08027).
StepResult step_fp8_mx(const Config& c, const Model& m, const std::vector<float>& x, FlopCount& f) {
  const std::size_t b = c.b, d = c.d, kk = c.kk;
  StepResult r;
  // C (rows x cols) = A (rows x depth) B, with B given transposed (cols x depth).
  auto mm = [&](double& pass, std::size_t rows, std::size_t cols, std::size_t depth, const std::vector<float>& a,
                bool a_grad, const std::vector<float>& bt, bool b_grad, std::vector<float>& out) {
    out.resize(rows * cols);
    std::vector<float8_e8m0fnu> sa(rows * depth / 32), sb(cols * depth / 32);
    const k::BlockScaling<float8_e5m2, float8_e8m0fnu> mx52{.block_size = 32, .rule = c.mx_rule};
    const k::BlockScaling<float8_e4m3fn, float8_e8m0fnu> mx43{.block_size = 32, .rule = c.mx_rule};
    auto grad = [&](const std::vector<float>& v, std::vector<float8_e8m0fnu>& sc, std::vector<float8_e5m2>& elems) {
      elems.resize(v.size());
      k::quantize(mx52, v, elems, sc);
      for (std::size_t i = 0; i < v.size(); ++i) r.underflow.flushed += v[i] != 0 && static_cast<double>(elems[i]) == 0;
      r.underflow.rounded += v.size();
    };
    auto value = [&](const std::vector<float>& v, std::vector<float8_e8m0fnu>& sc, std::vector<float8_e4m3fn>& elems) {
      elems.resize(v.size());
      k::quantize(mx43, v, elems, sc);
    };
    const k::MatmulOptions opt{.accumulator = k::Accumulator::fp32, .threads = c.threads};
    std::vector<float8_e4m3fn> a43, b43;
    std::vector<float8_e5m2> a52, b52;
    if (a_grad)
      grad(a, sa, a52);
    else
      value(a, sa, a43);
    if (b_grad)
      grad(bt, sb, b52);
    else
      value(bt, sb, b43);
    // Only the activation-gradient operands are E5M2: one of A or B at most.
    if (a_grad)
      counted_matmul(pass, rows, cols, depth, k::BlockScaledOperand{mx52, a52.data(), sa.data()},
                     k::BlockScaledOperand{mx43, b43.data(), sb.data()}, out.data(), opt);
    else if (b_grad)
      counted_matmul(pass, rows, cols, depth, k::BlockScaledOperand{mx43, a43.data(), sa.data()},
                     k::BlockScaledOperand{mx52, b52.data(), sb.data()}, out.data(), opt);
    else
      counted_matmul(pass, rows, cols, depth, k::BlockScaledOperand{mx43, a43.data(), sa.data()},
                     k::BlockScaledOperand{mx43, b43.data(), sb.data()}, out.data(), opt);
  };
  std::vector<float> h1, h2;
  mm(f.forward, b, d, d, x, false, transpose(m.w1, d, d), false, h1);
  mm(f.forward, b, kk, d, h1, false, transpose(m.w2, d, kk), false, h2);
  std::vector<float> g2;
  r.loss = loss_and_gradient(h2, 1.0, g2);
  std::vector<float> g1;
  mm(f.backward, d, kk, b, transpose(h1, b, d), false, transpose(g2, b, kk), true, r.dw2);  // dw2 = h1^T g2
  mm(f.backward, b, d, kk, g2, true, m.w2, false, g1);                                      // g1 = g2 w2^T
  mm(f.backward, d, d, b, transpose(x, b, d), false, transpose(g1, b, d), true, r.dw1);     // dw1 = x^T g1
  for (const auto* g : {&r.dw1, &r.dw2})
    for (float v : *g) r.finite = r.finite && std::isfinite(v);
  return r;
}

struct StepRow {
  double loss, underflow_frac, scale;
  bool skipped;
};

// Trains one recipe for c.steps steps from the seeded initial weights.
std::vector<StepRow> train(const Config& c, Recipe recipe, FlopCount& flops) {
  Model m;
  m.w1.resize(c.d * c.d);
  m.w2.resize(c.d * c.kk);
  // N(0, 1) * init_scale / sqrt(fan_in): the lecture's 1/sqrt(D)
  // initialisation, shrunk by init_scale (see the notes).
  const double std_w = c.init_scale / std::sqrt(static_cast<double>(c.d));
  for (std::size_t i = 0; i < m.w1.size(); ++i) m.w1[i] = static_cast<float>(std_w * gaussian(c.seed, kStreamW1, i));
  for (std::size_t i = 0; i < m.w2.size(); ++i) m.w2[i] = static_cast<float>(std_w * gaussian(c.seed, kStreamW2, i));

  double scale = recipe == Recipe::fp16_static ? c.static_scale : recipe == Recipe::fp16_dynamic ? c.dynamic_init : 1;
  std::int64_t good = 0;
  std::vector<StepRow> rows;
  std::vector<float> x(c.b * c.d);
  for (std::int64_t s = 0; s < c.steps; ++s) {
    if (Progress::interrupted()) throw Interrupted();  // a step can take long at large sizes
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(gaussian(c.seed, kStreamBatch + static_cast<std::uint64_t>(s), i));
    StepResult r;
    switch (recipe) {
      case Recipe::fp32:
        r = step_plain<float>(c, m, x, scale, flops);
        break;
      case Recipe::bf16:
        r = step_plain<bfloat16>(c, m, x, scale, flops);
        break;
      case Recipe::fp16:
      case Recipe::fp16_static:
      case Recipe::fp16_dynamic:
        r = step_plain<float16>(c, m, x, scale, flops);
        break;
      case Recipe::fp8_tensor:
        r = step_fp8_tensor(c, m, x, flops);
        break;
      case Recipe::fp8_mx:
        r = step_fp8_mx(c, m, x, flops);
        break;
    }
    const double frac = r.underflow.rounded == 0
                            ? 0.0
                            : static_cast<double>(r.underflow.flushed) / static_cast<double>(r.underflow.rounded);
    rows.push_back({r.loss, frac, scale, !r.finite});
    // A non-finite gradient skips the update (every recipe; only a loss
    // scale makes one likely). The dynamic scaler then halves its scale, and
    // doubles it after growth_interval finite steps in a row (PyTorch's
    // GradScaler: backoff 0.5, growth 2; Micikevicius et al. 2017, 3.2).
    if (!r.finite) {
      if (recipe == Recipe::fp16_dynamic) scale /= 2, good = 0;
      continue;
    }
    for (std::size_t i = 0; i < m.w1.size(); ++i) m.w1[i] = static_cast<float>(m.w1[i] - c.lr * r.dw1[i]);
    for (std::size_t i = 0; i < m.w2.size(); ++i) m.w2[i] = static_cast<float>(m.w2[i] - c.lr * r.dw2[i]);
    if (recipe == Recipe::fp16_dynamic && ++good == c.growth_interval) scale *= 2, good = 0;
  }
  return rows;
}

// PyTorch's GradScaler doubles its scale after 2000 finite steps in a row
// (torch.amp.GradScaler, growth_interval=2000), an interval made for runs of
// tens of thousands of steps. growth_interval = 0 scales it to this run:
// the scale may double kGrowths times, as often as 2000 allows in a run of
// 2000 * kGrowths = 20,000 steps. A positive value is used as given.
constexpr std::int64_t kTorchGrowthInterval = 2000, kGrowths = 10;
std::int64_t scaled_growth_interval(std::int64_t given, std::int64_t steps) {
  if (given > 0) return given;
  return std::max<std::int64_t>(1, (steps + kGrowths - 1) / kGrowths);  // ceil(steps / 10)
}

std::vector<Table> run(const Context& ctx) {
  const Params& p = ctx.params;
  Config c{static_cast<std::size_t>(p.integer("batch")),
           static_cast<std::size_t>(p.integer("d")),
           static_cast<std::size_t>(p.integer("k")),
           p.real("lr"),
           p.real("init_scale"),
           p.real("static_scale"),
           p.real("dynamic_init"),
           p.integer("steps"),
           scaled_growth_interval(p.integer("growth_interval"), p.integer("steps")),
           static_cast<std::uint64_t>(p.integer("seed")),
           ctx.threads,
           *lplab::enum_parse<k::ScaleRule>(p.text("mx_scale_rule"))};  // one of the choices below
  std::vector<Recipe> recipes;
  for (const std::string& name : p.list("recipes")) recipes.push_back(recipe_named(name));
  for (Recipe r : recipes)
    if (r == Recipe::fp8_mx && (c.b % 32 != 0 || c.d % 32 != 0 || c.kk % 32 != 0))
      throw UsageError("training: recipe fp8_mx needs batch, d and k to be multiples of 32 (the MX block), got " +
                       std::to_string(c.b) + ", " + std::to_string(c.d) + ", " + std::to_string(c.kk));

  // The fp32 run is the reference of every other one (and gives the FLOP
  // count, the same for every recipe), so it runs whatever the shard.
  FlopCount flops;
  const std::vector<StepRow> ref = train(c, Recipe::fp32, flops);
  const double steps = static_cast<double>(c.steps);
  const FlopCount per_step{flops.forward / steps, flops.backward / steps};

  Table steps_table{"training_steps",
                    "Loss, gradient underflow and loss scale per step of each precision recipe",
                    {{"recipe", ""},
                     {"step", ""},
                     {"loss", ""},
                     {"loss_vs_fp32", ""},
                     {"grad_underflow_frac", ""},
                     {"loss_scale", ""},
                     {"skipped", ""}},
                    {},
                    {}};
  ctx.progress.set_total(recipes.size());
  for (std::size_t ri = 0; ri < recipes.size(); ++ri) {
    if (!ctx.shard.owns(ri)) continue;
    FlopCount unused;
    const std::vector<StepRow> rows = recipes[ri] == Recipe::fp32 ? ref : train(c, recipes[ri], unused);
    for (std::size_t s = 0; s < rows.size(); ++s)
      steps_table.add(
          ri, {kRecipeNames[static_cast<std::size_t>(recipes[ri])], static_cast<std::int64_t>(s), rows[s].loss,
               rows[s].loss / ref[s].loss, rows[s].underflow_frac, rows[s].scale, std::int64_t{rows[s].skipped}});
    ctx.progress.step();
  }

  const double tokens = static_cast<double>(c.b);
  const double params = static_cast<double>(c.d * c.d + c.d * c.kk);
  Table flops_table{
      "training_flops",
      "Matmul FLOPs issued per training step against the 2/4/6 * tokens * params rule",
      {{"pass", ""}, {"counted_flops", "FLOP"}, {"formula", ""}, {"formula_flops", "FLOP"}, {"ratio", ""}},
      {},
      {}};
  const struct {
    const char* pass;
    double counted;
    const char* formula;
    double factor;
  } flop_rows[] = {{"forward", per_step.forward, "2*tokens*params", 2},
                   {"backward", per_step.backward, "4*tokens*params", 4},
                   {"step", per_step.forward + per_step.backward, "6*tokens*params", 6}};
  for (std::size_t i = 0; i < std::size(flop_rows); ++i) {
    if (!ctx.shard.owns(i)) continue;
    const double formula = flop_rows[i].factor * tokens * params;
    flops_table.add(
        i, {flop_rows[i].pass, flop_rows[i].counted, flop_rows[i].formula, formula, flop_rows[i].counted / formula});
  }

  const std::string B = std::to_string(c.b), D = std::to_string(c.d), K = std::to_string(c.kk);
  steps_table.notes = {
      "Model (CS336 lecture 2): h1 = x w1, h2 = h1 w2, loss = mean(h2^2), B = " + B + ", D = " + D + ", K = " + K +
          "; a fresh N(0, 1) batch each step (seed " + std::to_string(c.seed) +
          "), plain SGD with lr = " + shortest(c.lr) +
          " on fp32 master weights (every recipe keeps them: the working copies are rounded "
          "from the master weights each step, and the update is done in fp32).",
      "Weights are N(0, 1) * init_scale / sqrt(D) with init_scale = " + shortest(c.init_scale) +
          ": h1 ~ init_scale, h2 ~ init_scale^2, g2 = 2 h2 / (B K) ~ 2 init_scale^2 / (B K) and g1 ~ g2 * "
          "init_scale * sqrt(K / D), so the gradients lie near fp16's smallest subnormal 2^-24 ~ 6e-8 and fp16 "
          "without loss scaling flushes a visible fraction of them to zero; lr is large because the loss is small "
          "(its curvature in w2 is about 2 init_scale^2 / K).",
      "grad_underflow_frac: of the values rounded into the gradient format in a step (g2, g1, dw2, dw1 for the "
      "16-bit recipes; the E5M2 quantizations of g2 and g1 for the fp8 ones, whose weight gradients stay fp32), "
      "the fraction nonzero before rounding (in the fp32 accumulator, after loss scaling) and zero after. For "
      "fp32 the gradients keep the accumulator's precision and range, and nothing flushes.",
      "loss_vs_fp32 is loss / loss of the fp32 recipe at the same step. bf16 and fp16 recipes: matmul operands "
      "and outputs (activations, gradients) in the 16-bit format, accumulation in fp32.",
      "Loss scaling (Micikevicius et al. 2017, Mixed Precision Training, section 3.2): g2 is multiplied by the "
      "scale and the weight gradients divided by it in fp32 before the update. fp16_static uses " +
          shortest(c.static_scale) + "; fp16_dynamic starts at " + shortest(c.dynamic_init) +
          (c.dynamic_init == 0x1p16 ? " (torch.amp.GradScaler's init_scale, 2^16)" : "") +
          ", halves and skips the step when a weight gradient is inf "
          "or NaN, and doubles after " +
          std::to_string(c.growth_interval) + " finite steps in a row" +
          (p.integer("growth_interval") == 0
               ? " (PyTorch's growth_interval, 2000, scaled to this run of " + std::to_string(c.steps) +
                     " steps: the scale may double " + std::to_string(kGrowths) + " times, as in a run of " +
                     std::to_string(kTorchGrowthInterval * kGrowths) + " steps under PyTorch's default)"
               : " (set by growth_interval)") +
          ". Any recipe skips a step with a non-finite gradient; skipped is 1 for such a step (marked in the "
          "report's loss plot).",
      "fp8_tensor: E4M3 batch, weights and activations and E5M2 gradients, one fp32 scale per tensor from its "
      "current amax (Transformer Engine's current scaling, kernels TensorScaling). fp8_mx: MXFP8, blocks of 32 "
      "along the contraction dimension with E8M0 scales (OCP MX v1.0), each layout of a tensor quantized "
      "separately; the block scale follows the " +
          p.text("mx_scale_rule") +
          " rule (floor: OCP MX v1.0 section 6.3, "
          "which saturates a block maximum in [448, 512) * 2^X to 448 * 2^X and so shrinks the largest values, a bias "
          "visible as a loss below fp32's; ceil: arXiv 2506.08027, which never saturates). Both accumulate in fp32 and "
          "use no loss scale (loss_scale 1): the per-tensor or per-block "
          "scale already moves the gradients into the format's range.",
  };
  flops_table.notes = {
      "Counted: 2 m n k for every matmul issued in one step (B = " + B + " tokens, params = D^2 + D K = " +
          shortest(params) + "). Forward: x w1 (2 B D^2) and h1 w2 (2 B D K), exactly 2 * tokens * params.",
      "Backward: dw2 = h1^T g2 and g1 = g2 w2^T (2 B D K each) and dw1 = x^T g1 (2 B D^2). The rule's 4 * tokens "
      "* params counts two matmuls per weight matrix, one for the weight gradient and one for the input "
      "gradient; the first layer's input gradient dx = g1 w1^T (2 B D^2) is not needed because x is data, so "
      "the backward is 4 B D K + 2 B D^2, ratio (2 K + D) / (2 K + 2 D) = " +
          shortest((2.0 * c.kk + c.d) / (2.0 * c.kk + 2.0 * c.d)) +
          " here. In a deep network that one skipped matmul is a small share and 6 * tokens * params holds.",
      "Elementwise work (the loss, g2 = 2 h2 / (B K), the SGD update) is O(B K + params), not counted.",
  };
  return {std::move(steps_table), std::move(flops_table)};
}

// The report's plots of this experiment's tables.
std::vector<Plot> drawn_plots(const std::vector<Table>& tables) {
  std::vector<Plot> plots;
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

// The report's headline figures from this experiment's tables.
void headline_figures(const std::vector<Table>& tables, Headlines& h) {
  h.add("fp16 training without loss scaling: gradient underflow at the last step",
      formatted(lookup(tables, "training_steps", {{"recipe", "fp16"}}, "grad_underflow_frac"), "{:.3g}"),
      "> 0: why loss scaling exists", "training_steps");
  h.add("fp16 with static loss scaling: gradient underflow at the last step",
      formatted(lookup(tables, "training_steps", {{"recipe", "fp16_static"}}, "grad_underflow_frac"), "{:.3g}"),
      "below unscaled fp16's", "training_steps");
  h.add("fp16 with dynamic loss scaling (GradScaler's defaults): underflow at the last step, final scale",
      fmt::format("{} at scale {}",
                  cell_text(formatted(lookup(tables, "training_steps", {{"recipe", "fp16_dynamic"}}, "grad_underflow_frac"),
                                 "{:.3g}")),
                  cell_text(formatted(lookup(tables, "training_steps", {{"recipe", "fp16_dynamic"}}, "loss_scale"), "{:.4g}"))),
      "near 0: the scale grows as the gradients shrink", "training_steps");
}

}  // namespace

Experiment training_experiment() {
  return {
      .name = "training",
      .summary = "SGD steps of the lecture's two-layer model under fp32/bf16/fp16/fp8 recipes, with loss scaling and FLOPs",
      .params = {
          {"recipes", ParamType::list, "fp32,bf16,fp16,fp16_static,fp16_dynamic,fp8_tensor,fp8_mx", 0, 0,
           "precision recipes to train", kRecipeNames},
          {"batch", ParamType::integer, "64", 1, 8192, "B: tokens per batch", {}},
          {"d", ParamType::integer, "128", 1, 4096, "D: width of x and h1", {}},
          {"k", ParamType::integer, "32", 1, 4096, "K: width of h2", {}},
          {"steps", ParamType::integer, "5", 1, 10000, "SGD steps", {}},
          {"lr", ParamType::real, "1000", 0, 1e12, "SGD learning rate (large: the loss is small, see notes)", {}},
          {"init_scale",
           ParamType::real,
           "0.0625",
           0x1p-20,
           1e3,
           "weights are N(0,1) * init_scale / sqrt(D); 0.0625 = 2^-4",
           {}},
          {"static_scale", ParamType::real, "1024", 0x1p-20, 0x1p100, "fp16_static: the loss scale (2^10)", {}},
          {"dynamic_init",
           ParamType::real,
           "65536",
           0x1p-20,
           0x1p100,
           "fp16_dynamic: the initial loss scale (2^16, PyTorch's GradScaler)",
           {}},
          {"growth_interval",
           ParamType::integer,
           "0",
           0,
           1000000,
           "fp16_dynamic: finite steps in a row before the scale doubles; 0: PyTorch's 2000 scaled to the run, "
           "ceil(steps / 10)",
           {}},
          {"mx_scale_rule",
           ParamType::text,
           "floor",
           0,
           0,
           "fp8_mx: block scale rule, floor (OCP MX v1.0), ceil (arXiv 2506.08027), rceil (cuBLAS, Transformer "
           "Engine), even or ceil_amax (torchao's EVEN, CEIL): docs/recipes.md",
           {"floor", "ceil", "rceil", "even", "ceil_amax"}},
          {"seed", ParamType::integer, "1", 0, 9007199254740992.0 /* 2^53 */, "seed of weights and batches", {}},
      },
      // Long enough for the gradients to shrink by about 2^8 (the loss by
      // 10^5), so that unscaled and statically scaled fp16 lose them to
      // underflow while the dynamic scale grows; every recipe at PyTorch's
      // defaults (1.5 s on a Zen 5 core).
      .report_params = {{"steps", "200"}},
      .run = run,
      .quick_params = {{"steps", "2"}, {"batch", "32"}, {"d", "32"}, {"k", "32"}},
      .place = 50,
      .plots = drawn_plots,
      .headlines = headline_figures,
      .regression = {.pinned = true,
                     // Its fp32 GEMMs (Eigen, per target): 3e-8 measured.
                     .tolerance = [](std::string_view, const std::vector<std::string>&) { return 1e-6; }},
  };
}

}  // namespace lplab::experiments
