// accounting: FLOP counts and device-days against hand arithmetic and the
// lecture's figures.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/runtime/text.h"

namespace lx = lplab::experiments;

namespace {

std::vector<lx::Table> run_accounting(const std::map<std::string, std::string>& given) {
  const lx::Experiment* e = lx::find_experiment("accounting");
  if (e == nullptr) throw std::runtime_error("no accounting experiment");
  lx::Params p(e->params, given, e->name);
  lx::Progress prog;
  lx::Context ctx{p, {}, {}, "", {}, prog, 1};
  return e->run(ctx);
}

const lx::Table& table(const std::vector<lx::Table>& ts, const std::string& id) {
  for (const lx::Table& t : ts)
    if (t.id == id) return t;
  throw std::runtime_error("no table " + id);
}

// The number in column `col` of the first row whose columns match `keys`.
double value(const lx::Table& t, const std::map<std::string, std::string>& keys,
             const std::string& col) {
  for (const lx::Row& r : t.rows) {
    bool match = true;
    for (const auto& [k, v] : keys) match = match && std::get<std::string>(r.cells[t.column(k)]) == v;
    if (match) return lx::cell_number(r.cells[t.column(col)]);
  }
  throw std::runtime_error("no matching row in " + t.id);
}

// The text in column `col` of the row of device `device`.
std::string text_of(const lx::Table& t, const std::string& device, const std::string& col) {
  for (const lx::Row& r : t.rows)
    if (std::get<std::string>(r.cells[t.column("device")]) == device) return std::get<std::string>(r.cells[t.column(col)]);
  throw std::runtime_error("no row of " + device + " in " + t.id);
}

}  // namespace

TEST(Accounting, MatmulIsTwoMnk) {
  const auto ts = run_accounting({{"m", "3"}, {"n", "5"}, {"k", "7"}});
  EXPECT_EQ(value(table(ts, "accounting_matmul"), {{"name", "matmul"}}, "flops"), 2 * 3 * 5 * 7);
}

TEST(Accounting, LectureTwoLayerForward) {
  const auto ts = run_accounting({});
  const lx::Table& t = table(ts, "accounting_matmul");
  // B = 2^14, D = 2^15, K = 2^13: 2 B D D = 2^45, 2 B D K = 2^43.
  EXPECT_EQ(value(t, {{"name", "two_layer_w1"}}, "flops"), std::ldexp(1.0, 45));
  EXPECT_EQ(value(t, {{"name", "two_layer_w2"}}, "flops"), std::ldexp(1.0, 43));
  const double forward = value(t, {{"name", "two_layer_forward"}}, "flops");
  EXPECT_EQ(forward, 43980465111040.0);  // 5 * 2^43
  EXPECT_NEAR(forward, 4.398e13, 0.001e13);
  // The same count from the model view: 2 x tokens (B) x params (D^2 + D K).
  const lx::Table& m = table(ts, "accounting_model");
  EXPECT_EQ(value(m, {{"model", "two_layer"}, {"pass", "forward"}}, "flops"), forward);
}

TEST(Accounting, ForwardBackwardTrainingStep) {
  const auto ts = run_accounting({{"params", "1e9"}, {"tokens", "1e10"}});
  const lx::Table& t = table(ts, "accounting_model");
  EXPECT_EQ(value(t, {{"model", "model"}, {"pass", "forward"}}, "flops"), 2e19);
  EXPECT_EQ(value(t, {{"model", "model"}, {"pass", "backward"}}, "flops"), 4e19);
  EXPECT_EQ(value(t, {{"model", "model"}, {"pass", "train_step"}}, "flops"), 6e19);
  // GPT-3's defaults: 6 x 175e9 x 300e9 = 3.15e23 (the paper's 3.14e23).
  const auto gpt3 = run_accounting({});
  EXPECT_DOUBLE_EQ(value(table(gpt3, "accounting_model"), {{"model", "model"}, {"pass", "train_step"}},
                         "flops"),
                   3.15e23);
  // Seconds at H100 bf16 dense 989e12 x MFU 0.5 on 1 device.
  EXPECT_DOUBLE_EQ(value(t, {{"model", "model"}, {"pass", "train_step"}}, "seconds"),
                   6e19 / (989e12 * 0.5));
}

TEST(Accounting, Gpt4DeviceDaysSparseAndDensePeaks) {
  const auto ts = run_accounting({{"mfu", "0.5"}});
  const lx::Table& t = table(ts, "accounting_budget");
  // The lecture: 2e25 / (1979e12 x 0.5) / 86400 = 2.34e5 H100-days.
  const double lecture = value(t, {{"budget", "gpt4"}, {"device", "h100_sxm_sparse_bf16"}}, "device_days");
  EXPECT_NEAR(lecture, 2.34e5, 0.005e5);
  EXPECT_DOUBLE_EQ(lecture, 2e25 / (1979e12 * 0.5) / 86400);
  // Dense bf16, 989e12: 4.68e5, twice as long.
  const double dense = value(t, {{"budget", "gpt4"}, {"device", "h100_sxm"}}, "device_days");
  EXPECT_NEAR(dense, 4.68e5, 0.005e5);
  EXPECT_NEAR(dense / lecture, 1979.0 / 989.0, 1e-12);
  EXPECT_DOUBLE_EQ(value(t, {{"budget", "gpt3"}, {"device", "a100_sxm"}}, "device_days"),
                   3.14e23 / (312e12 * 0.5) / 86400);
}

TEST(Accounting, DevicesDivideWallDays) {
  const auto ts = run_accounting({{"devices", "4"}, {"budget", "1e24"}, {"mfu", "0.4"}});
  const lx::Table& t = table(ts, "accounting_budget");
  const double dd = value(t, {{"budget", "given"}, {"device", "h200_sxm"}}, "device_days");
  EXPECT_DOUBLE_EQ(dd, 1e24 / (989e12 * 0.4) / 86400);
  EXPECT_DOUBLE_EQ(value(t, {{"budget", "given"}, {"device", "h200_sxm"}}, "days"), dd / 4);
}

TEST(Accounting, MfuOfAMeasuredTime) {
  const auto ts = run_accounting({{"flops", "4.398046511104e13"}, {"seconds", "0.1"}, {"dtype", "fp8"}});
  const lx::Table& t = table(ts, "accounting_mfu");
  EXPECT_DOUBLE_EQ(value(t, {{"device", "h100_sxm"}}, "mfu"), 4.398046511104e14 / 1979e12);
  EXPECT_DOUBLE_EQ(value(t, {{"device", "h100_sxm"}}, "achieved_tflops"), 439.8046511104);
  // An A100 has no FP8 units: fp8 work runs at its bf16 rate.
  EXPECT_DOUBLE_EQ(value(t, {{"device", "a100_sxm"}}, "peak_tflops"), 312);
}

// The device named times the model's passes: one without a unit for the
// dtype is refused (an A100 has no FP8 units; its bf16 rate was labelled
// fp8 before).
TEST(Accounting, RefusesADtypeTheNamedDeviceLacks) {
  try {
    run_accounting({{"device", "a100_sxm"}, {"dtype", "fp8"}});
    FAIL() << "a100_sxm with dtype=fp8 was accepted";
  } catch (const lplab::runtime::UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "accounting: a100_sxm has no fp8 unit (it would run fp8 at its bf16 rate); give dtype=bf16 or a device "
              "with one: h100_sxm, h200_sxm, b200");
  }
  EXPECT_THROW(run_accounting({{"dtype", "fp4"}}), lplab::runtime::UsageError);  // h100_sxm: no FP4 units
  EXPECT_NO_THROW(run_accounting({{"device", "b200"}, {"dtype", "fp4"}}));
}

// The tables over every device say, in the row, which unit's peak counts a
// dtype the device has no unit for.
TEST(Accounting, RowsNameTheUnitSubstituted) {
  const auto fp8 = run_accounting({{"dtype", "fp8"}});
  const lx::Table& budget = table(fp8, "accounting_budget");
  EXPECT_EQ(text_of(budget, "a100_sxm", "peak"), "bf16_dense (no fp8 unit)");
  EXPECT_EQ(text_of(budget, "h100_sxm", "peak"), "fp8_dense");
  const lx::Table& mfu = table(fp8, "accounting_mfu");
  EXPECT_EQ(text_of(mfu, "a100_sxm", "dtype"), "fp8 (at bf16 rate: no fp8 unit)");
  EXPECT_EQ(text_of(mfu, "b200", "dtype"), "fp8");
  const auto fp4 = run_accounting({{"device", "b200"}, {"dtype", "fp4"}});
  const lx::Table& budget4 = table(fp4, "accounting_budget");
  EXPECT_EQ(text_of(budget4, "h100_sxm", "peak"), "fp8_dense (no fp4 unit)");
  EXPECT_EQ(text_of(budget4, "a100_sxm", "peak"), "bf16_dense (no fp4 unit)");
  EXPECT_EQ(text_of(budget4, "b200", "peak"), "fp4_dense");
  EXPECT_DOUBLE_EQ(value(budget4, {{"budget", "gpt3"}, {"device", "h100_sxm"}}, "peak_tflops"), 1979);
}
