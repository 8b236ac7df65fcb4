// Named recipes as rows of the scheme tables (experiments/recipe_rows.h):
// which treatments a recipe's operands get, and each treatment's round trip
// against the kernels called directly -- and, for TE's power-of-two fp32
// blocks, against TE's formula written here.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "lplab/experiments/scaled.h"
#include "lplab/kernels/four_over_six.h"
#include "lplab/kernels/hadamard.h"
#include "lplab/kernels/scaling.h"

namespace lplab::experiments::scaled {
namespace {

namespace k = lplab::kernels;

std::vector<float> sample(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = d(rng) * (rng() % 100 == 0 ? 50.0f : 1.0f);
  return x;
}

std::vector<std::string> names(const std::vector<RecipeRow>& rows) {
  std::vector<std::string> v;
  for (const RecipeRow& r : rows) v.push_back(r.name);
  return v;
}

void expect_same(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(b[i])) << what << ", value " << i;
}

TEST(RecipeRows, each_distinct_treatment_is_one_row_named_by_its_uses) {
  EXPECT_EQ(names(recipe_rows("nvfp4_training")),
            (std::vector<std::string>{"nvfp4_training/fprop.a", "nvfp4_training/fprop.b+dgrad.b",
                                      "nvfp4_training/dgrad.a", "nvfp4_training/wgrad.a", "nvfp4_training/wgrad.b"}));
  EXPECT_EQ(names(recipe_rows("fp8_delayed")),
            (std::vector<std::string>{"fp8_delayed/fprop.a+fprop.b+dgrad.b+wgrad.b", "fp8_delayed/dgrad.a+wgrad.a"}));
  EXPECT_EQ(names(recipe_rows("mxfp8")),
            (std::vector<std::string>{"mxfp8/fprop.a+fprop.b+dgrad.a+dgrad.b+wgrad.a+wgrad.b"}));
  EXPECT_TRUE(recipe_rows("mxfp4").empty());  // a scheme, not a recipe
  // Every recipe's rows run.
  for (const k::Recipe& r : k::recipes())
    for (const RecipeRow& row : recipe_rows(r.name)) {
      EXPECT_EQ(row.not_run, "") << row.name;
      const auto x = sample(4096 + 512, 2);
      const RoundTrip t = round_trip(row.name, x, kSampleRow);
      ASSERT_EQ(t.y.size(), x.size()) << row.name;
      double err = 0, sig = 0;
      for (std::size_t i = 0; i < x.size(); ++i)
        err += (t.y[i] - x[i]) * (t.y[i] - x[i]), sig += static_cast<double>(x[i]) * x[i];
      // Every treatment keeps N(0, 1) data within 25% RMS (FP4 blocks about 10%); fp32 exactly.
      EXPECT_LT(std::sqrt(err / sig), r.name == std::string_view("fp32") ? 1e-30 : 0.25) << row.name;
    }
  std::vector<std::string> not_run;
  const auto rows = expand({"mxfp4", "nvfp4_4over6", "mxfp4"}, &not_run);
  EXPECT_EQ(rows.front(), "mxfp4");
  EXPECT_EQ(rows.size(), 1 + 5u);  // mxfp4 once, and 4over6's five treatments
  EXPECT_TRUE(not_run.empty());
  // A treatment lplab cannot run says why, and runs nothing.
  RecipeRow odd = recipe_rows("nvfp4_4over6")[1];
  odd.operand.block = {2, 16};
  odd.not_run = "Four Over Six on 2x16 blocks";
  try {
    recipe_round_trip(odd, sample(64, 1), 32);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nvfp4_4over6/fprop.b+dgrad.b: not run: Four Over Six on 2x16 blocks"),
              std::string::npos)
        << e.what();
  }
}

// Four Over Six on NVFP4 training's 16 x 16 weights: TE's 2D variant.
TEST(RecipeRows, four_over_six_weights_take_16x16_blocks) {
  const std::size_t cols = kSampleRow;
  const auto x = sample(32 * cols, 5);
  const k::FourOverSix p{.metric = k::FourOverSixMetric::mae, .e4m3_max = 256.0f, .order = k::FourOverSixOrder::te};
  std::vector<float4_e2m1fn> q(x.size());
  std::vector<float8_e4m3fn> sc(2 * cols / 16);
  float amax = 0;
  k::quantize_four_over_six(p, x, cols, 16, q, sc, &amax);
  std::vector<float> y(x.size());
  k::dequantize_four_over_six(p, q, cols, 16, sc, amax, y);
  expect_same(round_trip("nvfp4_4over6/fprop.b+dgrad.b", x, cols).y, y, "4over6 16x16");
}

// Each row is the kernel its operand names, on rows of 1024.
TEST(RecipeRows, rows_run_the_kernels_their_operands_name) {
  const std::size_t cols = kSampleRow;
  const auto x = sample(16 * cols + 100, 3);
  // NVFP4 in TE's order, 1 x 16 and 16 x 16.
  expect_same(round_trip("nvfp4_training/fprop.a", x, cols).y,
              detail::round_trip(k::BlockScaling<float4_e2m1fn, float8_e4m3fn>{
                                     .block_size = 16, .rule = k::ScaleRule::amax_ratio_te, .tensor_scale = true},
                                 x, cols)
                  .y,
              "nvfp4 1x16");
  expect_same(round_trip("nvfp4_training/fprop.b+dgrad.b", x, cols).y, round_trip("nvfp4_te_2d", x, cols).y,
              "nvfp4 16x16");
  // Gradients: cvt.rs with Philox seed 0.
  {
    std::vector<float4_e2m1fn> q(x.size());
    std::vector<float8_e4m3fn> sc(k::scales_needed(k::nvfp4_te, x.size(), cols));
    float ts = 0;
    k::quantize_stochastic(k::nvfp4_te, std::span<const float>(x), cols, std::span(q), std::span(sc), {}, &ts);
    std::vector<float> y(x.size());
    k::dequantize(k::nvfp4_te, std::span<const float4_e2m1fn>(q), cols, std::span<const float8_e4m3fn>(sc),
                  std::span(y), ts);
    expect_same(round_trip("nvfp4_training/dgrad.a", x, cols).y, y, "nvfp4 stochastic");
  }
  // wgrad's X: Hadamard (bf16 output), NVFP4 to nearest, back in float32.
  {
    std::vector<float> h(16 * cols + cols, 0.0f);
    std::copy(x.begin(), x.end(), h.begin());
    k::hadamard_rows(h.data(), 17, cols, h.data());
    const RoundTrip q = detail::round_trip(k::nvfp4_te, std::span<const float>(h).first(x.size()), cols);
    std::vector<float> back(17 * cols, 0.0f);
    std::copy(q.y.begin(), q.y.end(), back.begin());
    k::hadamard_rows(back.data(), 17, cols, back.data(), k::kTeHadamardSigns, k::HadamardOutput::float32, true);
    back.resize(x.size());
    expect_same(round_trip("nvfp4_training/wgrad.b", x, cols).y, back, "hadamard");
  }
  // MXFP8: E4M3 x E8M0, 1 x 32, rceil.
  expect_same(round_trip("mxfp8/fprop.a+fprop.b+dgrad.a+dgrad.b+wgrad.a+wgrad.b", x, cols).y,
              detail::round_trip(k::BlockScaling<float8_e4m3fn, float8_e8m0fnu>{.rule = k::ScaleRule::rceil}, x, cols).y,
              "mxfp8");
  // DeepSeek-V3's 1 x 128 tiles.
  expect_same(round_trip("fp8_deepseek_v3/fprop.a+dgrad.a+wgrad.a+wgrad.b", x, cols).y,
              round_trip("deepseek_1x128", x, cols).y, "deepseek");
  // Casts: bf16 to nearest.
  {
    const RoundTrip c = round_trip("bf16_amp/fprop.a+fprop.b+dgrad.a+dgrad.b+wgrad.a+wgrad.b", x, cols);
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(c.y[i], static_cast<float>(bfloat16(x[i]))) << i;
  }
}

// TE's Float8BlockScaling with power-of-two scales, written from TE's
// formula: scale = 448 / amax in float32 with its mantissa cleared (a power
// of two at most 448 / amax), elements E4M3(x * scale), values elem / scale;
// and E8M0 scales under ceil give the same values (docs/recipes.md) on every
// 128 x 128 block of data with block amaxes from 2^-100 to 2^100.
TEST(RecipeRows, te_power_of_two_blocks_follow_te_s_formula) {
  const std::size_t cols = 256, rows = 256;
  std::mt19937 rng(4);
  std::vector<float> x(rows * cols);
  std::vector<int> e(4);
  for (auto& v : e) v = std::uniform_int_distribution<int>(-100, 100)(rng);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = std::ldexp(std::normal_distribution<float>(0.0f, 1.0f)(rng), e[((i / cols) / 128) * 2 + (i % cols) / 128]);
  const RoundTrip t = round_trip("fp8_blockwise/fprop.b+dgrad.b", x, cols);
  expect_same(t.y,
              detail::round_trip(k::BlockScaling<float8_e4m3fn, float8_e8m0fnu>{
                                     .block_size = 128, .block_rows = 128, .rule = k::ScaleRule::ceil},
                                 x, cols)
                  .y,
              "E8M0 ceil");
  for (std::size_t R = 0; R < 2; ++R)
    for (std::size_t C = 0; C < 2; ++C) {
      float amax = 0;
      for (std::size_t i = R * 128; i < R * 128 + 128; ++i)
        for (std::size_t j = C * 128; j < C * 128 + 128; ++j) amax = std::max(amax, std::fabs(x[i * cols + j]));
      const float q = 448.0f / amax;
      const float scale = std::bit_cast<float>(std::bit_cast<std::uint32_t>(q) & 0xFF800000u);
      for (std::size_t i = R * 128; i < R * 128 + 128; ++i)
        for (std::size_t j = C * 128; j < C * 128 + 128; ++j) {
          const float elem = static_cast<float>(
              lplab::convert<float8_e4m3fn>(x[i * cols + j] * scale, Round::nearest_even, Overflow::saturate));
          ASSERT_EQ(t.y[i * cols + j], elem / scale) << "block (" << R << ", " << C << "), [" << i << "][" << j << "]";
        }
    }
}

}  // namespace
}  // namespace lplab::experiments::scaled
