// The error measures of a matmul against its reference, shared by the
// experiments that sweep accumulators (matmul_error) and matrix units
// (matrix_units), so that their columns mean the same thing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "lplab/lab/vocabulary.h"
#include "lplab/kernels/matmul.h"
#include "lplab/experiments/sampling.h"

namespace lplab::experiments {

struct MatmulErrors {
  double mean = 0, max = 0, norm = 0, vs_abs = 0;
};

// Relative errors of c against ref: per output |c - r| / |r| (mean and max),
// the Frobenius ratio ||c - ref|| / ||ref||, and the largest |c - r| over
// sum_t |a_it b_tj| (abs_sum: the quantity the classical bound gamma_k
// bounds).
inline MatmulErrors matmul_errors(std::span<const float> c, std::span<const double> ref,
                                  std::span<const double> abs_sum) {
  MatmulErrors s;
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double d = std::abs(static_cast<double>(c[i]) - ref[i]);
    const double rel = d == 0 ? 0.0 : d / std::abs(ref[i]);  // inf where ref is an exact zero
    s.mean += rel;
    s.max = std::max(s.max, rel);
    s.vs_abs = std::max(s.vs_abs, abs_sum[i] == 0 ? 0.0 : d / abs_sum[i]);
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
  }
  s.mean /= static_cast<double>(c.size());
  s.norm = ref2 == 0 ? 0.0 : std::sqrt(diff2 / ref2);
  return s;
}

// sum_t |a_it b_tj| for row-major A (m x k) and B (k x n), in double.
inline std::vector<double> matmul_abs_sums(std::size_t m, std::size_t n, std::size_t k, const float* a,
                                           const float* b) {
  std::vector<double> out(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t t = 0; t < k; ++t) {
      const double x = std::abs(static_cast<double>(a[i * k + t]));
      for (std::size_t j = 0; j < n; ++j) out[i * n + j] += x * std::abs(static_cast<double>(b[t * n + j]));
    }
  return out;
}

// The operands both experiments draw for one k: A (m x k) and B (k x n) the
// N(0, 1) samples (|N(0, 1)| where `positive`) of streams 2k and 2k + 1 of
// the seed, rounded to nearest-even into f; the exact sums of their product
// (the fp64 accumulator, before any output rounding) and sum |a b|.
struct SampledMatmul {
  std::vector<float> a, b;
  kernels::MatmulProblem problem{};  // points into a and b: moved, never copied
  std::vector<double> exact, abs_sum;

  SampledMatmul() = default;
  SampledMatmul(SampledMatmul&&) = default;
  SampledMatmul(const SampledMatmul&) = delete;
  SampledMatmul& operator=(const SampledMatmul&) = delete;
};

inline SampledMatmul sampled_matmul(const FormatEntry& f, std::uint64_t seed, std::size_t m, std::size_t n,
                                    std::size_t k, bool positive) {
  SampledMatmul s;
  std::size_t changed = 0;
  s.a = matmul_operand_values(f, sampling::matmul_samples(seed, 2 * k, m * k, positive), changed);
  s.b = matmul_operand_values(f, sampling::matmul_samples(seed, 2 * k + 1, k * n, positive), changed);
  const kernels::OperandRange range = operand_range(f);
  s.problem = {m, n, k, s.a.data(), s.b.data(), range, range};
  s.exact.resize(m * n);
  kernels::matmul_sums(s.problem, s.exact.data(), kernels::MatmulOptions{.accumulator = kernels::accumulators::fp64});
  s.abs_sum = matmul_abs_sums(m, n, k, s.a.data(), s.b.data());
  return s;
}

}  // namespace lplab::experiments
