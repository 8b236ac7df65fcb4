// The plans every backend runs before its loops (lplab/kernels/plans.h):
// the one place these checks and their messages are written.
#include "lplab/kernels/plans.h"

#include <span>
#include <stdexcept>
#include <string>

namespace lplab::kernels {
namespace detail {
namespace {

[[noreturn]] void fail(const char* fn, const std::string& what) {
  throw std::invalid_argument("lplab::kernels::" + std::string(fn) + ": " + what);
}

}  // namespace

void check_extent(const char* fn, const Extent& e) {
  if (e.expected != e.given)
    fail(fn, std::string(e.what) + " has " + std::to_string(e.given) + " elements, expected " +
                 std::to_string(e.expected));
}

BlockPlan make_block_plan(const char* fn, const BlockShapeRule& s, std::size_t n, std::size_t cols, Extent data,
                          std::size_t scales, bool quantizing, bool tensor_scale_output) {
  if (s.block_size < 1) fail(fn, "block_size must be at least 1");
  if (s.block_rows < 1) fail(fn, "block_rows must be at least 1");
  if (s.block_rows > 1 && cols == 0)
    fail(fn, "a scheme of " + std::to_string(s.block_rows) + " x " + std::to_string(s.block_size) +
                 " blocks needs the matrix's row length (the overload taking cols)");
  const bool ratio = s.rule == ScaleRule::amax_ratio || s.rule == ScaleRule::amax_ratio_te;
  if (s.tensor_scale && !ratio) fail(fn, "a tensor scale needs ScaleRule::amax_ratio or amax_ratio_te");
  if (s.rule == ScaleRule::amax_ratio_te && !s.tensor_scale)
    fail(fn, "ScaleRule::amax_ratio_te (Transformer Engine's NVFP4) needs the tensor scale");
  if (scale_rules::needs_fp32_scale(s.rule) && !s.fp32_scale)
    fail(fn, std::string("ScaleRule::") + enum_name(s.rule) + " gives float32 scales: the scale format must be float32");
  if (data.what != nullptr) check_extent(fn, data);
  BlockPlan p{.n = n,
              .block_size = static_cast<std::size_t>(s.block_size),
              .block_rows = static_cast<std::size_t>(s.block_rows),
              .cols = cols,
              .rows = n == 0 ? 0 : cols == 0 ? 1 : n / cols + (n % cols != 0 ? 1 : 0),
              .rule = s.rule,
              .tensor_scale = s.tensor_scale};
  const std::size_t bs = p.block_size, br = p.block_rows;
  p.blocks = cols == 0 ? n / bs + (n % bs != 0 ? 1 : 0)
                       : (p.rows / br + (p.rows % br != 0 ? 1 : 0)) * (cols / bs + (cols % bs != 0 ? 1 : 0));
  check_extent(fn, {"scales", p.blocks, scales});
  if (quantizing && s.tensor_scale && !tensor_scale_output) fail(fn, "this scheme needs a tensor_scale output");
  return p;
}

TensorPlan make_tensor_plan(AmaxSource source, std::size_t n, std::size_t out, std::span<const float> history) {
  check_extent("quantize", {"out", n, out});
  if (source != AmaxSource::current && history.empty())
    fail("quantize", "this TensorScaling reads an amax history, and none was given");
  const float from_history = source == AmaxSource::history_max           ? kernels::amax(history)
                             : source == AmaxSource::history_most_recent ? history[0]
                                                                         : 0.0f;
  return {n, source, from_history};
}

}  // namespace detail

namespace {

// Every value of an operand must be one of the instruction's type: the unit
// reads nothing else. Operands repeat few distinct values (at most 2^16 for a
// 16-bit type), so the values found held are remembered by their bits in a
// direct-mapped table: a hit is a value mma_holds has accepted.
void check_operand(const MmaInstruction& i, const float* x, std::size_t rows, std::size_t cols, MmaType t,
                   const char* name) {
  const std::size_t q = mma_first_not_held(t, std::span<const float>(x, rows * cols));
  if (q == rows * cols) return;
  throw std::invalid_argument("matmul: " + std::string(name) + "[" + std::to_string(q / cols) + "][" +
                              std::to_string(q % cols) + "] = " + std::to_string(x[q]) + " is not a value of " +
                              std::string(mma_type_info(t).name) + ", which " + i.name + " takes");
}

}  // namespace

InstructionPlan plan_instruction_matmul(const MatmulProblem& p, const MatmulOptions& o, bool block_scales) {
  const MmaInstruction& i = mma_instructions()[static_cast<std::size_t>(o.accumulator.instruction)];
  const bool scaled = i.scale != MmaType::none;
  if (scaled && !block_scales)
    throw std::invalid_argument("matmul: " + i.name + " is block-scaled: it takes block-scaled operands "
                                "(BlockScaledOperand) whose scales it applies inside the dot product");
  if (!scaled && block_scales)
    throw std::invalid_argument("matmul: " + i.name + " takes no block scales; name a block-scaled instruction");
  check_operand(i, p.a, p.m, p.k, i.a, "A");
  check_operand(i, p.b, p.k, p.n, i.b, "B");
  if (o.c_input != nullptr)
    for (std::size_t q = 0; q < p.m * p.n; ++q)
      if (!mma_holds(i.c, o.c_input[q]))
        throw std::invalid_argument("matmul: C[" + std::to_string(q / p.n) + "][" + std::to_string(q % p.n) +
                                    "] = " + std::to_string(o.c_input[q]) + " is not a value of " +
                                    std::string(mma_type_info(i.c).name) + ", " + i.name + "'s C type");
  const auto K = static_cast<std::size_t>(i.k);
  return {&i, (p.k + K - 1) / K * K, scaled};
}

std::vector<double> InstructionPlan::padded_rows_of_a(const MatmulProblem& p) const {
  std::vector<double> a(p.m * k_padded, 0.0);
  for (std::size_t r = 0; r < p.m; ++r)
    for (std::size_t t = 0; t < p.k; ++t) a[r * k_padded + t] = p.a[r * p.k + t];
  return a;
}

// (A column walk of row-major B per output would read rows n floats apart:
// the columns are laid out once.)
std::vector<double> InstructionPlan::padded_columns_of_b(const MatmulProblem& p) const {
  std::vector<double> bt(p.n * k_padded, 0.0);
  for (std::size_t t = 0; t < p.k; ++t)
    for (std::size_t j = 0; j < p.n; ++j) bt[j * k_padded + t] = p.b[t * p.n + j];
  return bt;
}

}  // namespace lplab::kernels
