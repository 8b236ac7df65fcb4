// The tensor-core model (tensor_core_step.h) in float lanes, twice the lanes
// of tensor_core_simd.cpp's double kernel, for operands whose products are
// exact floats: every finite operand of at most 12 significant bits, 0 or
// between 2^-50 and 2^60 (fp16, fp8, fp6 and fp4 values, and bf16 and tf32
// values of that range: N(0,1) data), and a model with F <= 25 and blocks
// of at most 32. The scalar
// tensor_core::dot / mma::chain is its reference, as for the double kernel
// (mma_test.cpp, matmul_test.cpp compare them bit for bit on every target).
// Per row of A and vector of columns, the chain's C in a float register,
// per block of products:
//   1. E in int32 lanes: C's exponent (at least emin_out) or zero_exponent
//      for C = 0, and e(a) + e(b) for each product (a zero operand's
//      exponent is -100000: a zero product never decides E);
//   2-3. each product a b (exact) times 2^(F - E) (exact: a power of two;
//      when every product is zero, 2^min(F - E, 126)), truncated to an int32
//      (each below 2^(F + 2) <= 2^27, so 16 of them sum below 2^31), the
//      partial sums every 16 products and C's term (C times 2^(F - E),
//      truncated) added in double lanes: exact below 2^53;
//   4. in double lanes, as the double kernel: the sum normalised and
//      truncated (or rounded to nearest-even, fp16 C and D) to R bits, the
//      exponent clamped at emin_out, 2^emax_out or more an infinity, zero +0;
//      back to float exactly (AVX-512, fp32 D: one conversion toward zero).
// Specials (a NaN or an infinity among the products or C) follow IEEE's sum
// of the non-finite terms; promotion adds the chain into an fp32 sum.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensor_core_narrow.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "hwy/highway.h"
#include "kernel_args.h"
#include "tensor_core.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct NarrowArgs {
  const TensorCoreModel* model;
  std::size_t k;
  const float* b;          // packed: the k rows of columns [vN, vN + N) at b[(v k + t) N + lane]
  const std::int32_t* eb;  // their alignment exponents, packed alike
  // Block scales (MmaAlgorithm::scaled; blocks of `block` products, one per
  // step): their exponents, B's packed esb[(v blocks + q) N + lane]; the
  // rows' are NarrowTile's esa.
  std::size_t blocks;
  const std::int32_t* esb;
};

#if HWY_TARGET != HWY_SCALAR
// float to int32 toward zero: the instruction itself (Highway's ConvertTo
// adds a fix-up for values past int32's range, five more operations; every
// value here lies below 2^27, and a special product's lane is replaced).
template <class DI, class VF>
HWY_ATTR HWY_INLINE hn::Vec<DI> TruncToInt32(DI di, VF v) {
#if HWY_TARGET == HWY_AVX3
  (void)di;
  return hn::Vec<DI>{_mm512_cvttps_epi32(v.raw)};
#elif HWY_TARGET == HWY_AVX2
  (void)di;
  return hn::Vec<DI>{_mm256_cvttps_epi32(v.raw)};
#elif HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
  (void)di;
  return hn::Vec<DI>{_mm_cvttps_epi32(v.raw)};
#else
  return hn::ConvertTo(di, v);
#endif
}

// kR rows of A against kV vectors of columns: chain q is row q / kV
// against vector q % kV.
template <std::size_t kR, std::size_t kV>
HWY_ATTR HWY_INLINE void NarrowTile(const NarrowArgs& c, const float* const* HWY_RESTRICT ar,
                                    const std::int32_t* const* HWY_RESTRICT er, const std::int32_t* const* esa,
                                    const float* const* cr, std::size_t j, bool maybe_special,
                                    double* HWY_RESTRICT result) {
  constexpr std::size_t kQ = kR * kV;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Half<decltype(df)> dfh;
  const hn::Half<decltype(di)> dih;
  const hn::Repartition<double, decltype(df)> dd;
  const hn::RebindToSigned<decltype(dd)> ddi;
  using VF = hn::Vec<decltype(df)>;
  using VI = hn::Vec<decltype(di)>;
  using VD = hn::Vec<decltype(dd)>;
  const std::size_t N = hn::Lanes(df), k = c.k;
  const TensorCoreModel& model = *c.model;
  const int F = model.fraction_bits, R = model.result_bits;
  const std::size_t block = static_cast<std::size_t>(model.block);
  const auto zero_f = hn::Zero(df);
  const auto zero_d = hn::Zero(dd);
  const auto zero_exp = hn::Set(di, model.zero_exponent);
  const auto out_emin = hn::Set(di, model.emin_out);
  const auto out_emin64 = hn::Set(ddi, model.emin_out);
  const auto inf = hn::Set(dd, HUGE_VAL);
  const auto sign_mask = hn::Set(dd, -0.0);
  const auto overflow_at = hn::BitCast(dd, hn::ShiftLeft<52>(hn::Set(ddi, model.emax_out + 1023)));
  const auto nan = hn::Set(df, std::numeric_limits<float>::quiet_NaN());
  // fp32 D truncated to 24 or 14 bits (not fp16's nearest): step 4 is a
  // conversion toward zero on AVX-512.
  const bool fp32_truncated = !model.nearest && (R == 24 || R == 14) && model.emin_out == -126 &&
                              model.emax_out == 128;
  const auto two_128 = hn::Set(dd, 0x1p128);
  (void)fp32_truncated, (void)two_128;
  // 2^e (exponent fields e + 127 and e + 1023) and floor(log2 |v|) of a
  // nonzero normal v.
  auto pow2f = [&](VI e) HWY_ATTR { return hn::BitCast(df, hn::ShiftLeft<23>(hn::Add(e, hn::Set(di, 127)))); };
  auto pow2d = [&](auto e) HWY_ATTR { return hn::BitCast(dd, hn::ShiftLeft<52>(hn::Add(e, hn::Set(ddi, 1023)))); };
  auto exponent_f = [&](VF v) HWY_ATTR {
    return hn::Sub(hn::And(hn::ShiftRight<23>(hn::BitCast(di, v)), hn::Set(di, 0xff)), hn::Set(di, 127));
  };
  auto exponent_d = [&](VD v) HWY_ATTR {
    return hn::Sub(hn::And(hn::ShiftRight<52>(hn::BitCast(ddi, v)), hn::Set(ddi, 0x7ff)), hn::Set(ddi, 1023));
  };
  // Step 4 on half a vector: units of 2^(E - F) to the output type.
  auto step4 = [&](VD units, hn::Vec<decltype(ddi)> E) HWY_ATTR {
    const auto sum = hn::Mul(units, pow2d(hn::Sub(E, hn::Set(ddi, F))));  // exact
    const auto lead = hn::Max(exponent_d(sum), out_emin64);
    const auto scaled = hn::Mul(sum, pow2d(hn::Sub(hn::Set(ddi, R - 1), lead)));
    auto r = hn::Mul(model.nearest ? hn::Round(scaled) : hn::Trunc(scaled), pow2d(hn::Sub(lead, hn::Set(ddi, R - 1))));
    r = hn::IfThenElse(hn::Ge(hn::Abs(r), overflow_at), hn::Or(inf, hn::And(r, sign_mask)), r);
    return hn::IfThenElse(hn::Eq(r, zero_d), zero_d, r);  // a zero result is +0
  };

  const float* HWY_RESTRICT bv[kV];
  const std::int32_t* HWY_RESTRICT ebv[kV];
  VF vc[kQ];
  HWY_ALIGN float promoted[kQ][hn::MaxLanes(df)] = {};
  HWY_ALIGN float lanes[hn::MaxLanes(df)];
  for (std::size_t v = 0; v < kV; ++v) {
    bv[v] = c.b + (j / N + v) * k * N;
    ebv[v] = c.eb + (j / N + v) * k * N;
  }
  for (std::size_t q = 0; q < kQ; ++q)
    vc[q] = cr[q / kV] != nullptr ? hn::LoadU(df, cr[q / kV] + j + (q % kV) * N) : zero_f;
  std::size_t in_chain = 0;
  for (std::size_t start = 0; start < k; start += block) {
    const std::size_t end = std::min(k, start + block);
    VI E[kQ], es[kQ];
    VF special[kQ];
    hn::Mask<decltype(df)> any_special[kQ];
    for (std::size_t q = 0; q < kQ; ++q) {
      // Step 1: C (a zero C at zero_exponent), then the products. With
      // block scales a product's exponent is e(a) + e(b) + es, es the
      // block's scales' exponents: E is kept less es until step 4.
      const auto c_zero = hn::RebindMask(di, hn::Eq(vc[q], zero_f));
      E[q] = hn::IfThenElse(c_zero, zero_exp, hn::Max(exponent_f(vc[q]), out_emin));
      es[q] = hn::Zero(di);
      if (c.esb != nullptr) {
        const std::size_t blk = start / block;
        es[q] = hn::Add(hn::Set(di, esa[q / kV][blk]), hn::Load(di, c.esb + ((j / N + q % kV) * c.blocks + blk) * N));
        E[q] = hn::Sub(E[q], es[q]);
      }
      any_special[q] = hn::Not(hn::IsFinite(vc[q]));
      special[q] = hn::IfThenElseZero(any_special[q], vc[q]);
      if (maybe_special || !hn::AllFalse(df, any_special[q])) {
        // Specials: IEEE's sum of the non-finite terms.
        for (std::size_t t = start; t < end; ++t) {
          const auto prod = hn::Mul(hn::Set(df, ar[q / kV][t]), hn::Load(df, bv[q % kV] + t * N));
          const auto fin = hn::IsFinite(prod);
          special[q] = hn::IfThenElse(fin, special[q], hn::IfThenElse(any_special[q], hn::Add(special[q], prod), prod));
          any_special[q] = hn::Or(any_special[q], hn::Not(fin));
        }
      }
    }
    // (One vector of B's exponents live at a time: an array of them went
    // through the stack.)
    for (std::size_t t = start; t < end; ++t)
      for (std::size_t v = 0; v < kV; ++v) {
        const auto eb_t = hn::Load(di, ebv[v] + t * N);
        for (std::size_t r = 0; r < kR; ++r)
          E[r * kV + v] = hn::Max(E[r * kV + v], hn::Add(hn::Set(di, er[r][t]), eb_t));
      }
    // Steps 2-3: the products on the grid 2^(E - F), in int32 partial sums
    // of at most 16, then in double halves.
    VF down[kQ];
    VI part[kQ];
    VD lo[kQ], hi[kQ];
    for (std::size_t q = 0; q < kQ; ++q) {
      down[q] = pow2f(hn::Max(hn::Min(hn::Sub(hn::Set(di, F), E[q]), hn::Set(di, 126)), hn::Set(di, -126)));
      part[q] = hn::Zero(di);
      lo[q] = hi[q] = zero_d;
    }
    for (std::size_t first = start; first < end; first += 16) {
      const std::size_t last = std::min(end, first + 16);
      for (std::size_t t = first; t < last; ++t) {
        VF b_t[kV];
        for (std::size_t v = 0; v < kV; ++v) b_t[v] = hn::Load(df, bv[v] + t * N);
        for (std::size_t r = 0; r < kR; ++r) {
          const auto at = hn::Set(df, ar[r][t]);
          for (std::size_t v = 0; v < kV; ++v) {
            const std::size_t q = r * kV + v;
            part[q] = hn::Add(part[q], TruncToInt32(di, hn::Mul(hn::Mul(at, b_t[v]), down[q])));
          }
        }
      }
      for (std::size_t q = 0; q < kQ; ++q) {
        lo[q] = hn::Add(lo[q], hn::PromoteTo(dd, hn::LowerHalf(dih, part[q])));
        hi[q] = hn::Add(hi[q], hn::PromoteTo(dd, hn::UpperHalf(dih, part[q])));
        part[q] = hn::Zero(di);
      }
    }
    for (std::size_t q = 0; q < kQ; ++q) {
      // C's term, then step 4, in double halves (E with the scales' exponents).
      const auto e_full = hn::Add(E[q], es[q]);
      const auto e_lo = hn::PromoteTo(ddi, hn::LowerHalf(dih, e_full));
      const auto e_hi = hn::PromoteTo(ddi, hn::UpperHalf(dih, e_full));
      const auto c_lo = hn::PromoteTo(dd, hn::LowerHalf(dfh, vc[q]));
      const auto c_hi = hn::PromoteTo(dd, hn::UpperHalf(dfh, vc[q]));
      const auto f64 = hn::Set(ddi, F);
      const auto u_lo = hn::Add(lo[q], hn::Trunc(hn::Mul(hn::IfThenElseZero(hn::IsFinite(c_lo), c_lo), pow2d(hn::Sub(f64, e_lo)))));
      const auto u_hi = hn::Add(hi[q], hn::Trunc(hn::Mul(hn::IfThenElseZero(hn::IsFinite(c_hi), c_hi), pow2d(hn::Sub(f64, e_hi)))));
      VF r;
#if HWY_TARGET == HWY_AVX3
      if (fp32_truncated) {
        // Step 4 as one conversion toward zero (AVX-512's embedded
        // rounding): truncation to fp32's 24 bits on its own grid, the
        // subnormals' included, is step 4 with R = 24 and emin_out = -126;
        // E8M13 then clears 10 more bits. 2^128 or more: an infinity.
        auto to_float = [&](VD units, hn::Vec<decltype(ddi)> e) HWY_ATTR {
          auto sum = hn::Mul(units, pow2d(hn::Sub(e, f64)));  // exact
          sum = hn::IfThenElse(hn::Ge(hn::Abs(sum), two_128), hn::Or(inf, hn::And(sum, sign_mask)), sum);
          return hn::Vec<decltype(dfh)>{_mm512_cvt_roundpd_ps(sum.raw, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)};
        };
        r = hn::Combine(df, to_float(u_hi, e_hi), to_float(u_lo, e_lo));
        if (R == 14) r = hn::BitCast(df, hn::And(hn::BitCast(di, r), hn::Set(di, ~0x3FF)));
        r = hn::IfThenElse(hn::Eq(r, zero_f), zero_f, r);  // +0, also where it truncated to zero
      } else
#endif
        r = hn::Combine(df, hn::DemoteTo(dfh, step4(u_hi, e_hi)), hn::DemoteTo(dfh, step4(u_lo, e_lo)));
      vc[q] = hn::IfThenElse(any_special[q], hn::IfThenElse(hn::IsNaN(special[q]), nan, special[q]), r);
    }
    in_chain += end - start;
    if (model.promote_every > 0 && in_chain == static_cast<std::size_t>(model.promote_every)) {
      for (std::size_t q = 0; q < kQ; ++q) {
        hn::Store(vc[q], df, lanes);
        for (std::size_t l = 0; l < N; ++l) promoted[q][l] = promoted[q][l] + lanes[l];
        vc[q] = zero_f;
      }
      in_chain = 0;
    }
  }
  for (std::size_t q = 0; q < kQ; ++q) {
    hn::Store(vc[q], df, lanes);
    for (std::size_t l = 0; l < N; ++l) {
      float x = lanes[l];
      if (model.promote_every > 0) x = in_chain == 0 ? promoted[q][l] : promoted[q][l] + lanes[l];
      result[q * N + l] = static_cast<double>(x);
    }
  }
}
#endif

// Rows [0, m) of out (m x n), as tensor_core_simd.cpp's TensorCoreRows.
HWY_ATTR void NarrowRows(const TensorCoreModel& model, std::size_t m, std::size_t n, std::size_t k,
                         const float* HWY_RESTRICT a, const std::int32_t* HWY_RESTRICT ea,
                         const float* HWY_RESTRICT b, const std::int32_t* HWY_RESTRICT eb, std::size_t ldb,
                         std::size_t panel, const float* HWY_RESTRICT c_in, double* HWY_RESTRICT out,
                         const unsigned char* row_special, const unsigned char* col_flags, std::size_t blocks,
                         const std::int32_t* esa, const std::int32_t* esb) {
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<float> df;
  const std::size_t N = hn::Lanes(df);
  // 2 rows x 4 vectors where there are 32 registers (AVX-512), 2 x 2 with 16.
  constexpr std::size_t kR = 2, kV = HWY_TARGET == HWY_AVX3 ? 4 : 2;
  std::vector<unsigned char> col_special(ldb / N, 0);
  for (std::size_t j = 0; j < ldb; ++j) col_special[j / N] |= col_flags[j];
  const NarrowArgs args{&model, k, b, eb, blocks, esb};
  std::vector<double> result(kR * kV * N);
  for (std::size_t first = 0; first < ldb; first += panel) {
    const std::size_t last = std::min(ldb, first + panel);
    for (std::size_t i = 0; i < m;) {
      const std::size_t rows = i + kR <= m ? kR : 1;
      const float* ar[kR];
      const std::int32_t* er[kR];
      const std::int32_t* sr[kR];
      const float* cr[kR];
      bool row_flag = false;
      for (std::size_t r = 0; r < rows; ++r) {
        ar[r] = a + (i + r) * k;
        er[r] = ea + (i + r) * k;
        sr[r] = esa != nullptr ? esa + (i + r) * blocks : nullptr;
        cr[r] = c_in != nullptr ? c_in + (i + r) * ldb : nullptr;
        row_flag = row_flag || row_special[i + r] != 0;
      }
      for (std::size_t j = first; j < last;) {
        const std::size_t vectors = j + kV * N <= last ? kV : 1;
        bool special = row_flag;
        for (std::size_t v = 0; v < vectors; ++v) special = special || col_special[j / N + v] != 0;
        if (rows == kR && vectors == kV) NarrowTile<kR, kV>(args, ar, er, sr, cr, j, special, result.data());
        else if (rows == kR) NarrowTile<kR, 1>(args, ar, er, sr, cr, j, special, result.data());
        else if (vectors == kV) NarrowTile<1, kV>(args, ar, er, sr, cr, j, special, result.data());
        else NarrowTile<1, 1>(args, ar, er, sr, cr, j, special, result.data());
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t l = 0; l < vectors * N && j + l < n; ++l)
            out[(i + r) * n + j + l] = result[r * vectors * N + l];
        j += vectors * N;
      }
      i += rows;
    }
  }
#else
  (void)model, (void)m, (void)n, (void)k, (void)a, (void)ea, (void)b, (void)eb, (void)ldb, (void)panel, (void)c_in,
      (void)out, (void)row_special, (void)col_flags, (void)blocks, (void)esa, (void)esb;
  std::abort();  // never dispatched: NarrowLanes() is 0
#endif
}

// Floats per vector; 0 where the kernel does not run (SCALAR: no halves).
HWY_ATTR std::size_t NarrowLanes() {
#if HWY_TARGET != HWY_SCALAR && HWY_HAVE_FLOAT64
  return hn::Lanes(hn::ScalableTag<float>());
#else
  return 0;
#endif
}

}  // namespace lplab::kernels::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <new>

#include "hwy/aligned_allocator.h"
#include "row_bands.h"

namespace lplab::kernels::detail {

HWY_EXPORT(NarrowRows);
HWY_EXPORT(NarrowLanes);

namespace {
constexpr std::int32_t kNoExponent = -100000;  // a zero operand's

// Whether x's products with the other operands are exact floats the kernel
// can scale: 0, a NaN or an infinity, or at most 12 significant bits with
// 2^-50 <= |x| < 2^60. (Then a nonzero product's exponent is at least
// -100, so that where one decides E, 2^(F - E) <= 2^126 is a float.)
bool narrow_value(float x) {
  if (x == 0 || !std::isfinite(x)) return true;
  const float m = std::fabs(x);
  return m >= 0x1p-50f && m < 0x1p60f && (std::bit_cast<std::uint32_t>(x) & 0xFFFu) == 0;
}

// floor(log2 |x|), at least emin (every narrow value is a normal float).
std::int32_t operand_exponent(float x, int emin) {
  if (x == 0) return kNoExponent;
  if (!std::isfinite(x)) return 0;  // the block is decided by the specials
  const auto field = static_cast<std::int32_t>((std::bit_cast<std::uint32_t>(x) >> 23) & 0xFF);
  return std::max(field - 127, emin);
}
}  // namespace

bool tensor_core_narrow(const MatmulProblem& p, const TensorCoreModel& model, double* out, unsigned threads,
                        const double* c_in, const TensorCoreScales* scales) {
  if (model.block > 32 || model.fraction_bits > 25 || p.k == 0) return false;
  const std::size_t lanes = LPLAB_DISPATCH(NarrowLanes)();
  if (lanes == 0 || !float_arithmetic_exact()) return false;
  const std::size_t m = p.m, n = p.n, k = p.k;
  if (!std::all_of(p.a, p.a + m * k, narrow_value) || !std::all_of(p.b, p.b + k * n, narrow_value)) return false;
  if (c_in != nullptr)
    for (std::size_t i = 0; i < m * n; ++i)
      if (static_cast<double>(static_cast<float>(c_in[i])) != c_in[i] && !std::isnan(c_in[i])) return false;
  const std::size_t ldb = (n + lanes - 1) / lanes * lanes;
  // Block scales: one per block of products (a step); each finite and
  // nonzero (a NaN scale makes its products NaN: the scalar model's).
  const std::size_t blocks = scales != nullptr ? k / scales->block : 0;
  if (scales != nullptr && scales->block != static_cast<std::size_t>(model.block)) return false;
  std::vector<std::int32_t> esa(m * blocks), esb(ldb * blocks, 0);
  const PanelIndex at_b(k, lanes), at_s(blocks, lanes);
  auto scale_exponent = [&](float s, std::int32_t& e) {
    if (!(std::isfinite(s) && s > 0)) return false;
    e = std::max(std::ilogb(s), scales->emin);
    return true;
  };
  for (std::size_t i = 0; i < m * blocks; ++i)
    if (!scale_exponent(scales->a[i], esa[i])) return false;
  for (std::size_t j = 0; j < n && blocks > 0; ++j)
    for (std::size_t q = 0; q < blocks; ++q)
      if (!scale_exponent(scales->b_t[j * blocks + q], esb[at_s(q, j)])) return false;
  std::vector<std::int32_t> ea(m * k);
  hwy::AlignedFreeUniquePtr<float[]> bp = hwy::AllocateAligned<float>(k * ldb);
  hwy::AlignedFreeUniquePtr<std::int32_t[]> eb = hwy::AllocateAligned<std::int32_t>(k * ldb);
  if (bp == nullptr || eb == nullptr) throw std::bad_alloc();
  std::vector<unsigned char> row_special(m, 0), col_special(ldb, 0);
  for (std::size_t r = 0; r < m; ++r)
    for (std::size_t t = 0; t < k; ++t) {
      const std::size_t i = r * k + t;
      ea[i] = operand_exponent(p.a[i], model.emin_a);
      row_special[r] |= !std::isfinite(p.a[i]);
    }
  for (std::size_t t = 0; t < k; ++t)
    for (std::size_t j = 0; j < ldb; ++j) {
      const std::size_t at = at_b(t, j);
      const float x = j < n ? p.b[t * n + j] : 0.0f;
      bp[at] = x;
      eb[at] = operand_exponent(x, model.emin_b);
      if (!std::isfinite(x)) col_special[j] = 1;
    }
  // Panels of whole vectors whose B, 8 bytes a value, fills at most half of
  // a 512 KiB L2 cache.
  const std::size_t panel =
      std::max<std::size_t>(lanes, (std::size_t{256} << 10) / (8 * std::max<std::size_t>(k, 1)) / lanes * lanes);
  std::vector<float> cin(c_in != nullptr ? m * ldb : 0, 0.0f);
  for (std::size_t i = 0; c_in != nullptr && i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) cin[i * ldb + j] = static_cast<float>(c_in[i * n + j]);
  for_row_bands(m, threads, [&](std::size_t first, std::size_t rows) {
    LPLAB_DISPATCH(NarrowRows)(model, rows, n, k, p.a + first * k, ea.data() + first * k, bp.get(), eb.get(), ldb,
                               panel, c_in != nullptr ? cin.data() + first * ldb : nullptr, out + first * n,
                               row_special.data() + first, col_special.data(), blocks,
                               blocks > 0 ? esa.data() + first * blocks : nullptr, blocks > 0 ? esb.data() : nullptr);
  });
  return true;
}

}  // namespace lplab::kernels::detail
#endif
