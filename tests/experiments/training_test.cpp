// training: the FLOP counts by hand, the fp32 run against a double-precision
// re-derivation written here (forward, gradients by the chain rule in another
// association order, SGD), the underflow that loss scaling is for, and the
// dynamic loss scaler's rules (Micikevicius et al. 2017; PyTorch GradScaler).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/kernels/random.h"
#include "support/samples.h"

namespace lplab::experiments {
namespace {

std::vector<Table> run_with(const std::map<std::string, std::string>& given, Shard shard = {}) {
  const Experiment* e = find_experiment("training");
  EXPECT_NE(e, nullptr);
  Params p(e->params, given, e->name);
  Progress prog;
  Context ctx{p, {}, {}, "", shard, prog, 1};
  return e->run(ctx);
}

double num(const Table& t, const Row& r, const char* col) { return cell_number(r.cells[t.column(col)]); }
std::string text(const Table& t, const Row& r, const char* col) {
  return std::get<std::string>(r.cells[t.column(col)]);
}

// The rows of one recipe, in step order.
std::vector<const Row*> recipe_rows(const Table& t, const std::string& recipe) {
  std::vector<const Row*> rows;
  for (const Row& r : t.rows)
    if (text(t, r, "recipe") == recipe) rows.push_back(&r);
  return rows;
}

// The experiment's documented generator: Box-Muller on splitmix64, keyed by
// (seed, stream); streams 1 and 2 are w1 and w2, 16 + s the batch of step s.
double sample(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  return lplab::testing::documented_gaussian(seed, stream, i);
}

TEST(Training, flops_counted_against_six_tokens_params) {
  // B = 32, D = 64, K = 32: params = 64^2 + 64 * 32 = 6144.
  const auto tables = run_with({{"recipes", "fp32"}, {"batch", "32"}, {"d", "64"}, {"k", "32"}, {"steps", "2"}});
  ASSERT_EQ(tables.size(), 2u);
  const Table& f = tables[1];
  EXPECT_EQ(f.id, "training_flops");
  ASSERT_EQ(f.rows.size(), 3u);
  // forward: 2*32*64*64 + 2*32*64*32 = 262144 + 131072 = 393216 = 2 * 32 * 6144.
  EXPECT_EQ(text(f, f.rows[0], "pass"), "forward");
  EXPECT_EQ(num(f, f.rows[0], "counted_flops"), 393216);
  EXPECT_EQ(num(f, f.rows[0], "formula_flops"), 393216);
  EXPECT_EQ(num(f, f.rows[0], "ratio"), 1);
  // backward: dw2 and g1 2*32*64*32 = 131072 each, dw1 2*32*64*64 = 262144:
  // 524288, against 4 * 32 * 6144 = 786432; ratio (2K + D) / (2K + 2D) = 2/3.
  EXPECT_EQ(text(f, f.rows[1], "pass"), "backward");
  EXPECT_EQ(num(f, f.rows[1], "counted_flops"), 524288);
  EXPECT_EQ(num(f, f.rows[1], "formula_flops"), 786432);
  EXPECT_DOUBLE_EQ(num(f, f.rows[1], "ratio"), 2.0 / 3.0);
  // step: 917504 against 6 * 32 * 6144 = 1179648.
  EXPECT_EQ(num(f, f.rows[2], "counted_flops"), 917504);
  EXPECT_EQ(num(f, f.rows[2], "formula_flops"), 1179648);
  EXPECT_EQ(text(f, f.rows[2], "formula"), "6*tokens*params");
}

// The fp32 recipe against the model trained here in double, with the
// gradients associated differently (through G = x^T g2: dw1 = G w2^T,
// dw2 = w1^T G), so a transposed or misplaced operand in the experiment shows.
// lr 10 against a curvature in w2 of about 2 init^2 / K = 1/32: stable.
TEST(Training, fp32_run_matches_double_precision_sgd) {
  const std::size_t B = 8, D = 12, K = 4, steps = 3;
  const double lr = 10, init = 0.25;
  const auto tables = run_with({{"recipes", "fp32"},
                                {"batch", "8"},
                                {"d", "12"},
                                {"k", "4"},
                                {"steps", "3"},
                                {"lr", "10"},
                                {"init_scale", "0.25"},
                                {"seed", "5"}});
  const auto rows = recipe_rows(tables[0], "fp32");
  ASSERT_EQ(rows.size(), steps);
  std::vector<double> w1(D * D), w2(D * K);
  for (std::size_t i = 0; i < w1.size(); ++i) w1[i] = static_cast<float>(init / std::sqrt(D) * sample(5, 1, i));
  for (std::size_t i = 0; i < w2.size(); ++i) w2[i] = static_cast<float>(init / std::sqrt(D) * sample(5, 2, i));
  for (std::size_t s = 0; s < steps; ++s) {
    std::vector<double> x(B * D);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(sample(5, 16 + s, i));
    // w = w1 w2 (D x K); h2 = x w; loss = sum h2^2 / (B K).
    std::vector<double> w(D * K, 0.0), h2(B * K, 0.0);
    for (std::size_t i = 0; i < D; ++i)
      for (std::size_t j = 0; j < K; ++j)
        for (std::size_t t = 0; t < D; ++t) w[i * K + j] += w1[i * D + t] * w2[t * K + j];
    double loss = 0;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = 0; j < K; ++j) {
        for (std::size_t t = 0; t < D; ++t) h2[b * K + j] += x[b * D + t] * w[t * K + j];
        loss += h2[b * K + j] * h2[b * K + j] / (B * K);
      }
    EXPECT_NEAR(num(tables[0], *rows[s], "loss"), loss, 1e-5 * loss) << "step " << s;
    // G = dloss/dw = x^T g2 (D x K) with g2 = 2 h2 / (B K); then
    // dloss/dw1 = G w2^T and dloss/dw2 = w1^T G.
    std::vector<double> G(D * K, 0.0), d1(D * D, 0.0), d2(D * K, 0.0);
    for (std::size_t t = 0; t < D; ++t)
      for (std::size_t j = 0; j < K; ++j)
        for (std::size_t b = 0; b < B; ++b) G[t * K + j] += x[b * D + t] * 2 * h2[b * K + j] / (B * K);
    for (std::size_t i = 0; i < D; ++i)
      for (std::size_t t = 0; t < D; ++t)
        for (std::size_t j = 0; j < K; ++j) d1[i * D + t] += G[i * K + j] * w2[t * K + j];
    for (std::size_t t = 0; t < D; ++t)
      for (std::size_t j = 0; j < K; ++j)
        for (std::size_t i = 0; i < D; ++i) d2[t * K + j] += w1[i * D + t] * G[i * K + j];
    for (std::size_t i = 0; i < w1.size(); ++i) w1[i] -= lr * d1[i];
    for (std::size_t i = 0; i < w2.size(); ++i) w2[i] -= lr * d2[i];
  }
  // The run must actually learn (otherwise the comparison above is weak).
  EXPECT_LT(num(tables[0], *rows[2], "loss"), 0.9 * num(tables[0], *rows[0], "loss"));
  for (const Row* r : rows) {
    EXPECT_EQ(num(tables[0], *r, "loss_vs_fp32"), 1);
    EXPECT_EQ(num(tables[0], *r, "grad_underflow_frac"), 0);
  }
}

// fp16 without loss scaling flushes a visible share of the small gradients
// to zero; a static scale of 2^10 recovers almost all of them; bf16 has fp32's
// exponent range and per-tensor or per-block scaled FP8 moves the gradients
// into E5M2's range, so neither flushes any here.
TEST(Training, loss_scaling_removes_fp16_gradient_underflow) {
  const auto tables = run_with({{"steps", "3"}});
  const Table& t = tables[0];
  for (const char* r : {"fp32", "bf16", "fp16", "fp16_static", "fp16_dynamic", "fp8_tensor", "fp8_mx"})
    ASSERT_EQ(recipe_rows(t, r).size(), 3u) << r;
  for (std::size_t s = 0; s < 3; ++s) {
    const double plain = num(t, *recipe_rows(t, "fp16")[s], "grad_underflow_frac");
    const double scaled = num(t, *recipe_rows(t, "fp16_static")[s], "grad_underflow_frac");
    EXPECT_GT(plain, 0.03) << s;
    EXPECT_LT(scaled, plain / 20) << s;
    EXPECT_EQ(num(t, *recipe_rows(t, "fp16_static")[s], "loss_scale"), 1024);
    for (const char* r : {"bf16", "fp8_tensor", "fp8_mx"})
      EXPECT_EQ(num(t, *recipe_rows(t, r)[s], "grad_underflow_frac"), 0) << r << " step " << s;
  }
  // Step 0 sees the same weights in every recipe: the losses differ only by
  // the forward's rounding (fp16 and bf16 operands: well under 1%).
  for (const char* r : {"bf16", "fp16", "fp16_static"})
    EXPECT_NEAR(num(t, *recipe_rows(t, r)[0], "loss_vs_fp32"), 1, 0.01) << r;
}

// Dynamic scaling: an overflowing scale skips the step and halves; after
// growth_interval finite steps in a row the scale doubles (GradScaler).
TEST(Training, dynamic_loss_scale_halves_on_overflow_and_grows) {
  const auto tables =
      run_with({{"recipes", "fp32,fp16_dynamic"}, {"steps", "8"}, {"dynamic_init", "1e10"}, {"growth_interval", "2"}});
  const auto rows = recipe_rows(tables[0], "fp16_dynamic");
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(num(tables[0], *rows[0], "loss_scale"), 1e10);
  int skipped = 0, good_in_a_row = 0;
  for (std::size_t s = 0; s + 1 < rows.size(); ++s) {
    const double scale = num(tables[0], *rows[s], "loss_scale");
    const double next = num(tables[0], *rows[s + 1], "loss_scale");
    if (num(tables[0], *rows[s], "skipped") == 1) {
      ++skipped;
      good_in_a_row = 0;
      EXPECT_EQ(next, scale / 2) << s;
    } else if (++good_in_a_row == 2) {
      good_in_a_row = 0;
      EXPECT_EQ(next, scale * 2) << s;
    } else {
      EXPECT_EQ(next, scale) << s;
    }
  }
  // 1e10 * g2 overflows fp16 (g2 ~ 2^-18 here, fp16's largest value 65504):
  // the first step is skipped, and the halved scale is eventually finite.
  EXPECT_EQ(num(tables[0], *rows[0], "skipped"), 1);
  EXPECT_GE(skipped, 1);
  EXPECT_EQ(num(tables[0], *rows[7], "skipped"), 0);
  // A skipped step leaves the weights alone: the loss is not lowered.
  EXPECT_GT(num(tables[0], *rows[1], "loss_vs_fp32"), 1.1);
}

// The report runs every recipe at its best: PyTorch GradScaler's init scale
// (2^16) and its growth interval (2000) scaled to the run (ceil(steps / 10)),
// over a run long enough for the gradients to shrink into fp16's subnormals.
// (Values of a report-length run, which the release build decides; the code
// it runs is the tests' above, which the sanitizer build runs too: left out
// there, where it took 21 s of the quick suite.)
#if !defined(LPLAB_SANITIZED)
TEST(Training, report_run_uses_gradscaler_defaults) {
  const Experiment* e = find_experiment("training");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->report_params.count("dynamic_init"), 0u);
  EXPECT_EQ(e->report_params.count("growth_interval"), 0u);
  ASSERT_EQ(e->report_params.count("steps"), 1u);
  const std::int64_t steps = std::stoll(e->report_params.at("steps"));
  EXPECT_GE(steps, 100);
  auto given = e->report_params;
  given["recipes"] = "fp32,fp16,fp16_static,fp16_dynamic";
  const Table t = run_with(given)[0];
  const auto dyn = recipe_rows(t, "fp16_dynamic"), plain = recipe_rows(t, "fp16");
  ASSERT_EQ(dyn.size(), static_cast<std::size_t>(steps));
  EXPECT_EQ(num(t, *dyn[0], "loss_scale"), 65536.0);
  const std::int64_t interval = (steps + 9) / 10;
  // No step overflows at these scales, so the scale doubles every `interval`
  // steps exactly: 2^16 * 2^floor(s / interval) at step s.
  for (std::int64_t s = 0; s < steps; ++s) {
    EXPECT_EQ(num(t, *dyn[s], "skipped"), 0) << s;
    EXPECT_EQ(num(t, *dyn[s], "loss_scale"), std::ldexp(65536.0, static_cast<int>(s / interval))) << s;
  }
  // Unscaled fp16 flushes a growing share of its gradients as the loss falls;
  // the growing dynamic scale keeps every one of them.
  EXPECT_GT(num(t, *plain.back(), "grad_underflow_frac"), 0.1);
  EXPECT_GT(num(t, *plain.back(), "grad_underflow_frac"), num(t, *plain.front(), "grad_underflow_frac"));
  EXPECT_EQ(num(t, *dyn.back(), "grad_underflow_frac"), 0);
  EXPECT_LT(std::abs(num(t, *dyn.back(), "loss_vs_fp32") - 1), 0.05);
}
#endif

// growth_interval = 0 means ceil(steps / 10); a positive value is used as is.
TEST(Training, growth_interval_scales_with_the_run) {
  for (const auto& [steps, interval, expected_doublings] :
       {std::tuple{"25", "0", 8}, std::tuple{"25", "5", 4}, std::tuple{"7", "0", 6}}) {
    const Table t = run_with({{"recipes", "fp32,fp16_dynamic"}, {"steps", steps}, {"growth_interval", interval}})[0];
    const auto dyn = recipe_rows(t, "fp16_dynamic");
    EXPECT_EQ(num(t, *dyn.back(), "loss_scale"), std::ldexp(65536.0, expected_doublings)) << steps << " " << interval;
  }
}

TEST(Training, shards_split_by_recipe) {
  const std::map<std::string, std::string> given = {{"steps", "2"}, {"batch", "32"}, {"d", "32"}, {"k", "32"}};
  const Table whole = run_with(given)[0];
  std::vector<Row> joined;
  for (std::uint32_t s = 0; s < 2; ++s) {
    const Table part = run_with(given, Shard{s, 2})[0];
    for (const Row& r : part.rows) {
      EXPECT_EQ(r.grid % 2, s);
      joined.push_back(r);
    }
  }
  ASSERT_EQ(joined.size(), whole.rows.size());
  for (const Row& r : whole.rows) {
    bool found = false;
    for (const Row& j : joined) found = found || (j.grid == r.grid && j.cells == r.cells);
    EXPECT_TRUE(found) << r.grid;
  }
}

TEST(Training, mx_recipe_needs_whole_blocks) {
  EXPECT_THROW(run_with({{"recipes", "fp8_mx"}, {"batch", "48"}}), UsageError);
  EXPECT_NO_THROW(run_with({{"recipes", "fp16"}, {"batch", "48"}, {"steps", "1"}}));
}

}  // namespace
}  // namespace lplab::experiments
