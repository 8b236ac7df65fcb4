// The fp32 GEMM of Accumulator::fp32: Eigen's, compiled once per x86 SIMD
// level. Eigen chooses its instructions from the compiler's target macros
// (__AVX512F__, __AVX2__, __FMA__) at compile time, so one portable build would
// run the baseline SSE2 kernel everywhere (about 42 GFLOP/s on a Zen 5 core at
// 2048^3, against about 139 for the same code built for AVX-512). CMake
// compiles this file three times — for x86-64-v4 (AVX-512), x86-64-v3 (AVX2 +
// FMA) and the baseline — each with LPLAB_GEMM_LEVEL naming the function it
// defines, and matmul.cpp calls the one that matches the SIMD target the
// kernels dispatch to (targets.h).
//
// The trap: Eigen is header-only, so each copy instantiates the same inline
// and template functions, compiled for a different CPU, and the linker keeps
// one of each for the whole program — an AVX-512 copy could run on an AVX2
// CPU. Renaming Eigen's namespace per level (the #define below) gives every
// copy distinct symbols. The standard headers are included before, with the
// same flags; the only functions of theirs used here are trivial inline ones.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <type_traits>

#ifndef LPLAB_GEMM_LEVEL
#error "compiled by kernels/CMakeLists.txt with LPLAB_GEMM_LEVEL set"
#endif
#define LPLAB_CAT2(a, b) a##b
#define LPLAB_CAT(a, b) LPLAB_CAT2(a, b)
#define Eigen LPLAB_CAT(lplab_eigen_, LPLAB_GEMM_LEVEL)
#include <Eigen/Core>

namespace lplab::kernels::detail {

// C[m x n] = A[m x k] * B[k x n], all row-major with leading dimensions lda,
// ldb, ldc (elements).
void LPLAB_CAT(gemm_f32_, LPLAB_GEMM_LEVEL)(std::size_t m, std::size_t n, std::size_t k,
                                            const float* a, std::size_t lda, const float* b,
                                            std::size_t ldb, float* c, std::size_t ldc) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  const auto I = [](std::size_t v) { return static_cast<Eigen::Index>(v); };
  const Eigen::Map<const RowMajor, 0, Stride> ma(a, I(m), I(k), Stride(I(lda)));
  const Eigen::Map<const RowMajor, 0, Stride> mb(b, I(k), I(n), Stride(I(ldb)));
  Eigen::Map<RowMajor, 0, Stride> mc(c, I(m), I(n), Stride(I(ldc)));
  mc.noalias() = ma * mb;
}

// Which instruction set this copy's Eigen uses, for tests and benchmarks.
const char* LPLAB_CAT(gemm_f32_isa_, LPLAB_GEMM_LEVEL)() { return Eigen::SimdInstructionSetsInUse(); }

}  // namespace lplab::kernels::detail
