// The elementwise ops on one vector of floats, once per Highway target:
// shared by the chunked engine (elementwise.cpp) and the fused kernels
// (fused.cpp), so that both compute each op with the same operations.
// Included after hwy/foreach_target.h; the include guard toggles per target
// as Highway asks.
#if defined(LPLAB_KERNELS_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LPLAB_KERNELS_OPS_INL_H_
#undef LPLAB_KERNELS_OPS_INL_H_
#else
#define LPLAB_KERNELS_OPS_INL_H_
#endif

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "lplab/kernels/elementwise.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A signalling NaN quieted (v + v on NaN lanes only, so that no other value
// passes through arithmetic a DAZ mode could flush), as the conversions do.
template <class V>
HWY_INLINE V Quiet(V v) {
  return hn::IfThenElse(hn::IsNaN(v), hn::Add(v, v), v);
}

// The unary ops whose vector form (elementwise.h) is exact -- correctly
// rounded, as their functors at float -- or vector (gelu_tanh: Highway's
// Tanh); `param` is scale's factor.
template <Unary kOp, class DF, class V = hn::Vec<DF>>
HWY_INLINE V UnaryVector(DF df, V v, V param) {
  if constexpr (kOp == Unary::identity) {
    return Quiet(v);
  } else if constexpr (kOp == Unary::relu) {
    return hn::IfThenZeroElse(hn::Lt(v, hn::Zero(df)), Quiet(v));
  } else if constexpr (kOp == Unary::gelu_tanh) {
    // ops::GeluTanh, operation for operation, with Highway's Tanh.
    const auto k0 = hn::Set(df, 0.79788456080286535587989211986876f);
    const auto k1 = hn::Set(df, 0.044715f);
    const auto half = hn::Set(df, 0.5f), one = hn::Set(df, 1.0f);
    const auto u = hn::Mul(k0, hn::Add(v, hn::Mul(k1, hn::Mul(hn::Mul(v, v), v))));
    return hn::Mul(hn::Mul(half, v), hn::Add(one, hn::Tanh(df, u)));
  } else if constexpr (kOp == Unary::square) {
    return hn::Mul(v, v);
  } else if constexpr (kOp == Unary::sqrt) {
    return hn::Sqrt(v);
  } else if constexpr (kOp == Unary::rsqrt) {
    return hn::Div(hn::Set(df, 1.0f), hn::Sqrt(v));
  } else {
    static_assert(kOp == Unary::scale);
    return hn::Mul(param, v);
  }
}

// Whether this target computes axpy in one rounding in a vector (elsewhere
// the engine's scalar std::fma).
constexpr bool kVectorAxpy = HWY_NATIVE_FMA != 0;

// axpy only where kVectorAxpy: MulAdd is two roundings on other targets.
template <Binary kOp, class V>
HWY_INLINE V BinaryVector(V a, V b, V alpha) {
  if constexpr (kOp == Binary::add) {
    return hn::Add(a, b);
  } else if constexpr (kOp == Binary::mul) {
    return hn::Mul(a, b);
  } else {
    static_assert(kOp == Binary::axpy);
    return hn::MulAdd(alpha, a, b);
  }
}

}  // namespace lplab::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
