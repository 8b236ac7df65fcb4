// The oracle of arith_oracle.h over blocks of operands, for the exhaustive
// sweeps: branch-free loops over arrays of doubles that the compiler
// vectorizes, in a version per x86-64 instruction set chosen when the
// program loads (arith_oracle_block.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "formats/arith_oracle.h"

namespace lplab::testing::oracle {

// Steps (ii) and (iii) of a sweep's block, for i < n:
//   ro[i]   = a op b[i] rounded to odd (ro_residual), an exact zero sum signed
//             for the mode (zero_sum_sign);
//   want[i] = ro[i] rounded into the format in the mode (round_to).
// op is a binary op (add, sub, mul, div); mode is not stochastic. Runs in the
// default floating-point environment (round to nearest).
void expected_block(const Format16& f, Op op, Round mode, double a, const double* b, double* ro,
                    double* want, std::size_t n);

// Step (iv): how many of lplab's result codes got[i] disagree with want[i] in
// the value domain, the codes decoded by the oracle's decoder: the same value
// (and zero sign), or where want[i] is NaN, a NaN whose code has the quiet
// bit set.
std::size_t count_wrong(const Format16& f, const std::uint16_t* got, const double* want,
                        std::size_t n);

// The literal route, for the tests of the residual one: ro[i] = ro_fenv(op,
// a, b[i]) under round toward zero (for sqrt, ro[0] = sqrt(a) rounded to odd
// when n == 1), the caller's rounding direction restored after. Compiled
// apart with -frounding-math (arith_oracle_fenv.cpp).
void ro_fenv_block(Op op, double a, const double* b, double* ro, std::size_t n);

}  // namespace lplab::testing::oracle
