// matrix_units: the instruction each generation runs, the table's rows
// against the scalar chain of the presets (kernels::mma_chain, which the
// MMA-Sim goldens pin) on operands drawn here, the block-scaled rows against
// a loop written here, and the figures a wrong model would get wrong
// (Hopper's 13-bit FP8 accumulation against Blackwell's 25 bits).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/kernels/mma.h"
#include "lplab/kernels/random.h"
#include "support/samples.h"
#include "lplab/kernels/scaling.h"

namespace lplab::experiments {
namespace {

namespace k = lplab::kernels;

std::vector<Table> run_with(const std::map<std::string, std::string>& given, std::vector<std::string> dtypes) {
  const Experiment* e = find_experiment("matrix_units");
  EXPECT_NE(e, nullptr);
  Params p(e->params, given, e->name);
  Progress prog;
  std::vector<const FormatEntry*> d;
  for (const std::string& s : dtypes) d.push_back(find_format(s));
  Context ctx{p, d, {}, "", {}, prog, 1};
  std::vector<Table> tables = e->run(ctx);
  e->summarize(tables);
  return tables;
}

const Table& table(const std::vector<Table>& ts, const std::string& id) {
  for (const Table& t : ts)
    if (t.id == id) return t;
  throw std::runtime_error("no table " + id);
}
double num(const Table& t, const Row& r, const char* col) { return cell_number(r.cells[t.column(col)]); }
std::string text(const Table& t, const Row& r, const char* col) {
  const Cell& c = r.cells[t.column(col)];
  return std::holds_alternative<std::string>(c) ? std::get<std::string>(c) : "";
}
const Row* find_row(const Table& t, const std::map<std::string, std::string>& match) {
  for (const Row& r : t.rows) {
    bool ok = true;
    for (const auto& [col, v] : match) ok = ok && (text(t, r, col.c_str()) == v || cell_text(r.cells[t.column(col)]) == v);
    if (ok) return &r;
  }
  return nullptr;
}

// The operand samples, as the experiment documents them (matmul_error's):
// Box-Muller on two splitmix64 outputs keyed by (seed, stream), streams 2k
// (A) and 2k + 1 (B).
double sample(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  return lplab::testing::documented_gaussian(seed, stream, i);
}

template <class T>
std::vector<double> operand(std::uint64_t seed, std::uint64_t stream, std::size_t count, bool positive) {
  std::vector<double> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    const double s = sample(seed, stream, i);
    v[i] = static_cast<double>(convert<T>(positive ? std::abs(s) : s, Round::nearest_even, Overflow::ieee));
  }
  return v;
}

struct Errors {
  double mean = 0, max = 0, norm = 0;
};
// Relative errors of d against the exact sums.
Errors errors(const std::vector<double>& d, const std::vector<long double>& exact) {
  Errors e;
  long double d2 = 0, r2 = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const long double diff = std::abs(static_cast<long double>(d[i]) - exact[i]);
    const double rel = diff == 0 ? 0.0 : static_cast<double>(diff / std::abs(exact[i]));
    e.mean += rel / static_cast<double>(d.size());
    e.max = std::max(e.max, rel);
    d2 += diff * diff;
    r2 += exact[i] * exact[i];
  }
  e.norm = static_cast<double>(std::sqrt(d2 / r2));
  return e;
}

TEST(MatrixUnits, each_generation_runs_its_widest_instruction_of_the_inputs_layout) {
  const auto tables = run_with({{"ks", "64"}, {"m", "1"}, {"n", "1"}, {"distributions", "normal"}, {"block_schemes", "nvfp4"}},
                               {"float8_e4m3fn", "bfloat16"});
  const Table& t = table(tables, "matrix_units");
  std::map<std::string, std::vector<std::string>> chosen;  // input -> instructions, promotion-less rows
  for (const Row& r : t.rows)
    if (num(t, r, "promote_every") == 0) chosen[text(t, r, "input")].push_back(text(t, r, "instruction"));
  EXPECT_EQ(chosen["float8_e4m3fn"],
            (std::vector<std::string>{"ada.mma.m16n8k32.f32.e4m3.e4m3.f32", "hopper.wgmma.f32.e4m3.e4m3",
                                      "blackwell.tcgen05.f8f6f4.f32.e4m3.e4m3",
                                      "rtx_blackwell.mma.m16n8k32.f32.e4m3.e4m3.f32",
                                      "cdna3.mfma.f32_16x16x32_fp8_fp8"}));
  EXPECT_EQ(chosen["bfloat16"],
            (std::vector<std::string>{"ampere.mma.m16n8k16.f32.bf16.bf16.f32", "ada.mma.m16n8k16.f32.bf16.bf16.f32",
                                      "hopper.wgmma.f32.bf16.bf16", "blackwell.tcgen05.f16.f32.bf16.bf16",
                                      "rtx_blackwell.mma.m16n8k16.f32.bf16.bf16.f32", "cdna1.mfma.f32_16x16x8bf16",
                                      "cdna2.mfma.f32_16x16x16bf16_1k", "cdna3.mfma.f32_16x16x16_bf16"}));
  // Every row of the grid once, in order: the plain rows, then the block rows.
  const Table& b = table(tables, "matrix_units_block_scaled");
  ASSERT_EQ(b.rows.size(), 2u);
  for (std::size_t i = 0; i < t.rows.size(); ++i) EXPECT_EQ(t.rows[i].grid, i);
  EXPECT_EQ(b.rows[0].grid, t.rows.size());
  EXPECT_EQ(text(b, b.rows[1], "instruction"), "blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3");
}

// Each row against the presets' scalar chain, one output at a time, on
// operands drawn and rounded here; promotion as DeepSeek-V3 describes it
// (each chain of 128 products added into an fp32 sum, nearest-even).
TEST(MatrixUnits, rows_equal_the_scalar_chain_of_each_preset) {
  const std::size_t m = 2, n = 3, kk = 256;
  const std::uint64_t seed = 5;
  const auto tables = run_with({{"ks", "256"}, {"m", "2"}, {"n", "3"}, {"distributions", "half_normal"},
                                {"seed", "5"}, {"promote_every", "128"}, {"block_schemes", "mxfp4"}},
                               {"float8_e4m3fn", "float16"});
  const Table& t = table(tables, "matrix_units");
  std::size_t checked = 0;
  for (const Row& r : t.rows) {
    const k::MmaInstruction* inst = k::find_mma_instruction(text(t, r, "instruction"));
    ASSERT_NE(inst, nullptr);
    const bool fp8 = text(t, r, "input") == "float8_e4m3fn";
    const std::vector<double> a = fp8 ? operand<float8_e4m3fn>(seed, 2 * kk, m * kk, true)
                                      : operand<float16>(seed, 2 * kk, m * kk, true);
    const std::vector<double> b = fp8 ? operand<float8_e4m3fn>(seed, 2 * kk + 1, kk * n, true)
                                      : operand<float16>(seed, 2 * kk + 1, kk * n, true);
    const auto every = static_cast<std::size_t>(num(t, r, "promote_every"));
    std::vector<double> d(m * n);
    std::vector<long double> exact(m * n, 0.0L);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        std::vector<double> ar(a.begin() + static_cast<std::ptrdiff_t>(i * kk),
                               a.begin() + static_cast<std::ptrdiff_t>((i + 1) * kk)),
            bc(kk);
        for (std::size_t p = 0; p < kk; ++p) {
          bc[p] = b[p * n + j];
          exact[i * n + j] += static_cast<long double>(ar[p]) * static_cast<long double>(bc[p]);
        }
        if (every == 0) {
          d[i * n + j] = k::mma_chain(*inst, ar, bc, 0.0);
        } else {
          float acc = 0.0f;
          for (std::size_t s = 0; s < kk; s += every)
            acc += static_cast<float>(k::mma_chain(*inst, std::span(ar).subspan(s, every),
                                                   std::span(bc).subspan(s, every), 0.0));
          d[i * n + j] = acc;
        }
      }
    const Errors e = errors(d, exact);
    // The table's reference is the exact sum rounded to 53 bits: the
    // relative errors agree to far better than 1e-9 of themselves.
    EXPECT_NEAR(num(t, r, "rel_err_max"), e.max, 1e-9 * e.max) << inst->name << " promote " << every;
    EXPECT_NEAR(num(t, r, "rel_err_mean"), e.mean, 1e-9 * e.mean) << inst->name << " promote " << every;
    EXPECT_NEAR(num(t, r, "rel_err_norm"), e.norm, 1e-9 * e.norm) << inst->name << " promote " << every;
    ++checked;
  }
  EXPECT_EQ(checked, 2u * (5 + 10));  // (5 fp8 + 10 fp16 generations) x with and without promotion
}

// The block-scaled rows: the quantization alone against the exact product
// of the dequantized operands (a loop here), the instruction against the
// presets' scalar chain on the elements and scales.
TEST(MatrixUnits, block_scaled_rows_equal_a_plain_loop_and_the_scalar_chain) {
  const std::size_t m = 2, n = 2, kk = 128;
  const std::uint64_t seed = 9;
  const auto tables = run_with({{"ks", "128"}, {"m", "2"}, {"n", "2"}, {"distributions", "normal"}, {"seed", "9"},
                                {"block_schemes", "nvfp4"}},
                               {"float16"});
  const Table& t = table(tables, "matrix_units_block_scaled");
  ASSERT_EQ(t.rows.size(), 2u);
  std::vector<float> a(m * kk), bt(n * kk);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(sample(seed, 2 * kk, i));
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t p = 0; p < kk; ++p) bt[j * kk + p] = static_cast<float>(sample(seed, 2 * kk + 1, p * n + j));
  std::vector<float4_e2m1fn> qa(a.size()), qb(bt.size());
  std::vector<float8_e4m3fn> sa(a.size() / 16), sb(bt.size() / 16);
  float ta = 0, tb = 0;
  k::quantize(k::nvfp4, a, qa, sa, &ta);
  k::quantize(k::nvfp4, bt, qb, sb, &tb);
  std::vector<float> da(a.size()), db(bt.size());
  k::dequantize(k::nvfp4, qa, sa, da, ta);
  k::dequantize(k::nvfp4, qb, sb, db, tb);
  const k::MmaInstruction* inst = k::find_mma_instruction(text(t, t.rows[1], "instruction"));
  ASSERT_NE(inst, nullptr);
  std::vector<double> quantized(m * n), instruction(m * n);
  std::vector<long double> exact(m * n, 0.0L);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      long double q = 0;
      std::vector<double> ea(kk), eb(kk), esa(kk / 16), esb(kk / 16);
      for (std::size_t p = 0; p < kk; ++p) {
        exact[i * n + j] += static_cast<long double>(a[i * kk + p]) * bt[j * kk + p];
        q += static_cast<long double>(da[i * kk + p]) * db[j * kk + p];
        ea[p] = static_cast<double>(qa[i * kk + p]);
        eb[p] = static_cast<double>(qb[j * kk + p]);
      }
      for (std::size_t s = 0; s < kk / 16; ++s) {
        esa[s] = static_cast<double>(sa[i * kk / 16 + s]);
        esb[s] = static_cast<double>(sb[j * kk / 16 + s]);
      }
      quantized[i * n + j] = static_cast<float>(q);
      instruction[i * n + j] = static_cast<float>(k::mma_chain(*inst, ea, eb, 0.0, esa, esb) /
                                                  (static_cast<double>(ta) * static_cast<double>(tb)));
    }
  EXPECT_EQ(text(t, t.rows[0], "path"), "quantized, exact sum");
  EXPECT_EQ(text(t, t.rows[1], "path"), "quantized, instruction");
  const Errors eq = errors(quantized, exact), ei = errors(instruction, exact);
  EXPECT_NEAR(num(t, t.rows[0], "rel_err_norm"), eq.norm, 1e-9 * eq.norm);
  EXPECT_NEAR(num(t, t.rows[1], "rel_err_norm"), ei.norm, 1e-9 * ei.norm);
  EXPECT_NEAR(num(t, t.rows[0], "rel_err_max"), eq.max, 1e-9 * eq.max);
  EXPECT_NEAR(num(t, t.rows[1], "rel_err_max"), ei.max, 1e-9 * ei.max);
  // NVFP4 keeps 2 significant bits per element: percent-level error.
  EXPECT_GT(eq.norm, 1e-2);
  EXPECT_LT(eq.norm, 0.5);
}

// A recipe's fprop: nvfp4_training quantizes A (activations) in 1 x 16 blocks
// and B (weights, n = 20 rows: a whole 16-row block and a partial one) in
// 16 x 16 blocks, in TE's order, and runs its Blackwell preset; the row is
// that instruction's chain with B's scales read from its block grid here.
TEST(MatrixUnits, recipes_run_their_fprop_operands_through_their_preset) {
  const std::size_t m = 2, n = 20, kk = 64;
  const std::uint64_t seed = 3;
  const auto tables = run_with({{"ks", "64"}, {"m", "2"}, {"n", "20"}, {"distributions", "normal"}, {"seed", "3"},
                                {"block_schemes", "nvfp4_training,mxfp8"}},
                               {"float16"});
  const Table& t = table(tables, "matrix_units_block_scaled");
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(text(t, t.rows[1], "scheme"), "nvfp4_training");
  EXPECT_EQ(text(t, t.rows[1], "instruction"), "blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3");
  EXPECT_EQ(text(t, t.rows[3], "instruction"), "blackwell.tcgen05.mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0");
  std::vector<float> a(m * kk), bt(n * kk);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(sample(seed, 2 * kk, i));
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t p = 0; p < kk; ++p) bt[j * kk + p] = static_cast<float>(sample(seed, 2 * kk + 1, p * n + j));
  std::vector<float4_e2m1fn> qa(a.size()), qb(bt.size());
  std::vector<float8_e4m3fn> sa(m * kk / 16), sb(2 * kk / 16);
  float ta = 0, tb = 0;
  k::quantize(k::nvfp4_te, std::span<const float>(a), kk, std::span(qa), std::span(sa), &ta);
  k::quantize(k::nvfp4_te_2d, std::span<const float>(bt), kk, std::span(qb), std::span(sb), &tb);
  const k::MmaInstruction* inst = k::find_mma_instruction(text(t, t.rows[1], "instruction"));
  ASSERT_NE(inst, nullptr);
  constexpr double M = 6.0 * 448.0;
  const double alpha = static_cast<double>(ta * tb / static_cast<float>(M * M));  // TE's GEMM alpha
  std::vector<double> instruction(m * n);
  std::vector<long double> exact(m * n, 0.0L);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::vector<double> ea(kk), eb(kk), esa(kk / 16), esb(kk / 16);
      for (std::size_t p = 0; p < kk; ++p) {
        exact[i * n + j] += static_cast<long double>(a[i * kk + p]) * bt[j * kk + p];
        ea[p] = static_cast<double>(qa[i * kk + p]);
        eb[p] = static_cast<double>(qb[j * kk + p]);
      }
      for (std::size_t q = 0; q < kk / 16; ++q) {
        esa[q] = static_cast<double>(sa[i * kk / 16 + q]);
        esb[q] = static_cast<double>(sb[(j / 16) * (kk / 16) + q]);  // row j's 16 x 16 block
      }
      instruction[i * n + j] = static_cast<float>(k::mma_chain(*inst, ea, eb, 0.0, esa, esb) * alpha);
    }
  const Errors ei = errors(instruction, exact);
  EXPECT_NEAR(num(t, t.rows[1], "rel_err_norm"), ei.norm, 1e-9 * ei.norm);
  EXPECT_NEAR(num(t, t.rows[1], "rel_err_max"), ei.max, 1e-9 * ei.max);
  EXPECT_GT(ei.norm, 1e-2);
  EXPECT_LT(ei.norm, 0.5);
}

// What the models say about FP8 at k = 4096 with all-positive products:
// Hopper's and Ada's 13 fraction bits lose about 2^-13 per chained
// instruction's sum (DeepSeek-V3 3.3.2: "nearly 2%" at this k), promotion
// every 128 products removes most of it, and Blackwell's 25 bits do not
// lose it at all. The summary table reads the same rows.
TEST(MatrixUnits, hopper_fp8_truncates_blackwell_does_not_and_promotion_fixes_hopper) {
  const auto tables = run_with({{"ks", "4096"}, {"m", "4"}, {"n", "4"}, {"distributions", "half_normal"},
                                {"block_schemes", "mxfp8_e4m3"}},
                               {"float8_e4m3fn"});
  const Table& t = table(tables, "matrix_units");
  auto err = [&](const char* gen, const char* every) {
    const Row* r = find_row(t, {{"generation", gen}, {"promote_every", every}});
    EXPECT_NE(r, nullptr) << gen;
    return r == nullptr ? -1.0 : num(t, *r, "rel_err_max");
  };
  const double hopper = err("Hopper (sm_90a)", "0"), hopper_promoted = err("Hopper (sm_90a)", "128");
  const double blackwell = err("Blackwell (sm_100a)", "0");
  EXPECT_GT(hopper, 1e-2);
  EXPECT_LT(hopper, 0.2);
  EXPECT_LT(hopper_promoted, hopper / 10);
  EXPECT_LT(blackwell, hopper / 1000);
  EXPECT_GT(err("Ada Lovelace (sm_89)", "0"), 1e-2);  // Ada's FP8 keeps 13 fraction bits too
  const Table& s = table(tables, "matrix_units_summary");
  const Row* h = nullptr;
  for (const Row& r : s.rows)
    if (text(s, r, "generation") == "Hopper (sm_90a)") h = &r;
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(num(s, *h, "float8_e4m3fn"), hopper);
  EXPECT_EQ(num(s, *h, "float8_e4m3fn_promoted"), hopper_promoted);
}

TEST(MatrixUnits, refuses_formats_without_a_unit_and_ks_the_block_instruction_cannot_take) {
  EXPECT_THROW(run_with({{"ks", "64"}}, {"float8_e4m3b11fnuz"}), UsageError);
  try {
    run_with({{"ks", "96"}, {"block_schemes", "mxfp4"}}, {"float16"});
    ADD_FAILURE() << "k = 96 accepted for mxfp4";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("k = 96 is not a whole number of blackwell.tcgen05.mxf4"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lplab::experiments
