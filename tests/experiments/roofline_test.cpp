// roofline: the lecture's intensities, spec-sheet ridges and which ops are
// memory-bound, against hand arithmetic; the measured roofs and points for
// what the experiment computes from its timings (ridges, rates, the roof
// each point is held to, the note that says when a roof was measured low),
// never for how fast this machine ran: a loaded machine's timings vary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "lplab/lab/experiment.h"

namespace lx = lplab::experiments;

namespace {

// Small, fast measurements; the lecture's sizes for the counts.
const std::map<std::string, std::string> kQuick = {
    {"n", "1048576"},        {"n_matmul", "1024"}, {"stream_bytes", "4194304"},
    {"reps", "1"},           {"peak_seconds", "0.01"}};

std::vector<lx::Table> run_roofline(std::vector<std::string> dtypes, lx::Shard shard = {}) {
  const lx::Experiment* e = lx::find_experiment("roofline");
  if (e == nullptr) throw std::runtime_error("no roofline experiment");
  lx::Params p(e->params, kQuick, e->name);
  std::vector<const lplab::runtime::FormatEntry*> formats;
  for (const std::string& d : dtypes) formats.push_back(lplab::runtime::find_format(d));
  lx::Progress prog;
  lx::Context ctx{p, formats, {}, "", shard, prog, 2};
  return e->run(ctx);
}

const lx::Table& table(const std::vector<lx::Table>& ts, const std::string& id) {
  for (const lx::Table& t : ts)
    if (t.id == id) return t;
  throw std::runtime_error("no table " + id);
}

const lx::Row& row(const lx::Table& t, const std::map<std::string, std::string>& keys) {
  for (const lx::Row& r : t.rows) {
    bool match = true;
    for (const auto& [k, v] : keys) match = match && std::get<std::string>(r.cells[t.column(k)]) == v;
    if (match) return r;
  }
  throw std::runtime_error("no matching row in " + t.id);
}

double num(const lx::Table& t, const lx::Row& r, const std::string& col) {
  return lx::cell_number(r.cells[t.column(col)]);
}
std::string text(const lx::Table& t, const lx::Row& r, const std::string& col) {
  return std::get<std::string>(r.cells[t.column(col)]);
}

// One run's tables, shared by the checks below: the run measures this
// machine's roofs, which takes seconds (tens under a sanitizer), so the
// checks run as sections of one test, in one process, not one run each.
const std::vector<lx::Table>* tables_ = nullptr;
void LectureIntensitiesInBf16() {
  const lx::Table& t = table(*tables_, "roofline_ops");
  const auto I = [&](const char* op) { return num(t, row(t, {{"op", op}, {"dtype", "bfloat16"}}), "intensity"); };
  EXPECT_EQ(I("relu"), 0.25);      // 1 FLOP / (2 + 2) bytes
  EXPECT_EQ(I("gelu_tanh"), 5.0);  // 20 FLOPs / 4 bytes
  const double n = 1048576;
  EXPECT_DOUBLE_EQ(I("dot"), 2 * n / (2 * (2 * n + 1)));
  EXPECT_NEAR(I("dot"), 0.5, 1e-6);
  EXPECT_DOUBLE_EQ(I("matvec"), 1024.0 / 1026.0);  // 2n^2 / (2 (n^2 + 2n))
  EXPECT_NEAR(I("matvec"), 1.0, 0.002);
  EXPECT_DOUBLE_EQ(I("matmul"), 1024.0 / 3.0);  // 2n^3 / (2 x 3n^2)
  EXPECT_NEAR(I("matmul"), 341.33, 0.01);
  const lx::Row& mm = row(t, {{"op", "matmul"}, {"dtype", "bfloat16"}});
  EXPECT_EQ(num(t, mm, "flops"), 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(num(t, mm, "bytes"), 3.0 * 1024 * 1024 * 2);
}

void IntensityScalesWithElementSize() {
  const lx::Table& t = table(*tables_, "roofline_ops");
  EXPECT_EQ(num(t, row(t, {{"op", "relu"}, {"dtype", "float32"}}), "intensity"), 0.125);  // 1 / 8
  EXPECT_EQ(num(t, row(t, {{"op", "relu"}, {"dtype", "float4_e2m1fn"}}), "intensity"), 1.0);  // 1 / 1
  EXPECT_DOUBLE_EQ(num(t, row(t, {{"op", "matmul"}, {"dtype", "float4_e2m1fn"}}), "intensity"),
                   4 * 1024.0 / 3.0);
}

void SpecSheetRidges() {
  const lx::Table& t = table(*tables_, "roofline_roofs");
  const auto ridge = [&](const char* dev, const char* dt) {
    return num(t, row(t, {{"device", dev}, {"dtype", dt}}), "ridge_flop_per_byte");
  };
  EXPECT_DOUBLE_EQ(ridge("h100_sxm", "bf16"), 989.0 / 3.35);  // 295.22
  EXPECT_NEAR(ridge("h100_sxm", "bf16"), 295.2, 0.05);
  EXPECT_DOUBLE_EQ(ridge("h100_sxm", "fp8"), 1979.0 / 3.35);
  EXPECT_DOUBLE_EQ(ridge("a100_sxm", "bf16"), 312.0 / 2.039);
  EXPECT_DOUBLE_EQ(ridge("h200_sxm", "bf16"), 989.0 / 4.8);
  EXPECT_DOUBLE_EQ(ridge("b200", "bf16"), 2250.0 / 8.0);
  EXPECT_DOUBLE_EQ(num(t, row(t, {{"device", "h100_sxm"}, {"dtype", "bf16"}}), "peak_gflops"), 989e3);
  EXPECT_DOUBLE_EQ(num(t, row(t, {{"device", "h100_sxm"}, {"dtype", "bf16"}}), "bandwidth_gbs"), 3350);
}

void WhichOpsAreMemoryBound() {
  const lx::Table& t = table(*tables_, "roofline_ops");
  const auto bound = [&](const char* op, const char* dt, const char* dev) {
    return text(t, row(t, {{"op", op}, {"dtype", dt}}), std::string("bound_on_") + dev);
  };
  for (const char* dev : {"h100_sxm", "a100_sxm", "h200_sxm", "b200"})
    for (const char* op : {"relu", "gelu_tanh", "dot", "matvec"})
      EXPECT_EQ(bound(op, "bfloat16", dev), "memory") << op << " on " << dev;
  // This CPU's ridge is measured (and under a sanitizer or on a loaded
  // machine the FMA loop is slow): its column must follow that ridge.
  const lx::Table& roofs = table(*tables_, "roofline_roofs");
  const double ridge = num(roofs, row(roofs, {{"device", "this_cpu"}, {"dtype", "fp32"}}), "ridge_flop_per_byte");
  for (const char* op : {"relu", "dot", "matvec", "matmul"}) {
    const double intensity = num(t, row(t, {{"op", op}, {"dtype", "bfloat16"}}), "intensity");
    EXPECT_EQ(bound(op, "bfloat16", "this_cpu"), intensity < ridge ? "memory" : "compute") << op;
  }
  // n/3 = 341.3 exceeds every bf16 ridge: H100 295.2, A100 153.0, H200 206.0, B200 281.3.
  for (const char* dev : {"h100_sxm", "a100_sxm", "h200_sxm", "b200"})
    EXPECT_EQ(bound("matmul", "bfloat16", dev), "compute") << dev;
  // fp32 matmul (170.7 FLOP/byte) on CUDA cores: H100 ridge 67 / 3.35 = 20.
  EXPECT_EQ(bound("matmul", "float32", "h100_sxm"), "compute");
}

// a == b to a few roundings: the table's columns are computed in another
// order (in GFLOP/s rather than FLOP/s) than the checks recompute them.
void ExpectClose(double a, double b, const std::string& what) {
  EXPECT_TRUE(std::isfinite(a) && std::isfinite(b)) << what;
  EXPECT_LE(std::abs(a - b), 1e-12 * std::abs(b)) << what << ": " << a << " against " << b;
}

void MeasuredRoofsAndPoints() {
  const lx::Table& roofs = table(*tables_, "roofline_roofs");
  row(roofs, {{"device", "this_cpu"}, {"dtype", "fp32"}});
  row(roofs, {{"device", "this_cpu"}, {"dtype", "fp64"}});
  row(roofs, {{"device", "this_cpu_1thread"}, {"dtype", "fp32"}});
  // Every measured roof's ridge is its peak over its bandwidth, whatever
  // the two measured.
  for (const lx::Row& r : roofs.rows) {
    if (!text(roofs, r, "device").starts_with("this_cpu")) continue;
    const double peak = num(roofs, r, "peak_gflops"), bw = num(roofs, r, "bandwidth_gbs");
    EXPECT_TRUE(peak > 0 && bw > 0) << text(roofs, r, "device") << " " << text(roofs, r, "dtype");
    ExpectClose(num(roofs, r, "ridge_flop_per_byte"), peak / bw,
                "ridge of " + text(roofs, r, "device") + " " + text(roofs, r, "dtype"));
  }
  bool has_bf16 = false;
  for (const lx::Row& r : roofs.rows)
    has_bf16 = has_bf16 || (text(roofs, r, "device") == "this_cpu" && text(roofs, r, "dtype") == "bf16");
#if defined(__x86_64__)
  // The bf16 roof is measured exactly where the CPU has VDPBF16PS.
  EXPECT_EQ(has_bf16, __builtin_cpu_supports("avx512bf16") != 0);
#else
  EXPECT_FALSE(has_bf16);
#endif

  const lx::Table& pts = table(*tables_, "roofline_points");
  const lx::Table& ops = table(*tables_, "roofline_ops");
  EXPECT_EQ(pts.rows.size(), 5u * 3u);
  std::vector<std::string> above;  // the points measured above their roofs
  for (const lx::Row& r : pts.rows) {
    const std::string op = text(pts, r, "op"), dtype = text(pts, r, "dtype"), what = op + " " + dtype;
    const double s = num(pts, r, "seconds");
    ASSERT_TRUE(std::isfinite(s) && s > 0) << what;  // a duration: true of any machine
    // The rate: the op's nominal FLOPs (roofline_ops, same n) over its seconds.
    const lx::Row& counted = row(ops, {{"op", op}, {"dtype", dtype}});
    EXPECT_EQ(num(ops, counted, "n"), num(pts, r, "n")) << what;
    ExpectClose(num(pts, r, "measured_gflops"), num(ops, counted, "flops") / s / 1e9, what + " measured_gflops");
    EXPECT_EQ(num(pts, r, "intensity"), num(ops, counted, "intensity")) << what;
    // The roof applied: min(the fp32 peak at the point's own thread count,
    // the bandwidth of its working set x its intensity).
    const lx::Row& roof = row(roofs, {{"device", num(pts, r, "threads") == 1 ? "this_cpu_1thread" : "this_cpu"},
                                      {"dtype", "fp32"}});
    const double attainable = std::min(num(roofs, roof, "peak_gflops"),
                                       num(pts, r, "bandwidth_gbs") * num(pts, r, "intensity"));
    ExpectClose(num(pts, r, "attainable_gflops"), attainable, what + " attainable_gflops");
    const double f = num(pts, r, "fraction_of_roof");
    ExpectClose(f, num(pts, r, "measured_gflops") / num(pts, r, "attainable_gflops"), what + " fraction_of_roof");
    if (f > 1) above.push_back(what);
  }
  // A point above its roof is the table's own finding, in its note (the
  // roof was measured low on a busy machine), not a failed test.
  const std::string& note = pts.notes.back();
  if (above.empty()) {
    EXPECT_EQ(note, "Every point lies at or below its roof.");
  } else {
    EXPECT_TRUE(note.starts_with("THE ROOF MEASUREMENT FAILED: ")) << note;
    for (const std::string& what : above) EXPECT_NE(note.find(what + " ("), std::string::npos) << what << ": " << note;
  }
  // A float32 matmul of n x n moves 3 n^2 elements of 4 bytes for 2 n^3
  // FLOPs: intensity n / 6, exactly. (Whether it stays under the measured
  // fp32 roof is a timing, not a test: on a loaded machine the roof's own
  // measurement can come out low, and a check of it failed under ASan while
  // another job held both cores.)
  const lx::Row& mm = row(pts, {{"op", "matmul"}, {"dtype", "float32"}});
  EXPECT_DOUBLE_EQ(num(pts, mm, "intensity"), num(pts, mm, "n") / 6.0);
}

}  // namespace

TEST(Roofline, TablesOfOneRun) {
  const std::vector<lx::Table> tables = run_roofline({"bfloat16", "float32", "float4_e2m1fn"});
  tables_ = &tables;
  {
    SCOPED_TRACE("LectureIntensitiesInBf16");
    LectureIntensitiesInBf16();
  }
  {
    SCOPED_TRACE("IntensityScalesWithElementSize");
    IntensityScalesWithElementSize();
  }
  {
    SCOPED_TRACE("SpecSheetRidges");
    SpecSheetRidges();
  }
  {
    SCOPED_TRACE("WhichOpsAreMemoryBound");
    WhichOpsAreMemoryBound();
  }
  {
    SCOPED_TRACE("MeasuredRoofsAndPoints");
    MeasuredRoofsAndPoints();
  }
  tables_ = nullptr;
}

TEST(RooflineParams, TooMuchMemoryIsAUsageError) {
  const lx::Experiment* e = lx::find_experiment("roofline");
  ASSERT_NE(e, nullptr);
  lx::Params p(e->params, {{"stream_bytes", "68719476736"}}, e->name);
  lx::Progress prog;
  lx::Context ctx{p, {lplab::runtime::find_format("float32")}, {}, "", {}, prog, 1};
  EXPECT_THROW(e->run(ctx), lplab::runtime::UsageError);
}
