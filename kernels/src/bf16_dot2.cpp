// Accumulator::bf16_dot2: the numerics of x86's VDPBF16PS (Intel SDM,
// "VDPBF16PS—Dot Product of BF16 Pairs Accumulated into Packed Single
// Precision"): per fp32 lane,
//   srcdest += src1.bf16[2i+1] * src2.bf16[2i+1]   (a fused multiply-add)
//   srcdest += src1.bf16[2i+0] * src2.bf16[2i+0]
// each rounded to nearest-even, input denormals treated as zero, output
// denormals flushed to zero, MXCSR neither read nor written. A GEMM built on
// it walks k in pairs; here an odd k is padded with a +0 product, as a
// kernel pads its last pair.
#include "bf16_dot2.h"
#include "lplab/kernels/probes.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LPLAB_HAVE_DPBF16_BUILD 1
#else
#define LPLAB_HAVE_DPBF16_BUILD 0
#endif

namespace lplab::kernels::detail {
namespace {

// Denormals to a zero of the same sign (DAZ on inputs, FTZ on results).
float flush(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

// One fused multiply-add of the instruction.
float dp_step(float acc, float a, float b) { return flush(std::fma(flush(a), flush(b), flush(acc))); }

// The bf16 code of a value that is exact in bf16 (the top half of its float bits).
std::uint16_t bf16_bits(float x) { return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(x) >> 16); }

}  // namespace

void bf16_dot2_emulated(const MatmulProblem& p, double* out) {
  for (std::size_t i = 0; i < p.m; ++i)
    for (std::size_t j = 0; j < p.n; ++j) {
      float acc = 0.0f;
      for (std::size_t t = 0; t < p.k; t += 2) {
        const float a1 = t + 1 < p.k ? p.a[i * p.k + t + 1] : 0.0f;
        const float b1 = t + 1 < p.k ? p.b[(t + 1) * p.n + j] : 0.0f;
        acc = dp_step(acc, a1, b1);
        acc = dp_step(acc, p.a[i * p.k + t], p.b[t * p.n + j]);
      }
      out[i * p.n + j] = acc;
    }
}

#if LPLAB_HAVE_DPBF16_BUILD
namespace {

// 16 columns at a time: B packed as, per pair p and column j, the 32-bit
// word (b[2p+1][j] << 16) | b[2p][j]; A's pair broadcast to every lane.
__attribute__((target("avx512f,avx512bf16"))) void run_dpbf16(const MatmulProblem& p, double* out) {
  const std::size_t pairs = (p.k + 1) / 2, ldb = (p.n + 15) / 16 * 16;
  std::vector<std::uint32_t> bp(pairs * ldb, 0);
  for (std::size_t q = 0; q < pairs; ++q)
    for (std::size_t j = 0; j < p.n; ++j) {
      const std::uint32_t lo = bf16_bits(p.b[2 * q * p.n + j]);
      const std::uint32_t hi = 2 * q + 1 < p.k ? bf16_bits(p.b[(2 * q + 1) * p.n + j]) : 0;
      bp[q * ldb + j] = (hi << 16) | lo;
    }
  alignas(64) float lanes[16];
  for (std::size_t i = 0; i < p.m; ++i) {
    const float* ar = p.a + i * p.k;
    for (std::size_t j = 0; j < ldb; j += 16) {
      __m512 acc = _mm512_setzero_ps();
      for (std::size_t q = 0; q < pairs; ++q) {
        const std::uint32_t lo = bf16_bits(ar[2 * q]);
        const std::uint32_t hi = 2 * q + 1 < p.k ? bf16_bits(ar[2 * q + 1]) : 0;
        const __m512i va = _mm512_set1_epi32(static_cast<int>((hi << 16) | lo));
        const __m512i vb = _mm512_loadu_si512(bp.data() + q * ldb + j);
        acc = _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(va), reinterpret_cast<__m512bh>(vb));
      }
      _mm512_store_ps(lanes, acc);
      for (std::size_t c = 0; c < 16 && j + c < p.n; ++c) out[i * p.n + j + c] = lanes[c];
    }
  }
}

}  // namespace

bool bf16_dot2_hardware(const MatmulProblem& p, double* out) {
  if (!probe::has_bf16_dot()) return false;
  run_dpbf16(p, out);
  return true;
}
#else
bool bf16_dot2_hardware(const MatmulProblem&, double*) { return false; }
#endif

}  // namespace lplab::kernels::detail
