// Integer scaling (kernels/integer_scaling.h): each rule on values worked out
// by hand from its source's formula, where a neighbouring rule, a double
// computation, a different tie rule or a missing clamp would give another
// code; groups and short rows; non-finite groups; the errors. The rules on
// random and adversarial matrices against an independent NumPy float32
// implementation of each source's formula: python/tests/test_integer_scaling.py.
#include "lplab/kernels/integer_scaling.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace {

using namespace lplab;
using namespace lplab::kernels;

template <class T>
std::vector<float> values(const std::vector<T>& v) {
  std::vector<float> f;
  for (const T& x : v) f.push_back(static_cast<float>(x));
  return f;
}

// round_half_even against the C library's nearbyint in its default mode, on
// every 61st float (a stride prime to every power of two, so every exponent
// and the low mantissa bits all occur; every 4099th under the sanitizers,
// whose -O0 build would take half a minute) and on each tie n + 1/2.
TEST(IntegerScaling, RoundHalfEvenIsNearbyint) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
#if defined(LPLAB_SANITIZED)
  constexpr std::uint64_t stride = 4099;
#else
  constexpr std::uint64_t stride = 61;
#endif
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFu; b += stride) {
    const float v = std::bit_cast<float>(static_cast<std::uint32_t>(b));
    const float want = std::nearbyint(v), got = round_half_even(v);
    if (std::isnan(v)) {
      ASSERT_TRUE(std::isnan(got));
      continue;
    }
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << std::hexfloat << v;
  }
  for (int i = -300; i <= 300; ++i) {
    const float v = static_cast<float>(i) + 0.5f;
    EXPECT_EQ(round_half_even(v), std::nearbyint(v)) << v;
  }
}

// SmoothQuant's absmax: s = amax / 127, ties to even, never -128; an
// all-zero row takes max(amax, 1e-5) / 127.
TEST(IntegerScaling, AbsmaxPerChannel) {
  const std::vector<float> x = {127.0f, -63.5f, 2.5f, -0.5f,  // s = 1
                                0.0f, 0.0f, 0.0f, 0.0f,       // s = 1e-5 / 127
                                -254.0f, 1.0f, 3.0f, 0.0f};   // s = 2: 1 / 2 -> 0, 3 / 2 -> 2
  std::vector<int8> q(x.size());
  std::vector<float32> sc(3);
  quantize(int8_channel, x, 4, q, sc);
  EXPECT_EQ(values(q), (std::vector<float>{127, -64, 2, -0.0f, 0, 0, 0, 0, -127, 0, 2, 0}));
  EXPECT_EQ(values(sc), (std::vector<float>{1.0f, 1e-5f / 127.0f, 2.0f}));
  std::vector<float> y(x.size());
  dequantize(int8_channel, q, 4, sc, y);
  EXPECT_EQ(y, (std::vector<float>{127, -64, 2, 0, 0, 0, 0, 0, -254, 0, 4, 0}));
  // Per tensor: one scale, amax 254 -> s = 2.
  std::vector<float32> one(1);
  quantize(int8_tensor, x, 4, q, one);
  EXPECT_EQ(static_cast<float>(one[0]), 2.0f);
  EXPECT_EQ(static_cast<float>(q[0]), 64.0f);  // 63.5 -> 64
}

// torchao's symmetric mapping: amax / 127.5 and the full range, so +amax
// lands on 127.5 -> 128 -> 127 and -amax on -128.
TEST(IntegerScaling, TorchaoSymmetric) {
  const std::vector<float> x = {127.5f, -127.5f, 0.5f, 1.5f};
  std::vector<int8> q(4);
  std::vector<float32> sc(1);
  quantize(int8_channel_torchao, x, 4, q, sc);
  EXPECT_EQ(static_cast<float>(sc[0]), 1.0f);
  EXPECT_EQ(values(q), (std::vector<float>{127, -128, 0, 2}));
}

// GPTQ: the range widened through 0; an all-zero group is [-1, 1], whose
// zero point round(1 / float32(2 / 15)) is 7: 1 / 0.13333334f is 7.4999995f.
TEST(IntegerScaling, Gptq) {
  const IntegerScaling<uint4, float16> s{.rule = IntegerRule::gptq, .group_size = 4};
  const std::vector<float> x = {0.5f, 1.0f, 2.0f, 7.5f,     // [0, 7.5]: s = 0.5, z = 0
                                -2.0f, 0.25f, 1.75f, 5.5f,  // [-2, 5.5]: s = 0.5, z = 4
                                0.0f, 0.0f, 0.0f, 0.0f};
  std::vector<uint4> q(12), z(3);
  std::vector<float16> sc(3);
  quantize(s, x, 4, q, sc, z);
  EXPECT_EQ(values(q), (std::vector<float>{1, 2, 4, 15, 0, 4, 8, 15, 7, 7, 7, 7}));
  EXPECT_EQ(values(z), (std::vector<float>{0, 4, 7}));
  EXPECT_EQ(static_cast<float>(sc[0]), 0.5f);
  EXPECT_EQ(static_cast<float>(sc[2]), static_cast<float>(float16(2.0f / 15.0f)));
  std::vector<float> y(12);
  dequantize(s, q, 4, sc, z, y);
  EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + 8),
            (std::vector<float>{0.5f, 1.0f, 2.0f, 7.5f, -2.0f, 0.0f, 2.0f, 5.5f}));
  EXPECT_EQ(y[8], 0.0f);
}

// AWQ: the range as it is, and its zero point clamped to [0, 15]: for
// [0.5, 8] the zero point -round(0.5 / 0.5) = -1 becomes 0, and 8 saturates
// at code 15 (7.5). GPTQ keeps 8 (z = 0 over [0, 8]).
TEST(IntegerScaling, AwqClampsItsZeroPoint) {
  const IntegerScaling<uint4, float16> awq{.rule = IntegerRule::awq, .group_size = 4};
  const std::vector<float> x = {0.5f, 1.0f, 2.0f, 8.0f, -2.0f, 0.25f, 1.75f, 5.5f};
  std::vector<uint4> q(8), z(2);
  std::vector<float16> sc(2);
  quantize(awq, x, 4, q, sc, z);
  EXPECT_EQ(values(q), (std::vector<float>{1, 2, 4, 15, 0, 4, 8, 15}));
  EXPECT_EQ(values(z), (std::vector<float>{0, 4}));
  std::vector<float> y(8);
  dequantize(awq, q, 4, sc, z, y);
  EXPECT_EQ(y[3], 7.5f);
}

// torchao's asymmetric mapping on int8: range / 255, zero point qmin - round(lo / s).
TEST(IntegerScaling, TorchaoAsymmetricSigned) {
  const IntegerScaling<int8, float32> s{.rule = IntegerRule::torchao_asymmetric, .group_size = 0};
  const std::vector<float> x = {-2.0f, 0.25f, 1.75f, 125.5f};  // s = 127.5 / 255 = 0.5, z = -128 + 4
  std::vector<int8> q(4), z(1);
  std::vector<float32> sc(1);
  quantize(s, x, 4, q, sc, z);
  EXPECT_EQ(static_cast<float>(sc[0]), 0.5f);
  EXPECT_EQ(static_cast<float>(z[0]), -124.0f);
  EXPECT_EQ(values(q), (std::vector<float>{-128, -124, -120, 127}));
  std::vector<float> y(4);
  dequantize(s, q, 4, sc, z, y);
  EXPECT_EQ(y, (std::vector<float>{-2.0f, 0.0f, 2.0f, 125.5f}));
}

// tinygemm: a floating zero point lo + 8 s, codes round((x - (z - 8 s)) / s),
// y = (q - 8) s + z.
TEST(IntegerScaling, TinygemmFloatZeroPoint) {
  const IntegerScaling<uint4, bfloat16> s{.rule = IntegerRule::tinygemm, .group_size = 4};
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, 8.5f, -3.0f, -1.0f, 0.0f, 0.75f};
  std::vector<uint4> q(8);
  std::vector<bfloat16> sc(2), z(2);
  quantize(s, x, 4, q, sc, z);
  EXPECT_EQ(values(sc), (std::vector<float>{0.5f, 0.25f}));
  EXPECT_EQ(values(z), (std::vector<float>{5.0f, -1.0f}));
  EXPECT_EQ(values(q), (std::vector<float>{0, 2, 4, 15, 0, 8, 12, 15}));
  std::vector<float> y(8);
  dequantize(s, q, 4, sc, z, y);
  EXPECT_EQ(y, x);
}

// Groups restart at each row; a short last row's missing groups get an
// all-zero group's parameters; a NaN or an infinity makes its group's scale
// NaN, its codes 0 and its values NaN, and no other group changes.
TEST(IntegerScaling, GroupsRowsAndNonFinite) {
  const IntegerScaling<uint4, float16> s{.rule = IntegerRule::gptq, .group_size = 2};
  EXPECT_EQ(groups_needed(s, 6, 4), 4u);
  EXPECT_EQ(groups_needed(s, 0, 4), 0u);
  EXPECT_EQ(groups_needed(int8_tensor, 6, 4), 1u);
  EXPECT_EQ(groups_needed(int8_channel, 6, 4), 2u);
  const std::vector<float> x = {1.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f, 7.5f, 3.0f, -INFINITY};
  std::vector<uint4> q(6), z(4);
  std::vector<float16> sc(4);
  quantize(s, x, 4, q, sc, z);
  EXPECT_TRUE(std::isnan(static_cast<float>(sc[0])));
  EXPECT_TRUE(std::isnan(static_cast<float>(sc[2])));
  EXPECT_EQ(static_cast<float>(sc[1]), 0.5f);  // [0, 7.5]
  EXPECT_EQ(static_cast<float>(sc[3]), static_cast<float>(float16(2.0f / 15.0f)));
  EXPECT_EQ(values(q), (std::vector<float>{0, 0, 0, 15, 0, 0}));
  std::vector<float> y(6);
  dequantize(s, q, 4, sc, z, y);
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]) && std::isnan(y[4]) && std::isnan(y[5]));
  EXPECT_EQ(y[3], 7.5f);
}

TEST(IntegerScaling, Footprint) {
  EXPECT_DOUBLE_EQ(bits_per_element(int4_g128, 128), 4.0 + 20.0 / 128);
  EXPECT_DOUBLE_EQ(bits_per_element(int4_g128_tinygemm, 128), 4.0 + 32.0 / 128);
  EXPECT_DOUBLE_EQ(bits_per_element(int8_channel, 4096), 8.0 + 32.0 / 4096);
  EXPECT_EQ(storage_bits(int4_g128, 256, 128), 256u * 4 + 2 * 20);
}

TEST(IntegerScaling, ErrorsBeforeAnyWrite) {
  const std::vector<float> x(8, 1.0f);
  std::vector<uint4> q(8, uint4(3.0f)), z(2);
  std::vector<float16> sc(2), fz(2);
  const IntegerScaling<uint4, float16> gptq{.rule = IntegerRule::gptq, .group_size = 4};
  // a rule with a zero point called without one, and the other way round
  EXPECT_THROW(quantize(gptq, x, 4, q, sc), std::invalid_argument);
  EXPECT_THROW(quantize(gptq, x, 4, q, sc, fz), std::invalid_argument);
  // wrong sizes
  std::vector<float16> sc1(1);
  EXPECT_THROW(quantize(gptq, x, 4, q, sc1, z), std::invalid_argument);
  EXPECT_THROW(quantize(gptq, x, 0, q, sc, z), std::invalid_argument);
  // signedness: GPTQ's codes are unsigned, SmoothQuant's signed
  const IntegerScaling<int4, float16> signed_gptq{.rule = IntegerRule::gptq, .group_size = 4};
  std::vector<int4> qs(8), zs(2);
  try {
    quantize(signed_gptq, x, 4, qs, sc, zs);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "lplab::kernels::quantize: gptq takes an unsigned element, not int4");
  }
  const IntegerScaling<uint4, float16> unsigned_absmax{.rule = IntegerRule::absmax};
  EXPECT_THROW(quantize(unsigned_absmax, x, 4, q, sc1), std::invalid_argument);
  const IntegerScaling<uint4, float16> negative{.rule = IntegerRule::gptq, .group_size = -1};
  EXPECT_THROW(quantize(negative, x, 4, q, sc, z), std::invalid_argument);
  for (const uint4& c : q) EXPECT_EQ(static_cast<float>(c), 3.0f);  // nothing written
}

// Checkpoint layouts on a weight whose words can be read off: q[n][k] =
// (n + k) % 16, zero point n + 1, N = K = G = 8. GPTQ packs along K (row 0's
// codes 0..7 make 0x76543210) and stores zero - 1 along N; AWQ packs along N
// in the order 0 2 4 6 1 3 5 7 (column 0's codes 0..7 make 0x75316420).
TEST(IntegerScaling, CheckpointWords) {
  const IntegerScaling<uint4, float16> s{.rule = IntegerRule::gptq, .group_size = 8};
  std::vector<uint4> q(64), z(8);
  std::vector<float16> sc(8);
  for (int n = 0; n < 8; ++n) {
    for (int k = 0; k < 8; ++k) q[n * 8 + k] = uint4(static_cast<float>((n + k) % 16));
    z[n] = uint4(static_cast<float>(n + 1));
    sc[n] = float16(0.5f * static_cast<float>(n + 1));
  }
  const auto word = [](std::int32_t v) { return std::bit_cast<std::uint32_t>(v); };
  const CheckpointTensors<float16> g = to_checkpoint(IntegerCheckpoint::gptq, s, 8, q, sc, z);
  ASSERT_EQ(g.qweight_rows, 1u);
  ASSERT_EQ(g.qweight_cols, 8u);
  EXPECT_EQ(word(g.qweight[0]), 0x76543210u);
  EXPECT_EQ(word(g.qweight[1]), 0x87654321u);
  ASSERT_EQ(g.qzeros.size(), 1u);
  EXPECT_EQ(word(g.qzeros[0]), 0x76543210u);
  const CheckpointTensors<float16> v2 = to_checkpoint(IntegerCheckpoint::gptq_v2, s, 8, q, sc, z);
  EXPECT_EQ(word(v2.qzeros[0]), 0x87654321u);  // v1 + 0x11111111, as GPTQModel converts
  const CheckpointTensors<float16> a = to_checkpoint(IntegerCheckpoint::awq, s, 8, q, sc, z);
  ASSERT_EQ(a.qweight_rows, 8u);
  ASSERT_EQ(a.qweight_cols, 1u);
  EXPECT_EQ(word(a.qweight[0]), 0x75316420u);
  EXPECT_EQ(word(a.qzeros[0]), 0x86427531u);
  // Each layout read back gives the codes, scales and zero points.
  for (IntegerCheckpoint layout : {IntegerCheckpoint::gptq, IntegerCheckpoint::gptq_v2, IntegerCheckpoint::awq}) {
    const CheckpointTensors<float16> t = to_checkpoint(layout, s, 8, q, sc, z);
    std::vector<uint4> q2(64), z2(8);
    std::vector<float16> sc2(8);
    from_checkpoint(layout, s, t, q2, sc2, z2);
    EXPECT_EQ(values(q2), values(q));
    EXPECT_EQ(values(z2), values(z));
    EXPECT_EQ(values(sc2), values(sc));
  }
  // GPTQ v1 cannot store a zero point of 0; AWQ takes 4-bit codes only; N a multiple of 8.
  z[3] = uint4(0.0f);
  EXPECT_THROW(to_checkpoint(IntegerCheckpoint::gptq, s, 8, q, sc, z), std::invalid_argument);
  EXPECT_NO_THROW(to_checkpoint(IntegerCheckpoint::gptq_v2, s, 8, q, sc, z));
  const IntegerScaling<uint2, float16> two{.rule = IntegerRule::gptq, .group_size = 16};
  std::vector<uint2> q2(16 * 16), z2(16);
  std::vector<float16> sc2(16);
  EXPECT_THROW(to_checkpoint(IntegerCheckpoint::awq, two, 16, q2, sc2, z2), std::invalid_argument);
  EXPECT_NO_THROW(to_checkpoint(IntegerCheckpoint::gptq_v2, two, 16, q2, sc2, z2));
  std::vector<uint4> q7(7 * 8), z7(7);
  std::vector<float16> sc7(7);
  EXPECT_THROW(to_checkpoint(IntegerCheckpoint::awq, s, 8, q7, sc7, z7), std::invalid_argument);
}

// SmoothQuant's scales: sqrt(4) / sqrt(1) = 2; a dead channel takes the
// floor 1e-5; alpha = 1 is the activation's amax over max(w, 1e-5)^0 = 1.
TEST(IntegerScaling, SmoothQuantScales) {
  const std::vector<float> x = {4.0f, 0.0f, -9.0f, 0.0f};  // 2 tokens x 2 channels
  const std::vector<float> w = {1.0f, -2.0f, 0.5f, 0.0f};
  std::vector<float> a(2), wa(2), s(2);
  column_amax(x, 2, a);
  column_amax(w, 2, wa);
  EXPECT_EQ(a, (std::vector<float>{9.0f, 0.0f}));
  EXPECT_EQ(wa, (std::vector<float>{1.0f, 2.0f}));
  smoothquant_scales(a, wa, 0.5, s);
  EXPECT_EQ(s, (std::vector<float>{3.0f, 1e-5f}));
  smoothquant_scales(a, wa, 1.0, s);
  EXPECT_EQ(s, (std::vector<float>{9.0f, 1e-5f}));
  std::vector<float> xs = x;
  smooth_columns(xs, 2, std::vector<float>{3.0f, 1e-5f}, true);
  EXPECT_EQ(xs[2], -3.0f);
  EXPECT_THROW(smoothquant_scales(a, wa, 1.5, s), std::invalid_argument);
  EXPECT_THROW(column_amax(x, 3, a), std::invalid_argument);
}

}  // namespace
