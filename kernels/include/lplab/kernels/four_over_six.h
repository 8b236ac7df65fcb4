// Four Over Six (arXiv 2512.02010; PyPI fouroversix 1.0.5; FlashInfer's
// NVFP44Over6Config; Transformer Engine's NVTE_NVFP4_4OVER6): NVFP4 whose
// every block of 16 is quantized twice -- its scale mapping the block's
// largest magnitude to E2M1's 6, and to 4 (the scale times 1.5) -- and keeps
// the candidate with the smaller error against the input. The tensor scale
// leaves room for the larger scale: amax / (6 * 256), not amax / (6 * 448),
// so that 1.5 * 256 = 384 stays an E4M3 value.
//
// Per block, every operation a float32 one rounded to nearest-even
// (fouroversix's quantize/pytorch/reference.py, quantize_to_nvfp4 and
// select_fouroversix; N = 6 * e4m3_max, 1536 by default):
//   1. enc = N / amax (amax of the whole tensor; 0: every scale and code 0);
//   2. s6 = e4m3((bmax / 6) * enc), s4 = e4m3(((bmax / 6) * enc) * 1.5),
//      bmax the block's largest magnitude, e4m3 nearest-even, saturating;
//   3. for each candidate s: q = e2m1(x * (1 / ((1 / enc) * s)))
//      (nearest-even, saturating; s = 0: q = +0);
//   4. d = ((q * s) * amax) / N, the error against x summed over the block in
//      element order, each term rounded (MSE: (d - x)^2; MAE: |d - x|;
//      abs_max: the largest |d - x|);
//   5. 4 is kept only where its error is strictly smaller: ties keep 6.
// The stored scale is the kept candidate's; decoding is the same for both,
// ((q * s) * amax) / N. Transformer Engine's order (four_over_six_te) differs
// only at the edges: enc = min(N / amax, FLT_MAX) and 1 for amax = 0; the
// scales clamped to 448 before rounding; the element factor
// min(1 / (s * (1 / enc)), FLT_MAX) and x * factor clamped to +-6, so that a
// zero scale gives codes +-6 (that decode to 0) instead of 0.
//
// fouroversix's own backends (PyTorch, Triton, CUDA) sum the errors in
// different orders and its tests accept 0.1% of scales differing between
// them; lplab fixes element order, as its CUDA kernel and TE's reference sum
// (torch.sum's order in the PyTorch reference is torch's own, which agrees
// on every golden). With e4m3_max above 448 / 1.5 the map-to-4 scale can
// pass 448: lplab saturates it (torch's cast would give NaN).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "lplab/formats.h"
#include "lplab/formats/enum_table.h"

namespace lplab::kernels {

#define LPLAB_FOUR_OVER_SIX_METRICS(X)                                \
  X(mse, "sum over the block of (d - x)^2 (fouroversix's default)")  \
  X(mae, "sum over the block of |d - x| (FlashInfer's and TE's default)") \
  X(abs_max, "the largest |d - x| in the block")
enum class FourOverSixMetric : std::uint8_t { LPLAB_FOUR_OVER_SIX_METRICS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(FourOverSixMetric, "4/6 error metric", LPLAB_FOUR_OVER_SIX_METRICS)

#define LPLAB_FOUR_OVER_SIX_ORDERS(X)                                                 \
  X(fouroversix, "fouroversix 1.0.5's PyTorch reference (quantize/pytorch/reference.py)") \
  X(te, "Transformer Engine's _quantize_blockwise_4over6_reference (clamps, FLT_MAX)")
enum class FourOverSixOrder : std::uint8_t { LPLAB_FOUR_OVER_SIX_ORDERS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(FourOverSixOrder, "4/6 operation order", LPLAB_FOUR_OVER_SIX_ORDERS)

struct FourOverSix {
  FourOverSixMetric metric = FourOverSixMetric::mse;
  // The E4M3 bound of the tensor scale: 256 (fouroversix, TE's recipe) or
  // 448 (FlashInfer's default, TE's quantizer default).
  float e4m3_max = 256.0f;
  FourOverSixOrder order = FourOverSixOrder::fouroversix;
};
inline constexpr int kFourOverSixBlock = 16;

// One block of `n` <= 16 elements (a short last block holds fewer):
// codes, the kept scale, and whether it is the map-to-4 one.
struct FourOverSixBlock {
  float4_e2m1fn codes[kFourOverSixBlock];
  float8_e4m3fn scale;
  bool four;
};

namespace four_over_six_detail {

LPLAB_HD constexpr float min_of(float a, float b) noexcept { return b < a ? b : a; }
LPLAB_HD constexpr float abs_of(float a) noexcept { return a < 0 ? -a : a; }
inline constexpr float kFloatMax = 0x1.fffffep127f;

// Steps 3-4 for one candidate scale: its codes and its error.
LPLAB_HD constexpr float candidate(const FourOverSix& p, const float* x, int n, float amax, float enc,
                                   float8_e4m3fn s, float4_e2m1fn* q) noexcept {
  const float sf = static_cast<float>(s);
  const float numerator = 6.0f * p.e4m3_max;
  float factor;
  if (p.order == FourOverSixOrder::te) factor = min_of(1.0f / (sf * (1.0f / enc)), kFloatMax);
  else factor = sf == 0.0f ? 0.0f : 1.0f / ((1.0f / enc) * sf);
  float err = 0.0f;
  for (int i = 0; i < n; ++i) {
    // (fouroversix: a zero scale gives +0, torch.where's literal 0.)
    float v = p.order == FourOverSixOrder::fouroversix && sf == 0.0f ? 0.0f : x[i] * factor;
    if (p.order == FourOverSixOrder::te) v = v > 6.0f ? 6.0f : v < -6.0f ? -6.0f : v;
    q[i] = lplab::convert<float4_e2m1fn>(v, Round::nearest_even, Overflow::saturate);
    const float d = ((static_cast<float>(q[i]) * sf) * amax) / numerator;
    const float diff = d - x[i];
    if (p.metric == FourOverSixMetric::mse) err = err + diff * diff;
    else if (p.metric == FourOverSixMetric::mae) err = err + abs_of(diff);
    else err = abs_of(diff) <= err ? err : abs_of(diff);  // a NaN difference stays, as torch's max
  }
  return err;
}

}  // namespace four_over_six_detail

// The tensor's encode scale from its amax (step 1): N / amax, with TE's
// order min(N / amax, FLT_MAX) and 1 for amax = 0; fouroversix's 0 for
// amax = 0 (every block then 0).
LPLAB_HD constexpr float four_over_six_encode(const FourOverSix& p, float amax) noexcept {
  const float numerator = 6.0f * p.e4m3_max;
  if (p.order == FourOverSixOrder::te) {
    const float enc = four_over_six_detail::min_of(numerator / amax, four_over_six_detail::kFloatMax);
    return amax == 0.0f || enc == 0.0f ? 1.0f : enc;
  }
  return amax == 0.0f ? 0.0f : numerator / amax;
}

// Step 2: a block's two candidate scales from its largest magnitude bmax
// (map to 6: (bmax / 6) * enc; map to 4: 1.5 times that; TE clamps both to 448).
struct FourOverSixScales {
  float8_e4m3fn six, four;
};
LPLAB_HD constexpr FourOverSixScales four_over_six_scales(const FourOverSix& p, float bmax, float enc) noexcept {
  namespace d = four_over_six_detail;
  const float s6_hp = (bmax / 6.0f) * enc;
  float s4_hp = s6_hp * 1.5f;
  float s6_in = s6_hp;
  if (p.order == FourOverSixOrder::te) {
    s6_in = d::min_of(s6_in, 448.0f);
    s4_hp = d::min_of(s4_hp, 448.0f);
  }
  return {lplab::convert<float8_e4m3fn>(s6_in, Round::nearest_even, Overflow::saturate),
          lplab::convert<float8_e4m3fn>(s4_hp, Round::nearest_even, Overflow::saturate)};
}

// Steps 2-5 for one block of n elements.
LPLAB_HD constexpr FourOverSixBlock four_over_six_block(const FourOverSix& p, const float* x, int n,
                                                        float amax) noexcept {
  namespace d = four_over_six_detail;
  FourOverSixBlock out{};
  const float enc = four_over_six_encode(p, amax);
  if (p.order == FourOverSixOrder::fouroversix && amax == 0.0f) {
    out.scale = float8_e4m3fn::from_bits(0);
    for (int i = 0; i < n; ++i) out.codes[i] = float4_e2m1fn::from_bits(0);
    out.four = false;
    return out;
  }
  float bmax = 0.0f;
  for (int i = 0; i < n; ++i) bmax = d::abs_of(x[i]) > bmax ? d::abs_of(x[i]) : bmax;
  const auto [s6, s4] = four_over_six_scales(p, bmax, enc);
  float4_e2m1fn q4[kFourOverSixBlock];
  const float err6 = d::candidate(p, x, n, amax, enc, s6, out.codes);
  const float err4 = d::candidate(p, x, n, amax, enc, s4, q4);
  out.four = err4 < err6;
  out.scale = out.four ? s4 : s6;
  if (out.four)
    for (int i = 0; i < n; ++i) out.codes[i] = q4[i];
  return out;
}

// A tensor of x.size() elements in blocks of 16 consecutive elements (the
// last may be short; for a matrix, rows of a multiple of 16 keep the blocks
// in their rows, as NVFP4's 1 x 16 blocks are):
// codes, one scale per block (scales.size() == ceil(n / 16)), the amax it
// used in *amax (the tensor's largest magnitude; NaN-free input expected,
// a NaN amax gives NaN scales), and, if given, how many blocks kept 4.
// Throws std::invalid_argument (before writing) for mismatched sizes.
void quantize_four_over_six(const FourOverSix& p, std::span<const float> x, std::span<float4_e2m1fn> elems,
                            std::span<float8_e4m3fn> scales, float* amax, std::size_t* blocks_of_four = nullptr);
// y = ((q * s) * amax) / (6 * e4m3_max), element by element.
void dequantize_four_over_six(const FourOverSix& p, std::span<const float4_e2m1fn> elems,
                              std::span<const float8_e4m3fn> scales, float amax, std::span<float> y);

// A matrix of rows of `cols` (the last may be shorter) in blocks of
// block_rows x 16 (1 or 16 rows: NVFP4 training's 16 x 16 weights), one
// scale per block, row-major over blocks (as BlockScaling's matrix form,
// scaling.h): ceil(rows / block_rows) * ceil(cols / 16) scales. A 16 x 16
// block is Transformer Engine's 2D Four Over Six (NVFP4QuantizerRef,
// _quantize_blockwise_4over6_reference with tile_len_y 16; TE's order only):
// both candidates' scales from the block's largest magnitude; each row's
// 1 x 16 slice quantized with each and its error summed over its 16
// elements in order, as for a 1 x 16 block; the 16 rows' errors added as
// TE's warp reduction does (rows 0-7 + 8-15, then 0-3 + 4-7, 0-1 + 2-3,
// 0 + 1; a row past the matrix adds 0); map to 4 where its sum is smaller.
// std::invalid_argument for block_rows other than 1 and 16, 16 with the
// fouroversix order, cols = 0, or mismatched sizes.
void quantize_four_over_six(const FourOverSix& p, std::span<const float> x, std::size_t cols, int block_rows,
                            std::span<float4_e2m1fn> elems, std::span<float8_e4m3fn> scales, float* amax,
                            std::size_t* blocks_of_four = nullptr);
void dequantize_four_over_six(const FourOverSix& p, std::span<const float4_e2m1fn> elems, std::size_t cols,
                              int block_rows, std::span<const float8_e4m3fn> scales, float amax, std::span<float> y);

}  // namespace lplab::kernels
