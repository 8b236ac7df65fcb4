// Integer matrix units (kernels/integer_mma.h): the wrap and saturation
// edges worked out by hand, the presets' table against the ISAs' lists.
// Random and adversarial matrices through every preset against Python's
// exact integers: python/tests/test_integer_mma.py.
#include "lplab/kernels/integer_mma.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace lplab::kernels;

const IntegerMmaInstruction& preset(const char* name) {
  const IntegerMmaInstruction* i = find_integer_mma_instruction(name);
  if (i == nullptr) throw std::runtime_error(std::string("no preset ") + name);
  return *i;
}

// C = INT32_MAX plus one product of 1: wrapped to INT32_MIN, or held at INT32_MAX by .satfinite.
TEST(IntegerMma, WrapAndSaturateAtTheBound) {
  const std::vector<std::int32_t> one = {1};
  EXPECT_EQ(integer_mma_chain(preset("ampere.mma.m16n8k16.s32.s8.s8.s32"), one, one, INT32_MAX), INT32_MIN);
  EXPECT_EQ(integer_mma_chain(preset("ampere.mma.m16n8k16.satfinite.s32.s8.s8.s32"), one, one, INT32_MAX),
            INT32_MAX);
  const std::vector<std::int32_t> neg = {-1};
  EXPECT_EQ(integer_mma_chain(preset("hopper.wgmma.satfinite.s32.s8.s8"), neg, one, INT32_MIN), INT32_MIN);
  EXPECT_EQ(integer_mma_chain(preset("cdna3.mfma.i32_16x16x32_i8"), neg, one, INT32_MIN), INT32_MAX);
}

// Within one instruction the exact sum is clamped once: C = INT32_MAX - 100
// with +127 * 127 then -128 * 127 stays below the bound (INT32_MAX - 227), where
// clamping the partial sum would give INT32_MAX - 16256.
TEST(IntegerMma, OneClampPerInstruction) {
  const std::vector<std::int32_t> a = {127, -128}, b = {127, 127};
  EXPECT_EQ(integer_mma_chain(preset("ampere.mma.m16n8k16.satfinite.s32.s8.s8.s32"), a, b, INT32_MAX - 100),
            INT32_MAX - 227);
}

// Along K each instruction clamps its own D: 16 products of 127 * 127 over
// the bound clamp at INT32_MAX, then 16 of -128 * 127 take 16 * 16256 off it;
// wrapping instead keeps every carry (mod 2^32).
TEST(IntegerMma, ChainClampsPerInstruction) {
  std::vector<std::int32_t> a(32), b(32, 127);
  for (int t = 0; t < 32; ++t) a[t] = t < 16 ? 127 : -128;
  const std::int32_t c = INT32_MAX - 1000;
  EXPECT_EQ(integer_mma_chain(preset("ampere.mma.m16n8k16.satfinite.s32.s8.s8.s32"), a, b, c),
            INT32_MAX - 16 * 16256);
  const std::int64_t exact = std::int64_t{c} + 16 * 16129 - 16 * 16256;
  EXPECT_EQ(integer_mma_chain(preset("ampere.mma.m16n8k16.s32.s8.s8.s32"), a, b, c), static_cast<std::int32_t>(exact));
  // One instruction of k = 32 sums all 32 first: no clamp is reached.
  EXPECT_EQ(integer_mma_chain(preset("ampere.mma.m16n8k32.satfinite.s32.s8.s8.s32"), a, b, c),
            static_cast<std::int32_t>(exact));
}

TEST(IntegerMma, MixedSignednessAndRanges) {
  const std::vector<std::int32_t> u = {255, 15}, s = {-128, -8};
  EXPECT_EQ(integer_mma_chain(preset("ampere.mma.m16n8k32.s32.u8.s8.s32"), u, s, 0), 255 * -128 + 15 * -8);
  EXPECT_EQ(integer_mma_chain(preset("ampere.mma.m16n8k64.s32.u4.s4.s32"), std::vector<std::int32_t>{15, 15},
                              std::vector<std::int32_t>{-8, 7}, 5),
            5 - 120 + 105);
  // a value outside the operand type
  EXPECT_THROW(integer_mma_chain(preset("ampere.mma.m16n8k64.s32.s4.s4.s32"), std::vector<std::int32_t>{8},
                                 std::vector<std::int32_t>{1}, 0),
               std::invalid_argument);
  EXPECT_THROW(integer_mma_chain(preset("nvidia.dp4a.u8.u8"), std::vector<std::int32_t>{-1},
                                 std::vector<std::int32_t>{1}, 0),
               std::invalid_argument);
}

// The table: PTX's shapes per generation, AMD's per CDNA generation.
TEST(IntegerMma, Presets) {
  EXPECT_EQ(find_integer_mma_instruction("turing.mma.m16n8k16.s32.s8.s8.s32"), nullptr);  // sm_80
  EXPECT_NE(find_integer_mma_instruction("turing.mma.m8n8k32.s32.u4.s4.s32"), nullptr);
  EXPECT_EQ(find_integer_mma_instruction("cdna3.mfma.i32_32x32x8i8"), nullptr);  // removed in gfx940
  const IntegerMmaInstruction& m = preset("cdna3.mfma.i32_4x4x4_16b_i8");
  EXPECT_EQ(m.k, 4);
  EXPECT_EQ(m.blocks, 16);
  EXPECT_EQ(preset("nvidia.dp4a.s8.u8").isa, "dp4a.s32.u32");
  EXPECT_EQ(preset("ampere.mma.m16n8k64.satfinite.s32.s4.u4.s32").isa,
            "mma.sync.aligned.m16n8k64.row.col.satfinite.s32.s4.u4.s32");
  // 2 Turing shapes + 6 shapes on 5 later generations, 4 signedness pairs, with and
  // without .satfinite; wgmma and tcgen05 8 each; dp4a 4; CDNA 5 + 5 + 5.
  EXPECT_EQ(integer_mma_instructions().size(), (2 + 6 * 5) * 4 * 2 + 8 + 8 + 4 + 15u);
}

TEST(IntegerMma, Matmul) {
  const IntegerMmaInstruction& i = preset("ampere.mma.m16n8k16.s32.s8.s8.s32");
  // A 2 x 3, B 3 x 2 given transposed (2 x 3), C ones.
  const std::vector<std::int32_t> a = {1, 2, 3, -4, 5, -6}, bt = {7, 8, 9, -10, 11, 12}, c = {1, 1, 1, 1};
  std::vector<std::int32_t> d(4);
  integer_matmul(i, 2, 2, 3, a, bt, c, d);
  EXPECT_EQ(d, (std::vector<std::int32_t>{1 + 7 + 16 + 27, 1 - 10 + 22 + 36, 1 - 28 + 40 - 54, 1 + 40 + 55 - 72}));
  EXPECT_THROW(integer_matmul(i, 2, 2, 3, a, bt, c, std::span<std::int32_t>(d).first(3)), std::invalid_argument);
}

}  // namespace
