// The model of PTX's cvt.rs (cvt_rs.h) and its random-bit streams
// (random.h), checked against:
//   - Random123's known-answer vectors for Philox4x32-10;
//   - hand-derived cases from the PTX ISA's text (the carry rule, the
//     rbits split, the packing of d, .satfinite and .relu);
//   - a reference of the carry rule written here in double arithmetic on
//     the destination's grid (q = floor(|x| / ulp), D = the top K bits of
//     the fraction, up iff D + r >= 2^K), for every r of the 8-bit forms
//     and a sample of the 13- and 16-bit ones.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "lplab/kernels.h"

namespace lplab::testing {
namespace {

using kernels::CvtRsForm;
using kernels::cvt_rs;
using kernels::cvt_rs_packed;
using kernels::kRbitsSm100a;
using kernels::kRbitsSm103a;

float f32(std::uint32_t b) { return std::bit_cast<float>(b); }

TEST(Philox, equals_random123s_known_answers) {
  // Random123 1.14, examples/kat_vectors: philox4x32 10 ctr key -> out.
  struct Kat {
    std::uint32_t ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    const kernels::Philox4x32 out =
        kernels::philox4x32_10({{k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]}}, k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out.v[i], k.out[i]) << "word " << i;
  }
  // The stream: index i is word i % 4 of counter i / 4 (curand's layout);
  // seed 0, subsequence 0 starts with the first vector.
  for (std::uint64_t i = 0; i < 4; ++i) EXPECT_EQ(kernels::philox_bits(0, 0, i), kats[0].out[i]);
  // The subsequence sits in counter words 2-3, the seed is the key.
  EXPECT_EQ(kernels::philox_bits(0x299f31d0a4093822u, 0x0370734413198a2eu, 4 * std::uint64_t{0x243f6a88} + 2),
            kernels::philox4x32_10({{0x243f6a88, 0, 0x13198a2e, 0x03707344}}, 0xa4093822, 0x299f31d0).v[2]);
}

// The carry rule in double: x into T with K random bits r.
template <class T>
double reference(float x, std::uint32_t r, int K) {
  using I = finfo<T>;
  const double a = std::fabs(static_cast<double>(x));
  const bool neg = std::signbit(x);
  if (a > I::max) return neg ? -I::max : I::max;
  const int e = a == 0 ? I::minexp : std::max(static_cast<int>(std::floor(std::log2(a))), I::minexp);
  const double ulp = std::ldexp(1.0, e - I::mantissa_bits);
  const double q = std::floor(a / ulp);
  const double D = std::floor((a / ulp - q) * std::ldexp(1.0, K));
  const double mag = (q + (D + r >= std::ldexp(1.0, K) ? 1 : 0)) * ulp;
  return neg ? -mag : mag;
}

// Finite inputs around T's range: every binade from below the smallest
// subnormal to past the largest value, random fractions, both signs.
template <class T>
std::vector<float> inputs() {
  using I = finfo<T>;
  std::vector<float> xs = {0.0f, -0.0f, static_cast<float>(I::max), -static_cast<float>(I::max),
                           static_cast<float>(I::smallest_subnormal), f32(1)};
  std::uint64_t state = 7;
  for (int e = I::minexp - I::mantissa_bits - 3; e <= I::maxexp; ++e)
    for (int j = 0; j < 24; ++j) {
      state = kernels::splitmix64(state);
      const float frac = static_cast<float>(state >> 40) * 0x1p-24f;  // [0, 1)
      const float x = std::ldexp(1.0f + frac, e);
      xs.push_back((state & 1) != 0 ? -x : x);
    }
  return xs;
}

template <class T>
void check_against_reference(int K, std::uint32_t r_step) {
  std::uint64_t checked = 0, up = 0;
  for (float x : inputs<T>()) {
    for (std::uint64_t r = 0; r < (std::uint64_t{1} << K); r += r_step) {
      const T got = cvt_rs<T>(x, static_cast<std::uint32_t>(r), K);
      const double want = reference<T>(x, static_cast<std::uint32_t>(r), K);
      const double value = static_cast<double>(got);
      ASSERT_TRUE(value == want && std::signbit(value) == std::signbit(want))
          << finfo<T>::name << ": x = " << std::hexfloat << x << ", r = " << std::dec << r << ": got " << value
          << ", the carry rule gives " << want;
      ++checked;
      up += std::fabs(value) > std::fabs(reference<T>(x, 0, K));
    }
  }
  EXPECT_GT(up, checked / 8) << "the random bits must decide many roundings";
}

TEST(CvtRs, every_form_follows_the_carry_rule) {
  check_against_reference<float8_e4m3fn>(8, 1);
  check_against_reference<float8_e5m2>(8, 1);
  check_against_reference<float6_e2m3fn>(8, 1);
  check_against_reference<float6_e3m2fn>(8, 1);
  check_against_reference<float4_e2m1fn>(8, 1);
  check_against_reference<float16>(13, 37);
  check_against_reference<bfloat16>(16, 257);
}

TEST(CvtRs, hand_derived_cases_from_the_isa) {
  // bf16: 1 + 2^-8 drops 0x8000 of 16 bits: r = 0x7FFF keeps 1.0, 0x8000 carries.
  EXPECT_EQ(cvt_rs<bfloat16>(f32(0x3F808000), 0x7FFF, 16).bits(), 0x3F80);
  EXPECT_EQ(cvt_rs<bfloat16>(f32(0x3F808000), 0x8000, 16).bits(), 0x3F81);
  // f16: 1 + 2^-11 drops 0x1000 of 13 bits; the 3 bits above the 13 are not read.
  EXPECT_EQ(cvt_rs<float16>(f32(0x3F801000), 0x0FFF, 13).bits(), 0x3C00);
  EXPECT_EQ(cvt_rs<float16>(f32(0x3F801000), 0x1000, 13).bits(), 0x3C01);
  EXPECT_EQ(cvt_rs<float16>(f32(0x3F801000), 0xEFFF, 13).bits(), 0x3C00);
  // E2M1: 2.5 lies half way from 2 to 3 (D = 128 of 256).
  EXPECT_EQ(cvt_rs<float4_e2m1fn>(2.5f, 127, 8).bits(), 0x4);
  EXPECT_EQ(cvt_rs<float4_e2m1fn>(2.5f, 128, 8).bits(), 0x5);
  EXPECT_EQ(cvt_rs<float4_e2m1fn>(-2.5f, 128, 8).bits(), 0xD);
  // A subnormal destination: 0.25 is half of E2M1's quantum 0.5.
  EXPECT_EQ(cvt_rs<float4_e2m1fn>(0.25f, 128, 8).bits(), 0x1);
  EXPECT_EQ(cvt_rs<float4_e2m1fn>(0.25f, 127, 8).bits(), 0x0);
  EXPECT_EQ(cvt_rs<float4_e2m1fn>(-0.25f, 0, 8).bits(), 0x8);  // rounds to zero, keeps its sign
  // .satfinite: past MAX_NORM (infinity included) the signed maximum; NaN
  // the NaN, or +MAX_NORM where the format has none.
  EXPECT_EQ(cvt_rs<float4_e2m1fn>(7.0f, 255, 8).bits(), 0x7);
  EXPECT_EQ(cvt_rs<float4_e2m1fn>(-INFINITY, 0, 8).bits(), 0xF);
  EXPECT_EQ(cvt_rs<float4_e2m1fn>(-NAN, 0, 8).bits(), 0x7);
  EXPECT_EQ(cvt_rs<float8_e4m3fn>(464.0f, 255, 8).bits(), 0x7E);
  EXPECT_EQ(cvt_rs<float8_e5m2>(NAN, 0, 8).bits(), 0x7F);
  EXPECT_EQ(cvt_rs<float16>(NAN, 0, 13).bits(), 0x7FFF);
  EXPECT_EQ(cvt_rs<bfloat16>(-INFINITY, 0, 16).bits(), 0xFF7F);
  // E4M3's subnormal quantum 2^-9: 2^-10 is half of it.
  EXPECT_EQ(cvt_rs<float8_e4m3fn>(0x1p-10f, 128, 8).bits(), 0x01);
  EXPECT_EQ(cvt_rs<float8_e4m3fn>(0x1p-10f, 127, 8).bits(), 0x00);
  // .relu: negative results are +0.
  EXPECT_EQ(cvt_rs<float4_e2m1fn>(-2.5f, 255, 8, true).bits(), 0x0);
  EXPECT_EQ(cvt_rs<float8_e4m3fn>(-0.0f, 0, 8, true).bits(), 0x00);
  // f16 without .satfinite: a carry past MAX_NORM is infinity.
  EXPECT_EQ(cvt_rs<float16>(65520.0f, 0x1FFF, 13, false, false).bits(), 0x7C00);
  EXPECT_EQ(cvt_rs<float16>(65520.0f, 0, 13, false, false).bits(), 0x7BFF);
}

// One operand's slot: rbits with only that operand's random byte set to
// 0x80 (bit-reversed where the layout says: 0x01) rounds up only that
// element of four at D = 128.
template <CvtRsForm F>
void check_slots(const kernels::RbitsLayout& layout, float half_way, std::uint32_t low_code,
                 std::uint32_t high_code, const kernels::RbitsSlot (&slots)[4]) {
  const float in[4] = {half_way, half_way, half_way, half_way};
  const int field = F == CvtRsForm::e2m1x4 ? 4 : 8;
  for (int operand = 0; operand < 4; ++operand) {
    const kernels::RbitsSlot s = slots[operand];
    const std::uint32_t rbits = (s.reversed ? 0x01u : 0x80u) << s.shift;
    const std::uint32_t d = cvt_rs_packed<F>(in, rbits, layout);
    for (int j = 0; j < 4; ++j) {  // memory element j is operand 3 - j
      const std::uint32_t code = (d >> (field * j)) & ((1u << field) - 1);
      EXPECT_EQ(code, 3 - j == operand ? high_code : low_code)
          << layout.name << " " << enum_name(F) << ": rbits 0x" << std::hex << rbits << ", element " << j;
    }
  }
}

TEST(CvtRs, the_random_bytes_reach_their_operands) {
  for (const kernels::RbitsLayout* l : kernels::kRbitsLayouts) {
    // E4M3: 1 + 1/16 is half way from 1 (0x38) to 1.125 (0x39).
    check_slots<CvtRsForm::e4m3x4>(*l, 1.0625f, 0x38, 0x39, l->fp8);
    check_slots<CvtRsForm::e5m2x4>(*l, 1.125f, 0x3C, 0x3D, l->fp8);
    check_slots<CvtRsForm::e2m3x4>(*l, 1.0625f, 0x08, 0x09, l->fp6);
    check_slots<CvtRsForm::e3m2x4>(*l, 1.125f, 0x0C, 0x0D, l->fp6);
    check_slots<CvtRsForm::e2m1x4>(*l, 2.5f, 0x4, 0x5, l->fp4);
  }
  // The ISA's text, whatever the figures add: FP8/FP6 operands a, b read the
  // upper half, e, f the lower; E2M1's e, f the low byte of each half.
  for (int operand = 0; operand < 4; ++operand) {
    EXPECT_EQ(kRbitsSm100a.fp8[operand].shift >= 16, operand < 2);
    EXPECT_EQ(kRbitsSm100a.fp4[operand].shift % 16 == 0, operand >= 2);
  }
  // The x2 forms: a (element 1) the upper half, b (element 0) the lower.
  const float pair[2] = {f32(0x3F808000), f32(0x3F808000)};
  EXPECT_EQ(cvt_rs_packed<CvtRsForm::bf16x2>(pair, 0x8000'0000u, kRbitsSm100a), 0x3F81'3F80u);
  EXPECT_EQ(cvt_rs_packed<CvtRsForm::bf16x2>(pair, 0x0000'8000u, kRbitsSm100a), 0x3F80'3F81u);
  const float halfs[2] = {f32(0x3F801000), f32(0x3F801000)};
  EXPECT_EQ(cvt_rs_packed<CvtRsForm::f16x2>(halfs, 0x1000'E000u, kRbitsSm100a), 0x3C01'3C00u);
}

TEST(CvtRs, bulk_groups_take_one_rbits_each_from_the_stream) {
  std::vector<float> x(37);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.3f * static_cast<float>(i) - 4.0f;
  for (kernels::RbitsStream stream : {kernels::RbitsStream::philox, kernels::RbitsStream::lplab}) {
    std::vector<float4_e2m1fn> out(x.size());
    kernels::cvt_rs_bulk<CvtRsForm::e2m1x4>(x.data(), x.size(), out.data(), stream, 42, 3, kRbitsSm100a);
    for (std::size_t g = 0; g * 4 < x.size(); ++g) {
      float in[4] = {};
      for (std::size_t j = 0; j < 4 && g * 4 + j < x.size(); ++j) in[j] = x[g * 4 + j];
      const std::uint32_t d = cvt_rs_packed<CvtRsForm::e2m1x4>(in, kernels::rbits_of(stream, 42, 3, g), kRbitsSm100a);
      for (std::size_t j = 0; j < 4 && g * 4 + j < x.size(); ++j)
        EXPECT_EQ(out[g * 4 + j].bits(), (d >> (4 * j)) & 0xF) << enum_name(stream) << " element " << g * 4 + j;
    }
  }
  EXPECT_EQ(kernels::rbits_of(kernels::RbitsStream::philox, 5, 9, 11), kernels::philox_bits(5, 9, 11));
  EXPECT_EQ(kernels::rbits_of(kernels::RbitsStream::lplab, 5, 9, 11), kernels::stochastic_bits(5 ^ 9, 11));
  ASSERT_NE(kernels::rbits_layout_named("sm_103a"), nullptr);
  EXPECT_EQ(kernels::rbits_layout_named("sm_90a"), nullptr);
}

TEST(CvtRs, is_unbiased_over_its_random_bits) {
  // For a fixed x the 256 values of r give the mean x exactly (the carry
  // rule's point): sum over r of the rounded value = 256 x where x lies on
  // the 8-bit sub-grid.
  for (float x : {2.5f, 2.25f, 0.375f, -4.5f, 5.75f}) {
    double sum = 0;
    for (std::uint32_t r = 0; r < 256; ++r) sum += static_cast<double>(cvt_rs<float4_e2m1fn>(x, r, 8));
    EXPECT_EQ(sum, 256.0 * x) << x;
  }
}

}  // namespace
}  // namespace lplab::testing
