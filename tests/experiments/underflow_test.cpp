// The underflow experiment against hand arithmetic and the normal
// distribution's closed form P(|x| < t) = erf(t / (sigma sqrt 2)).
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lplab/lab/experiment.h"

namespace lplab::experiments {
namespace {

std::vector<Table> run_underflow(const std::map<std::string, std::string>& given,
                                 const std::vector<std::string>& dtypes, std::span<const double> input = {},
                                 Shard shard = {}) {
  const Experiment* e = find_experiment("underflow");
  EXPECT_NE(e, nullptr);
  Params p(e->params, given, e->name);
  Progress prog;
  std::vector<const FormatEntry*> f;
  for (const std::string& d : dtypes) f.push_back(find_format(d));
  Context ctx{p, f, input, input.empty() ? "" : "values.npy", shard, prog, 1};
  return e->run(ctx);
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
  return std::get<double>(r.cells[t.column(col)]);
}

// The row whose text columns hold the given words (and sigma, when given).
const Row& find_row(const Table& t, const std::map<std::string, std::string>& words, double sigma = -1) {
  for (const Row& r : t.rows) {
    bool ok = sigma < 0 || num(t, r, "sigma") == sigma;
    for (const auto& [c, w] : words) ok = ok && text(t, r, c) == w;
    if (ok) return r;
  }
  throw std::out_of_range("no such row");
}

// P(a < |x| < b) for x ~ N(0, sigma^2).
double normal_band(double a, double b, double sigma) {
  return std::erf(b / (sigma * std::sqrt(2.0))) - std::erf(a / (sigma * std::sqrt(2.0)));
}

TEST(Underflow, lecture_values_1e_8) {
  const auto ts = run_underflow({}, {"float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"});
  const Table& t = table(ts, "underflow_values");
  ASSERT_EQ(t.rows.size(), 4u);
  // fp16: 1e-8 is below 2^-25, half the smallest subnormal 2^-24.
  EXPECT_EQ(num(t, find_row(t, {{"dtype", "float16"}}), "result"), 0.0);
  EXPECT_EQ(text(t, find_row(t, {{"dtype", "float16"}}), "note"), "flushed to zero");
  // bf16: 1e-8 = 1.34217728 * 2^-27; 1.34217728 * 128 = 171.8 rounds to 172,
  // 172/128 = 1.34375 = 0x1.58p0, so 0x1.58p-27 = 1.0011717677116394e-08.
  const Row& bf = find_row(t, {{"dtype", "bfloat16"}});
  EXPECT_EQ(num(t, bf, "result"), 0x1.58p-27);
  EXPECT_EQ(text(t, bf, "result_torch"), "1.0012e-08");
  EXPECT_EQ(text(t, bf, "note"), "normal, rounded");
  // E4M3's smallest subnormal is 2^-9, E5M2's 2^-16: 1e-8 is far below half of either.
  EXPECT_EQ(num(t, find_row(t, {{"dtype", "float8_e4m3fn"}}), "result"), 0.0);
  EXPECT_EQ(num(t, find_row(t, {{"dtype", "float8_e5m2"}}), "result"), 0.0);
}

TEST(Underflow, float16_normal_fractions_match_closed_form) {
  const auto ts = run_underflow({{"sigmas", "1e-6,1e5"}, {"schemes", "none"}}, {"float16"});
  const Table& t = table(ts, "underflow_scales");
  ASSERT_EQ(t.rows.size(), 2u * 2u * 2u);  // {normal, lognormal} x sigmas x {ieee, saturate}
  const double n = 65536;
  // sigma 1e-6: |x| <= 2^-25 rounds to 0; below 2^-14 - 2^-25 (the tie with
  // the smallest normal, which wins as the even code) it stays subnormal.
  const Row& lo = find_row(t, {{"distribution", "normal"}, {"overflow", "ieee"}}, 1e-6);
  const double p0 = normal_band(0, 0x1p-25, 1e-6);
  const double ps = normal_band(0x1p-25, 0x1p-14 - 0x1p-25, 1e-6);
  EXPECT_NEAR(num(t, lo, "frac_zero"), p0, 5 * std::sqrt(p0 * (1 - p0) / n));
  EXPECT_NEAR(num(t, lo, "frac_subnormal"), ps, 5 * std::sqrt(ps * (1 - ps) / n));
  EXPECT_EQ(num(t, lo, "frac_overflow"), 0.0);
  // sigma 1e5: everything beyond 65504 is clamped (to 65504 below the
  // threshold 65520, to inf above it).
  const Row& hi = find_row(t, {{"distribution", "normal"}, {"overflow", "ieee"}}, 1e5);
  const double po = std::erfc(65504 / (1e5 * std::sqrt(2.0)));
  EXPECT_NEAR(num(t, hi, "frac_overflow"), po, 5 * std::sqrt(po * (1 - po) / n));
  EXPECT_EQ(num(t, hi, "frac_nan"), 0.0);
  // The same sample under saturate: the same elements overflow.
  const Row& sat = find_row(t, {{"distribution", "normal"}, {"overflow", "saturate"}}, 1e5);
  EXPECT_EQ(num(t, sat, "frac_overflow"), num(t, hi, "frac_overflow"));
}

TEST(Underflow, e4m3_ieee_overflow_is_nan_where_saturate_clamps) {
  const auto ts = run_underflow({{"sigmas", "1000"}, {"schemes", "none"}, {"n", "4096"}}, {"float8_e4m3fn"});
  const Table& t = table(ts, "underflow_scales");
  const Row& ieee = find_row(t, {{"distribution", "normal"}, {"scaling", "none"}, {"overflow", "ieee"}});
  const Row& sat = find_row(t, {{"distribution", "normal"}, {"scaling", "none"}, {"overflow", "saturate"}});
  // E4M3 has no inf: under ieee |x| >= 464 becomes NaN, (448, 464) rounds to
  // 448; under saturate all of |x| > 448 becomes 448.
  EXPECT_GT(num(t, ieee, "frac_nan"), 0.5);
  EXPECT_EQ(num(t, sat, "frac_nan"), 0.0);
  EXPECT_EQ(num(t, sat, "frac_overflow"), num(t, ieee, "frac_overflow") + num(t, ieee, "frac_nan"));
  // P(|x| > 448) for sigma 1000.
  const double po = std::erfc(448 / (1000 * std::sqrt(2.0)));
  EXPECT_NEAR(num(t, sat, "frac_overflow"), po, 5 * std::sqrt(po * (1 - po) / 4096));
  // Tensor scaling maps amax onto 448: nothing is lost at any scale.
  const Row& ts_row = find_row(t, {{"distribution", "normal"}, {"scaling", "tensor"}});
  EXPECT_EQ(num(t, ts_row, "frac_nan"), 0.0);
  EXPECT_LT(num(t, ts_row, "frac_zero"), 0.01);
}

TEST(Underflow, scaling_rescues_tiny_values) {
  const auto ts = run_underflow(
      {{"sigmas", "1e-12"}, {"schemes", "mxfp8_e4m3,nvfp4,fp8_e4m3_delayed,deepseek_1x128"}, {"n", "4096"}},
      {"float8_e4m3fn"});
  const Table& t = table(ts, "underflow_scales");
  // Every |x| of N(0, 1e-24) lies far below 2^-10, half of E4M3's smallest subnormal.
  EXPECT_EQ(num(t, find_row(t, {{"distribution", "normal"}, {"scaling", "none"}, {"overflow", "ieee"}}),
                "frac_zero"),
            1.0);
  for (const char* scheme : {"mxfp8_e4m3", "float8_e4m3fn"}) {
    const Row& r = find_row(t, {{"distribution", "normal"}, {"dtype", scheme},
                                {"scaling", std::string(scheme) == "mxfp8_e4m3" ? "block" : "tensor"}});
    EXPECT_LT(num(t, r, "frac_zero"), 0.01) << scheme;
  }
  // NVFP4 keeps only 15 magnitudes: |x| < amax/24 of a block (half of 0.5
  // out of 6 after the scale) is flushed, a sizeable fraction but not all.
  const Row& nv = find_row(t, {{"distribution", "normal"}, {"dtype", "nvfp4"}});
  EXPECT_GT(num(t, nv, "frac_zero"), 0.01);
  EXPECT_LT(num(t, nv, "frac_zero"), 0.2);
  // DeepSeek-V3's scales are max(amax, 1e-4) / 448 (DeepGEMM's floor): a
  // tile of |x| ~ 1e-12 is scaled as if its amax were 1e-4, and x / scale ~
  // 4.5e-6 lies below E4M3's smallest subnormal 2^-9: all of it is flushed.
  const Row& tile = find_row(t, {{"distribution", "normal"}, {"dtype", "deepseek_1x128"}, {"scaling", "tile"}});
  EXPECT_EQ(num(t, tile, "frac_zero"), 1.0);
  // The schemes read the sample as rows of 1024: delayed scaling quantizes
  // row 0 (its first step) at TE's initial scale 1, where every value is
  // flushed, and rows 1-3 by the amaxes before them. Read as one row, it
  // would flush all of them.
  const Row& delayed = find_row(t, {{"distribution", "normal"}, {"dtype", "fp8_e4m3_delayed"}, {"scaling", "delayed"}});
  EXPECT_GE(num(t, delayed, "frac_zero"), 1024.0 / 4096);
  EXPECT_LT(num(t, delayed, "frac_zero"), 1024.0 / 4096 + 0.01);
}

TEST(Underflow, input_values_replace_the_distributions) {
  const std::vector<double> values{1e-8, 1e-6, 1.0, 1e6, -1e-6};
  const auto ts = run_underflow({{"schemes", "none"}}, {"float16"}, values);
  const Table& t = table(ts, "underflow_scales");
  ASSERT_EQ(t.rows.size(), 2u);
  const Row& r = find_row(t, {{"distribution", "input"}, {"overflow", "ieee"}});
  EXPECT_EQ(num(t, r, "frac_zero"), 1.0 / 5);       // 1e-8 < 2^-25
  EXPECT_EQ(num(t, r, "frac_subnormal"), 2.0 / 5);  // +-1e-6 in (2^-24, 2^-14)
  EXPECT_EQ(num(t, r, "frac_overflow"), 1.0 / 5);   // 1e6 > 65504
  EXPECT_EQ(num(t, r, "frac_nan"), 0.0);
}

TEST(Underflow, init_std_closed_forms_and_fp8_underflow) {
  const auto ts = run_underflow({{"sigmas", "1"}, {"n", "64"}}, {"float8_e4m3fn", "float4_e2m1fn"});
  const Table& t = table(ts, "underflow_init");
  ASSERT_EQ(t.rows.size(), 3u * 2u);
  struct Expect {
    const char* init;
    const char* layout;
    double std;  // by hand
    double printed;
    bool uniform;
  };
  // The lecture's code: t is 256x512 as torch stores it, fan_in = t.size(1) = 512.
  const Expect ex[] = {{"glorot_uniform", "out_in", 0.05103103630798288, 0.0782, true},  // sqrt(2/768)
                       {"he_normal", "out_in", 0.0625, 0.1104, false},  // sqrt(2/512)
                       {"he_normal", "in_out", 0.08838834764831845, -1, false}};  // sqrt(2/256)
  for (const Expect& e : ex) {
    const Row& r = find_row(t, {{"init", e.init}, {"layout", e.layout}, {"dtype", "float8_e4m3fn"}});
    EXPECT_EQ(text(t, r, "shape"), "256x512");
    EXPECT_NEAR(num(t, r, "std_closed_form"), e.std, 1e-15) << e.init;
    if (e.printed > 0) EXPECT_EQ(num(t, r, "std_printed"), e.printed);
    else EXPECT_TRUE(std::holds_alternative<std::monostate>(r.cells[t.column("std_printed")]));
    // 131072 draws: the sample std is within 0.2% (1/sqrt(2n)) of sigma; allow 1%.
    EXPECT_NEAR(num(t, r, "std_sample"), e.std, 0.01 * e.std) << e.init;
    // E4M3: |x| <= 2^-10 flushes, subnormal up to 2^-6 - 2^-10. Uniform on
    // (-a, a), a = std sqrt(3): a band of width w holds w / a of each side.
    const double n = 256.0 * 512.0, a = e.std * std::sqrt(3.0);
    const double p0 = e.uniform ? 0x1p-10 / a : normal_band(0, 0x1p-10, e.std);
    const double ps = e.uniform ? (0x1p-6 - 0x1p-9) / a : normal_band(0x1p-10, 0x1p-6 - 0x1p-10, e.std);
    EXPECT_NEAR(num(t, r, "frac_zero"), p0, 5 * std::sqrt(p0 * (1 - p0) / n)) << e.init;
    EXPECT_NEAR(num(t, r, "frac_subnormal"), ps, 5 * std::sqrt(ps * (1 - ps) / n)) << e.init;
  }
  // E2M1's smallest subnormal is 0.5: |x| <= 0.25 flushes every draw of U(-0.088, 0.088).
  const Row& fp4 = find_row(t, {{"init", "glorot_uniform"}, {"dtype", "float4_e2m1fn"}});
  EXPECT_EQ(num(t, fp4, "frac_zero"), 1.0);
}

// Each format's row is true for that format, from the double sample: no
// float32 tensor in between decides at the extremes.
TEST(Underflow, rows_leave_float32s_range_as_the_format_does) {
  const auto ts = run_underflow({{"sigmas", "1e-46,1e39"}, {"n", "4096"}, {"schemes", "none"}},
                                {"float32", "bfloat16"});
  const Table& t = table(ts, "underflow_scales");
  auto cell = [&](const char* sigma, const char* dtype, const char* column) {
    for (const Row& r : t.rows)
      if (text(t, r, "distribution") == "normal" && num(t, r, "sigma") == std::stod(sigma) &&
          text(t, r, "dtype") == dtype && text(t, r, "overflow") == "ieee")
        return num(t, r, column);
    ADD_FAILURE() << sigma << " " << dtype;
    return -1.0;
  };
  // sigma = 1e-46: |x| < 7e-46 (7 sigma) is below half of float32's smallest
  // subnormal 2^-149 = 1.4e-45, and of bfloat16's 2^-133: every draw flushes.
  EXPECT_EQ(cell("1e-46", "float32", "frac_zero"), 1.0);
  EXPECT_EQ(cell("1e-46", "bfloat16", "frac_zero"), 1.0);
  // sigma = 1e39: |x| > 3.39e38 overflows bfloat16 (max 3.3895e38, threshold
  // 3.3961e38): P(|Z| > 0.3396) = 0.734, as for float32 (0.733) -- not the
  // 0.1% a float32 tensor in between gave.
  EXPECT_NEAR(cell("1e39", "bfloat16", "frac_overflow"), 0.734, 0.03);
  EXPECT_NEAR(cell("1e39", "float32", "frac_overflow"), 0.733, 0.03);
}

// A float64 input beyond float32's range is counted as each format sees it.
TEST(Underflow, float64_input_beyond_float32) {
  const std::vector<double> values{1e300, -1e300, 5e-324, 1e-300, 1.0};
  const auto ts = run_underflow({{"schemes", "none"}}, {"bfloat16"}, values);
  const Table& t = table(ts, "underflow_scales");
  const Row& r = find_row(t, {{"distribution", "input"}, {"overflow", "ieee"}});
  EXPECT_EQ(num(t, r, "frac_overflow"), 2.0 / 5);
  EXPECT_EQ(num(t, r, "frac_zero"), 2.0 / 5);
}

TEST(Underflow, nonfinite_inputs_are_counted_as_such) {
  const std::vector<double> values{NAN, INFINITY, 1e-8, 1.0};
  const auto ts = run_underflow({{"schemes", "none"}}, {"float16"}, values);
  const Table& t = table(ts, "underflow_scales");
  const Row& r = find_row(t, {{"distribution", "input"}, {"overflow", "ieee"}});
  EXPECT_EQ(num(t, r, "frac_nonfinite_input"), 2.0 / 4);
  EXPECT_EQ(num(t, r, "frac_zero"), 1.0 / 4);
  const std::vector<double> all_nan{NAN, NAN};
  EXPECT_THROW(run_underflow({{"schemes", "none"}}, {"float16"}, all_nan), UsageError);
}

TEST(Underflow, shards_partition_the_grid) {
  const std::map<std::string, std::string> given{{"sigmas", "1e-3,1"}, {"n", "256"}, {"schemes", "mxfp4"}};
  const std::vector<std::string> dtypes{"float16", "float8_e5m2"};
  const auto whole = run_underflow(given, dtypes);
  const auto s0 = run_underflow(given, dtypes, {}, Shard{0, 2});
  const auto s1 = run_underflow(given, dtypes, {}, Shard{1, 2});
  for (std::size_t k = 0; k < whole.size(); ++k) {
    EXPECT_EQ(s0[k].rows.size() + s1[k].rows.size(), whole[k].rows.size()) << whole[k].id;
    for (const Row& r : s1[k].rows) {
      EXPECT_EQ(r.grid % 2, 1u);
      bool found = false;
      for (const Row& w : whole[k].rows) found = found || (w.grid == r.grid && w.cells == r.cells);
      EXPECT_TRUE(found) << whole[k].id << " grid " << r.grid;
    }
  }
}

}  // namespace
}  // namespace lplab::experiments
