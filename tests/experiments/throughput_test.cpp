// throughput: exact byte and FLOP counts, and sanity of the timings
// (positive, utilisation in (0, 1.5]); the rates themselves vary.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "lplab/experiments/experiment.h"

namespace lx = lplab::experiments;

namespace {

#if LPLAB_SANITIZED
// Under the sanitizers, which look for memory errors rather than rates: 2^20
// elements, the same code paths in a sixteenth of the time.
constexpr double kN = 1048576;
#else
constexpr double kN = 16777216;  // 2^24 elements: 64 MiB of float, beyond the 32 MiB L3
#endif
constexpr double kM = 64;       // matmul size

const lx::Table& run_once() {
  static const lx::Table t = [] {
    const lx::Experiment* e = lx::find_experiment("throughput");
    if (e == nullptr) throw std::runtime_error("no throughput experiment");
    lx::Params p(e->params, {{"n", std::to_string(static_cast<long>(kN))}, {"matmul_n", "64"}, {"reps", "3"}}, e->name);
    lx::Progress prog;
    lx::Context ctx{p,  {lx::find_format("float32"), lx::find_format("bfloat16"), lx::find_format("float4_e2m1fn")},
                    {}, "", {}, prog, 2};
    auto ts = e->run(ctx);
    if (ts.size() != 1) throw std::runtime_error("throughput returns one table");
    return ts[0];
  }();
  return t;
}

const lx::Row& row(const lx::Table& t, const std::string& op, const std::string& dtype) {
  for (const lx::Row& r : t.rows)
    if (std::get<std::string>(r.cells[t.column("op")]) == op &&
        std::get<std::string>(r.cells[t.column("dtype")]) == dtype)
      return r;
  throw std::runtime_error("no row " + op + " " + dtype);
}

double num(const lx::Table& t, const lx::Row& r, const std::string& col) {
  return lx::cell_number(r.cells[t.column(col)]);
}

}  // namespace

TEST(Throughput, ExactBytesAndFlopsConsistentRatesSaneUtilisation) {
  const lx::Table& t = run_once();
  ASSERT_EQ(t.id, "throughput");
  ASSERT_EQ(t.rows.size(), 3u * 6u);
  // Conversion: a float read and an element written (sizeof: 4, 2, 1 byte).
  EXPECT_EQ(num(t, row(t, "from_float", "float32"), "bytes"), kN * 8);
  EXPECT_EQ(num(t, row(t, "to_float", "bfloat16"), "bytes"), kN * 6);
  EXPECT_EQ(num(t, row(t, "from_float", "float4_e2m1fn"), "bytes"), kN * 5);
  EXPECT_TRUE(std::isnan(num(t, row(t, "from_float", "float32"), "flops")));  // not counted
  // Elementwise, dtype in and out.
  EXPECT_EQ(num(t, row(t, "relu", "bfloat16"), "bytes"), kN * 2 * 2);
  EXPECT_EQ(num(t, row(t, "relu", "bfloat16"), "flops"), kN);
  EXPECT_EQ(num(t, row(t, "gelu_tanh", "float32"), "flops"), kN * 20);
  EXPECT_EQ(num(t, row(t, "add", "float32"), "bytes"), kN * 3 * 4);
  // Matmul: A and B in the dtype, C in float; 2 m^3 FLOPs.
  EXPECT_EQ(num(t, row(t, "matmul_fp32_acc", "bfloat16"), "bytes"), 2 * kM * kM * 2 + kM * kM * 4);
  EXPECT_EQ(num(t, row(t, "matmul_fp32_acc", "float32"), "flops"), 2 * kM * kM * kM);
  EXPECT_EQ(num(t, row(t, "relu", "float32"), "threads"), 1);
  EXPECT_EQ(num(t, row(t, "matmul_fp32_acc", "float32"), "threads"), 2);

  // The rates (one test with the counts: each ctest test is its own process,
  // and the measurement is the expensive part).
  for (const lx::Row& r : t.rows) {
    const std::string what = std::get<std::string>(r.cells[t.column("op")]) + " " +
                             std::get<std::string>(r.cells[t.column("dtype")]);
    const double s = num(t, r, "seconds");
    EXPECT_GT(s, 0) << what;
    EXPECT_DOUBLE_EQ(num(t, r, "gb_per_s"), num(t, r, "bytes") / s / 1e9) << what;
    const double u = num(t, r, "utilisation");
    EXPECT_GT(u, 0) << what;
    EXPECT_LE(u, 1.5) << what;
  }
}
