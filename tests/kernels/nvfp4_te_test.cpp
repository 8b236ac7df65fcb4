// nvfp4_te (ScaleRule::amax_ratio_te) against Transformer Engine's published
// NVFP4 reference, transcribed here operation by operation from
// transformer_engine/pytorch/custom_recipes/quantization_nvfp4.py
// (NVFP4QuantizerRef: the 1x16 path with round to nearest, which TE's
// tests hold its CUDA kernels to at atol = rtol = 0) and, for the values,
// from its dequantize kernel (common/cast/nvfp4/dequantize_nvfp4.cuh). The
// transcription takes nothing from lplab's kernels: its E2M1 rounding is
// TE's threshold table, its E4M3 cast the format core's conversion (checked
// against CUDA's on every float). Codes, scale bytes, the stored amax and
// the dequantized values must agree bit for bit, on the bulk and the packed
// paths; and TE's order must differ from lplab's nvfp4 somewhere, or the
// variant would be pointless.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "lplab/kernels/packed.h"
#include "lplab/kernels/scaling.h"

namespace lplab::kernels {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kFltMax = std::numeric_limits<float>::max();

struct TeQuantized {
  std::vector<std::uint8_t> codes;   // E2M1 codes, one per element
  std::vector<std::uint8_t> scales;  // E4M3 scale bytes
  float amax = 0;                    // what TE stores beside them
};

// torch.min(a, b) on float32 tensors propagates a NaN.
float torch_min(float a, float b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b); }
float torch_clamp(float v, float lo, float hi) { return std::isnan(v) ? v : std::min(std::max(v, lo), hi); }

// cast_to_fp4x2's table: magnitudes to E2M1 codes with ties to even, the
// sign bit for y < 0 only (so -0 gives +0), NaN +0.
std::uint8_t te_e2m1(float y) {
  if (std::isnan(y)) return 0;
  const float a = std::abs(y);
  const std::uint8_t mag = a <= 0.25f ? 0 : a < 0.75f ? 1 : a <= 1.25f ? 2 : a < 1.75f ? 3
                         : a <= 2.5f  ? 4 : a < 3.5f  ? 5 : a <= 5.0f  ? 6 : 7;
  return static_cast<std::uint8_t>(mag | (y < 0 ? 8 : 0));
}

TeQuantized te_reference(const std::vector<float>& x) {
  TeQuantized r;
  // global_amax = torch.max(torch.abs(x)) (NaN-propagating).
  float amax = 0;
  for (float v : x) amax = std::isnan(v) || std::isnan(amax) ? kNaN : std::max(amax, std::abs(v));
  r.amax = amax;
  // global_encode_scale = min(448 * 6 / amax, FLT_MAX), 1 where it is 0.
  float s_enc = torch_min(2688.0f / amax, kFltMax);
  if (s_enc == 0.0f) s_enc = 1.0f;
  const float g_dec = 1.0f / s_enc;
  const float multiplier = s_enc * (1.0f / 6.0f);  // global_encode_scale * torch.reciprocal(6)
  for (std::size_t b = 0; b < x.size(); b += 16) {
    float vec_max = 0;
    for (std::size_t i = b; i < b + 16; ++i)
      vec_max = std::isnan(x[i]) || std::isnan(vec_max) ? kNaN : std::max(vec_max, std::abs(x[i]));
    float decode = torch_min(vec_max * multiplier, kFltMax);
    decode = torch_clamp(decode, -448.0f, 448.0f);
    const float8_e4m3fn scale = convert<float8_e4m3fn>(decode, Round::nearest_even, Overflow::saturate);
    r.scales.push_back(static_cast<std::uint8_t>(scale.bits()));
    const float encode = torch_min(1.0f / (static_cast<float>(scale) * g_dec), kFltMax);
    for (std::size_t i = b; i < b + 16; ++i) r.codes.push_back(te_e2m1(torch_clamp(x[i] * encode, -6.0f, 6.0f)));
  }
  return r;
}

// dequantize_fp4_kernel: final_scale = scale * amax * (float)(1.0 / (6.0 * 448.0)), y = e * final_scale.
std::vector<float> te_dequantize(const TeQuantized& q) {
  const auto factor_inv = static_cast<float>(1.0 / (6.0 * 448.0));
  std::vector<float> y;
  for (std::size_t i = 0; i < q.codes.size(); ++i) {
    const float s = static_cast<float>(float8_e4m3fn::from_bits(q.scales[i / 16]));
    const float e = static_cast<float>(float4_e2m1fn::from_bits(q.codes[i]));
    const float final_scale = s * q.amax * factor_inv;
    y.push_back(e * final_scale);
  }
  return y;
}

bool same(float a, float b) { return std::isnan(a) ? std::isnan(b) : std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); }

// lplab's nvfp4_te on x against the transcription, on both paths.
void expect_te(const std::vector<float>& x, const char* what) {
  const TeQuantized want = te_reference(x);
  const std::vector<float> want_y = te_dequantize(want);
  std::vector<float4_e2m1fn> q(x.size());
  std::vector<float8_e4m3fn> sc(x.size() / 16);
  float amax = -1;
  quantize(nvfp4_te, x, q, sc, &amax);
  ASSERT_TRUE(same(amax, want.amax)) << what << ": amax " << amax << " vs " << want.amax;
  for (std::size_t b = 0; b < sc.size(); ++b)
    ASSERT_EQ(sc[b].bits(), want.scales[b]) << what << ": scale of block " << b;
  for (std::size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(q[i].bits(), want.codes[i]) << what << ": element " << i << " = " << x[i] << ", scale "
                                          << static_cast<float>(sc[i / 16]);
  std::vector<float> y(x.size());
  dequantize(nvfp4_te, q, sc, y, amax);
  for (std::size_t i = 0; i < x.size(); ++i)
    ASSERT_TRUE(same(y[i], want_y[i])) << what << ": value " << i << ": " << y[i] << " vs " << want_y[i];
  // The packed path: the same bytes and values.
  std::vector<std::uint8_t> bytes(packed_bytes<float4_e2m1fn>(x.size()));
  std::vector<float8_e4m3fn> psc(sc.size());
  float pamax = -1;
  quantize_packed(nvfp4_te, x, bytes, psc, &pamax);
  std::vector<float4_e2m1fn> unpacked(x.size());
  unpack(std::span<const std::uint8_t>(bytes), std::span<float4_e2m1fn>(unpacked));
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(unpacked[i].bits(), want.codes[i]) << what << " packed " << i;
  std::vector<float> py(x.size());
  dequantize_packed(nvfp4_te, bytes, psc, py, pamax);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(same(py[i], want_y[i])) << what << " packed value " << i;
}

TEST(Nvfp4Te, random_tensors_across_magnitudes_match_te_bit_for_bit) {
  std::mt19937 rng(11);
  for (int t = 0; t < 400; ++t) {
    // Magnitudes 2^-140 .. 2^120 and spreads within a tensor up to 2^40.
    std::uniform_int_distribution<int> center(-140, 120), spread(0, 40);
    const int c = center(rng), sp = spread(rng);
    std::uniform_real_distribution<float> mant(-2.0f, 2.0f);
    std::uniform_int_distribution<int> ex(c - sp, c);
    std::vector<float> x(16 * 24);
    for (float& v : x) v = std::ldexp(mant(rng), ex(rng));
    if (t % 5 == 0)
      for (std::size_t i = 0; i < x.size(); i += 7) x[i] = 0.0f;
    if (t % 7 == 0)
      for (std::size_t i = 0; i < 16; ++i) x[16 * 3 + i] = 0.0f;  // an all-zero block: scale 0
    expect_te(x, "random");
  }
}

// With amax_t = 2688, s_enc = 1; a block whose amax is 6 gets the scale 1
// and the factor 1, so its elements reach TE's E2M1 table unscaled: every
// tie, both sides of it, and -0.
TEST(Nvfp4Te, ties_of_the_e2m1_table_and_negative_zero) {
  std::vector<float> x(32, 0.0f);
  x[16] = 2688.0f;  // the tensor's amax, in another block
  const float ties[] = {6.0f, 0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, -0.25f, -0.75f, -5.0f,
                        std::nextafter(0.25f, 1.0f), std::nextafter(0.75f, 0.0f), -0.0f, -1e-30f, 5.5f};
  for (std::size_t i = 0; i < 16; ++i) x[i] = ties[i];
  expect_te(x, "ties");
  std::vector<float4_e2m1fn> q(32);
  std::vector<float8_e4m3fn> sc(2);
  float amax;
  quantize(nvfp4_te, x, q, sc, &amax);
  EXPECT_EQ(static_cast<float>(sc[0]), 1.0f);
  EXPECT_EQ(q[1].bits(), 0x0);   // 0.25 -> 0
  EXPECT_EQ(q[2].bits(), 0x2);   // 0.75 -> 1
  EXPECT_EQ(q[5].bits(), 0x4);   // 2.5 -> 2
  EXPECT_EQ(q[7].bits(), 0x6);   // 5 -> 4
  EXPECT_EQ(q[13].bits(), 0x0);  // -0 -> +0, TE's table
  EXPECT_EQ(q[14].bits(), 0x8);  // -1e-30 -> -0
}

TEST(Nvfp4Te, zeros_infinities_nan_and_extremes_as_te) {
  expect_te(std::vector<float>(32, 0.0f), "zeros");
  expect_te(std::vector<float>(32, -0.0f), "negative zeros");
  std::vector<float> x(48);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 20.0f;
  x[5] = kInf;  // amax = inf: s_enc = 1, its block's scale 448, the infinity 6
  expect_te(x, "infinity");
  x[5] = -kInf;
  expect_te(x, "-infinity");
  x[5] = kNaN;  // poisons the tensor: every scale NaN, every element +0
  expect_te(x, "NaN");
  std::vector<float4_e2m1fn> q(48);
  std::vector<float8_e4m3fn> sc(3);
  float amax;
  quantize(nvfp4_te, x, q, sc, &amax);
  EXPECT_TRUE(std::isnan(amax));
  for (auto s : sc) EXPECT_EQ(s.bits(), 0x7F);
  for (auto e : q) EXPECT_EQ(e.bits(), 0x0);
  for (float v : {1e-40f, 3e38f, kFltMax, 1e-45f}) {
    std::vector<float> e(32, v);
    e[3] = -v / 3;
    expect_te(e, "extreme");
  }
}

// The two orders are not the same function. Finite tensors: near an E4M3
// tie, s_dec * s_enc (lplab's nvfp4) and amax * (s_enc * 1/6) (TE's) can
// round to different sides -- searched here over block maxima around the
// ties for tensor maxima of many binades. Non-finite
// ones: an infinity gives lplab a NaN block, TE the scale 448; a NaN
// poisons only its block in lplab, the whole tensor in TE.
TEST(Nvfp4Te, differs_from_lplabs_order) {
  auto scale_of = [](const auto& scheme, float block_amax, float tensor_amax) {
    std::vector<float> x(32, 0.0f);
    x[0] = block_amax;
    x[16] = tensor_amax;
    std::vector<float4_e2m1fn> q(32);
    std::vector<float8_e4m3fn> sc(2);
    float t;
    quantize(scheme, x, q, sc, &t);
    return sc[0].bits();
  };
  int found = 0;
  float at_block = 0, at_tensor = 0;
  for (int e = -20; e <= 20 && found == 0; ++e)
    for (float tm : {1.0f, 1.3f, 1.7f, 1.9f}) {
      const float tensor_amax = std::ldexp(tm, e);
      const float s_enc = 2688.0f / tensor_amax;
      for (int code = 8; code < 0x7E && found == 0; ++code) {
        // The tie between E4M3 codes `code` and code + 1, as a block amax.
        const float tie = (static_cast<float>(float8_e4m3fn::from_bits(code)) +
                           static_cast<float>(float8_e4m3fn::from_bits(code + 1))) / 2;
        float amax = tie * 6.0f / s_enc;
        for (int step = 0; step < 8; ++step, amax = std::nextafter(amax, kInf))
          if (amax < tensor_amax && scale_of(nvfp4, amax, tensor_amax) != scale_of(nvfp4_te, amax, tensor_amax)) {
            found = code, at_block = amax, at_tensor = tensor_amax;
            break;
          }
      }
    }
  EXPECT_NE(found, 0) << "no finite block found where the orders differ";
  // The first such block: amax 0x1.5b6db6p-35 in a tensor of amax 2^-20, at
  // the tie above E4M3 code 0x09.
  EXPECT_EQ(at_block, 0x1.5b6db6p-35f);
  EXPECT_EQ(at_tensor, 0x1p-20f);
  EXPECT_EQ(found, 0x09);
  EXPECT_EQ(scale_of(nvfp4, kInf, 1.0f), 0x7F);
  EXPECT_EQ(scale_of(nvfp4_te, kInf, 1.0f), 0x7E);  // 448
}

}  // namespace
}  // namespace lplab::kernels
