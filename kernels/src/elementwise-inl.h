// The elementwise engine's SIMD kernels, once per Highway target: the ops on
// padded float buffers (ApplyUnaryF32, ApplyBinaryF32), the table lookups of
// one-byte inputs (LookupBytes, LookupPairs) and the walker's transposing
// tile copy (TransposeCodes, strided_walk.h). Included by elementwise.cpp
// after hwy/foreach_target.h, and only there: it exports them (HWY_EXPORT)
// and is their one dispatch point. The include guard toggles per target as
// Highway asks.
#if defined(LPLAB_KERNELS_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LPLAB_KERNELS_ELEMENTWISE_INL_H_
#undef LPLAB_KERNELS_ELEMENTWISE_INL_H_
#else
#define LPLAB_KERNELS_ELEMENTWISE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/ops.h"
#include "ops-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// dst[i] = op(src[i]) for i in [0, n); dst may be src. n is a multiple of 64
// floats (the engine pads its buffers), so every target runs whole vectors
// and a tail is treated as the body is. Every op quiets a signalling NaN, as
// the conversions do (relu and identity by v + v on NaN lanes only, so that
// no other value passes through arithmetic a DAZ mode could flush).
template <class Op>
HWY_ATTR void ScalarLoop(Op op, const float* src, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = op(src[i]);
}

HWY_ATTR void ApplyUnaryF32(Unary op, float param, const float* src, float* dst, std::size_t n) {
  const hn::ScalableTag<float> d;
  const std::size_t N = hn::Lanes(d);
  HWY_ASSERT(64 % N == 0);  // vectors of at most 64 floats (SVE/RVV beyond that: not supported)
  const auto p = hn::Set(d, param);
  // (Pointers captured by value: a closure's references are reloaded after
  // every store that might alias them.)
  auto each = [d, N, src, dst, n](auto f) HWY_ATTR {
    for (std::size_t i = 0; i < n; i += N) hn::StoreU(f(hn::LoadU(d, src + i)), d, dst + i);
  };
  // Each op as its vector form says (elementwise.h's list).
  auto apply = [&]<Unary kOp, class F>() HWY_ATTR {
    if constexpr (vector_form(kOp) == VectorForm::scalar)
      ScalarLoop(ops::make<F>(param), src, dst, n);
    else
      each([&](auto v) HWY_ATTR { return UnaryVector<kOp>(d, v, p); });
  };
#define LPLAB_APPLY_UNARY(name, functor, form, doc) \
  case Unary::name:                                 \
    return apply.template operator()<Unary::name, ops::functor>();
  switch (op) { LPLAB_UNARY_OPS(LPLAB_APPLY_UNARY) }
#undef LPLAB_APPLY_UNARY
}

// out = a op b on float buffers, n a multiple of 64.
// out may be a or b (an in-place add).
HWY_ATTR void ApplyBinaryF32(Binary op, float alpha, const float* a, const float* b, float* out,
                             std::size_t n) {
  const hn::ScalableTag<float> d;
  const std::size_t N = hn::Lanes(d);
  HWY_ASSERT(64 % N == 0);
  const auto al = hn::Set(d, alpha);
  auto each = [d, N, a, b, out, n](auto f) HWY_ATTR {
    for (std::size_t i = 0; i < n; i += N) hn::StoreU(f(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  };
  switch (op) {
    case Binary::add: each([&](auto va, auto vb) HWY_ATTR { return BinaryVector<Binary::add>(va, vb, al); }); return;
    case Binary::mul: each([&](auto va, auto vb) HWY_ATTR { return BinaryVector<Binary::mul>(va, vb, al); }); return;
    case Binary::axpy:
      // One rounding: a fused multiply-add where the target has one
      // (HWY_NATIVE_FMA); elsewhere the functor's std::fma.
      if constexpr (kVectorAxpy) {
        each([&](auto va, auto vb) HWY_ATTR { return BinaryVector<Binary::axpy>(va, vb, al); });
      } else {
        for (std::size_t i = 0; i < n; ++i) out[i] = ops::Axpy{alpha}(a[i], b[i]);
      }
      return;
  }
}

// out[i] = table[in[i]] for n bytes (in may be out): a 256-entry byte table
// as sixteen 16-entry tables, one byte shuffle each (pshufb on SSSE3/AVX2,
// vpshufb on AVX-512), kept where the code's high nibble selects it.
HWY_ATTR void LookupBytes(const std::uint8_t* HWY_RESTRICT table, const std::uint8_t* in, std::uint8_t* out,
                          std::size_t n) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t N = hn::Lanes(d);
  const auto low = hn::Set(d, 0x0F), high = hn::Set(d, 0xF0);
  for (; i + N <= n; i += N) {
    const auto x = hn::LoadU(d, in + i);
    const auto lo = hn::And(x, low), hi = hn::And(x, high);
    auto r = hn::TableLookupBytes(hn::LoadDup128(d, table), lo);
    for (unsigned k = 1; k < 16; ++k) {
      const auto part = hn::TableLookupBytes(hn::LoadDup128(d, table + 16 * k), lo);
      r = hn::IfThenElse(hn::Eq(hi, hn::Set(d, static_cast<std::uint8_t>(k << 4))), part, r);
    }
    hn::StoreU(r, d, out + i);
  }
#endif
  for (; i < n; ++i) out[i] = table[in[i]];
}

// out[i] = table[a[i] | b[i] << 8] for n bytes: a binary op on two one-byte
// operands as its 65,536-entry table (entries zero-extended to 32 bits,
// for the gather: vpgatherdd on AVX2 and AVX-512).
HWY_ATTR void LookupPairs(const std::uint32_t* HWY_RESTRICT table, const std::uint8_t* a, const std::uint8_t* b,
                          std::uint8_t* out, std::size_t n) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<std::int32_t> di;
  const hn::Rebind<std::uint8_t, decltype(di)> d8;
  const std::size_t N = hn::Lanes(di);
  const auto* t = reinterpret_cast<const std::int32_t*>(table);
  for (; i + N <= n; i += N) {
    const auto idx = hn::Or(hn::PromoteTo(di, hn::LoadU(d8, a + i)), hn::ShiftLeft<8>(hn::PromoteTo(di, hn::LoadU(d8, b + i))));
    hn::StoreU(hn::DemoteTo(d8, hn::GatherIndex(di, t, idx)), d8, out + i);
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<std::uint8_t>(table[a[i] | b[i] << 8]);
}

#if HWY_TARGET != HWY_SCALAR
// Stores each 16-byte block b of v at dst + b * step (step in elements).
template <class D, class T>
HWY_ATTR HWY_INLINE void StoreBlocks(D d, hn::Vec<D> v, T* dst, std::ptrdiff_t step) {
  if constexpr (hn::MaxLanes(D()) * sizeof(T) <= 16) {
    hn::StoreU(v, d, dst);
  } else {
    const hn::Half<D> dh;
    constexpr auto kLowerBlocks = static_cast<std::ptrdiff_t>(hn::MaxLanes(hn::Half<D>()) * sizeof(T) / 16);
    StoreBlocks(dh, hn::LowerHalf(dh, v), dst, step);
    StoreBlocks(dh, hn::UpperHalf(dh, v), dst + kLowerBlocks * step, step);
  }
}

// The transpose of L = 16 / sizeof(T) rows of a vector each: in each 16-byte
// block of the vectors an L x L transpose, by log2(L) rounds of interleaving
// row i with row i + L/2 (a perfect shuffle: each round rotates the bits of
// (row, column) by one, so that log2(L) rounds swap them; Highway's
// interleaves work within 16-byte blocks). Register k's block b then holds
// column b * L + k, stored as dst's row b * L + k.
template <class D, class T>
HWY_ATTR HWY_INLINE void TransposeBlocks(D d, const T* src, std::ptrdiff_t src_stride, T* dst,
                                         std::ptrdiff_t dst_stride) {
  constexpr std::size_t L = 16 / sizeof(T);
  using V = hn::Vec<D>;
  V v[L], t[L];
  for (std::size_t k = 0; k < L; ++k) v[k] = hn::LoadU(d, src + static_cast<std::ptrdiff_t>(k) * src_stride);
  for (std::size_t round = 1; round < L; round *= 2) {
    for (std::size_t k = 0; k < L / 2; ++k) {
      t[2 * k] = hn::InterleaveLower(d, v[k], v[k + L / 2]);
      t[2 * k + 1] = hn::InterleaveUpper(d, v[k], v[k + L / 2]);
    }
    for (std::size_t k = 0; k < L; ++k) v[k] = t[k];
  }
  for (std::size_t k = 0; k < L; ++k)
    StoreBlocks(d, v[k], dst + static_cast<std::ptrdiff_t>(k) * dst_stride, static_cast<std::ptrdiff_t>(L) * dst_stride);
}
#endif  // HWY_TARGET != HWY_SCALAR

// dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols
// (strides in elements): a transposing copy, L = 16 / sizeof(T) rows at a
// time, a whole vector of each (a line of a transposed operand's column on
// AVX-512) as TransposeBlocks, the columns short of a vector a 16-byte block
// at a time, the rest one element at a time.
template <class T>
HWY_ATTR void TransposeAs(const T* src, std::ptrdiff_t src_stride, T* dst, std::ptrdiff_t dst_stride,
                          std::size_t rows, std::size_t cols) {
  auto one = [&](std::size_t i, std::size_t j) { dst[static_cast<std::ptrdiff_t>(j) * dst_stride + static_cast<std::ptrdiff_t>(i)] = src[static_cast<std::ptrdiff_t>(i) * src_stride + static_cast<std::ptrdiff_t>(j)]; };
  std::size_t i0 = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<T> dv;
  const hn::Full128<T> d;
  constexpr std::size_t L = 16 / sizeof(T);
  const std::size_t W = hn::Lanes(dv);
  for (; i0 + L <= rows; i0 += L) {
    const T* from = src + static_cast<std::ptrdiff_t>(i0) * src_stride;
    std::size_t j0 = 0;
    for (; j0 + W <= cols; j0 += W)
      TransposeBlocks(dv, from + j0, src_stride, dst + static_cast<std::ptrdiff_t>(j0) * dst_stride + static_cast<std::ptrdiff_t>(i0), dst_stride);
    for (; j0 + L <= cols; j0 += L)
      TransposeBlocks(d, from + j0, src_stride, dst + static_cast<std::ptrdiff_t>(j0) * dst_stride + static_cast<std::ptrdiff_t>(i0), dst_stride);
    for (std::size_t i = i0; i < i0 + L; ++i)
      for (std::size_t j = j0; j < cols; ++j) one(i, j);
  }
#endif
  for (std::size_t i = i0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) one(i, j);
}

HWY_ATTR void TransposeCodes(std::size_t bytes, const void* src, std::ptrdiff_t src_stride, void* dst,
                             std::ptrdiff_t dst_stride, std::size_t rows, std::size_t cols) {
  switch (bytes) {
    case 1: return TransposeAs(static_cast<const std::uint8_t*>(src), src_stride, static_cast<std::uint8_t*>(dst), dst_stride, rows, cols);
    case 2: return TransposeAs(static_cast<const std::uint16_t*>(src), src_stride, static_cast<std::uint16_t*>(dst), dst_stride, rows, cols);
    default: return TransposeAs(static_cast<const std::uint32_t*>(src), src_stride, static_cast<std::uint32_t*>(dst), dst_stride, rows, cols);
  }
}

}  // namespace lplab::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
