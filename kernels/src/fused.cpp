// Fused elementwise kernels (kernel_args.h's FusedArgs): decode -> op ->
// round into the format in registers, one pass over memory, for the formats
// tensors are stored in (bfloat16, float16, E4M3, E5M2), input and output
// of the same format, the correctly rounded ops, nearest-even and either
// overflow policy. Each step is the one the chunked engine runs
// (elementwise.cpp), vector for vector:
//   1. decode: convert-inl.h's DecodeVector (F16C's vcvtph2ps for
//      binary16), for bfloat16 the code shifted into float's high half;
//   2. the op: ops-inl.h's UnaryVector / BinaryVector;
//   3. round: F16C's vcvtps2ph for binary16, bfloat16's add-and-truncate
//      under IEEE overflow, else FastNormalVector, and the vectors it
//      declines through GeneralVector after the loop.
// A call returns false, doing nothing, for what it does not serve; the
// engine then runs its chunked path.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fused.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "convert-inl.h"
#include "hwy/highway.h"
#include "ops-inl.h"

#include <algorithm>

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Step 1: one vector of codes at p as floats (DecodeVector: F16C's exact
// vcvtph2ps for binary16 while DAZ is clear, bfloat16 by a shift), except
// that for bfloat16 a signalling NaN may stay signalling: every op quiets
// it as the engine's decode does (NaN operands of arithmetic come out quiet,
// payload kept; relu and identity quiet explicitly).
template <Descriptor D, bool kExact, class DU, class Code>
HWY_INLINE hn::Vec<hn::RebindToFloat<DU>> LoadDecoded(DU du, const Code* HWY_RESTRICT p) {
  const hn::RebindToFloat<DU> df;
  const hn::Rebind<Code, DU> dc;
  if constexpr (kBfloat16<D>) return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(dc, p))));
  return DecodeVector<D, kExact>(du, dc, p);
}

// Step 3: one vector of floats (as bits) rounded to nearest-even into
// codes [i, i + N) of e.out by the paths that need no fallback or take
// every lane (binary16 by F16C, bfloat16 under IEEE overflow) or by
// FastNormalVector. Returns false, storing nothing, for a vector that needs
// GeneralVector.
template <Descriptor D, bool kExact, class DU, class V = hn::Vec<DU>>
HWY_INLINE bool StoreRoundedFast(DU du, V x, const EncodeArgs& e, std::size_t i, bool clamp) {
  using Code = lplab::detail::code_t<D>;
  Code* out = static_cast<Code*>(e.out) + i;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kBinary16<D> && kExact) {
    const hn::RebindToFloat<DU> df;
    StoreBinary16F16C<Round::nearest_even>(df, hn::BitCast(df, x), e.overflow == Overflow::saturate, out);
    return true;
  }
#endif
  if constexpr (kBfloat16<D>) {
    if (e.overflow == Overflow::ieee) {
      const hn::Rebind<std::uint16_t, DU> d16;
      const hn::RebindToSigned<DU> di;
      hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, hn::ShiftRight<16>(Bfloat16NearestHigh(du, x)))), d16, out);
      return true;
    }
  }
  if constexpr (kFastNormal<D, Round::nearest_even, false>) {
    if (FastNormalVector<D, Round::nearest_even>(du, x, clamp, out)) return true;
  }
  // Subnormal and zero results (common in 8-bit formats: a sum that cancels,
  // a small product): every finite lane that does not overflow.
  if constexpr (kFastAny<D, Round::nearest_even, false> && lplab::detail::Layout<D>::has_negative_zero) {
    return FastFiniteVector<D, Round::nearest_even>(du, x, clamp, out);
  }
  return false;
}

// out[i] = f(a[i], b[i]) for i < n: whole vectors by the fast paths, the
// vectors they decline recomputed after the loop through GeneralVector (a
// call, which would otherwise cost the loop its constants in registers),
// then the rest of n through padded copies of the last codes.
template <Descriptor D, bool kExact, class F>
HWY_INLINE void FusedLoop(const FusedArgs& args, F f) {
  using Code = lplab::detail::code_t<D>;
  const hn::ScalableTag<std::uint32_t> du;
  const hn::RebindToFloat<decltype(du)> df;
  const std::size_t N = hn::Lanes(du);
  const auto* a = static_cast<const Code*>(args.a);
  const auto* b = static_cast<const Code*>(args.b);
  auto value = [du, df, f](const Code* pa, const Code* pb, std::size_t i) HWY_ATTR {
    const auto va = LoadDecoded<D, kExact>(du, pa + i);
    const auto vb = pb != nullptr ? LoadDecoded<D, kExact>(du, pb + i) : va;
    return hn::BitCast(du, f(df, va, vb));
  };
  const Overflow overflow = args.overflow;
  // (Everything the loops read passed or captured by value: a closure's
  // references are reloaded after every store that might alias them.)
  auto run = [du, N, overflow, value](const Code* pa, const Code* pb, void* out, std::size_t n) HWY_ATTR {
    const EncodeArgs e{nullptr, out, n, Round::nearest_even, overflow, 0, 0, nullptr, kExact};
    const bool clamp = ClampsOverflow<D>(e);
    constexpr std::size_t kBlock = 512;  // vectors per pass
    std::uint32_t declined[kBlock];
    for (std::size_t start = 0; start + N <= n; start += kBlock * N) {
      const std::size_t end = std::min(n / N * N, start + kBlock * N);
      std::size_t count = 0;
      for (std::size_t i = start; i < end; i += N) {
        if (!StoreRoundedFast<D, kExact>(du, value(pa, pb, i), e, i, clamp)) declined[count++] = static_cast<std::uint32_t>(i);
      }
      FlagCounts tally;
      for (std::size_t k = 0; k < count; ++k)
        GeneralVector<D, Round::nearest_even, false>(du, value(pa, pb, declined[k]), declined[k], e,
                                                     lplab::kernels::detail::StochasticKey{}, tally);
    }
  };
  const std::size_t whole = args.n / N * N;
  run(a, b, args.out, whole);
  if (whole == args.n) return;
  constexpr std::size_t kMaxLanes = 64;
  HWY_ALIGN Code ta[kMaxLanes] = {}, tb[kMaxLanes] = {}, to[kMaxLanes] = {};
  const std::size_t rest = args.n - whole;
  std::copy(a + whole, a + args.n, ta);
  if (b != nullptr) std::copy(b + whole, b + args.n, tb);
  run(ta, b != nullptr ? tb : nullptr, to, N);
  std::copy(to, to + rest, static_cast<Code*>(args.out) + whole);
}

template <Descriptor D, bool kExact>
HWY_INLINE bool FusedFormat(const FusedArgs& args) {
  auto unary = [&]<Unary kOp>() HWY_ATTR {
    if constexpr (vector_form(kOp) != VectorForm::exact) {
      return false;
    } else {
      FusedLoop<D, kExact>(args, [p = args.param](auto df, auto v, auto) HWY_ATTR {
        return UnaryVector<kOp>(df, v, hn::Set(df, p));
      });
      return true;
    }
  };
  auto binary = [&]<Binary kOp>() HWY_ATTR {
    FusedLoop<D, kExact>(args, [p = args.param](auto df, auto va, auto vb) HWY_ATTR {
      return BinaryVector<kOp>(va, vb, hn::Set(df, p));
    });
    return true;
  };
  if (args.binary) {
    switch (args.binary_op) {
      case Binary::add: return binary.template operator()<Binary::add>();
      case Binary::mul: return binary.template operator()<Binary::mul>();
      case Binary::axpy:
        if constexpr (kVectorAxpy) return binary.template operator()<Binary::axpy>();
        return false;
    }
    return false;
  }
  // The ops whose vector form is exact (elementwise.h's list).
#define LPLAB_FUSED_UNARY(name, functor, form, doc) \
  case Unary::name:                                 \
    return unary.template operator()<Unary::name>();
  switch (args.unary) { LPLAB_UNARY_OPS(LPLAB_FUSED_UNARY) }
#undef LPLAB_FUSED_UNARY
  return false;
}

template <Descriptor D>
HWY_INLINE bool FusedFormatAny(const FusedArgs& args) {
  return args.float_arithmetic_exact ? FusedFormat<D, true>(args) : FusedFormat<D, false>(args);
}

HWY_ATTR bool Fused(lplab::kernels::FormatId format, const FusedArgs& args) {
#if HWY_TARGET == HWY_SCALAR
  (void)format, (void)args;
  return false;  // one lane: the chunked engine is as good
#else
  using lplab::kernels::FormatId;
  switch (format) {
    case FormatId::bfloat16: return FusedFormatAny<lplab::bfloat16::descriptor>(args);
    case FormatId::float16: return FusedFormatAny<lplab::float16::descriptor>(args);
    case FormatId::float8_e4m3fn: return FusedFormatAny<lplab::float8_e4m3fn::descriptor>(args);
    case FormatId::float8_e5m2: return FusedFormatAny<lplab::float8_e5m2::descriptor>(args);
    default: return false;
  }
#endif
}

}  // namespace lplab::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lplab::kernels {
HWY_EXPORT(Fused);
namespace detail {
bool fused_elementwise(FormatId format, const FusedArgs& args) {
  if (format == FormatId::float16 && args.avx512_fp16 && fused_fp16_avx512fp16(args)) return true;
  return LPLAB_DISPATCH(Fused)(format, args);
}
}  // namespace detail
}  // namespace lplab::kernels
#endif
