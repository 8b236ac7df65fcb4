// matmul_error: the table against plain loops written here (the fp16 and bf16
// accumulators in order, the exact sum in long double), the error bounds of
// each accumulator, and DeepSeek-V3's finding (arXiv 2412.19437, 3.3.2): FP8
// tensor-core accumulation loses about 2% at k = 4096, promotion every 128
// products removes it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/kernels/random.h"
#include "support/samples.h"

namespace lplab::experiments {
namespace {

std::vector<Table> run_with(const std::map<std::string, std::string>& given, std::vector<std::string> dtypes,
                            Shard shard = {}) {
  const Experiment* e = find_experiment("matmul_error");
  EXPECT_NE(e, nullptr);
  Params p(e->params, given, e->name);
  Progress prog;
  std::vector<const FormatEntry*> d;
  for (const std::string& s : dtypes) d.push_back(find_format(s));
  Context ctx{p, d, {}, "", shard, prog, 1};
  return e->run(ctx);
}

double num(const Table& t, const Row& r, const char* col) { return cell_number(r.cells[t.column(col)]); }
std::string text(const Table& t, const Row& r, const char* col) {
  return std::get<std::string>(r.cells[t.column(col)]);
}

// The operand samples, as the experiment documents them: Box-Muller on two
// splitmix64 outputs keyed by (seed, stream), streams 2k (A) and 2k + 1 (B).
double sample(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  return lplab::testing::documented_gaussian(seed, stream, i);
}

TEST(MatmulError, columns_and_one_row_per_grid_point) {
  const auto tables = run_with({{"ks", "64,96"}, {"m", "2"}, {"n", "3"}, {"distributions", "normal,half_normal"}},
                               {"float8_e4m3fn", "float16"});
  ASSERT_EQ(tables.size(), 1u);
  const Table& t = tables[0];
  EXPECT_EQ(t.id, "matmul_error");
  const std::vector<std::string> names = {
      "distribution", "input",       "accumulator",  "promote_every", "tc_fraction_bits", "k",
      "rel_err_mean", "rel_err_max", "rel_err_norm", "err_vs_abs_max"};
  ASSERT_EQ(t.columns.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(t.columns[i].name, names[i]);
  // 2 distributions x 2 inputs x 2 k x 5 accumulators, in grid order.
  ASSERT_EQ(t.rows.size(), 40u);
  for (std::size_t i = 0; i < t.rows.size(); ++i) EXPECT_EQ(t.rows[i].grid, i);
  // Row 5 + 3: normal, E4M3, k = 96, the fourth accumulator (tensor_core
  // without promotion), F = 13; row 20 + 10 + 0 + 4: half_normal, fp16,
  // k = 64, the promoted tensor core, F = 25.
  EXPECT_EQ(text(t, t.rows[8], "accumulator"), "tensor_core");
  EXPECT_EQ(num(t, t.rows[8], "promote_every"), 0);
  EXPECT_EQ(num(t, t.rows[8], "tc_fraction_bits"), 13);
  EXPECT_EQ(num(t, t.rows[8], "k"), 96);
  EXPECT_EQ(text(t, t.rows[34], "distribution"), "half_normal");
  EXPECT_EQ(text(t, t.rows[34], "input"), "float16");
  EXPECT_EQ(num(t, t.rows[34], "promote_every"), 128);
  EXPECT_EQ(num(t, t.rows[34], "tc_fraction_bits"), 25);
  EXPECT_EQ(num(t, t.rows[34], "k"), 64);
}

// The fp16 and bf16 accumulators of the table against a loop written here:
// products exact in double, every addition rounded into the accumulator
// format in order; the reference sum exact in long double (64-bit
// significand: fp16 products of these samples span fewer bits).
TEST(MatmulError, narrow_accumulators_match_a_plain_loop) {
  const std::size_t m = 3, n = 2, k = 100;
  const auto tables =
      run_with({{"ks", "100"}, {"m", "3"}, {"n", "2"}, {"distributions", "half_normal"}, {"seed", "7"}}, {"float16"});
  const Table& t = tables[0];
  std::vector<double> a(m * k), b(k * n);
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<double>(convert<float16>(std::abs(sample(7, 2 * k, i)), Round::nearest_even, Overflow::ieee));
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] =
        static_cast<double>(convert<float16>(std::abs(sample(7, 2 * k + 1, i)), Round::nearest_even, Overflow::ieee));
  for (const char* acc : {"fp16", "bf16"}) {
    double mean = 0, max = 0, d2 = 0, r2 = 0;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        long double exact = 0;
        double s = 0;
        for (std::size_t p = 0; p < k; ++p) {
          const double prod = a[i * k + p] * b[p * n + j];
          exact += static_cast<long double>(prod);
          s = std::string(acc) == "fp16"
                  ? static_cast<double>(convert<float16>(s + prod, Round::nearest_even, Overflow::ieee))
                  : static_cast<double>(convert<bfloat16>(s + prod, Round::nearest_even, Overflow::ieee));
        }
        const double ref = static_cast<double>(exact);
        const double e = std::abs(s - ref);
        mean += e / ref / (m * n);
        max = std::max(max, e / ref);
        d2 += e * e;
        r2 += ref * ref;
      }
    bool found = false;
    for (const Row& r : t.rows)
      if (text(t, r, "accumulator") == acc) {
        found = true;
        EXPECT_NEAR(num(t, r, "rel_err_mean"), mean, 1e-12 * mean) << acc;
        EXPECT_NEAR(num(t, r, "rel_err_max"), max, 1e-12 * max) << acc;
        EXPECT_NEAR(num(t, r, "rel_err_norm"), std::sqrt(d2 / r2), 1e-12 * max) << acc;
        EXPECT_GT(max, 0) << acc;
      }
    EXPECT_TRUE(found) << acc;
  }
}

// |c - ref| <= gamma_k * sum |a b|, gamma_k = k u / (1 - k u), for the
// accumulators that round each addition to nearest (Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., section 3.1), wherever k u < 1.
TEST(MatmulError, rounding_accumulators_within_gamma_k) {
  const auto tables = run_with({{"ks", "64,1024,4096"}, {"m", "4"}, {"n", "4"}}, {"bfloat16", "float8_e5m2"});
  const Table& t = tables[0];
  const std::map<std::string, double> unit = {{"fp32", 0x1p-24}, {"fp16", 0x1p-11}, {"bf16", 0x1p-8}};
  int checked = 0;
  for (const Row& r : t.rows) {
    const auto u = unit.find(text(t, r, "accumulator"));
    if (u == unit.end()) continue;
    const double ku = num(t, r, "k") * u->second;
    if (ku >= 1) continue;
    EXPECT_LE(num(t, r, "err_vs_abs_max"), ku / (1 - ku)) << u->first << " k = " << num(t, r, "k");
    ++checked;
  }
  // Two distributions x two inputs x (fp32 at every k, fp16 at k = 64 and
  // 1024, bf16 at k = 64).
  EXPECT_EQ(checked, 2 * 2 * (3 + 2 + 1));
}

// DeepSeek-V3: "nearly 2%" maximum relative error at K = 4096 for FP8
// tensor-core accumulation, removed by promoting every 128 products into fp32.
// With all-positive inputs every product is truncated the same way and the
// model loses 6.6-7.3% (docs/tensor-core-model.md); at least the 2% of the
// paper, and promotion brings it below 0.1%.
TEST(MatmulError, fp8_accumulation_loss_at_k4096_removed_by_promotion) {
  const auto tables =
      run_with({{"ks", "256,1024,4096"}, {"m", "4"}, {"n", "4"}, {"distributions", "half_normal"}}, {"float8_e4m3fn"});
  const Table& t = tables[0];
  std::vector<double> plain, promoted;
  for (const Row& r : t.rows) {
    if (text(t, r, "accumulator") != "tensor_core") continue;
    (num(t, r, "promote_every") == 0 ? plain : promoted).push_back(num(t, r, "rel_err_max"));
  }
  ASSERT_EQ(plain.size(), 3u);
  ASSERT_EQ(promoted.size(), 3u);
  EXPECT_GT(plain[2], 0.02);
  EXPECT_LT(plain[2], 0.10);
  EXPECT_LT(promoted[2], 0.001);
  // Without promotion the error grows with k (the accumulator's grid
  // coarsens as the sum grows); with it, it stays flat.
  EXPECT_LT(plain[0], plain[1]);
  EXPECT_LT(plain[1], plain[2]);
  EXPECT_LT(promoted[2], 2 * promoted[1]);
}

TEST(MatmulError, shards_partition_the_rows) {
  const std::map<std::string, std::string> given = {{"ks", "64,128,320"}, {"m", "2"}, {"n", "2"}};
  const Table whole = run_with(given, {"float8_e5m2"})[0];
  std::map<std::uint64_t, std::vector<Cell>> joined;
  for (std::uint32_t s = 0; s < 3; ++s) {
    const Table part = run_with(given, {"float8_e5m2"}, Shard{s, 3})[0];
    for (const Row& r : part.rows) {
      EXPECT_EQ(r.grid % 3, s);
      EXPECT_TRUE(joined.emplace(r.grid, r.cells).second);
    }
  }
  ASSERT_EQ(joined.size(), whole.rows.size());
  for (const Row& r : whole.rows) EXPECT_EQ(joined.at(r.grid), r.cells);
}

TEST(MatmulError, impossible_settings_are_usage_errors) {
  // A promotion interval holds whole blocks of the input's: 16 products for
  // float16, 32 for E4M3 (the kernels' rule, once restated here as "32").
  EXPECT_NO_THROW(run_with({{"ks", "64"}, {"promote_every", "48"}}, {"float16"}));
  EXPECT_THROW(run_with({{"ks", "64"}, {"promote_every", "48"}}, {"float8_e4m3fn"}), UsageError);
  EXPECT_THROW(run_with({{"ks", "64"}}, {"float32"}), UsageError);
  EXPECT_THROW(run_with({{"ks", "64.5"}}, {"float16"}), UsageError);
  EXPECT_THROW(run_with({{"ks", "1048576"}, {"m", "4096"}}, {"float16"}), UsageError);
}

}  // namespace
}  // namespace lplab::experiments
