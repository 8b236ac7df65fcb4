// AMD's matrix-unit models of mma_step.h, vectorised across output columns
// (one Highway kernel per SIMD target); mma::chain is the reference of each, and
// a test compares them bit for bit on every target (mma_test.cpp).
//   fma        a fused multiply-add per product in D's type: MulAdd in float
//              or double lanes (targets with a fused MulAdd only);
//   ftz_pairs  float products and sums, each flushed to zero below fp32's
//              smallest normal (the operands below their type's, at packing),
//              `sum_group` products summed before C, C flushed at each
//              instruction's start (so -0 enters as +0); a tile whose
//              products and C are all multiples of 2^-126 (from the lowest
//              set bits of its rows' and columns' operands) has nothing to
//              flush but -0 entering, and runs the products and sums alone;
//   exact      the exact sum of `group` products and C rounded once to fp32:
//              in double lanes the products are exact (at most 2 x 11
//              significant bits) and each addition's error is measured
//              (TwoSum); where every error is zero the double sum is the
//              exact sum and one conversion rounds it, and a lane where one
//              is not takes the scalar step (mma::exact_step) for that group;
//   two_stage, two_stage_split
//              in double lanes, with the operands' alignment exponents
//              packed beside them: the products fused at F below their
//              largest exponent (split: the even and the odd apart), C and
//              that sum floored to a common grid, added, floored to F2 bits
//              and rounded to fp32, as mma::two_stage_c; a lane with a NaN or
//              an infinity among its terms, or (two_stage) a product of
//              2^128 or more, takes the scalar step (mma::instruction) for
//              that group.
// Tiles of R rows x V vectors of columns keep their chains in registers over
// the whole k; every `promote` products they are added into an fp32 sum
// (scalar, rare), as mma::chain does.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "mma_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "hwy/highway.h"
#include "kernel_args.h"
#include "mma_simd.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

enum class MmaLoop { fma, ftz_pairs, exact, two_stage, group_scaled };

// x with magnitudes below `tiny` made zero: keeping x's sign (the products
// and sums of ftz_pairs: x * 0.0f) or +0 (C entering an instruction).
template <class D, class V>
HWY_ATTR HWY_INLINE V FlushSigned(D d, V x, V tiny) {
#if HWY_TARGET == HWY_AVX3
  // A float below 2^-126 in magnitude is a zero or a subnormal: the
  // subnormals (vfpclassps, class 0x20) lose their magnitude bits.
  if constexpr (sizeof(hn::TFromD<D>) == 4 && hn::MaxLanes(d) == 16) {
    (void)tiny;
    const __mmask16 sub = _mm512_fpclass_ps_mask(x.raw, 0x20);
    return V{_mm512_mask_and_ps(x.raw, sub, x.raw, hn::SignBit(d).raw)};
  }
#endif
  return hn::IfThenElse(hn::Lt(hn::Abs(x), tiny), hn::And(x, hn::SignBit(d)), x);
}
template <class D, class V>
HWY_ATTR HWY_INLINE V FlushPositive(D d, V x, V tiny) {
  return hn::IfThenElse(hn::Lt(hn::Abs(x), tiny), hn::Zero(d), x);
}


#if HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR
// Whole numbers in double lanes: 2^x (x clamped to double's normal
// exponents, so that a product that is zero stays zero), and floor(log2 |v|)
// of a nonzero v.
template <class D>
HWY_ATTR HWY_INLINE hn::Vec<D> Pow2(D d, hn::Vec<D> x) {
  const hn::RebindToSigned<D> di;
  const auto magic = hn::Set(d, 0x1.8p52);  // x + 1.5 * 2^52 holds x in its low bits
  x = hn::Min(hn::Max(x, hn::Set(d, -1022.0)), hn::Set(d, 1023.0));
  const auto xi = hn::Sub(hn::BitCast(di, hn::Add(x, magic)), hn::BitCast(di, magic));
  return hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(xi, hn::Set(di, 1023))));
}
template <class D>
HWY_ATTR HWY_INLINE hn::Vec<D> Log2Floor(D d, hn::Vec<D> v) {
  const hn::RebindToSigned<D> di;
  const auto field = hn::And(hn::ShiftRight<52>(hn::BitCast(di, v)), hn::Set(di, 0x7ff));
  return hn::ConvertTo(d, hn::Sub(field, hn::Set(di, 1023)));
}
#endif

// acc with the lanes of `redo` replaced by step(l, C), C the lane of
// `before` (the chain's value entering the group): the lanes a kernel
// cannot take go to the scalar model, one at a time.
template <class D, class M, class Step>
HWY_ATTR HWY_INLINE hn::Vec<D> RedoLanes(D d, M redo, hn::Vec<D> before, hn::Vec<D> acc, const Step& step) {
  if (HWY_LIKELY(hn::AllFalse(d, redo))) return acc;
  using T = hn::TFromD<D>;
  HWY_ALIGN std::uint8_t mask_bits[(hn::MaxLanes(d) + 7) / 8 + 8] = {};
  HWY_ALIGN T c_lanes[hn::MaxLanes(d)];
  HWY_ALIGN T lanes[hn::MaxLanes(d)];
  hn::StoreMaskBits(d, redo, mask_bits);
  hn::Store(before, d, c_lanes);
  hn::Store(acc, d, lanes);
  for (std::size_t l = 0; l < hn::Lanes(d); ++l)
    if ((mask_bits[l / 8] >> (l % 8)) & 1) lanes[l] = step(l, c_lanes[l]);
  return hn::Load(d, lanes);
}

// One tile: rows [i0, i0 + R) against vectors [v0, v0 + V) of columns.
template <MmaLoop kLoop, std::size_t R, std::size_t V, class D>
HWY_ATTR HWY_INLINE void Tile(D d, const MmaSimdArgs& g, std::size_t i0, std::size_t v0) {
  using T = hn::TFromD<D>;
  using Vec = hn::Vec<D>;
  const std::size_t N = hn::Lanes(d), kp = g.kp;
  const MmaModel& m = *g.model;
  const T* HWY_RESTRICT a = static_cast<const T*>(g.a);
  const T* HWY_RESTRICT b = static_cast<const T*>(g.b);
  const T* c = static_cast<const T*>(g.c);
  const auto tiny = hn::Set(d, static_cast<T>(0x1p-126));  // fp32's smallest normal
  const auto zero = hn::Zero(d);
  const T* HWY_RESTRICT bv[V];
  Vec acc[R][V];
  for (std::size_t v = 0; v < V; ++v) bv[v] = b + (v0 + v) * kp * N;
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t v = 0; v < V; ++v)
      acc[r][v] = c != nullptr ? hn::LoadU(d, c + (i0 + r) * g.ldb + (v0 + v) * N) : zero;
  HWY_ALIGN T promoted[R][V][hn::MaxLanes(d)] = {};
  HWY_ALIGN T lanes[hn::MaxLanes(d)];
  const std::size_t chunk = g.promote ? g.promote : kp;
  std::size_t in_chain = 0;
  for (std::size_t start = 0; start < kp; start += chunk) {
    const std::size_t end = std::min(kp, start + chunk);
    if constexpr (kLoop == MmaLoop::fma) {
      for (std::size_t t = start; t < end; ++t) {
        Vec bt[V];
        for (std::size_t v = 0; v < V; ++v) bt[v] = hn::Load(d, bv[v] + t * N);
        for (std::size_t r = 0; r < R; ++r) {
          const auto at = hn::Set(d, a[(i0 + r) * kp + t]);
          for (std::size_t v = 0; v < V; ++v) acc[r][v] = hn::MulAdd(at, bt[v], acc[r][v]);
        }
      }
    } else if constexpr (kLoop == MmaLoop::ftz_pairs) {
      const auto K = static_cast<std::size_t>(m.k);
      const bool quads = m.sum_group == 4;
      // A coarse tile: every product of its rows and columns a multiple of
      // 2^-126 (the lowest set bits' exponents of a row's and a column's
      // operands sum to -126 or more), and so is C. Then every sum is one
      // (a rounded one on the float grid there, 2^-125 or coarser where an
      // exact sum needs more than 24 bits), so that every product and sum
      // is 0 or at least 2^-126 in magnitude and no flush changes it: the
      // products and sums alone. (C entering an instruction is still made
      // +0 where it is -0.)
      // (A row or column of zeros and specials has INT_MAX: any sum with
      // another's, at least -149, passes.)
      bool coarse = g.lsb_a != nullptr && g.c_coarse;
      if (coarse) {
        std::int64_t la = INT_MAX, lb = INT_MAX;
        for (std::size_t r = 0; r < R; ++r) la = std::min<std::int64_t>(la, g.lsb_a[i0 + r]);
        for (std::size_t v = 0; v < V; ++v) lb = std::min<std::int64_t>(lb, g.lsb_b[v0 + v]);
        coarse = la + lb >= -126;
      }
      // The pairs (or quads) with every flush, or with none (kFlush false).
      auto run_pairs = [&](auto flushes) HWY_ATTR {
        constexpr bool kFlush = decltype(flushes)::value;
        auto f = [&](Vec x) HWY_ATTR {
          if constexpr (kFlush) return FlushSigned(d, x, tiny);
          else return x;
        };
        for (std::size_t t = start; t < end; t += quads ? 4 : 2) {
          if (t % K == 0)
            for (std::size_t r = 0; r < R; ++r)
              for (std::size_t v = 0; v < V; ++v) acc[r][v] = FlushPositive(d, acc[r][v], tiny);
          for (std::size_t r = 0; r < R; ++r) {
            const T* ar = a + (i0 + r) * kp + t;
            for (std::size_t v = 0; v < V; ++v) {
              const T* bt = bv[v] + t * N;
              const auto p0 = f(hn::Mul(hn::Set(d, ar[0]), hn::Load(d, bt)));
              const auto p1 = f(hn::Mul(hn::Set(d, ar[1]), hn::Load(d, bt + N)));
              auto s = f(hn::Add(p0, p1));
              if (quads) {
                const auto p2 = f(hn::Mul(hn::Set(d, ar[2]), hn::Load(d, bt + 2 * N)));
                const auto p3 = f(hn::Mul(hn::Set(d, ar[3]), hn::Load(d, bt + 3 * N)));
                s = f(hn::Add(s, f(hn::Add(p2, p3))));
              }
              acc[r][v] = f(hn::Add(acc[r][v], s));
            }
          }
        }
      };
      if (coarse) run_pairs(std::false_type{});
      else run_pairs(std::true_type{});
    } else if constexpr (kLoop == MmaLoop::group_scaled) {
#if HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR
      // Per step of L products (mma_step.h's group_scaled and fused_step):
      // groups of G products summed exactly (fp4 products are multiples of
      // 2^-2 below 2^6), each times its two block scales (exact: at most
      // 20 significant bits) and aligned at the scales' exponents (a group
      // of zero products, or with a zero scale, at zero_exponent); then as
      // truncated: every term and C truncated to 2^(E - F), summed exactly
      // (each below 2^(F + 12)), truncated to fp32 (step 4). A lane with a
      // NaN or an infinity among its operands, scales or C takes the scalar
      // step for that group.
      const auto L = static_cast<std::size_t>(m.group), G = static_cast<std::size_t>(m.sum_group);
      const auto blk = static_cast<std::size_t>(m.scale_block);
      const double F = m.fraction_bits;
      const auto zero_exp = hn::Set(d, m.zero_exponent), fp32_emin = hn::Set(d, -126.0);
      const auto big = hn::Set(d, 0x1p128), inf = hn::Set(d, HUGE_VAL), sign = hn::SignBit(d);
      MmaModel one = m;  // the scalar step
      one.k = one.group;
      for (std::size_t t = start; t < end; t += L) {
        for (std::size_t r = 0; r < R; ++r) {
          const T* ar = a + (i0 + r) * kp + t;
          for (std::size_t v = 0; v < V; ++v) {
            const T* bt = bv[v] + t * N;
            const auto c_before = acc[r][v];
            auto scalar = hn::Not(hn::IsFinite(c_before));
            auto E = hn::IfThenElse(hn::Eq(c_before, zero), zero_exp, hn::Max(Log2Floor(d, c_before), fp32_emin));
            Vec gp[16], ge[16];
            const std::size_t groups = L / G;
            for (std::size_t q = 0; q < groups; ++q) {
              auto sum = zero;
              auto nonzero = hn::Ne(zero, zero);
              for (std::size_t u = q * G; u < (q + 1) * G; ++u) {
                const auto p = hn::Mul(hn::Set(d, ar[u]), hn::Load(d, bt + u * N));
                sum = hn::Add(sum, p);  // exact
                nonzero = hn::Or(nonzero, hn::Ne(p, zero));
              }
              const std::size_t block = (t + q * G) / blk;
              const std::size_t row = i0 + r;
              const auto sa = hn::Set(d, g.sa[row * g.blocks + block]);
              const auto esa = hn::Set(d, g.esa[row * g.blocks + block]);
              const auto sb = hn::Load(d, g.sb + ((v0 + v) * g.blocks + block) * N);
              const auto esb = hn::Load(d, g.esb + ((v0 + v) * g.blocks + block) * N);
              const auto scale = hn::Mul(sa, sb);
              gp[q] = hn::Mul(sum, scale);
              ge[q] = hn::Add(esa, esb);
              scalar = hn::Or(scalar, hn::Not(hn::IsFinite(gp[q])));
              const auto at_zero = hn::Or(hn::Not(nonzero), hn::Eq(scale, zero));
              E = hn::Max(E, hn::IfThenElse(at_zero, zero_exp, ge[q]));
            }
            const auto down = Pow2(d, hn::Sub(hn::Set(d, F), E));
            auto units = hn::Trunc(hn::Mul(hn::IfThenElse(scalar, zero, c_before), down));
            for (std::size_t q = 0; q < groups; ++q)
              units = hn::Add(units, hn::Trunc(hn::Mul(hn::IfThenElse(scalar, zero, gp[q]), down)));
            // Step 4: truncated to 24 bits, the exponent at least -126.
            const auto sum = hn::Mul(units, Pow2(d, hn::Sub(E, hn::Set(d, F))));
            const auto lead = hn::Max(Log2Floor(d, sum), fp32_emin);
            auto out = hn::Mul(hn::Trunc(hn::Mul(sum, Pow2(d, hn::Sub(hn::Set(d, 23.0), lead)))),
                               Pow2(d, hn::Sub(lead, hn::Set(d, 23.0))));
            out = hn::IfThenElse(hn::Ge(hn::Abs(out), big), hn::Or(inf, hn::And(out, sign)), out);
            acc[r][v] = hn::IfThenElse(hn::Eq(out, zero), zero, out);
            acc[r][v] = RedoLanes(d, scalar, c_before, acc[r][v], [&](std::size_t l, double c) {
              double ax[64], bx[64], qa[64], qb[64];
              for (std::size_t u = 0; u < L; ++u) ax[u] = ar[u], bx[u] = bt[u * N + l];
              for (std::size_t q = 0; q < L / blk; ++q) {
                qa[q] = g.sa[(i0 + r) * g.blocks + t / blk + q];
                qb[q] = g.sb[((v0 + v) * g.blocks + t / blk + q) * N + l];
              }
              // C's type: the instruction's for the chain's first step, D's after.
              const int emin_c = t == start ? m.emin_c : m.emin_d;
              return mma::instruction(one, ax, bx, c, emin_c, qa, qb, nullptr);
            });
          }
        }
      }
#else
      std::abort();  // never dispatched: MmaSimdLanes declines
#endif
    } else if constexpr (kLoop == MmaLoop::two_stage) {
#if HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR
      // Per group of L products (mma_step.h's two_stage and
      // two_stage_split, mma::two_stage_c): the products fused at F below
      // their largest exponent (zero products ignored; split: the even and
      // the odd apart, then floored to the larger's grid), C and that sum
      // floored to a common grid, added, floored to F2 bits, rounded to fp32.
      // A lane with a NaN or an infinity among its terms, or (two_stage) a
      // product of 2^128 or more, takes the scalar step for that group.
      const auto L = static_cast<std::size_t>(m.group);
      const bool split = m.algorithm == MmaAlgorithm::two_stage_split;
      const double F = m.fraction_bits, F2 = m.fraction_bits2;
      const double* ea = g.ea;
      const hn::Rebind<float, D> df;
      const auto none = hn::Set(d, -1e6), all_zero_below = hn::Set(d, -50000.0);
      const auto big = hn::Set(d, 0x1p128), fp32_emin = hn::Set(d, -126.0);
      MmaModel one = m;  // the scalar step: one group
      one.k = one.group;
      for (std::size_t t = start; t < end; t += L) {
        for (std::size_t r = 0; r < R; ++r) {
          const T* ar = a + (i0 + r) * kp + t;
          const double* er = ea + (i0 + r) * kp + t;
          for (std::size_t v = 0; v < V; ++v) {
            const T* bt = bv[v] + t * N;
            const double* ebt = g.eb + (v0 + v) * kp * N + t * N;
            // Pass 1: the halves' largest exponents (one half: all of them).
            auto e_even = none, e_odd = none;
            for (std::size_t u = 0; u < L; ++u) {
              const auto et = hn::Add(hn::Set(d, er[u]), hn::Load(d, ebt + u * N));
              if (split && u % 2 == 1) e_odd = hn::Max(e_odd, et);
              else e_even = hn::Max(e_even, et);
            }
            // Pass 2: the products cut to their half's grid, summed exactly
            // (each below 2^(F + 2), at most 64 of them).
            const auto down_even = Pow2(d, hn::Sub(hn::Set(d, F), e_even));
            const auto down_odd = Pow2(d, hn::Sub(hn::Set(d, F), e_odd));
            auto units_even = zero, units_odd = zero;
            const auto c_before = acc[r][v];
            auto scalar = hn::Not(hn::IsFinite(c_before));
            for (std::size_t u = 0; u < L; ++u) {
              const auto p = hn::Mul(hn::Set(d, ar[u]), hn::Load(d, bt + u * N));  // exact
              scalar = hn::Or(scalar, hn::Not(hn::IsFinite(p)));
              if (!split) scalar = hn::Or(scalar, hn::Ge(hn::Abs(p), big));
              if (split && u % 2 == 1) units_odd = hn::Add(units_odd, hn::Trunc(hn::Mul(p, down_odd)));
              else units_even = hn::Add(units_even, hn::Trunc(hn::Mul(p, down_even)));
            }
            auto e_dot = hn::Max(e_even, e_odd);
            auto units = units_even;
            if (split)
              units = hn::Add(hn::Floor(hn::Mul(units_even, Pow2(d, hn::Sub(e_even, e_dot)))),
                              hn::Floor(hn::Mul(units_odd, Pow2(d, hn::Sub(e_odd, e_dot)))));
            e_dot = hn::IfThenElse(hn::Lt(e_dot, all_zero_below), hn::Set(d, mma::kAllZero), e_dot);
            // C and the products' sum on the grid 2^(e_max - F2 - 1).
            const auto c = hn::IfThenElse(scalar, zero, c_before);
            const auto e_c = hn::Max(Log2Floor(d, c), fp32_emin);  // exponent(c, -126): -126 for 0
            const auto e_max = hn::Max(e_dot, e_c);
            const auto dot = hn::Floor(hn::Mul(units, Pow2(d, hn::Add(hn::Sub(e_dot, e_max), hn::Set(d, F2 + 1 - F)))));
            auto cc = hn::Mul(hn::Floor(hn::Mul(c, Pow2(d, hn::Sub(hn::Set(d, F), e_max)))), hn::Set(d, std::ldexp(1.0, static_cast<int>(F2 + 1 - F))));
            if (split) cc = hn::IfThenElseZero(hn::Ge(e_c, hn::Sub(e_max, hn::Set(d, F + 1))), cc);
            const auto sum = hn::Add(dot, cc);  // exact: below 2^(F2 + 3)
            // Floored to F2 bits below its leading bit, rounded to fp32.
            const auto v_sum = hn::Mul(sum, Pow2(d, hn::Sub(e_max, hn::Set(d, F2 + 1))));
            const auto e = hn::Max(Log2Floor(d, v_sum), fp32_emin);
            const auto kept = hn::Mul(hn::Floor(hn::Mul(v_sum, Pow2(d, hn::Sub(hn::Set(d, F2), e)))),
                                      Pow2(d, hn::Sub(e, hn::Set(d, F2))));
            const auto d32 = hn::PromoteTo(d, hn::DemoteTo(df, kept));
            acc[r][v] = hn::IfThenElse(hn::Eq(sum, zero), zero, d32);
            acc[r][v] = RedoLanes(d, scalar, c_before, acc[r][v], [&](std::size_t l, double c) {
              double ax[64], bx[64];
              for (std::size_t u = 0; u < L; ++u) ax[u] = ar[u], bx[u] = bt[u * N + l];
              // (C: the lane's before this group; two_stage reads no emin_c.)
              return mma::instruction(one, ax, bx, c, m.emin_c, nullptr, nullptr, nullptr);
            });
          }
        }
      }
#else
      std::abort();  // never dispatched: MmaSimdLanes declines
#endif
    } else {
#if HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR
      const auto L = static_cast<std::size_t>(m.group);
      const hn::Rebind<float, D> df;
      const auto nan = hn::Set(d, std::numeric_limits<T>::quiet_NaN());
      for (std::size_t t = start; t < end; t += L) {
        for (std::size_t r = 0; r < R; ++r) {
          const T* ar = a + (i0 + r) * kp + t;
          for (std::size_t v = 0; v < V; ++v) {
            const T* bt = bv[v] + t * N;
            // TwoSum (Knuth): s + e is x + p exactly.
            auto s = acc[r][v];
            auto inexact = hn::Ne(zero, zero);
            for (std::size_t u = 0; u < L; ++u) {
              const auto p = hn::Mul(hn::Set(d, ar[u]), hn::Load(d, bt + u * N));  // exact
              const auto x = s;
              s = hn::Add(x, p);
              const auto pb = hn::Sub(s, x);
              const auto e = hn::Add(hn::Sub(x, hn::Sub(s, pb)), hn::Sub(p, pb));
              inexact = hn::Or(inexact, hn::Ne(e, zero));
            }
            const auto finite = hn::IsFinite(s);
            // One rounding to fp32; an exact zero sum is +0.
            auto d32 = hn::PromoteTo(d, hn::DemoteTo(df, s));
            d32 = hn::IfThenElse(hn::Eq(s, zero), zero, d32);
            // A NaN or an infinity among the terms: IEEE's sum (the double
            // sum of finite terms below 2^260 cannot overflow).
            const auto special = hn::IfThenElse(hn::IsNaN(s), nan, s);
            const auto before = acc[r][v];
            acc[r][v] = hn::IfThenElse(finite, d32, special);
            const auto redo = hn::And(inexact, finite);
            acc[r][v] = RedoLanes(d, redo, before, acc[r][v], [&](std::size_t l, double c) {
              double p[64];
              for (std::size_t u = 0; u < L; ++u) p[u] = ar[u] * bt[u * N + l];
              return mma::exact_step(p, static_cast<int>(L), c, nullptr);
            });
          }
        }
      }
#else
      std::abort();  // never dispatched: MmaSimdLanes declines
#endif
    }
    in_chain = end - start;
    if (g.promote != 0 && in_chain == g.promote) {
      // The chain's D added into an fp32 register (nearest even), C = +0.
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t v = 0; v < V; ++v) {
          hn::Store(acc[r][v], d, lanes);
          for (std::size_t l = 0; l < N; ++l)
            promoted[r][v][l] = static_cast<T>(static_cast<float>(promoted[r][v][l]) + static_cast<float>(lanes[l]));
          acc[r][v] = zero;
        }
      in_chain = 0;
    }
  }
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t v = 0; v < V; ++v) {
      hn::Store(acc[r][v], d, lanes);
      double* out = g.out + (i0 + r) * g.n + (v0 + v) * N;
      const std::size_t count = std::min(N, g.n - (v0 + v) * N);
      for (std::size_t l = 0; l < count; ++l) {
        double x = static_cast<double>(lanes[l]);
        if (g.promote != 0 && in_chain == 0) x = static_cast<double>(promoted[r][v][l]);
        else if (g.promote != 0)
          x = static_cast<double>(static_cast<float>(promoted[r][v][l]) + static_cast<float>(lanes[l]));
        out[l] = x;
      }
    }
}

// Rows [0, rows) of the call: tiles of R x V, then the ragged edges.
template <MmaLoop kLoop, std::size_t R, std::size_t V, class D>
HWY_ATTR void Rows(D d, const MmaSimdArgs& g, std::size_t rows) {
  const std::size_t vectors = g.ldb / hn::Lanes(d);
  std::size_t v0 = 0;
  for (; v0 + V <= vectors; v0 += V) {
    std::size_t i0 = 0;
    for (; i0 + R <= rows; i0 += R) Tile<kLoop, R, V>(d, g, i0, v0);
    for (; i0 < rows; ++i0) Tile<kLoop, 1, V>(d, g, i0, v0);
  }
  for (; v0 < vectors; ++v0) {
    std::size_t i0 = 0;
    for (; i0 + R <= rows; i0 += R) Tile<kLoop, R, 1>(d, g, i0, v0);
    for (; i0 < rows; ++i0) Tile<kLoop, 1, 1>(d, g, i0, v0);
  }
}

// The lanes type: double for fp64 fma and exact, float otherwise.
HWY_ATTR void MmaSimdRows(const MmaSimdArgs& g, std::size_t rows) {
  const MmaModel& m = *g.model;
  const hn::ScalableTag<float> df;
  switch (m.algorithm) {
    case MmaAlgorithm::fma:
#if HWY_HAVE_FLOAT64
      if (m.rounding == MmaRounding::nearest_fp64) return Rows<MmaLoop::fma, 4, 2>(hn::ScalableTag<double>(), g, rows);
#endif
      return Rows<MmaLoop::fma, 4, 2>(df, g, rows);
    case MmaAlgorithm::ftz_pairs: return Rows<MmaLoop::ftz_pairs, 2, 2>(df, g, rows);
#if HWY_HAVE_FLOAT64
    case MmaAlgorithm::exact: return Rows<MmaLoop::exact, 2, 2>(hn::ScalableTag<double>(), g, rows);
    case MmaAlgorithm::two_stage:
    case MmaAlgorithm::two_stage_split: return Rows<MmaLoop::two_stage, 2, 2>(hn::ScalableTag<double>(), g, rows);
    case MmaAlgorithm::group_scaled: return Rows<MmaLoop::group_scaled, 2, 2>(hn::ScalableTag<double>(), g, rows);
#endif
    default: std::abort();  // mma_simd() dispatches only the models above
  }
}

// Lanes of the model's lane type on this target; 0 where the target cannot
// run the model bit for bit (see mma_simd.h).
HWY_ATTR std::size_t MmaSimdLanes(const MmaModel& m) {
  const bool fma = m.algorithm == MmaAlgorithm::fma;
  const bool exact = m.algorithm == MmaAlgorithm::exact || m.algorithm == MmaAlgorithm::two_stage ||
                     m.algorithm == MmaAlgorithm::two_stage_split || m.algorithm == MmaAlgorithm::group_scaled;
  if (m.algorithm == MmaAlgorithm::group_scaled &&
      (m.sum_group < 1 || m.group % m.sum_group != 0 || m.group / m.sum_group > 16 || m.scale_block < 1))
    return 0;
  const bool in_double = exact || (fma && m.rounding == MmaRounding::nearest_fp64);
  if (fma && !HWY_NATIVE_FMA) return 0;
  if (exact && HWY_TARGET == HWY_SCALAR) return 0;
  if (m.algorithm == MmaAlgorithm::ftz_pairs && m.sum_group != 2 && m.sum_group != 4) return 0;
  if (exact && (m.group < 1 || m.group > 64)) return 0;
#if HWY_HAVE_FLOAT64
  if (in_double) return hn::Lanes(hn::ScalableTag<double>());
#else
  if (in_double) return 0;
#endif
  return hn::Lanes(hn::ScalableTag<float>());
}

}  // namespace lplab::kernels::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <bit>
#include <cmath>
#include <new>
#include <type_traits>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "row_bands.h"

namespace lplab::kernels::detail {

HWY_EXPORT(MmaSimdRows);
HWY_EXPORT(MmaSimdLanes);

namespace {

// The operands in the lane type T, packed (MmaSimdArgs), ftz_pairs' flushed
// below their types' smallest normal exponents to +0; then the bands.
template <class T>
void run(const MmaModel& model, std::size_t rows, std::size_t n, std::size_t kp, std::size_t lanes, const float* a,
         const float* b, const double* c_in, int promote_every, unsigned threads, double* out,
         const float* scales_a, const float* scales_b_t) {
  const bool ftz = model.algorithm == MmaAlgorithm::ftz_pairs;
  auto operand = [&](float x, int emin) {
    if (ftz && std::fabs(x) < std::ldexp(1.0f, emin)) return T{0};
    return static_cast<T>(x);
  };
  const std::size_t ldb = (n + lanes - 1) / lanes * lanes;
  hwy::AlignedFreeUniquePtr<T[]> ap = hwy::AllocateAligned<T>(rows * kp);
  hwy::AlignedFreeUniquePtr<T[]> bp = hwy::AllocateAligned<T>(kp * ldb);
  hwy::AlignedFreeUniquePtr<T[]> cp = hwy::AllocateAligned<T>(c_in != nullptr ? rows * ldb : 1);
  if (ap == nullptr || bp == nullptr || cp == nullptr) throw std::bad_alloc();
  for (std::size_t i = 0; i < rows * kp; ++i) ap[i] = operand(a[i], model.emin_a);
  const PanelIndex at_b(kp, lanes);
  for (std::size_t t = 0; t < kp; ++t)
    for (std::size_t j = 0; j < ldb; ++j)
      bp[at_b(t, j)] = j < n ? operand(b[t * n + j], model.emin_b) : T{0};
  if (c_in != nullptr)
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < ldb; ++j) cp[i * ldb + j] = j < n ? static_cast<T>(c_in[i * n + j]) : T{0};
  // ftz_pairs: the least exponent of an operand's lowest set bit, per row
  // of A and per vector of B's columns; whether C is coarse (mma_simd.h).
  std::vector<int> lsb_a, lsb_b;
  bool c_coarse = true;
  if constexpr (std::is_same_v<T, float>) {
    if (ftz) {
      auto lsb = [](float x) -> int {  // INT_MAX for a zero, an infinity or a NaN
        const auto u = std::bit_cast<std::uint32_t>(x);
        const auto field = static_cast<int>((u >> 23) & 0xFF);
        if ((u & 0x7FFFFFFFu) == 0 || field == 0xFF) return INT_MAX;
        const std::uint32_t sig = (u & 0x7FFFFFu) | (field != 0 ? 0x800000u : 0u);  // x = sig 2^(max(field, 1) - 150)
        return std::max(field, 1) - 150 + std::countr_zero(sig);
      };
      lsb_a.assign(rows, INT_MAX);
      lsb_b.assign(ldb / lanes, INT_MAX);
      for (std::size_t i = 0; i < rows * kp; ++i) lsb_a[i / kp] = std::min(lsb_a[i / kp], lsb(ap[i]));
      for (std::size_t i = 0; i < kp * ldb; ++i)  // vector v is bp[v kp lanes, (v + 1) kp lanes)
        lsb_b[i / (kp * lanes)] = std::min(lsb_b[i / (kp * lanes)], lsb(bp[i]));
      for (std::size_t i = 0; c_in != nullptr && i < rows * ldb; ++i) c_coarse = c_coarse && lsb(cp[i]) >= -126;
    }
  }
  // two_stage: the alignment exponents, a zero's far below any product's.
  std::vector<double> ea, eb;
  const bool two_stage =
      model.algorithm == MmaAlgorithm::two_stage || model.algorithm == MmaAlgorithm::two_stage_split;
  if (two_stage) {
    auto exponent = [](T x, int emin) -> double {
      if (x == 0) return -100000.0;
      if (!std::isfinite(x)) return 0.0;  // the lane takes the scalar step
      return std::max(std::ilogb(x), emin);
    };
    ea.resize(rows * kp);
    eb.resize(kp * ldb);
    for (std::size_t i = 0; i < rows * kp; ++i) ea[i] = exponent(ap[i], model.emin_a);
    for (std::size_t i = 0; i < kp * ldb; ++i) eb[i] = exponent(bp[i], model.emin_b);
  }
  // group_scaled: the block scales and their alignment exponents.
  const std::size_t blocks = scales_a != nullptr ? kp / static_cast<std::size_t>(model.scale_block) : 0;
  std::vector<double> sa(rows * blocks), esa(rows * blocks), sb(ldb * blocks, 1.0), esb(ldb * blocks, 0.0);
  auto scale_exponent = [&](double x) -> double {
    if (x == 0 || !std::isfinite(x)) return 0.0;  // a zero group; a lane that takes the scalar step
    return std::max(std::ilogb(x), model.emin_scale);
  };
  for (std::size_t i = 0; i < rows * blocks; ++i) sa[i] = scales_a[i], esa[i] = scale_exponent(sa[i]);
  const PanelIndex at_s(blocks, lanes);
  for (std::size_t j = 0; j < n && blocks > 0; ++j)
    for (std::size_t q = 0; q < blocks; ++q) {
      const std::size_t at = at_s(q, j);
      sb[at] = scales_b_t[j * blocks + q];
      esb[at] = scale_exponent(sb[at]);
    }
  for_row_bands(rows, threads, [&](std::size_t first, std::size_t count) {
    const MmaSimdArgs g{&model,
                        kp,
                        n,
                        ldb,
                        static_cast<std::size_t>(promote_every),
                        ap.get() + first * kp,
                        bp.get(),
                        c_in != nullptr ? cp.get() + first * ldb : nullptr,
                        out + first * n,
                        two_stage ? ea.data() + first * kp : nullptr,
                        two_stage ? eb.data() : nullptr,
                        blocks,
                        sa.data() + first * blocks,
                        esa.data() + first * blocks,
                        sb.data(),
                        esb.data(),
                        ftz ? lsb_a.data() + first : nullptr,
                        ftz ? lsb_b.data() : nullptr,
                        c_coarse};
    LPLAB_DISPATCH(MmaSimdRows)(g, count);
  });
}

}  // namespace

bool mma_simd(const MmaModel& model, std::size_t rows, std::size_t n, std::size_t kp, const float* a,
              const float* b, const double* c_in, int promote_every, unsigned threads, double* out,
              const float* scales_a, const float* scales_b_t) {
  const MmaAlgorithm alg = model.algorithm;
  const bool two_stage = alg == MmaAlgorithm::two_stage || alg == MmaAlgorithm::two_stage_split;
  const bool group_scaled = alg == MmaAlgorithm::group_scaled;
  if (group_scaled != (scales_a != nullptr && scales_b_t != nullptr)) return false;
  if (alg != MmaAlgorithm::fma && alg != MmaAlgorithm::ftz_pairs && alg != MmaAlgorithm::exact && !two_stage &&
      !group_scaled)
    return false;
  if (kp == 0 || rows == 0 || n == 0 || !float_arithmetic_exact()) return false;
  const std::size_t lanes = LPLAB_DISPATCH(MmaSimdLanes)(model);
  if (lanes == 0) return false;
  const bool in_double =
      alg == MmaAlgorithm::exact || two_stage || group_scaled || model.rounding == MmaRounding::nearest_fp64;
  if (in_double) run<double>(model, rows, n, kp, lanes, a, b, c_in, promote_every, threads, out, scales_a, scales_b_t);
  else run<float>(model, rows, n, kp, lanes, a, b, c_in, promote_every, threads, out, scales_a, scales_b_t);
  return true;
}

}  // namespace lplab::kernels::detail
#endif
