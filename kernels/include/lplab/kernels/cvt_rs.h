// Stochastic rounding as NVIDIA's hardware does it: PTX's cvt.rs (sm_100a,
// sm_103a; PTX ISA 8.7+, "cvt", rounding modifier .rs), bit for bit, as
// portable per-element code (the CPU and the device compute the same).
//
//   cvt.rs{.relu}{.satfinite}.f16x2.f32   d, a, b, rbits;
//   cvt.rs{.relu}{.satfinite}.bf16x2.f32  d, a, b, rbits;
//   cvt.rs{.relu}.satfinite.{e4m3x4, e5m2x4, e2m3x4, e3m2x4, e2m1x4}.f32  d, {a, b, e, f}, rbits;
//
// What the ISA says, and what this model does with it:
// 1. Rounding: "rounded in the direction toward zero or away from zero based
//    on the carry out of the integer addition of the supplied random bits
//    (rbits) to the truncated off (discarded) bits of mantissa from the
//    input". An element's K random bits r are added to the top K discarded
//    bits D (counted from the destination's quantum, its subnormal quantum
//    included); the magnitude rounds away from zero iff D + r >= 2^K, the
//    discarded bits below those K never matter. That is Round::stochastic
//    (round.h: the top 32 dropped bits plus 32 random bits, the carry) fed
//    r << (32 - K). The alignment is not in the ISA's text: it is what
//    Dao-AILab/quack (quack/rounding.py) measured on B200 and B300.
// 2. Random bits per element (the ISA's text): f16x2 the 13 low bits of
//    each 16-bit half (a the upper half, b the lower), bf16x2 each 16-bit
//    half (a upper, b lower); the FP8 and FP6 x4 forms a byte each, "lower
//    16-bits are used for operands e, f and upper 16 bits are used for
//    operands a, b"; e2m1x4 a byte each, "lower 8-bits from both 16-bits
//    half of rbits are used for operands e, f and upper 8-bits from both
//    16-bits half of rbits are used for operands a, b". Which byte of a half
//    goes to which operand is in the ISA's figures only; RbitsLayout holds
//    it as data (kRbitsSm100a, kRbitsSm103a below, with their sources).
// 3. Packing (the ISA's semantics): x2 forms d[31:16] = a, d[15:0] = b;
//    FP8 and FP6 x4 d[31:24] = a, [23:16] = b, [15:8] = e, [7:0] = f (FP6 in
//    the low 6 bits of its byte, the top 2 zero); e2m1x4 a 16-bit d,
//    [15:12] = a, [11:8] = b, [7:4] = e, [3:0] = f. Callers that store
//    element 0 lowest pass it as the last operand (f, or b): cvt_rs_packed
//    takes elements in memory order.
// 4. .satfinite: a NaN input gives the destination's NaN (f16, bf16 0x7FFF;
//    e4m3, e5m2 0x7F) or, for e2m1/e2m3/e3m2 that have none, +MAX_NORM; an
//    input whose magnitude exceeds MAX_NORM (infinities included) gives
//    MAX_NORM with its sign, its random bits unused. Without .satfinite
//    (f16x2, bf16x2 only; not probed on hardware) infinities stay infinite,
//    a NaN is the canonical NaN, a carry past MAX_NORM gives infinity, and a
//    finite input past MAX_NORM's binade (f16: 65536 and up) gives infinity
//    whatever its random bits (Round::stochastic's overflow, as IEEE's
//    nearest rounding would give).
//    .relu: a negative result becomes +0; a NaN result stays the NaN above.
//    Zeros, and values that round to zero, keep their sign.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lplab/formats.h"
#include "lplab/formats/enum_table.h"
#include "lplab/kernels/random.h"

namespace lplab::kernels {

// The destinations, X(form, lplab format, random bits per element,
// elements, what it is): declared once for the model, the names and the
// tests.
#define LPLAB_CVT_RS_FORMS(X)                       \
  X(f16x2, float16, 13, 2, "binary16 pairs")        \
  X(bf16x2, bfloat16, 16, 2, "bfloat16 pairs")      \
  X(e4m3x4, float8_e4m3fn, 8, 4, "OFP8 E4M3 quads") \
  X(e5m2x4, float8_e5m2, 8, 4, "OFP8 E5M2 quads")   \
  X(e2m3x4, float6_e2m3fn, 8, 4, "MX FP6 E2M3 quads") \
  X(e3m2x4, float6_e3m2fn, 8, 4, "MX FP6 E3M2 quads") \
  X(e2m1x4, float4_e2m1fn, 8, 4, "MX FP4 E2M1 quads")

enum class CvtRsForm : std::uint8_t { LPLAB_CVT_RS_FORMS(LPLAB_ENUMERATOR) };
#define LPLAB_CVT_RS_ENTRY(form, T, K, lanes, doc) LPLAB_ENUM_ENTRY(form, doc)
LPLAB_ENUM_TABLE_OF(CvtRsForm, "cvt.rs destination", LPLAB_CVT_RS_FORMS, LPLAB_CVT_RS_ENTRY)
#undef LPLAB_CVT_RS_ENTRY

// Where each operand's random bits sit in rbits: their lowest bit, and
// whether the unit reads them bit-reversed. Operands in the ISA's order
// (a, b, e, f; the x2 forms a, b).
struct RbitsSlot {
  std::uint8_t shift = 0;
  bool reversed = false;
};
struct RbitsLayout {
  std::string_view name;
  RbitsSlot fp8[4], fp6[4], fp4[4];  // the x4 forms; the x2 forms are fixed by the ISA's text
};

// sm_100a (B200): FP8 a byte each, straight, a the top byte (quack's probe
// of e4m3x4/e5m2x4 on B200: "value i consumes rand byte i straight"); FP6
// as FP8 (the ISA's text groups them; not probed); e2m1x4 by the ISA's text,
// e and f the low bytes of the two halves, a and b the high bytes, in the
// order sm_103a was measured to use (not probed on sm_100a).
inline constexpr RbitsLayout kRbitsSm100a{
    "sm_100a",
    {{24, false}, {16, false}, {8, false}, {0, false}},
    {{24, false}, {16, false}, {8, false}, {0, false}},
    {{8, false}, {24, false}, {0, false}, {16, false}}};
// sm_103a (B300), as quack measured it: FP8 f <- bits 15:8, e <- 7:0
// reversed, b <- 31:24, a <- 23:16 reversed; e2m1x4 f <- 23:16, e <- 7:0
// reversed, b <- 31:24, a <- 15:8 reversed; FP6 taken as FP8 (not probed).
inline constexpr RbitsLayout kRbitsSm103a{
    "sm_103a",
    {{16, true}, {24, false}, {0, true}, {8, false}},
    {{16, true}, {24, false}, {0, true}, {8, false}},
    {{8, true}, {24, false}, {0, true}, {16, false}}};

namespace cvt_rs_detail {

LPLAB_HD constexpr std::uint32_t reverse8(std::uint32_t b) noexcept {
  b = ((b & 0xF0u) >> 4) | ((b & 0x0Fu) << 4);
  b = ((b & 0xCCu) >> 2) | ((b & 0x33u) << 2);
  return ((b & 0xAAu) >> 1) | ((b & 0x55u) << 1);
}

}  // namespace cvt_rs_detail

// One element: x rounded into To with its own K random bits r (the low K
// bits; K = 13 for float16, 16 for bfloat16, 8 for the rest), under
// .satfinite (always, except where f16x2/bf16x2 leave it off) and .relu.
// The code is the instruction's, NaN included.
template <class To>
LPLAB_HD constexpr To cvt_rs(float x, std::uint32_t r, int K, bool relu = false, bool satfinite = true) noexcept {
  using I = finfo<To>;
  using L = lplab::detail::Layout<To::descriptor>;
  const std::uint32_t bits = lplab::detail::bit_cast<std::uint32_t>(x);
  const bool neg = (bits >> 31) != 0;
  const std::uint32_t mag = bits & 0x7FFF'FFFFu;
  // 1. NaN: the instruction's canonical NaN, or +MAX_NORM where To has none.
  if (mag > 0x7F80'0000u) {
    if constexpr (L::has_nan) {
      return To::from_bits(L::mag_mask);  // the all-ones magnitude: 0x7FFF, 0x7F
    } else {
      return To::from_bits(I::max_code);
    }
  }
  // 2. Negative results under .relu: +0, whatever the random bits.
  if (relu && neg) return To::from_bits(0);
  // 3. The carry rule: r on the top K dropped bits. Past MAX_NORM
  // (infinities included) the overflow policy decides whatever the carry:
  // .satfinite's signed MAX_NORM, or IEEE's infinity.
  const std::uint32_t random = K <= 0 ? 0 : K >= 32 ? r : (r & ((std::uint32_t{1} << K) - 1)) << (32 - K);
  return lplab::convert<To>(x, Round::stochastic, satfinite ? Overflow::saturate : Overflow::ieee, nullptr, random);
}

// The instruction: `n` elements in memory order (element 0 the last operand:
// f, or b for the x2 forms), packed as d is (the ISA's semantics, above),
// rbits split by the layout (the x2 forms by the ISA's text).
template <CvtRsForm F>
struct CvtRsFormTraits;
#define LPLAB_CVT_RS_TRAITS(form, T, bits_k, n, doc)      \
  template <>                                             \
  struct CvtRsFormTraits<CvtRsForm::form> {               \
    using type = T;                                       \
    static constexpr int K = bits_k;                      \
    static constexpr int lanes = n;                       \
  };
LPLAB_CVT_RS_FORMS(LPLAB_CVT_RS_TRAITS)
#undef LPLAB_CVT_RS_TRAITS

// The form whose destination is T (CvtRsFormOf<float4_e2m1fn>::value is
// e2m1x4), for the formats that have one.
template <class T>
struct CvtRsFormOf;
#define LPLAB_CVT_RS_FORM_OF(form, T, bits_k, n, doc)          \
  template <>                                                  \
  struct CvtRsFormOf<T> {                                      \
    static constexpr CvtRsForm value = CvtRsForm::form;        \
  };
LPLAB_CVT_RS_FORMS(LPLAB_CVT_RS_FORM_OF)
#undef LPLAB_CVT_RS_FORM_OF
template <class T>
concept CvtRsDestination = requires { CvtRsFormOf<T>::value; };

// Element j's random bits (j in memory order) for form F from rbits.
template <CvtRsForm F>
LPLAB_HD constexpr std::uint32_t cvt_rs_element_bits(std::uint32_t rbits, int j, const RbitsLayout& layout) noexcept {
  using Tr = CvtRsFormTraits<F>;
  const int operand = Tr::lanes - 1 - j;  // a, b[, e, f]
  if constexpr (Tr::lanes == 2) {
    return operand == 0 ? rbits >> 16 : rbits & 0xFFFFu;  // (cvt_rs reads the K low bits: f16's 13)
  } else {
    const RbitsSlot* slots = F == CvtRsForm::e2m1x4                            ? layout.fp4
                             : F == CvtRsForm::e2m3x4 || F == CvtRsForm::e3m2x4 ? layout.fp6
                                                                                : layout.fp8;
    const std::uint32_t byte = (rbits >> slots[operand].shift) & 0xFFu;
    return slots[operand].reversed ? cvt_rs_detail::reverse8(byte) : byte;
  }
}

// d for `in` (lanes elements, memory order) and rbits.
template <CvtRsForm F>
LPLAB_HD constexpr std::uint32_t cvt_rs_packed(const float* in, std::uint32_t rbits, const RbitsLayout& layout,
                                               bool relu = false, bool satfinite = true) noexcept {
  using Tr = CvtRsFormTraits<F>;
  using T = typename Tr::type;
  constexpr int field = Tr::lanes == 2 ? 16 : F == CvtRsForm::e2m1x4 ? 4 : 8;
  std::uint32_t d = 0;
  for (int j = 0; j < Tr::lanes; ++j) {
    const T code = cvt_rs<T>(in[j], cvt_rs_element_bits<F>(rbits, j, layout), Tr::K, relu, satfinite);
    d |= static_cast<std::uint32_t>(code.bits()) << (field * j);
  }
  return d;
}

// Where a bulk conversion's rbits come from: group g (the form's lanes of
// consecutive elements, one instruction) of a call with seed s and
// subsequence q gets philox_bits(s, q, g) -- curand's Philox4_32_10 stream,
// which PyTorch's CUDA generator and torchtitan key per rank with the
// subsequence -- or lplab's own stochastic_bits(s ^ q, g) (random.h).
#define LPLAB_RBITS_STREAMS(X)                                                   \
  X(philox, "Philox4x32-10 as curand_init(seed, subsequence, 0) then curand()") \
  X(lplab, "lplab's counter-based bits, stochastic_bits(seed ^ subsequence, g)")
enum class RbitsStream : std::uint8_t { LPLAB_RBITS_STREAMS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(RbitsStream, "random-bit stream", LPLAB_RBITS_STREAMS)

LPLAB_HD constexpr std::uint32_t rbits_of(RbitsStream stream, std::uint64_t seed, std::uint64_t subsequence,
                                          std::uint64_t group) noexcept {
  return stream == RbitsStream::philox ? philox_bits(seed, subsequence, group)
                                       : stochastic_bits(seed ^ subsequence, group);
}

// Every layout, and one by name ("sm_100a", "sm_103a"; nullptr for another).
inline constexpr const RbitsLayout* kRbitsLayouts[] = {&kRbitsSm100a, &kRbitsSm103a};
inline const RbitsLayout* rbits_layout_named(std::string_view name) noexcept {
  for (const RbitsLayout* l : kRbitsLayouts)
    if (l->name == name) return l;
  return nullptr;
}

// x converted as a sequence of cvt.rs instructions would convert it: group
// g = elements [g * lanes, (g + 1) * lanes) in one instruction with
// rbits_of(stream, seed, subsequence, first_group + g); a short last group is
// padded with zeros, which are not stored. out.size() == x.size(). The codes
// depend on nothing but the arguments (first_group: where x lies in a
// larger tensor converted piece by piece).
template <CvtRsForm F>
void cvt_rs_bulk(const float* x, std::size_t n, typename CvtRsFormTraits<F>::type* out, RbitsStream stream,
                 std::uint64_t seed, std::uint64_t subsequence, const RbitsLayout& layout, bool relu = false,
                 bool satfinite = true, std::uint64_t first_group = 0) {
  using Tr = CvtRsFormTraits<F>;
  using T = typename Tr::type;
  for (std::size_t g = 0; g * Tr::lanes < n; ++g) {
    const std::uint32_t r = rbits_of(stream, seed, subsequence, first_group + g);
    for (int j = 0; j < Tr::lanes && g * Tr::lanes + j < n; ++j) {
      const std::size_t i = g * Tr::lanes + static_cast<std::size_t>(j);
      out[i] = cvt_rs<T>(x[i], cvt_rs_element_bits<F>(r, j, layout), Tr::K, relu, satfinite);
    }
  }
}

}  // namespace lplab::kernels
