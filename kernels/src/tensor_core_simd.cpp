// Accumulator::tensor_core vectorised across output columns (one Highway
// kernel per SIMD target): the model of tensor_core.cpp, step for step, with
// the scalar tensor_core::dot (tensor_core_step.h) as its reference (a test compares them bit for
// bit on every target). Per row of A and per block of products, for a vector
// of columns:
//   1. E = the largest alignment exponent: e(a) + e(b) for a nonzero product
//      (operand exponents precomputed, subnormals at the format's emin), the
//      model's zero_exponent (below -126) for a zero product, e(C) (at least
//      -126) or zero_exponent for C = 0;
//   2-3. every term times 2^(F - E), truncated toward zero (Trunc), summed in
//      double: each |term| < 2^(F + 2), a block has at most 33 terms
//      (blocks of more than 32 products, or F > 44, take the scalar model), so
//      the sum is an integer below 2^53, exact;
//   4. the sum times 2^(E - F), truncated toward zero to R significant bits
//      with the exponent clamped at -126 (Trunc around exact power-of-two
//      scalings), 2^128 or more an infinity;
// specials (a non-finite product or C) follow IEEE's sum of the specials, and
// promotion adds the chain into a float accumulator with round-to-nearest.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensor_core_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "hwy/highway.h"
#include "kernel_args.h"
#include "tensor_core.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows [0, m) of out (m x n): a (m x k floats) with alignment exponents ea
// (kZero for a zero), b (k x ldb doubles, zero-padded) with eb. c and promoted
// are scratch rows of ldb doubles.
// row_special[i]: row i of A has an infinity or NaN; col_special[v]: some
// column of vector v of B has one.
HWY_ATTR void TensorCoreRows(const TensorCoreModel& model, std::size_t m, std::size_t n, std::size_t k,
                             const float* HWY_RESTRICT a, const std::int64_t* HWY_RESTRICT ea,
                             const double* HWY_RESTRICT b, const std::int64_t* HWY_RESTRICT eb,
                             std::size_t ldb, double* HWY_RESTRICT out, double* HWY_RESTRICT c,
                             double* HWY_RESTRICT promoted, const unsigned char* row_special,
                             const unsigned char* col_flags) {
#if HWY_HAVE_FLOAT64
  const hn::ScalableTag<double> d;
  const hn::RebindToSigned<decltype(d)> di;
  const std::size_t N = hn::Lanes(d);
  const int F = model.fraction_bits, R = model.result_bits;
  const std::size_t block = static_cast<std::size_t>(model.block);
  const auto zero = hn::Zero(d);
  const auto zero_exp = hn::Set(di, model.zero_exponent);
  const auto fp32_emin = hn::Set(di, -126);
  const auto exp_mask = hn::Set(di, 0x7ff);
  const auto bias = hn::Set(di, 1023);
  const auto inf = hn::Set(d, HUGE_VAL);
  const auto sign_mask = hn::Set(d, -0.0);
  const auto overflow_at = hn::Set(d, 0x1p128);
  const auto nan = hn::Set(d, std::numeric_limits<double>::quiet_NaN());
  // The exponent field of 2^x is x + 1023.
  auto pow2 = [&](auto e) HWY_ATTR { return hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(e, bias))); };
  auto exponent_of = [&](auto v) HWY_ATTR {  // floor(log2 |v|) of a nonzero normal double
    return hn::Sub(hn::And(hn::ShiftRight<52>(hn::BitCast(di, v)), exp_mask), bias);
  };
  std::vector<unsigned char> col_special(ldb / N, 0);
  for (std::size_t j = 0; j < ldb; ++j) col_special[j / N] |= col_flags[j];
  for (std::size_t i = 0; i < m; ++i) {
    const float* ar = a + i * k;
    const std::int64_t* er = ea + i * k;
    for (std::size_t j = 0; j < ldb; j += N) {
      hn::StoreU(zero, d, c + j);
      hn::StoreU(zero, d, promoted + j);
    }
    std::size_t in_chain = 0;
    for (std::size_t start = 0; start < k; start += block) {
      const std::size_t end = std::min(k, start + block);
      for (std::size_t j = 0; j < ldb; j += N) {
        const auto vc = hn::LoadU(d, c + j);
        // Step 1. A zero C counts zero_exponent; a nonzero C at least -126,
        // which is above it, so that zero products (whose operand exponents are
        // kNoExponent, far below) never decide E.
        const auto c_zero = hn::Eq(vc, zero);
        auto E = hn::IfThenElse(hn::RebindMask(di, c_zero), zero_exp, hn::Max(exponent_of(vc), fp32_emin));
        auto any_special = hn::Not(hn::IsFinite(vc));
        auto special = hn::IfThenElseZero(any_special, vc);
        if (row_special[i] || col_special[j / N] || !hn::AllFalse(d, any_special)) {
          // Specials: IEEE's sum of the non-finite terms.
          for (std::size_t t = start; t < end; ++t) {
            const auto prod = hn::Mul(hn::Set(d, static_cast<double>(ar[t])), hn::LoadU(d, b + t * ldb + j));
            const auto fin = hn::IsFinite(prod);
            special = hn::IfThenElse(fin, special, hn::IfThenElse(any_special, hn::Add(special, prod), prod));
            any_special = hn::Or(any_special, hn::Not(fin));
          }
        }
        for (std::size_t t = start; t < end; ++t)
          E = hn::Max(E, hn::Add(hn::Set(di, er[t]), hn::LoadU(di, eb + t * ldb + j)));
        // Steps 2-3: the grid 2^(E - F).
        const auto down = pow2(hn::Sub(hn::Set(di, F), E));  // 2^(F - E)
        const auto up = pow2(hn::Sub(E, hn::Set(di, F)));    // 2^(E - F)
        auto units = hn::Trunc(hn::Mul(vc, down));
        for (std::size_t t = start; t < end; ++t) {
          const auto prod = hn::Mul(hn::Set(d, static_cast<double>(ar[t])), hn::LoadU(d, b + t * ldb + j));
          units = hn::Add(units, hn::Trunc(hn::Mul(prod, down)));
        }
        // Step 4: v = units * 2^(E - F) exactly, truncated to R bits.
        const auto v = hn::Mul(units, up);
        const auto lead = hn::Max(exponent_of(v), fp32_emin);
        const auto r_down = pow2(hn::Sub(hn::Set(di, R - 1), lead));  // 2^(R - 1 - lead)
        const auto r_up = pow2(hn::Sub(lead, hn::Set(di, R - 1)));
        auto r = hn::Mul(hn::Trunc(hn::Mul(v, r_down)), r_up);
        r = hn::IfThenElse(hn::Ge(hn::Abs(r), overflow_at), hn::Or(inf, hn::And(r, sign_mask)), r);
        r = hn::IfThenElse(hn::Eq(r, zero), zero, r);  // a zero result is +0 (as the model's integer sum)
        const auto result =
            hn::IfThenElse(any_special, hn::IfThenElse(hn::IsNaN(special), nan, special), r);
        hn::StoreU(result, d, c + j);
      }
      in_chain += end - start;
      if (model.promote_every > 0 && in_chain == static_cast<std::size_t>(model.promote_every)) {
        // Scalar: Highway's DemoteTo clamps infinities on some targets (SCALAR).
        for (std::size_t j = 0; j < n; ++j) {
          promoted[j] = static_cast<double>(static_cast<float>(promoted[j]) + static_cast<float>(c[j]));
          c[j] = 0.0;
        }
        in_chain = 0;
      }
    }
    for (std::size_t j = 0; j < n; ++j) {
      double result = c[j];
      if (model.promote_every > 0 && in_chain == 0) result = promoted[j];
      else if (model.promote_every > 0)
        result = static_cast<double>(static_cast<float>(promoted[j]) + static_cast<float>(c[j]));
      out[i * n + j] = result;
    }
  }
#else
  (void)model, (void)m, (void)n, (void)k, (void)a, (void)ea, (void)b, (void)eb, (void)ldb, (void)out,
      (void)c, (void)promoted, (void)row_special, (void)col_flags;
  HWY_ASSERT(false);  // never dispatched: tensor_core_fast() declines without double lanes
#endif
}

// Doubles per vector; 0 where the target has no double lanes.
HWY_ATTR std::size_t TensorCoreLanes() {
#if HWY_HAVE_FLOAT64
  return hn::Lanes(hn::ScalableTag<double>());
#else
  return 0;
#endif
}

}  // namespace lplab::kernels::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <vector>

#include "row_bands.h"

namespace lplab::kernels::detail {

HWY_EXPORT(TensorCoreRows);
HWY_EXPORT(TensorCoreLanes);

namespace {
// A zero operand's exponent: so low that a zero product never decides E (see
// step 1), and a sum of two stays far from overflow.
constexpr std::int64_t kNoExponent = -100000;

// The alignment exponent of an operand: floor(log2 |x|), at least emin.
std::int64_t operand_exponent(float x, int emin) {
  if (x == 0) return kNoExponent;
  if (!std::isfinite(x)) return 0;  // the block is decided by the specials
  return std::max(std::ilogb(x), emin);
}
}  // namespace

bool tensor_core_fast(const MatmulProblem& p, const TensorCoreModel& model, double* out, unsigned threads) {
  if (model.block > 32 || model.fraction_bits > 44) return false;
  const std::size_t lanes = LPLAB_DISPATCH(TensorCoreLanes)();
  if (lanes == 0) return false;  // no double lanes
  const std::size_t m = p.m, n = p.n, k = p.k;
  const std::size_t group = std::max<std::size_t>(64, lanes);  // a whole number of vectors (lanes: a power of two)
  const std::size_t ldb = (n + group - 1) / group * group;
  // B (in double, with its exponents and special columns) and A's exponents
  // are prepared once, for every band.
  std::vector<std::int64_t> ea(m * k), eb(k * ldb, kNoExponent);
  std::vector<double> bd(k * ldb, 0.0);
  std::vector<unsigned char> row_special(m, 0), col_special(ldb, 0);
  for (std::size_t i = 0; i < m * k; ++i) {
    ea[i] = operand_exponent(p.a[i], model.emin_a);
    if (!std::isfinite(p.a[i])) row_special[i / k] = 1;
  }
  for (std::size_t t = 0; t < k; ++t)
    for (std::size_t j = 0; j < n; ++j) {
      bd[t * ldb + j] = p.b[t * n + j];
      eb[t * ldb + j] = operand_exponent(p.b[t * n + j], model.emin_b);
      if (!std::isfinite(p.b[t * n + j])) col_special[j] = 1;
    }
  for_row_bands(m, threads, [&](std::size_t first, std::size_t rows) {
    std::vector<double> c(ldb), promoted(ldb);
    LPLAB_DISPATCH(TensorCoreRows)(
        model, rows, n, k, p.a + first * k, ea.data() + first * k, bd.data(), eb.data(), ldb, out + first * n,
        c.data(), promoted.data(), row_special.data() + first, col_special.data());
  });
  return true;
}

}  // namespace lplab::kernels::detail
#endif
