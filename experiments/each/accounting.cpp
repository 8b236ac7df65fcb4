// accounting: FLOPs of matmuls and of training, MFU, and the device time a
// FLOP budget takes (CS336 lecture 2, "PyTorch and resource accounting").
//
// Conventions (Kaplan et al. 2020, arXiv 2001.08361, section 2.1): a matmul
// of [m x k] by [k x n] costs 2mnk FLOPs (one multiply and one add per term);
// a model's forward pass costs 2 x tokens x parameters, the backward pass
// twice that (gradients with respect to both activations and weights), so a
// training step costs 6 x tokens x parameters.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "lplab/lab/device_peaks.h"
#include <fmt/format.h>

#include "lplab/lab/experiment.h"
#include "lplab/lab/report_parts.h"

namespace lplab::experiments {
namespace {

constexpr double kSecondsPerDay = 24.0 * 60.0 * 60.0;  // 86400

int dtype_bits(const std::string& dtype) {
  if (dtype == "fp32") return 32;
  if (dtype == "bf16") return 16;
  if (dtype == "fp8") return 8;
  return 4;  // fp4
}

const DevicePeaks& device_named(const std::string& name) {
  for (const DevicePeaks& d : kDevices)
    if (d.name == name) return d;
  throw UsageError("accounting: unknown device '" + name + "'");
}

// A row's dtype (accounting_mfu) and peak (accounting_budget): the dtype's
// own, or, where the device has no unit for it, the unit whose rate is
// counted and why (device_peaks.h).
std::string dtype_label(const DevicePeaks& d, int bits, const std::string& dtype) {
  const std::string_view unit = device_unit(d, bits);
  return unit == dtype ? dtype : fmt::format("{} (at {} rate: no {} unit)", dtype, unit, dtype);
}
std::string peak_label(const DevicePeaks& d, int bits, const std::string& dtype) {
  const std::string_view unit = device_unit(d, bits);
  return unit == dtype ? dtype + "_dense" : fmt::format("{}_dense (no {} unit)", unit, dtype);
}

std::vector<Table> run(const Context& ctx) {
  const auto& p = ctx.params;
  const double m = static_cast<double>(p.integer("m")), n = static_cast<double>(p.integer("n")),
               k = static_cast<double>(p.integer("k"));
  const double B = static_cast<double>(p.integer("batch"));
  const double D = static_cast<double>(p.integer("d_model"));
  const double K = static_cast<double>(p.integer("d_out"));
  const double params = p.real("params"), tokens = p.real("tokens");
  const double flops = p.real("flops"), seconds = p.real("seconds");
  const double budget = p.real("budget"), mfu = p.real("mfu");
  const std::int64_t devices = p.integer("devices");
  const std::string dtype = p.text("dtype");
  const DevicePeaks& device = device_named(p.text("device"));
  const int bits = dtype_bits(dtype);
  // The named device times the model's passes under the dtype's name: one
  // without that unit is refused, not counted at another unit's rate.
  if (device_unit(device, bits) != dtype) {
    std::string having;
    for (const DevicePeaks& d : kDevices)
      if (device_unit(d, bits) == dtype) having += (having.empty() ? "" : ", ") + std::string(d.name);
    throw UsageError(fmt::format("accounting: {} has no {} unit (it would run {} at its {} rate); give dtype={} or "
                                 "a device with one: {}", device.name, dtype, dtype, device_unit(device, bits),
                                 device_unit(device, bits), having));
  }
  const double peak = device_peak(device, bits);

  // --- matmuls -------------------------------------------------------------
  Table matmul{"accounting_matmul",
               "FLOPs of matrix products: 2 m n k",
               {{"name", ""}, {"m", ""}, {"n", ""}, {"k", ""}, {"flops", "FLOP"}},
               {},
               {"C[m x n] = A[m x k] B[k x n] takes m n k multiplications and as many additions "
                "(counting the first add to zero): 2 m n k FLOPs.",
                "two_layer: the lecture's x[B x D] @ w1[D x D] @ w2[D x K]; with B = 16384 = 2^14, "
                "D = 32768 = 2^15, K = 8192 = 2^13 the forward pass is 2 B D D + 2 B D K = 2^45 + "
                "2^43 = 5 x 2^43 = 4.398e13 FLOPs."}};
  const auto mm = [](double a, double b, double c) { return 2 * a * b * c; };
  const double layer1 = mm(B, D, D), layer2 = mm(B, K, D);
  const std::vector<std::vector<Cell>> mm_rows = {
      {std::string("matmul"), p.integer("m"), p.integer("n"), p.integer("k"), mm(m, n, k)},
      {std::string("two_layer_w1"), p.integer("batch"), p.integer("d_model"), p.integer("d_model"),
       layer1},
      {std::string("two_layer_w2"), p.integer("batch"), p.integer("d_out"), p.integer("d_model"),
       layer2},
      {std::string("two_layer_forward"), std::monostate{}, std::monostate{}, std::monostate{},
       layer1 + layer2},
  };
  for (std::size_t i = 0; i < mm_rows.size(); ++i)
    if (ctx.shard.owns(i)) matmul.add(i, mm_rows[i]);

  // --- a model's passes ----------------------------------------------------
  const double achieved = peak * mfu * static_cast<double>(devices);
  Table model{"accounting_model",
              "FLOPs of a model's forward, backward and training step: 2, 4, 6 x tokens x "
              "parameters",
              {{"model", ""},
               {"pass", ""},
               {"multiplier", ""},
               {"params", ""},
               {"tokens", ""},
               {"flops", "FLOP"},
               {"seconds", "s"}},
              {},
              {"seconds: on " + std::to_string(devices) + " x " + std::string(device.name) + " at " +
                   dtype + " dense peak " + py_repr(peak / kTera) + " TFLOP/s and MFU " +
                   py_repr(mfu) + ".",
               "two_layer: parameters D^2 + D K, tokens B, so 2 x tokens x params is the forward "
               "FLOP count of accounting_matmul."}};
  struct Model {
    std::string name;
    double params, tokens;
  };
  const std::vector<Model> models = {{"model", params, tokens}, {"two_layer", D * D + D * K, B}};
  const std::vector<std::pair<std::string, int>> passes = {
      {"forward", 2}, {"backward", 4}, {"train_step", 6}};
  std::uint64_t g = 0;
  for (const Model& md : models)
    for (const auto& [pass, mult] : passes) {
      const double f = mult * md.tokens * md.params;
      if (ctx.shard.owns(g))
        model.add(g, {md.name, pass, std::int64_t{mult}, md.params, md.tokens, f, f / achieved});
      ++g;
    }

  // --- MFU -----------------------------------------------------------------
  Table mfu_table{"accounting_mfu",
                  "Model FLOPs utilisation of " + fmt::format("{:g}", flops) + " FLOPs in " + fmt::format("{:g}", seconds) +
                      " s",
                  {{"device", ""},
                   {"dtype", ""},
                   {"flops", "FLOP"},
                   {"seconds", "s"},
                   {"achieved_tflops", "TFLOP/s"},
                   {"peak_tflops", "TFLOP/s"},
                   {"mfu", ""}},
                  {},
                  {"mfu = (flops / seconds) / dense peak of the device for the dtype (per device; "
                   "divide by the device count for a multi-device run). Above 1 the device cannot do "
                   "that work in that time. Peaks: see accounting_budget's notes.",
                   "A dtype a device has no unit for is counted at the next wider unit it has, and "
                   "its row says so: fp8 on an A100 at its bf16 rate, fp4 on an H100 or H200 at its "
                   "fp8 rate."}};
  for (std::size_t i = 0; i < kDevices.size(); ++i) {
    const double pk = device_peak(kDevices[i], bits);
    if (ctx.shard.owns(i))
      mfu_table.add(i, {std::string(kDevices[i].name), dtype_label(kDevices[i], bits, dtype), flops, seconds,
                        flops / seconds / kTera, pk / kTera, flops / seconds / pk});
  }

  // --- budgets ---------------------------------------------------------------
  Table budgets{"accounting_budget",
                "Device time of a FLOP budget at MFU " + py_repr(mfu),
                {{"budget", ""},
                 {"flops", "FLOP"},
                 {"device", ""},
                 {"peak", ""},
                 {"peak_tflops", "TFLOP/s"},
                 {"mfu", ""},
                 {"device_days", "days"},
                 {"days", "days"},
                 {"devices", ""}},
                {},
                {"device_days = flops / (peak x mfu) / 86400; days = device_days / devices.",
                 "gpt3: 3.14e23 FLOPs (Brown et al. 2020, arXiv 2005.14165, Table D.1). gpt4: the "
                 "rumoured 2e25 FLOPs (not published by OpenAI).",
                 "The lecture divides GPT-4's 2e25 by 1979e12 x 0.5 and gets 2.34e5 H100-days. "
                 "1979 TFLOP/s is H100 SXM's BF16 peak *with 2:4 sparsity* (the datasheet's "
                 "footnote; it equals the dense FP8 peak). Dense BF16 is 989 TFLOP/s, so MFU 0.5 "
                 "of it takes 2e25 / (989e12 x 0.5) / 86400 = 4.68e5 H100-days: twice as long. "
                 "Both rows are shown; h100_sxm_sparse_bf16 is the lecture's.",
                 "Peaks per device: " + std::string(kDevices[0].source) + "; " +
                     std::string(kDevices[1].source) + "; " + std::string(kDevices[2].source) +
                     "; " + std::string(kDevices[3].source) + "."}};
  struct Budget {
    std::string name;
    double flops;
  };
  const std::vector<Budget> budget_rows = {{"gpt3", 3.14e23}, {"gpt4", 2e25}, {"given", budget}};
  g = 0;
  for (const Budget& b : budget_rows) {
    const auto row = [&](std::string dev, std::string kind, double pk) {
      if (ctx.shard.owns(g)) {
        const double dd = b.flops / (pk * mfu) / kSecondsPerDay;
        budgets.add(g, {b.name, b.flops, std::move(dev), std::move(kind), pk / kTera, mfu, dd,
                        dd / static_cast<double>(devices), devices});
      }
      ++g;
    };
    for (const DevicePeaks& d : kDevices)
      row(std::string(d.name), peak_label(d, bits, dtype), device_peak(d, bits));
    // The lecture's figure: H100's sparse bf16 peak, 2 x 989 (the datasheet prints 1979).
    row("h100_sxm_sparse_bf16", "bf16_sparse", 1979 * kTera);
  }
  return {matmul, model, mfu_table, budgets};
}

// The report's headline figures from this experiment's tables.
void headline_figures(const std::vector<Table>& tables, Headlines& h) {
  h.add("two-layer forward FLOPs (B=16384, D=32768, K=8192)",
      formatted(lookup(tables, "accounting_matmul", {{"name", "two_layer_forward"}}, "flops"), "{:.4g}"), "4.398e13 (lecture)",
      "accounting_matmul");
  h.add("GPT-4 (2e25 FLOPs) H100-days at MFU 0.5: lecture's 1979e12 / dense 989e12",
      fmt::format("{} / {}",
                  cell_text(formatted(lookup(tables, "accounting_budget", {{"budget", "gpt4"}, {"device", "h100_sxm_sparse_bf16"}}, "device_days"), "{:.3g}")),
                  cell_text(formatted(lookup(tables, "accounting_budget", {{"budget", "gpt4"}, {"device", "h100_sxm"}}, "device_days"), "{:.3g}"))),
      "2.34e5 / 4.68e5: 1979 TFLOP/s is the sparse peak", "accounting_budget");
}

}  // namespace

Experiment accounting_experiment() {
  const double big = 9.0e15;  // sizes up to 2^53: exact in double
  return {
      .name = "accounting",
      .summary = "FLOPs of matmuls and training (2/4/6 x tokens x params), MFU, device-days of a budget",
      .params = {
          {"m", ParamType::integer, "1024", 1, big, "matmul rows of A and C", {}, false},
          {"n", ParamType::integer, "1024", 1, big, "matmul columns of B and C", {}, false},
          {"k", ParamType::integer, "1024", 1, big, "matmul inner dimension", {}, false},
          {"batch", ParamType::integer, "16384", 1, big, "two-layer example: batch B", {}, false},
          {"d_model", ParamType::integer, "32768", 1, big, "two-layer example: width D", {}, false},
          {"d_out", ParamType::integer, "8192", 1, big, "two-layer example: output K", {}, false},
          {"params", ParamType::real, "175e9", 1, 1e16, "model parameter count (GPT-3: 175e9)", {},
           false},
          {"tokens", ParamType::real, "300e9", 1, 1e18, "training tokens (GPT-3: 300e9)", {}, false},
          {"flops", ParamType::real, "4.398046511104e13", 1, 1e30,
           "measured work for MFU, FLOPs (default: the two-layer forward)", {}, false},
          {"seconds", ParamType::real, "0.1", 1e-12, 1e12, "measured time of that work, s", {},
           false},
          {"budget", ParamType::real, "2e25", 1, 1e30, "a FLOP budget to convert to device-days",
           {}, false},
          {"mfu", ParamType::real, "0.5", 1e-6, 1, "model FLOPs utilisation assumed", {}, false},
          {"devices", ParamType::integer, "1", 1, 1e9, "devices running in parallel", {}, false},
          {"device", ParamType::text, "h100_sxm", 0, 0, "accelerator whose peak is used",
           {"h100_sxm", "a100_sxm", "h200_sxm", "b200"}, false},
          {"dtype", ParamType::text, "bf16", 0, 0,
           "operand type whose dense peak is used (the device must have a unit for it)",
           {"fp32", "bf16", "fp8", "fp4"}, false},
      },
      .report_params = {{"mfu", "0.5"}, {"budget", "2e25"}},
      .run = run,
      .place = 60,
      .headlines = headline_figures,
      .regression = {.pinned = true},
  };
}

}  // namespace lplab::experiments
