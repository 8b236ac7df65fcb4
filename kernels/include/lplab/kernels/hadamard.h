// The random Hadamard transform (RHT) of NVFP4 training (arXiv 2509.25149
// section 4.2; Transformer Engine's NVFP4BlockScaling, whose columnwise
// copies of activations and gradients -- the operands of the weight-gradient
// GEMM -- it transforms along that GEMM's k, in groups of 16), as portable
// per-element code.
//
// For one group x of 16 values:
//   y = x . diag(s) . H . (1/4),  y_j = (sum_i s_i H[i][j] x_i) / 4,
// H the 16 x 16 Sylvester Hadamard matrix, H[i][j] = (-1)^popcount(i & j)
// (H . H = 16 I, so H / 4 is orthogonal and its own inverse), s the random
// signs, applied to the inputs before H. Transformer Engine fixes them
// (transformer_engine/pytorch/tensor/nvfp4_tensor.py, get_wgrad_sign_vector):
//   s = [1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1],
// kept here as a 16-bit mask, bit i set where s_i = -1: 0xD7E8.
//
// Operation order: each product s_i H[i][j] x_i is exact (a sign), summed in
// float32 in the order i = 0 .. 15, the sum times 0.25 (exact), then, as TE
// does before it takes the amax and quantizes, rounded to bfloat16
// (nearest-even). TE's kernel sums on tensor cores in an unspecified order;
// for bfloat16 inputs the float32 sum of 16 terms is exact while their
// exponents span at most 12 binades (terms are multiples of 2^(e_min - 7),
// the sum below 2^(e_max + 5)), and only past that can an order matter.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lplab/formats.h"

namespace lplab::kernels {

inline constexpr int kHadamardSize = 16;
// Transformer Engine's signs: bit i set where s_i = -1.
inline constexpr std::uint16_t kTeHadamardSigns = 0xD7E8;

// Whether H[i][j] = -1 (0 <= i, j < 16).
LPLAB_HD constexpr bool hadamard_negative(int i, int j) noexcept {
  int v = i & j, odd = 0;
  for (; v != 0; v &= v - 1) odd ^= 1;
  return odd != 0;
}

// How the transform's outputs are left: float32, or rounded to bfloat16 as
// TE does (the transformed tensor is bfloat16 there).
enum class HadamardOutput : std::uint8_t { float32, bfloat16 };

// One group: y[0..15] from x[0..15] (y may not alias x).
LPLAB_HD constexpr void hadamard16(const float* x, float* y, std::uint16_t signs = kTeHadamardSigns,
                                   HadamardOutput out = HadamardOutput::bfloat16) noexcept {
  for (int j = 0; j < kHadamardSize; ++j) {
    float sum = 0.0f;
    for (int i = 0; i < kHadamardSize; ++i) {
      const bool negative = (((signs >> i) & 1) != 0) != hadamard_negative(i, j);
      sum += negative ? -x[i] : x[i];
    }
    const float v = sum * 0.25f;
    y[j] = out == HadamardOutput::bfloat16 ? static_cast<float>(bfloat16(v)) : v;
  }
}

// The inverse, x = y . (H / 4) . diag(s): x_i = s_i (sum_j H[i][j] y_j) / 4,
// in the same order and precision (float32 unless asked otherwise).
LPLAB_HD constexpr void hadamard16_inverse(const float* y, float* x, std::uint16_t signs = kTeHadamardSigns,
                                           HadamardOutput out = HadamardOutput::float32) noexcept {
  for (int i = 0; i < kHadamardSize; ++i) {
    float sum = 0.0f;
    for (int j = 0; j < kHadamardSize; ++j) sum += hadamard_negative(i, j) ? -y[j] : y[j];
    float v = sum * 0.25f;
    if (((signs >> i) & 1) != 0) v = -v;
    x[i] = out == HadamardOutput::bfloat16 ? static_cast<float>(bfloat16(v)) : v;
  }
}

// A rows x cols row-major matrix, each row's consecutive groups of 16
// transformed (cols % 16 == 0): for the wgrad GEMM's operands pass them
// K-major, X^T and dY^T, as TE transforms its columnwise copies. Throws
// std::invalid_argument (before writing) where cols is not a multiple of
// 16, rows x cols overflows or a pointer is null; x and y may be the same
// array. The inverse's outputs are left as `out` says too (float32 to undo
// a float32 transform exactly).
void hadamard_rows(const float* x, std::size_t rows, std::size_t cols, float* y,
                   std::uint16_t signs = kTeHadamardSigns, HadamardOutput out = HadamardOutput::bfloat16,
                   bool inverse = false);

}  // namespace lplab::kernels
