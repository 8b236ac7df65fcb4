// Accumulator::bf16_dot2 (matmul.h): VDPBF16PS numerics.
#pragma once

#include "lplab/kernels/matmul.h"

namespace lplab::kernels::detail {

// The scalar emulation, from the instruction's definition.
void bf16_dot2_emulated(const MatmulProblem& p, double* out);
// The instruction itself; false (nothing written) where the CPU lacks it.
bool bf16_dot2_hardware(const MatmulProblem& p, double* out);

}  // namespace lplab::kernels::detail
