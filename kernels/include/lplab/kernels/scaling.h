// Block and tensor scaling: a tensor stored as narrow elements plus scales,
// with the scheme described as data.
//
//   auto s = lplab::kernels::mxfp8_e4m3;            // BlockScaling<float8_e4m3fn, float8_e8m0fnu>
//   std::vector<lplab::float8_e4m3fn> q(n);
//   std::vector<lplab::float8_e8m0fnu> sc(lplab::kernels::scales_needed(s, n));
//   lplab::kernels::quantize(s, x, q, sc);
//   lplab::kernels::dequantize(s, q, sc, y);
//
// A block scheme is one BlockScaling<Elem, Scale> value: element and scale
// formats as types, block size, scale rule and whether a second-level fp32
// tensor scale is used as fields. Every scheme runs through the same template;
// MXFP8/6/4 and NVFP4 are named values of it, not separate code. Blocks are
// runs of block_size consecutive elements; the last one is shorter when n is
// not a multiple of block_size, and nothing past the end of a span is touched.
//
// Block shapes. A block is block_rows x block_size elements of a row-major
// matrix: block_size along a row (the K dimension of a GEMM operand stored
// K-major), block_rows across rows. 1 x 32 (MX), 1 x 16 (NVFP4) and 16 x 16
// (NVFP4 training's weights, arXiv 2509.25149 section 4; Transformer Engine's
// NVFP4QuantizerRef with quant_tile_shape (16, 16)) are values of it. The
// overloads taking `cols` read x as rows of cols elements (the last row may
// be shorter); block (R, C) holds the elements of rows [R block_rows,
// (R + 1) block_rows) and columns [C block_size, (C + 1) block_size) that
// exist, and its scale is scales[R * ceil(cols / block_size) + C] -- one
// scale per block, row-major over blocks, ceil(rows / block_rows) *
// ceil(cols / block_size) of them (scales_needed(s, n, cols)); a block past
// the end of a shorter last row holds no element and gets an all-zero
// block's scale. A block
// never spans two rows' ends: with cols given, a 1 x B scheme's blocks restart
// at each row, and with cols a multiple of B that is the flat form's layout.
// Every rule below reads the block's amax over all its elements, so a block's
// scale is the scale of its elements taken as one run, and transposing the
// matrix transposes the blocks: quantizing W^T with B x R blocks gives W's
// codes transposed (what makes 2D weights usable in both the forward and the
// backward GEMM). A GEMM's block-scaled instruction reads K-major 1 x B
// blocks; a 2D-scaled operand gives each 1 x B slice its block's scale
// (row_scales below; TE's reference stores them so, repeated per row).
//
// ---------------------------------------------------------------------------
// Block scale rules (ScaleRule), per block with amax = max |x_i| over the block:
//
// floor (OCP MX v1.0 section 6.3): the scale is 2^X with
//     X = floor(log2(amax)) - emax_elem,
//   emax_elem the exponent of the element format's largest normal value
//   (finfo<Elem>::maxexp - 1: 8 for E4M3, 15 for E5M2, 2 for E2M3 and E2M1,
//   4 for E3M2). The largest element of the block lands in the element's top
//   binade, so a block maximum above max_elem * 2^X saturates (E4M3 amax 500:
//   X = 8 - 8 = 0 and 500 becomes 448).
// ceil (arXiv 2506.08027, "Recipes for Pre-training LLMs with MXFP8"): the
//   smallest power of two with amax / 2^X <= max_elem,
//     X = ceil(log2(amax / max_elem)),
//   so no element saturates (E4M3 amax 500: X = 1, 500 becomes 250 -> 256).
// rceil (cuBLAS's and Transformer Engine's MXFP8 scales; torchao's RCEIL):
//   ceil's quotient as those libraries compute it, a float32 product
//     q = amax * float(1 / max_elem),   X = ceil(log2(q))
//   (TE: float_to_e8m0(amax * max_norm_rcp), cvt.rp.satfinite.ue8m0x2.f32).
//   Where q is a normal float its rounding never crosses a power of two, and
//   rceil is ceil (1 / max_elem rounds up for every MX element format; the
//   sweep checks it on the decision-covering set). Below 2^-126 q is rounded to
//   2^-149's grid: for each MX element format one amax, the float after
//   max_elem * 2^-127 (E4M3: 0x1.c00002p-119), gives q = 2^-127, so X = -127
//   where ceil gives -126, and the block maximum saturates.
// even (torchao's EVEN): amax rounded to the element's 1 + M significant
//   bits, ties away from zero (torchao adds 2^(22 - M) to amax's bits and
//   keeps sign and exponent), then floor's formula:
//     X = floor(log2(round(amax))) - emax_elem
//   (E4M3 amax 500 = 1.953 * 2^8 rounds to 2^9: X = 1, where floor gives 0).
// ceil_amax (torchao's CEIL): X = ceil(log2(amax)) - emax_elem, one binade
//   above floor unless amax is a power of two (E4M3 amax 300: X = 1, where
//   ceil gives 0: 300 < 448).
// All compute X exactly (integer arithmetic on amax's exponent and
// significand; rceil's product too, so that no floating-point environment
// changes it) and clamp it to the powers of two the scale format holds,
// [-127, 127] for E8M0. amax = 0 has log2 = -inf and clamps to the smallest,
// X = -127 (any scale decodes an all-zero block to zeros; this one is what the
// formula gives); its elements are zeros with the signs of the inputs. Elements are
//     elem_i = convert<Elem>(x_i / 2^X, nearest_even, saturate).
//
// amax_ratio (NVFP4, arXiv 2509.25149 "Pretraining Large Language Models with
//   NVFP4"; Transformer Engine): the scale is amax / max_elem rounded
//   into the scale format, after the tensor scale below. In float32
//   arithmetic, each operation rounded to nearest-even, in this order:
//     s_dec  = amax / max_elem                     (NVFP4: amax / 6)
//     v      = s_dec * s_enc                       (s_enc = 1 without tensor scale)
//     scale  = convert<Scale>(v, nearest_even, saturate)
//              (a scale format without zero, E8M0, gets its smallest value for v = 0)
//     k      = min(s_enc / float(scale), FLT_MAX), or 0 where float(scale) = 0
//     elem_i = convert<Elem>(x_i * k, nearest_even, saturate)
//   (k is clamped, as in Transformer Engine, so that a zero element never
//   meets an infinite k.) Transformer Engine evaluates the same quantities in
//   another order, which can differ from this one in the last bit of v or k
//   and so in a scale or an element: amax_ratio_te below is TE's.
//
// amax_ratio_te (nvfp4_te): NVFP4 exactly as Transformer Engine's published
//   reference computes it (transformer_engine/pytorch/custom_recipes/
//   quantization_nvfp4.py, NVFP4QuantizerRef, 1x16 blocks, round to
//   nearest; TE's tests hold its CUDA kernels to it bit for bit on finite
//   inputs -- its kernels drop a NaN from amax, its reference does not), each
//   operation in float32 rounded to nearest-even, with M = max_elem *
//   max_scale (2688):
//     s_enc  = min(M / amax_t, FLT_MAX), 1 where that is 0 (amax_t = inf);
//              FLT_MAX for amax_t = 0; NaN when the tensor holds a NaN
//     t      = min(amax * (s_enc * (1 / max_elem)), FLT_MAX)
//     scale  = convert<Scale>(t, nearest_even, saturate)
//     k      = min(1 / (float(scale) * (1 / s_enc)), FLT_MAX)
//     elem_i = convert<Elem>(x_i * k, nearest_even, saturate), -0 and NaN as +0
//   A NaN anywhere poisons the tensor (TE's amax is NaN): every scale is NaN
//   and every element +0. An infinity is an ordinary amax: s_enc = 1, its
//   block's scale max_scale, the infinity itself max_elem. The value
//   quantize writes to *tensor_scale is the tensor's amax, as TE stores it,
//   and dequantization is TE's (its dequantize kernel, which its C++ test
//   matches):
//     y_i = float(elem_i) * ((float(scale) * amax_t) * float(1.0 / M))
//   A block-scaled matmul multiplies such operands' product by
//   (amax_a * amax_b) / M^2, TE's GEMM alpha.
//
// Tensor scale (tensor_scale = true, NVFP4), with amax_t = max |x_i| over the
// whole tensor, following Transformer Engine's global encode scale:
//     s_enc = (max_elem * max_scale) / amax_t      (NVFP4: 6 * 448 = 2688)
//   in float32; s_enc = FLT_MAX where that overflows (subnormal amax_t), and
//   s_enc = 1 where amax_t is 0, infinite or NaN. quantize writes s_enc to
//   *tensor_scale.
//
// Non-finite inputs (OCP MX v1.0 section 6.3 computes X from amax, which is
// NaN or infinite for such a block; section 5 makes a block with a NaN scale
// all NaN): a block holding a NaN or an infinity gets the scale format's NaN
// (E8M0 0xFF, E4M3 0x7F) and all its elements are +0 codes. This is done for
// every rule, NVFP4 included; the other blocks are unaffected.
//
// Dequantization, in float32:
//     y_i = (float(elem_i) * float(scale)) / s_enc    (schemes with a tensor scale)
//     y_i =  float(elem_i) * float(scale)              (otherwise)
//   and y_i = NaN for every element of a block whose scale is NaN. With a
//   power-of-two scale the product is exact (at most 4 significant bits,
//   never below float's subnormal quantum) unless it overflows float.
//
// Fast path. x_i * 2^-X is computed in float with the exact power of two
// 2^-X and then rounded by the bulk kernels. This rounds the exact quotient
// x_i / 2^X: scaling by a power of two only moves the exponent, so the
// product is exact wherever it lies in float's normal range; above that range
// (possible only after clamping X) both the product (infinity) and the exact
// quotient saturate to max_elem; below 2^-126 the product may lose bits, but
// there both it and the exact quotient lie below half the element format's
// smallest subnormal (2^-17 for E5M2, the finest) and round to a zero of the
// same sign under nearest-even. The test reference rounds the exact quotient
// computed in double.
//
// ---------------------------------------------------------------------------
// Per-tensor scaling (TensorScaling<Elem>, FP8 training): one float scale
//     scale = (max_elem / amax) * 2^-margin     (float32, in that order)
//   FLT_MAX where that overflows, the smallest positive float where it
//   underflows to 0, and 1 where amax is 0, infinite or NaN (Transformer
//   Engine's compute_scale_from_amax and its delayed-scaling margin).
//     elem_i = convert<Elem>(x_i * scale, nearest_even, saturate),  y_i = float(elem_i) / scale.
//   amax comes from the tensor itself (AmaxSource::current, TE's "current
//   scaling") or from an amax history (delayed scaling): its maximum, or its
//   most recent entry, history[0] as in TE's amax_history.
//
// amax everywhere is the largest magnitude, NaN if any element is NaN.
//
// Errors: spans of the wrong size, block_size or block_rows < 1, a scheme of
// multi-row blocks called without the row length, a tensor scale with a
// power-of-two rule, a missing tensor_scale output or an empty history throw
// std::invalid_argument before anything is written. Overflow and NaN are
// values, never exceptions.
//
// The element formats are the OCP FP8/FP6/FP4 types and the fnuz FP8 types
// (BlockElement), the scales E8M0 and E4M3 (BlockScale); the library is
// compiled for every pair of LPLAB_BLOCK_PAIRS (scaling_formats.h: today
// every combination). The formats are deduced from the scheme
// alone, so vectors and arrays convert to the span parameters:
//   std::vector<lplab::float4_e2m1fn> q(n);
//   std::vector<lplab::float8_e4m3fn> sc(scales_needed(nvfp4, n));
//   float s_enc;
//   lplab::kernels::quantize(lplab::kernels::nvfp4, x, q, sc, &s_enc);
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "lplab/formats.h"
#include "lplab/kernels/cvt_rs.h"
#include "lplab/kernels/packed.h"
#include "lplab/kernels/scale_rules.h"      // ScaleRule, and the rules below as portable code
#include "lplab/kernels/scaling_formats.h"  // BlockElement, BlockScale, BlockPair: the formats' lists

namespace lplab::kernels {

// A block-scaling scheme, for a pair of LPLAB_BLOCK_PAIRS (scaling_formats.h).
template <BlockElement Elem, BlockScale Scale>
  requires BlockPair<Elem, Scale>
struct BlockScaling {
  using element_type = Elem;
  using scale_type = Scale;

  int block_size = 32;  // elements along a row (K)
  int block_rows = 1;   // rows per block: 1 for 1 x block_size, 16 for NVFP4's 16 x 16 weights
  ScaleRule rule = ScaleRule::floor;
  // A second-level fp32 scale for the whole tensor (requires amax_ratio or
  // amax_ratio_te; amax_ratio_te requires it).
  bool tensor_scale = false;
};

// The block schemes, one line each: X(name, element, scale, settings),
// where settings are BlockScaling's designated initializers (none: OCP MX's
// 32 elements, the floor rule, no tensor scale). Each becomes a constant
// below (kernels::mxfp4, ...) and is listed by that name wherever schemes are
// enumerated: tables, specs, the CLI, the experiments' scheme list
// (scaled.h), footprint and Python's block_schemes().
// - mxfp8_*, mxfp6_*, mxfp4: OCP Microscaling Formats (MX) v1.0, section 5.3,
//   Table 1: 32 elements share an E8M0 scale.
// - nvfp4 (arXiv 2509.25149): 16 E2M1 elements share an E4M3 scale, plus an
//   fp32 scale per tensor; nvfp4_te is the same in Transformer Engine's
//   reference order (amax_ratio_te, scale_rules.h).
#define LPLAB_BLOCK_SCHEMES(X)                                                                      \
  X(mxfp8_e4m3, float8_e4m3fn, float8_e8m0fnu)                                                      \
  X(mxfp8_e5m2, float8_e5m2, float8_e8m0fnu)                                                        \
  X(mxfp6_e2m3, float6_e2m3fn, float8_e8m0fnu)                                                      \
  X(mxfp6_e3m2, float6_e3m2fn, float8_e8m0fnu)                                                      \
  X(mxfp4, float4_e2m1fn, float8_e8m0fnu)                                                           \
  X(nvfp4, float4_e2m1fn, float8_e4m3fn, .block_size = 16, .rule = ScaleRule::amax_ratio, .tensor_scale = true) \
  X(nvfp4_te, float4_e2m1fn, float8_e4m3fn, .block_size = 16, .rule = ScaleRule::amax_ratio_te, .tensor_scale = true)

#define LPLAB_KERNELS_BLOCK_SCHEME(name, Elem, Scale, ...) \
  inline constexpr BlockScaling<Elem, Scale> name{__VA_ARGS__};
LPLAB_BLOCK_SCHEMES(LPLAB_KERNELS_BLOCK_SCHEME)

// The schemes of matrices (blocks of more than one row), which take the
// matrix's row length (the overloads with `cols`), as LPLAB_BLOCK_SCHEMES:
// - nvfp4_2d, nvfp4_te_2d: NVFP4 with 16 x 16 blocks, NVFP4 training's
//   weights (arXiv 2509.25149 section 4, "2D block scaling"; Transformer
//   Engine's NVFP4BlockScaling recipe, fp4_2d_quantization for weights),
//   in lplab's and in TE's order.
// - deepseek_1x128, deepseek_128x128: DeepSeek-V3's fine-grained FP8 tiles
//   (arXiv 2412.19437 section 3.3.2: 1 x 128 activation tiles, 128 x 128
//   weight blocks, E4M3, fp32 scales; ScaleRule::deepseek).
// - te_blockwise_1x128, te_blockwise_128x128: Transformer Engine's
//   Float8BlockScaling defaults (1 x 128 activations and gradients, 128 x 128
//   weights, E4M3, power-of-two fp32 scales; ScaleRule::te_fp32_pow2).
// The tiles restart at each row, as the matrix form's blocks do; these are
// the TileScaling constants below (deepseek_activations ...) as block
// schemes, equal to them code for code (block_shapes_test.cpp).
#define LPLAB_MATRIX_BLOCK_SCHEMES(X)                                                                             \
  X(nvfp4_2d, float4_e2m1fn, float8_e4m3fn, .block_size = 16, .block_rows = 16, .rule = ScaleRule::amax_ratio, \
    .tensor_scale = true)                                                                                       \
  X(nvfp4_te_2d, float4_e2m1fn, float8_e4m3fn, .block_size = 16, .block_rows = 16,                             \
    .rule = ScaleRule::amax_ratio_te, .tensor_scale = true)                                                     \
  X(deepseek_1x128, float8_e4m3fn, float32, .block_size = 128, .rule = ScaleRule::deepseek)                    \
  X(deepseek_128x128, float8_e4m3fn, float32, .block_size = 128, .block_rows = 128, .rule = ScaleRule::deepseek) \
  X(te_blockwise_1x128, float8_e4m3fn, float32, .block_size = 128, .rule = ScaleRule::te_fp32_pow2)            \
  X(te_blockwise_128x128, float8_e4m3fn, float32, .block_size = 128, .block_rows = 128,                        \
    .rule = ScaleRule::te_fp32_pow2)
LPLAB_MATRIX_BLOCK_SCHEMES(LPLAB_KERNELS_BLOCK_SCHEME)
#undef LPLAB_KERNELS_BLOCK_SCHEME

// Scales for n elements in the flat form: ceil(n / block_size) (a scheme of
// one-row blocks; one of more rows needs the shape, below).
template <class Elem, class Scale>
constexpr std::size_t scales_needed(const BlockScaling<Elem, Scale>& s, std::size_t n) noexcept {
  const auto b = static_cast<std::size_t>(s.block_size);
  return n / b + (n % b != 0 ? 1 : 0);
}

// Scales for n elements in rows of cols (the last row may be shorter):
// ceil(rows / block_rows) * ceil(cols / block_size), 0 for n = 0 or cols = 0.
template <class Elem, class Scale>
constexpr std::size_t scales_needed(const BlockScaling<Elem, Scale>& s, std::size_t n, std::size_t cols) noexcept {
  if (n == 0 || cols == 0) return 0;
  const std::size_t rows = n / cols + (n % cols != 0 ? 1 : 0);
  const auto br = static_cast<std::size_t>(s.block_rows), bc = static_cast<std::size_t>(s.block_size);
  return (rows / br + (rows % br != 0 ? 1 : 0)) * (cols / bc + (cols % bc != 0 ? 1 : 0));
}

// Storage per element, block scale included, tensor scale excluded (it is
// amortised over the tensor): MXFP8 8 + 8/32 = 8.25, MXFP6 6.25, MXFP4 4.25,
// NVFP4 4 + 8/16 = 4.5, NVFP4 with 16 x 16 blocks 4 + 8/256 = 4.03125.
template <class Elem, class Scale>
constexpr double bits_per_element(const BlockScaling<Elem, Scale>& s) noexcept {
  return finfo<Elem>::bits + static_cast<double>(finfo<Scale>::bits) / (s.block_size * s.block_rows);
}

// Bits for n elements (packed), their scales and the fp32 tensor scale: in
// the flat form, and for a matrix in rows of cols.
template <class Elem, class Scale>
constexpr std::uint64_t storage_bits(const BlockScaling<Elem, Scale>& s, std::size_t n) noexcept {
  return std::uint64_t{n} * finfo<Elem>::bits + scales_needed(s, n) * finfo<Scale>::bits +
         (s.tensor_scale ? 32 : 0);
}
template <class Elem, class Scale>
constexpr std::uint64_t storage_bits(const BlockScaling<Elem, Scale>& s, std::size_t n, std::size_t cols) noexcept {
  return std::uint64_t{n} * finfo<Elem>::bits + scales_needed(s, n, cols) * finfo<Scale>::bits +
         (s.tensor_scale ? 32 : 0);
}

// Each 1 x block_size slice's scale, as a block-scaled GEMM reads them and
// Transformer Engine's reference stores 2D-scaled NVFP4 (repeated on each
// row of a block): out[r * ceil(cols / block_size) + C] = scales[(r /
// block_rows) * ceil(cols / block_size) + C] for the rows of n elements in
// rows of cols; out.size() is scales_needed(s', n, cols) for s' the scheme
// with block_rows = 1.
// std::invalid_argument for spans of the wrong size.
template <BlockElement Elem, BlockScale Scale>
void row_scales(const BlockScaling<Elem, Scale>& s, std::size_t n, std::size_t cols,
                std::span<const std::type_identity_t<Scale>> scales, std::span<std::type_identity_t<Scale>> out);

// Quantizes x: elems.size() == x.size(), scales.size() == scales_needed(s,
// x.size()). For a scheme with a tensor scale, s_enc is written to
// *tensor_scale (required; amax_ratio_te: the tensor's amax, from which TE
// derives s_enc); otherwise 1 is written there if it is given. `threads`
// worker threads share large tensors (at least 256K elements each): 1 (the
// default) runs on the calling thread, 0 uses every core; the result does
// not depend on it.
template <BlockElement Elem, BlockScale Scale>
void quantize(const BlockScaling<Elem, Scale>& s, std::span<const float> x,
              std::span<std::type_identity_t<Elem>> elems,
              std::span<std::type_identity_t<Scale>> scales, float* tensor_scale = nullptr,
              unsigned threads = 1);

// y = the dequantized tensor, y.size() == elems.size(). tensor_scale is what
// quantize wrote (s_enc; amax_ratio_te: the tensor's amax); it is ignored by
// schemes without one.
template <BlockElement Elem, BlockScale Scale>
void dequantize(const BlockScaling<Elem, Scale>& s,
                std::span<const std::type_identity_t<Elem>> elems,
                std::span<const std::type_identity_t<Scale>> scales, std::span<float> y,
                float tensor_scale = 1.0f);

// The same with FP4/FP6 elements packed as packed.h stores them:
// bytes.size() == packed_bytes<Elem>(x.size()). Bit-identical to quantize
// followed by pack, and to unpack followed by dequantize.
template <BlockElement Elem, BlockScale Scale>
  requires PackedFormat<Elem>
void quantize_packed(const BlockScaling<Elem, Scale>& s, std::span<const float> x,
                     std::span<std::uint8_t> bytes, std::span<std::type_identity_t<Scale>> scales,
                     float* tensor_scale = nullptr, unsigned threads = 1);
template <BlockElement Elem, BlockScale Scale>
  requires PackedFormat<Elem>
void dequantize_packed(const BlockScaling<Elem, Scale>& s, std::span<const std::uint8_t> bytes,
                       std::span<const std::type_identity_t<Scale>> scales, std::span<float> y,
                       float tensor_scale = 1.0f);

// The same for a matrix: x (or y) holds n elements in rows of `cols`, the
// last row possibly shorter, and scales.size() == scales_needed(s, n, cols).
// Required for a scheme whose blocks span rows (block_rows > 1), which the
// flat forms above refuse; for 1 x B blocks and cols a multiple of B the
// result is the flat form's. std::invalid_argument for cols = 0.
template <BlockElement Elem, BlockScale Scale>
void quantize(const BlockScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
              std::span<std::type_identity_t<Elem>> elems, std::span<std::type_identity_t<Scale>> scales,
              float* tensor_scale = nullptr, unsigned threads = 1);
template <BlockElement Elem, BlockScale Scale>
void dequantize(const BlockScaling<Elem, Scale>& s, std::span<const std::type_identity_t<Elem>> elems,
                std::size_t cols, std::span<const std::type_identity_t<Scale>> scales, std::span<float> y,
                float tensor_scale = 1.0f);
template <BlockElement Elem, BlockScale Scale>
  requires PackedFormat<Elem>
void quantize_packed(const BlockScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
                     std::span<std::uint8_t> bytes, std::span<std::type_identity_t<Scale>> scales,
                     float* tensor_scale = nullptr, unsigned threads = 1);
template <BlockElement Elem, BlockScale Scale>
  requires PackedFormat<Elem>
void dequantize_packed(const BlockScaling<Elem, Scale>& s, std::span<const std::uint8_t> bytes, std::size_t cols,
                       std::span<const std::type_identity_t<Scale>> scales, std::span<float> y,
                       float tensor_scale = 1.0f);

// Stochastic rounding of the elements, as NVFP4 training rounds gradients
// (arXiv 2509.25149 section 4.3; Transformer Engine's NVFP4 quantizer with
// stochastic_rounding): the scales, the tensor scale and the scaled values
// x_i * k are quantize()'s, and each group of 4 consecutive elements (in
// memory order over the whole tensor, group g = elements [4g, 4g + 4)) is one
// cvt.rs.satfinite instruction of the element's x4 form (cvt_rs.h) with
// rbits_of(stream, seed, subsequence, g) split among its elements by the
// layout -- cvt_rs_bulk over the scaled values. A non-finite block's +0
// elements are +0 whatever their bits. The codes depend on the arguments
// only, not on `threads`. Elements without a cvt.rs form (the fnuz FP8
// types) throw std::invalid_argument.
struct StochasticElements {
  RbitsStream stream = RbitsStream::philox;
  std::uint64_t seed = 0;
  std::uint64_t subsequence = 0;  // torchtitan keys the stream per rank with it
  const RbitsLayout* layout = &kRbitsSm100a;
};
template <BlockElement Elem, BlockScale Scale>
void quantize_stochastic(const BlockScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
                         std::span<std::type_identity_t<Elem>> elems, std::span<std::type_identity_t<Scale>> scales,
                         const StochasticElements& rounding, float* tensor_scale = nullptr, unsigned threads = 1);

// ---------------------------------------------------------------------------
// Per-tensor scaling.

// Where the amax of a tensor's scale comes from, X(name, meaning).
#define LPLAB_AMAX_SOURCES(X)                                         \
  X(current, "the amax of the tensor being quantized")                \
  X(history_max, "the largest entry of the given amax history")       \
  X(history_most_recent, "its most recent entry, history[0]")
enum class AmaxSource : std::uint8_t { LPLAB_AMAX_SOURCES(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(AmaxSource, "amax source", LPLAB_AMAX_SOURCES)

template <BlockElement Elem>
struct TensorScaling {
  using element_type = Elem;

  int margin = 0;  // the scale is divided by 2^margin
  AmaxSource amax = AmaxSource::current;
};

inline constexpr TensorScaling<float8_e4m3fn> fp8_e4m3_tensor{};
inline constexpr TensorScaling<float8_e5m2> fp8_e5m2_tensor{};

struct TensorScaleResult {
  float scale;  // the scale used: elem = convert(x * scale), y = elem / scale
  float amax;   // the amax of x, for the caller's amax history
};

// The largest |x_i|; NaN if some x_i is NaN, 0 for an empty span.
float amax(std::span<const float> x) noexcept;

// The scale for a given amax, by the formula above.
template <BlockElement Elem>
float tensor_scale_for(const TensorScaling<Elem>& s, float amax) noexcept;

// Quantizes x into out (same size). `history` is read by the history sources
// and must then be non-empty.
template <BlockElement Elem>
TensorScaleResult quantize(const TensorScaling<Elem>& s, std::span<const float> x,
                           std::span<std::type_identity_t<Elem>> out,
                           std::span<const float> history = {});

template <BlockElement Elem>
void dequantize(const TensorScaling<Elem>& s, std::span<const std::type_identity_t<Elem>> elems,
                float scale, std::span<float> y);

// The element step of per-tensor scaling with a scale the caller chose:
// elem_i = convert<Elem>(x_i * scale, nearest_even, saturate). Returns amax(x).
template <BlockElement Elem>
float quantize_with_scale(std::span<const float> x, std::span<std::type_identity_t<Elem>> out, float scale);

// ---------------------------------------------------------------------------
// Delayed scaling over training steps: Transformer Engine's DelayedScaling
// recipe (transformer_engine.common.recipe; the PyTorch module fp8.py,
// _default_get_amax_and_update_history and _default_sf_compute), one
// quantity whose tensor is quantized once a step.
//
//   step t:  elem = convert<Elem>(x_t * scale_t)  (quantize_with_scale), and
//            amax(x_t) is recorded in the history, which holds the last
//            history_len steps' amaxes (zeros before the first steps);
//   then:    a = max(history) (AmaxSource::history_max, TE's "max") or
//            amax(x_t) (history_most_recent, TE's "most_recent"), and
//            scale_{t+1} = (max_elem / a) / 2^margin  (float32, in that order)
//            where a > 0 and a is finite; otherwise scale_{t+1} = scale_t.
//   scale_0 = 1 (TE's initial scale).
// So a step is scaled by the amaxes of the steps before it: a tensor whose
// amax grows past the history's saturates, one that shrinks underflows.
// Where TE's quotient overflows to infinity (a < max_elem / FLT_MAX) lplab
// uses FLT_MAX (tensor_scale_for's clamp); TE's dequantization multiplies by
// 1 / scale, lplab's divides (TensorScaling's dequantize), which can differ
// in the last bit of y; the elements are TE's.
template <BlockElement Elem>
struct DelayedScaling {
  int margin = 0;
  int history_len = 1024;                      // TE's default amax_history_len
  AmaxSource amax = AmaxSource::history_max;  // or history_most_recent; not current
};

inline constexpr DelayedScaling<float8_e4m3fn> fp8_e4m3_delayed{};
inline constexpr DelayedScaling<float8_e5m2> fp8_e5m2_delayed{};

template <BlockElement Elem>
class DelayedScaler {
 public:
  // std::invalid_argument for history_len < 1 or AmaxSource::current.
  explicit DelayedScaler(const DelayedScaling<Elem>& recipe);

  // Quantizes this step's tensor with the current scale, records its amax
  // and updates the scale for the next step. Returns the scale used and the
  // tensor's amax.
  TensorScaleResult step(std::span<const float> x, std::span<std::type_identity_t<Elem>> out);
  float scale() const noexcept { return scale_; }

 private:
  DelayedScaling<Elem> recipe_;
  std::vector<float> history_;  // a ring: history_[next_] is the oldest entry
  std::size_t next_ = 0;
  float scale_ = 1.0f;
};

// ---------------------------------------------------------------------------
// Fine-grained FP8 scaling of a matrix (DeepSeek-V3, arXiv 2412.19437,
// section 3.3.1; the casts of DeepGEMM's tests, per_token_cast_to_fp8 and
// per_block_cast_to_fp8): tiles of tile_rows x tile_cols elements, each with
// an fp32 scale. DeepSeek-V3 uses 1 x 128 tiles for activations (per token
// and 128 channels) and 128 x 128 blocks for weights.
//
// x is a row-major matrix of rows of `cols` elements; the last row may be
// shorter (rows = ceil(n / cols)). Tile (R, C) holds the elements of rows
// [R tile_rows, (R + 1) tile_rows) and columns [C tile_cols, (C + 1)
// tile_cols) that exist; scales are stored tile by tile, row-major over
// (R, C): ceil(rows / tile_rows) * ceil(cols / tile_cols) of them. Per tile,
// in float32 arithmetic, each operation rounded to nearest-even:
//     a      = max(amax, amax_floor)          (DeepGEMM: clamp(1e-4))
//     elem_i = convert<Elem>(x_i * (max_elem / a), nearest_even, saturate)
//     scale  = a / max_elem
//     y_i    = float(elem_i) * scale
// A tile holding a NaN or an infinity gets a NaN scale, +0 elements and NaN
// values (as MX blocks do; DeepGEMM's cast gives NaN elements there and its
// dequantized tile is NaN all the same).
//
// Transformer Engine's Float8BlockScaling (TileRule::te and te_pow2;
// common/recipe/recipe_common.cuh, compute_scale_from_amax, and the cast of
// common/transpose/quantize_transpose_square_blockwise.cu), per tile, in
// float32:
//     a      = the largest |x_i| that is not NaN (CUDA's fmaxf drops NaN),
//              then max(a, amax_floor) (TE's amax_epsilon, 0 by default)
//     s      = 1 where a is 0 or infinite; else max_elem / a, FLT_MAX where
//              that overflows (TE's value_for_inf for fp32 input), and for
//              te_pow2 with its mantissa cleared (bits & 0xFF800000)
//     elem_i = convert<Elem>(x_i * s, nearest_even, saturate)  (NaN stays NaN)
//     scale  = 1 / s   (TE's scale_inv, what is stored)
//     y_i    = float(elem_i) * scale
// te_pow2's s is the largest power of two at most max_elem / a: 1 / s is
// the ceil rule's 2^X wherever max_elem / a is a normal float.
#define LPLAB_TILE_RULES(X)                                                                                   \
  X(deepseek, "DeepSeek-V3 / DeepGEMM: max(amax, amax_floor) / max_elem, elements x * (max_elem / that)")      \
  X(te, "Transformer Engine Float8BlockScaling: 1 / s with s = max_elem / amax (1 for amax 0 or inf)")        \
  X(te_pow2, "the same with s's mantissa cleared: TE's power-of-two scales (its default)")
enum class TileRule : std::uint8_t { LPLAB_TILE_RULES(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(TileRule, "tile rule", LPLAB_TILE_RULES)

template <BlockElement Elem>
struct TileScaling {
  using element_type = Elem;
  int tile_rows = 1, tile_cols = 128;
  float amax_floor = 1e-4f;
  TileRule rule = TileRule::deepseek;
};

inline constexpr TileScaling<float8_e4m3fn> deepseek_activations{.tile_rows = 1, .tile_cols = 128};
inline constexpr TileScaling<float8_e4m3fn> deepseek_weights{.tile_rows = 128, .tile_cols = 128};
// TE's Float8BlockScaling defaults: E4M3, 1 x 128 activations and gradients,
// 128 x 128 weights, power-of-two scales, amax_epsilon 0.
inline constexpr TileScaling<float8_e4m3fn> te_blockwise_activations{
    .tile_rows = 1, .tile_cols = 128, .amax_floor = 0.0f, .rule = TileRule::te_pow2};
inline constexpr TileScaling<float8_e4m3fn> te_blockwise_weights{
    .tile_rows = 128, .tile_cols = 128, .amax_floor = 0.0f, .rule = TileRule::te_pow2};

// Scales for n elements in rows of `cols` (0 for n = 0).
template <class Elem>
constexpr std::size_t tile_scales_needed(const TileScaling<Elem>& s, std::size_t n, std::size_t cols) noexcept {
  if (n == 0 || cols == 0) return 0;
  const std::size_t rows = n / cols + (n % cols != 0 ? 1 : 0);
  const auto tr = static_cast<std::size_t>(s.tile_rows), tc = static_cast<std::size_t>(s.tile_cols);
  return (rows / tr + (rows % tr != 0 ? 1 : 0)) * (cols / tc + (cols % tc != 0 ? 1 : 0));
}

// std::invalid_argument for tiles smaller than 1 x 1, cols = 0, a negative
// or non-finite amax_floor, or spans of the wrong size.
template <BlockElement Elem>
void quantize(const TileScaling<Elem>& s, std::span<const float> x, std::size_t cols,
              std::span<std::type_identity_t<Elem>> elems, std::span<float> scales);
template <BlockElement Elem>
void dequantize(const TileScaling<Elem>& s, std::span<const std::type_identity_t<Elem>> elems, std::size_t cols,
                std::span<const float> scales, std::span<float> y);

}  // namespace lplab::kernels
