// The scale rules of block and tensor scaling, per block and per tensor,
// portable: LPLAB_HD, no libm, so that the CPU kernels (scaling.cpp: loops
// and SIMD around these) and a device backend compute the same scales. The
// rules, with their sources, are stated in scaling.h; amax arrives as the bits
// of |x| (0b0'eeeeeeee'm..m: ordered as the magnitudes, +inf above every
// finite value, NaN above +inf).
#pragma once

#include <cstdint>

#include "lplab/formats.h"
#include "lplab/formats/enum_table.h"
#include "lplab/kernels/double_bits.h"

namespace lplab::kernels {

// The rules, X(name, the scale it gives); scaling.h states each in full.
// amax_ratio_te is NVFP4 in Transformer Engine's reference order (its
// NVFP4QuantizerRef): amax_ratio's quantities evaluated as TE does, TE's
// non-finite handling, and the tensor's amax kept in place of s_enc.
// rceil, even and ceil_amax are the power-of-two rules of cuBLAS and
// Transformer Engine (MXFP8) and of torchao's ScaleCalculationMode (RCEIL,
// EVEN, CEIL); docs/recipes.md gives each one's source and where it differs
// from the others. (Appended: a rule's number is its place in this list.)
#define LPLAB_SCALE_RULES(X)                                                                   \
  X(floor, "2^(floor(log2 amax) - emax_elem), OCP MX v1.0 section 6.3")                        \
  X(ceil, "2^ceil(log2(amax / max_elem)): the block maximum never saturates")                  \
  X(amax_ratio, "amax / max_elem rounded into the scale format (NVFP4)")                       \
  X(amax_ratio_te, "NVFP4 in Transformer Engine's reference order, keeping the tensor's amax") \
  X(rceil, "2^ceil(log2 q), q = amax * (1 / max_elem) in float32: cuBLAS and TE (cvt.rp.ue8m0)") \
  X(even, "2^(floor(log2 r) - emax_elem), r = amax to the element's precision, ties away: torchao EVEN") \
  X(ceil_amax, "2^(ceil(log2 amax) - emax_elem): torchao's CEIL")                              \
  X(deepseek, "max(amax, 1e-4) / max_elem in float32 (fp32 scales): DeepSeek-V3's tiles")     \
  X(te_fp32, "1 / (max_elem / amax) in float32, NaN left out of amax (fp32 scales): TE Float8BlockScaling") \
  X(te_fp32_pow2, "te_fp32 with max_elem / amax cut to a power of two: TE Float8BlockScaling's default")
enum class ScaleRule : std::uint8_t { LPLAB_SCALE_RULES(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(ScaleRule, "scale rule", LPLAB_SCALE_RULES)

namespace scale_rules {

// The rules of fp32 scales (a float32 scale format; no tensor scale):
// DeepSeek-V3's and Transformer Engine's Float8BlockScaling tiles.
LPLAB_HD constexpr bool needs_fp32_scale(ScaleRule r) noexcept {
  return r == ScaleRule::deepseek || r == ScaleRule::te_fp32 || r == ScaleRule::te_fp32_pow2;
}
// TE's Float8BlockScaling rules read the amax without NaNs (CUDA's fmaxf
// drops them) and leave every element to the conversion: a NaN stays NaN and
// an infinity saturates. Every other rule makes a block holding a NaN or an
// infinity +0 elements with the scale format's NaN (amax_ratio_te: -0 and
// NaN elements +0, its own rule).
LPLAB_HD constexpr bool keeps_nonfinite(ScaleRule r) noexcept {
  return r == ScaleRule::te_fp32 || r == ScaleRule::te_fp32_pow2;
}
// The rules whose scale is a power of two read from X (power_of_two_exponent).
LPLAB_HD constexpr bool is_power_of_two_rule(ScaleRule r) noexcept {
  return r == ScaleRule::floor || r == ScaleRule::ceil || r == ScaleRule::rceil || r == ScaleRule::even ||
         r == ScaleRule::ceil_amax;
}

// binary32's constants, as the format core derives them from its descriptor.
using Binary32 = lplab::detail::Layout<lplab::detail::binary32>;
inline constexpr int kM = Binary32::M;                      // 23
inline constexpr int kEmin = Binary32::emin;                // -126
inline constexpr int kEtiny = kEmin - kM;                   // -149: the smallest subnormal's exponent
inline constexpr std::uint32_t kInfBits = Binary32::inf_code;  // +inf (0x7F80'0000): non-finite at or above
inline constexpr std::uint32_t kMagMask = Binary32::mag_mask;  // 0x7FFF'FFFF
static_assert(kInfBits == 0x7F80'0000 && kEtiny == -149);
inline constexpr float kFloatMax = 0x1.fffffep127f;

LPLAB_HD constexpr bool is_nonfinite(std::uint32_t abs_bits) noexcept { return abs_bits >= kInfBits; }
LPLAB_HD constexpr float float_of(std::uint32_t bits) noexcept { return lplab::detail::bit_cast<float>(bits); }
LPLAB_HD constexpr float min_of(float a, float b) noexcept { return b < a ? b : a; }

// 2^e as a float for -149 <= e <= 127, from its bits (subnormal below -126).
LPLAB_HD constexpr float pow2f(int e) noexcept {
  return e >= kEmin ? float_of(static_cast<std::uint32_t>(e - kEmin + 1) << kM)
                    : float_of(std::uint32_t{1} << (e - kEtiny));
}

// The constants of an (element, scale) pair, from the formats' descriptors.
template <class Elem, class Scale>
struct Constants {
  using EI = finfo<Elem>;
  using SI = finfo<Scale>;
  // Exponent of the element's largest normal binade (E4M3 8, E5M2 15, E2M3 2, E3M2 4, E2M1 2).
  static constexpr int emax_elem = EI::maxexp - 1;
  static constexpr float max_elem = static_cast<float>(EI::max);
  // rceil's multiplier: 1 / max_elem rounded to float (E4M3: 0x3B124925).
  static constexpr float max_elem_rcp = static_cast<float>(1.0 / EI::max);
  static constexpr int mantissa_elem = EI::mantissa_bits;
  // max_elem's significand 1.m as a 24-bit integer, float's significand width:
  // E4M3 448 = 1.75 * 2^8 -> 0b111 << 21.
  static constexpr std::uint32_t max_sig =
      static_cast<std::uint32_t>((EI::max_code & ((std::uint64_t{1} << EI::mantissa_bits) - 1)) |
                                 (std::uint64_t{1} << EI::mantissa_bits))
      << (23 - EI::mantissa_bits);
  // The powers of two the scale format holds whose inverse, the factor, is a
  // float: 2^x_min .. 2^x_max (E8M0 -127 .. 127; E4M3 2^-9 (subnormal) ..
  // 2^8; float32 2^-127 .. 2^127, its subnormals below having no inverse).
  static constexpr int x_min_held = SI::minexp - (SI::has_subnormals ? SI::mantissa_bits : 0);
  static constexpr int x_min = x_min_held < -127 ? -127 : x_min_held;
  static constexpr int x_max = SI::maxexp - 1;
  // The tensor scale's numerator max_elem * max_scale (NVFP4: 6 * 448 = 2688),
  // saturated to float.
  static constexpr float encode_numerator =
      lplab::convert<float>(EI::max * SI::max, Round::nearest_even, Overflow::saturate);
  // Smallest positive scale, for a scale format without zero (E8M0 2^-127).
  static constexpr float min_scale = static_cast<float>(SI::has_zero ? 0.0 : SI::min);

  // See scaling.h: below 2^-126 the product x * 2^-X may be inexact, and must
  // then lie below half the element format's smallest subnormal.
  static_assert(EI::smallest_subnormal / 2 > 0x1p-126, "multiply-then-round needs this");
};

// A positive finite float's binade and significand: v = sig * 2^(floor_log2 - 23)
// with sig in [2^23, 2^24), exact integers (a subnormal normalised).
struct Binade {
  int floor_log2;
  std::uint32_t sig;
};
LPLAB_HD constexpr Binade binade_of(std::uint32_t bits) noexcept {
  const std::uint32_t field = bits >> kM;
  if (field != 0)
    return {static_cast<int>(field) + kEmin - 1,
            static_cast<std::uint32_t>((bits & Binary32::mant_mask) | (std::uint32_t{1} << kM))};
  const int top = lplab::detail::top_bit(bits);
  return {top + kEtiny, bits << (kM - top)};
}
inline constexpr std::uint32_t kOne = std::uint32_t{1} << kM;  // sig of a power of two

// ceil(log2 q) for q = a * r rounded to nearest-even into float32 (normal
// or subnormal), a and r positive finite floats given by their bits: the
// product of the two 24-bit significands is an exact 48-bit integer, rounded
// here, so that no floating-point environment (flush-to-zero, a directed
// rounding mode) changes the result. zero: q rounded to +0.
LPLAB_HD constexpr int ceil_log2_of_product(std::uint32_t a_bits, std::uint32_t r_bits, bool& zero) noexcept {
  const Binade a = binade_of(a_bits), r = binade_of(r_bits);
  // 1. The exact product P * 2^(unit), P in [2^46, 2^48); e = floor(log2).
  const std::uint64_t P = static_cast<std::uint64_t>(a.sig) * r.sig;
  const int unit = a.floor_log2 + r.floor_log2 - 2 * kM;
  const int top = P >> 47 ? 47 : 46;
  int e = unit + top;
  // 2. Rounded to nearest-even on float's grid there: 24 bits, or 2^-149's.
  const int drop = e >= kEmin ? top - kM : kEtiny - unit;
  zero = false;
  if (drop >= 50) {  // below half of 2^-149 (P < 2^48)
    zero = true;
    return 0;
  }
  std::uint64_t m = P >> drop;
  const std::uint64_t rem = P & ((std::uint64_t{1} << drop) - 1), half = std::uint64_t{1} << (drop - 1);
  if (rem > half || (rem == half && (m & 1) != 0)) ++m;
  if (m == 0) {
    zero = true;
    return 0;
  }
  // 3. ceil(log2 q): q's binade, one more unless q is a power of two.
  e = lplab::detail::top_bit(m) + unit + drop;
  return e + ((m & (m - 1)) != 0);
}

// X of a power-of-two rule (floor, ceil, rceil, even, ceil_amax) for a
// finite amax, clamped to the powers of two the scale format holds.
template <class Elem, class Scale>
LPLAB_HD constexpr int power_of_two_exponent(ScaleRule rule, std::uint32_t amax_bits) noexcept {
  using C = Constants<Elem, Scale>;
  if (amax_bits == 0) return C::x_min;  // log2(0) = -inf, clamped
  int x = 0;
  if (rule == ScaleRule::rceil) {
    // X = ceil(log2 q), q = amax * (1 / max_elem) rounded to float32
    // (TE: amax * max_norm_rcp; 1 / 448 is 0x3B124925); q < amax, finite.
    bool zero = false;
    x = ceil_log2_of_product(amax_bits, lplab::detail::bit_cast<std::uint32_t>(C::max_elem_rcp), zero);
    if (zero) return C::x_min;
  } else {
    const Binade b = binade_of(amax_bits);
    x = b.floor_log2 - C::emax_elem;
    if (rule == ScaleRule::ceil) {
      // ceil(log2(amax / max_elem)): amax / 2^x has the significand sig in
      // max_elem's binade, so it exceeds max_elem exactly when sig >
      // max_sig, and then one more power of two brings it below.
      x += b.sig > C::max_sig;
    } else if (rule == ScaleRule::ceil_amax) {
      x += b.sig != kOne;  // ceil(log2 amax) - emax_elem
    } else if (rule == ScaleRule::even) {
      // amax rounded to the element's 1 + M bits, ties away from zero (half
      // of the last kept bit added to sig), reaches the next binade exactly
      // when sig + 2^(22 - M) >= 2^24.
      x += b.sig + (std::uint32_t{1} << (kM - 1 - C::mantissa_elem)) >= (kOne << 1);
    }
  }
  return x < C::x_min ? C::x_min : x > C::x_max ? C::x_max : x;
}

// The scale 2^X and the factor 2^-X the elements are multiplied by (both
// exact: 2^-127 .. 2^127 are floats), for X in [x_min, x_max].
template <class Elem, class Scale>
LPLAB_HD constexpr void power_of_two_scale(int x, Scale& scale, float& factor) noexcept {
  scale = lplab::convert<Scale>(pow2f(x));
  factor = pow2f(-x);
}

// The tensor scale s_enc of a scheme with one (NVFP4), from the tensor's amax.
template <class Elem, class Scale>
LPLAB_HD constexpr float encode_scale(std::uint32_t amax_bits) noexcept {
  if (amax_bits == 0 || is_nonfinite(amax_bits)) return 1.0f;
  return min_of(Constants<Elem, Scale>::encode_numerator / float_of(amax_bits), kFloatMax);
}

// Transformer Engine's global encode scale (amax_ratio_te), in float32:
//   s = min(max_elem * max_scale / amax_t, FLT_MAX), then 1 where s = 0
// (amax_t infinite); FLT_MAX for amax_t = 0 (the quotient is infinite) and
// NaN for a NaN amax_t, which poisons the whole tensor as in TE's reference.
template <class Elem, class Scale>
LPLAB_HD constexpr float encode_scale_te(std::uint32_t amax_bits) noexcept {
  const float s = min_of(Constants<Elem, Scale>::encode_numerator / float_of(amax_bits), kFloatMax);
  return s == 0.0f ? 1.0f : s;  // (NaN stays NaN: min_of keeps its first operand)
}

// One block's scale and factor in Transformer Engine's reference order
// (amax_ratio_te), every operation a float32 one rounded to nearest-even:
//   t      = min(amax * (s_enc * (1 / max_elem)), FLT_MAX)
//   scale  = convert<Scale>(t, nearest_even, saturate)    (an infinite amax: max_scale)
//   factor = min(1 / (float(scale) * (1 / s_enc)), FLT_MAX)   (scale 0: FLT_MAX)
// A NaN s_enc (the tensor holds a NaN) gives the scale format's NaN and a
// NaN factor; quantize then writes +0 elements.
template <class Elem, class Scale>
LPLAB_HD constexpr void block_scale_te(std::uint32_t amax_bits, float s_enc, Scale& scale, float& factor) noexcept {
  using C = Constants<Elem, Scale>;
  const float one = 1.0f;
  const float multiplier = s_enc * (one / C::max_elem);
  const float t = min_of(float_of(amax_bits) * multiplier, kFloatMax);
  scale = lplab::convert<Scale>(t, Round::nearest_even, Overflow::saturate);
  const float decode = one / s_enc;
  factor = min_of(one / (static_cast<float>(scale) * decode), kFloatMax);
}

// A tile's scale and factor under Transformer Engine's Float8BlockScaling
// (te_fp32, te_fp32_pow2; TE's common/recipe/recipe_common.cuh,
// compute_scale_from_amax, with amax_epsilon 0 and fp32 input), in float32:
//   factor = 1 where amax is 0 or infinite; else max_elem / amax, FLT_MAX
//            where that overflows, for te_fp32_pow2 with its mantissa
//            cleared (bits & 0xFF800000: the largest power of two below)
//   scale  = 1 / factor (TE's scale_inv, what is stored and multiplies back)
// amax_bits is the amax without NaNs; a NaN there (a tile of NaNs only, whose
// fmaxf-amax is 0) is read as 0.
template <class Elem, class Scale>
LPLAB_HD constexpr void tile_scale_te(std::uint32_t amax_bits, bool pow2, Scale& scale, float& factor) noexcept {
  factor = 1.0f;
  if (amax_bits != 0 && amax_bits < kInfBits) {
    factor = min_of(Constants<Elem, Scale>::max_elem / float_of(amax_bits), kFloatMax);
    if (pow2) factor = float_of(lplab::detail::bit_cast<std::uint32_t>(factor) & 0xFF80'0000u);
  }
  scale = lplab::convert<Scale>(1.0f / factor);
}

// DeepSeek-V3's tiles (deepseek; its inference/kernel.py act_quant and
// weight_quant, the amax clamped at 1e-4 as its training recipe states), a
// finite amax, in float32: a = max(amax, 1e-4), factor = max_elem / a,
// scale = a / max_elem.
template <class Elem, class Scale>
LPLAB_HD constexpr void tile_scale_deepseek(std::uint32_t amax_bits, Scale& scale, float& factor) noexcept {
  constexpr float kAmaxFloor = 1e-4f;
  const float a = float_of(amax_bits) < kAmaxFloor ? kAmaxFloor : float_of(amax_bits);
  factor = Constants<Elem, Scale>::max_elem / a;
  scale = lplab::convert<Scale>(a / Constants<Elem, Scale>::max_elem);
}

// One block's scale, and the factor its elements are multiplied by before
// rounding: 0 for a block with a NaN or an infinity inside, whose elements
// become +0 and whose scale is the scale format's NaN (amax_ratio_te:
// block_scale_te's rules instead; te_fp32 and te_fp32_pow2: tile_scale_te's).
// The fp32-scale rules give a float32 scale exactly (plans.h requires one).
template <class Elem, class Scale>
LPLAB_HD constexpr void block_scale(ScaleRule rule, std::uint32_t amax_bits, float s_enc, Scale& scale,
                                    float& factor) noexcept {
  using C = Constants<Elem, Scale>;
  if (rule == ScaleRule::amax_ratio_te) {
    block_scale_te<Elem, Scale>(amax_bits, s_enc, scale, factor);
    return;
  }
  if (keeps_nonfinite(rule)) {
    tile_scale_te<Elem, Scale>(amax_bits, rule == ScaleRule::te_fp32_pow2, scale, factor);
    return;
  }
  if (is_nonfinite(amax_bits)) {
    scale = Scale::from_bits(finfo<Scale>::nan_code);
    factor = 0.0f;
    return;
  }
  if (rule == ScaleRule::deepseek) {
    tile_scale_deepseek<Elem, Scale>(amax_bits, scale, factor);
    return;
  }
  if (rule != ScaleRule::amax_ratio) {
    power_of_two_scale<Elem, Scale>(power_of_two_exponent<Elem, Scale>(rule, amax_bits), scale, factor);
    return;
  }
  const float s_dec = float_of(amax_bits) / C::max_elem;
  float v = s_dec * s_enc;
  if (v == 0.0f) v = C::min_scale;
  scale = lplab::convert<Scale>(v, Round::nearest_even, Overflow::saturate);
  const float sf = static_cast<float>(scale);
  factor = sf == 0.0f ? 0.0f : min_of(s_enc / sf, kFloatMax);
}

// Per-tensor scaling's scale, (max_elem / amax) * 2^-margin in float32 (the
// quotient rounded, then the power of two applied with one rounding, as
// ldexp does: in double, where every such product is exact); FLT_MAX where
// that overflows, the smallest positive float where it underflows to 0, 1
// where amax is 0, infinite or NaN.
template <class Elem>
LPLAB_HD constexpr float tensor_scale(float amax, int margin) noexcept {
  const std::uint32_t bits = lplab::detail::bit_cast<std::uint32_t>(amax) & kMagMask;
  if (bits == 0 || is_nonfinite(bits)) return 1.0f;
  const float q = static_cast<float>(finfo<Elem>::max) / amax;
  // |margin| beyond 400 already takes every float quotient past float's
  // range; within it 2^-margin is a normal double.
  const int m = margin > 400 ? 400 : margin < -400 ? -400 : margin;
  const double p = static_cast<double>(q) * double_bits::pow2(-m);
  const float scale = static_cast<float>(p);
  if (scale > kFloatMax || scale < -kFloatMax) return kFloatMax;
  if (scale == 0.0f) return pow2f(kEtiny);
  return scale;
}


// One element of a block-scaled tensor (scaling.h), the per-element rule that
// the CPU's vector loops (scaling.cpp: amax, scale, bulk conversion) and the
// device's loops compute:
//   1. v = x * factor in float (factor from block_scale: 2^-X, k, or 0);
//   2. amax_ratio_te: -0 and NaN become +0 (TE's E2M1 table); te_fp32 and
//      te_fp32_pow2: nothing (nonfinite_block is false); any other rule:
//      every element of a block with a NaN or an infinity becomes +0;
//   3. elem = convert<Elem>(v, nearest_even, saturate).
template <class Elem>
LPLAB_HD constexpr Elem quantize_element(float x, float factor, bool te, bool nonfinite_block) noexcept {
  float v = x * factor;
  if (te ? (v == 0.0f || v != v) : nonfinite_block) v = 0.0f;
  return lplab::convert<Elem>(v, Round::nearest_even, Overflow::saturate);
}

// One element dequantized (scaling.h), in float: NaN (0x7FC00000) for a NaN
// scale; TE's e * ((scale * amax_t) * float(1 / M)) for amax_ratio_te;
// (e * scale) / s_enc with another tensor scale; e * scale otherwise.
template <class Elem, class Scale>
LPLAB_HD constexpr float dequantize_element(ScaleRule rule, bool tensor, float e, float scale,
                                            float tensor_scale) noexcept {
  if (scale != scale) return float_of(0x7FC0'0000u);
  if (rule == ScaleRule::amax_ratio_te) {
    constexpr auto inverse = static_cast<float>(1.0 / static_cast<double>(Constants<Elem, Scale>::encode_numerator));
    return e * (scale * tensor_scale * inverse);
  }
  return tensor ? e * scale / tensor_scale : e * scale;
}

}  // namespace scale_rules
}  // namespace lplab::kernels
