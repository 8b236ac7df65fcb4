// Accumulator::tensor_core: NVIDIA Hopper's tensor-core accumulation as the
// bit-level model of MMA-Sim (Xie, Wang, Yang & Yang, arXiv 2511.10909)
// describes wgmma, with Fasi, Higham, Mikaitis & Pranesh (PeerJ CS 2021) for
// the alignment-and-truncation structure and DeepSeek-V3 (arXiv 2412.19437,
// section 3.3.2) for promotion. docs/tensor-core-model.md states the model and
// where each parameter comes from.
//
// One block of L products (L = 32 for 8-bit inputs, 16 for 16-bit ones):
//   1. Alignment exponents: e(a) + e(b) for each product (the operands'
//      exponents; the product is not renormalised), with e(x) = floor(log2|x|)
//      and a subnormal counted at its format's smallest normal exponent; e(C)
//      for the block's input C (fp32: at least -126); a zero term (a zero
//      product, or C = +0 as in the first block) counts as the model's
//      zero_exponent (-133: MMA-Sim 2.1.1 for sm_90, fp32 output). E is the
//      largest.
//   2. Every term, C included, is truncated toward zero to a multiple of
//      2^(E - F) (F = the model's fraction_bits).
//   3. The truncated terms are summed exactly.
//   4. The sum is normalised and truncated toward zero to R significant bits
//      (R = result_bits: 14, "E8M13", for Hopper FP8; 24, fp32's, for
//      BF16/FP16), its exponent clamped at fp32's -126 (subnormal results are
//      kept, on the grid 2^(-126 - R + 1)). A zero sum is +0, a magnitude of
//      2^128 or more an infinity. The last block's output is the result: there
//      is no final rounding to nearest.
// The output of a block is the next block's C (+0 for the first). With
// promote_every = N, every N products the chain's output is added into an
// fp32 accumulator with round-to-nearest-even and the chain restarts from +0.
#include "tensor_core.h"

#include "row_bands.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace lplab::kernels::detail {
namespace {

// The exponent of a nonzero finite x, with values below 2^emin counted at emin.
int alignment_exponent(double x, int emin) {
  const int e = std::ilogb(x);
  return e < emin ? emin : e;
}

constexpr int kFp32Emin = -126;

// x truncated toward zero to a multiple of 2^q, as an integer count of 2^q.
std::int64_t truncate_to_grid(double x, int q) { return static_cast<std::int64_t>(std::ldexp(x, -q)); }

// The block's exact sum (`units` of 2^q) normalised and truncated toward zero
// to `bits` significant bits.
double normalise_truncated(std::int64_t units, int q, int bits) {
  if (units == 0) return 0.0;  // +0
  const bool neg = units < 0;
  std::uint64_t mag = neg ? 0 - static_cast<std::uint64_t>(units) : static_cast<std::uint64_t>(units);
  // The result's exponent is that of its leading bit, at least -126; the
  // `bits`-bit significand then fixes the grid it is truncated to.
  const int width = 64 - std::countl_zero(mag);
  const int lead = std::max(q + width - 1, kFp32Emin);
  const int drop = (lead - (bits - 1)) - q;  // bits of `units` below the grid
  if (drop > 0) mag = drop >= 64 ? 0 : (mag >> drop) << drop;
  if (mag == 0) return 0.0;
  const double v = std::ldexp(static_cast<double>(mag), q);  // exact: at most `bits` <= 49 bits
  if (v >= 0x1p128) return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  return neg ? -v : v;
}

}  // namespace

// (The options were checked by check_matmul.)
TensorCoreModel tensor_core_model(const MatmulProblem& p, const MatmulOptions& o) {
  const AccumulatorModel r = resolve_accumulator(o.accumulator, p.ra, p.rb);
  return {r.block, r.fraction_bits, r.result_bits, r.zero_exponent, r.promote_every, p.ra.emin, p.rb.emin};
}

double tensor_core_dot(const TensorCoreModel& model, const float* a, const float* b,
                       std::size_t ldb, std::size_t k) {
  const int F = model.fraction_bits;
  double promoted = 0.0;  // the fp32 accumulator of promotion (a float value)
  double c = 0.0;         // the chain: the previous block's output
  std::size_t in_chain = 0;
  for (std::size_t start = 0; start < k; start += static_cast<std::size_t>(model.block)) {
    const std::size_t end = std::min(k, start + static_cast<std::size_t>(model.block));
    // Specials first: NaN anywhere, or infinities, decide the block by IEEE's rules.
    double special = 0.0;
    bool any_special = !std::isfinite(c);
    if (any_special) special = c;
    for (std::size_t t = start; t < end; ++t) {
      const double prod = static_cast<double>(a[t]) * static_cast<double>(b[t * ldb]);
      if (!std::isfinite(prod)) {
        special = any_special ? special + prod : prod;  // inf + -inf and NaN give NaN
        any_special = true;
      }
    }
    if (any_special) {
      c = std::isnan(special) ? std::numeric_limits<double>::quiet_NaN() : special;
    } else {
      // Step 1: the largest alignment exponent.
      int E = c != 0 ? alignment_exponent(c, kFp32Emin) : model.zero_exponent;
      bool all_zero = c == 0;
      for (std::size_t t = start; t < end; ++t) {
        const float x = a[t], y = b[t * ldb];
        if (x == 0 || y == 0) {
          E = std::max(E, model.zero_exponent);
          continue;
        }
        all_zero = false;
        E = std::max(E, alignment_exponent(x, model.emin_a) + alignment_exponent(y, model.emin_b));
      }
      if (all_zero) {
        c = 0.0;  // every term zero: +0
      } else {
        // Steps 2 and 3: truncate each term to the grid 2^(E - F) and sum exactly.
        const int q = E - F;
        std::int64_t units = c != 0 ? truncate_to_grid(c, q) : 0;
        for (std::size_t t = start; t < end; ++t)
          units += truncate_to_grid(static_cast<double>(a[t]) * static_cast<double>(b[t * ldb]), q);
        // Step 4.
        c = normalise_truncated(units, q, model.result_bits);
      }
    }
    in_chain += end - start;
    if (model.promote_every > 0 && in_chain == static_cast<std::size_t>(model.promote_every)) {
      promoted = static_cast<double>(static_cast<float>(promoted) + static_cast<float>(c));
      c = 0.0;
      in_chain = 0;
    }
  }
  if (model.promote_every > 0)
    return in_chain == 0 ? promoted : static_cast<double>(static_cast<float>(promoted) + static_cast<float>(c));
  return c;
}

void accumulate_tensor_core(const MatmulProblem& p, const MatmulOptions& o, double* out) {
  if (tensor_core_fast(p, tensor_core_model(p, o), out, o.threads)) return;
  for_problem_bands(p, o.threads, [&](const MatmulProblem& band, std::size_t first) {
    accumulate_tensor_core_reference(band, o, out + first * p.n);
  });
}

void accumulate_tensor_core_reference(const MatmulProblem& p, const MatmulOptions& o, double* out) {
  const TensorCoreModel model = tensor_core_model(p, o);
  for (std::size_t i = 0; i < p.m; ++i)
    for (std::size_t j = 0; j < p.n; ++j)
      out[i * p.n + j] = tensor_core_dot(model, p.a + i * p.k, p.b + j, p.n, p.k);
}

}  // namespace lplab::kernels::detail
