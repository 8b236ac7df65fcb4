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
#include <type_traits>
#include <vector>

#include "lplab/formats.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/random.h"
#include "lplab/kernels/scaling.h"

namespace lplab::kernels {

enum class Accumulator {
  // The reference. Where every product is an integer multiple of a common
  // quantum and the sum fits 126 bits (operands of at most 16 bits with
  // subnormals: fp16 and every format of 8 bits or fewer except E8M0; fp16 x
  // fp16 for k < 2^46), the sum is exact: integers in 128-bit arithmetic. Otherwise (float, bf16 or E8M0 operands) products are exact in
  // double and summed in double in order k = 0, 1, ..., so that
  // |error| <= gamma_k * sum |a_i b_i| with u = 2^-53. The output is rounded
  // once (the exact sum is first rounded to odd at 53 bits, which makes the
  // later rounding to any format of at most 51 bits correct).
  fp64,
  // The fast path: the operands decoded to float and Eigen's fp32 GEMM.
  // Summation order unspecified; |error| <= gamma_k * sum |a_i b_i| with
  // u = 2^-24 while products and sums stay inside float's range (products of
  // operands with at most 12 significant bits are exact in float unless they
  // overflow or underflow it, as bf16 and E8M0 products can).
  fp32,
  // Each product exact, each addition rounded to nearest-even into the
  // accumulator format, in order k = 0, 1, ..., k-1, starting from +0: the
  // result is bit-reproducible. Overflow gives infinity, as in IEEE.
  fp16,
  bf16,
  // NVIDIA's tensor-core accumulation, as the bit-level model of MMA-Sim
  // (arXiv 2511.10909) describes Hopper's wgmma: see MatmulOptions and
  // docs/tensor-core-model.md.
  tensor_core,
  // x86's VDPBF16PS (AVX512-BF16) numerics, in a GEMM's order (Intel SDM,
  // VDPBF16PS): k is taken in pairs (2p, 2p + 1), padded with +0 products
  // for an odd k; each pair goes into an fp32 accumulator (from +0) by two
  // fused multiply-adds, the odd element first, each rounded to nearest-even,
  // with denormal inputs read as zero and denormal results flushed to zero.
  // The operands must be exact in bf16 (bf16 and every format of 8 bits or
  // fewer). Where the CPU has AVX512-BF16 the instruction itself runs; else
  // a scalar emulation — a test checks the two agree bit for bit.
  bf16_dot2,
};

const char* accumulator_name(Accumulator a);

struct MatmulOptions {
  Accumulator accumulator = Accumulator::fp32;
  int tc_fraction_bits = 13;  // tensor_core: fraction bits kept after alignment (H100 FP8: 13; H100 BF16/FP16: 25)
  int promote_every = 0;      // tensor_core: products per promotion into fp32 (0: never; DeepSeek-V3: 128)
  float scale_a = 1.0f, scale_b = 1.0f;
  lplab::Round round = lplab::Round::nearest_even;  // rounding of the output
  lplab::Overflow overflow = lplab::Overflow::ieee;
  // Added around the fields:
  // tensor_core: products per instruction block (0: 32 for operands of 8 bits
  // or fewer, 16 otherwise, as Hopper's wgmma consumes k).
  int tc_block = 0;
  // Round::stochastic output: element i of C uses stochastic_bits(seed, i).
  // (With the fp64 accumulator the sum is kept to 53 bits, 32 more than a
  // format of at most 21 bits needs, so stochastic output into float is
  // refused there.)
  std::uint64_t seed = 0;
  // Worker threads, each taking a band of C's rows: 1 (the default) runs on
  // the calling thread, 0 uses every core. Results do not depend on it.
  unsigned threads = 1;
};

namespace detail {

// Operand values as integers times a power of two: every finite value of the
// type is q * 2^quantum_exp with |q| < 2^magnitude_bits. `fixed` is false
// where that takes too many bits to be useful (float, bf16, E8M0).
struct OperandRange {
  bool fixed = false;
  int quantum_exp = 0;
  int magnitude_bits = 0;
  int storage_bits = 32;  // the operand format's width (the tensor-core block size depends on it)
  int emin = -126;        // the exponent of the smallest normal value
  bool bf16_exact = false;  // every value is a bf16 value (Accumulator::bf16_dot2)
};

template <class T>
constexpr OperandRange operand_range() {
  if constexpr (std::is_same_v<T, float>) {
    return {};
  } else {
    using F = finfo<T>;
    // numpy's conventions: 2^minexp is the smallest normal, max < 2^maxexp.
    const int quantum = F::has_subnormals ? F::minexp - F::nmant : F::minexp;
    const int bits = F::maxexp - quantum;
    // bf16: 8 significant bits, exponents -133 (its smallest subnormal) to 127.
    constexpr bool in_bf16 = F::nmant <= 7 && F::maxexp <= 128 && quantum >= -133;
    return {bits <= 48, quantum, bits, F::bits, F::minexp, in_bf16};
  }
}

struct MatmulProblem {
  std::size_t m, n, k;
  const float* a;  // m x k, row-major, exact operand values
  const float* b;  // k x n, row-major
  OperandRange ra, rb;
};

// Checks sizes, pointers and options; throws std::invalid_argument.
void check_matmul(std::size_t m, std::size_t n, std::size_t k, const void* a, const void* b,
                  const void* c, const MatmulOptions& options, const OperandRange& ra,
                  const OperandRange& rb, int output_precision);

// Significant bits of the output type.
template <class T>
constexpr int precision() {
  if constexpr (std::is_same_v<T, float>) return 24;
  else return finfo<T>::nmant + 1;
}

// The accumulated sums, before the scales and the output rounding: for fp64
// the exact sum rounded to odd at 53 bits (or the double sum), otherwise the
// accumulator's value.
void matmul_accumulate(const MatmulProblem& p, const MatmulOptions& options, double* out);
// The scalar reference of the fp16/bf16 accumulators' SIMD kernel (tests).
void matmul_narrow_reference(const MatmulProblem& p, Accumulator acc, double* out);
// Accumulator::bf16_dot2 by the emulation (hardware = false) or by the
// instruction (true; throws std::invalid_argument without AVX512-BF16).
void matmul_bf16_dot2(const MatmulProblem& p, bool hardware, double* out);
// The scalar tensor-core model, the reference of its SIMD kernel (tests).
void matmul_tensor_core_reference(const MatmulProblem& p, const MatmulOptions& options, double* out);
// Accumulator::fp32: the float sums.
void matmul_fp32(const MatmulProblem& p, const MatmulOptions& options, float* out);
// The instruction sets of the Eigen copy that Accumulator::fp32 runs on this
// thread now (it follows the kernels' SIMD target, targets.h), e.g.
// "AVX512, FMA, AVX2, AVX, SSE, SSE2, SSE3, SSSE3, SSE4.1, SSE4.2".
const char* gemm_f32_isa();

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

}  // namespace detail

namespace detail {

// C from the decoded operands of `p`: the accumulation, the scales and the
// output rounding.
template <class TC>
void matmul_decoded(const MatmulProblem& p, TC* c, const MatmulOptions& options) {
  const std::size_t m = p.m, n = p.n;
  // The scales: exact for powers of two (MX scales, 1); otherwise one more
  // rounding of the sum, in double.
  const double scale = static_cast<double>(options.scale_a) * static_cast<double>(options.scale_b);
  std::vector<double> sum;
  if (options.accumulator == Accumulator::fp32) {
    // The float sums go straight into C (float, scale 1) or through the bulk
    // conversion, which rounds element i with stochastic_bits(seed, i) too.
    if constexpr (std::is_same_v<TC, float>) {
      // (Under Overflow::saturate the conversion float -> float still maps
      // an infinity to the largest float.)
      if (scale == 1.0 && options.overflow == Overflow::ieee) return matmul_fp32(p, options, c);
    }
    std::vector<float> fsum(m * n);
    matmul_fp32(p, options, fsum.data());
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
  for (std::size_t i = 0; i < m * n; ++i) {
    const double v = scale == 1.0 ? sum[i] : sum[i] * scale;
    const std::uint32_t random =
        options.round == Round::stochastic ? stochastic_bits(options.seed, i) : 0;
    c[i] = lplab::convert<TC>(v, options.round, options.overflow, nullptr, random);
  }
}

}  // namespace detail

// Row-major C[m x n] = scale_a * scale_b * A[m x k] * B[k x n]. Throws
// std::invalid_argument for a null pointer with a nonzero size, a size whose
// element count overflows, or options out of range — before any work.
template <class TA, class TB, class TC>
void matmul(std::size_t m, std::size_t n, std::size_t k, const TA* a, const TB* b, TC* c,
            const MatmulOptions& options = {}) {
  static_assert(std::is_same_v<TC, float> || !std::is_arithmetic_v<TC>,
                "matmul: C is float or an lplab format (the sums are kept to 53 bits)");
  detail::check_matmul(m, n, k, a, b, c, options, detail::operand_range<TA>(),
                       detail::operand_range<TB>(), detail::precision<TC>());
  if (m == 0 || n == 0) return;
  const std::vector<float> fa = detail::decode_operand(a, m * k);
  const std::vector<float> fb = detail::decode_operand(b, k * n);
  detail::matmul_decoded({m, n, k, fa.data(), fb.data(), detail::operand_range<TA>(),
                          detail::operand_range<TB>()},
                         c, options);
}

// ---------------------------------------------------------------------------
// Block-scaled operands (MXFP8/6/4, NVFP4: scaling.h), as block-scaled GEMMs
// take them: both operands K-major — A as m rows of k, B transposed as n rows
// of k — with one scale per block_size consecutive elements of a row, so k
// must be a multiple of the block size (as the hardware requires).
template <BlockElement Elem, BlockScale Scale>
struct BlockScaledOperand {
  BlockScaling<Elem, Scale> scheme;
  const Elem* elems = nullptr;    // rows x k, row-major (quantize() of each row, or of the whole)
  const Scale* scales = nullptr;  // rows x (k / block_size)
  float tensor_scale = 1.0f;      // the s_enc of a scheme with a tensor scale
};

namespace detail {
void check_block_scaled(std::size_t rows, std::size_t k, int block_size, const void* elems,
                        const void* scales, float tensor_scale, const char* name);

// The operand's values (dequantize(), scaling.h), rows x k.
template <class Elem, class Scale>
std::vector<float> dequantize_operand(const BlockScaledOperand<Elem, Scale>& x, std::size_t rows,
                                      std::size_t k) {
  std::vector<float> out(rows * k);
  const std::size_t blocks = rows * k / static_cast<std::size_t>(x.scheme.block_size);
  dequantize(x.scheme, std::span<const Elem>(x.elems, rows * k), std::span<const Scale>(x.scales, blocks),
             std::span<float>(out), x.tensor_scale);
  return out;
}

template <class Elem>
constexpr OperandRange scaled_range() {
  // Values are element x scale: no common quantum, and the tensor-core block
  // follows the element format's width.
  return {false, 0, 0, finfo<Elem>::bits, -126};
}
}  // namespace detail

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
  detail::check_block_scaled(m, k, a.scheme.block_size, a.elems, a.scales, a.tensor_scale, "A");
  detail::check_block_scaled(n, k, b_transposed.scheme.block_size, b_transposed.elems, b_transposed.scales,
                             b_transposed.tensor_scale, "B");
  const float dummy = 0;
  detail::check_matmul(m, n, k, &dummy, &dummy, c, options, detail::scaled_range<EA>(),
                       detail::scaled_range<EB>(), detail::precision<TC>());
  if (m == 0 || n == 0) return;
  const std::vector<float> fa = detail::dequantize_operand(a, m, k);
  const std::vector<float> fbt = detail::dequantize_operand(b_transposed, n, k);
  std::vector<float> fb(k * n);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t t = 0; t < k; ++t) fb[t * n + j] = fbt[j * k + t];
  detail::matmul_decoded({m, n, k, fa.data(), fb.data(), detail::scaled_range<EA>(), detail::scaled_range<EB>()},
                         c, options);
}

}  // namespace lplab::kernels
