// The tensor-core accumulation model of Accumulator::tensor_core.
#pragma once

#include "lplab/kernels/matmul.h"
#include "lplab/kernels/tensor_core_step.h"

namespace lplab::kernels::detail {

// The SIMD model (tensor_core_simd.cpp); false where it does not apply
// (blocks of more than 32, F > 44, no double lanes): the caller then runs the
// scalar model (tensor_core::dot).
// c_in (m x n, or nullptr for +0) is the first block's C of every output.
// With `scales` (block-scaled instructions: MmaAlgorithm::scaled), each
// product is a b times its two block scales, powers of two whose exponents
// add to its alignment exponent.
struct TensorCoreScales {
  const float* a;    // m x (k / block): A's scale of each row's blocks
  const float* b_t;  // n x (k / block): B's of each column's
  std::size_t block;
  int emin;  // the scale type's smallest normal exponent
};
bool tensor_core_fast(const MatmulProblem& p, const TensorCoreModel& model, double* out, unsigned threads,
                      const double* c_in = nullptr, const TensorCoreScales* scales = nullptr);

// The float-lane kernel (tensor_core_narrow.cpp), which tensor_core_fast
// tries first (with scales: one per block, each finite and nonzero): false where the operands' products are not
// exact floats it can scale (more than 12 significant bits, magnitudes
// outside 2^-50 .. 2^60), F > 25, blocks of more than 32, or no float
// halves (SCALAR).
bool tensor_core_narrow(const MatmulProblem& p, const TensorCoreModel& model, double* out, unsigned threads,
                        const double* c_in, const TensorCoreScales* scales = nullptr);

// Bands of rows on o.threads workers.
void accumulate_tensor_core(const MatmulProblem& p, const MatmulOptions& o, double* out);
// The scalar model alone (one thread): the reference of the SIMD one.
void accumulate_tensor_core_reference(const MatmulProblem& p, const MatmulOptions& o, double* out);

}  // namespace lplab::kernels::detail
