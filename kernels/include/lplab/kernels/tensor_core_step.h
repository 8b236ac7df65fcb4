// The tensor-core accumulation model's arithmetic, portable: every function is
// LPLAB_HD and calls no libm, so the CPU kernels (tensor_core.cpp, and the
// SIMD model checked against it) and a device backend run the same steps.
//
// The model (docs/tensor-core-model.md; MMA-Sim, Xie et al., arXiv
// 2511.10909, for the parameters; Fasi et al., PeerJ CS 2021, for the
// alignment-and-truncation structure). One block of `block` products:
//   1. Alignment exponents: e(a) + e(b) for each product, e(x) = floor(log2|x|)
//      with a subnormal counted at its format's smallest normal exponent;
//      e(C) for the block's input C (at least fp32's -126); a zero term (a
//      zero product, or C = +0) counts as zero_exponent. E is the largest.
//   2. Every term, C included, is truncated toward zero to a multiple of
//      2^(E - F), F = fraction_bits.
//   3. The truncated terms are summed exactly.
//   4. The sum is normalised and truncated toward zero to result_bits
//      significant bits, its exponent clamped at -126; zero is +0, a magnitude
//      of 2^128 or more an infinity.
// A block's output is the next block's C (+0 for the first); every
// promote_every products the chain is added into an fp32 accumulator
// (round to nearest even) and restarts from +0.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lplab/formats/config.h"
#include "lplab/kernels/double_bits.h"

namespace lplab::kernels {

// One tensor-core chain's parameters, resolved for the operand formats
// (resolve_accumulator in accumulator.h gives the first five).
struct TensorCoreModel {
  int block;           // products per block
  int fraction_bits;   // F: bits kept below the block's largest alignment exponent
  int result_bits;     // significant bits of a block's output
  int zero_exponent;   // a zero term's alignment exponent
  int promote_every;   // products per promotion into fp32 (0: never)
  int emin_a, emin_b;  // the operand formats' smallest normal exponents
  // The output type of a block (and so the next block's C): its smallest
  // normal exponent (C's alignment exponent and step 4's clamp), the
  // magnitude 2^emax_out that overflows, and round to nearest-even instead of
  // truncation in step 4. fp32 (the model above) by default; the instruction
  // presets with fp16 C and D (mma.h: MmaRounding::nearest_fp16, result_bits
  // 11) set -14, 16 and true, which only the SIMD kernel reads (mma::chain is
  // its reference there).
  int emin_out = -126, emax_out = 128;
  bool nearest = false;
};

namespace tensor_core {

inline constexpr int kFp32Emin = -126;

// The exponent of a nonzero finite x, values below 2^emin counted at emin.
LPLAB_HD constexpr int alignment_exponent(double x, int emin) noexcept {
  const int e = double_bits::exponent_of(x);
  return e < emin ? emin : e;
}

// x truncated toward zero to a multiple of 2^q, as an integer count of 2^q.
LPLAB_HD constexpr std::int64_t truncate_to_grid(double x, int q) noexcept {
  return static_cast<std::int64_t>(double_bits::scale2(x, -q));
}

// Step 4: the block's exact sum (`units` of 2^q) normalised and truncated
// toward zero to `bits` significant bits.
LPLAB_HD constexpr double normalise_truncated(std::int64_t units, int q, int bits) noexcept {
  if (units == 0) return 0.0;  // +0
  const bool neg = units < 0;
  std::uint64_t mag = neg ? 0 - static_cast<std::uint64_t>(units) : static_cast<std::uint64_t>(units);
  // The result's exponent is that of its leading bit, at least -126; the
  // `bits`-bit significand then fixes the grid it is truncated to.
  const int width = lplab::detail::top_bit(mag) + 1;
  const int lead = q + width - 1 > kFp32Emin ? q + width - 1 : kFp32Emin;
  const int drop = (lead - (bits - 1)) - q;  // bits of `units` below the grid
  if (drop > 0) mag = drop >= 64 ? 0 : (mag >> drop) << drop;
  if (mag == 0) return 0.0;
  const double v = double_bits::scale2(static_cast<double>(mag), q);  // exact: at most `bits` <= 49 bits
  if (v >= 0x1p128) return double_bits::infinity(neg);
  return neg ? -v : v;
}

// One block: products a[t] * b[t * ldb] for t in [0, n), after the chain's
// value c. Returns the block's output, the next block's c.
LPLAB_HD constexpr double block_step(const TensorCoreModel& m, double c, const float* a, const float* b,
                                     std::size_t ldb, std::size_t n) noexcept {
  // Specials first: NaN anywhere, or infinities, decide the block by IEEE's rules.
  double special = 0.0;
  bool any_special = !double_bits::is_finite(c);
  if (any_special) special = c;
  for (std::size_t t = 0; t < n; ++t) {
    const double prod = static_cast<double>(a[t]) * static_cast<double>(b[t * ldb]);
    if (!double_bits::is_finite(prod)) {
      special = any_special ? special + prod : prod;  // inf + -inf and NaN give NaN
      any_special = true;
    }
  }
  if (any_special) return double_bits::is_nan(special) ? double_bits::quiet_nan() : special;
  // Step 1: the largest alignment exponent.
  int E = c != 0 ? alignment_exponent(c, kFp32Emin) : m.zero_exponent;
  bool all_zero = c == 0;
  for (std::size_t t = 0; t < n; ++t) {
    const float x = a[t], y = b[t * ldb];
    int e = m.zero_exponent;
    if (x != 0 && y != 0) {
      all_zero = false;
      e = alignment_exponent(x, m.emin_a) + alignment_exponent(y, m.emin_b);
    }
    E = e > E ? e : E;
  }
  if (all_zero) return 0.0;  // every term zero: +0
  // Steps 2 and 3: truncate each term to the grid 2^(E - F) and sum exactly.
  const int q = E - m.fraction_bits;
  std::int64_t units = c != 0 ? truncate_to_grid(c, q) : 0;
  for (std::size_t t = 0; t < n; ++t)
    units += truncate_to_grid(static_cast<double>(a[t]) * static_cast<double>(b[t * ldb]), q);
  // Step 4.
  return normalise_truncated(units, q, m.result_bits);
}

// One output: the dot product of a[0..k) and b[0..k) (b with stride ldb)
// under the model, blocks and promotion included.
LPLAB_HD constexpr double dot(const TensorCoreModel& m, const float* a, const float* b, std::size_t ldb,
                              std::size_t k) noexcept {
  const auto L = static_cast<std::size_t>(m.block);
  double promoted = 0.0;  // the fp32 accumulator of promotion (a float value)
  double c = 0.0;         // the chain: the previous block's output
  std::size_t in_chain = 0;
  for (std::size_t start = 0; start < k; start += L) {
    const std::size_t n = k - start < L ? k - start : L;
    c = block_step(m, c, a + start, b + start * ldb, ldb, n);
    in_chain += n;
    if (m.promote_every > 0 && in_chain == static_cast<std::size_t>(m.promote_every)) {
      promoted = static_cast<double>(static_cast<float>(promoted) + static_cast<float>(c));
      c = 0.0;
      in_chain = 0;
    }
  }
  if (m.promote_every > 0)
    return in_chain == 0 ? promoted : static_cast<double>(static_cast<float>(promoted) + static_cast<float>(c));
  return c;
}

}  // namespace tensor_core
}  // namespace lplab::kernels
