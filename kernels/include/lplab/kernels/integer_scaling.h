// Integer scaling: a matrix stored as integer codes (formats/catalog.h's
// int8 .. uint2) with a scale, and for the asymmetric rules a zero point, per
// group -- the schemes of integer inference (SmoothQuant's W8A8, GPTQ's and
// AWQ's 4-bit weights, torchao's int8 and int4 weight-only), each rule
// written out as its source computes it.
//
//   auto s = lplab::kernels::int4_g128;           // IntegerScaling<uint4, float16>: GPTQ, groups of 128
//   std::vector<lplab::uint4> q(n), z(groups_needed(s, n, cols));
//   std::vector<lplab::float16> sc(groups_needed(s, n, cols));
//   lplab::kernels::quantize(s, x, cols, q, sc, z);
//   lplab::kernels::dequantize(s, q, cols, sc, z, y);
//
// Groups, in the block shapes' vocabulary (scaling.h): x is a row-major
// matrix of rows of `cols` values (the last row may be shorter; a weight W of
// out x in features has rows of in = K values). A group is 1 x group_size
// along a row (GPTQ's and AWQ's group along K, torchao's block_size (1, G));
// group_size 0 is the whole row (per channel for a weight, per token for an
// activation: torchao's PerRow, SmoothQuant's per-channel absmax); per_tensor
// is one group for all of x. Group (r, c) holds row r's columns [c G, (c + 1)
// G) that exist, and its scale (and zero point) is entry r * ceil(cols / G)
// + c, row-major over groups (groups_needed). The first group of each row
// starts at its column 0.
//
// ---------------------------------------------------------------------------
// The rules (IntegerRule), per group, with lo and hi its smallest and largest
// value and amax = max |x_i|; every operation in float32, rounded to
// nearest-even, in the order written; round() is round half to even (what
// torch.round does); [qmin, qmax] is the element format's range unless a rule
// says otherwise.
//
// absmax (SmoothQuant, fake_quant.py quantize_weight_per_channel_absmax and
//   quantize_activation_per_token_absmax): a signed element, qmax = 2^(b-1) - 1,
//     s = max(amax, 1e-5) / qmax,   q = round(x / s)   (in [-qmax, qmax]: int8 never uses -128)
// torchao_symmetric (torchao choose_qparams_affine, MappingType.SYMMETRIC,
//   as Int8WeightOnlyConfig calls it: eps = float32's 2^-23): a signed element,
//     s = max(amax / ((qmax - qmin) / 2), 2^-23),   q = clamp(round(x * (1 / s)), qmin, qmax)
//   (int8: amax / 127.5, so the group's +amax lands on 127.5 -> 128 -> 127).
// gptq (AutoGPTQ quantizer.py find_params and quantize; GPTQModel's the same):
//   an unsigned element, maxq = 2^b - 1, the range widened to hold 0,
//     lo' = min(lo, 0), hi' = max(hi, 0)   ([-1, 1] where both are 0)
//     s = (hi' - lo') / maxq,   z = round(-lo' / s),   q = clamp(round(x / s) + z, 0, maxq)
// awq (AutoAWQ quantizer.py pseudo_quantize_tensor, zero_point=True): an
//   unsigned element, the range as it is,
//     s = max(hi - lo, 1e-5) / maxq,   z = clamp(-round(lo / s), 0, maxq),
//     q = clamp(round(x / s) + z, 0, maxq)
// torchao_asymmetric (choose_qparams_affine, MappingType.ASYMMETRIC,
//   ZeroPointDomain.INT, eps = 2^-23 as torchao's int8 asymmetric
//   activations pass it): any element, the range widened to hold 0,
//     s = max((hi' - lo') / (qmax - qmin), 2^-23),   z = clamp(qmin - round(lo' / s), qmin, qmax)
//     q = clamp(round(x * (1 / s)) + z, qmin, qmax)
// tinygemm (torchao's int4 weight-only with its tensor-core tiled layout,
//   ZeroPointDomain.FLOAT, _choose_qparams_affine_tinygemm and
//   _quantize_affine_tinygemm, eps = 1e-6 as Int4WeightOnlyConfig passes it):
//   an unsigned element, mid = (qmax + qmin + 1) / 2 (8 for uint4), the range
//   as it is, a floating-point zero point,
//     s = max((hi - lo) / (qmax - qmin), 1e-6),   z = lo + s * mid
//     q = clamp(round((x - (z - s * mid)) / s), qmin, qmax)
//
// The scale (and a floating-point zero point) is then rounded into the scale
// format (nearest-even, saturating), and q is computed with the stored values
// -- as torchao quantizes with choose_qparams' returned (cast) scale, and as
// GPTQ's and AWQ's packing re-derives the codes from the fp16 scales. (GPTQ's
// own search quantizes with the float32 scale before storing it as fp16: its
// codes can differ from these at a value within a rounding of a code's
// midpoint.) An integer zero point is an element code (`zeros`), a
// floating-point one a scale-format value (`float_zeros`).
//
// Dequantization, in float32:
//     no zero point:   y = float(q) * s
//     integer z:       y = (float(q) - float(z)) * s          (torchao, GPTQ, AWQ)
//     floating z:      y = (float(q) - mid) * s + z           (tinygemm; two roundings, no fused multiply-add)
//
// Non-finite inputs: a group holding a NaN or an infinity gets the scale
// format's NaN as its scale (and a NaN floating zero point, or zero point
// 0), all its codes 0, and dequantizes to NaN (the block schemes' rule,
// scaling.h). The sources give such a group a NaN scale and codes that
// depend on the platform's float-to-int conversion.
//
// Errors (std::invalid_argument before anything is written, "lplab::kernels::
// quantize: ..."): a rule the element's signedness does not fit (absmax and
// torchao_symmetric take a signed element; gptq, awq and tinygemm an unsigned
// one), group_size < 0, cols = 0 with n > 0, spans of the wrong size, zero
// points given to a rule without them or missing for a rule with them.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lplab/formats.h"
#include "lplab/formats/enum_table.h"

namespace lplab::kernels {

#define LPLAB_INTEGER_RULES(X)                                                                                  \
  X(absmax, "symmetric, s = max(amax, 1e-5) / (2^(b-1) - 1), q = round(x / s) (SmoothQuant)")                  \
  X(torchao_symmetric, "symmetric, s = max(amax / ((qmax - qmin) / 2), 2^-23), q = round(x * (1 / s)) "          \
                       "(torchao MappingType.SYMMETRIC)")                                                       \
  X(gptq, "asymmetric over [min(lo, 0), max(hi, 0)], s = range / (2^b - 1), integer zero round(-lo / s) "       \
          "(AutoGPTQ)")                                                                                         \
  X(awq, "asymmetric over [lo, hi], s = max(range, 1e-5) / (2^b - 1), integer zero -round(lo / s) (AutoAWQ)")    \
  X(torchao_asymmetric, "asymmetric over [min(lo, 0), max(hi, 0)], integer zero qmin - round(lo / s) "         \
                        "(torchao ZeroPointDomain.INT)")                                                        \
  X(tinygemm, "asymmetric over [lo, hi], floating zero point lo + s * mid (torchao int4 weight-only, "           \
              "ZeroPointDomain.FLOAT)")
enum class IntegerRule : std::uint8_t { LPLAB_INTEGER_RULES(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(IntegerRule, "integer scaling rule", LPLAB_INTEGER_RULES)

// Each rule's parameters, as data: the kernels read nothing else.
enum class ZeroPoint : std::uint8_t { none, integer, floating };
enum class Epsilon : std::uint8_t { on_amax, on_range, on_scale };
struct IntegerRuleSpec {
  bool is_signed;      // the element's signedness the rule takes
  ZeroPoint zero;      // how it stores its zero point
  bool restricted;     // symmetric over [-qmax, qmax], s = amax / qmax (else (qmax - qmin) / 2)
  bool through_zero;   // the range widened to hold 0 (lo' = min(lo, 0), hi' = max(hi, 0))
  bool unit_if_zero;   // a range of [0, 0] becomes [-1, 1] (GPTQ)
  Epsilon eps_on;      // where eps bounds from below: amax, the range, or the scale
  float eps;           // 0: none
  bool reciprocal;     // q from x * (1 / s) (torchao) rather than x / s
};
constexpr IntegerRuleSpec integer_rule_spec(IntegerRule r) noexcept {
  constexpr float kF32Eps = 0x1p-23f;  // torch.finfo(torch.float32).eps
  switch (r) {
    case IntegerRule::absmax: return {true, ZeroPoint::none, true, false, false, Epsilon::on_amax, 1e-5f, false};
    case IntegerRule::torchao_symmetric:
      return {true, ZeroPoint::none, false, false, false, Epsilon::on_scale, kF32Eps, true};
    case IntegerRule::gptq: return {false, ZeroPoint::integer, false, true, true, Epsilon::on_scale, 0.0f, false};
    case IntegerRule::awq: return {false, ZeroPoint::integer, false, false, false, Epsilon::on_range, 1e-5f, false};
    case IntegerRule::torchao_asymmetric:
      return {false, ZeroPoint::integer, false, true, false, Epsilon::on_scale, kF32Eps, true};
    case IntegerRule::tinygemm:
      return {false, ZeroPoint::floating, false, false, false, Epsilon::on_scale, 1e-6f, false};
  }
  return {};
}
// torchao_asymmetric takes either signedness (is_signed is then not checked).
constexpr bool rule_takes(IntegerRule r, bool element_signed) noexcept {
  return r == IntegerRule::torchao_asymmetric || integer_rule_spec(r).is_signed == element_signed;
}

// The element and scale formats, each list declared once: every pair is
// compiled (kernels/src/integer_scaling.cpp). X(format, extra...): the
// extra arguments are passed on to each X.
#define LPLAB_INTEGER_SCALING_ELEMENTS(X, ...) \
  X(int8, __VA_ARGS__) X(uint8, __VA_ARGS__) X(int4, __VA_ARGS__) X(uint4, __VA_ARGS__) X(int2, __VA_ARGS__) \
  X(uint2, __VA_ARGS__)
#define LPLAB_INTEGER_SCALING_SCALES(X, ...) X(float16, __VA_ARGS__) X(bfloat16, __VA_ARGS__) X(float32, __VA_ARGS__)

namespace detail {
template <class T, class... L>
inline constexpr bool one_of_integer = (std::same_as<T, L> || ...);
#define LPLAB_KERNELS_INT_TYPE(T, ...) , T
}  // namespace detail
template <class T>
concept IntegerElement = detail::one_of_integer<T LPLAB_INTEGER_SCALING_ELEMENTS(LPLAB_KERNELS_INT_TYPE, )>;
template <class T>
concept IntegerScale = detail::one_of_integer<T LPLAB_INTEGER_SCALING_SCALES(LPLAB_KERNELS_INT_TYPE, )>;
#undef LPLAB_KERNELS_INT_TYPE

template <IntegerElement Elem, IntegerScale Scale>
struct IntegerScaling {
  using element_type = Elem;
  using scale_type = Scale;

  IntegerRule rule = IntegerRule::absmax;
  int group_size = 0;       // values of a row per group; 0: the whole row
  bool per_tensor = false;  // one group for the whole matrix (group_size is then not read)
};

// The named schemes, X(name, element, scale, fields...): SmoothQuant's INT8
// per tensor and per channel (fp32 scales), torchao's INT8 per row, GPTQ's
// INT4 with groups of 128 and 32 and INT2 with 64 (fp16 scales, as its
// checkpoints store them), AWQ's INT4 g128, torchao's tinygemm INT4 g128
// (bf16 scales and zero points).
#define LPLAB_INTEGER_SCHEMES(X)                                                            \
  X(int8_tensor, int8, float32, .rule = IntegerRule::absmax, .per_tensor = true)            \
  X(int8_channel, int8, float32, .rule = IntegerRule::absmax)                               \
  X(int8_channel_torchao, int8, float32, .rule = IntegerRule::torchao_symmetric)            \
  X(int4_g128, uint4, float16, .rule = IntegerRule::gptq, .group_size = 128)                \
  X(int4_g32, uint4, float16, .rule = IntegerRule::gptq, .group_size = 32)                  \
  X(int4_g128_awq, uint4, float16, .rule = IntegerRule::awq, .group_size = 128)             \
  X(int4_g128_tinygemm, uint4, bfloat16, .rule = IntegerRule::tinygemm, .group_size = 128)  \
  X(int2_g64, uint2, float16, .rule = IntegerRule::gptq, .group_size = 64)
#define LPLAB_KERNELS_INTEGER_SCHEME(name, Elem, Scale, ...) \
  inline constexpr IntegerScaling<Elem, Scale> name{__VA_ARGS__};
LPLAB_INTEGER_SCHEMES(LPLAB_KERNELS_INTEGER_SCHEME)
#undef LPLAB_KERNELS_INTEGER_SCHEME

// Groups of an n-value matrix of rows of `cols` (0 for n = 0).
template <class Elem, class Scale>
constexpr std::size_t groups_needed(const IntegerScaling<Elem, Scale>& s, std::size_t n, std::size_t cols) noexcept {
  if (n == 0 || cols == 0) return 0;
  if (s.per_tensor) return 1;
  const std::size_t rows = n / cols + (n % cols != 0 ? 1 : 0);
  if (s.group_size <= 0) return rows;
  const auto g = static_cast<std::size_t>(s.group_size);
  return rows * (cols / g + (cols % g != 0 ? 1 : 0));
}

// The entry of value i's group (rows of cols): its scale's and zero point's.
template <class Elem, class Scale>
constexpr std::size_t group_of(const IntegerScaling<Elem, Scale>& s, std::size_t i, std::size_t cols) noexcept {
  if (s.per_tensor) return 0;
  const std::size_t g = s.group_size > 0 ? static_cast<std::size_t>(s.group_size) : cols;
  return (i / cols) * ((cols + g - 1) / g) + (i % cols) / g;
}

// tinygemm's mid-point (qmax + qmin + 1) / 2, 8 for uint4: its codes stand
// for (q - mid) s + z.
template <IntegerElement Elem>
constexpr float integer_mid_point() noexcept {
  return (static_cast<float>(finfo<Elem>::max) + static_cast<float>(finfo<Elem>::min) + 1.0f) / 2.0f;
}

// Bits per value with whole groups of G values: the element, and per group
// the scale and the zero point (an element code, or a scale-format value),
// as GPTQ's and AWQ's checkpoints store them (packed codes and zero points,
// 16-bit scales): int4_g128 4 + (16 + 4) / 128 = 4.156.
template <class Elem, class Scale>
constexpr int group_bits(const IntegerScaling<Elem, Scale>& s) noexcept {
  const ZeroPoint z = integer_rule_spec(s.rule).zero;
  return finfo<Scale>::bits + (z == ZeroPoint::integer ? finfo<Elem>::bits : z == ZeroPoint::floating ? finfo<Scale>::bits : 0);
}
template <class Elem, class Scale>
constexpr double bits_per_element(const IntegerScaling<Elem, Scale>& s, std::size_t group) noexcept {
  return finfo<Elem>::bits + group_bits(s) / static_cast<double>(group);
}
template <class Elem, class Scale>
constexpr std::uint64_t storage_bits(const IntegerScaling<Elem, Scale>& s, std::size_t n, std::size_t cols) noexcept {
  return std::uint64_t{n} * finfo<Elem>::bits + groups_needed(s, n, cols) * static_cast<std::uint64_t>(group_bits(s));
}

// Rules without a zero point (absmax, torchao_symmetric).
template <IntegerElement Elem, IntegerScale Scale>
void quantize(const IntegerScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
              std::span<std::type_identity_t<Elem>> q, std::span<std::type_identity_t<Scale>> scales);
template <IntegerElement Elem, IntegerScale Scale>
void dequantize(const IntegerScaling<Elem, Scale>& s, std::span<const std::type_identity_t<Elem>> q,
                std::size_t cols, std::span<const std::type_identity_t<Scale>> scales, std::span<float> y);
// Rules with an integer zero point (gptq, awq, torchao_asymmetric): one
// element code per group.
template <IntegerElement Elem, IntegerScale Scale>
void quantize(const IntegerScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
              std::span<std::type_identity_t<Elem>> q, std::span<std::type_identity_t<Scale>> scales,
              std::span<std::type_identity_t<Elem>> zeros);
template <IntegerElement Elem, IntegerScale Scale>
void dequantize(const IntegerScaling<Elem, Scale>& s, std::span<const std::type_identity_t<Elem>> q,
                std::size_t cols, std::span<const std::type_identity_t<Scale>> scales,
                std::span<const std::type_identity_t<Elem>> zeros, std::span<float> y);
// The rule with a floating-point zero point (tinygemm): one scale-format value per group.
template <IntegerElement Elem, IntegerScale Scale>
void quantize(const IntegerScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
              std::span<std::type_identity_t<Elem>> q, std::span<std::type_identity_t<Scale>> scales,
              std::span<std::type_identity_t<Scale>> float_zeros);
template <IntegerElement Elem, IntegerScale Scale>
void dequantize(const IntegerScaling<Elem, Scale>& s, std::span<const std::type_identity_t<Elem>> q,
                std::size_t cols, std::span<const std::type_identity_t<Scale>> scales,
                std::span<const std::type_identity_t<Scale>> float_zeros, std::span<float> y);

// ---------------------------------------------------------------------------
// Checkpoint layouts. A weight W of N rows (out features) x K columns (in
// features), quantized with an integer zero point and groups of G along K
// (group_size 0: G = K), as the checkpoints of GPTQ and AWQ store it: int32
// words of 32 / b codes, the first code in the lowest bits.
//   gptq (AutoGPTQ, qlinear_cuda_old.py pack; checkpoint_format "gptq"):
//     qweight [K b / 32, N]: word (k / (32 / b), n) holds q[n][k] at bits
//       b (k % (32 / b)), packed along K;
//     qzeros [K / G, N b / 32]: zero[n][g] - 1 at bits b (n % (32 / b)) of
//       word (g, n / (32 / b)), packed along N (a zero point of 0 has no
//       such code: AutoGPTQ writes -1 over the word's higher codes; lplab
//       refuses it and names gptq_v2);
//     scales [K / G, N].
//   gptq_v2 (GPTQModel's "gptq_v2"): gptq with the zero points as they are.
//   awq (AutoAWQ, WQLinear_GEMM.from_linear; 4-bit only): qweight [K, N / 8],
//     nibble i of word (k, c) holds q[8 c + order[i]][k] with order =
//     {0, 2, 4, 6, 1, 3, 5, 7}, packed along N; qzeros [K / G, N / 8] the
//     same way, zero points as they are; scales [K / G, N].
// The words are int32 as the checkpoints type them (the bits of a uint32).
// GPTQ takes 2-, 4- and 8-bit unsigned codes, AWQ 4-bit; K must be a
// multiple of G and of 32 / b (gptq), N of 32 / b (gptq) or 8 (awq).
#define LPLAB_INTEGER_CHECKPOINTS(X)                                                                      \
  X(gptq, "AutoGPTQ: qweight packed along K, qzeros packed along N holding zero - 1, scales [K/G, N]")    \
  X(gptq_v2, "GPTQModel's gptq_v2: as gptq, the zero points as they are")                                \
  X(awq, "AutoAWQ GEMM: qweight [K, N/8] and qzeros packed along N in the order 0 2 4 6 1 3 5 7")
enum class IntegerCheckpoint : std::uint8_t { LPLAB_INTEGER_CHECKPOINTS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(IntegerCheckpoint, "integer checkpoint layout", LPLAB_INTEGER_CHECKPOINTS)

template <class Scale>
struct CheckpointTensors {
  std::vector<std::int32_t> qweight, qzeros;
  std::vector<Scale> scales;
  std::size_t qweight_rows = 0, qweight_cols = 0, qzeros_rows = 0, qzeros_cols = 0, groups = 0, n = 0;
};

// W's codes (N x K, row-major), zero points and scales (N x groups, as
// quantize writes them) in the layout; std::invalid_argument for a scheme,
// a shape or a zero point the layout cannot hold, before anything is built.
template <IntegerElement Elem, IntegerScale Scale>
CheckpointTensors<Scale> to_checkpoint(IntegerCheckpoint layout, const IntegerScaling<Elem, Scale>& s,
                                       std::size_t k, std::span<const std::type_identity_t<Elem>> q,
                                       std::span<const std::type_identity_t<Scale>> scales,
                                       std::span<const std::type_identity_t<Elem>> zeros);
// The way back: codes, scales and zero points as quantize writes them, from
// a checkpoint's tensors (N = t.n, K = t.qweight_rows * 32 / b for gptq,
// t.qweight_rows for awq).
template <IntegerElement Elem, IntegerScale Scale>
void from_checkpoint(IntegerCheckpoint layout, const IntegerScaling<Elem, Scale>& s, const CheckpointTensors<Scale>& t,
                     std::span<std::type_identity_t<Elem>> q, std::span<std::type_identity_t<Scale>> scales,
                     std::span<std::type_identity_t<Elem>> zeros);

// ---------------------------------------------------------------------------
// SmoothQuant's smoothing (Xiao et al., arXiv 2211.10438; smoothquant/smooth.py
// smooth_ln_fcs): a transform before W8A8 that moves activation outliers
// into the weights, X W^T = (X / s)(W s)^T, per input channel j:
//     s_j = max(a_j^alpha / max(w_j, 1e-5)^(1 - alpha), 1e-5)
// with a_j = max |X[:, j]| over calibration tokens (smoothquant/calibration.py)
// and w_j = max |W[:, j]| over the output rows of every linear reading X. In
// float32; x^p as torch's pow computes it for the exponents it special-cases
// (0.5: sqrt, 1: x, 0: 1, 2: x x, -0.5: 1 / sqrt, -1: 1 / x, -2: 1 / (x x)),
// otherwise in double, rounded to float32 (the nearest float to x^p but for
// a result within 2^-29 of a tie; torch's vectorized powf, Sleef's 1-ULP
// one, can differ from it in the last bit). X / s is folded into the preceding LayerNorm's weight and bias;
// smooth_columns does it on a matrix.
void smoothquant_scales(std::span<const float> act_amax, std::span<const float> weight_amax, double alpha,
                        std::span<float> s);
// max |m[:, j]| of a row-major matrix of rows of cols (NaN where a column holds one).
void column_amax(std::span<const float> m, std::size_t cols, std::span<float> amax);
// m[:, j] / s_j (divide) or m[:, j] * s_j, in place.
void smooth_columns(std::span<float> m, std::size_t cols, std::span<const float> s, bool divide);

// round() above: float32 to the nearest integer, ties to even (torch.round),
// in integer arithmetic (no rounding mode read). NaN and infinities pass.
constexpr float round_half_even(float v) noexcept {
  const auto b = std::bit_cast<std::uint32_t>(v);
  const int e = static_cast<int>((b >> 23) & 0xFF) - 127;
  if (e >= 23) return v;                                          // integral already, or not finite
  const float sign = (b >> 31) != 0 ? -1.0f : 1.0f;
  if (e < -1) return sign * 0.0f;                                 // |v| < 1/2
  const int frac = 23 - e;                                        // fraction bits: 1 .. 24
  const std::uint32_t m = (b & 0x7FFFFFu) | 0x800000u;
  std::uint32_t r = m >> frac;
  const std::uint32_t rest = m & ((std::uint32_t{1} << frac) - 1), half = std::uint32_t{1} << (frac - 1);
  if (rest > half || (rest == half && (r & 1) != 0)) ++r;
  return sign * static_cast<float>(r);
}

}  // namespace lplab::kernels
