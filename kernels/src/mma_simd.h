// The matrix-unit models of AMD's units, vectorised across output columns
// (mma_simd.cpp): fma, ftz_pairs, exact, two_stage and two_stage_split
// (mma_step.h), and NVIDIA's group_scaled (block-scaled FP4). mma::chain is their reference; a test
// compares them bit for bit on every SIMD target.
#pragma once

#include <cstddef>

#include "lplab/kernels/mma_step.h"

namespace lplab::kernels::detail {

// One call's operands as the kernel reads them (mma_simd.cpp packs them).
struct MmaSimdArgs {
  const MmaModel* model;
  std::size_t kp, n, ldb;  // products per output; columns, and columns rounded up to whole vectors
  std::size_t promote;     // products per promotion (0: none)
  const void* a;           // rows x kp of the lane type (float, or double for fp64 fma and exact)
  const void* b;           // a vector of columns at a time: b[(v kp + t) lanes + lane]
  const void* c;           // rows x ldb of the lane type, or nullptr for +0
  double* out;             // rows x n
  // two_stage and two_stage_split: the operands' alignment exponents, packed
  // as a and b (a zero's far below any other: zero products never decide).
  const double* ea = nullptr;
  const double* eb = nullptr;
  // group_scaled: the block scales and their alignment exponents, A's rows x
  // blocks (block = the model's scale_block), B's packed a vector at a time,
  // sb[(v blocks + q) lanes + lane].
  std::size_t blocks = 0;
  const double* sa = nullptr;
  const double* esa = nullptr;
  const double* sb = nullptr;
  const double* esb = nullptr;
  // ftz_pairs: per row of A and per vector of B's columns, the least
  // exponent of a nonzero finite operand's lowest set bit (INT_MAX where
  // there is none); whether every finite C is a multiple of 2^-126.
  const int* lsb_a = nullptr;
  const int* lsb_b = nullptr;
  bool c_coarse = false;
};

// D for rows x n outputs (row-major into out): A rows x kp and B kp x n as
// the instruction's operand values (k padded with zeros to whole
// instructions), c_in (rows x n, or nullptr for +0) the first instruction's
// C, promote_every as mma::chain's. False, having written nothing, where the
// model is none of the six or this target cannot run it bit for bit (fma
// without a fused multiply-add; exact and two_stage on SCALAR, whose
// double-to-float conversion saturates; MXCSR flushing subnormals): the
// caller then runs mma::chain.
// group_scaled (mxf4, mxf4nvf4) also takes the block scales, A's rows x
// (kp / scale_block) and B's n x (kp / scale_block).
bool mma_simd(const MmaModel& model, std::size_t rows, std::size_t n, std::size_t kp, const float* a,
              const float* b, const double* c_in, int promote_every, unsigned threads, double* out,
              const float* scales_a = nullptr, const float* scales_b_t = nullptr);

}  // namespace lplab::kernels::detail
