// The error experiment against hand-computed roundings, the ULP bounds of
// each rounding mode, torchao's SQNR threshold and the lecture's 1.41.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lplab/lab/experiment.h"
#include "lplab/kernels/elementwise.h"

namespace lplab::experiments {
namespace {

std::vector<Table> run_error(const std::map<std::string, std::string>& given,
                             const std::vector<std::string>& dtypes, std::span<const double> input = {}) {
  const Experiment* e = find_experiment("error");
  EXPECT_NE(e, nullptr);
  Params p(e->params, given, e->name);
  Progress prog;
  std::vector<const FormatEntry*> f;
  for (const std::string& d : dtypes) f.push_back(find_format(d));
  Context ctx{p, f, input, input.empty() ? "" : "values.npy", {}, prog, 1};
  std::vector<Table> ts = e->run(ctx);
  if (e->summarize) e->summarize(ts);  // as an unsharded run does
  return ts;
}

const Table& table(const std::vector<Table>& ts, std::string_view id) {
  for (const Table& t : ts)
    if (t.id == id) return t;
  throw std::out_of_range(std::string(id));
}
std::string text(const Table& t, const Row& r, std::string_view col) {
  return std::get<std::string>(r.cells[t.column(col)]);
}
double num(const Table& t, const Row& r, std::string_view col) {
  const Cell& c = r.cells[t.column(col)];
  if (const auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
  return std::get<double>(c);
}
const Row& find_row(const Table& t, const std::map<std::string, std::string>& words) {
  for (const Row& r : t.rows) {
    bool ok = true;
    for (const auto& [c, w] : words) ok = ok && text(t, r, c) == w;
    if (ok) return r;
  }
  throw std::out_of_range("no such row");
}

// A small run: the tables other than the one under test stay cheap.
const std::map<std::string, std::string> small{{"n", "4096"}, {"draws", "1000"}, {"terms", "100"}};

TEST(Error, conversion_of_1_1_to_bfloat16_by_hand) {
  const std::vector<double> input{1.1};
  const auto ts = run_error({{"rounds", "nearest_even,toward_zero,upward"}, {"schemes", "none"}, {"n", "16"},
                             {"draws", "10"}, {"terms", "10"}},
                            {"bfloat16"}, input);
  const Table& t = table(ts, "error_conversion");
  ASSERT_EQ(t.rows.size(), 3u);
  // The double 1.1 = 1.100000000000000088817841970012523..., rounded once
  // (no float32 between); its bf16 neighbours are 140/128 = 1.09375 and
  // 141/128 = 1.1015625, 2^-7 apart.
  const double x = 1.1;
  const double up = 141.0 / 128, down = 140.0 / 128;
  const Row& ne = find_row(t, {{"round", "nearest_even"}});
  EXPECT_EQ(num(t, ne, "n"), 1);
  EXPECT_DOUBLE_EQ(num(t, ne, "rel_err_mean"), (up - x) / x);
  EXPECT_DOUBLE_EQ(num(t, ne, "ulp_max"), (up - x) * 128);  // 0.19999999999998863
  EXPECT_DOUBLE_EQ(num(t, ne, "sqnr_db"), 20 * std::log10(x / (up - x)));
  const Row& tz = find_row(t, {{"round", "toward_zero"}});
  EXPECT_DOUBLE_EQ(num(t, tz, "ulp_mean"), (x - down) * 128);  // 0.80000000000001137
  const Row& u = find_row(t, {{"round", "upward"}});
  EXPECT_DOUBLE_EQ(num(t, u, "rel_err_max"), (up - x) / x);
}

// What a metric cannot mean is refused or counted apart, never a row of inf.
TEST(Error, nonfinite_inputs_and_unsigned_formats) {
  const std::map<std::string, std::string> p{{"schemes", "none"}, {"n", "16"}, {"draws", "10"}, {"terms", "10"}};
  const std::vector<double> nans{NAN, NAN, INFINITY, 0.0};
  try {
    run_error(p, {"bfloat16"}, nans);
    ADD_FAILURE() << "an input without a finite nonzero value was measured";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no finite nonzero value (2 NaN, 1 infinite, 1 zero)"), std::string::npos)
        << e.what();
  }
  try {
    run_error(p, {"float8_e8m0fnu"});
    ADD_FAILURE() << "e8m0 was measured";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("float8_e8m0fnu has no negative values"), std::string::npos) << e.what();
  }
  const std::vector<double> mixed{NAN, 1.1, -INFINITY, 2.0};
  const auto ts = run_error({{"rounds", "nearest_even"}, {"schemes", "none"}, {"n", "16"}, {"draws", "10"},
                             {"terms", "10"}},
                            {"bfloat16"}, mixed);
  const Table& t = table(ts, "error_conversion");
  EXPECT_EQ(num(t, t.rows.at(0), "n"), 2);
  EXPECT_EQ(num(t, t.rows.at(0), "n_nonfinite"), 2);
  EXPECT_TRUE(std::isfinite(num(t, t.rows.at(0), "sqnr_db")));
}

// The stagnation note states what this run's table shows: with 1000 adds
// of 1e-3 bfloat16 stops at 0.5 (ulp 2^-8 there: half of it, 1.95e-3, is
// above the stored 1.00040435791015625e-3), not at the default run's 0.03125.
TEST(Error, stagnation_note_reads_the_table) {
  const auto ts = run_error({{"schemes", "none"}, {"n", "16"}, {"draws", "10"}, {"terms", "1000"},
                             {"addend", "1e-3"}},
                            {"bfloat16"});
  const Table& t = table(ts, "error_stagnation");
  std::string notes;
  for (const std::string& n : t.notes) notes += n + "\n";
  EXPECT_NE(notes.find("This run, after 1000 adds: bfloat16: nearest ends at 0.5 "), std::string::npos) << notes;
  EXPECT_EQ(notes.find("0.03125"), std::string::npos) << notes;
}

TEST(Error, ulp_bounds_per_rounding_mode_and_histogram_totals) {
  const auto ts = run_error({{"schemes", "none"}, {"n", "4096"}, {"draws", "10"}, {"terms", "10"}},
                            {"float16", "bfloat16", "float8_e4m3fn", "float6_e3m2fn"});
  const Table& t = table(ts, "error_conversion");
  const Table& h = table(ts, "error_ulp_histogram");
  ASSERT_EQ(t.rows.size(), 4u * 6u);
  for (const Row& r : t.rows) {
    const std::string round = text(t, r, "round");
    const double bound = round.starts_with("nearest") ? 0.5 : 1.0;
    if (round.starts_with("nearest")) EXPECT_LE(num(t, r, "ulp_max"), bound) << text(t, r, "dtype") << round;
    else EXPECT_LT(num(t, r, "ulp_max"), bound) << text(t, r, "dtype") << round;
    // Every element lands in one bin; none at >= 1 ulp.
    double count = 0, fraction = 0, top = -1;
    for (const Row& b : h.rows) {
      if (text(h, b, "dtype") != text(t, r, "dtype") || text(h, b, "round") != round) continue;
      count += num(h, b, "count");
      fraction += num(h, b, "fraction");
      if (std::isinf(num(h, b, "ulp_hi"))) top = num(h, b, "count");
    }
    EXPECT_EQ(count, num(t, r, "n"));
    EXPECT_NEAR(fraction, 1.0, 1e-12);
    EXPECT_EQ(top, 0);
  }
  // Nearest-even's mean error of a smooth sample is about a quarter ulp.
  EXPECT_NEAR(num(t, find_row(t, {{"dtype", "bfloat16"}, {"round", "nearest_even"}}), "ulp_mean"), 0.25, 0.02);
}

// A recipe's name in `schemes` gives a row per operand treatment: NVFP4
// training's gradients round stochastically, adding about 3 dB of noise to
// nearest's 20 (uniform noise over a whole gap's width against half of it);
// Four Over Six's 16 x 16 weights err less than NVFP4's 16 x 16 weights.
TEST(Error, recipes_give_a_row_per_operand_treatment) {
  std::map<std::string, std::string> p = small;
  p["schemes"] = "nvfp4_4over6,mxfp4";
  const auto ts = run_error(p, {"float32"});
  const Table& t = table(ts, "error_conversion");
  const Row& x = find_row(t, {{"dtype", "nvfp4_4over6/fprop.a"}});
  const Row& dy = find_row(t, {{"dtype", "nvfp4_4over6/dgrad.a"}});
  EXPECT_EQ(text(t, x, "round"), "nearest_even");
  EXPECT_EQ(text(t, dy, "round"), "stochastic");
  EXPECT_NEAR(num(t, x, "sqnr_db"), 20.5, 1.0);
  EXPECT_GT(num(t, x, "sqnr_db") - num(t, dy, "sqnr_db"), 2.0);
  const Row& w = find_row(t, {{"dtype", "nvfp4_4over6/fprop.b+dgrad.b"}});
  EXPECT_EQ(text(t, w, "round"), "nearest_even");
  p["schemes"] = "nvfp4_te_2d";
  const auto plain = run_error(p, {"float32"});
  const Table& t2 = table(plain, "error_conversion");
  EXPECT_GT(num(t, w, "sqnr_db"), num(t2, find_row(t2, {{"dtype", "nvfp4_te_2d"}}), "sqnr_db"));
  EXPECT_NO_THROW(find_row(t, {{"dtype", "mxfp4"}}));
}

TEST(Error, mxfp8_e4m3_sqnr_passes_torchao_threshold) {
  const auto ts = run_error(small, {"float8_e4m3fn"});
  const Table& t = table(ts, "error_conversion");
  // torchao's MX tests require SQNR >= 20 dB for MXFP8 E4M3.
  const double mx8 = num(t, find_row(t, {{"dtype", "mxfp8_e4m3"}}), "sqnr_db");
  EXPECT_GE(mx8, 20.0);
  // 3 mantissa bits: a relative error of about 2^-4 / sqrt(12) per element, ~31 dB.
  EXPECT_NEAR(mx8, 31.0, 2.0);
  EXPECT_LT(num(t, find_row(t, {{"dtype", "mxfp4"}}), "sqnr_db"), mx8);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(find_row(t, {{"dtype", "mxfp4"}}).cells[t.column("ulp_max")]));
}

TEST(Error, stochastic_rounding_is_unbiased_nearest_is_not) {
  const auto ts = run_error({{"n", "64"}, {"draws", "100000"}, {"terms", "10"}, {"schemes", "none"}},
                            {"bfloat16"});
  const Table& t = table(ts, "error_stochastic_bias");
  ASSERT_EQ(t.rows.size(), 4u);
  // 0.1 = 1.6 * 2^-4; 1.6 * 128 = 204.8 truncates to 204: base 0.099609375,
  // ulp 2^-4 * 2^-7 = 2^-11.
  for (const Row& r : t.rows) {
    const double k = num(t, r, "k");
    EXPECT_EQ(num(t, r, "ulp"), 0x1p-11);
    EXPECT_EQ(num(t, r, "value"), 0.099609375 + k * 0x1p-11 / 3);
    const double want = k == 1 ? -1.0 / 3 : k == 2 ? 1.0 / 3 : 0.0;
    EXPECT_NEAR(num(t, r, "nearest_err_ulp"), want, 1e-12);
    EXPECT_LT(std::fabs(num(t, r, "stochastic_bias_ulp")), 4 * num(t, r, "stochastic_se_ulp") + 1e-12);
    EXPECT_LT(std::fabs(num(t, r, "stochastic_bias_ulp")), 0.01);
  }
}

TEST(Error, stochastic_bias_steps_within_one_gap_for_a_negative_power_of_two) {
  // -0.125 = -2^-3 is a bf16 value; the next value above it lies in the finer
  // binade below 2^-3 in magnitude: -0.125 + 2^-4 * 2^-7 = -0.125 + 2^-11.
  // The four values must be thirds of that gap (once they were thirds of the
  // coarser 2^-10, crossing a grid point at k = 2).
  const auto ts = run_error({{"n", "64"}, {"draws", "1000"}, {"terms", "10"}, {"schemes", "none"},
                             {"bias_value", "-0.125"}},
                            {"bfloat16"});
  const Table& t = table(ts, "error_stochastic_bias");
  ASSERT_EQ(t.rows.size(), 4u);
  for (const Row& r : t.rows) {
    const double k = num(t, r, "k");
    EXPECT_EQ(num(t, r, "ulp"), 0x1p-11);
    EXPECT_EQ(num(t, r, "value"), -0.125 + k * 0x1p-11 / 3);
    const double want = k == 1 ? -1.0 / 3 : k == 2 ? 1.0 / 3 : 0.0;
    EXPECT_NEAR(num(t, r, "nearest_err_ulp"), want, 1e-12) << "k = " << k;
  }
  EXPECT_THROW(run_error({{"bias_value", "500"}}, {"float8_e4m3fn"}), lplab::runtime::UsageError);
}

TEST(Error, bfloat16_sum_stagnates_at_2_pow_minus_5) {
  const auto ts = run_error({{"n", "64"}, {"draws", "10"}, {"schemes", "none"}}, {"bfloat16"});
  const Table& t = table(ts, "error_stagnation");
  ASSERT_EQ(t.rows.size(), 10u);
  const Row& last = t.rows.back();
  EXPECT_EQ(num(t, last, "step"), 10000);
  // bf16(1e-4) = 1.640625 * 2^-14 (1.6384 * 128 = 209.7 -> 210).
  const double a = 210.0 / 128 * 0x1p-14;
  EXPECT_DOUBLE_EQ(num(t, last, "exact"), 10000 * a);
  EXPECT_EQ(num(t, last, "nearest"), 0x1p-5);
  // Stochastic rounding keeps the expected sum exact (each add is unbiased);
  // its spread is sqrt(sum p(1-p) ulp^2) over the adds, about 0.05 here
  // (ulp 2^-8 near 1, p = a / ulp = 0.026, some 5000 adds in that binade).
  EXPECT_NEAR(num(t, last, "stochastic"), 10000 * a, 0.2);
  // The kernels' storage-format reduction, written separately, stagnates at the same value.
  std::vector<bfloat16> copies(10000, bfloat16(a));
  const double s = kernels::sum(kernels::View<const bfloat16>(copies.data(), {copies.size()}),
                                kernels::Accumulate::storage);
  EXPECT_EQ(num(t, last, "nearest"), s);
}

TEST(Error, square_sqrt_lecture_metric_is_sqrt2_true_error_is_not) {
  const auto ts = run_error({{"n", "65536"}, {"draws", "10"}, {"terms", "10"}, {"schemes", "none"},
                             {"rounds", "nearest_even"}},
                            {"float32", "float16", "bfloat16", "float8_e4m3fn"});
  const Table& t = table(ts, "error_square_sqrt");
  ASSERT_EQ(t.rows.size(), 4u);
  for (const Row& r : t.rows) EXPECT_NEAR(num(t, r, "lecture_metric"), std::sqrt(2.0), 0.01) << text(t, r, "dtype");
  // sqrt(RN(x^2)) = |x| in binary floating point unless x^2 underflows: fp32
  // and bf16 (fp32's range) are exact on N(0, 1).
  for (const char* d : {"float32", "bfloat16"}) {
    const Row& r = find_row(t, {{"dtype", d}});
    EXPECT_EQ(num(t, r, "true_rel_err"), 0.0) << d;
    EXPECT_EQ(num(t, r, "frac_exact"), 1.0) << d;
  }
  // E4M3: x^2 < 2^-10 (|x| < 2^-5) rounds to 0, so some results are 0: error 1.
  const Row& e4 = find_row(t, {{"dtype", "float8_e4m3fn"}});
  EXPECT_EQ(num(t, e4, "true_rel_err_max"), 1.0);
  EXPECT_LT(num(t, e4, "frac_exact"), 1.0);
  EXPECT_EQ(num(t, e4, "fused_rel_err"), 0.0);  // the fp32 square does not underflow
}

TEST(Error, ops_square_and_sqrt_are_correctly_rounded) {
  const auto ts = run_error(small, {"float16", "bfloat16"});
  const Table& t = table(ts, "error_ops");
  // Double rounding through fp32 is innocuous for +, *, sqrt when fp32's 24
  // bits are >= 2p + 2 (Figueroa, SIGNUM 1995): 24 >= 2*11 + 2 for fp16.
  for (const char* op : {"square", "sqrt"}) {
    for (const char* d : {"float16", "bfloat16"}) {
      for (const char* c : {"per_op", "fused", "fp64"}) {
        const Row& r = find_row(t, {{"op", op}, {"dtype", d}, {"compute", c}});
        EXPECT_LE(num(t, r, "ulp_max"), 0.5) << op << d << c;
        EXPECT_EQ(num(t, r, "frac_matches_fp64"), 1.0) << op << d << c;
      }
    }
  }
  const Row& g = find_row(t, {{"op", "gelu_tanh"}, {"dtype", "bfloat16"}, {"compute", "fp64"}});
  EXPECT_LE(num(t, g, "ulp_max"), 0.5);
}

}  // namespace
}  // namespace lplab::experiments
