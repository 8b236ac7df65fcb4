// Baselines of the kernels and the experiments: MX/NVFP4/per-tensor scaling
// of fixed blocks, matmuls of fixed operands under every accumulator model,
// and fixed-seed runs of the deterministic experiments.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <cmath>
#include <limits>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/regress/golden.h"
#include "lplab/experiments/runner.h"
#include "lplab/lab/table.h"
#include "lplab/lab/vocabulary.h"
#include "lplab/kernels/matmul.h"
#include "lplab/experiments/sampling.h"
#include "lplab/experiments/scaled.h"

namespace lplab::experiments::golden_detail {
namespace {

constexpr std::size_t kBlock = 32;  // one MX block (OCP MX v1.0: k = 32), two NVFP4 blocks

struct Block {
  std::string name;
  std::vector<float> x;
};

std::vector<Block> fixed_blocks() {
  std::vector<Block> b;
  auto fill = [](auto f) {
    std::vector<float> x(kBlock);
    for (std::size_t i = 0; i < kBlock; ++i) x[i] = f(static_cast<int>(i));
    return x;
  };
  // 1. A ramp from -1.9375 to 1.9375 in steps of 1/8: the element grid near 1.
  b.push_back({"ramp", fill([](int i) { return (static_cast<float>(i) - 15.5f) / 8.0f; })});
  // 2. A seeded N(0, 1) sample.
  b.push_back({"normal", sampling::to_float(sampling::normal(kBlock, 1.0, 7))});
  // 3. One outlier of 1000 among values near 1: the small ones underflow in
  //    the narrow element formats under the outlier's shared scale.
  b.push_back({"outlier", fill([](int i) { return i == 5 ? 1000.0f : 1.0f + static_cast<float>(i) / 64; })});
  // 4. Values near 1e-30: scales far below 1.
  b.push_back({"tiny", fill([](int i) { return 1e-30f * (1.0f + static_cast<float>(i) / 16); })});
  // 5. All zero: the scale of an amax of 0.
  b.push_back({"zeros", std::vector<float>(kBlock, 0.0f)});
  // 6. Values near float's largest: the scale's upper clamp.
  b.push_back({"huge", fill([](int i) { return 3e38f * (i % 2 == 0 ? 1.0f : -0.5f); })});
  // 7. A NaN and an infinity in otherwise plain blocks.
  std::vector<float> special = fill([](int i) { return static_cast<float>(i % 7) - 3.0f; });
  special[3] = std::numeric_limits<float>::quiet_NaN();
  special[20] = std::numeric_limits<float>::infinity();
  b.push_back({"specials", special});
  return b;
}

}  // namespace

GoldenFile blocks_suite() {
  GoldenFile f{"blocks",
               "MX, NVFP4, per-tensor FP8 (current and delayed) and DeepSeek-V3 tile scaling of fixed 32-element blocks",
               {"SCHEME BLOCK[i] = y elem: y the dequantized value, elem the element's value "
                "before scaling back (y / elem is the block's scale)",
                "the _delayed and deepseek_ schemes read each block as a 4 x 8 matrix: four steps of "
                "delayed scaling (the first at scale 1), four 1 x 128 tiles, one 128 x 128 block"},
               {}};
  const std::vector<Block> blocks = fixed_blocks();
  for (std::string_view scheme : scaled::scheme_names()) {
    for (const Block& b : blocks) {
      // As a 4 x 8 matrix: four delayed-scaling steps, four 1 x 128 tiles
      // (one a row), one 128 x 128 block; the other schemes read it flat.
      const scaled::RoundTrip r = scaled::round_trip(scheme, b.x, kBlock / 4);
      for (std::size_t i = 0; i < b.x.size(); ++i)
        f.entries.push_back({fmt::format("{} {}[{}] ({})", scheme, b.name, i, shortest(b.x[i])),
                             fmt::format("{} {}", shortest(r.y[i]), shortest(r.elem[i]))});
    }
  }
  return f;
}

namespace {

constexpr std::size_t kM = 4, kN = 4, kK = 256;

// E4M3 operands from a seeded SplitMix64 stream: "random" takes any finite code,
// "integers" the integers -8..8, whose products and sums are exact in float
// in any order (so that the fp32 accumulator, whose summation order Eigen
// chooses per instruction set, is deterministic too).
std::vector<float8_e4m3fn> operand(std::size_t n, std::uint64_t seed, bool integers) {
  std::vector<float8_e4m3fn> x(n);
  sampling::Rng rng(seed);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = rng.next();
    if (integers) {
      x[i] = float8_e4m3fn(static_cast<float>(static_cast<int>(h % 17) - 8));
    } else {
      std::uint64_t code = h & 0xFF;
      if ((code & 0x7F) == 0x7F) code &= 0x80;  // the NaN codes become zeros
      x[i] = float8_e4m3fn::from_bits(code);
    }
  }
  return x;
}

struct AccCase {
  std::string name;
  kernels::MatmulOptions options;
};

}  // namespace

GoldenFile kernels_suite() {
  GoldenFile f{"kernels",
               "4x256 by 256x4 E4M3 matmuls under every accumulator model, into float",
               {"OPERANDS ACCUMULATOR C[i,j] = value; the operands are E4M3 codes drawn from "
                "SplitMix64 streams (seeds 1 and 2) (random: any finite code; integers: -8..8)"},
               {}};
  using kernels::Accumulator;
  std::vector<AccCase> cases = {
      {"fp64", {.accumulator = Accumulator::fp64}},
      {"fp16", {.accumulator = Accumulator::fp16}},
      {"bf16", {.accumulator = Accumulator::bf16}},
      {"tensor_core", {.accumulator = Accumulator::tensor_core}},
      {"tensor_core(promote_every=128)", {.accumulator = kernels::accumulators::tensor_core.promoted_every(128)}},
      {"bf16_dot2", {.accumulator = Accumulator::bf16_dot2}},
      {"fp64(scale_a=2^-3,toward_zero)",
       {.accumulator = Accumulator::fp64, .scale_a = 0.125f, .round = Round::toward_zero}},
  };
  for (bool integers : {false, true}) {
    const std::vector<float8_e4m3fn> a = operand(kM * kK, 1, integers);
    const std::vector<float8_e4m3fn> b = operand(kK * kN, 2, integers);
    std::vector<AccCase> run = cases;
    if (integers) run.push_back({"fp32", {.accumulator = Accumulator::fp32}});
    for (const AccCase& c : run) {
      std::vector<float> out(kM * kN);
      kernels::matmul(kM, kN, kK, a.data(), b.data(), out.data(), c.options);
      for (std::size_t i = 0; i < kM; ++i)
        for (std::size_t j = 0; j < kN; ++j)
          f.entries.push_back({fmt::format("{} {} C[{},{}]", integers ? "integers" : "random", c.name, i, j),
                               shortest(out[i * kN + j])});
    }
    // Into bfloat16 with stochastic rounding: element i takes the random
    // bits of stochastic_bits(seed, i).
    std::vector<bfloat16> sr(kM * kN);
    kernels::matmul(kM, kN, kK, a.data(), b.data(), sr.data(),
                    {.accumulator = Accumulator::fp64, .round = Round::stochastic, .seed = 3});
    for (std::size_t i = 0; i < kM * kN; ++i)
      f.entries.push_back({fmt::format("{} fp64->bfloat16(stochastic,seed=3) C[{},{}]",
                                       integers ? "integers" : "random", i / kN, i % kN),
                           fmt::format("0x{:04x}", sr[i].bits())});
  }
  return f;
}

GoldenFile experiments_suite() {
  // Every pinned experiment (Experiment::regression), at the report's --quick
  // sizes with fixed seeds. The kernels give the same bits on every SIMD
  // target, so most results are compared exactly; an experiment states the
  // rows whose results go through a computation whose order or precision
  // depends on the instruction set, and their relative tolerance.
  GoldenFile f{"experiments",
               "fixed-seed runs of the deterministic experiments at the report's --quick sizes",
               {"EXPERIMENT TABLE #ROW (ROW'S NAMES) COLUMN = value [~ relative tolerance]"},
               {}};
  for (const Experiment& experiment : experiments()) {
    if (!experiment.regression.pinned) continue;
    const Experiment* e = &experiment;
    const std::string& name = e->name;
    const auto& tolerance_of = e->regression.tolerance;
    RunRequest request;
    request.experiment = name;
    request.params = e->report_params;
    for (const auto& [k, v] : e->quick_params) request.params[k] = v;
    request.threads = 2;
    Progress progress;
    const RunResult result = execute(prepare(request), progress);
    for (const Table& t : result.tables) {
      for (std::size_t r = 0; r < t.rows.size(); ++r) {
        const Row& row = t.rows[r];
        std::vector<std::string> texts;
        for (const Cell& c : row.cells)
          if (std::holds_alternative<std::string>(c)) texts.push_back(std::get<std::string>(c));
        const std::string names = fmt::format("{}", fmt::join(texts, " "));
        const double row_tolerance = tolerance_of ? tolerance_of(t.id, texts) : 0.0;
        for (std::size_t col = 0; col < t.columns.size() && col < row.cells.size(); ++col) {
          const Column& column = t.columns[col];
          if (column.unit == "s" || column.unit == "GB/s" || column.unit == "GFLOP/s") continue;
          const Cell& c = row.cells[col];
          const bool real = std::holds_alternative<double>(c);
          const double tol = real ? row_tolerance : 0;
          f.entries.push_back({fmt::format("{} {} #{} ({}) {}", name, t.id, r, names, column.name),
                               real ? shortest(std::get<double>(c)) : cell_text(c), tol});
        }
      }
    }
  }
  return f;
}

}  // namespace lplab::experiments::golden_detail
