// Arithmetic against the exact MPFR-based reference, under every rounding and
// both overflow policies, values and flags: every operand pair of every format
// of up to 8 bits, every operand of sqrt, every fma triple of fp4; random
// samples plus the hard cases for the 16-bit formats.
#include <gtest/gtest.h>

#include <array>
#include <mutex>
#include <sstream>
#include <vector>

#include "lplab/lab/parallel.h"
#include "support/exact_arith.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

// The floating-point formats' overflow policies (Overflow::wrap is for the
// integer formats, and ieee in these).
constexpr Overflow kOverflows[] = {Overflow::ieee, Overflow::saturate};

template <class T>
T apply(Op op, T a, T b, T c, Round r, Overflow o, Flags* f, std::uint32_t rnd) {
  switch (op) {
    case Op::add: return add(a, b, r, o, f, rnd);
    case Op::sub: return sub(a, b, r, o, f, rnd);
    case Op::mul: return mul(a, b, r, o, f, rnd);
    case Op::div: return div(a, b, r, o, f, rnd);
    case Op::sqrt: return sqrt(a, r, o, f, rnd);
    case Op::fma: return fma(a, b, c, r, o, f, rnd);
  }
  return a;
}

// Checks one operation on codes (a, b, c) under all policies; describes the
// first mismatch in *why.
template <class T>
bool mismatch(const Reference& ref, ExactArith& ex, Op op, std::uint64_t ca, std::uint64_t cb,
              std::uint64_t cc, std::string* why) {
  const RefDecoded x = ref_decode(T::descriptor, ca), y = ref_decode(T::descriptor, cb),
                   z = ref_decode(T::descriptor, cc);
  const ExactResult nearest = ex.compute(op, x, y, z, Round::nearest_even);
  const ExactResult down = ex.compute(op, x, y, z, Round::downward);
  const std::uint32_t rnd = mix32(ca * 0x10001 + cb * 0x101 + cc);
  bool bad = false;
  for (Round r : kRounds) {
    const ExactResult& e = r == Round::downward ? down : nearest;
    const auto p = ref.prepare(e.real);
    for (Overflow o : kOverflows) {
      Flags f;
      const T got = apply(op, T::from_bits(ca), T::from_bits(cb), T::from_bits(cc), r, o, &f, rnd);
      Expect want = ref.round(p, r, o, rnd);
      if (e.invalid) want.flags |= static_cast<std::uint8_t>(Flag::invalid);
      if (ref.matches(want, got.bits()) && f.bits == want.flags) continue;
      if (why != nullptr && why->empty()) {
        std::ostringstream s;
        s << op_name(op) << "(" << x.value << ", " << y.value << ", " << z.value << ") "
          << round_name(r) << "/" << overflow_name(o) << ": lplab "
          << static_cast<double>(got) << " flags " << int(f.bits) << ", reference "
          << (want.nan ? "nan" : std::to_string(want.value)) << " flags " << int(want.flags);
        *why = s.str();
      }
      bad = true;
    }
  }
  return bad;
}

// Checks `count` operand sets on every core: operands(i) gives the codes
// (a, b, c) of set i. Returns the number of mismatching sets and describes
// the first one found.
struct Sweep {
  std::uint64_t visited, hits;
  std::string first;
};
template <class T, class Operands>
Sweep sweep(const Reference& ref, Op op, std::uint64_t count, Operands operands) {
  std::mutex m;
  std::string first;
  const auto res = experiments::parallel_count(count, [&](std::uint64_t i) {
    thread_local ExactArith ex;
    const auto [a, b, c] = operands(i);
    std::string local;
    const bool bad = mismatch<T>(ref, ex, op, a, b, c, &local);
    if (bad) {
      std::lock_guard lock(m);
      if (first.empty()) first = local;
    }
    return bad;
  });
  return {res.visited, res.hits, first};
}

using Codes = std::array<std::uint64_t, 3>;

template <class T>
class ArithAllPairs : public ::testing::Test {};
TYPED_TEST_SUITE(ArithAllPairs, ByteFormats, FormatNames);

TYPED_TEST(ArithAllPairs, add_sub_mul_div_every_pair_sqrt_every_code) {
  using T = TypeParam;
  const Reference ref(T::descriptor);
  const std::uint64_t n = code_count<T>();
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div}) {
    const Sweep res = sweep<T>(ref, op, n * n, [n](std::uint64_t i) { return Codes{i / n, i % n, 0}; });
    EXPECT_EQ(res.visited, n * n);
    EXPECT_EQ(res.hits, 0u) << res.first;
  }
  ExactArith ex;
  std::string why;
  std::uint64_t bad = 0;
  for (std::uint64_t c = 0; c < n; ++c) bad += mismatch<T>(ref, ex, Op::sqrt, c, 0, 0, &why);
  EXPECT_EQ(bad, 0u) << why;
}

TYPED_TEST(ArithAllPairs, fma_triples) {
  using T = TypeParam;
  const Reference ref(T::descriptor);
  const std::uint64_t n = code_count<T>();
  // Every triple for fp4 (4096); 300,000 random triples otherwise.
  const bool all = n <= 16;
  const std::uint64_t count = all ? n * n * n : 300000;
  const Sweep res = sweep<T>(ref, Op::fma, count, [n, all](std::uint64_t i) {
    if (all) return Codes{i / (n * n), (i / n) % n, i % n};
    const std::uint32_t h = mix32(i);
    return Codes{h % n, (h >> 8) % n, mix32(i + 0x9E3779B9) % n};
  });
  EXPECT_EQ(res.visited, count);
  EXPECT_EQ(res.hits, 0u) << res.first;
}

template <class T>
class Arith16 : public ::testing::Test {};
using SixteenBit = ::testing::Types<float16, bfloat16>;
TYPED_TEST_SUITE(Arith16, SixteenBit, FormatNames);

// The hard cases: zeros, subnormal and normal boundaries, neighbours of 1,
// max and its neighbours, infinities, NaN, and values whose products and
// quotients land on ties and thresholds.
template <class T>
std::vector<std::uint64_t> hard_codes() {
  using L = detail::Layout<T::descriptor>;
  const std::uint64_t one = static_cast<std::uint64_t>(T::descriptor.bias) << L::M;
  std::vector<std::uint64_t> pos = {0,
                                    1,
                                    2,
                                    L::mant_mask,
                                    L::mant_mask + 1,
                                    L::mant_mask + 2,
                                    one - 1,
                                    one,
                                    one + 1,
                                    one + (L::mant_mask >> 1),
                                    one + (std::uint64_t{1} << L::M),
                                    L::max_code - 1,
                                    L::max_code,
                                    L::inf_code,
                                    L::inf_code + 1,
                                    T(std::sqrt(finfo<T>::max)).bits(),
                                    T(std::sqrt(finfo<T>::tiny)).bits(),
                                    T(3.0f).bits(),
                                    T(0.1f).bits()};
  std::vector<std::uint64_t> all = pos;
  for (auto c : pos) all.push_back(c | L::sign_mask);
  return all;
}

TYPED_TEST(Arith16, hard_cases_every_pair_and_random_sample) {
  using T = TypeParam;
  const Reference ref(T::descriptor);
  const auto hard = hard_codes<T>();
  ExactArith ex;
  std::string why;
  std::uint64_t bad = 0;
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::fma, Op::sqrt})
    for (auto a : hard)
      for (auto b : hard)
        for (auto c : op == Op::fma ? hard : std::vector<std::uint64_t>{0})
          bad += mismatch<T>(ref, ex, op, a, b, c, &why);
  EXPECT_EQ(bad, 0u) << why;
  // 200,000 random operand sets per operation.
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::fma, Op::sqrt}) {
    const Sweep res = sweep<T>(ref, op, 200000, [](std::uint64_t i) {
      const std::uint32_t h1 = mix32(i * 3 + 1), h2 = mix32(i * 3 + 2);
      return Codes{h1 & 0xFFFF, h1 >> 16, h2 & 0xFFFF};
    });
    EXPECT_EQ(res.visited, 200000u);
    EXPECT_EQ(res.hits, 0u) << res.first;
  }
}

TEST(ArithOperators, operators_are_nearest_even) {
  const bfloat16 a(1.0f), b(0x1p-8f);  // half an ulp of 1.0
  EXPECT_EQ((a + b).bits(), a.bits());  // tie to even
  EXPECT_EQ(add(a, b, Round::upward).bits(), 0x3F81);
  bfloat16 c = a;
  c += bfloat16(2.0f);
  EXPECT_EQ(static_cast<float>(c), 3.0f);
  EXPECT_TRUE(isnan(float8_e4m3fn(448.0f) * float8_e4m3fn(2.0f)));  // overflow: NaN
  EXPECT_TRUE(isinf(float8_e5m2(57344.0f) + float8_e5m2(57344.0f)));
}

// The arithmetic takes significands of at most 25 bits (ArithmeticFormat):
// for a wider format no operation exists -- sub, sqrt and fma used to be
// declared for every format and fail inside their bodies.
using Wide = Float<detail::binary64>;
using Binary32 = Float<detail::binary32>;
template <class T>
constexpr bool kHasArithmetic = requires(T x) {
  add(x, x);
  sub(x, x);
  mul(x, x);
  div(x, x);
  sqrt(x);
  fma(x, x, x);
  x + x;
  x - x;
  x * x;
  x / x;
};
static_assert(kHasArithmetic<Binary32> && kHasArithmetic<bfloat16> && kHasArithmetic<float4_e2m1fn>);
template <class T>
constexpr bool kHasSub = requires(T x) { sub(x, x); };
template <class T>
constexpr bool kHasSqrt = requires(T x) { sqrt(x); };
template <class T>
constexpr bool kHasFma = requires(T x) { fma(x, x, x); };
template <class T>
constexpr bool kHasAdd = requires(T x) { add(x, x); };
template <class T>
constexpr bool kHasTimes = requires(T x) { x * x; };
static_assert(!kHasSub<Wide> && !kHasSqrt<Wide> && !kHasFma<Wide> && !kHasAdd<Wide> && !kHasTimes<Wide>);

}  // namespace
}  // namespace lplab::testing
