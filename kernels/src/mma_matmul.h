// Accumulator::instruction in matmul (mma_matmul.cpp).
#pragma once

#include "lplab/kernels/matmul.h"

namespace lplab::kernels::detail {

// The chained instruction for every output of p; a block-scaled instruction
// takes the scales' values, A's as m rows of k / block and B's transposed
// (n rows), and refuses to run without them (and a plain one with them).
// Throws std::invalid_argument, before any output is written, for an operand
// value the instruction's type does not hold.
void accumulate_instruction(const MatmulProblem& p, const MatmulOptions& o, const float* scales_a,
                            const float* scales_b_t, double* out);

}  // namespace lplab::kernels::detail
