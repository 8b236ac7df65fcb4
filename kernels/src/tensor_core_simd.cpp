// Accumulator::tensor_core vectorised across output columns (one Highway
// kernel per SIMD target): the model of tensor_core.cpp, step for step, with
// the scalar tensor_core::dot (tensor_core_step.h) as its reference (a test compares them bit for
// bit on every target). Per row of A and vector of columns, the chain's C in
// a register, per block of products:
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
//      scalings), 2^128 or more an infinity -- for the output type of the
//      model (TensorCoreModel's emin_out, emax_out and nearest: fp16 C and D
//      round to nearest-even, clamp at -14 and overflow at 2^16);
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

// The kernel's constants and the chains of kR rows of A against kV vectors
// of columns at once: kR kV independent chains interleaved, so that one
// chain's latency (each block's C feeds the next block's alignment) is
// hidden behind the others', and each vector of B loaded once for kR rows.
// Chain q is row q / kV against vector q % kV. (Arrays of vectors: x86
// targets only, which is what lplab dispatches to.)
struct ChainArgs {
  const TensorCoreModel* model;
  std::size_t k;
  const double* b;   // packed: the k rows of columns [jN, jN + N) at b[(j k + t) N + lane]
  const double* eb;  // their alignment exponents, packed alike
};

template <std::size_t kR, std::size_t kV>
HWY_ATTR HWY_INLINE void ChainTile(const ChainArgs& c, const double* const* HWY_RESTRICT ar,
                                   const double* const* HWY_RESTRICT er, const double* const* cr, std::size_t j,
                                   bool maybe_special, double* HWY_RESTRICT result) {
  constexpr std::size_t kQ = kR * kV;
  const hn::ScalableTag<double> d;
  const hn::RebindToSigned<decltype(d)> di;
  using V = hn::Vec<decltype(d)>;
  const std::size_t N = hn::Lanes(d), k = c.k;
  const TensorCoreModel& model = *c.model;
  const int F = model.fraction_bits, R = model.result_bits;
  const std::size_t block = static_cast<std::size_t>(model.block);
  const auto zero = hn::Zero(d);
  const auto zero_exp = hn::Set(di, model.zero_exponent);
  const auto out_emin = hn::Set(di, model.emin_out);
  const auto exp_mask = hn::Set(di, 0x7ff);
  const auto bias = hn::Set(di, 1023);
  const auto inf = hn::Set(d, HUGE_VAL);
  const auto sign_mask = hn::Set(d, -0.0);
  const auto overflow_at = hn::BitCast(d, hn::ShiftLeft<52>(hn::Set(di, model.emax_out + 1023)));  // 2^emax_out
  const auto nan = hn::Set(d, std::numeric_limits<double>::quiet_NaN());
  // The exponent field of 2^x is x + 1023.
  auto pow2 = [&](auto e) HWY_ATTR { return hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(e, bias))); };
  auto exponent_of = [&](auto v) HWY_ATTR {  // floor(log2 |v|) of a nonzero normal double
    return hn::Sub(hn::And(hn::ShiftRight<52>(hn::BitCast(di, v)), exp_mask), bias);
  };
  // Exponents are whole numbers of magnitude below 2^51, kept in double
  // lanes in the loops over products (add and max are one instruction each
  // there, unlike 64-bit integer max before AVX-512): x + 1.5 * 2^52 has x in
  // the low bits of its significand, so the bits of the sum less those of
  // 1.5 * 2^52 are x as an integer, and back.
  const auto magic = hn::Set(d, 0x1.8p52);
  const auto magic_bits = hn::BitCast(di, magic);
  auto to_int = [&](auto x) HWY_ATTR { return hn::Sub(hn::BitCast(di, hn::Add(x, magic)), magic_bits); };
  auto to_double = [&](auto x) HWY_ATTR { return hn::Sub(hn::BitCast(d, hn::Add(x, magic_bits)), magic); };

  const double* HWY_RESTRICT bv[kV];
  const double* HWY_RESTRICT ebv[kV];
  V vc[kQ], promoted[kQ];
  for (std::size_t v = 0; v < kV; ++v) {
    bv[v] = c.b + (j / N + v) * k * N;
    ebv[v] = c.eb + (j / N + v) * k * N;
  }
  for (std::size_t q = 0; q < kQ; ++q) {
    vc[q] = cr[q / kV] != nullptr ? hn::LoadU(d, cr[q / kV] + j + (q % kV) * N) : zero;
    promoted[q] = zero;
  }
  std::size_t in_chain = 0;
  for (std::size_t start = 0; start < k; start += block) {
    const std::size_t end = std::min(k, start + block);
    V E[kQ], special[kQ], down[kQ], up[kQ], units[kQ];
    hn::Mask<decltype(d)> any_special[kQ];
    for (std::size_t q = 0; q < kQ; ++q) {
      const std::size_t v = q % kV;
      // Step 1. A zero C counts zero_exponent; a nonzero C at least -126,
      // which is above it, so that zero products (whose operand exponents
      // are kNoExponent, far below) never decide E.
      const auto c_zero = hn::Eq(vc[q], zero);
      E[q] = to_double(hn::IfThenElse(hn::RebindMask(di, c_zero), zero_exp, hn::Max(exponent_of(vc[q]), out_emin)));
      any_special[q] = hn::Not(hn::IsFinite(vc[q]));
      special[q] = hn::IfThenElseZero(any_special[q], vc[q]);
      if (maybe_special || !hn::AllFalse(d, any_special[q])) {
        // Specials: IEEE's sum of the non-finite terms.
        for (std::size_t t = start; t < end; ++t) {
          const auto prod = hn::Mul(hn::Set(d, ar[q / kV][t]), hn::Load(d, bv[v] + t * N));
          const auto fin = hn::IsFinite(prod);
          special[q] = hn::IfThenElse(fin, special[q],
                                      hn::IfThenElse(any_special[q], hn::Add(special[q], prod), prod));
          any_special[q] = hn::Or(any_special[q], hn::Not(fin));
        }
      }
    }
    for (std::size_t t = start; t < end; ++t) {
      V eb_t[kV];
      for (std::size_t v = 0; v < kV; ++v) eb_t[v] = hn::Load(d, ebv[v] + t * N);
      for (std::size_t r = 0; r < kR; ++r) {
        const auto et = hn::Set(d, er[r][t]);
        for (std::size_t v = 0; v < kV; ++v) E[r * kV + v] = hn::Max(E[r * kV + v], hn::Add(et, eb_t[v]));
      }
    }
    // Steps 2-3: every term on the grid 2^(E - F), truncated, summed (an
    // integer below 2^53: exact).
    for (std::size_t q = 0; q < kQ; ++q) {
      const auto Ei = to_int(E[q]);
      down[q] = pow2(hn::Sub(hn::Set(di, F), Ei));  // 2^(F - E)
      up[q] = pow2(hn::Sub(Ei, hn::Set(di, F)));    // 2^(E - F)
      units[q] = hn::Trunc(hn::Mul(vc[q], down[q]));
    }
    for (std::size_t t = start; t < end; ++t) {
      V b_t[kV];
      for (std::size_t v = 0; v < kV; ++v) b_t[v] = hn::Load(d, bv[v] + t * N);
      for (std::size_t r = 0; r < kR; ++r) {
        const auto at = hn::Set(d, ar[r][t]);
        for (std::size_t v = 0; v < kV; ++v) {
          const std::size_t q = r * kV + v;
          units[q] = hn::Add(units[q], hn::Trunc(hn::Mul(hn::Mul(at, b_t[v]), down[q])));
        }
      }
    }
    for (std::size_t q = 0; q < kQ; ++q) {
      // Step 4: units * 2^(E - F) exactly, truncated (or rounded to
      // nearest-even) to R bits.
      const auto sum = hn::Mul(units[q], up[q]);
      const auto lead = hn::Max(exponent_of(sum), out_emin);
      const auto r_down = pow2(hn::Sub(hn::Set(di, R - 1), lead));  // 2^(R - 1 - lead)
      const auto r_up = pow2(hn::Sub(lead, hn::Set(di, R - 1)));
      const auto scaled = hn::Mul(sum, r_down);
      auto r = hn::Mul(model.nearest ? hn::Round(scaled) : hn::Trunc(scaled), r_up);
      r = hn::IfThenElse(hn::Ge(hn::Abs(r), overflow_at), hn::Or(inf, hn::And(r, sign_mask)), r);
      r = hn::IfThenElse(hn::Eq(r, zero), zero, r);  // a zero result is +0 (as the model's integer sum)
      vc[q] = hn::IfThenElse(any_special[q], hn::IfThenElse(hn::IsNaN(special[q]), nan, special[q]), r);
    }
    in_chain += end - start;
    if (model.promote_every > 0 && in_chain == static_cast<std::size_t>(model.promote_every)) {
      // Scalar: Highway's DemoteTo clamps infinities on some targets (SCALAR).
      HWY_ALIGN double lc[hn::MaxLanes(d)], lp[hn::MaxLanes(d)];
      for (std::size_t q = 0; q < kQ; ++q) {
        hn::Store(vc[q], d, lc);
        hn::Store(promoted[q], d, lp);
        for (std::size_t l = 0; l < N; ++l) lp[l] = static_cast<double>(static_cast<float>(lp[l]) + static_cast<float>(lc[l]));
        promoted[q] = hn::Load(d, lp);
        vc[q] = zero;
      }
      in_chain = 0;
    }
  }
  for (std::size_t q = 0; q < kQ; ++q) {
    HWY_ALIGN double lc[hn::MaxLanes(d)], lp[hn::MaxLanes(d)];
    hn::Store(vc[q], d, lc);
    hn::Store(promoted[q], d, lp);
    for (std::size_t l = 0; l < N; ++l) {
      double x = lc[l];
      if (model.promote_every > 0 && in_chain == 0) x = lp[l];
      else if (model.promote_every > 0) x = static_cast<double>(static_cast<float>(lp[l]) + static_cast<float>(lc[l]));
      result[q * N + l] = x;
    }
  }
}

// Rows [0, m) of out (m x n): a (m x k, as doubles) with alignment exponents
// ea (kNoExponent for a zero); b and eb packed a vector of columns at a
// time (ChainArgs; columns past n zero), so that a vector's products are
// read in order; panels of `panel` columns (a whole number of vectors) stay
// in the cache while every row of A goes over them, and a vector's running
// C and promoted sum stay in registers over the whole k.
// row_special[i]: row i of A has an infinity or NaN; col_flags[j]: column j
// of B has one.
HWY_ATTR void TensorCoreRows(const TensorCoreModel& model, std::size_t m, std::size_t n, std::size_t k,
                             const double* HWY_RESTRICT a, const double* HWY_RESTRICT ea,
                             const double* HWY_RESTRICT b, const double* HWY_RESTRICT eb,
                             std::size_t ldb, std::size_t panel, const double* HWY_RESTRICT c_in,
                             double* HWY_RESTRICT out, const unsigned char* row_special,
                             const unsigned char* col_flags) {
#if HWY_HAVE_FLOAT64
  const hn::ScalableTag<double> d;
  const std::size_t N = hn::Lanes(d);
  // Chains in flight: 2 rows x 4 vectors where there are 32 registers
  // (AVX-512), 2 x 2 with 16.
  constexpr std::size_t kR = 2, kV = HWY_TARGET == HWY_AVX3 ? 4 : 2;
  std::vector<unsigned char> col_special(ldb / N, 0);
  for (std::size_t j = 0; j < ldb; ++j) col_special[j / N] |= col_flags[j];
  const ChainArgs args{&model, k, b, eb};
  std::vector<double> result(kR * kV * N);
  for (std::size_t first = 0; first < ldb; first += panel) {
    const std::size_t last = std::min(ldb, first + panel);
    for (std::size_t i = 0; i < m;) {
      const std::size_t rows = i + kR <= m ? kR : 1;
      const double* ar[kR];
      const double* er[kR];
      const double* cr[kR];
      bool row_flag = false;
      for (std::size_t r = 0; r < rows; ++r) {
        ar[r] = a + (i + r) * k;
        er[r] = ea + (i + r) * k;
        cr[r] = c_in != nullptr ? c_in + (i + r) * ldb : nullptr;
        row_flag = row_flag || row_special[i + r] != 0;
      }
      for (std::size_t j = first; j < last;) {
        const std::size_t vectors = j + kV * N <= last ? kV : 1;
        bool special = row_flag;
        for (std::size_t v = 0; v < vectors; ++v) special = special || col_special[j / N + v] != 0;
        if (rows == kR && vectors == kV) ChainTile<kR, kV>(args, ar, er, cr, j, special, result.data());
        else if (rows == kR) ChainTile<kR, 1>(args, ar, er, cr, j, special, result.data());
        else if (vectors == kV) ChainTile<1, kV>(args, ar, er, cr, j, special, result.data());
        else ChainTile<1, 1>(args, ar, er, cr, j, special, result.data());
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t l = 0; l < vectors * N && j + l < n; ++l) out[(i + r) * n + j + l] = result[r * vectors * N + l];
        j += vectors * N;
      }
      i += rows;
    }
  }
#else
  (void)model, (void)m, (void)n, (void)k, (void)a, (void)ea, (void)b, (void)eb, (void)ldb, (void)panel, (void)c_in,
      (void)out, (void)row_special, (void)col_flags;
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

#include <new>

#include "hwy/aligned_allocator.h"

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

bool tensor_core_fast(const MatmulProblem& p, const TensorCoreModel& model, double* out, unsigned threads,
                      const double* c_in, const TensorCoreScales* scales) {
  // (k = 0: nothing to pack -- Highway allocates no empty array -- and the
  // scalar model's answer is C.)
  if (model.block > 32 || model.fraction_bits > 44 || p.k == 0) return false;
  if (tensor_core_narrow(p, model, out, threads, c_in, scales)) return true;
  const std::size_t lanes = LPLAB_DISPATCH(TensorCoreLanes)();
  if (lanes == 0) return false;  // no double lanes
  const std::size_t m = p.m, n = p.n, k = p.k;
  const std::size_t ldb = (n + lanes - 1) / lanes * lanes;  // whole vectors (lanes: a power of two)
  // B (in double, with its exponents and special columns) packed a vector of
  // columns at a time (TensorCoreRows), and A's exponents, prepared once for
  // every band. (Column-major traversal of row-major B read rows 4 KiB apart
  // at n = 512: every load missed the cache's sets.)
  std::vector<double> ad(m * k), ea(m * k);
  hwy::AlignedFreeUniquePtr<double[]> eb = hwy::AllocateAligned<double>(k * ldb);
  hwy::AlignedFreeUniquePtr<double[]> bd = hwy::AllocateAligned<double>(k * ldb);
  if (eb == nullptr || bd == nullptr) throw std::bad_alloc();
  std::vector<unsigned char> row_special(m, 0), col_special(ldb, 0);
  // A block-scaled product a s_a b s_b: a s_a and b s_b are exact in
  // double, and their alignment exponents e(a) + e(s_a) and e(b) + e(s_b).
  const std::size_t blocks = scales != nullptr ? k / scales->block : 0;
  auto scale_of = [&](const float* s, std::size_t row, std::size_t t) -> double {
    return scales != nullptr ? s[row * blocks + t / scales->block] : 1.0;
  };
  auto scale_exponent = [&](double s) -> std::int64_t {
    return scales != nullptr && std::isfinite(s) && s != 0 ? std::max(std::ilogb(s), scales->emin) : 0;
  };
  for (std::size_t r = 0; r < m; ++r)
    for (std::size_t t = 0; t < k; ++t) {
      const std::size_t i = r * k + t;
      const double s = scales != nullptr ? scale_of(scales->a, r, t) : 1.0;
      ad[i] = static_cast<double>(p.a[i]) * s;
      ea[i] = static_cast<double>(operand_exponent(p.a[i], model.emin_a) + scale_exponent(s));
      row_special[r] |= !std::isfinite(ad[i]);
    }
  const PanelIndex at_b(k, lanes);
  for (std::size_t t = 0; t < k; ++t)
    for (std::size_t j = 0; j < ldb; ++j) {
      const std::size_t at = at_b(t, j);
      const float x = j < n ? p.b[t * n + j] : 0.0f;
      const double s = scales != nullptr && j < n ? scale_of(scales->b_t, j, t) : 1.0;
      bd[at] = static_cast<double>(x) * s;
      eb[at] = static_cast<double>(operand_exponent(x, model.emin_b) + scale_exponent(s));
      if (!std::isfinite(bd[at])) col_special[j] = 1;
    }
  // Panels of whole vectors whose B, 16 bytes a value, fills at most half
  // of a 512 KiB L2 cache.
  const std::size_t panel =
      std::max<std::size_t>(lanes, (std::size_t{256} << 10) / (16 * std::max<std::size_t>(k, 1)) / lanes * lanes);
  // The input C, if any, in rows of ldb (whole vectors; zero past n).
  std::vector<double> cin(c_in != nullptr ? m * ldb : 0, 0.0);
  for (std::size_t i = 0; i < cin.size() / std::max<std::size_t>(ldb, 1); ++i)
    std::copy(c_in + i * n, c_in + (i + 1) * n, cin.begin() + static_cast<std::ptrdiff_t>(i * ldb));
  for_row_bands(m, threads, [&](std::size_t first, std::size_t rows) {
    LPLAB_DISPATCH(TensorCoreRows)(model, rows, n, k, ad.data() + first * k, ea.data() + first * k, bd.get(), eb.get(),
                                   ldb, panel, c_in != nullptr ? cin.data() + first * ldb : nullptr,
                                   out + first * n, row_special.data() + first, col_special.data());
  });
  return true;
}

}  // namespace lplab::kernels::detail
#endif
