// throughput: exact byte and FLOP counts, and the rates and utilisations
// computed from them: the formula on fixed timings and roofs, and in a run
// the same formula and the same roof for every row that shares one. No test
// asserts how fast this machine ran: on a loaded machine a kernel's time and
// its roof's are taken apart, and their ratio is whatever the load made it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "lplab/lab/experiment.h"
#include "throughput_rates.h"

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
    lx::Context ctx{p,  {lplab::runtime::find_format("float32"), lplab::runtime::find_format("bfloat16"), lplab::runtime::find_format("float4_e2m1fn")},
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

TEST(Throughput, ExactBytesAndFlopsAndTheRatesComputedFromThem) {
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
  // and the measurement is the expensive part): each row's rates from its
  // own counts and seconds, and its utilisation over the roof of its class
  // -- the FMA peak for matmul, STREAM at two threads for the conversions,
  // on one thread for the elementwise kernels. The roof a row implies
  // (rate / utilisation) is the same for every row of its class, whatever
  // the timings were.
  std::map<std::string, double> roof_of;  // class -> the roof its first row implies
  for (const lx::Row& r : t.rows) {
    const std::string op = std::get<std::string>(r.cells[t.column("op")]);
    const std::string what = op + " " + std::get<std::string>(r.cells[t.column("dtype")]);
    const double s = num(t, r, "seconds");
    ASSERT_TRUE(std::isfinite(s) && s > 0) << what;  // a duration: true of any machine
    const double gbs = num(t, r, "gb_per_s");
    EXPECT_EQ(gbs, num(t, r, "bytes") / s / 1e9) << what;
    const bool matmul = op == "matmul_fp32_acc";
    if (std::isnan(num(t, r, "flops"))) {
      EXPECT_TRUE(std::isnan(num(t, r, "gflop_per_s"))) << what;
    } else {
      EXPECT_EQ(num(t, r, "gflop_per_s"), num(t, r, "flops") / s / 1e9) << what;
    }
    const double rate = matmul ? num(t, r, "gflop_per_s") : gbs;
    const double roof = rate * 1e9 / num(t, r, "utilisation");
    ASSERT_TRUE(std::isfinite(roof) && roof > 0) << what;
    const std::string cls = matmul ? "peak" : "stream on " + std::to_string(num(t, r, "threads")) + " threads";
    const auto [it, first] = roof_of.emplace(cls, roof);
    if (!first) {
      EXPECT_NEAR(roof / it->second, 1.0, 1e-12) << what << " against the " << cls << " roof";
    }
  }
}

// The formula, on timings and roofs no machine has to produce.
TEST(Throughput, RatesFromFixedTimingsUseTheKernelsRoof) {
  namespace tp = lplab::experiments::throughput;
  const tp::Roofs roofs{.peak_flops = 100e9, .bandwidth_all = 32e9, .bandwidth_one = 20e9};
  // A conversion on two threads: 8 GB in half a second, against STREAM at two threads.
  tp::Rates r = tp::rates({.compute_bound = false, .threads = 2, .seconds = 0.5, .bytes = 8e9, .flops = 0}, roofs);
  EXPECT_EQ(r.gb_per_s, 16.0);
  EXPECT_EQ(r.gflop_per_s, 0.0);  // not counted
  EXPECT_EQ(r.roof, 32e9);
  EXPECT_EQ(r.utilisation, 0.5);
  // The same bytes on one thread: STREAM on one thread is the roof.
  r = tp::rates({.compute_bound = false, .threads = 1, .seconds = 0.5, .bytes = 8e9, .flops = 4e9}, roofs);
  EXPECT_EQ(r.roof, 20e9);
  EXPECT_EQ(r.gflop_per_s, 8.0);
  EXPECT_DOUBLE_EQ(r.utilisation, 0.8);  // bandwidth-bound: the FLOPs do not enter it
  // A matmul: 2 m^3 FLOPs at m = 64 in 2^-10 s, against the FMA peak.
  r = tp::rates({.compute_bound = true, .threads = 2, .seconds = 0x1p-10, .bytes = 40960, .flops = 524288}, roofs);
  EXPECT_EQ(r.gflop_per_s, 0.536870912);
  EXPECT_EQ(r.roof, 100e9);
  EXPECT_DOUBLE_EQ(r.utilisation, 0.536870912 / 100);
  // A kernel timed faster than its roof (the roof measured in a busy
  // moment): the utilisation says so, above 1; it is not clipped.
  r = tp::rates({.compute_bound = false, .threads = 1, .seconds = 0.25, .bytes = 8e9, .flops = 0}, roofs);
  EXPECT_EQ(r.gb_per_s, 32.0);
  EXPECT_DOUBLE_EQ(r.utilisation, 1.6);
}
