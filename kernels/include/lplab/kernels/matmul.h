// Mixed-precision matrix multiplication with an emulated accumulator:
//
//   lplab::kernels::matmul(m, n, k, a, b, c, MatmulOptions{...});
//
// computes the row-major C[m x n] = scale_a * scale_b * A[m x k] * B[k x n]
// for A and B of float or any lplab format (mixed allowed: E4M3 x E5M2), C of
// float or any format, with the accumulator a GPU kernel would use. Every
// accumulator sees the exact operand values (decoding a format to float is
// exact) and the exact products; they differ in how the products are summed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lplab/formats.h"
#include "lplab/kernels/accumulator.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/random.h"
#include "lplab/kernels/scaling.h"
#include "lplab/kernels/tensor_core_step.h"

namespace lplab::kernels {

struct MatmulOptions {
  // How the products are summed (accumulator.h): a preset such as
  // accumulators::hopper_wgmma_fp8, or a kind (Accumulator::fp64, ...).
  AccumulatorModel accumulator = accumulators::fp32;
  float scale_a = 1.0f, scale_b = 1.0f;
  lplab::Round round = lplab::Round::nearest_even;  // rounding of the output
  lplab::Overflow overflow = lplab::Overflow::ieee;
  // Round::stochastic output: element i of C uses stochastic_bits(seed, i).
  // (With the fp64 accumulator the sum is kept to 53 bits, 32 more than a
  // format of at most 21 bits needs, so stochastic output into float is
  // refused there.)
  std::uint64_t seed = 0;
  // Worker threads, each taking a band of C's rows: 1 (the default) runs on
  // the calling thread, 0 uses every core. Results do not depend on it.
  unsigned threads = 1;
  // Accumulator::instruction: an input C, m x n row-major, each a value of
  // the instruction's C type (nullptr: +0). It is the first instruction's C,
  // as a kernel's accumulator registers start from it (with promotion, the
  // first chain's); D = scale_a scale_b x the chain (and, for block-scaled
  // operands, x their tensor scales), C included. Other accumulators refuse
  // it: add C to their output.
  const double* c_input = nullptr;
};

// One product on operands already decoded to float (exact: every format's
// values are floats), with the ranges of the types they came from: the form
// in which several accumulators run on one pair of operands (matmul_sums and
// the matmul overload below).
struct MatmulProblem {
  std::size_t m, n, k;
  const float* a;  // m x k, row-major, exact operand values
  const float* b;  // k x n, row-major
  OperandRange ra, rb;
};

// The instruction sets of the Eigen copy that Accumulator::fp32 runs on this
// thread now (it follows the kernels' SIMD target, targets.h), e.g.
// "AVX512, FMA, AVX2, AVX, SSE, SSE2, SSE3, SSSE3, SSE4.1, SSE4.2".
const char* gemm_f32_isa();

// x[0..n) as floats: exact for every format.
template <class T>
std::vector<float> decode_operand(const T* x, std::size_t n) {
  std::vector<float> out(n);
  if constexpr (std::is_same_v<T, float>) {
    std::copy(x, x + n, out.begin());
  } else {
    convert(std::span<const T>(x, n), std::span<float>(out));  // exact
  }
  return out;
}

// The type-erased matmul: the checks and steps every backend shares (the
// typed matmul below, the Python bindings and lplab/cuda.h call them).

// Checks sizes, pointers and options; throws std::invalid_argument.
void check_matmul(std::size_t m, std::size_t n, std::size_t k, const void* a, const void* b,
                  const void* c, const MatmulOptions& options, const OperandRange& ra,
                  const OperandRange& rb, int output_precision);

// The accumulated sums, before the scales and the output rounding: for fp64
// the exact sum rounded to odd at 53 bits (or the double sum), otherwise the
// accumulator's value.
void matmul_accumulate(const MatmulProblem& p, const MatmulOptions& options, double* out);
// The tensor-core model's parameters (tensor_core_step.h) for a problem:
// the plan the CPU's SIMD and scalar models and the CUDA kernel all run.
TensorCoreModel tensor_core_model(const MatmulProblem& p, const MatmulOptions& o);

namespace detail {
// The scalar reference of the fp16/bf16 accumulators' SIMD kernel (tests).
void matmul_narrow_reference(const MatmulProblem& p, Accumulator acc, double* out);
// Accumulator::bf16_dot2 by the emulation (hardware = false) or by the
// instruction (true; throws std::invalid_argument without AVX512-BF16).
void matmul_bf16_dot2(const MatmulProblem& p, bool hardware, double* out);
// The scalar tensor-core model, the reference of its SIMD kernel (tests).
void matmul_tensor_core_reference(const MatmulProblem& p, const MatmulOptions& options, double* out);
// Accumulator::fp32: the float sums.
void matmul_fp32(const MatmulProblem& p, const MatmulOptions& options, float* out);
}  // namespace detail


template <class TC>
void round_sums(const double* sum, TC* c, std::size_t count, double scale, const MatmulOptions& options);

// A block-scaled instruction (Accumulator::instruction) on block-scaled
// operands: its sums, the scales' values applied inside the dot product as
// the instruction does (A's scales m x k / block, B's n x k / block).
// scale_format_a/_b are the scales' catalog formats ("float8_e8m0fnu",
// "float8_e4m3fn", "float8_e5m3fnu"). Throws std::invalid_argument where the
// instruction's block size or scale format (mma_format_name of its scale
// type) is not the operands'. fp32 scales ("float32", both operands) on an
// instruction that takes none are applied as each block of K is promoted:
// the block chained from C = +0, then acc = fma(s_a * s_b, D, acc) in fp32
// (DeepSeek-V3's and DeepGEMM's promotion; docs/recipes.md); the blocks must
// agree along K and hold whole instructions, promote_every be 0 or the
// block, and no input C be given.
void matmul_block_scaled_instruction(const MatmulProblem& p, const float* scales_a, const float* scales_b_t,
                                     int block_a, int block_b, std::string_view scale_format_a,
                                     std::string_view scale_format_b, const MatmulOptions& o, double* out);

// C from the decoded operands of `p`: the accumulation, the scales and the
// output rounding.
template <class TC>
void matmul_decoded(const MatmulProblem& p, TC* c, const MatmulOptions& options) {
  const std::size_t m = p.m, n = p.n;
  // The scales: exact for powers of two (MX scales, 1); otherwise one more
  // rounding of the sum, in double.
  const double scale = static_cast<double>(options.scale_a) * static_cast<double>(options.scale_b);
  std::vector<double> sum;
  if (options.accumulator.kind == Accumulator::fp32) {
    // The float sums go straight into C (float, scale 1) or through the bulk
    // conversion, which rounds element i with stochastic_bits(seed, i) too.
    if constexpr (std::is_same_v<TC, float>) {
      // (Under Overflow::saturate the conversion float -> float still maps
      // an infinity to the largest float.)
      if (scale == 1.0 && options.overflow == Overflow::ieee) return detail::matmul_fp32(p, options, c);
    }
    std::vector<float> fsum(m * n);
    detail::matmul_fp32(p, options, fsum.data());
    if (scale == 1.0) {
      convert(std::span<const float>(fsum), std::span<TC>(c, m * n),
              ConvertOptions{.round = options.round, .overflow = options.overflow, .seed = options.seed,
                             .threads = options.threads});
      return;
    }
    sum.assign(fsum.begin(), fsum.end());
  } else {
    sum.resize(m * n);
    matmul_accumulate(p, options, sum.data());
  }
  round_sums(sum.data(), c, m * n, scale, options);
}

// C[i] = sum[i] x scale rounded into TC by the options (element i with
// stochastic_bits(seed, i)).
template <class TC>
void round_sums(const double* sum, TC* c, std::size_t count, double scale, const MatmulOptions& options) {
  for (std::size_t i = 0; i < count; ++i) {
    const double v = scale == 1.0 ? sum[i] : sum[i] * scale;
    const std::uint32_t random =
        options.round == Round::stochastic ? stochastic_bits(options.seed, i) : 0;
    c[i] = lplab::convert<TC>(v, options.round, options.overflow, nullptr, random);
  }
}



// Row-major C[m x n] = scale_a * scale_b * A[m x k] * B[k x n]. Throws
// std::invalid_argument for a null pointer with a nonzero size, a size whose
// element count overflows, or options out of range — before any work.
template <class TA, class TB, class TC>
void matmul(std::size_t m, std::size_t n, std::size_t k, const TA* a, const TB* b, TC* c,
            const MatmulOptions& options = {}) {
  static_assert(std::is_same_v<TC, float> || !std::is_arithmetic_v<TC>,
                "matmul: C is float or an lplab format (the sums are kept to 53 bits)");
  check_matmul(m, n, k, a, b, c, options, operand_range<TA>(),
                       operand_range<TB>(), output_precision<TC>());
  if (m == 0 || n == 0) return;
  const std::vector<float> fa = decode_operand(a, m * k);
  const std::vector<float> fb = decode_operand(b, k * n);
  matmul_decoded({m, n, k, fa.data(), fb.data(), operand_range<TA>(),
                          operand_range<TB>()},
                         c, options);
}

// C[m x n] from decoded operands, as matmul() above computes it from theirs.
template <class TC>
void matmul(const MatmulProblem& p, TC* c, const MatmulOptions& options = {}) {
  static_assert(std::is_same_v<TC, float> || !std::is_arithmetic_v<TC>,
                "matmul: C is float or an lplab format (the sums are kept to 53 bits)");
  check_matmul(p.m, p.n, p.k, p.a, p.b, c, options, p.ra, p.rb, output_precision<TC>());
  if (p.m == 0 || p.n == 0) return;
  matmul_decoded(p, c, options);
}

// The accumulated sums of C[m x n] before the scales and the output rounding:
// for Accumulator::fp64 the exact sum rounded to odd at 53 bits (or the double
// sum, where the operands are not fixed-point), otherwise the accumulator's
// value. The reference of error measurements.
void matmul_sums(const MatmulProblem& p, double* sums, const MatmulOptions& options);

// ---------------------------------------------------------------------------
// Block-scaled operands (MXFP8/6/4, NVFP4: scaling.h), as block-scaled GEMMs
// take them: both operands K-major — A as m rows of k, B transposed as n rows
// of k — with one scale per block of block_rows x block_size elements (1 x B,
// or NVFP4 training's 16 x 16 weights), so k must be a multiple of the block
// size (as the hardware requires); the last block row may be shorter.
template <BlockElement Elem, BlockScale Scale>
struct BlockScaledOperand {
  BlockScaling<Elem, Scale> scheme;
  const Elem* elems = nullptr;    // rows x k, row-major (quantize(scheme, x, k, ...))
  const Scale* scales = nullptr;  // ceil(rows / block_rows) x (k / block_size), row-major
  float tensor_scale = 1.0f;      // what quantize wrote: s_enc, or the amax of ScaleRule::amax_ratio_te
};

void check_block_scaled(std::size_t rows, std::size_t k, int block_size, const void* elems,
                        const void* scales, float tensor_scale, const char* name, bool tensor_amax,
                        int block_rows = 1);

// The operand's scales as the instruction reads them, one per 1 x block_size
// slice of each row (row_scales, scaling.h): rows x (k / block_size).
template <class Elem, class Scale>
std::vector<Scale> slice_scales(const BlockScaledOperand<Elem, Scale>& x, std::size_t rows, std::size_t k) {
  std::vector<Scale> out(rows * (k / static_cast<std::size_t>(x.scheme.block_size)));
  if (rows * k == 0) return out;
  const std::span<const Scale> given(x.scales, scales_needed(x.scheme, rows * k, k));
  row_scales(x.scheme, rows * k, k, given, std::span<Scale>(out));
  return out;
}

// What an instruction's product of block-scaled operands is multiplied by
// for their tensor scales: 1 / (s_enc_a s_enc_b); for two operands in
// Transformer Engine's order, TE's GEMM alpha (amax_a * amax_b) / M^2 in
// float32 (M = max_elem * max_scale, 2688 for NVFP4); for one, amax / M in
// place of its 1 / s_enc.
// The same from each operand's parts: whether it is in TE's order, its M
// and its tensor scale (for callers that hold the formats at run time).
inline double tensor_scale_factor(bool te_a, double m_a, float ts_a, bool te_b, double m_b, float ts_b) {
  if (te_a && te_b) return static_cast<double>(ts_a * ts_b / static_cast<float>(m_a * m_b));
  const double fa = te_a ? static_cast<double>(ts_a) / m_a : 1.0 / static_cast<double>(ts_a);
  const double fb = te_b ? static_cast<double>(ts_b) / m_b : 1.0 / static_cast<double>(ts_b);
  return fa * fb;
}
template <class EA, class SA, class EB, class SB>
double tensor_scale_factor(const BlockScaledOperand<EA, SA>& a, const BlockScaledOperand<EB, SB>& b) {
  return tensor_scale_factor(a.scheme.rule == ScaleRule::amax_ratio_te,
                             static_cast<double>(scale_rules::Constants<EA, SA>::encode_numerator), a.tensor_scale,
                             b.scheme.rule == ScaleRule::amax_ratio_te,
                             static_cast<double>(scale_rules::Constants<EB, SB>::encode_numerator), b.tensor_scale);
}

// The operand's values (dequantize(), scaling.h), rows x k.
template <class Elem, class Scale>
std::vector<float> dequantize_operand(const BlockScaledOperand<Elem, Scale>& x, std::size_t rows,
                                      std::size_t k) {
  std::vector<float> out(rows * k);
  if (rows * k == 0) return out;
  const std::span<const Scale> scales(x.scales, scales_needed(x.scheme, rows * k, k));
  dequantize(x.scheme, std::span<const Elem>(x.elems, rows * k), k, scales, std::span<float>(out), x.tensor_scale);
  return out;
}

template <class Elem>
constexpr OperandRange scaled_range() {
  // Values are element x scale: no common quantum, and the tensor-core block
  // follows the element format's width.
  return {false, 0, 0, finfo<Elem>::bits, -126};
}

// C[m x n] = A * B with A and B^T block-scaled. Each operand's values are
// dequantize()'s, element x block scale (/ tensor scale): with E8M0 scales
// that is exact in float unless it overflows (|value| >= 2^128), and because
// a power-of-two scale is common to the whole block, it equals scaling each
// block's dot product as the hardware does. Then the chosen accumulator sums
// the products as for any operand (Accumulator::tensor_core aligns the scaled
// products, blocks of 32 for 8-bit-or-narrower elements).
template <class EA, class SA, class EB, class SB, class TC>
void matmul(std::size_t m, std::size_t n, std::size_t k, const BlockScaledOperand<EA, SA>& a,
            const BlockScaledOperand<EB, SB>& b_transposed, TC* c, const MatmulOptions& options = {}) {
  static_assert(std::is_same_v<TC, float> || !std::is_arithmetic_v<TC>,
                "matmul: C is float or an lplab format (the sums are kept to 53 bits)");
  check_block_scaled(m, k, a.scheme.block_size, a.elems, a.scales, a.tensor_scale, "A",
                     a.scheme.rule == ScaleRule::amax_ratio_te, a.scheme.block_rows);
  check_block_scaled(n, k, b_transposed.scheme.block_size, b_transposed.elems, b_transposed.scales,
                     b_transposed.tensor_scale, "B", b_transposed.scheme.rule == ScaleRule::amax_ratio_te,
                     b_transposed.scheme.block_rows);
  const float dummy = 0;
  check_matmul(m, n, k, &dummy, &dummy, c, options, scaled_range<EA>(),
                       scaled_range<EB>(), output_precision<TC>());
  if (m == 0 || n == 0) return;
  if (options.accumulator.kind == Accumulator::instruction) {
    // The instruction applies the block scales itself: elements and scales
    // go to it apart; the tensor scales apply to its output
    // (tensor_scale_factor).
    const std::vector<float> ea = decode_operand(a.elems, m * k);
    const std::vector<float> ebt = decode_operand(b_transposed.elems, n * k);
    // A 2D-scaled operand gives each 1 x block_size slice its block's scale.
    const std::vector<SA> slices_a = slice_scales(a, m, k);
    const std::vector<SB> slices_b = slice_scales(b_transposed, n, k);
    const std::vector<float> sa = decode_operand(slices_a.data(), slices_a.size());
    const std::vector<float> sbt = decode_operand(slices_b.data(), slices_b.size());
    std::vector<float> eb(k * n);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t t = 0; t < k; ++t) eb[t * n + j] = ebt[j * k + t];
    std::vector<double> sum(m * n);
    matmul_block_scaled_instruction(
        {m, n, k, ea.data(), eb.data(), operand_range<EA>(), operand_range<EB>()}, sa.data(), sbt.data(),
        a.scheme.block_size, b_transposed.scheme.block_size, SA::descriptor.name.c_str(),
        SB::descriptor.name.c_str(), options, sum.data());
    const double scale = static_cast<double>(options.scale_a) * static_cast<double>(options.scale_b) *
                         tensor_scale_factor(a, b_transposed);
    round_sums(sum.data(), c, m * n, scale, options);
    return;
  }
  const std::vector<float> fa = dequantize_operand(a, m, k);
  const std::vector<float> fbt = dequantize_operand(b_transposed, n, k);
  std::vector<float> fb(k * n);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t t = 0; t < k; ++t) fb[t * n + j] = fbt[j * k + t];
  matmul_decoded({m, n, k, fa.data(), fb.data(), scaled_range<EA>(), scaled_range<EB>()},
                         c, options);
}

}  // namespace lplab::kernels
