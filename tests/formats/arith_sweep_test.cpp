// lplab's float16 and bfloat16 add, sub, mul, div and sqrt (IEEE overflow)
// against an oracle that shares no code with lplab (arith_oracle.h): binary64
// arithmetic rounded to odd, then one rounding into the format.
//
// Extent. The exhaustive label (LPLAB_SWEEP=full) checks every operand pair
// (2^32 per op) of + * / under nearest_even, and sub there and the other four
// deterministic modes (nearest_away, toward_zero, upward, downward) on the
// pairs whose codes satisfy (a + b) % 64 == 0 (every code meets 1024 partners
// in each operand position); sub needs no more because it is the addition
// with b's sign flipped (sweep_nearest_even says why). sqrt takes all 2^16
// codes in all five modes. In all 3 * 2^33 + 2^31 + 2^27 checks for the two
// formats at some 11.5 ns of one core each, 10.5 of them lplab's op (the
// oracle runs vectorized over blocks, arith_oracle_block.h): about 2.5 minutes
// on two idle cores (every sub pair as well took a quarter more). The quick
// label takes (a + b) % 256 == 0 under nearest_even and (a + b) % 4096 == 0
// for the other modes, sqrt as in the exhaustive one.
// Stochastic rounding is not deterministic and is left to arith_test.
//
// Comparison is in the value domain: lplab's result code is decoded by the
// oracle's own decoder; values and zero signs must agree, NaN where the oracle
// has NaN (then lplab's NaN must be quiet). NaN payloads are not checked.
//
// The literal round-to-odd route sets the floating-point environment; it is
// compiled apart with -frounding-math (arith_oracle_fenv.cpp), and this file,
// lplab's code under test included, as usual. The library never sets it.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "formats/arith_oracle.h"
#include "formats/arith_oracle_block.h"
#include "lplab/runtime/text.h"
#include "lplab/formats.h"
#include "support/inputs.h"

namespace lplab::testing {
namespace {

using oracle::Op;

// The oracle's hand-written parameters are lplab's (its finfo is derived from
// the descriptors; the oracle's constants are written out).
static_assert(oracle::kFloat16.max == finfo<float16>::max);
static_assert(oracle::kFloat16.precision == finfo<float16>::nmant + 1);
static_assert(oracle::kFloat16.emin == finfo<float16>::minexp);
static_assert(oracle::kFloat16.emax == finfo<float16>::maxexp - 1);
static_assert(oracle::kBfloat16.max == finfo<bfloat16>::max);
static_assert(oracle::kBfloat16.precision == finfo<bfloat16>::nmant + 1);
static_assert(oracle::kBfloat16.emin == finfo<bfloat16>::minexp);
static_assert(oracle::kBfloat16.emax == finfo<bfloat16>::maxexp - 1);

template <class T>
struct Subject;
template <>
struct Subject<float16> {
  static constexpr const oracle::Format16& format = oracle::kFloat16;
  static double decode(std::uint16_t c) { return oracle::decode_float16(c); }
};
template <>
struct Subject<bfloat16> {
  static constexpr const oracle::Format16& format = oracle::kBfloat16;
  static double decode(std::uint16_t c) { return oracle::decode_bfloat16(c); }
};

constexpr std::uint32_t kCodes = 1u << 16;

// Every code's value by the oracle's decoder, built once per format.
template <class T>
const std::vector<double>& values() {
  static const std::vector<double> table = [] {
    std::vector<double> v(kCodes);
    for (std::uint32_t c = 0; c < kCodes; ++c)
      v[c] = Subject<T>::decode(static_cast<std::uint16_t>(c));
    return v;
  }();
  return table;
}

// The names lplab's tool reads and prints (nearest_even, ..., downward).

constexpr std::array<Round, 5> kAllModes = {Round::nearest_even, Round::nearest_away,
                                            Round::toward_zero, Round::upward, Round::downward};
constexpr std::array<Round, 4> kOtherModes = {Round::nearest_away, Round::toward_zero,
                                              Round::upward, Round::downward};
constexpr std::array<Op, 4> kBinaryOps = {Op::add, Op::sub, Op::mul, Op::div};

template <class T>
T lplab_op(Op op, T a, T b, Round r) {
  switch (op) {
    case Op::add: return add(a, b, r);
    case Op::sub: return sub(a, b, r);
    case Op::mul: return mul(a, b, r);
    case Op::div: return div(a, b, r);
    case Op::sqrt: return sqrt(a, r);
  }
  return T{};
}

bool same_value(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want);
}

// Mismatches of one sweep: a count and the first kShown, readable.
class Mismatches {
 public:
  static constexpr std::size_t kShown = 10;

  void record(const char* format, Op op, Round r, std::uint32_t a, double va, std::uint32_t b,
              double vb, std::uint32_t got, double vgot, double want, const char* why) {
    if (count_.fetch_add(1) >= kShown) return;
    char line[512];
    const std::string operands =
        op == Op::sqrt ? text("a=0x%04x (%.9g)", a, va)
                       : text("a=0x%04x (%.9g) b=0x%04x (%.9g)", a, va, b, vb);
    std::snprintf(line, sizeof line, "%s %s %s: %s -> lplab 0x%04x (%.9g), oracle %.9g (%a)%s\n",
                  format, oracle::op_name(op), round_name(r), operands.c_str(), got, vgot, want,
                  want, why);
    std::lock_guard lock(m_);
    shown_ += line;
  }
  std::uint64_t count() const { return count_.load(); }
  std::string report() const {
    std::lock_guard lock(m_);
    const std::uint64_t n = count_.load();
    return shown_ + (n > kShown ? "... and " + std::to_string(n - kShown) + " more\n" : "");
  }

 private:
  template <class... A>
  static std::string text(const char* f, A... args) {
    char buf[128];
    std::snprintf(buf, sizeof buf, f, args...);
    return buf;
  }
  std::atomic<std::uint64_t> count_{0};
  mutable std::mutex m_;
  std::string shown_;
};

// One result against the oracle; the quiet bit of an IEEE NaN is the top
// fraction bit (IEEE 754-2019 6.2.1).
template <class T>
void check(Op op, Round r, std::uint32_t a, std::uint32_t b, std::uint32_t got, double want,
           Mismatches& bad) {
  const auto& v = values<T>();
  const oracle::Format16& f = Subject<T>::format;
  const char* why = nullptr;
  if (!same_value(v[got], want)) {
    why = "";
  } else if (std::isnan(want) && (got & (1u << (f.precision - 2))) == 0) {
    why = " [lplab's NaN is signaling]";
  }
  if (why != nullptr) bad.record(f.name, op, r, a, v[a], b, v[b], got, v[got], want, why);
}

// The sweeps work through a row (a fixed first operand a, the second b = b0,
// b0 + stride, ...) in blocks of kBlock second operands:
//   (i)   lplab's results, one scalar call each (the code under test); the
//         second operands' values, in place for consecutive codes, else
//         gathered;
//   (ii)  the oracle's round-to-odd binary64 results and
//   (iii) their rounding into the format, vectorized (arith_oracle_block.h);
//   (iv)  a count of disagreements, vectorized; only a block with some is
//         walked again, one pair at a time, to describe them.
// With the op and the mode fixed at compile time, lplab's switches fold away.
constexpr std::uint32_t kBlock = 1024;

struct BlockBuffers {
  std::array<std::uint16_t, kBlock> got;
  std::array<double, kBlock> b, ro, want;
};

template <class T, Op op, Round r>
[[gnu::flatten]] void check_row(std::uint32_t a, std::uint32_t b0, std::uint32_t stride, Mismatches& bad,
                                BlockBuffers& buf) {
  const double* v = values<T>().data();
  const oracle::Format16& f = Subject<T>::format;
  const T x = T::from_bits(a);
  const std::uint32_t count = (kCodes - b0 + stride - 1) / stride;
  for (std::uint32_t first = 0; first < count; first += kBlock) {
    const std::uint32_t n = std::min(kBlock, count - first);
    const std::uint32_t b_first = b0 + first * stride;
    for (std::uint32_t i = 0; i < n; ++i)  // (i)
      buf.got[i] = lplab_op(op, x, T::from_bits(b_first + i * stride), r).bits();
    const double* vb = v + b_first;  // consecutive codes: the values in place, else gathered
    if (stride != 1) {
      for (std::uint32_t i = 0; i < n; ++i) buf.b[i] = v[b_first + i * stride];
      vb = buf.b.data();
    }
    oracle::expected_block(f, op, r, v[a], vb, buf.ro.data(), buf.want.data(), n);  // (ii), (iii)
    if (oracle::count_wrong(f, buf.got.data(), buf.want.data(), n) != 0) [[unlikely]] {  // (iv)
      for (std::uint32_t i = 0; i < n; ++i)
        check<T>(op, r, a, b_first + i * stride, buf.got[i], buf.want[i], bad);
    }
  }
}

// Which binary ops a sweep takes.
struct BinaryOps {
  bool add_mul_div, sub;
};
constexpr BinaryOps kAllBinaryOps{true, true};

// The binary ops of one first operand a in mode r.
template <class T, Round r>
void check_row(std::uint32_t a, std::uint32_t b0, std::uint32_t stride, BinaryOps ops, Mismatches& bad) {
  thread_local BlockBuffers buffers_of_thread;
  BlockBuffers& buf = buffers_of_thread;  // one thread-local lookup per row
  if (ops.add_mul_div) check_row<T, Op::add, r>(a, b0, stride, bad, buf);
  if (ops.sub) check_row<T, Op::sub, r>(a, b0, stride, bad, buf);
  if (ops.add_mul_div) {
    check_row<T, Op::mul, r>(a, b0, stride, bad, buf);
    check_row<T, Op::div, r>(a, b0, stride, bad, buf);
  }
}

template <class T>
void check_row(Round r, std::uint32_t a, std::uint32_t b0, std::uint32_t stride, BinaryOps ops,
               Mismatches& bad) {
  switch (r) {
    case Round::nearest_even: return check_row<T, Round::nearest_even>(a, b0, stride, ops, bad);
    case Round::nearest_away: return check_row<T, Round::nearest_away>(a, b0, stride, ops, bad);
    case Round::toward_zero: return check_row<T, Round::toward_zero>(a, b0, stride, ops, bad);
    case Round::upward: return check_row<T, Round::upward>(a, b0, stride, ops, bad);
    case Round::downward: return check_row<T, Round::downward>(a, b0, stride, ops, bad);
    case Round::stochastic: return;
  }
}

// Two threads split the first operand's codes (CI runs this on two cores).
template <class F>
void on_two_threads(F&& per_a) {
  auto share = [&](std::uint32_t first) {
    for (std::uint32_t a = first; a < kCodes; a += 2) per_a(a);
  };
  std::thread other(share, 1u);
  share(0);
  other.join();
}

// The binary ops `ops` under each mode on the pairs with (a + b) % stride == 0.
template <class T, std::size_t N>
void sweep_pairs(const std::array<Round, N>& modes, std::uint32_t stride, BinaryOps ops = kAllBinaryOps) {
  Mismatches bad;
  on_two_threads([&](std::uint32_t a) {
    const std::uint32_t b0 = (stride - a % stride) % stride;
    for (Round r : modes) check_row<T>(r, a, b0, stride, ops, bad);
  });
  EXPECT_EQ(bad.count(), 0u) << bad.report();
}

template <class T>
void sweep_sqrt() {
  Mismatches bad;
  const auto& v = values<T>();
  for (std::uint32_t a = 0; a < kCodes; ++a) {
    for (Round r : kAllModes) {
      const std::uint32_t got = sqrt(T::from_bits(a), r).bits();
      const double want = oracle::expected(Subject<T>::format, Op::sqrt, r, v[a], 0);
      check<T>(Op::sqrt, r, a, 0, got, want, bad);
    }
  }
  EXPECT_EQ(bad.count(), 0u) << bad.report();
}

// The extent, read at run time so that one program serves both labels: every
// pair under nearest-even and (a + b) % 64 == 0 for the other modes with
// LPLAB_SWEEP=full (the exhaustive label), (a + b) % 256 and % 4096 otherwise.
struct PairStrides {
  std::uint32_t nearest, sub, other;  // nearest-even: add, mul, div; its sub; the other modes
};
PairStrides pair_strides() {
  const bool full = SweepExtent::from_environment().full;
  const PairStrides s = full ? PairStrides{1, 64, 64} : PairStrides{256, 256, 4096};
  std::printf("  pairs with (a + b) %% %u == 0 under nearest-even (sub: %% %u), %% %u under the other modes (%s)\n",
              s.nearest, s.sub, s.other, full ? "LPLAB_SWEEP=full" : "quick");
  return s;
}

// Under nearest-even: add, mul and div on the pairs of pair_strides().nearest
// (every pair with LPLAB_SWEEP=full), sub on those of .sub. lplab's sub is
// its add with b's sign flipped (arith.h: a - b = a + (-b), NaN operands left
// as they are), and flipping the sign is a bijection of the codes, so every
// operand pair sub hands to the addition is one the full add sweep checks;
// what sub adds of its own, the flip and the NaN exception, the sampled pairs
// decide (every code meets 1024 partners in each position, every NaN among them).
template <class T>
void sweep_nearest_even() {
  const PairStrides s = pair_strides();
  constexpr std::array modes{Round::nearest_even};
  if (s.sub == s.nearest) return sweep_pairs<T>(modes, s.nearest);
  sweep_pairs<T>(modes, s.nearest, BinaryOps{.add_mul_div = true, .sub = false});
  sweep_pairs<T>(modes, s.sub, BinaryOps{.add_mul_div = false, .sub = true});
}

TEST(ArithSweep, float16_add_sub_mul_div_nearest_even) { sweep_nearest_even<float16>(); }
TEST(ArithSweep, float16_add_sub_mul_div_away_zero_up_down) {
  sweep_pairs<float16>(kOtherModes, pair_strides().other);
}
TEST(ArithSweep, float16_sqrt_every_code_every_mode) { sweep_sqrt<float16>(); }
TEST(ArithSweep, bfloat16_add_sub_mul_div_nearest_even) { sweep_nearest_even<bfloat16>(); }
TEST(ArithSweep, bfloat16_add_sub_mul_div_away_zero_up_down) {
  sweep_pairs<bfloat16>(kOtherModes, pair_strides().other);
}
TEST(ArithSweep, bfloat16_sqrt_every_code_every_mode) { sweep_sqrt<bfloat16>(); }

// ---- The oracle itself -------------------------------------------------------

// The decoders at hex anchors, and float16's against the compiler's _Float16.
TEST(ArithOracle, decoders) {
  EXPECT_EQ(oracle::decode_float16(0x3c00), 1.0);
  EXPECT_EQ(oracle::decode_float16(0x7bff), 65504.0);  // (2 - 2^-10) * 2^15
  EXPECT_EQ(oracle::decode_float16(0x0001), 0x1p-24);  // smallest subnormal
  EXPECT_EQ(oracle::decode_float16(0x03ff), 0x3ffp-24);
  EXPECT_EQ(oracle::decode_float16(0x0400), 0x1p-14);
  EXPECT_EQ(oracle::decode_float16(0xc000), -2.0);
  EXPECT_EQ(oracle::decode_float16(0xfc00), -INFINITY);
  EXPECT_TRUE(std::signbit(oracle::decode_float16(0x8000)));
  EXPECT_TRUE(std::isnan(oracle::decode_float16(0x7c01)));
  EXPECT_EQ(oracle::decode_bfloat16(0x3f80), 1.0);
  EXPECT_EQ(oracle::decode_bfloat16(0x7f7f), 0x1.fep127);
  EXPECT_EQ(oracle::decode_bfloat16(0x0001), 0x1p-133);
  EXPECT_EQ(oracle::decode_bfloat16(0xff80), -INFINITY);
  EXPECT_TRUE(std::isnan(oracle::decode_bfloat16(0x7f81)));
#ifdef __FLT16_MANT_DIG__
  for (std::uint32_t c = 0; c < kCodes; ++c) {
    const double mine = oracle::decode_float16(static_cast<std::uint16_t>(c));
    const auto half = std::bit_cast<_Float16>(static_cast<std::uint16_t>(c));
    const double compiler = static_cast<double>(half);
    ASSERT_TRUE(same_value(mine, compiler)) << "code 0x" << std::hex << c;
  }
#endif
}

struct HandCase {
  const oracle::Format16* format;
  Op op;
  double a, b;
  std::array<double, 5> want;  // nearest_even, nearest_away, toward_zero, upward, downward
};

// Results worked out by hand.
TEST(ArithOracle, hand_cases) {
  const auto* h = &oracle::kFloat16;
  const auto* bf = &oracle::kBfloat16;
  constexpr double one_up = 1 + 0x1p-10;  // float16's successor of 1
  const HandCase cases[] = {
      // 1 + 2^-11 is the midpoint of 1 and 1 + 2^-10; 1's last bit is even.
      {h, Op::add, 1, 0x1p-11, {1, one_up, 1, one_up, 1}},
      {h, Op::sub, -1, 0x1p-11, {-1, -one_up, -1, -1, -one_up}},
      // Just above and below the midpoint.
      {h, Op::add, 1, 0x1.004p-11, {one_up, one_up, 1, one_up, 1}},
      {h, Op::sub, 1 + 0x1p-9, 0x1.ffcp-12, {1 + 0x1p-9, 1 + 0x1p-9, one_up, 1 + 0x1p-9, one_up}},
      // 65504 + 16 = 65520, the midpoint of max (odd) and 2^16: ties overflow.
      {h, Op::add, 65504, 16, {INFINITY, INFINITY, 65504, INFINITY, 65504}},
      {h, Op::add, -65504, -16, {-INFINITY, -INFINITY, -65504, -65504, -INFINITY}},
      {h, Op::add, 65504, 8, {65504, 65504, 65504, INFINITY, 65504}},
      // 1/3 = 1.0101010101|0101...b * 2^-2: 0x155 truncated, the rest < 1/2 ulp.
      {h, Op::div, 1, 3, {0x555p-12, 0x555p-12, 0x555p-12, 0x556p-12, 0x555p-12}},
      {h, Op::div, -1, 3, {-0x555p-12, -0x555p-12, -0x555p-12, -0x555p-12, -0x556p-12}},
      // bfloat16: 1/3 = 1.0101010|1010...b * 2^-2, the rest > 1/2 ulp.
      {bf, Op::div, 1, 3, {0xabp-9, 0xabp-9, 0xaap-9, 0xabp-9, 0xaap-9}},
      // sqrt 2 = 1.0110101000|00100...b: 0x1a8 truncated.
      {h, Op::sqrt, 2, 0, {0x5a8p-10, 0x5a8p-10, 0x5a8p-10, 0x5a9p-10, 0x5a8p-10}},
      // bfloat16 subnormal products (smallest subnormal 2^-133): 2^-140 is far
      // below half of it, 2^-134 is exactly half, 1.5 * 2^-134 above half.
      {bf, Op::mul, 0x1p-70, 0x1p-70, {0, 0, 0, 0x1p-133, 0}},
      {bf, Op::mul, -0x1p-70, 0x1p-70, {-0.0, -0.0, -0.0, -0.0, -0x1p-133}},
      {bf, Op::mul, 0x1p-67, 0x1p-67, {0, 0x1p-133, 0, 0x1p-133, 0}},
      {bf, Op::mul, 0x1.8p-67, 0x1p-67, {0x1p-133, 0x1p-133, 0, 0x1p-133, 0}},
      // 3 * 2^-134 = 1.5 * 2^-133: the midpoint of 2^-133 (odd) and 2^-132.
      {bf, Op::mul, 0x1.8p-67, 0x1p-66, {0x1p-132, 0x1p-132, 0x1p-133, 0x1p-132, 0x1p-133}},
      // bfloat16 sums the binary64 addition cannot hold exactly.
      {bf, Op::add, 1, 0x1p-100, {1, 1, 1, 1 + 0x1p-7, 1}},
      {bf, Op::sub, 1, 0x1p-100, {1, 1, 1 - 0x1p-8, 1, 1 - 0x1p-8}},
      // An exact zero sum is -0 only when rounding downward.
      {h, Op::sub, 1, 1, {0, 0, 0, 0, -0.0}},
      {h, Op::add, -0.0, -0.0, {-0.0, -0.0, -0.0, -0.0, -0.0}},
      {h, Op::add, 0, -0.0, {0, 0, 0, 0, -0.0}},
      {h, Op::div, 1, 0, {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY}},
      {h, Op::div, 0, 0, {NAN, NAN, NAN, NAN, NAN}},
      {h, Op::sqrt, -0.0, 0, {-0.0, -0.0, -0.0, -0.0, -0.0}},
  };
  // The scalar route, and the block route of the pair sweeps (a block of one).
  for (const HandCase& c : cases) {
    for (std::size_t m = 0; m < kAllModes.size(); ++m) {
      const double got = oracle::expected(*c.format, c.op, kAllModes[m], c.a, c.b);
      EXPECT_TRUE(same_value(got, c.want[m]))
          << c.format->name << ' ' << oracle::op_name(c.op) << ' ' << round_name(kAllModes[m]) << ' '
          << c.a << ", " << c.b << ": oracle " << got << ", by hand " << c.want[m];
      if (c.op == Op::sqrt) continue;
      double ro = 0, block = 0;
      oracle::expected_block(*c.format, c.op, kAllModes[m], c.a, &c.b, &ro, &block, 1);
      EXPECT_TRUE(same_value(block, c.want[m]))
          << c.format->name << ' ' << oracle::op_name(c.op) << ' ' << round_name(kAllModes[m]) << ' '
          << c.a << ", " << c.b << ": block oracle " << block << ", by hand " << c.want[m];
    }
  }
}

// The residual route to round-to-odd equals the literal one through the
// floating-point environment: an anchor whose truncation differs from its
// nearest rounding, then many pairs of codes of both formats, and every code
// under sqrt. Both forms of the residual route are held to it: the scalar
// one (hand_cases, sqrt sweeps) and the block one of the pair sweeps, in
// whichever instruction-set version this machine runs; the block one's
// rounding into the format is held to the scalar one's in every mode.
TEST(ArithOracle, residual_sticky_equals_fenv_flags) {
  // 1/10 = 0x1.999999999999ap-4 to nearest, 0x1.9999999999999p-4 truncated (odd).
  EXPECT_EQ(oracle::ro_residual(Op::div, 1, 10), 0x1.9999999999999p-4);
  EXPECT_EQ(oracle::ro_residual(Op::sub, 1, 0x1p-60), 1 - 0x1p-53);
  auto literal_of = [](Op op, double a, double b) {
    double ro = 0;
    oracle::ro_fenv_block(op, a, &b, &ro, 1);
    return ro;
  };
  EXPECT_EQ(literal_of(Op::div, 1, 10), 0x1.9999999999999p-4);
  EXPECT_EQ(literal_of(Op::add, 1, 0x1p-60), 1 + 0x1p-52);
  constexpr std::uint32_t kStride = 1021;  // prime: each a meets 64 b spread over all exponents
  std::uint64_t compared = 0, inexact = 0, bad = 0;
  std::string first;
  auto note = [&](const char* name, Op op, const char* route, std::uint32_t a, std::uint32_t b,
                  double got, const char* reference, double want) {
    if (bad++ != 0) return;
    char line[256];
    std::snprintf(line, sizeof line, "%s %s a=0x%04x b=0x%04x: %s %a, %s %a", name,
                  oracle::op_name(op), a, b, route, got, reference, want);
    first = line;
  };
  std::vector<std::uint32_t> bs;
  std::vector<double> vb, literal, block_ro, block_want;
  auto run = [&](const char* name, const oracle::Format16& f, const std::vector<double>& v) {
    for (std::uint32_t a = 0; a < kCodes; ++a) {
      // 1. The literal route under round toward zero, 2. the residual routes
      // in the default environment (round to nearest).
      bs.clear();
      vb.clear();
      for (std::uint32_t b = (kStride - a % kStride) % kStride; b < kCodes; b += kStride) {
        bs.push_back(b);
        vb.push_back(v[b]);
      }
      const std::size_t n = bs.size();
      literal.resize(n);
      block_ro.resize(n);
      block_want.resize(n);
      for (Op op : kBinaryOps) {
        oracle::ro_fenv_block(op, v[a], vb.data(), literal.data(), n);
        oracle::expected_block(f, op, Round::nearest_even, v[a], vb.data(), block_ro.data(),
                               block_want.data(), n);
        for (std::size_t i = 0; i < n; ++i) {
          const double scalar = oracle::ro_residual(op, v[a], vb[i]);
          ++compared;
          const bool odd = (std::bit_cast<std::uint64_t>(literal[i]) & 1) != 0;
          if (std::isfinite(literal[i]) && odd) ++inexact;
          if (!same_value(scalar, literal[i])) note(name, op, "residual", a, bs[i], scalar, "fenv", literal[i]);
          if (!same_value(block_ro[i], literal[i]))
            note(name, op, "block residual", a, bs[i], block_ro[i], "fenv", literal[i]);
        }
        for (Round r : kAllModes) {
          oracle::expected_block(f, op, r, v[a], vb.data(), block_ro.data(), block_want.data(), n);
          for (std::size_t i = 0; i < n; ++i) {
            const double scalar = oracle::expected(f, op, r, v[a], vb[i]);
            if (!same_value(block_want[i], scalar))
              note(name, op, round_name(r), a, bs[i], block_want[i], "scalar", scalar);
          }
        }
      }
      const double sqrt_literal = literal_of(Op::sqrt, v[a], 0);
      const double sqrt_residual = oracle::ro_residual(Op::sqrt, v[a], 0);
      if (!same_value(sqrt_residual, sqrt_literal))
        note(name, Op::sqrt, "residual", a, 0, sqrt_residual, "fenv", sqrt_literal);
    }
  };
  run("float16", oracle::kFloat16, values<float16>());
  run("bfloat16", oracle::kBfloat16, values<bfloat16>());
  EXPECT_EQ(bad, 0u) << first;
  EXPECT_GT(inexact, compared / 4);  // the sticky bit was exercised, not only exact results
}

}  // namespace
}  // namespace lplab::testing
