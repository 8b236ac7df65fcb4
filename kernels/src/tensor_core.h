// The tensor-core accumulation model of Accumulator::tensor_core.
#pragma once

#include "lplab/kernels/matmul.h"

namespace lplab::kernels::detail {

// The parameters of one tensor-core accumulation chain, resolved from the
// options and the operand formats.
struct TensorCoreModel {
  int block;             // products per instruction block
  int fraction_bits;     // F: bits kept below the largest alignment exponent
  int result_bits;       // significant bits of a block's output
  int zero_exponent;     // a zero term's alignment exponent
  int promote_every;     // products per promotion into the fp32 accumulator (0: never)
  int emin_a, emin_b;    // the operand formats' smallest normal exponents
};

TensorCoreModel tensor_core_model(const MatmulProblem& p, const MatmulOptions& o);

// One output: the dot product of a[0..k) and b[0..k) (b with stride `ldb`)
// under the model.
double tensor_core_dot(const TensorCoreModel& model, const float* a, const float* b,
                       std::size_t ldb, std::size_t k);

// The SIMD model (tensor_core_simd.cpp); false where it does not apply
// (blocks of more than 32, F > 44, no double lanes): the caller then runs the
// scalar tensor_core_dot.
bool tensor_core_fast(const MatmulProblem& p, const TensorCoreModel& model, double* out, unsigned threads);

// Bands of rows on o.threads workers.
void accumulate_tensor_core(const MatmulProblem& p, const MatmulOptions& o, double* out);
// The scalar model alone (one thread): the reference of the SIMD one.
void accumulate_tensor_core_reference(const MatmulProblem& p, const MatmulOptions& o, double* out);

}  // namespace lplab::kernels::detail
