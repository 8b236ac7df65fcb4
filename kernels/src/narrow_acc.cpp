// Accumulator::fp16 and Accumulator::bf16, vectorised across output columns
// (one Highway kernel per SIMD target). Per output, in order t = 0 .. k-1
// from +0, exactly as the scalar reference accumulate_narrow (matmul.cpp)
// does it:
//   1. prod = a[i,t] * b[t,j] in double: exact (operands are decoded floats,
//      at most 24 significant bits each, and double's range holds every
//      product of two floats);
//   2. hi + lo = acc + prod exactly (TwoSum, Knuth), and hi rounded to odd at
//      53 bits with lo's sign (exact_sum.h: one later rounding to at most 51
//      bits is then the correct rounding of acc + prod);
//   3. that value rounded to nearest-even into the accumulator's format:
//      with E = max(exponent, emin) the quantum is 2^(E - p + 1), and
//      Round(v / quantum) * quantum is exact arithmetic on both sides (powers
//      of two) around one hardware round-to-nearest-even; a result of
//      2^(emax + 1) or more becomes an infinity (IEEE overflow).
// Infinities and NaN take IEEE's arithmetic unchanged. A test compares this
// kernel with the scalar reference bit for bit on every target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "narrow_acc.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <vector>

#include "lplab/kernels/exact_sum.h"
#include "hwy/highway.h"
#include "kernel_args.h"
#include "narrow_acc.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i, j] for rows [0, m): a is m x k (float), b is k x ldb in double
// (columns n .. ldb zero); ldb is a multiple of four vectors.
HWY_ATTR void NarrowAccumulate(const NarrowFormat& f, std::size_t m, std::size_t n, std::size_t k,
                               const float* HWY_RESTRICT a, const double* HWY_RESTRICT b,
                               std::size_t ldb, double* HWY_RESTRICT out) {
#if HWY_HAVE_FLOAT64
  const hn::ScalableTag<double> d;
  const hn::RebindToSigned<decltype(d)> di;
  const std::size_t N = hn::Lanes(d);
  const auto exp_mask = hn::Set(di, 0x7ff);
  const auto bias = hn::Set(di, 1023);
  const auto emin = hn::Set(di, f.emin);
  // 2^-(E - p + 1) has the exponent field 1023 - E + p - 1, 2^(E - p + 1) the field 1023 + E - p + 1.
  const auto field_down = hn::Set(di, 1023 + f.precision - 1);
  const auto field_up = hn::Set(di, 1023 - (f.precision - 1));
  const auto one_i = hn::Set(di, 1);
  const auto minus_one_i = hn::Set(di, -1);
  const auto zero_i = hn::Zero(di);
  const auto overflow_at = hn::Set(d, std::ldexp(1.0, f.emax + 1));
  const auto inf = hn::Set(d, HUGE_VAL);
  const auto sign_mask = hn::Set(d, -0.0);
  const auto zero = hn::Zero(d);
  // One accumulation step for a vector of columns.
  auto step = [&](auto x, auto va, auto vb) HWY_ATTR {
    const auto prod = hn::Mul(va, vb);
    // 2. TwoSum and round-to-odd.
    const auto hi = hn::Add(x, prod);
    const auto bb = hn::Sub(hi, x);
    const auto lo = hn::Add(hn::Sub(x, hn::Sub(hi, bb)), hn::Sub(prod, bb));
    const auto finite = hn::IsFinite(hi);
    const auto hbits = hn::BitCast(di, hi);
    const auto even = hn::Eq(hn::And(hbits, one_i), zero_i);
    const auto inexact = hn::RebindMask(di, hn::And(hn::Ne(lo, zero), finite));
    const auto opposite = hn::Lt(hn::Xor(hbits, hn::BitCast(di, lo)), zero_i);  // signs differ
    const auto adjust = hn::IfThenElse(opposite, minus_one_i, one_i);
    const auto obits = hn::IfThenElse(hn::And(inexact, even), hn::Add(hbits, adjust), hbits);
    // 3. Nearest-even into the format.
    const auto e = hn::Max(hn::Sub(hn::And(hn::ShiftRight<52>(obits), exp_mask), bias), emin);
    const auto down = hn::BitCast(d, hn::ShiftLeft<52>(hn::Sub(field_down, e)));
    const auto up = hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(field_up, e)));
    auto r = hn::Mul(hn::Round(hn::Mul(hn::BitCast(d, obits), down)), up);
    r = hn::IfThenElse(hn::Ge(hn::Abs(r), overflow_at), hn::Or(inf, hn::And(r, sign_mask)), r);
    return hn::IfThenElse(finite, r, hi);
  };
  // Four vectors of columns at a time, their accumulators in registers: four
  // independent chains per step, and a k x 4N panel of B that stays in cache
  // across the rows of A.
  for (std::size_t j = 0; j < ldb; j += 4 * N) {
    for (std::size_t i = 0; i < m; ++i) {
      const float* ar = a + i * k;
      auto x0 = zero, x1 = zero, x2 = zero, x3 = zero;
      for (std::size_t t = 0; t < k; ++t) {
        const auto va = hn::Set(d, static_cast<double>(ar[t]));
        const double* brow = b + t * ldb + j;
        x0 = step(x0, va, hn::LoadU(d, brow));
        x1 = step(x1, va, hn::LoadU(d, brow + N));
        x2 = step(x2, va, hn::LoadU(d, brow + 2 * N));
        x3 = step(x3, va, hn::LoadU(d, brow + 3 * N));
      }
      HWY_ALIGN double lanes[4 * HWY_MAX_BYTES / sizeof(double)];
      hn::Store(x0, d, lanes);
      hn::Store(x1, d, lanes + N);
      hn::Store(x2, d, lanes + 2 * N);
      hn::Store(x3, d, lanes + 3 * N);
      for (std::size_t c = 0; c < 4 * N && j + c < n; ++c) out[i * n + j + c] = lanes[c];
    }
  }
#else
  // Targets without double lanes: the same steps, one column at a time.
  std::vector<double> acc(n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) acc[j] = 0.0;
    for (std::size_t t = 0; t < k; ++t)
      for (std::size_t j = 0; j < n; ++j) {
        const double v = exact_sum_odd(acc[j], static_cast<double>(a[i * k + t]) * b[t * ldb + j]);
        if (!std::isfinite(v)) {
          acc[j] = v;
          continue;
        }
        const int e = std::max(std::ilogb(v == 0 ? 1.0 : v), f.emin);
        double r = std::ldexp(std::nearbyint(std::ldexp(v, f.precision - 1 - e)), e - f.precision + 1);
        if (std::fabs(r) >= std::ldexp(1.0, f.emax + 1)) r = std::copysign(HUGE_VAL, r);
        acc[j] = r;
      }
    for (std::size_t j = 0; j < n; ++j) out[i * n + j] = acc[j];
  }
#endif
}

// Doubles per vector (1 where the target has no double lanes).
HWY_ATTR std::size_t DoubleLanes() {
#if HWY_HAVE_FLOAT64
  return hn::Lanes(hn::ScalableTag<double>());
#else
  return 1;
#endif
}

}  // namespace lplab::kernels::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <vector>

#include "row_bands.h"

namespace lplab::kernels::detail {

HWY_EXPORT(NarrowAccumulate);

HWY_EXPORT(DoubleLanes);

void narrow_accumulate(const NarrowFormat& f, std::size_t m, std::size_t n, std::size_t k, const float* a,
                       const float* b, double* out, unsigned threads) {
  // B in double, rows padded with zeros to whole groups of four vectors.
  const std::size_t group = 4 * LPLAB_DISPATCH(DoubleLanes)();
  const std::size_t ldb = (n + group - 1) / group * group;
  std::vector<double> bd(k * ldb, 0.0);
  for (std::size_t t = 0; t < k; ++t)
    for (std::size_t j = 0; j < n; ++j) bd[t * ldb + j] = b[t * n + j];
  for_row_bands(m, threads, [&](std::size_t first, std::size_t rows) {
    LPLAB_DISPATCH(NarrowAccumulate)(f, rows, n, k, a + first * k, bd.data(), ldb,
                                                           out + first * n);
  });
}

}  // namespace lplab::kernels::detail
#endif
