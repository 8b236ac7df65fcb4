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

// Blocks with fp32 scales on an instruction that takes none (Hopper's FP8
// wgmma, DeepSeek-V3 and DeepGEMM; TE's Float8BlockScaling on Hopper): the
// instruction chains over each block of K alone, from C = +0, and each
// block's D is promoted into fp32 as fma(s_a * s_b, D, promoted) --
// mma::chain with promote_scales, the scalar reference mma_test checks this
// against. Each block of K runs as a matmul of its own through
// accumulate_instruction (the SIMD kernels: a chain from C = +0 is exactly
// such a matmul), then every output is promoted.
void accumulate_promoted_scales(const MatmulProblem& p, const MatmulOptions& o, const float* scales_a,
                                const float* scales_b_t, std::size_t block, double* out) {
  const std::size_t blocks = p.k / block;
  MatmulOptions chunk_o = o;
  chunk_o.accumulator.promote_every = 0;
  chunk_o.c_input = nullptr;
  std::vector<float> acc(p.m * p.n, 0.0f);
  auto scale_of = [&](std::size_t r, std::size_t j, std::size_t q) {
    return scales_a[r * blocks + q] * scales_b_t[j * blocks + q];  // fp32, nearest even
  };
  std::vector<float> a_q(p.m * block);
  std::vector<double> d(p.m * p.n);
  for (std::size_t q = 0; q < blocks; ++q) {
    for (std::size_t r = 0; r < p.m; ++r)
      std::copy(p.a + r * p.k + q * block, p.a + r * p.k + (q + 1) * block, a_q.begin() + r * block);
    // B's rows q * block .. (q + 1) * block are contiguous (k x n, row-major).
    accumulate_instruction({p.m, p.n, block, a_q.data(), p.b + q * block * p.n, p.ra, p.rb}, chunk_o, nullptr,
                           nullptr, d.data());
    for (std::size_t r = 0; r < p.m; ++r)
      for (std::size_t j = 0; j < p.n; ++j) {
        float& x = acc[r * p.n + j];
        x = mma::fma32(scale_of(r, j, q), static_cast<float>(d[r * p.n + j]), x);
      }
  }
  for (std::size_t i = 0; i < p.m * p.n; ++i) out[i] = acc[i];
}

}  // namespace lplab::kernels::detail
namespace lplab::kernels {
using namespace detail;

void matmul_block_scaled_instruction(const MatmulProblem& p, const float* scales_a, const float* scales_b_t,
                                     int block_a, int block_b, std::string_view scale_format_a,
                                     std::string_view scale_format_b, const MatmulOptions& o, double* out) {
  // (check_matmul has checked the model.)
  const MmaInstruction& i = instruction_of(o);
  if (i.scale == MmaType::none && scale_format_a == "float32" && scale_format_b == "float32") {
    // fp32 block scales applied as each block of K is promoted (above).
    const auto block = static_cast<std::size_t>(block_a);
    if (block_b != block_a)
      throw std::invalid_argument("matmul: fp32 block scales are applied per block of K as it is promoted, and the "
                                  "operands' blocks differ along K (" + std::to_string(block_a) + " and " +
                                  std::to_string(block_b) + ")");
    if (block % static_cast<std::size_t>(i.k) != 0)
      throw std::invalid_argument("matmul: " + i.name + " chains k = " + std::to_string(i.k) +
                                  " a step, and a block of " + std::to_string(block) + " is not a whole number of them");
    const int every = o.accumulator.promote_every;
    if (every != 0 && static_cast<std::size_t>(every) != block)
      throw std::invalid_argument("matmul: fp32 block scales are promoted once a block of " + std::to_string(block) +
                                  " along K; promote_every is " + std::to_string(every));
    if (o.c_input != nullptr)
      throw std::invalid_argument("matmul: the promotion of fp32-scaled blocks starts from 0 and takes no input C");
    accumulate_promoted_scales(p, o, scales_a, scales_b_t, block, out);
    return;
  }
  if (i.scale == MmaType::none)
    throw std::invalid_argument("matmul: " + i.name + " takes no block scales; name a block-scaled instruction "
                                "(lplab mma --list), fp32 block scales (promoted with the scales, as DeepGEMM "
                                "does), or another accumulator for dequantized operands");
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
