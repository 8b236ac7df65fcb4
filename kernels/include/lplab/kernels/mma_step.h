// One matrix-unit instruction's arithmetic, portable: every function is
// LPLAB_HD and calls no libm, so the CPU kernels and a device backend run the
// same steps. The instructions and their parameters are data (mma.h); here
// are the eight ways MMA-Sim 2.1.1 (Xie, Wang, Yang & Yang, arXiv 2511.10909;
// docs/matrix-units.md) finds that NVIDIA's and AMD's matrix units sum
// D = A B + C, one output at a time, on operand values decoded exactly.
//
// Terms and exponents: e(x) is the exponent of x's leading bit, at least the
// operand type's smallest normal exponent (a subnormal keeps the type's
// smallest exponent and a significand below 1); a product a b is aligned at
// e(a) + e(b) and is not renormalised.
//
//   truncated        one fused step of `group` products and C: every term
//                    truncated toward zero to 2^(E - F), E the largest
//                    exponent (a zero term counts as zero_exponent), an
//                    exact sum, then `rounding` (NVIDIA mma, wgmma, tcgen05)
//   scaled           as truncated, each product times its two block scales,
//                    whose exponents add to its own (mma/tcgen05 .block_scale
//                    with k = 32: kind::mxf8f6f4)
//   group_scaled     groups of `sum_group` products summed exactly, each group
//                    aligned at its scales' exponent (zero_exponent where the
//                    products are all zero or a scale is), then as truncated
//                    (.block_scale with k = 64: kind::mxf4, mxf4nvf4)
//   two_stage        the products fused at F (zero products ignored); then C
//                    and that sum floored to a common grid (F and F2 + 1
//                    bits below their larger exponent), added, floored to F2
//                    bits and rounded to nearest fp32 (AMD CDNA3 16-bit, xf32)
//   two_stage_split  as two_stage with the even and the odd products fused
//                    apart first (and C dropped where it lies F + 1 binades
//                    below) (CDNA3 fp8/bf8)
//   exact            the exact sum of `group` products and C, rounded once to
//                    nearest fp32 (CDNA1 16-bit)
//   ftz_pairs        fp32 products and additions (round to nearest) with
//                    subnormal operands, products and sums flushed to zero,
//                    `sum_group` (2 or 4) products summed before C (CDNA2 16-bit)
//   fma              a fused multiply-add per product, in D's type (fp64 mma;
//                    CDNA f32/f64 mfma)
//
// D of one instruction is C of the next (a kernel's k loop); within one
// instruction of k products the steps take `group` products each, C carried.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lplab/formats.h"
#include "lplab/formats/enum_table.h"
#include "lplab/kernels/double_bits.h"
#include "lplab/kernels/tensor_core_step.h"

namespace lplab::kernels {

// The algorithms above and the roundings, each list declared once with its
// names (enum_table.h): X(name, what it is[, the label listings show]).
#define LPLAB_MMA_ALGORITHMS(X)                                                                \
  X(truncated, "one fused step of `group` products and C, terms truncated to 2^(E - F)")       \
  X(scaled, "as truncated, each product times its two block scales")                           \
  X(group_scaled, "groups of `sum_group` products aligned at their scales, then as truncated") \
  X(two_stage, "products fused at F, then C added on a common grid, F2 bits")                  \
  X(two_stage_split, "as two_stage, the even and the odd products fused apart first")          \
  X(exact, "the exact sum of `group` products and C, rounded once")                            \
  X(ftz_pairs, "fp32 products and sums, subnormals flushed, `sum_group` products before C")    \
  X(fma, "a fused multiply-add per product, in D's type")
enum class MmaAlgorithm : std::uint8_t { LPLAB_MMA_ALGORITHMS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(MmaAlgorithm, "matrix-unit algorithm", LPLAB_MMA_ALGORITHMS)

// How a step's sum becomes D: toward zero to fp32 (24 bits) or to E8M13 (14
// bits) with fp32's exponent range; to nearest even fp16 or fp32; fp64 (fma).
// The third column is the label listings show (mma_rounding_name), also
// accepted as a spelling.
#define LPLAB_MMA_ROUNDINGS(X)                                                           \
  X(truncate_fp32, "toward zero to fp32 (24 bits)", "RZ fp32")                           \
  X(truncate_e8m13, "toward zero to E8M13 (14 bits, fp32's exponent range)", "RZ E8M13") \
  X(nearest_fp16, "to nearest even fp16", "RNE fp16")                                    \
  X(nearest_fp32, "to nearest even fp32", "RNE fp32")                                    \
  X(nearest_fp64, "to nearest even fp64 (fma)", "RNE fp64")
enum class MmaRounding : std::uint8_t { LPLAB_MMA_ROUNDINGS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(MmaRounding, "matrix-unit rounding", LPLAB_MMA_ROUNDINGS)

// One instruction's arithmetic, resolved for its operand types.
struct MmaModel {
  MmaAlgorithm algorithm = MmaAlgorithm::truncated;
  MmaRounding rounding = MmaRounding::truncate_fp32;
  int k = 0;               // products per instruction
  int group = 0;           // products per fused step (L: min(k, the unit's width))
  int fraction_bits = 0;   // F
  int fraction_bits2 = 0;  // F2 (two_stage, two_stage_split)
  int zero_exponent = 0;   // a zero term's exponent (truncated, scaled, group_scaled)
  int sum_group = 0;       // G (group_scaled) or P (ftz_pairs)
  int scale_block = 0;     // elements per block scale (0: none)
  int emin_a = 0, emin_b = 0, emin_c = 0, emin_d = 0, emin_scale = 0;  // smallest normal exponents
};

// What decided one step's result (lplab mma prints it). Every cut is
// recorded with whether it lost bits, so that a reader can tell the grid
// that decided D from one that every term already lay on.
struct MmaStepTrace {
  int first = 0, count = 0;  // the products of the step
  int exponent = 0;          // E: the largest alignment exponent (two_stage: of the products and C)
  int grid = 0;              // the terms were cut to multiples of 2^grid (two_stage: the products,
                             // F below their largest; two_stage_split: the larger half's)
  int terms_cut = 0;         // terms that lost bits there
  bool products_zero = false;  // two_stage: every product zero, so none was cut (no grid)
  // two_stage and two_stage_split only: the cuts after the products'.
  bool half_cut = false;     // split: the half with the smaller exponent floored to `grid`, losing bits
  int c_grid = 0;            // C floored to a multiple of 2^c_grid (F below E) ...
  bool c_cut = false;        // ... losing bits
  bool c_dropped = false;    // split: C (nonzero) dropped, lying F + 1 binades below the products
  int common_grid = 0;       // the products' sum floored to 2^common_grid (F2 + 1 bits below E) ...
  bool dot_cut = false;      // ... losing bits
  int sum_grid = 0;          // the sum of both floored to 2^sum_grid (F2 bits below its leading bit) ...
  bool sum_cut = false;      // ... losing bits
  double kept = 0;           // the sum of what was kept, before `rounding` (`exact`: the exact sum)
  bool kept_inexact = false;  // `exact` only: kept is the nearest double to that sum, not the sum
  double result = 0;         // the step's output (the next step's C)
  bool rounded = false;      // `rounding` changed the kept sum (result != kept, exactly)
  bool special = false;      // NaN or an infinity decided it: result is IEEE's
};
// A chain's steps, as many as fit: `total` counts every step taken, so
// total - steps of them were not recorded.
struct MmaTrace {
  static constexpr int kCapacity = 64;
  int steps = 0;
  int total = 0;
  MmaStepTrace step[kCapacity];
};

namespace mma {

using tensor_core::kFp32Emin;
inline constexpr int kAllZero = -999;  // two_stage's exponent of a zero product

// x = s * 2^e with e = max(exponent of x, emin): x's alignment exponent
// (tensor_core_step.h's, with zero at emin as MMA-Sim's frexp takes it).
LPLAB_HD constexpr int exponent(double x, int emin) noexcept {
  return x == 0 ? emin : tensor_core::alignment_exponent(x, emin);
}

// Arithmetic shift: floor(u * 2^s) for s < 0, u * 2^s for s >= 0.
LPLAB_HD constexpr std::int64_t shift_floor(std::int64_t u, int s) noexcept {
  if (s >= 0) return u * (std::int64_t{1} << s);
  if (s <= -63) return u < 0 ? -1 : 0;
  return u >> -s;  // arithmetic: floor
}
// Whether shift_floor(u, s) loses bits of u (the trace's cuts).
LPLAB_HD constexpr bool floor_loses(std::int64_t u, int s) noexcept {
  if (s >= 0 || u == 0) return false;
  return s <= -63 || shift_floor(u, s) * (std::int64_t{1} << -s) != u;
}

// x truncated toward zero (tensor_core::truncate_to_grid) or floored to a
// multiple of 2^q, as a count of 2^q.
using tensor_core::truncate_to_grid;
LPLAB_HD constexpr std::int64_t floor_to(double x, int q) noexcept {
  const double v = double_bits::scale2(x, -q);
  const auto t = static_cast<std::int64_t>(v);
  return static_cast<double>(t) > v ? t - 1 : t;
}

// `units` x 2^q rounded into D as the model's rounding says.
LPLAB_HD constexpr double round_out(std::int64_t units, int q, MmaRounding r) noexcept {
  if (units == 0) return 0.0;  // +0 (MMA-Sim adds +0.0 to every result)
  // Truncated: the tensor-core model's step 4 (24 bits for fp32, 14 for E8M13).
  if (r == MmaRounding::truncate_fp32) return tensor_core::normalise_truncated(units, q, 24);
  if (r == MmaRounding::truncate_e8m13) return tensor_core::normalise_truncated(units, q, 14);
  // Nearest: the sum is exact in double (fewer than 53 bits); one that
  // rounds to zero is +0 (MMA-Sim adds +0.0).
  const double v = double_bits::scale2(static_cast<double>(units), q);
  double d = v;
  if (r == MmaRounding::nearest_fp16) d = static_cast<double>(convert<float16>(v, Round::nearest_even));
  if (r == MmaRounding::nearest_fp32) d = static_cast<double>(static_cast<float>(v));
  return d == 0 ? 0.0 : d;
}

// IEEE's answer where a NaN or an infinity takes part: the plain sum of the
// terms (an infinity, or NaN for NaN, inf - inf and inf x 0).
LPLAB_HD constexpr bool special_sum(const double* terms, int n, double& out) noexcept {
  bool any = false;
  double s = 0.0;
  for (int t = 0; t < n; ++t) {
    if (!double_bits::is_finite(terms[t])) any = true;
    s += terms[t];
  }
  if (!any) return false;
  out = double_bits::is_nan(s) ? double_bits::quiet_nan() : s;
  return true;
}

// The exact sum of n doubles rounded once to nearest-even float: a fixed-point
// accumulator of 640 bits, bit 0 worth 2^-330 (the smallest term here is a
// product of bf16 subnormals, 2^-266; the largest below 2^257).
struct WideSum {
  static constexpr int kLimbs = 10, kBase = -330;
  std::uint64_t limb[kLimbs] = {};

  LPLAB_HD constexpr void add(double x) noexcept {
    if (x == 0) return;
    const std::uint64_t bits = double_bits::bits_of(x);
    const int field = static_cast<int>((bits >> 52) & 0x7FF);
    std::uint64_t m = bits & ((std::uint64_t{1} << 52) - 1);
    if (field != 0) m |= std::uint64_t{1} << 52;
    const int e = (field == 0 ? 1 : field) - 1023 - 52;  // x = m * 2^e
    const int pos = e - kBase;
    const int w = pos / 64, b = pos % 64;
    std::uint64_t part[kLimbs] = {};
    part[w] = m << b;
    if (b != 0 && w + 1 < kLimbs) part[w + 1] = m >> (64 - b);
    const bool neg = x < 0;
    std::uint64_t carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      if (!neg) {
        const std::uint64_t s = limb[i] + part[i];
        const std::uint64_t c1 = s < limb[i];
        limb[i] = s + carry;
        carry = c1 | (limb[i] < s);
      } else {
        const std::uint64_t d = limb[i] - part[i];
        const std::uint64_t b1 = limb[i] < part[i];
        const std::uint64_t r = d - carry;
        carry = b1 | (d < carry);
        limb[i] = r;
      }
    }
  }
  LPLAB_HD constexpr bool bit(int i) const noexcept { return (limb[i / 64] >> (i % 64)) & 1; }
  LPLAB_HD constexpr bool any_below(int i) const noexcept {
    for (int l = 0; l < kLimbs && l * 64 < i; ++l) {
      const int top = i - l * 64;
      const std::uint64_t mask = top >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << top) - 1;
      if (limb[l] & mask) return true;
    }
    return false;
  }
  // Rounded to nearest even at `p` significant bits, on no grid finer than
  // 2^(emin - p + 1) (+0 for an exact zero, a signed zero where it rounds
  // to zero), as a double; `exact`, if given, says whether that is the sum
  // itself. The sum is left as it is.
  LPLAB_HD constexpr double nearest(int p, int emin, bool* exact = nullptr) const noexcept {
    WideSum w = *this;
    const bool neg = (w.limb[kLimbs - 1] >> 63) != 0;
    if (neg) {  // two's complement negation
      std::uint64_t carry = 1;
      for (int i = 0; i < kLimbs; ++i) {
        w.limb[i] = ~w.limb[i] + carry;
        carry = carry && w.limb[i] == 0;
      }
    }
    int top = -1;
    for (int i = kLimbs * 64 - 1; i >= 0; --i)
      if (w.bit(i)) {
        top = i;
        break;
      }
    if (exact) *exact = true;
    if (top < 0) return 0.0;
    int e = top + kBase;
    if (e < emin) e = emin;
    const int lsb = e - (p - 1) - kBase;  // the grid's bit
    std::uint64_t mant = 0;
    for (int i = top; i >= lsb && i >= 0; --i) mant = (mant << 1) | static_cast<std::uint64_t>(w.bit(i));
    if (lsb > 0) {
      const bool half = w.bit(lsb - 1), rest = w.any_below(lsb - 1);
      if (exact) *exact = !half && !rest;
      if (half && (rest || (mant & 1))) ++mant;
    } else {
      mant <<= -lsb;  // exact
    }
    const double v = double_bits::scale2(static_cast<double>(mant), lsb + kBase);
    return neg ? -v : v;
  }
  // Rounded to nearest-even float (+0 for an exact zero).
  LPLAB_HD constexpr double to_float() const noexcept {
    const double v = nearest(24, kFp32Emin);
    const double mag = v < 0 ? -v : v;
    const double r = mag >= 0x1p128 ? double_bits::infinity(false) : static_cast<double>(static_cast<float>(mag));
    return v < 0 ? -r : r;
  }
};

// Fused multiply-adds (the compilers' builtins: an instruction where the
// target has one, else the C library's correctly rounded fma).
LPLAB_HD inline double fma64(double a, double b, double c) noexcept {
#ifdef __CUDA_ARCH__
  return ::fma(a, b, c);
#else
  return __builtin_fma(a, b, c);
#endif
}
LPLAB_HD inline float fma32(float a, float b, float c) noexcept {
#ifdef __CUDA_ARCH__
  return ::fmaf(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}

// float arithmetic with subnormals flushed to zero (ftz_pairs).
LPLAB_HD constexpr float flush(float x, int emin, bool keep_sign) noexcept {
  const float tiny = static_cast<float>(double_bits::pow2(emin));
  if (x < tiny && x > -tiny) return keep_sign ? x * 0.0f : 0.0f;
  return x;
}

// One fused step (truncated, scaled, group_scaled): terms p[t] (products,
// times their scales, or scaled group sums) aligned at e[t], and C; a term
// counts at zero_exponent where it is zero (or, given `at_zero`, where that
// says). Returns D's value; fills `tr` if given.
LPLAB_HD constexpr double fused_step(const MmaModel& m, const double* p, const int* e, int n, double c, int emin_c,
                                     MmaStepTrace* tr, const bool* at_zero = nullptr) noexcept {
  double terms[65];  // written before read
  for (int t = 0; t < n; ++t) terms[t] = p[t];
  terms[n] = c;
  double special = 0;
  if (special_sum(terms, n + 1, special)) {
    if (tr) tr->special = true, tr->result = special;
    return special;
  }
  int E = c != 0 ? exponent(c, emin_c) : m.zero_exponent;
  for (int t = 0; t < n; ++t) {
    const int et = (at_zero ? at_zero[t] : p[t] == 0) ? m.zero_exponent : e[t];
    E = et > E ? et : E;
  }
  const int q = E - m.fraction_bits;
  std::int64_t units = 0;
  int cut_terms = 0;
  for (int t = 0; t <= n; ++t) {
    const std::int64_t u = truncate_to_grid(terms[t], q);
    cut_terms += static_cast<double>(u) != double_bits::scale2(terms[t], -q);
    units += u;
  }
  const double d = round_out(units, q, m.rounding);
  if (tr) {
    tr->exponent = E;
    tr->grid = q;
    tr->terms_cut = cut_terms;
    tr->kept = double_bits::scale2(static_cast<double>(units), q);  // exact: |units| < 2^53
    tr->result = d;
    tr->rounded = d != tr->kept;
  }
  return d;
}

// two_stage and two_stage_split after their products are fused: the sum
// `units` x 2^(e_dot - F) and C floored to a common grid, added, floored to
// F2 bits and rounded to nearest fp32.
LPLAB_HD constexpr double two_stage_c(const MmaModel& m, std::int64_t units, int e_dot, double c, bool drop_far_c,
                                      MmaStepTrace* tr) noexcept {
  const int F = m.fraction_bits, F2 = m.fraction_bits2;
  const int e_c = exponent(c, kFp32Emin);
  const int e_max = e_dot > e_c ? e_dot : e_c;
  // Both in units of 2^(e_max - F2 - 1).
  const int shift = e_dot - e_max + (F2 + 1 - F);
  const std::int64_t dot = shift_floor(units, shift);
  const std::int64_t c_units = floor_to(c, e_max - F);
  std::int64_t cc = c_units * (std::int64_t{1} << (F2 + 1 - F));
  const bool dropped = drop_far_c && e_c < e_max - F - 1;
  if (dropped) cc = 0;
  const std::int64_t sum = dot + cc;
  double kept = 0.0, d = 0.0;
  int e = 0;
  if (sum != 0) {
    const int q = e_max - F2 - 1;
    const double v = double_bits::scale2(static_cast<double>(sum), q);  // exact
    e = exponent(v, kFp32Emin);
    kept = double_bits::scale2(static_cast<double>(floor_to(v, e - F2)), e - F2);
    d = static_cast<double>(static_cast<float>(kept));
    if (tr) tr->sum_cut = kept != v;
  }
  if (tr) {
    tr->exponent = e_max;
    tr->c_grid = e_max - F;
    tr->c_dropped = dropped && c != 0;
    tr->c_cut = !dropped && double_bits::scale2(static_cast<double>(c_units), e_max - F) != c;
    tr->common_grid = e_max - F2 - 1;
    tr->dot_cut = floor_loses(units, shift);
    tr->sum_grid = e - F2;
    tr->kept = kept;
    tr->result = d;
    tr->rounded = d != kept;
  }
  return d;
}

// Products fused at F below their largest exponent (zero products ignored):
// the exact sum of the cut terms in units of 2^(e_dot - F); e_dot = kAllZero
// when every product is zero.
LPLAB_HD constexpr std::int64_t fuse_products(const double* p, const int* e, int n, int stride, int F, int& e_dot,
                                              int& cut_terms) noexcept {
  e_dot = kAllZero;
  for (int t = 0; t < n; t += stride)
    if (p[t] != 0 && e[t] > e_dot) e_dot = e[t];
  std::int64_t units = 0;
  if (e_dot == kAllZero) return 0;
  for (int t = 0; t < n; t += stride) {
    const std::int64_t u = truncate_to_grid(p[t], e_dot - F);
    cut_terms += static_cast<double>(u) != double_bits::scale2(p[t], F - e_dot);
    units += u;
  }
  return units;
}

// One `exact` step: the exact sum of the products p[0..n) and C rounded
// once to nearest-even fp32 (+0 when it is zero, a signed zero where it
// underflows; IEEE's sum where a NaN or an infinity takes part).
LPLAB_HD inline double exact_step(const double* p, int n, double c, MmaStepTrace* tr) noexcept {
  double terms[65];
  for (int t = 0; t < n; ++t) terms[t] = p[t];
  terms[n] = c;
  double special = 0;
  if (special_sum(terms, n + 1, special)) {
    if (tr) tr->special = true, tr->result = special;
    return special;
  }
  WideSum w;
  for (int t = 0; t <= n; ++t) w.add(terms[t]);
  const double d = w.to_float();
  if (tr) {
    bool exact = true;
    tr->kept = w.nearest(53, -1022, &exact);
    tr->kept_inexact = !exact;
    tr->result = d;
    // Whether rounding moved it: the exact sum minus D is not zero (an
    // overflow to infinity always moved it).
    if (double_bits::is_finite(d)) w.add(-d);
    tr->rounded = !double_bits::is_finite(d) || w.nearest(53, -1022) != 0;
  }
  return d;
}

// One instruction: D = A B + C over m.k products, a[t] and b[t] (t < k)
// decoded exactly, C in the type whose smallest normal exponent is emin_c
// (the instruction's C type for the first of a chain, D's after), and for a
// block-scaled instruction the scales sa[k / scale_block], sb[same].
LPLAB_HD inline double instruction(const MmaModel& m, const double* a, const double* b, double c, int emin_c,
                                      const double* sa, const double* sb, MmaTrace* trace) noexcept {
  const int k = m.k;
  const int L = m.group > 0 ? m.group : k;
  if (m.algorithm == MmaAlgorithm::fma) {
    for (int t = 0; t < k; ++t) {
      if (m.rounding == MmaRounding::nearest_fp64) {
        c = fma64(a[t], b[t], c);
      } else {
        c = static_cast<double>(fma32(static_cast<float>(a[t]), static_cast<float>(b[t]), static_cast<float>(c)));
      }
    }
    return c;
  }
  if (m.algorithm == MmaAlgorithm::ftz_pairs) {
    const int P = m.sum_group;
    float acc = flush(static_cast<float>(c), kFp32Emin, false);
    float prod[64];  // written before read
    for (int t = 0; t < k; ++t) {
      const float x = flush(static_cast<float>(a[t]), m.emin_a, false);
      const float y = flush(static_cast<float>(b[t]), m.emin_b, false);
      prod[t] = flush(x * y, kFp32Emin, true);
    }
    for (int t = 0; t < k; t += P) {
      float s = flush(prod[t] + prod[t + 1], kFp32Emin, true);
      if (P == 4) s = flush(s + flush(prod[t + 2] + prod[t + 3], kFp32Emin, true), kFp32Emin, true);
      acc = flush(acc + s, kFp32Emin, true);
    }
    return static_cast<double>(acc);
  }
  for (int first = 0; first < k; first += L) {
    MmaStepTrace* tr = nullptr;
    if (trace) ++trace->total;
    if (trace && trace->steps < MmaTrace::kCapacity) {
      tr = &trace->step[trace->steps++];
      *tr = MmaStepTrace{};
      tr->first = first;
      tr->count = L;
    }
    const int ec = first == 0 ? emin_c : m.emin_d;
    // (Every array here is written before it is read: no zero-fill, which
    // cost more than the arithmetic of a short fused step.)
    double p[64];
    int e[64];
    for (int t = 0; t < L; ++t) {
      const double x = a[first + t], y = b[first + t];
      p[t] = x * y;  // exact
      e[t] = exponent(x, m.emin_a) + exponent(y, m.emin_b);
    }
    switch (m.algorithm) {
      case MmaAlgorithm::truncated:
        c = fused_step(m, p, e, L, c, ec, tr);
        break;
      case MmaAlgorithm::scaled: {
        for (int t = 0; t < L; ++t) {
          const int blk = (first + t) / m.scale_block;
          p[t] = p[t] * sa[blk] * sb[blk];  // exact: powers of two
          e[t] += exponent(sa[blk], m.emin_scale) + exponent(sb[blk], m.emin_scale);
        }
        c = fused_step(m, p, e, L, c, ec, tr);
        break;
      }
      case MmaAlgorithm::group_scaled: {
        const int G = m.sum_group, groups = L / G;
        double gp[16] = {};
        int ge[16] = {};
        bool zero_group[16] = {};
        for (int g = 0; g < groups; ++g) {
          double s = 0;  // exact: products of E2M1 values are multiples of 2^-2 below 2^6
          bool all_zero = true;
          for (int t = g * G; t < (g + 1) * G; ++t) {
            s += p[t];
            all_zero = all_zero && p[t] == 0;
          }
          const int blk = (first + g * G) / m.scale_block;
          const double scale = sa[blk] * sb[blk];
          gp[g] = s * scale;
          ge[g] = exponent(sa[blk], m.emin_scale) + exponent(sb[blk], m.emin_scale);
          // A group whose products are all zero, or whose scale is, sits at
          // zero_exponent; one that cancels to zero keeps its scales' exponent.
          zero_group[g] = all_zero || scale == 0;
        }
        c = fused_step(m, gp, ge, groups, c, ec, tr, zero_group);
        break;
      }
      case MmaAlgorithm::two_stage:
      case MmaAlgorithm::two_stage_split: {
        const bool split = m.algorithm == MmaAlgorithm::two_stage_split;
        // Specials: IEEE's sum, with a product of 2^128 or more an infinity
        // in two_stage (MMA-Sim's overflow check; fp8 products cannot reach it).
        double terms[65];
        for (int t = 0; t < L; ++t) {
          terms[t] = p[t];
          if (!split && double_bits::is_finite(p[t]) && (p[t] >= 0x1p128 || p[t] <= -0x1p128))
            terms[t] = double_bits::infinity(p[t] < 0);
        }
        terms[L] = c;
        bool special_c_dropped = false;
        if (split && !double_bits::is_finite(c)) {
          // MMA-Sim 2.1.1 drops C lying more than F + 1 binades below the
          // products even when C is NaN or infinite (whose exponent it takes
          // as -1, frexp's): D is then the products' sum alone.
          int e_dot = kAllZero;
          for (int t = 0; t < L; ++t) {
            if (p[t] == 0) continue;
            const double x = a[first + t], y = b[first + t];
            const int et = (double_bits::is_finite(x) ? exponent(x, m.emin_a) : -1) +
                           (double_bits::is_finite(y) ? exponent(y, m.emin_b) : -1);
            e_dot = et > e_dot ? et : e_dot;
          }
          if (-1 < e_dot - m.fraction_bits - 1) {
            c = 0.0;
            terms[L] = 0.0;
            special_c_dropped = true;
          }
        }
        double special = 0;
        if (special_sum(terms, L + 1, special)) {
          if (tr) tr->special = true, tr->result = special;
          c = special;
          break;
        }
        int cut_terms = 0, e_dot = kAllZero;
        bool half_cut = false;
        std::int64_t units = 0;
        if (!split) {
          units = fuse_products(p, e, L, 1, m.fraction_bits, e_dot, cut_terms);
        } else {
          int e_even = kAllZero, e_odd = kAllZero;
          const std::int64_t even = fuse_products(p, e, L, 2, m.fraction_bits, e_even, cut_terms);
          const std::int64_t odd = fuse_products(p + 1, e + 1, L - 1, 2, m.fraction_bits, e_odd, cut_terms);
          e_dot = e_even > e_odd ? e_even : e_odd;
          units = shift_floor(even, e_even - e_dot) + shift_floor(odd, e_odd - e_dot);
          half_cut = floor_loses(even, e_even - e_dot) || floor_loses(odd, e_odd - e_dot);
        }
        c = two_stage_c(m, units, e_dot, c, split, tr);
        if (tr) {
          tr->grid = e_dot - m.fraction_bits;
          tr->products_zero = e_dot == kAllZero;
          tr->terms_cut = cut_terms;
          tr->half_cut = half_cut;
          tr->c_dropped = tr->c_dropped || special_c_dropped;
        }
        break;
      }
      case MmaAlgorithm::exact:
        c = exact_step(p, L, c, tr);
        break;
      default:
        break;
    }
  }
  return c;
}

// D after instructions chained over k_total products (a multiple of m.k), D
// of one the C of the next: c the first C, in the instruction's C type (D's
// type after). With promote_every = N > 0 every N products (a multiple of
// m.k) the chain's D is added into an fp32 register (nearest even) and the
// chain restarts from C = +0 (DeepSeek-V3's promotion). With promote_scales
// (one per promotion, an fp32 block scale product s_a * s_b) the addition is
// fp32's fused multiply-add promoted = fma(s, D, promoted), DeepGEMM's
// `final_accum += scale * accum` (sm90_fp8_gemm_1d2d.cuh; nvcc contracts it
// to one FFMA). Scales as for instruction(); `trace` records every step,
// numbered across the chain.
LPLAB_HD inline double chain(const MmaModel& m, const double* a, const double* b, std::size_t k_total, double c,
                             const double* sa, const double* sb, int promote_every, MmaTrace* trace,
                             const float* promote_scales = nullptr) noexcept {
  const auto k = static_cast<std::size_t>(m.k), blk = static_cast<std::size_t>(m.scale_block);
  const auto promote = static_cast<std::size_t>(promote_every);
  double promoted = 0.0;
  int emin_c = m.emin_c;
  std::size_t in_chain = 0, promotions = 0;
  // promoted + D, or s * D + promoted fused, in fp32.
  const auto promote_into = [&](double d) {
    const float p = static_cast<float>(promoted), df = static_cast<float>(d);
    return static_cast<double>(promote_scales ? fma32(promote_scales[promotions++], df, p) : p + df);
  };
  for (std::size_t first = 0; first < k_total; first += k) {
    const int before = trace ? trace->steps : 0;
    c = instruction(m, a + first, b + first, c, emin_c, blk ? sa + first / blk : nullptr,
                    blk ? sb + first / blk : nullptr, trace);
    for (int s = before; trace && s < trace->steps; ++s) trace->step[s].first += static_cast<int>(first);
    emin_c = m.emin_d;
    in_chain += k;
    if (promote > 0 && in_chain == promote) {
      promoted = promote_into(c);
      c = 0.0, in_chain = 0, emin_c = m.emin_c;
    }
  }
  // (No products at all: D is C, promotion or not.)
  if (promote == 0 || k_total == 0) return c;
  return in_chain == 0 ? promoted : promote_into(c);
}

}  // namespace mma
}  // namespace lplab::kernels
