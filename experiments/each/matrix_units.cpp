// matrix_units: what each GPU generation's matrix unit does to a dot product.
//
// The same operands go through every generation's instruction for their
// format -- NVIDIA mma from Volta to RTX Blackwell, Hopper wgmma, Blackwell
// tcgen05, AMD CDNA1-3 mfma, as MMA-Sim 2.1.1 models them (kernels/mma.h,
// docs/matrix-units.md) -- chained over k as a kernel's k loop chains them,
// with and without DeepSeek-V3's promotion into fp32 (arXiv 2412.19437,
// section 3.3.2). The units differ in the fraction bits they keep (F = 23 on
// Volta, 24 on Turing to Ada, 25 on Hopper and Blackwell, 13 for Hopper's
// and Ada's FP8), how many products they align at once and how they round;
// the table shows what that costs as k grows. A second table puts
// Blackwell's block-scaled instructions beside the MX/NVFP4 quantization of
// their operands alone.
//
// Setup. For each k, A (m x k) and B (k x n) hold N(0, 1) (or |N(0, 1)|)
// samples from streams 2k and 2k + 1 of the seed -- the very operands of
// matmul_error with the same seed -- rounded to nearest-even into the input
// format. An instruction takes a format when its operand type has the
// format's layout (exponent and mantissa widths): AMD's fp8 and bf8 (the
// FNUZ encodings) take E4M3 and E5M2 inputs, whose samples lie inside both
// encodings' ranges (an instruction whose type does not hold every operand
// value the run draws is left out). Each generation runs its instruction of that type with
// fp32 C and D and the most products per instruction (the one its GEMMs
// use). The reference is the exact sum of the same rounded operands, so the
// error is the unit's alone.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/lab/report_parts.h"
#include "lplab/experiments/runner.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/mma.h"
#include "lplab/experiments/recipe_rows.h"
#include "lplab/kernels/recipes.h"
#include "lplab/kernels/scaling.h"
#include "matmul_errors.h"
#include "lplab/experiments/sampling.h"

namespace lplab::experiments {
namespace {

namespace k = lplab::kernels;

// ---------------------------------------------------------------------------
// 1. Which instruction each generation runs.

// Whether the instruction's operand type `t` has the layout of format f.
bool takes(k::MmaType t, const FormatEntry& f) {
  const std::string_view name = k::mma_format_name(t);
  if (name.empty()) return false;
  const FormatEntry* g = find_format(name);
  return g != nullptr && g->info.exponent_bits == f.info.exponent_bits &&
         g->info.mantissa_bits == f.info.mantissa_bits;
}

// Per generation (Volta first, CDNA3 last), the instruction with A and B of
// f's layout, fp32 C and D and no block scale, whose operand type holds
// every value in `values` (the run's operands, distinct), with the most
// products per instruction; of those the last in the table, the
// generation's newest family (Hopper's wgmma, Blackwell's tcgen05 rather
// than their mma).
std::vector<const k::MmaInstruction*> instructions_for(const FormatEntry& f, const std::vector<double>& values) {
  std::vector<const k::MmaInstruction*> chosen;
  std::vector<std::pair<k::MmaType, bool>> holds;  // per operand type: whether it holds every value
  auto holds_all = [&](k::MmaType t) {
    for (const auto& [type, ok] : holds)
      if (type == t) return ok;
    const bool ok = std::all_of(values.begin(), values.end(), [&](double v) { return k::mma_holds(t, v); });
    holds.emplace_back(t, ok);
    return ok;
  };
  for (const k::MmaInstruction& i : k::mma_instructions()) {
    if (i.scale != k::MmaType::none || i.c != k::MmaType::f32 || i.d != k::MmaType::f32 || !takes(i.a, f) ||
        !takes(i.b, f) || !holds_all(i.a) || !holds_all(i.b))
      continue;
    auto same = std::find_if(chosen.begin(), chosen.end(), [&](const k::MmaInstruction* c) { return c->arch == i.arch; });
    if (same == chosen.end()) chosen.push_back(&i);
    else if (i.k >= (*same)->k) *same = &i;
  }
  // Generations in the order the table first names them (its mma rows:
  // Volta to RTX Blackwell, then CDNA1 to CDNA3).
  std::vector<std::string_view> order;
  for (const k::MmaInstruction& i : k::mma_instructions())
    if (std::find(order.begin(), order.end(), i.arch) == order.end()) order.push_back(i.arch);
  auto rank = [&](const k::MmaInstruction* i) { return std::find(order.begin(), order.end(), i->arch) - order.begin(); };
  std::stable_sort(chosen.begin(), chosen.end(), [&](auto* x, auto* y) { return rank(x) < rank(y); });
  return chosen;
}

// Blackwell's tcgen05 block-scaled instruction for a scheme: the element
// type on both sides, the scale type and block size the scheme's, the most
// products per instruction.
template <class Elem, class Scale>
const k::MmaInstruction* block_instruction(const k::BlockScaling<Elem, Scale>& s) {
  const k::MmaInstruction* best = nullptr;
  for (const k::MmaInstruction& i : k::mma_instructions()) {
    if (!i.name.starts_with("blackwell.tcgen05.") || i.scale == k::MmaType::none ||
        k::mma_format_name(i.a) != finfo<Elem>::name || k::mma_format_name(i.b) != finfo<Elem>::name ||
        k::mma_format_name(i.scale) != finfo<Scale>::name ||
        i.model.scale_block != s.block_size)
      continue;
    if (best == nullptr || i.k > best->k) best = &i;
  }
  return best;
}

// ---------------------------------------------------------------------------
// 2. The plain instructions.

// The distinct values of f's operands over the whole run (every
// distribution and k, A and B).
std::vector<double> operand_values(const FormatEntry& f, const Params& p) {
  const auto m = static_cast<std::size_t>(p.integer("m")), n = static_cast<std::size_t>(p.integer("n"));
  const auto seed = static_cast<std::uint64_t>(p.integer("seed"));
  std::vector<double> all;
  for (const std::string& dist : p.list("distributions"))
    for (double kv : p.numbers("ks")) {
      const auto kk = static_cast<std::size_t>(kv);
      for (const auto& [stream, count] : {std::pair{2 * kk, m * kk}, std::pair{2 * kk + 1, kk * n}}) {
        std::size_t changed = 0;
        const std::vector<float> v =
            matmul_operand_values(f, sampling::matmul_samples(seed, stream, count, dist == "half_normal"), changed);
        all.insert(all.end(), v.begin(), v.end());
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
      }
    }
  return all;
}

struct Case {
  const k::MmaInstruction* instruction;
  int promote_every;  // 0: none
};

std::vector<Case> cases_for(const FormatEntry& f, const std::vector<double>& values, int promote_every) {
  std::vector<Case> out;
  for (const k::MmaInstruction* i : instructions_for(f, values)) {
    out.push_back({i, 0});
    out.push_back({i, promote_every});
  }
  return out;
}

k::AccumulatorModel model_of(const Case& c) {
  const k::AccumulatorModel m = k::instruction_accumulator(c.instruction->name);
  return c.promote_every > 0 ? m.promoted_every(c.promote_every) : m;
}

// One input format's rows for one k: grid points first .. first + cases.
void run_plain(const Context& ctx, const FormatEntry& f, const std::vector<Case>& cases, bool positive,
               std::size_t kk, std::uint64_t first, Table& table) {
  bool any = false;
  for (std::size_t c = 0; c < cases.size(); ++c) any = any || ctx.shard.owns(first + c);
  if (!any) return;
  const Params& p = ctx.params;
  const auto m = static_cast<std::size_t>(p.integer("m"));
  const auto n = static_cast<std::size_t>(p.integer("n"));
  const auto seed = static_cast<std::uint64_t>(p.integer("seed"));
  const SampledMatmul sm = sampled_matmul(f, seed, m, n, kk, positive);
  for (std::size_t c = 0; c < cases.size(); ++c) {
    if (!ctx.shard.owns(first + c)) continue;
    const Case& cs = cases[c];
    std::vector<float> out(m * n);
    k::matmul(sm.problem, out.data(), k::MatmulOptions{.accumulator = model_of(cs), .threads = ctx.threads});
    const MatmulErrors e = matmul_errors(out, sm.exact, sm.abs_sum);
    table.add(first + c, {std::string(positive ? "half_normal" : "normal"), std::string(f.name),
                          std::string(cs.instruction->arch), cs.instruction->name, std::int64_t{cs.promote_every},
                          static_cast<std::int64_t>(kk), e.mean, e.max, e.norm, e.vs_abs});
    ctx.progress.step();
  }
}

// ---------------------------------------------------------------------------
// 3. The block-scaled instructions beside the quantization alone.

// One scheme's two rows for one k (grid points first, first + 1): the
// quantized operands' exact product, and the instruction on the elements
// and scales, each against the exact product of the unquantized samples.
// A's and B's schemes may differ in shape and rule (a recipe's fprop: NVFP4
// activations in 1 x 16 blocks, weights in 16 x 16), not in formats: one
// instruction takes both.
template <class Elem, class Scale>
void run_block(const Context& ctx, std::string_view name, const k::BlockScaling<Elem, Scale>& scheme_a,
               const k::BlockScaling<Elem, Scale>& scheme_b, const k::MmaInstruction* inst, bool positive,
               std::size_t kk, std::uint64_t first, Table& table) {
  if (!ctx.shard.owns(first) && !ctx.shard.owns(first + 1)) return;
  const Params& p = ctx.params;
  const auto m = static_cast<std::size_t>(p.integer("m"));
  const auto n = static_cast<std::size_t>(p.integer("n"));
  const auto seed = static_cast<std::uint64_t>(p.integer("seed"));
  // fp32 samples; B also transposed (K-major, as block-scaled GEMMs take it).
  const std::vector<float> a = sampling::to_float(sampling::matmul_samples(seed, 2 * kk, m * kk, positive));
  const std::vector<float> b = sampling::to_float(sampling::matmul_samples(seed, 2 * kk + 1, kk * n, positive));
  std::vector<float> bt(n * kk);
  for (std::size_t t = 0; t < kk; ++t)
    for (std::size_t j = 0; j < n; ++j) bt[j * kk + t] = b[t * n + j];
  const k::OperandRange f32 = k::operand_range<float>();
  std::vector<double> ref(m * n);
  k::matmul_sums({m, n, kk, a.data(), b.data(), f32, f32}, ref.data(),
                 k::MatmulOptions{.accumulator = k::accumulators::fp64});
  const std::vector<double> abs_sum = matmul_abs_sums(m, n, kk, a.data(), b.data());

  // Both K-major: A's rows and B^T's rows of kk, blocks along K.
  std::vector<Elem> qa(m * kk), qbt(n * kk);
  std::vector<Scale> sa(k::scales_needed(scheme_a, m * kk, kk)), sbt(k::scales_needed(scheme_b, n * kk, kk));
  float ta = 1.0f, tb = 1.0f;
  k::quantize(scheme_a, std::span<const float>(a), kk, std::span<Elem>(qa), std::span<Scale>(sa), &ta);
  k::quantize(scheme_b, std::span<const float>(bt), kk, std::span<Elem>(qbt), std::span<Scale>(sbt), &tb);
  const std::string dist = positive ? "half_normal" : "normal";
  if (ctx.shard.owns(first)) {
    std::vector<float> da(m * kk), dbt(n * kk), db(kk * n);
    k::dequantize(scheme_a, std::span<const Elem>(qa), kk, std::span<const Scale>(sa), std::span<float>(da), ta);
    k::dequantize(scheme_b, std::span<const Elem>(qbt), kk, std::span<const Scale>(sbt), std::span<float>(dbt), tb);
    for (std::size_t t = 0; t < kk; ++t)
      for (std::size_t j = 0; j < n; ++j) db[t * n + j] = dbt[j * kk + t];
    std::vector<double> sums(m * n);
    k::matmul_sums({m, n, kk, da.data(), db.data(), f32, f32}, sums.data(),
                   k::MatmulOptions{.accumulator = k::accumulators::fp64});
    const std::vector<float> out(sums.begin(), sums.end());
    const MatmulErrors e = matmul_errors(out, ref, abs_sum);
    table.add(first, {dist, std::string(name), std::string("quantized, exact sum"), Cell{},
                      static_cast<std::int64_t>(kk), e.mean, e.max, e.norm, e.vs_abs});
    ctx.progress.step();
  }
  if (ctx.shard.owns(first + 1)) {
    std::vector<float> out(m * n);
    k::matmul(m, n, kk, k::BlockScaledOperand<Elem, Scale>{scheme_a, qa.data(), sa.data(), ta},
              k::BlockScaledOperand<Elem, Scale>{scheme_b, qbt.data(), sbt.data(), tb}, out.data(),
              k::MatmulOptions{.accumulator = k::instruction_accumulator(inst->name), .threads = ctx.threads});
    const MatmulErrors e = matmul_errors(out, ref, abs_sum);
    table.add(first + 1, {dist, std::string(name), std::string("quantized, instruction"), inst->name,
                          static_cast<std::int64_t>(kk), e.mean, e.max, e.norm, e.vs_abs});
    ctx.progress.step();
  }
}

// Every block scheme (kernels/scaling.h's list), by name: its Blackwell
// instruction and its rows.
struct BlockScheme {
  std::string_view name;
  const k::MmaInstruction* (*instruction)();
  void (*run)(const Context&, bool, std::size_t, std::uint64_t, Table&);
};
#define LPLAB_MATRIX_UNIT_SCHEME(s, ...)                                                       \
  BlockScheme{#s, [] { return block_instruction(k::s); },                                  \
              [](const Context& c, bool pos, std::size_t kk, std::uint64_t g, Table& t) { \
                run_block(c, #s, k::s, k::s, block_instruction(k::s), pos, kk, g, t);      \
              }},

// A recipe's fprop GEMM (kernels/recipes.h) where Blackwell runs it on a
// block-scaled instruction: A and B as the recipe quantizes them, through the
// recipe's Blackwell preset. The element and scale types are named here; a
// recipe whose operands are not them (or not block-scaled to nearest) is a
// logic error, caught by the tests.
template <class Elem, class Scale>
k::BlockScaling<Elem, Scale> recipe_scheme(const k::RecipeOperand& o, std::string_view recipe) {
  if (o.scaling != k::OperandScaling::block || o.format != finfo<Elem>::name ||
      o.scale_format != finfo<Scale>::name || o.round != Round::nearest_even || o.hadamard || o.four_over_six)
    throw std::logic_error("matrix_units: " + std::string(recipe) + "'s fprop operand is not a " +
                           std::string(finfo<Elem>::name) + " block scheme");
  return scaled::block_scheme_of<Elem, Scale>(o);
}
const k::MmaInstruction* recipe_instruction(std::string_view recipe) {
  const k::RecipeUnits* u = k::recipe_units(*k::find_recipe(recipe), "blackwell");
  const std::string_view preset = u == nullptr ? "" : u->preset[static_cast<std::size_t>(k::GemmRole::fprop)];
  const k::MmaInstruction* i = k::find_mma_instruction(preset);
  if (i == nullptr) throw std::logic_error("matrix_units: " + std::string(recipe) + " has no Blackwell fprop preset");
  return i;
}
template <class Elem, class Scale>
void run_recipe(const Context& c, std::string_view recipe, bool pos, std::size_t kk, std::uint64_t g, Table& t) {
  const k::RecipeGemm& fprop = k::find_recipe(recipe)->gemm[static_cast<std::size_t>(k::GemmRole::fprop)];
  run_block(c, recipe, recipe_scheme<Elem, Scale>(fprop.a, recipe), recipe_scheme<Elem, Scale>(fprop.b, recipe),
            recipe_instruction(recipe), pos, kk, g, t);
}
#define LPLAB_MATRIX_UNIT_RECIPE(r, Elem, Scale)                                            \
  BlockScheme{#r, [] { return recipe_instruction(#r); },                                    \
              [](const Context& c, bool pos, std::size_t kk, std::uint64_t g, Table& t) { \
                run_recipe<Elem, Scale>(c, #r, pos, kk, g, t);                             \
              }},
const BlockScheme kBlockSchemes[] = {
    LPLAB_BLOCK_SCHEMES(LPLAB_MATRIX_UNIT_SCHEME)
    // The recipes whose fprop both operands block-scale to nearest (nvfp4_4over6's
    // weights take Four Over Six, fp8_blockwise's fp32 scales no block-scaled operand).
    LPLAB_MATRIX_UNIT_RECIPE(mxfp8, float8_e4m3fn, float8_e8m0fnu)
    LPLAB_MATRIX_UNIT_RECIPE(nvfp4_training, float4_e2m1fn, float8_e4m3fn)};
#undef LPLAB_MATRIX_UNIT_RECIPE
#undef LPLAB_MATRIX_UNIT_SCHEME

const BlockScheme& block_scheme(std::string_view name) {
  for (const BlockScheme& s : kBlockSchemes)
    if (s.name == name) return s;
  throw std::logic_error("matrix_units: no block scheme " + std::string(name));  // the parameter's choices
}

std::vector<std::string> block_scheme_names() {
  std::vector<std::string> v;
  for (const BlockScheme& s : kBlockSchemes) v.emplace_back(s.name);
  return v;
}

// ---------------------------------------------------------------------------
// 4. The run.

const std::vector<Column> kErrorColumns = {{"k", ""},           {"rel_err_mean", ""}, {"rel_err_max", ""},
                                           {"rel_err_norm", ""}, {"err_vs_abs_max", ""}};

std::vector<Column> columns(std::vector<Column> leading) {
  leading.insert(leading.end(), kErrorColumns.begin(), kErrorColumns.end());
  return leading;
}

std::vector<Table> run(const Context& ctx) {
  const Params& p = ctx.params;
  const std::vector<double> ks = p.numbers("ks");
  const int promote_every = static_cast<int>(p.integer("promote_every"));
  const std::vector<std::string> distributions = p.list("distributions");
  const std::vector<std::string> blocks = p.list("block_schemes");
  const auto m = static_cast<double>(p.integer("m")), n = static_cast<double>(p.integer("n"));

  // Everything is checked before any work.
  for (double kv : ks)
    if (kv != std::floor(kv)) throw UsageError("matrix_units: ks must be whole numbers (got " + shortest(kv) + ")");
  // (Before the operand values are drawn: A and B as doubles, floats and
  // their exact sums, 24 bytes an element.)
  for (double kv : ks) require_memory((m + n) * kv * 24, "matrix_units: k = " + shortest(kv));
  std::vector<std::vector<Case>> cases;
  for (const FormatEntry* f : ctx.dtypes) {
    cases.push_back(cases_for(*f, operand_values(*f, p), promote_every));
    if (cases.back().empty())
      throw UsageError("matrix_units: no matrix unit takes " + std::string(f->name) +
                       " operands (formats with instructions: float16, bfloat16, float8_e4m3fn, float8_e5m2, "
                       "float8_e4m3fnuz, float8_e5m2fnuz, float6_e2m3fn, float6_e3m2fn, float4_e2m1fn)");
    for (const Case& c : cases.back())
      if (const k::AccumulatorProblem e = k::accumulator_problem(model_of(c)))
        throw UsageError("matrix_units: " + c.instruction->name + ": " + e.message);
  }
  for (const std::string& b : blocks) {
    const BlockScheme& s = block_scheme(b);
    const k::MmaInstruction* i = s.instruction();
    for (double kv : ks)
      if (static_cast<std::int64_t>(kv) % i->k != 0)
        throw UsageError("matrix_units: k = " + shortest(kv) + " is not a whole number of " + i->name +
                         " instructions (k = " + std::to_string(i->k) + "), which " + b + " operands need");
  }

  Table plain{"matrix_units",
              "Relative error of C = A B per GPU generation's matrix-unit instruction, input format and k",
              columns({{"distribution", ""},
                       {"input", ""},
                       {"generation", ""},
                       {"instruction", ""},
                       {"promote_every", ""}}),
              {},
              {}};
  Table block{"matrix_units_block_scaled",
              "Relative error of C = A B with MX/NVFP4 operands: the quantization alone and Blackwell's "
              "block-scaled instruction",
              columns({{"distribution", ""}, {"scheme", ""}, {"path", ""}, {"instruction", ""}}),
              {},
              {}};

  // The grid: distribution x (input format x k x case, then block scheme x
  // k x path), in the order the rows are computed in.
  std::uint64_t per_distribution = 0;
  for (const auto& c : cases) per_distribution += c.size() * ks.size();
  per_distribution += blocks.size() * ks.size() * 2;
  ctx.progress.set_total(distributions.size() * per_distribution);
  for (std::size_t di = 0; di < distributions.size(); ++di) {
    const bool positive = distributions[di] == "half_normal";
    std::uint64_t grid = di * per_distribution;
    for (std::size_t d = 0; d < ctx.dtypes.size(); ++d)
      for (double kv : ks) {
        run_plain(ctx, *ctx.dtypes[d], cases[d], positive, static_cast<std::size_t>(kv), grid, plain);
        grid += cases[d].size();
      }
    for (const std::string& b : blocks)
      for (double kv : ks) {
        block_scheme(b).run(ctx, positive, static_cast<std::size_t>(kv), grid, block);
        grid += 2;
      }
  }

  plain.notes = {
      "A (m x k) and B (k x n) hold N(0, 1) (normal) or |N(0, 1)| (half_normal) samples (seed " +
          std::to_string(p.integer("seed")) + ", m = " + std::to_string(p.integer("m")) + ", n = " +
          std::to_string(p.integer("n")) +
          ", streams 2k and 2k + 1: matmul_error's operands) rounded to nearest-even into the input format. The "
          "reference is the exact sum of the same rounded operands, so the error is the matrix unit's alone.",
      "Each generation runs its instruction with operands of the input's layout, fp32 C and D and the most "
      "products per instruction, chained over k from C = +0 (D of one instruction the C of the next), k padded "
      "with zero products to whole instructions; promote_every > 0 adds each chain of that many products into an "
      "fp32 register (round to nearest-even) and restarts it (DeepSeek-V3, arXiv 2412.19437, 3.3.2). AMD's fp8 "
      "and bf8 (FNUZ) take the same E4M3 and E5M2 values.",
      "The models are MMA-Sim 2.1.1's (arXiv 2511.10909), every preset bit for bit with its goldens "
      "(docs/matrix-units.md): NVIDIA's units align each group of products to the largest exponent and truncate "
      "to F fraction bits (F = 23 Volta, 24 Turing/Ampere/Ada, 25 Hopper/Blackwell; 13 for Ada's and Hopper's "
      "FP8), then truncate the sum to fp32; CDNA1 sums exactly, CDNA2 flushes subnormals in pairs, CDNA3 "
      "aligns in two stages. Truncation is a bias: with half_normal inputs every term loses bits the same way "
      "and the error grows linearly with k; with normal inputs compare rel_err_norm.",
  };
  block.notes = {
      "The same samples as the matrix_units table, kept in fp32 and quantized by lplab's schemes (A by rows, B "
      "transposed, K-major, as block-scaled GEMMs take it). The reference is the fp64 accumulator's "
      "product of the unquantized fp32 samples (products exact, summed in double); 'quantized, exact sum' is "
      "the same product of the dequantized operands (the "
      "quantization's error alone), 'quantized, instruction' Blackwell's tcgen05 block-scaled instruction on "
      "the elements and scales, chained over k, the block scales applied inside the dot product (MMA-Sim "
      "2.1.1's model) and the NVFP4 tensor scales to its output: 1 / (s_enc_a s_enc_b), or for nvfp4_te "
      "Transformer Engine's GEMM alpha, amax_a amax_b / 2688^2.",
      "Where the two rows agree the unit adds nothing to the quantization's error: its fixed-point sum keeps "
      "enough bits for MX and NVFP4 products.",
  };
  std::vector<Table> out;
  out.push_back(std::move(plain));
  if (!blocks.empty()) out.push_back(std::move(block));
  return out;
}

// ---------------------------------------------------------------------------
// 5. The summary, plots and headlines.


// The headline table: per generation and input format, rel_err_max at the
// largest k of the run for half_normal inputs (else the first distribution),
// without and with promotion. Read off the whole grid's rows
// (Experiment::summarize: after an unsharded run or a merge).
void summarize(std::vector<Table>& tables) {
  const Table* t = find_table(tables, "matrix_units");
  if (t == nullptr || t->rows.empty()) return;
  const std::size_t c_dist = t->column("distribution"), c_in = t->column("input"), c_gen = t->column("generation"),
                    c_prom = t->column("promote_every"), c_k = t->column("k"), c_max = t->column("rel_err_max");
  std::string dist = cell_text(t->rows[0].cells[c_dist]);
  double kmax = 0;
  for (const Row& r : t->rows)
    if (cell_text(r.cells[c_dist]) == "half_normal") dist = "half_normal";
  for (const Row& r : t->rows)
    if (cell_text(r.cells[c_dist]) == dist) kmax = std::max(kmax, cell_number(r.cells[c_k]));
  std::vector<std::string> inputs, generations;
  auto add_unique = [](std::vector<std::string>& v, const std::string& s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  };
  for (const Row& r : t->rows) {
    add_unique(inputs, cell_text(r.cells[c_in]));
    add_unique(generations, cell_text(r.cells[c_gen]));
  }
  Table s{"matrix_units_summary",
          "Max relative error of an output at k = " + shortest(kmax) + " (" + dist +
              " inputs) per GPU generation and input format, without / with promotion",
          {{"generation", ""}},
          {},
          {}};
  for (const std::string& in : inputs) {
    s.columns.push_back({in, ""});
    s.columns.push_back({in + "_promoted", ""});
  }
  std::int64_t every = 0;
  for (std::size_t g = 0; g < generations.size(); ++g) {
    std::vector<Cell> cells(s.columns.size());
    cells[0] = generations[g];
    for (const Row& r : t->rows) {
      if (cell_text(r.cells[c_gen]) != generations[g] || cell_text(r.cells[c_dist]) != dist ||
          cell_number(r.cells[c_k]) != kmax)
        continue;
      const auto in =
          static_cast<std::size_t>(std::find(inputs.begin(), inputs.end(), cell_text(r.cells[c_in])) - inputs.begin());
      const auto e = static_cast<std::int64_t>(cell_number(r.cells[c_prom]));
      if (e > 0) every = e;
      cells[1 + 2 * in + (e > 0 ? 1 : 0)] = r.cells[c_max];
    }
    s.add(g, std::move(cells));
  }
  s.notes = {"Read off the matrix_units table: its rows for k = " + shortest(kmax) + " and " + dist +
                 " inputs. An empty cell: the generation has no instruction for that format. _promoted: chains of " +
                 std::to_string(every) + " products added into fp32 (DeepSeek-V3 3.3.2)."};
  tables.push_back(std::move(s));
}

std::vector<Plot> drawn_plots(const std::vector<Table>& tables) {
  std::vector<Plot> plots;
  if (const Table* t = find_table(tables, "matrix_units"); t != nullptr) {
    for (const auto& [input, label, id] : {std::tuple{"float8_e4m3fn", "E4M3", "matrix_units_e4m3"},
                                           std::tuple{"bfloat16", "bf16", "matrix_units_bf16"}}) {
      Plot p;
      p.id = id;
      p.title = std::string("Dot-product error vs k per GPU generation: ") + label + " inputs, |N(0,1)|";
      p.xlabel = "k (inner dimension)";
      p.ylabel = "max relative error of an output";
      p.logx = p.logy = true;
      p.series = series_from_table(*t, "k", "rel_err_max", {"generation"},
                                   where(*t, {{"distribution", "half_normal"}, {"input", input}, {"promote_every", "0"}}),
                                   true, true);
      p.caption = std::string("Each generation's ") + label +
                  " instruction chained over k without promotion, as MMA-Sim 2.1.1 models it: the fewer "
                  "fraction bits a unit keeps, the faster its truncation error grows with k. Coinciding lines "
                  "share a model (Blackwell and RTX Blackwell); missing points: exactly zero error.";
      add_plot(plots, std::move(p));
    }
  }
  if (const Table* t = find_table(tables, "matrix_units_block_scaled"); t != nullptr) {
    Plot p;
    p.id = "matrix_units_block_scaled";
    p.title = "Block-scaled matmul error vs k: quantization alone and Blackwell's instruction, N(0,1)";
    p.xlabel = "k (inner dimension)";
    p.ylabel = "||C - C_exact|| / ||C_exact||";
    p.logx = p.logy = true;
    p.series = series_from_table(*t, "k", "rel_err_norm", {"scheme", "path"}, where(*t, {{"distribution", "normal"}}),
                                 true, true);
    p.caption = "The error of MX and NVFP4 operands is their quantization's: Blackwell's block-scaled "
                "instruction adds almost nothing on top.";
    add_plot(plots, std::move(p));
  }
  return plots;
}

void headline_figures(const std::vector<Table>& tables, Headlines& h) {
  // (lookup gives an empty cell where the table or the row is missing.)
  std::vector<std::string> parts;
  for (const char* gen : {"Ada Lovelace (sm_89)", "Hopper (sm_90a)", "Blackwell (sm_100a)", "CDNA3 (MI300)"}) {
    const Cell c = lookup(tables, "matrix_units",
                          {{"distribution", "half_normal"}, {"input", "float8_e4m3fn"}, {"generation", gen},
                           {"promote_every", "0"}, {"k", "4096"}},
                          "rel_err_max");
    parts.push_back(cell_text(formatted(c, "{:.3g}")));
  }
  const bool any = std::any_of(parts.begin(), parts.end(), [](const std::string& s) { return !s.empty(); });
  h.add("E4M3 matmul, k = 4096, |N(0,1)|: max rel. error on Ada / Hopper / Blackwell / MI300 (no promotion)",
        any ? Cell{fmt::format("{}", fmt::join(parts, " / "))} : Cell{},
        "nearly 2% on H100 (DeepSeek-V3 3.3.2, inputs unstated)", "matrix_units");
}

}  // namespace

Experiment matrix_units_experiment() {
  return {
      .name = "matrix_units",
      .summary = "what each GPU generation's matrix unit (Volta..Blackwell, CDNA1-3) does to a dot product vs k",
      .params =
          {
              {.name = "ks",
               .type = ParamType::list,
               .default_value = "64,256,1024,4096,16384",
               .min = 64,
               .max = 1 << 20,
               .help = "inner dimensions k to sweep (whole instructions of every block-scaled scheme run)",
               .choices = {},
               .items_numeric = true},
              {.name = "m", .type = ParamType::integer, .default_value = "16", .min = 1, .max = 4096,
               .help = "rows of A and C", .choices = {}},
              {.name = "n", .type = ParamType::integer, .default_value = "16", .min = 1, .max = 4096,
               .help = "columns of B and C", .choices = {}},
              {.name = "promote_every",
               .type = ParamType::integer,
               .default_value = "128",
               .min = 64,
               .max = 1 << 20,
               .help = "products per chain before it is added into fp32, in the promoted rows (DeepSeek-V3: 128)",
               .choices = {}},
              {.name = "distributions",
               .type = ParamType::list,
               .default_value = "normal,half_normal",
               .help = "operand samples: normal (N(0,1), signed), half_normal (|N(0,1)|, all products positive)",
               .choices = {"normal", "half_normal"}},
              {.name = "block_schemes",
               .type = ParamType::list,
               .default_value = "mxfp8_e4m3,mxfp6_e2m3,mxfp4,nvfp4",
               .help = "block-scaled schemes run through Blackwell's tcgen05 block-scaled instruction, and "
                       "recipes (mxfp8, nvfp4_training: fprop's A and B as the recipe quantizes them, through "
                       "its Blackwell preset)",
               .choices = block_scheme_names()},
              {.name = "seed", .type = ParamType::integer, .default_value = "1", .min = 0,
               .max = 9007199254740992.0 /* 2^53 */, .help = "seed of the operand samples", .choices = {}},
          },
      .default_dtypes = {"float16", "bfloat16", "float8_e4m3fn", "float4_e2m1fn"},
      .report_params = {{"ks", "64,256,1024,4096,16384"}, {"m", "8"}, {"n", "8"}},
      .run = run,
      .quick_params = {{"ks", "64,4096"}, {"m", "4"}, {"n", "4"}},
      .summarize = summarize,
      .place = 45,
      .plots = drawn_plots,
      .headlines = headline_figures,
      .regression = {.pinned = true},
  };
}

}  // namespace lplab::experiments
