// The accumulators of lplab::kernels::matmul (lplab/kernels/matmul.h). The
// tensor-core model is in tensor_core.cpp.
#include "lplab/kernels/matmul.h"

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lplab/kernels/exact_sum.h"
#include "bf16_dot2.h"
#include "mma_matmul.h"
#include "narrow_acc.h"
#include "row_bands.h"
#include "hwy/targets.h"
#include "lplab/kernels/targets.h"
#include "tensor_core.h"

namespace lplab::kernels {

namespace detail {

// gemm_f32.cpp, compiled once per x86 level (kernels/CMakeLists.txt).
#define LPLAB_GEMM_DECLARE(level)                                                                 \
  void gemm_f32_##level(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, \
                        const float* b, std::size_t ldb, float* c, std::size_t ldc);               \
  const char* gemm_f32_isa_##level();
LPLAB_GEMM_DECLARE(base)
#if LPLAB_GEMM_X86_LEVELS
LPLAB_GEMM_DECLARE(v3)
#endif
#if LPLAB_GEMM_X86_V4
LPLAB_GEMM_DECLARE(v4)
#endif
#undef LPLAB_GEMM_DECLARE

namespace {

using GemmFn = void (*)(std::size_t, std::size_t, std::size_t, const float*, std::size_t, const float*,
                        std::size_t, float*, std::size_t);
struct Gemm {
  GemmFn run;
  const char* (*isa)();
};

// The Eigen copy for the SIMD target the kernels dispatch to: the same
// choice (and the same LPLAB_SIMD_TARGET / force_simd_target pinning) as the
// bulk conversion. Highway's x86 targets are ordered best first: AVX3 and its
// successors (AVX3_DL, AVX3_ZEN4, AVX3_SPR) have bits at or below HWY_AVX3.
Gemm pick_gemm() {
#if LPLAB_GEMM_X86_LEVELS
  const std::int64_t t = current_simd_target().id;
#if LPLAB_GEMM_X86_V4
  if (t <= HWY_AVX3) return {&gemm_f32_v4, &gemm_f32_isa_v4};
#endif
  if (t == HWY_AVX2) return {&gemm_f32_v3, &gemm_f32_isa_v3};
#endif
  return {&gemm_f32_base, &gemm_f32_isa_base};
}

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("matmul: " + what); }

// A 128-bit integer times 2^exp, rounded to odd at 53 bits.
double int128_to_double_odd(__int128 v, int exp) {
  if (v == 0) return 0.0;  // an exact zero sum is +0
  const bool neg = v < 0;
  unsigned __int128 mag = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  const int width = 128 - (static_cast<std::uint64_t>(mag >> 64) != 0
                               ? std::countl_zero(static_cast<std::uint64_t>(mag >> 64))
                               : 64 + std::countl_zero(static_cast<std::uint64_t>(mag)));
  int shift = width > 53 ? width - 53 : 0;
  std::uint64_t sig;
  if (shift > 0) {
    const bool sticky = (mag & ((static_cast<unsigned __int128>(1) << shift) - 1)) != 0;
    sig = static_cast<std::uint64_t>(mag >> shift) | (sticky ? 1u : 0u);
  } else {
    sig = static_cast<std::uint64_t>(mag);
  }
  const double d = std::ldexp(static_cast<double>(sig), exp + shift);  // exact: sig < 2^53
  return neg ? -d : d;
}

int bit_width(std::size_t k) { return static_cast<int>(std::bit_width(k)); }

// fp64, exact: operands as integers in units of their quantum; each product
// is exact in 128 bits and so is the sum (check_matmul-independent: the caller
// checked that ra + rb + bit_width(k) <= 126).
void accumulate_fixed(const MatmulProblem& p, double* out) {
  const std::size_t m = p.m, n = p.n, k = p.k;
  std::vector<std::int64_t> ai(m * k), bt(n * k);  // B transposed: column j contiguous
  std::vector<char> row_special(m, 0), col_special(n, 0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t t = 0; t < k; ++t) {
      const float x = p.a[i * k + t];
      if (!std::isfinite(x)) row_special[i] = 1;
      else ai[i * k + t] = static_cast<std::int64_t>(std::ldexp(static_cast<double>(x), -p.ra.quantum_exp));
    }
  for (std::size_t t = 0; t < k; ++t)
    for (std::size_t j = 0; j < n; ++j) {
      const float x = p.b[t * n + j];
      if (!std::isfinite(x)) col_special[j] = 1;
      else bt[j * k + t] = static_cast<std::int64_t>(std::ldexp(static_cast<double>(x), -p.rb.quantum_exp));
    }
  const int exp = p.ra.quantum_exp + p.rb.quantum_exp;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (row_special[i] || col_special[j]) {
        // An infinity or NaN in the row or column: the result is infinite or
        // NaN whatever the order, and double arithmetic follows IEEE's rules.
        double s = 0;
        for (std::size_t t = 0; t < k; ++t)
          s += static_cast<double>(p.a[i * k + t]) * static_cast<double>(p.b[t * n + j]);
        out[i * n + j] = s;
        continue;
      }
      const std::int64_t* ar = &ai[i * k];
      const std::int64_t* bc = &bt[j * k];
      __int128 s = 0;
      for (std::size_t t = 0; t < k; ++t) s += static_cast<__int128>(ar[t]) * bc[t];
      out[i * n + j] = int128_to_double_odd(s, exp);
    }
}

// fp64 where the operands do not fit fixed point: products exact in double,
// summed in double in order.
void accumulate_double(const MatmulProblem& p, double* out) {
  const std::size_t m = p.m, n = p.n, k = p.k;
  for (std::size_t i = 0; i < m; ++i) {
    double* row = out + i * n;
    std::fill(row, row + n, 0.0);
    for (std::size_t t = 0; t < k; ++t) {
      const double a = p.a[i * k + t];
      const float* b = p.b + t * n;
      for (std::size_t j = 0; j < n; ++j) row[j] += a * static_cast<double>(b[j]);
    }
  }
}

// fp16/bf16, the scalar reference of narrow_acc.cpp's SIMD kernel:
// acc <- round_nearest_even_Acc(acc + a*b), exactly: the product
// is exact in double, TwoSum gives acc + a*b = hi + lo exactly, and rounding
// hi + lo to odd at 53 bits first makes the rounding into Acc correct.
template <class Acc>
void accumulate_narrow(const MatmulProblem& p, double* out) {
  const std::size_t m = p.m, n = p.n, k = p.k;
  std::vector<double> acc(n);
  for (std::size_t i = 0; i < m; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (std::size_t t = 0; t < k; ++t) {
      const double a = p.a[i * k + t];
      const float* b = p.b + t * n;
      for (std::size_t j = 0; j < n; ++j) {
        const double prod = a * static_cast<double>(b[j]);
        acc[j] = narrow_add<Acc>(acc[j], prod);
      }
    }
    std::copy(acc.begin(), acc.end(), out + i * n);
  }
}

template <class Acc>
NarrowFormat narrow_format() {
  using F = finfo<Acc>;
  return {F::nmant + 1, F::minexp, F::maxexp - 1};
}

}  // namespace

void matmul_narrow_reference(const MatmulProblem& p, Accumulator acc, double* out) {
  if (acc == Accumulator::fp16) accumulate_narrow<float16>(p, out);
  else if (acc == Accumulator::bf16) accumulate_narrow<bfloat16>(p, out);
  else fail("matmul_narrow_reference: fp16 or bf16 only");
}

void matmul_bf16_dot2(const MatmulProblem& p, bool hardware, double* out) {
  if (!hardware) return bf16_dot2_emulated(p, out);
  if (!bf16_dot2_hardware(p, out)) fail("this CPU has no AVX512-BF16");
}

void matmul_tensor_core_reference(const MatmulProblem& p, const MatmulOptions& o, double* out) {
  accumulate_tensor_core_reference(p, o, out);
}

}  // namespace detail

using namespace detail;  // (this file's own helpers: fail, pick_gemm, the accumulators)

void check_block_scaled(std::size_t rows, std::size_t k, int block_size, const void* elems,
                        const void* scales, float tensor_scale, const char* name, bool tensor_amax,
                        int block_rows) {
  const std::string op = std::string("block-scaled ") + name;
  // A tensor's amax (Transformer Engine's NVFP4) is at least 0, NaN where the
  // tensor held one (its scales are NaN then); s_enc is finite and nonzero.
  if (tensor_amax ? tensor_scale < 0 : !std::isfinite(tensor_scale) || tensor_scale == 0)
    fail(op + " has tensor_scale " + std::to_string(tensor_scale) + "; " +
         (tensor_amax ? "a tensor's amax is not negative" : "it must be finite and nonzero"));
  if (block_size < 1) fail(op + " has block_size " + std::to_string(block_size));
  if (block_rows < 1) fail(op + " has block_rows " + std::to_string(block_rows));
  if (k % static_cast<std::size_t>(block_size) != 0)
    fail(op + ": k = " + std::to_string(k) + " is not a multiple of the block size " + std::to_string(block_size));
  if (rows != 0 && k > (std::size_t{1} << 40) / rows) fail(op + " has more than 2^40 elements");
  if (rows * k != 0 && (elems == nullptr || scales == nullptr))
    fail(op + ": elements or scales are null with " + std::to_string(rows) + " x " + std::to_string(k) + " elements");
}

void check_matmul(std::size_t m, std::size_t n, std::size_t k, const void* a, const void* b,
                  const void* c, const MatmulOptions& o, const OperandRange& ra,
                  const OperandRange& rb, int output_precision) {
  constexpr std::size_t kMax = std::size_t{1} << 40;  // elements per operand: absurd beyond
  auto count = [&](std::size_t r, std::size_t s, const char* name) {
    if (r != 0 && s > kMax / r)
      fail(std::string(name) + " has " + std::to_string(r) + " x " + std::to_string(s) +
           " elements, more than 2^40");
    return r * s;
  };
  if (count(m, k, "A") != 0 && a == nullptr) fail("A is null with m*k = " + std::to_string(m * k));
  if (count(k, n, "B") != 0 && b == nullptr) fail("B is null with k*n = " + std::to_string(k * n));
  if (count(m, n, "C") != 0 && c == nullptr) fail("C is null with m*n = " + std::to_string(m * n));
  if (o.threads > 1024) fail("threads " + std::to_string(o.threads) + " is more than 1024");
  if (!std::isfinite(o.scale_a) || !std::isfinite(o.scale_b))
    fail("scale_a and scale_b must be finite (got " + std::to_string(o.scale_a) + ", " + std::to_string(o.scale_b) + ")");
  if (static_cast<unsigned>(o.round) > static_cast<unsigned>(Round::stochastic))
    fail("unknown rounding " + std::to_string(static_cast<int>(o.round)));
  if (o.overflow != Overflow::ieee && o.overflow != Overflow::saturate)
    fail("unknown overflow policy " + std::to_string(static_cast<int>(o.overflow)));
  if (const AccumulatorProblem e = accumulator_problem(o.accumulator, ra, rb, output_precision, o.round))
    fail(e.message);
  if (o.c_input != nullptr && o.accumulator.kind != Accumulator::instruction)
    fail(std::string("an input C (MatmulOptions::c_input) is the first instruction's C of an instruction "
                     "accumulator; the ") + accumulator_name(o.accumulator.kind) +
         " accumulator takes none (add C to its output)");
}


namespace detail {

void matmul_fp32(const MatmulProblem& p, const MatmulOptions& o, float* out) {
  const Gemm gemm = pick_gemm();
  for_problem_bands(p, o.threads, [&](const MatmulProblem& band, std::size_t first) {
    gemm.run(band.m, p.n, p.k, band.a, p.k, p.b, p.n, out + first * p.n, p.n);
  });
}

void accumulate_band(const MatmulProblem& p, const MatmulOptions& o, double* out);

}  // namespace detail

const char* gemm_f32_isa() { return detail::pick_gemm().isa(); }

void matmul_sums(const MatmulProblem& p, double* sums, const MatmulOptions& options) {
  // No output rounding: every output precision is fine (0).
  check_matmul(p.m, p.n, p.k, p.a, p.b, sums, options, p.ra, p.rb, 0);
  if (p.m == 0 || p.n == 0) return;
  matmul_accumulate(p, options, sums);
}

void matmul_accumulate(const MatmulProblem& p, const MatmulOptions& o, double* out) {
  // These prepare B once (in double, padded) and split the rows themselves.
  switch (o.accumulator.kind) {
    case Accumulator::fp16:
      return narrow_accumulate(narrow_format<float16>(), p.m, p.n, p.k, p.a, p.b, out, o.threads);
    case Accumulator::bf16:
      return narrow_accumulate(narrow_format<bfloat16>(), p.m, p.n, p.k, p.a, p.b, out, o.threads);
    case Accumulator::tensor_core: return accumulate_tensor_core(p, o, out);
    case Accumulator::instruction: return accumulate_instruction(p, o, nullptr, nullptr, out);
    default: break;
  }
  for_problem_bands(p, o.threads,
                    [&](const MatmulProblem& band, std::size_t first) { accumulate_band(band, o, out + first * p.n); });
}

namespace detail {

void accumulate_band(const MatmulProblem& p, const MatmulOptions& o, double* out) {
  switch (o.accumulator.kind) {
    case Accumulator::fp64:
      if (p.ra.fixed && p.rb.fixed && p.ra.magnitude_bits + p.rb.magnitude_bits + bit_width(p.k) <= 126)
        accumulate_fixed(p, out);
      else
        accumulate_double(p, out);
      return;
    case Accumulator::fp32: {
      std::vector<float> f(p.m * p.n);
      pick_gemm().run(p.m, p.n, p.k, p.a, p.k, p.b, p.n, f.data(), p.n);
      std::copy(f.begin(), f.end(), out);
      return;
    }
    case Accumulator::fp16:
    case Accumulator::bf16:
    case Accumulator::tensor_core:
    case Accumulator::instruction: fail("accumulate_band: banded by matmul_accumulate");
    case Accumulator::bf16_dot2:
      if (!bf16_dot2_hardware(p, out)) bf16_dot2_emulated(p, out);
      return;
  }
}

}  // namespace detail
}  // namespace lplab::kernels
