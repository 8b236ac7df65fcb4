// FLOP and byte counts of the lecture's ops (CS336 lecture 2), shared by the
// roofline experiment and its test.
//
// Conventions, chosen so that bf16 operands (2 bytes) give the lecture's
// figures exactly:
//   - every input element is read from memory once and every output element
//     written once; nothing else is counted (no write-allocate, no cache reuse
//     beyond that), so bytes = (elements in + elements out) x bytes per element;
//   - a multiply, an add, a compare each count 1 FLOP; a dot product of
//     length n counts 2n (n multiplies, n adds from zero);
//   - tanh-GELU counts 20 FLOPs per element: the 8 operations of
//     0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) plus 12 for tanh. FLOPs
//     of a transcendental are a convention, not a measurement; 12 is what
//     makes the lecture's "gelu ~ 5" (20 FLOPs / 4 bytes in bf16).
// In bf16: relu 1 / (2 + 2) = 1/4, gelu 20 / 4 = 5, dot 2n / (2 (2n + 1)) ~ 1/2,
// matvec 2n^2 / (2 (n^2 + 2n)) = n / (n + 2) ~ 1, matmul 2n^3 / (2 x 3n^2) =
// n/3 (341.33 for n = 1024).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace lplab::experiments {

enum class Op { relu, gelu_tanh, dot, matvec, matmul };
inline constexpr std::array<Op, 5> kOps{Op::relu, Op::gelu_tanh, Op::dot, Op::matvec, Op::matmul};

inline const char* op_name(Op op) {
  switch (op) {
    case Op::relu: return "relu";
    case Op::gelu_tanh: return "gelu_tanh";
    case Op::dot: return "dot";
    case Op::matvec: return "matvec";
    case Op::matmul: return "matmul";
  }
  return "?";
}

// matvec and matmul take n as the matrix size, the others as a length.
inline bool is_matrix_op(Op op) { return op == Op::matvec || op == Op::matmul; }

inline constexpr double kGeluTanhFlops = 8 + 12;  // 8 arithmetic operations + tanh

struct OpCount {
  std::size_t elements_in = 0, elements_out = 0;
  double flops = 0, bytes = 0;
};

inline OpCount op_count(Op op, std::size_t n, double bytes_per_element) {
  const double d = static_cast<double>(n);
  OpCount c;
  switch (op) {
    case Op::relu: c = {n, n, d, 0}; break;
    case Op::gelu_tanh: c = {n, n, kGeluTanhFlops * d, 0}; break;
    case Op::dot: c = {2 * n, 1, 2 * d, 0}; break;
    case Op::matvec: c = {n * n + n, n, 2 * d * d, 0}; break;
    case Op::matmul: c = {2 * n * n, n * n, 2 * d * d * d, 0}; break;
  }
  c.bytes = static_cast<double>(c.elements_in + c.elements_out) * bytes_per_element;
  return c;
}

inline std::vector<std::string> op_notes() {
  return {
      "bytes = (elements read + elements written) x bytes per element (FP6/FP4 packed): each "
      "operand crosses the memory bus once. FLOPs: relu n (a compare), gelu_tanh 20n (8 "
      "arithmetic operations + tanh counted as 12, a convention), dot 2n, matvec 2n^2, matmul "
      "2n^3.",
      "With bf16 (2 bytes) these give the lecture's intensities exactly: relu 1/(2+2) = 0.25, "
      "gelu 20/4 = 5, dot 2n/(2(2n+1)) ~ 0.5, matvec n/(n+2) ~ 1, matmul 2n^3/(2 x 3n^2) = n/3 = "
      "341.33 for n = 1024 (not 341.17: 1024/3 = 341.333...). fp32 halves every intensity, fp8 "
      "doubles it, packed fp4 quadruples it.",
  };
}

}  // namespace lplab::experiments
