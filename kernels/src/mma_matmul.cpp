// Accumulator::instruction: a matrix-unit instruction (mma.h) chained over k
// for every output of a matmul, as a kernel's k loop chains it.
#include "mma_matmul.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "lplab/kernels/mma.h"
#include "lplab/kernels/plans.h"
#include "row_bands.h"
#include "mma_simd.h"
#include "tensor_core.h"

namespace lplab::kernels::detail {
namespace {

const MmaInstruction& instruction_of(const MatmulOptions& o) {
  return mma_instructions()[static_cast<std::size_t>(o.accumulator.instruction)];
}

}  // namespace

void accumulate_instruction(const MatmulProblem& p, const MatmulOptions& o, const float* scales_a,
                            const float* scales_b_t, double* out) {
  const InstructionPlan plan = plan_instruction_matmul(p, o, scales_a != nullptr);
  const MmaInstruction& i = *plan.instruction;
  const bool scaled = plan.scaled;
  const std::size_t kp = plan.k_padded;
  // NVIDIA's truncated steps into an fp32 register are the tensor_core
  // accumulator's model (tensor_core_step.h; a test checks the two agree),
  // and with fp16 C and D the same steps rounded to nearest fp16: its SIMD
  // kernel runs them, on k padded to whole instructions.
  const MmaModel& mm = i.model;
  // (fp16 C and fp32 D: C's type matters only for an input C, whose
  // alignment exponent is then clamped at fp16's emin.)
  const bool fp32_out = i.d == MmaType::f32 && (i.c == MmaType::f32 || o.c_input == nullptr) &&
                        (mm.rounding == MmaRounding::truncate_fp32 || mm.rounding == MmaRounding::truncate_e8m13);
  const bool fp16_out = i.c == MmaType::f16 && i.d == MmaType::f16 && mm.rounding == MmaRounding::nearest_fp16;
  // A and B with k padded to whole instructions (zeros), for the SIMD kernels.
  auto padded = [&](std::vector<float>& a, std::vector<float>& b) {
    a.assign(p.m * kp, 0.0f);
    b.assign(kp * p.n, 0.0f);
    for (std::size_t r = 0; r < p.m; ++r) std::copy(p.a + r * p.k, p.a + (r + 1) * p.k, a.begin() + r * kp);
    std::copy(p.b, p.b + p.k * p.n, b.begin());
  };
  const bool truncated = mm.algorithm == MmaAlgorithm::truncated || mm.algorithm == MmaAlgorithm::scaled;
  if (truncated && scaled == (mm.algorithm == MmaAlgorithm::scaled) && (fp32_out || fp16_out)) {
    // fp16 C and D: 11 significant bits, binades -14 .. 15, to nearest-even.
    const TensorCoreModel tc{.block = mm.group,
                             .fraction_bits = mm.fraction_bits,
                             .result_bits = fp16_out ? 11 : mm.rounding == MmaRounding::truncate_fp32 ? 24 : 14,
                             .zero_exponent = mm.zero_exponent,
                             .promote_every = o.accumulator.promote_every,
                             .emin_a = mm.emin_a,
                             .emin_b = mm.emin_b,
                             .emin_out = mm.emin_d,
                             .emax_out = fp16_out ? finfo<float16>::maxexp : 128,
                             .nearest = fp16_out};
    std::vector<float> a, b;
    padded(a, b);
    // scaled: the block scales' exponents add to the products' (k is a
    // whole number of instructions, so no padding).
    const TensorCoreScales sc{scales_a, scales_b_t, static_cast<std::size_t>(mm.scale_block), mm.emin_scale};
    if (tensor_core_fast({p.m, p.n, kp, a.data(), b.data(), p.ra, p.rb}, tc, out, o.threads, o.c_input,
                         scaled ? &sc : nullptr))
      return;
  }
  if (!truncated) {
    // AMD's models, and NVIDIA's block-scaled FP4 (group_scaled).
    std::vector<float> a, b;
    padded(a, b);
    if (mma_simd(mm, p.m, p.n, kp, a.data(), b.data(), o.c_input, o.accumulator.promote_every, o.threads, out,
                 scales_a, scales_b_t))
      return;
  }
  const std::size_t blk = scaled ? static_cast<std::size_t>(i.model.scale_block) : 0;
  const std::size_t nblk = blk ? kp / blk : 0;
  const std::vector<double> bt = plan.padded_columns_of_b(p);
  for_problem_bands(p, o.threads, [&](const MatmulProblem& band, std::size_t first_row) {
    std::vector<double> a(kp, 0.0), sa(nblk, 1.0), sb(nblk, 1.0);
    for (std::size_t r = 0; r < band.m; ++r) {
      const std::size_t row = first_row + r;
      for (std::size_t t = 0; t < p.k; ++t) a[t] = band.a[r * p.k + t];
      for (std::size_t q = 0; q < nblk && scaled; ++q) sa[q] = scales_a[row * nblk + q];
      for (std::size_t j = 0; j < p.n; ++j) {
        for (std::size_t q = 0; q < nblk && scaled; ++q) sb[q] = scales_b_t[j * nblk + q];
        const double c = o.c_input != nullptr ? o.c_input[row * p.n + j] : 0.0;
        out[row * p.n + j] = mma::chain(i.model, a.data(), bt.data() + j * kp, kp, c, sa.data(), sb.data(),
                                        o.accumulator.promote_every, nullptr);
      }
    }
  });
}

}  // namespace lplab::kernels::detail
namespace lplab::kernels {
using namespace detail;

void matmul_block_scaled_instruction(const MatmulProblem& p, const float* scales_a, const float* scales_b_t,
                                     int block_a, int block_b, std::string_view scale_format_a,
                                     std::string_view scale_format_b, const MatmulOptions& o, double* out) {
  // (check_matmul has checked the model.)
  const MmaInstruction& i = instruction_of(o);
  if (i.scale == MmaType::none)
    throw std::invalid_argument("matmul: " + i.name + " takes no block scales; name a block-scaled instruction "
                                "(lplab mma --list), or another accumulator for dequantized operands");
  const int want = i.model.scale_block;
  if (block_a != want || block_b != want)
    throw std::invalid_argument("matmul: " + i.name + " takes one scale per " + std::to_string(want) +
                                " elements; the operands have blocks of " + std::to_string(block_a) + " and " +
                                std::to_string(block_b));
  const std::string_view takes = mma_format_name(i.scale);
  if (scale_format_a != takes || scale_format_b != takes)
    throw std::invalid_argument("matmul: " + i.name + " takes " + std::string(mma_type_info(i.scale).name) +
                                " scales (" + std::string(takes) + "); the operands' are " +
                                std::string(scale_format_a) + " and " + std::string(scale_format_b));
  if (p.k % static_cast<std::size_t>(i.k) != 0)
    throw std::invalid_argument("matmul: " + i.name + " needs k a multiple of its k = " + std::to_string(i.k) +
                                " (block scales cover whole instructions); k is " + std::to_string(p.k));
  const std::size_t blocks = p.k / static_cast<std::size_t>(want);
  for (std::size_t q = 0; q < p.m * blocks; ++q)
    if (!mma_holds(i.scale, scales_a[q]))
      throw std::invalid_argument("matmul: a scale of A, " + std::to_string(scales_a[q]) + ", is not a " +
                                  std::string(mma_type_info(i.scale).name) + " value");
  for (std::size_t q = 0; q < p.n * blocks; ++q)
    if (!mma_holds(i.scale, scales_b_t[q]))
      throw std::invalid_argument("matmul: a scale of B, " + std::to_string(scales_b_t[q]) + ", is not a " +
                                  std::string(mma_type_info(i.scale).name) + " value");
  accumulate_instruction(p, o, scales_a, scales_b_t, out);
}

}  // namespace lplab::kernels
