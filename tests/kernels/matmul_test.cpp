// lplab::kernels::matmul: every accumulator against a reference written apart
// from it — MPFR sums and the independent Reference rounding for fp64 and for
// the fp16/bf16 chains, a bit-field implementation of the tensor-core model —
// plus the published figures (bf16 summation stagnating at 256, fp16 at 2048,
// tensor-core FP8 accumulation losing percents at k = 4096).
#include "lplab/kernels/double_bits.h"
#include "lplab/kernels/exact_sum.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/tensor_core_step.h"
#include "lplab/kernels/targets.h"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/exact_arith.h"
#include "support/reference.h"

namespace lplab::kernels {
namespace {

using testing::ExactArith;
using testing::Real;
using testing::RefClass;
using testing::RefDecoded;
using testing::Reference;

// Random finite values of a format: uniform random codes, NaNs (and
// infinities) skipped.
template <class T>
std::vector<T> random_finite(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> out;
  out.reserve(n);
  while (out.size() < n) {
    const T x = T::from_bits(rng() & ((std::uint64_t{1} << finfo<T>::bits) - 1));
    if (isfinite(x)) out.push_back(x);
  }
  return out;
}

// The exact dot product (MPFR at 4000 bits: every sum of products of floats
// is exact there) of row i of A and column j of B, as a Real for Reference.
template <class TA, class TB>
Real exact_dot(const std::vector<TA>& a, const std::vector<TB>& b, std::size_t n, std::size_t k,
               std::size_t i, std::size_t j) {
  mpfr_t acc, prod;
  mpfr_inits2(4000, acc, prod, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_zero(acc, 1);
  for (std::size_t t = 0; t < k; ++t) {
    mpfr_set_d(prod, static_cast<double>(a[i * k + t]), MPFR_RNDN);
    mpfr_mul_d(prod, prod, static_cast<double>(b[t * n + j]), MPFR_RNDN);
    mpfr_add(acc, acc, prod, MPFR_RNDN);
  }
  Real r;
  r.d = mpfr_get_d(acc, MPFR_RNDZ);
  r.sticky = mpfr_cmp_d(acc, r.d) != 0;
  mpfr_clears(acc, prod, static_cast<mpfr_ptr>(nullptr));
  return r;
}

template <class TC>
bool same(TC got, const testing::Expect& want) {
  const double g = static_cast<double>(got);
  if (want.nan) return std::isnan(g);
  return g == want.value && std::signbit(g) == std::signbit(want.value);
}

// fp64 on operands of at most 16 bits: the output is the exact sum rounded
// once, for every output rounding, against MPFR and the Reference.
template <class TA, class TB, class TC>
void check_fp64_exact(std::size_t m, std::size_t n, std::size_t k, std::uint32_t seed) {
  const auto a = random_finite<TA>(m * k, seed);
  const auto b = random_finite<TB>(k * n, seed + 1);
  const Reference ref(lplab::detail::format_of<TC>::value);
  for (Round r : {Round::nearest_even, Round::toward_zero, Round::upward, Round::downward, Round::nearest_away}) {
    std::vector<TC> c(m * n);
    matmul(m, n, k, a.data(), b.data(), c.data(), MatmulOptions{.accumulator = Accumulator::fp64, .round = r});
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const testing::Expect want = ref.round(exact_dot(a, b, n, k, i, j), r, Overflow::ieee);
        ASSERT_TRUE(same(c[i * n + j], want))
            << "(" << i << "," << j << ") got " << c[i * n + j] << " want " << want.value << " k=" << k;
      }
  }
}

TEST(Matmul, fp64_is_exact_then_rounded_once) {
  check_fp64_exact<float8_e4m3fn, float8_e4m3fn, float>(7, 5, 300, 1);
  check_fp64_exact<float8_e4m3fn, float8_e5m2, bfloat16>(4, 9, 257, 2);  // mixed, as fp8 backward
  check_fp64_exact<float8_e5m2, float8_e5m2, float16>(3, 3, 1000, 3);
  check_fp64_exact<float4_e2m1fn, float6_e3m2fn, float8_e4m3fn>(5, 4, 64, 4);
  check_fp64_exact<float16, float16, float>(4, 4, 513, 5);  // wide products: still exact in 128 bits
  check_fp64_exact<float16, float8_e4m3fnuz, float16>(2, 6, 77, 6);
}

// The case double summation gets wrong: 2^60-scale terms cancel and leave a
// small one that a double sum loses; the fixed-point sum keeps it.
TEST(Matmul, fp64_keeps_what_double_sums_lose) {
  const std::vector<float16> a = {float16(60000.0f), float16(0x1p-24f), float16(-60000.0f)};
  const std::vector<float16> b = {float16(60000.0f), float16(0x1p-24f), float16(60000.0f)};
  float c = -1;
  matmul(1, 1, 3, a.data(), b.data(), &c, MatmulOptions{.accumulator = Accumulator::fp64});
  EXPECT_EQ(c, 0x1p-48f);  // 3.6e9 + 2^-48 - 3.6e9, exactly
}

// fp16 / bf16: each addition rounded to nearest-even into the accumulator, in
// order from +0 — against MPFR's exact fma and the Reference's rounding.
template <class Acc, class TA>
void check_narrow_chain(std::size_t m, std::size_t n, std::size_t k, const std::vector<TA>& a,
                        const std::vector<TA>& b, Accumulator which) {
  std::vector<float> c(m * n);
  matmul(m, n, k, a.data(), b.data(), c.data(), MatmulOptions{.accumulator = which});
  ExactArith ex;
  const Reference ref(Acc::descriptor);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double acc = 0.0;
      bool nan = false;
      for (std::size_t t = 0; t < k && !nan; ++t) {
        const RefDecoded x{RefClass::number, static_cast<double>(a[i * k + t])};
        const RefDecoded y{RefClass::number, static_cast<double>(b[t * n + j])};
        const RefDecoded z{RefClass::number, acc};
        const testing::ExactResult e = ex.compute(testing::Op::fma, x, y, z, Round::nearest_even);
        const testing::Expect r = ref.round(e.real, Round::nearest_even, Overflow::ieee);
        nan = r.nan || e.invalid;
        acc = r.value;
      }
      const float got = c[i * n + j];
      if (nan) {
        EXPECT_TRUE(std::isnan(got));
      } else {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(static_cast<float>(acc)))
            << accumulator_name(which) << " (" << i << "," << j << ") got " << got << " want " << acc;
      }
    }
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(Matmul, fp16_and_bf16_chains_match_the_exact_step_by_step_loop) {
  // float operands: inexact products in the accumulator format, so the
  // rounding of every step (and its ties) is exercised.
  const auto a = random_floats(6 * 200, 7, 3.0f), b = random_floats(200 * 5, 8, 3.0f);
  check_narrow_chain<float16>(6, 5, 200, a, b, Accumulator::fp16);
  check_narrow_chain<bfloat16>(6, 5, 200, a, b, Accumulator::bf16);
  // Large products: fp16 overflows to infinity on the way.
  const auto big_a = random_floats(2 * 50, 9, 300.0f), big_b = random_floats(50 * 2, 10, 300.0f);
  check_narrow_chain<float16>(2, 2, 50, big_a, big_b, Accumulator::fp16);
  // fp8 operands, the usual case.
  const auto qa = random_finite<float8_e4m3fn>(3 * 96, 11), qb = random_finite<float8_e4m3fn>(96 * 4, 12);
  check_narrow_chain<float16>(3, 4, 96, qa, qb, Accumulator::fp16);
  check_narrow_chain<bfloat16>(3, 4, 96, qa, qb, Accumulator::bf16);
}

// ml_dtypes' README: summing 10,000 U(0,1) values in bf16 gives 256 (against
// 4992 in fp32 for its sample). Past 256 bf16's spacing is 2, so every value
// below 1 rounds away: 256 for any sample.
TEST(Matmul, bf16_summation_stagnates_at_256) {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> x(10000);
  for (float& v : x) v = u(rng);
  const std::vector<float> ones(10000, 1.0f);
  float bf16_sum = 0, fp32_sum = 0, exact = 0;
  matmul(1, 1, 10000, x.data(), ones.data(), &bf16_sum, MatmulOptions{.accumulator = Accumulator::bf16});
  matmul(1, 1, 10000, x.data(), ones.data(), &fp32_sum, MatmulOptions{.accumulator = Accumulator::fp32});
  matmul(1, 1, 10000, x.data(), ones.data(), &exact, MatmulOptions{.accumulator = Accumulator::fp64});
  EXPECT_EQ(bf16_sum, 256.0f);
  EXPECT_NEAR(exact, 5000.0f, 120.0f);  // 4 standard deviations of the sum (28.9)
  EXPECT_NEAR(fp32_sum, exact, 0.01f);
}

// fp16 accumulation of unit products stops at 2048: 2048 + 1 is a tie that
// rounds to the even 2048.
TEST(Matmul, fp16_accumulation_stagnates_at_2048) {
  const std::vector<float8_e4m3fn> ones(4096, float8_e4m3fn(1.0f));
  float c16 = 0, c32 = 0, c64 = 0;
  matmul(1, 1, 4096, ones.data(), ones.data(), &c16, MatmulOptions{.accumulator = Accumulator::fp16});
  matmul(1, 1, 4096, ones.data(), ones.data(), &c32, MatmulOptions{.accumulator = Accumulator::fp32});
  matmul(1, 1, 4096, ones.data(), ones.data(), &c64, MatmulOptions{.accumulator = Accumulator::fp64});
  EXPECT_EQ(c16, 2048.0f);
  EXPECT_EQ(c32, 4096.0f);
  EXPECT_EQ(c64, 4096.0f);
}

// fp32 within the gamma_k bound of the exact result.
TEST(Matmul, fp32_within_gamma_k) {
  const std::size_t m = 9, n = 7, k = 777;
  const auto a = random_floats(m * k, 21, 1.0f), b = random_floats(k * n, 22, 1.0f);
  std::vector<double> c32(m * n), c64(m * n);
  std::vector<float> f32(m * n);
  matmul(m, n, k, a.data(), b.data(), f32.data(), MatmulOptions{.accumulator = Accumulator::fp32});
  const double u = 0x1p-24, gamma = k * u / (1 - k * u);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double exact = 0, abs_sum = 0;
      for (std::size_t t = 0; t < k; ++t) {
        exact += static_cast<double>(a[i * k + t]) * b[t * n + j];
        abs_sum += std::fabs(static_cast<double>(a[i * k + t]) * b[t * n + j]);
      }
      EXPECT_LE(std::fabs(f32[i * n + j] - exact), gamma * abs_sum + 0x1p-24 * std::fabs(exact));
    }
}

// The SIMD fp16/bf16 accumulators (narrow_acc.cpp) against their scalar
// reference loop on every target, bit for bit, on operands that exercise
// every branch: random codes of float (subnormals, huge values: the fp16
// accumulator overflows, the bf16 one meets float's extremes), infinities and
// NaN in some rows, and a ragged n.
TEST(Matmul, simd_narrow_accumulators_match_their_scalar_reference) {
  const std::size_t m = 5, n = 37, k = 300;
  std::mt19937 rng(17);
  std::vector<float> a(m * k), b(k * n);
  for (auto& x : a) x = std::ldexp(static_cast<float>(rng() % 4096) - 2048.0f, static_cast<int>(rng() % 60) - 40);
  for (auto& x : b) x = std::bit_cast<float>(static_cast<std::uint32_t>(rng()) & 0xbfffffffu);  // |x| < 2, every exponent below
  a[3 * k + 10] = std::numeric_limits<float>::infinity();
  b[20 * n + 4] = std::numeric_limits<float>::quiet_NaN();
  const MatmulProblem p{m, n, k, a.data(), b.data(), operand_range<float>(), operand_range<float>()};
  for (Accumulator acc : {Accumulator::fp16, Accumulator::bf16}) {
    std::vector<double> want(m * n), got(m * n);
    detail::matmul_narrow_reference(p, acc, want.data());
    for (const SimdTarget& t : simd_targets()) {
      ScopedSimdTarget pin(t.id);
      matmul_accumulate(p, MatmulOptions{.accumulator = acc}, got.data());
      for (std::size_t i = 0; i < m * n; ++i) {
        const bool same_value = std::isnan(want[i]) ? std::isnan(got[i])
                                                    : std::bit_cast<std::uint64_t>(want[i]) == std::bit_cast<std::uint64_t>(got[i]);
        ASSERT_TRUE(same_value) << t.name << " " << accumulator_name(acc) << " at " << i << ": " << got[i]
                                << " vs " << want[i];
      }
    }
  }
}

// Results do not depend on the thread count, for every accumulator.
TEST(Matmul, threads_do_not_change_results) {
  const std::size_t m = 33, n = 20, k = 96;
  const auto a = random_finite<float8_e4m3fn>(m * k, 5);
  const auto b = random_finite<float8_e5m2>(k * n, 6);
  for (Accumulator acc : {Accumulator::fp64, Accumulator::fp32, Accumulator::fp16, Accumulator::bf16,
                          Accumulator::tensor_core}) {
    std::vector<bfloat16> one(m * n), two(m * n), all(m * n);
    matmul(m, n, k, a.data(), b.data(), one.data(), {.accumulator = acc, .round = Round::stochastic, .seed = 4});
    matmul(m, n, k, a.data(), b.data(), two.data(), {.accumulator = acc, .round = Round::stochastic, .seed = 4, .threads = 2});
    matmul(m, n, k, a.data(), b.data(), all.data(), {.accumulator = acc, .round = Round::stochastic, .seed = 4, .threads = 0});
    for (std::size_t i = 0; i < m * n; ++i) {
      ASSERT_EQ(one[i].bits(), two[i].bits()) << accumulator_name(acc);
      ASSERT_EQ(one[i].bits(), all[i].bits()) << accumulator_name(acc);
    }
    // More threads than a few rows: empty bands.
    std::vector<bfloat16> few(5 * n), few7(5 * n);
    matmul(5, n, k, a.data(), b.data(), few.data(), {.accumulator = acc});
    matmul(5, n, k, a.data(), b.data(), few7.data(), {.accumulator = acc, .threads = 7});
    for (std::size_t i = 0; i < 5 * n; ++i) ASSERT_EQ(few[i].bits(), few7[i].bits()) << accumulator_name(acc);
  }
  std::vector<float> c(m * n);
  EXPECT_THROW(matmul(m, n, k, a.data(), b.data(), c.data(), {.threads = 5000}), std::invalid_argument);
  EXPECT_THROW(matmul(m, n, k, a.data(), b.data(), c.data(), {.scale_a = std::nanf("")}), std::invalid_argument);
  EXPECT_THROW(matmul(m, n, k, a.data(), b.data(), c.data(), {.scale_b = HUGE_VALF}), std::invalid_argument);
  EXPECT_THROW(matmul(m, n, k, a.data(), b.data(), c.data(), {.round = static_cast<Round>(9)}), std::invalid_argument);
  EXPECT_THROW(matmul(m, n, k, a.data(), b.data(), c.data(), {.overflow = static_cast<Overflow>(9)}),
               std::invalid_argument);
  // Saturation applies to a float C from the fp32 accumulator too.
  const float huge[] = {3e38f, 3e38f};
  const float two_[] = {2.0f, 2.0f};
  float sat = 0;
  matmul(1, 1, 2, huge, two_, &sat, {.overflow = Overflow::saturate});
  EXPECT_EQ(sat, std::numeric_limits<float>::max());
  matmul(1, 1, 2, huge, two_, &sat);
  EXPECT_TRUE(std::isinf(sat));
}

// The fp32 GEMM copy follows the SIMD target: Eigen built for AVX-512 under
// AVX3, for AVX2 + FMA under AVX2, the baseline otherwise; every copy within
// the gamma_k bound of the exact product.
TEST(Matmul, fp32_gemm_follows_the_simd_target) {
  const std::size_t m = 19, n = 23, k = 200;
  const auto a = random_floats(m * k, 8, 1.0f), b = random_floats(k * n, 9, 1.0f);
  std::vector<float> exact(m * n), c(m * n);
  matmul(m, n, k, a.data(), b.data(), exact.data(), {.accumulator = Accumulator::fp64});
  for (const SimdTarget& t : simd_targets()) {
    ScopedSimdTarget pin(t.id);
    const std::string isa = gemm_f32_isa();
#if defined(__x86_64__) && LPLAB_TEST_GEMM_LEVELS
    if (t.name.rfind("AVX3", 0) == 0) {
      EXPECT_NE(isa.find("AVX512"), std::string::npos) << isa;
    }
    if (t.name == "AVX2") {  // Eigen 3.4 names its AVX2 + FMA build "AVX SSE, ..."
      EXPECT_EQ(isa.rfind("AVX", 0), 0u) << isa;
      EXPECT_EQ(isa.find("AVX512"), std::string::npos) << isa;
    }
    if (t.name == "SSE4" || t.name == "SSSE3" || t.name == "EMU128" || t.name == "SCALAR") {
      EXPECT_EQ(isa.find("AVX"), std::string::npos) << t.name << ": " << isa;
    }
#endif
    matmul(m, n, k, a.data(), b.data(), c.data());
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double abs_sum = 0;
        for (std::size_t t2 = 0; t2 < k; ++t2) abs_sum += std::fabs(double(a[i * k + t2]) * b[t2 * n + j]);
        const double u = 0x1p-24, gamma = k * u / (1 - k * u);
        ASSERT_LE(std::fabs(c[i * n + j] - exact[i * n + j]), gamma * abs_sum + std::fabs(exact[i * n + j]) * u)
            << t.name;
      }
  }
}

// bf16_dot2: the emulation from the instruction's definition on worked
// values, and against the instruction itself where the CPU has AVX512-BF16.
TEST(Bf16Dot2, pairs_odd_first_with_daz_and_ftz) {
  // Products 1, 2^25, 1, -2^25: the pairs run p1, p0, p3, p2: 2^25, 2^25 + 1
  // -> 2^25 (ulp 4), 0, then 1. In order k = 0, 1, ... fp32 gives 0.
  const bfloat16 a[] = {bfloat16(1.0f), bfloat16(0x1p25f), bfloat16(1.0f), bfloat16(-0x1p25f)};
  const bfloat16 b[] = {bfloat16(1.0f), bfloat16(1.0f), bfloat16(1.0f), bfloat16(1.0f)};
  float c = -1;
  matmul(1, 1, 4, a, b, &c, {.accumulator = Accumulator::bf16_dot2});
  EXPECT_EQ(c, 1.0f);
  matmul(1, 1, 4, a, b, &c, {.accumulator = Accumulator::bf16});
  EXPECT_EQ(c, 0.0f);
  // A bf16 subnormal operand reads as zero; a product below 2^-126 flushes.
  const bfloat16 sub[] = {bfloat16::from_bits(0x0001), bfloat16(0x1p-70f)};
  const bfloat16 one[] = {bfloat16(0x1p100f), bfloat16(0x1p-70f)};
  matmul(1, 1, 1, sub, one, &c, {.accumulator = Accumulator::bf16_dot2});
  EXPECT_EQ(c, 0.0f);  // 2^-133 * 2^100 would be 2^-33 without DAZ
  matmul(1, 1, 1, sub + 1, one + 1, &c, {.accumulator = Accumulator::bf16_dot2});
  EXPECT_EQ(c, 0.0f);  // 2^-140 is a denormal result: flushed
  matmul(1, 1, 1, sub + 1, one + 1, &c, {.accumulator = Accumulator::fp64});
  EXPECT_EQ(c, 0x1p-140f);
  // Operands must be exact in bf16.
  const float16 h[] = {float16(1.0f)};
  EXPECT_THROW(matmul(1, 1, 1, h, h, &c, {.accumulator = Accumulator::bf16_dot2}), std::invalid_argument);
}

TEST(Bf16Dot2, emulation_matches_vdpbf16ps) {
  const std::size_t m = 7, n = 37, k = 301;  // odd k, ragged n
  std::mt19937 rng(23);
  std::vector<float> a(m * k), b(k * n);
  auto bf16_value = [&](std::uint32_t bits) { return static_cast<float>(bfloat16::from_bits(static_cast<std::uint16_t>(bits))); };
  for (auto& x : a) x = bf16_value(rng() & 0xffff);
  for (auto& x : b) {
    x = bf16_value((rng() & 0x3fff) | 0x3000 | (rng() & 0x8000));  // moderate exponents: sums that round
    if (rng() % 50 == 0) x = bf16_value(rng() & 0x807f);           // bf16 subnormals and zeros
  }
  for (auto& x : a)
    if (std::isnan(x) && rng() % 4 != 0) x = 1.0f;  // keep a few NaNs and infinities, not a quarter of them
  const MatmulProblem p{m, n, k, a.data(), b.data(), operand_range<bfloat16>(), operand_range<bfloat16>()};
  std::vector<double> emulated(m * n), hardware(m * n);
  detail::matmul_bf16_dot2(p, false, emulated.data());
  try {
    detail::matmul_bf16_dot2(p, true, hardware.data());
  } catch (const std::invalid_argument&) {
    GTEST_SKIP() << "this CPU has no AVX512-BF16: the emulation is checked only on worked values";
  }
  std::size_t finite = 0;
  for (std::size_t i = 0; i < m * n; ++i) {
    finite += std::isfinite(emulated[i]);
    const bool same_value = std::isnan(emulated[i]) ? std::isnan(hardware[i])
                                                    : std::bit_cast<std::uint64_t>(emulated[i]) == std::bit_cast<std::uint64_t>(hardware[i]);
    ASSERT_TRUE(same_value) << i << ": emulated " << emulated[i] << ", vdpbf16ps " << hardware[i];
  }
  EXPECT_GT(finite, m * n / 2);
}

// MXFP8 operands: the fp64 accumulator against MPFR's exact sum of
// element x 2^(scale code - 127) products, computed from the raw codes.
TEST(Matmul, block_scaled_operands_apply_their_scales) {
  const std::size_t m = 3, n = 4, k = 96;
  std::mt19937 rng(12);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> xa(m * k), xbt(n * k);
  for (std::size_t i = 0; i < m * k; ++i) xa[i] = nd(rng) * std::ldexp(1.0f, static_cast<int>(i / 32) * 7 - 10);
  for (auto& x : xbt) x = nd(rng) * 1e-3f;
  std::vector<float8_e4m3fn> ea(m * k);
  std::vector<float8_e5m2> ebt(n * k);
  std::vector<float8_e8m0fnu> sa(m * k / 32), sbt(n * k / 32);
  quantize(mxfp8_e4m3, xa, ea, sa);
  quantize(mxfp8_e5m2, xbt, ebt, sbt);
  std::vector<float> c(m * n);
  matmul(m, n, k, BlockScaledOperand<float8_e4m3fn, float8_e8m0fnu>{mxfp8_e4m3, ea.data(), sa.data()},
         BlockScaledOperand<float8_e5m2, float8_e8m0fnu>{mxfp8_e5m2, ebt.data(), sbt.data()}, c.data(),
         {.accumulator = Accumulator::fp64});
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      mpfr_t acc, prod;
      mpfr_inits2(2000, acc, prod, static_cast<mpfr_ptr>(nullptr));
      mpfr_set_zero(acc, 1);
      for (std::size_t t = 0; t < k; ++t) {
        const double va = std::ldexp(static_cast<double>(ea[i * k + t]), static_cast<int>(sa[(i * k + t) / 32].bits()) - 127);
        const double vb = std::ldexp(static_cast<double>(ebt[j * k + t]), static_cast<int>(sbt[(j * k + t) / 32].bits()) - 127);
        mpfr_set_d(prod, va, MPFR_RNDN);
        mpfr_mul_d(prod, prod, vb, MPFR_RNDN);
        mpfr_add(acc, acc, prod, MPFR_RNDN);
      }
      const float want = mpfr_get_flt(acc, MPFR_RNDN);
      mpfr_clears(acc, prod, static_cast<mpfr_ptr>(nullptr));
      EXPECT_EQ(c[i * n + j], want) << i << ", " << j;
      EXPECT_NE(want, 0.0f);
    }
  // A zero tensor scale is refused.
  EXPECT_THROW(matmul(m, n, k, BlockScaledOperand<float8_e4m3fn, float8_e8m0fnu>{mxfp8_e4m3, ea.data(), sa.data(), 0.0f},
                      BlockScaledOperand<float8_e5m2, float8_e8m0fnu>{mxfp8_e5m2, ebt.data(), sbt.data()}, c.data()),
               std::invalid_argument);
  // k must be a multiple of the block.
  EXPECT_THROW(matmul(m, n, 80, BlockScaledOperand<float8_e4m3fn, float8_e8m0fnu>{mxfp8_e4m3, ea.data(), sa.data()},
                      BlockScaledOperand<float8_e5m2, float8_e8m0fnu>{mxfp8_e5m2, ebt.data(), sbt.data()}, c.data()),
               std::invalid_argument);
  // NVFP4 (E4M3 block scales and a tensor scale): the values dequantize() gives.
  std::vector<float4_e2m1fn> qa(m * k), qb(n * k);
  std::vector<float8_e4m3fn> ska(m * k / 16), skb(n * k / 16);
  float ta = 0, tb = 0;
  quantize(nvfp4, xa, qa, ska, &ta);
  quantize(nvfp4, xbt, qb, skb, &tb);
  std::vector<float> da(m * k), dbt(n * k), db(k * n), want(m * n);
  dequantize(nvfp4, std::span<const float4_e2m1fn>(qa), std::span<const float8_e4m3fn>(ska), std::span<float>(da), ta);
  dequantize(nvfp4, std::span<const float4_e2m1fn>(qb), std::span<const float8_e4m3fn>(skb), std::span<float>(dbt), tb);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t t = 0; t < k; ++t) db[t * n + j] = dbt[j * k + t];
  matmul(m, n, k, da.data(), db.data(), want.data(), {.accumulator = Accumulator::fp64});
  matmul(m, n, k, BlockScaledOperand<float4_e2m1fn, float8_e4m3fn>{nvfp4, qa.data(), ska.data(), ta},
         BlockScaledOperand<float4_e2m1fn, float8_e4m3fn>{nvfp4, qb.data(), skb.data(), tb}, c.data(),
         {.accumulator = Accumulator::fp64});
  EXPECT_EQ(c, want);
}

TEST(Matmul, scales_multiply_the_result) {
  const std::vector<float8_e4m3fn> a = {float8_e4m3fn(1.5f), float8_e4m3fn(2.0f)};
  const std::vector<float8_e4m3fn> b = {float8_e4m3fn(3.0f), float8_e4m3fn(0.5f)};
  for (Accumulator acc : {Accumulator::fp64, Accumulator::fp32, Accumulator::fp16, Accumulator::bf16,
                          Accumulator::tensor_core}) {
    float c = 0;
    matmul(1, 1, 2, a.data(), b.data(), &c,
           MatmulOptions{.accumulator = acc, .scale_a = 0.25f, .scale_b = 8.0f});
    EXPECT_EQ(c, (1.5f * 3.0f + 2.0f * 0.5f) * 2.0f) << accumulator_name(acc);
  }
}

TEST(Matmul, shapes_empty_one_and_ragged) {
  float c = 7;
  const float one = 3.0f, two = 5.0f;
  matmul(0, 0, 0, static_cast<const float*>(nullptr), static_cast<const float*>(nullptr),
         static_cast<float*>(nullptr));
  matmul(1, 1, 0, static_cast<const float*>(nullptr), static_cast<const float*>(nullptr), &c,
         MatmulOptions{.accumulator = Accumulator::fp16});
  EXPECT_EQ(c, 0.0f);  // an empty sum
  EXPECT_FALSE(std::signbit(c));
  for (Accumulator acc : {Accumulator::fp64, Accumulator::fp32, Accumulator::fp16, Accumulator::bf16,
                          Accumulator::tensor_core}) {
    matmul(1, 1, 1, &one, &two, &c, MatmulOptions{.accumulator = acc});
    EXPECT_EQ(c, 15.0f) << accumulator_name(acc);
  }
  // 33 x 17 x 45: no dimension a multiple of any block; fp64 against MPFR.
  check_fp64_exact<float8_e4m3fn, float8_e4m3fn, float>(33, 17, 45, 31);
}

TEST(Matmul, bad_arguments_fail_before_any_work) {
  std::vector<float> a(6, 1.0f), b(6, 1.0f), c(4, -1.0f);
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { matmul(2, 2, 3, static_cast<const float*>(nullptr), b.data(), c.data()); }),
            "matmul: A is null with m*k = 6");
  EXPECT_EQ(message([&] { matmul(2, 2, 3, a.data(), b.data(), static_cast<float*>(nullptr)); }),
            "matmul: C is null with m*n = 4");
  const std::size_t huge = std::size_t{1} << 33;
  EXPECT_NE(message([&] { matmul(huge, huge, 1, a.data(), b.data(), c.data()); }).find("more than 2^40"),
            std::string::npos);
  EXPECT_NE(message([&] {
              matmul(2, 2, 3, a.data(), b.data(), c.data(),
                     MatmulOptions{.accumulator = AccumulatorModel{Accumulator::tensor_core, 0, 49, 0, 0}});
            }).find("fraction_bits 49 is outside [0, 48]"),
            std::string::npos);
  EXPECT_NE(message([&] {
              matmul(2, 2, 3, a.data(), b.data(), c.data(),
                     MatmulOptions{.accumulator = accumulators::tensor_core.promoted_every(100)});
            }).find("not a multiple of the 16-product"),
            std::string::npos);
  EXPECT_NE(message([&] {
              matmul(2, 2, 3, a.data(), b.data(), c.data(),
                     MatmulOptions{.accumulator = static_cast<Accumulator>(99)});
            }).find("unknown accumulator 99"),
            std::string::npos);
  EXPECT_NE(message([&] {
              matmul(2, 2, 3, a.data(), b.data(), c.data(),
                     MatmulOptions{.accumulator = Accumulator::fp64, .round = Round::stochastic});
            }).find("stochastic rounding of the fp64 sum into a 24-bit output"),
            std::string::npos);
  EXPECT_EQ(c, std::vector<float>(4, -1.0f));  // nothing written
  // Into a narrow format stochastic output of the fp64 sum is fine.
  std::vector<bfloat16> cb(4);
  matmul(2, 2, 3, a.data(), b.data(), cb.data(),
         MatmulOptions{.accumulator = Accumulator::fp64, .round = Round::stochastic, .seed = 1});
  EXPECT_EQ(static_cast<float>(cb[0]), 3.0f);
}

TEST(Matmul, specials_propagate) {
  const float inf = INFINITY;
  const std::vector<float> a = {1.0f, inf}, b = {2.0f, 3.0f}, z = {1.0f, 0.0f};
  for (Accumulator acc : {Accumulator::fp64, Accumulator::fp32, Accumulator::fp16, Accumulator::bf16,
                          Accumulator::tensor_core}) {
    float c = 0;
    matmul(1, 1, 2, a.data(), b.data(), &c, MatmulOptions{.accumulator = acc});
    EXPECT_EQ(c, inf) << accumulator_name(acc);
    matmul(1, 1, 2, a.data(), z.data(), &c, MatmulOptions{.accumulator = acc});
    EXPECT_TRUE(std::isnan(c)) << accumulator_name(acc) << ": inf * 0";
  }
}

}  // namespace
}  // namespace lplab::kernels

// ---------------------------------------------------------------------------
// The tensor-core model, implemented again from its description
// (docs/tensor-core-model.md) in integer arithmetic on the operands' bit
// fields, apart from kernels/src/tensor_core.cpp (which works on decoded
// doubles).
namespace lplab::kernels {
namespace {

__extension__ typedef __int128 i128;  // GCC and Clang's 128-bit integers
__extension__ typedef unsigned __int128 u128;

struct Term {
  bool zero;
  bool neg;
  u128 sig;  // value = sig * 2^(exp - frac)
  int exp;                // alignment exponent
  int frac;               // fraction bits of sig
};

template <class T>
Term operand_term(T x) {
  constexpr Descriptor d = T::descriptor;
  const std::uint64_t bits = x.bits();
  const int M = d.mantissa_bits;
  const std::uint64_t field = (bits >> M) & ((std::uint64_t{1} << d.exponent_bits) - 1);
  const std::uint64_t mant = bits & ((std::uint64_t{1} << M) - 1);
  const bool neg = (bits >> (M + d.exponent_bits)) & 1;
  const u128 sig = (field != 0 ? (std::uint64_t{1} << M) : 0) + mant;
  return {sig == 0, neg, sig, static_cast<int>(field != 0 ? field : 1) - d.bias, M};
}

// C as a term: a float value with at most 24 significant bits.
Term c_term(double c) {
  if (c == 0) return {true, false, 0, -133, 0};
  const bool neg = c < 0;
  const int e = std::max(std::ilogb(c), -126);
  const double s = std::ldexp(std::fabs(c), 23 - e);  // an integer < 2^24
  return {false, neg, static_cast<u128>(s), e, 23};
}

template <class TA, class TB>
double tc_reference_dot(const std::vector<TA>& a, const std::vector<TB>& b, std::size_t n, std::size_t k,
                        std::size_t i, std::size_t j, int F, int block, int R, int promote) {
  double c = 0, promoted = 0;
  int in_chain = 0;
  for (std::size_t start = 0; start < k; start += block) {
    const std::size_t end = std::min<std::size_t>(k, start + block);
    if (!std::isfinite(c)) {  // an infinite chain stays so (the operands are finite)
      in_chain += static_cast<int>(end - start);
      if (promote > 0 && in_chain == promote) {
        promoted = static_cast<float>(promoted) + static_cast<float>(c);
        c = 0;
        in_chain = 0;
      }
      continue;
    }
    std::vector<Term> terms = {c_term(c)};
    for (std::size_t t = start; t < end; ++t) {
      const Term x = operand_term(a[i * k + t]), y = operand_term(b[t * n + j]);
      if (x.zero || y.zero) terms.push_back({true, false, 0, -133, 0});
      else terms.push_back({false, x.neg != y.neg, x.sig * y.sig, x.exp + y.exp, x.frac + y.frac});
    }
    int E = -100000;
    for (const Term& t : terms) E = std::max(E, t.exp);
    i128 sum = 0;  // units of 2^(E - F)
    for (const Term& t : terms) {
      if (t.zero) continue;
      // t = sig * 2^(exp - frac); in units of 2^(E - F): shift by exp - frac - E + F.
      const int shift = t.exp - t.frac - E + F;
      const u128 units = shift >= 0 ? t.sig << shift : (-shift >= 127 ? 0 : t.sig >> -shift);
      sum += t.neg ? -static_cast<i128>(units) : static_cast<i128>(units);
    }
    if (sum == 0) {
      c = 0;
    } else {
      const bool neg = sum < 0;
      u128 mag = neg ? -static_cast<u128>(sum) : static_cast<u128>(sum);
      int w = 0;
      while ((mag >> w) != 0) ++w;
      const int q = E - F;
      const int lead = std::max(q + w - 1, -126);
      const int grid = lead - (R - 1);
      if (grid > q) mag = grid - q >= 127 ? 0 : mag >> (grid - q);
      const int scale = grid > q ? grid : q;
      const double v = std::ldexp(static_cast<double>(mag), scale);
      c = v >= 0x1p128 ? INFINITY : v;
      if (neg) c = -c;
    }
    in_chain += static_cast<int>(end - start);
    if (promote > 0 && in_chain == promote) {
      promoted = static_cast<float>(promoted) + static_cast<float>(c);
      c = 0;
      in_chain = 0;
    }
  }
  if (promote > 0) return in_chain == 0 ? promoted : static_cast<float>(promoted) + static_cast<float>(c);
  return c;
}

template <class TA, class TB>
void check_tensor_core(std::size_t m, std::size_t n, std::size_t k, const std::vector<TA>& a,
                       const std::vector<TB>& b, int F, int promote) {
  const bool narrow = finfo<TA>::bits <= 8 && finfo<TB>::bits <= 8;
  const int block = narrow ? 32 : 16, R = narrow ? std::min(F + 1, 24) : 24;
  std::vector<float> c(m * n);
  matmul(m, n, k, a.data(), b.data(), c.data(),
         MatmulOptions{.accumulator = AccumulatorModel{Accumulator::tensor_core, 0, F, 0, promote}});
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const float want = static_cast<float>(tc_reference_dot(a, b, n, k, i, j, F, block, R, promote));
      ASSERT_EQ(std::bit_cast<std::uint32_t>(c[i * n + j]), std::bit_cast<std::uint32_t>(want))
          << "(" << i << "," << j << ") k=" << k << " F=" << F << " promote=" << promote << ": got "
          << c[i * n + j] << " want " << want;
    }
}

TEST(TensorCore, model_matches_the_bit_field_reference) {
  const auto e4 = random_finite<float8_e4m3fn>(8 * 300, 41), e4b = random_finite<float8_e4m3fn>(300 * 6, 42);
  const auto e5 = random_finite<float8_e5m2>(300 * 6, 43);
  for (int F : {13, 5, 25})
    for (int promote : {0, 64, 128}) {
      check_tensor_core(8, 6, 300, e4, e4b, F, promote);
      check_tensor_core(8, 6, 300, e4, e5, F, promote);  // mixed E4M3 x E5M2
    }
  check_tensor_core(8, 6, 33, e4, e4b, 13, 0);  // one block and one product
  const auto h = random_finite<bfloat16>(5 * 70, 44), hb = random_finite<bfloat16>(70 * 3, 45);
  const auto f = random_finite<float16>(5 * 70, 46), fb = random_finite<float16>(70 * 3, 47);
  for (int promote : {0, 32}) {
    check_tensor_core(5, 3, 70, h, hb, 25, promote);
    check_tensor_core(5, 3, 70, f, fb, 25, promote);
  }
}

// Values that pin the model's steps, worked by hand.
// The SIMD tensor-core model against the scalar one, bit for bit, on every
// target: 8-bit and 16-bit operands (blocks of 32 and 16), F = 13 and 25, with
// and without promotion, a ragged last block, subnormal and zero operands,
// mixed signs (truncation of negative sums), and infinities and NaN.
TEST(TensorCore, simd_model_matches_the_scalar_model) {
  std::size_t m = 4, n = 21, k = 200;
  auto check = [&](const std::vector<float>& a, const std::vector<float>& b, OperandRange ra,
                   OperandRange rb, const MatmulOptions& o) {
    const MatmulProblem p{m, n, k, a.data(), b.data(), ra, rb};
    std::vector<double> want(m * n), got(m * n);
    detail::matmul_tensor_core_reference(p, o, want.data());
    for (const SimdTarget& t : simd_targets()) {
      ScopedSimdTarget pin(t.id);
      matmul_accumulate(p, o, got.data());
      for (std::size_t i = 0; i < m * n; ++i) {
        const bool same_value = std::isnan(want[i]) ? std::isnan(got[i])
                                                    : std::bit_cast<std::uint64_t>(want[i]) == std::bit_cast<std::uint64_t>(got[i]);
        ASSERT_TRUE(same_value) << t.name << " F=" << o.accumulator.fraction_bits << " promote " << o.accumulator.promote_every << " at " << i
                                << ": " << got[i] << " vs " << want[i];
      }
    }
  };
  auto as_floats = [](const auto& v) {
    std::vector<float> out;
    for (auto x : v) out.push_back(static_cast<float>(x));
    return out;
  };
  {
    auto a = as_floats(random_finite<float8_e4m3fn>(m * k, 31));
    auto b = as_floats(random_finite<float8_e5m2>(k * n, 32));
    for (std::size_t i = 0; i < b.size(); i += 7) b[i] = 0.0f;
    for (int promote : {0, 64}) {
      const MatmulOptions o{.accumulator = AccumulatorModel{Accumulator::tensor_core, 0, 13, 0, promote}};
      check(a, b, operand_range<float8_e4m3fn>(), operand_range<float8_e5m2>(), o);
    }
    a[2 * k + 50] = std::numeric_limits<float>::infinity();
    b[100 * n + 3] = -std::numeric_limits<float>::infinity();
    b[10 * n + 9] = std::numeric_limits<float>::quiet_NaN();
    check(a, b, operand_range<float8_e4m3fn>(), operand_range<float8_e5m2>(),
          {.accumulator = AccumulatorModel{Accumulator::tensor_core, 0, 13, 0, 128}});
  }
  {
    const auto a = as_floats(random_finite<bfloat16>(m * k, 33));
    const auto b = as_floats(random_finite<float16>(k * n, 34));
    for (int f : {13, 25})
      for (int promote : {0, 32})
        check(a, b, operand_range<bfloat16>(), operand_range<float16>(),
              {.accumulator = AccumulatorModel{Accumulator::tensor_core, 0, f, 0, promote}});
  }
  {
    // A long k splits B into panels of one vector of columns each, and 37
    // columns leave a ragged last vector and groups of vectors of every size.
    m = 3, n = 37, k = 4100;
    const auto a = as_floats(random_finite<float8_e4m3fn>(m * k, 35));
    auto b = as_floats(random_finite<float8_e4m3fn>(k * n, 36));
    b[4000 * n + 36] = std::numeric_limits<float>::infinity();
    for (int promote : {0, 128})
      check(a, b, operand_range<float8_e4m3fn>(), operand_range<float8_e4m3fn>(),
            {.accumulator = AccumulatorModel{Accumulator::tensor_core, 0, 13, 0, promote}});
  }
}

TEST(TensorCore, hand_worked_blocks) {
  auto tc = [](const std::vector<float8_e4m3fn>& a, const std::vector<float8_e4m3fn>& b, int F = 13) {
    float c = -1;
    matmul(1, 1, a.size(), a.data(), b.data(), &c,
           MatmulOptions{.accumulator = AccumulatorModel{Accumulator::tensor_core, 0, F, 0, 0}});
    return c;
  };
  using E = float8_e4m3fn;
  // 256 + 2^-6: E = 8, the grid is 2^(8-13) = 2^-5, and 2^-6 truncates away.
  EXPECT_EQ(tc({E(16.0f), E(0.125f)}, {E(16.0f), E(0.125f)}), 256.0f);
  // 256 + 2^-5 stays: on the grid.
  EXPECT_EQ(tc({E(16.0f), E(0.125f)}, {E(16.0f), E(0.25f)}), 256.03125f);
  // Truncation is toward zero: -(256 + 2^-6) gives -256.
  EXPECT_EQ(tc({E(-16.0f), E(-0.125f)}, {E(16.0f), E(0.125f)}), -256.0f);
  // Cancellation is exact: 448*448 - 448*448 + 2^-9*2^-9 = 2^-18 would be lost
  // below the grid (E = 8 + 8 = 16, grid 2^3): +0, not -0.
  EXPECT_EQ(tc({E(448.0f), E(-448.0f), E(0x1p-9f)}, {E(448.0f), E(448.0f), E(0x1p-9f)}), 0.0f);
  EXPECT_FALSE(std::signbit(tc({E(-1.0f)}, {E(0.0f)})));  // -1 * 0 = -0 sums to +0
  // The alignment exponent of a product is e(a) + e(b), not the product's:
  // 1.875 * 1.875 = 3.515625 has exponent 1, aligned at 0 + 0 = 0; with F = 3
  // the grid is 2^-3 and 3.515625 truncates to 3.5, kept in R = 4 bits.
  EXPECT_EQ(tc({E(1.875f)}, {E(1.875f)}, 3), 3.5f);
}

// The figure of the issue and of DeepSeek-V3 (section 3.3.2): FP8 GEMM with
// K = 4096 on Hopper's 14-bit accumulation loses percents; promoting into
// fp32 every 128 products recovers about two orders of magnitude.
TEST(TensorCore, fp8_accumulation_loss_at_k4096_and_promotion) {
  const std::size_t m = 8, n = 8, k = 4096;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float8_e4m3fn> a(m * k), b(k * n);
  for (auto& x : a) x = float8_e4m3fn(std::fabs(nd(rng)));
  for (auto& x : b) x = float8_e4m3fn(std::fabs(nd(rng)));
  std::vector<float> exact(m * n);  // the exact sum to float's 24 bits: plenty for percents
  std::vector<float> chain(m * n), promoted(m * n);
  matmul(m, n, k, a.data(), b.data(), exact.data(), MatmulOptions{.accumulator = Accumulator::fp64});
  matmul(m, n, k, a.data(), b.data(), chain.data(),
         MatmulOptions{.accumulator = AccumulatorModel{Accumulator::tensor_core, 0, 13, 0, 0}});
  matmul(m, n, k, a.data(), b.data(), promoted.data(),
         MatmulOptions{.accumulator = AccumulatorModel{Accumulator::tensor_core, 0, 13, 0, 128}});
  double worst_chain = 0, best_chain = 1, worst_promoted = 0;
  for (std::size_t i = 0; i < m * n; ++i) {
    const double rc = (exact[i] - chain[i]) / exact[i], rp = std::fabs(exact[i] - promoted[i]) / exact[i];
    EXPECT_GT(chain[i], 0.0f);
    EXPECT_LT(chain[i], exact[i]) << "truncation only ever lowers a sum of positive terms";
    worst_chain = std::max(worst_chain, rc);
    best_chain = std::min(best_chain, rc);
    worst_promoted = std::max(worst_promoted, rp);
  }
  std::printf("k=4096 |N(0,1)| E4M3, F=13: chain loses %.2f%%..%.2f%%; promoted every 128: at most %.4f%%\n",
              100 * best_chain, 100 * worst_chain, 100 * worst_promoted);
  EXPECT_GT(best_chain, 0.01);  // every output more than 1% too low
  EXPECT_LT(worst_chain, 0.2);
  EXPECT_LT(worst_promoted * 50, best_chain);  // promotion: well over an order of magnitude better
}

}  // namespace
}  // namespace lplab::kernels

// The portable core's bit helpers (double_bits.h, exact_sum.h: no libm, so
// that device code can use them) against libm's own functions.

namespace lplab::kernels {
namespace {

// Finite nonzero doubles: every binade's edges, subnormals, random patterns.
std::vector<double> finite_nonzero_doubles() {
  std::vector<double> v;
  for (int e = -1074; e <= 1023; ++e) {
    const double p = std::ldexp(1.0, e);
    for (double x : {p, std::nextafter(p, 0.0), std::nextafter(p, 2 * p), 1.5 * p})
      if (x != 0 && std::isfinite(x)) v.insert(v.end(), {x, -x});
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const double x = std::bit_cast<double>(rng());
    if (x != 0 && std::isfinite(x)) v.push_back(x);
  }
  return v;
}

TEST(PortableCore, exponent_and_scaling_match_libm) {
  std::uint64_t bad_exp = 0, bad_scale = 0, checked = 0;
  for (double x : finite_nonzero_doubles()) {
    bad_exp += double_bits::exponent_of(x) != std::ilogb(x);
    const int e = std::ilogb(x);
    // Shifts whose result stays normal (the model's range: |n| <= 300).
    for (int n : {-300, -277, -133, -64, -1, 0, 1, 25, 64, 241, 300}) {
      if (e + n < -1022 || e + n > 1023) continue;
      ++checked;
      bad_scale += double_bits::scale2(x, n) != std::ldexp(x, n);
    }
  }
  EXPECT_EQ(bad_exp, 0u);
  EXPECT_EQ(bad_scale, 0u);
  EXPECT_GT(checked, 1000000u);
}

TEST(PortableCore, sum_rounded_to_odd_matches_nextafter) {
  // The libm form of round-to-odd: TwoSum, then nextafter toward lo from an even hi.
  const auto reference = [](double a, double b) {
    const double hi = a + b;
    if (!std::isfinite(hi)) return hi;
    const double bb = hi - a;
    const double lo = (a - (hi - bb)) + (b - bb);
    if (lo == 0 || (std::bit_cast<std::uint64_t>(hi) & 1) != 0) return hi;
    return std::nextafter(hi, lo > 0 ? HUGE_VAL : -HUGE_VAL);
  };
  std::mt19937_64 rng(11);
  std::uint64_t bad = 0, inexact = 0;
  for (int i = 0; i < 1000000; ++i) {
    // Operands a few binades apart, so that most sums are inexact.
    const double a = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 120) - 60) *
                     ((rng() & 1) != 0 ? -1 : 1);
    const double b = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 120) - 60);
    const double r = exact_sum_odd(a, b);
    bad += std::bit_cast<std::uint64_t>(r) != std::bit_cast<std::uint64_t>(reference(a, b));
    inexact += r != a + b;
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(inexact, 100000u);  // the nudge was exercised
}

}  // namespace
}  // namespace lplab::kernels
