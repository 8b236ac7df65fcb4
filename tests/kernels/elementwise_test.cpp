// Elementwise ops and reductions (lplab/kernels/elementwise.h) on every SIMD
// target:
//  - the ops whose fp32 result is correctly rounded (relu, square, sqrt,
//    rsqrt, scale, add, mul, axpy) bit for bit against a plain scalar loop
//    over the functors, rounded with the scalar core, for every policy;
//  - gelu (both forms) and pow against the C library in double, within the
//    stated error bounds;
//  - known values, the per-op / fused / fp64 difference of x.square().sqrt(),
//    strided views against their contiguous copies, triu, the reductions
//    (ml_dtypes' bf16 sum of 10,000 U(0,1): 256) and bad input.
#include "lplab/kernels/elementwise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "lplab/kernels/ops.h"
#include "lplab/kernels/targets.h"

#include "support/errors.h"

namespace lplab::kernels {
namespace {

// Every finite and non-finite code of a narrow format, or random floats of
// every magnitude (random bit patterns) for float; n of them, repeating.
template <class T>
std::vector<T> sample(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, float>) {
      out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    } else {
      constexpr std::uint64_t codes = std::uint64_t{1} << finfo<T>::bits;
      out[i] = T::from_bits(codes <= n ? i % codes : rng() % codes);
    }
  }
  return out;
}

template <class T>
bool same_bits(T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
    if (std::isnan(a) && std::isnan(b)) return true;
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  } else {
    if (isnan(a) && isnan(b)) return true;
    return a.bits() == b.bits();
  }
}

using testing::error_of;

// Runs body once per SIMD target this CPU and build have.
template <class F>
void on_every_target(F&& body) {
  for (const SimdTarget& t : simd_targets()) {
    ScopedSimdTarget pin(t.id);
    SCOPED_TRACE(t.name);
    body();
  }
}

constexpr Round kRounds[] = {Round::nearest_even, Round::toward_zero, Round::upward,
                             Round::downward, Round::nearest_away, Round::stochastic};

// The exact ops: y[i] = round_T(f(float(x[i]))) — one scalar loop, one rounding
// by the scalar core, the same stochastic draw (seed + 0, i).
template <class T, class F>
void check_exact_unary(Unary op, float param, F f) {
  const std::size_t n = 9000;  // more than two chunks, not a multiple of a vector
  const auto x = sample<T>(n, 7);
  std::vector<T> y(n);
  for (Round r : kRounds)
    for (Overflow o : {Overflow::ieee, Overflow::saturate}) {
      on_every_target([&] {
        const Step step{op, param};
        map({step}, View<const T>(x.data(), {n}), View<T>(y.data(), {n}),
            {.compute = Compute::fused, .round = r, .overflow = o, .seed = 11});
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint32_t bits = r == Round::stochastic ? stochastic_bits(11, i) : 0;
          const T want = lplab::convert<T>(f(static_cast<float>(x[i])), r, o, nullptr, bits);
          ASSERT_TRUE(same_bits(y[i], want))
              << unary_name(op) << " of " << static_cast<float>(x[i]) << " gave " << static_cast<double>(y[i])
              << ", want " << static_cast<double>(want) << " (rounding " << static_cast<int>(r) << ")";
        }
      });
    }
}

template <class T>
class ElementwiseTyped : public ::testing::Test {};
using Formats = ::testing::Types<float, float16, bfloat16, float8_e4m3fn, float8_e5m2, float6_e2m3fn,
                                 float4_e2m1fn, float8_e4m3fnuz, float8_e8m0fnu>;
TYPED_TEST_SUITE(ElementwiseTyped, Formats);

TYPED_TEST(ElementwiseTyped, correctly_rounded_unary_ops_match_a_scalar_loop) {
  using T = TypeParam;
  check_exact_unary<T>(Unary::identity, 0, [](float v) { return v; });
  check_exact_unary<T>(Unary::relu, 0, ops::Relu{});
  check_exact_unary<T>(Unary::square, 0, ops::Square{});
  check_exact_unary<T>(Unary::sqrt, 0, ops::Sqrt{});
  check_exact_unary<T>(Unary::rsqrt, 0, ops::Rsqrt{});
  check_exact_unary<T>(Unary::scale, -0.375f, ops::Scale{-0.375f});
}

TYPED_TEST(ElementwiseTyped, binary_ops_match_a_scalar_loop) {
  using T = TypeParam;
  const std::size_t n = 9000;
  const auto a = sample<T>(n, 3);
  auto b = sample<T>(n, 4);
  std::mt19937 rng(5);
  std::shuffle(b.begin(), b.end(), rng);
  std::vector<T> y(n);
  for (Round r : {Round::nearest_even, Round::upward, Round::stochastic}) {
    on_every_target([&] {
      const View<const T> va(a.data(), {n}), vb(b.data(), {n});
      const View<T> vy(y.data(), {n});
      const ElementwiseOptions opt{.round = r, .seed = 3};
      auto check = [&](const char* what, auto f) {
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint32_t bits = r == Round::stochastic ? stochastic_bits(3, i) : 0;
          const T want = lplab::convert<T>(f(static_cast<float>(a[i]), static_cast<float>(b[i])), r,
                                           Overflow::ieee, nullptr, bits);
          ASSERT_TRUE(same_bits(y[i], want)) << what << " at " << i << ": " << static_cast<float>(a[i])
                                              << ", " << static_cast<float>(b[i]);
        }
      };
      add(va, vb, vy, opt);
      check("add", ops::Add{});
      mul(va, vb, vy, opt);
      check("mul", ops::Mul{});
      axpy(1.5f, va, vb, vy, opt);
      check("axpy", ops::Axpy{1.5f});
    });
  }
}

// Compute::per_op rounds between steps (draw seed + step), fused does not,
// fp64 computes in double.
TYPED_TEST(ElementwiseTyped, square_sqrt_per_op_rounds_the_square) {
  using T = TypeParam;
  const std::size_t n = 5000;
  const auto x = sample<T>(n, 9);
  std::vector<T> per(n), fused(n), exact(n);
  for (Round r : {Round::nearest_even, Round::stochastic}) {
    on_every_target([&] {
      square_sqrt(View<const T>(x.data(), {n}), View<T>(per.data(), {n}), {.compute = Compute::per_op, .round = r, .seed = 5});
      square_sqrt(View<const T>(x.data(), {n}), View<T>(fused.data(), {n}), {.compute = Compute::fused, .round = r, .seed = 5});
      square_sqrt(View<const T>(x.data(), {n}), View<T>(exact.data(), {n}), {.compute = Compute::fp64, .round = r, .seed = 5});
      for (std::size_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(x[i]);
        auto bits = [&](std::uint64_t s) { return r == Round::stochastic ? stochastic_bits(5 + s, i) : 0u; };
        const T sq = lplab::convert<T>(v * v, r, Overflow::ieee, nullptr, bits(0));
        const T want_per = lplab::convert<T>(std::sqrt(static_cast<float>(sq)), r, Overflow::ieee, nullptr, bits(1));
        const T want_fused = lplab::convert<T>(std::sqrt(v * v), r, Overflow::ieee, nullptr, bits(1));
        const double dv = v;
        const T want_exact = lplab::convert<T>(std::sqrt(dv * dv), r, Overflow::ieee, nullptr, bits(1));
        ASSERT_TRUE(same_bits(per[i], want_per)) << v;
        ASSERT_TRUE(same_bits(fused[i], want_fused)) << v;
        ASSERT_TRUE(same_bits(exact[i], want_exact)) << v;
      }
    });
  }
}

// The rounding policy's effect, on values where the three policies differ.
TEST(Elementwise, square_sqrt_figures) {
  // fp16: 300^2 = 90000 overflows fp16 (max 65504) when rounded after the square.
  const float16 x16[] = {float16(300.0f), float16(-2.0f)};
  float16 y16[2];
  square_sqrt(View<const float16>(x16, {2}), View<float16>(y16, {2}), {.compute = Compute::per_op});
  EXPECT_TRUE(isinf(y16[0]));
  EXPECT_EQ(static_cast<float>(y16[1]), 2.0f);
  square_sqrt(View<const float16>(x16, {2}), View<float16>(y16, {2}), {.compute = Compute::fused});
  EXPECT_EQ(static_cast<float>(y16[0]), 300.0f);
  // bf16: 1e-30 squared is 1e-60, below float's and bf16's smallest
  // subnormal: 0 per op and fused (fp32 underflows too); fp64 keeps it.
  const bfloat16 xb[] = {bfloat16(1e-30f)};
  bfloat16 yb[1];
  square_sqrt(View<const bfloat16>(xb, {1}), View<bfloat16>(yb, {1}), {.compute = Compute::fused});
  EXPECT_EQ(static_cast<float>(yb[0]), 0.0f);
  square_sqrt(View<const bfloat16>(xb, {1}), View<bfloat16>(yb, {1}), {.compute = Compute::fp64});
  EXPECT_EQ(yb[0].bits(), xb[0].bits());
  // E4M3: 0.009765625 = 5 * 2^-9 squared is below E4M3's smallest subnormal 2^-9.
  const float8_e4m3fn x8[] = {float8_e4m3fn(0.01f)};
  float8_e4m3fn y8[1];
  EXPECT_EQ(static_cast<float>(x8[0]), 0.009765625f);
  square_sqrt(View<const float8_e4m3fn>(x8, {1}), View<float8_e4m3fn>(y8, {1}), {.compute = Compute::per_op});
  EXPECT_EQ(static_cast<float>(y8[0]), 0.0f);
  square_sqrt(View<const float8_e4m3fn>(x8, {1}), View<float8_e4m3fn>(y8, {1}), {.compute = Compute::fused});
  EXPECT_EQ(static_cast<float>(y8[0]), 0.009765625f);
}

// gelu and pow against the C library in double. Bounds: the fp32 paths
// compute 0.5x(1 + t) with t = tanh (Highway, <= 4 ulp) or erf (erff, <= 1
// ulp, glibc) of an argument itself rounded a few times; 1 + t cancels for
// x < 0, so the bound is absolute in |x|: |y - ref| <= 16 ulp(ref) + |x| 2^-20.
TEST(Elementwise, gelu_and_pow_within_their_bounds_of_fp64) {
  const std::size_t n = 200001;
  std::vector<float> x(n), y(n), ref(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = -10.0f + 20.0f * static_cast<float>(i) / (n - 1);
  x[0] = 0.0f;
  const View<const float> vx(x.data(), {n});
  for (Unary op : {Unary::gelu_tanh, Unary::gelu_erf}) {
    on_every_target([&] {
      map({Step{op}}, vx, View<float>(y.data(), {n}), {.compute = Compute::fused});
      map({Step{op}}, vx, View<float>(ref.data(), {n}), {.compute = Compute::fp64});
      double worst = 0;
      for (std::size_t i = 0; i < n; ++i) {
        // Written here from the definitions, not through ops.h.
        const double v = x[i];
        const double exact = op == Unary::gelu_tanh
                                 ? 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))
                                 : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
        ASSERT_NEAR(ref[i], exact, 1e-6 * std::fabs(exact) + 1e-30) << "fp64 compute, rounded once to float";
        const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(exact), 1e-38)) - 23);
        const double bound = 16 * ulp + std::fabs(x[i]) * 0x1p-20;
        const double err = std::fabs(y[i] - exact);
        worst = std::max(worst, err / bound);
        ASSERT_LE(err, bound) << unary_name(op) << "(" << x[i] << ") = " << y[i] << ", exact " << exact;
      }
      EXPECT_GT(worst, 0.0) << "the fp32 path is not the fp64 one";
    });
  }
  // The two forms differ by ~1e-3 near |x| = 2: a swapped form would fail above.
  float g[2];
  const float one[2] = {1.0f, -1.0f};
  gelu_erf(View<const float>(one, {2}), View<float>(g, {2}));
  EXPECT_NEAR(g[0], 0.8413447460685429, 1e-7);
  EXPECT_NEAR(g[1], -0.15865525393145707, 1e-7);
  gelu_tanh(View<const float>(one, {2}), View<float>(g, {2}));
  EXPECT_NEAR(g[0], 0.8411919906082768, 1e-7);
  EXPECT_NEAR(g[1], -0.15880800939172324, 1e-7);
  // pow: powf (glibc: correctly rounded in practice, <= 1 ulp documented).
  for (float p : {2.0f, 0.5f, -1.5f, 3.25f}) {
    pow(vx, p, View<float>(y.data(), {n}));
    for (std::size_t i = 0; i < n; ++i) {
      const double exact = std::pow(static_cast<double>(x[i]), static_cast<double>(p));
      if (std::isnan(exact)) {
        ASSERT_TRUE(std::isnan(y[i])) << x[i] << "^" << p;
        continue;
      }
      if (std::isinf(exact)) {
        ASSERT_EQ(y[i], static_cast<float>(exact));
        continue;
      }
      const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(exact), 1e-38)) - 23);
      ASSERT_LE(std::fabs(y[i] - exact), ulp) << x[i] << "^" << p;
    }
  }
}

TEST(Elementwise, relu_values) {
  const float x[] = {-1.5f, -0.0f, 0.0f, 2.5f, std::numeric_limits<float>::quiet_NaN(),
                     -std::numeric_limits<float>::infinity()};
  float y[6];
  relu(View<const float>(x, {6}), View<float>(y, {6}));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(y[0]), 0u);  // +0
  EXPECT_TRUE(std::signbit(y[1]));                    // -0 kept, as x < 0 is false
  EXPECT_EQ(y[3], 2.5f);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], 0.0f);
}

// Strided inputs and outputs give what their contiguous copies give.
TEST(Elementwise, strided_views_match_contiguous_copies) {
  const std::size_t rows = 70, cols = 90;  // 6300 elements: two chunks
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<bfloat16> buf(rows * cols);
  for (auto& v : buf) v = bfloat16(normal(rng));
  const View<const bfloat16> x(buf.data(), {rows, cols});
  const auto xt = x.transpose(0, 1);                    // 90 x 70, strides {1, 90}
  const auto xs = x.slice(1, 3, 83, 2).transpose(0, 1);  // 40 x 70 of every other column
  on_every_target([&] {
    for (const View<const bfloat16>& in : {xt, xs}) {
      const auto copy = contiguous(in);
      std::vector<bfloat16> out_strided(in.numel() * 2), out_copy(in.numel());
      // The output a transposed view into a wider buffer.
      const View<bfloat16> ys = View<bfloat16>(out_strided.data(), {in.size(1), in.size(0) * 2})
                                    .slice(1, 0, in.size(0) * 2, 2)
                                    .transpose(0, 1);
      gelu_tanh(in, ys, {.round = Round::stochastic, .seed = 2});
      gelu_tanh(copy.view(), View<bfloat16>(out_copy.data(), {in.size(0), in.size(1)}),
                {.round = Round::stochastic, .seed = 2});
      for (std::size_t i = 0; i < in.size(0); ++i)
        for (std::size_t j = 0; j < in.size(1); ++j)
          ASSERT_TRUE(same_bits(ys(i, j), out_copy[i * in.size(1) + j])) << i << ", " << j;
      add(in, copy.view(), ys);
      for (std::size_t i = 0; i < in.size(0); ++i)
        for (std::size_t j = 0; j < in.size(1); ++j) {
          const float v = static_cast<float>(in(i, j));
          ASSERT_TRUE(same_bits(ys(i, j), bfloat16(v + v)));
        }
      EXPECT_EQ(sum(in, Accumulate::fp64), sum(copy.view(), Accumulate::fp64));
      EXPECT_EQ(sum(in, Accumulate::storage), sum(copy.view(), Accumulate::storage));
      EXPECT_EQ(amax(in), amax(copy.view()));
    }
  });
  // In place: y is x.
  std::vector<float> v = {-1, 4, -9, 16};
  const View<float> vv(v.data(), {2, 2});
  relu(vv, vv);
  sqrt(vv, vv);
  EXPECT_EQ(v, (std::vector<float>{0, 2, 0, 4}));
}

// The engine's fast paths against a scalar loop over the elements, on every
// target: transposed tiles (copied by register transposes of 16-byte
// blocks) of 1-, 2- and 4-byte formats, in and out, at a size that leaves
// partial blocks and tiles; one-byte inputs (a 256-entry table of the chain)
// under every deterministic rounding and both overflow policies; and the
// same on two threads, which must not change a bit.
template <class T>
void check_transposed_and_threads() {
  const std::size_t rows = 83, cols = 781;  // 64,823 elements; on two threads: 1003 x 781
  std::mt19937 rng(31);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (std::size_t r0 : {rows, std::size_t{1003}}) {
    std::vector<T> buf(r0 * cols);
    for (auto& v : buf) v = T(normal(rng));
    for (std::size_t i = 0; i < buf.size(); i += 7) buf[i] = T(-static_cast<float>(buf[i]));
    const View<const T> x = View<const T>(buf.data(), {cols, r0}).transpose(0, 1);  // r0 x cols, strides {1, r0}
    std::vector<T> ys(r0 * cols), yt(r0 * cols);
    const View<T> y(ys.data(), {r0, cols});
    const View<T> y_t = View<T>(yt.data(), {cols, r0}).transpose(0, 1);  // the output transposed too
    const unsigned threads = r0 == rows ? 1 : 2;
    for (Round r : kRounds)
      for (Overflow o : {Overflow::ieee, Overflow::saturate}) {
#if defined(LPLAB_SANITIZED)
        // Under the sanitizers (memory and undefined behaviour, not values:
        // the release build checks every policy): nearest-even, and
        // stochastic (its draws) on one thread.
        if (r != Round::nearest_even && (r != Round::stochastic || threads > 1)) continue;
#endif
        // On two threads: the policies whose element order matters.
        if (threads > 1 && (o == Overflow::saturate || (r != Round::nearest_even && r != Round::stochastic))) continue;
        on_every_target([&] {
          const ElementwiseOptions opt{.round = r, .overflow = o, .seed = 4, .threads = threads};
          scale(x, -1.25f, y, opt);
          scale(x, -1.25f, y_t, opt);
          for (std::size_t i = 0; i < r0; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
              const std::uint32_t bits = r == Round::stochastic ? stochastic_bits(4, i * cols + j) : 0;
              const T want = lplab::convert<T>(-1.25f * static_cast<float>(x(i, j)), r, o, nullptr, bits);
              ASSERT_TRUE(same_bits(y(i, j), want)) << i << ", " << j << " rounding " << static_cast<int>(r);
              ASSERT_TRUE(same_bits(y_t(i, j), want)) << i << ", " << j << " rounding " << static_cast<int>(r);
            }
          add(x, y, y_t, opt);
          for (std::size_t i = 0; i < r0; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
              const std::uint32_t bits = r == Round::stochastic ? stochastic_bits(4, i * cols + j) : 0;
              const T want = lplab::convert<T>(static_cast<float>(x(i, j)) + static_cast<float>(y(i, j)), r, o,
                                               nullptr, bits);
              ASSERT_TRUE(same_bits(y_t(i, j), want)) << i << ", " << j;
            }
        });
      }
  }
}

TEST(Elementwise, transposed_tiles_tables_and_threads_match_a_scalar_loop) {
  check_transposed_and_threads<float8_e4m3fn>();
  check_transposed_and_threads<bfloat16>();
  check_transposed_and_threads<float>();
}

// A transposed input into an output of 4 MiB or more: tiles one cache line
// of the output wide, cut at its line boundaries, their lines written by
// streaming stores (strided_walk.h). Against a scalar loop, on the best
// target and SCALAR. The output lies `offset` elements past a 64-byte
// boundary: 0 (every tile one whole line), 1 and T - 1 (T codes a line: the
// first tile column 1 or T - 1 wide, every later tile one whole line); its
// rows are a whole number of lines apart (1088 columns: 68, 34 and 17 lines
// of floats, bf16 and E4M3 codes), so the cut applies, or not (1030). A row
// count that leaves a partial tile, the table (E4M3), fused (bf16) and float
// paths, a binary op, stochastic rounding (each draw indexed by the
// element's row-major index, wherever the tiles are cut), two threads.
// A float input's signalling NaNs come out quiet (the float path copies its
// codes as they are and leaves quieting to the ops and the final rounding).
template <class X, class Y>
void check_streamed_transposes(std::size_t rows) {
  constexpr std::uint32_t kSignalling[] = {0x7f800001u, 0xffa00000u};
  constexpr std::size_t kPerLine = 64 / sizeof(Y);
  const Y kUntouched(7.0f);
  std::mt19937 rng(7);
  struct Case {
    std::size_t cols, offset;
    unsigned threads;
  };
#if defined(LPLAB_SANITIZED)
  // Under the sanitizers (about 20 times slower): the skewed lined rows on
  // two threads, which stream lines and the partial tiles at both ends; the
  // release build runs all four.
  const std::vector<Case> cases{{1088, kPerLine - 1, 2}};
#else
  const std::vector<Case> cases{{1088, 0, 1}, {1088, 1, 1}, {1088, kPerLine - 1, 2}, {1030, 1, 1}};
#endif
  for (const Case c : cases) {
    const std::size_t cols = c.cols, n = rows * cols;
    SCOPED_TRACE("cols " + std::to_string(cols) + ", offset " + std::to_string(c.offset) + ", threads " +
                 std::to_string(c.threads));
    ASSERT_GE(n * sizeof(Y), std::size_t{4} << 20);
    std::vector<X> buf(n);
    for (auto& v : buf) v = X(static_cast<float>(static_cast<int>(rng() % 4001) - 2000) / 256.0f);
    if constexpr (std::is_same_v<X, float>)
      for (std::size_t i = 0; i < n; i += 9973) buf[i] = std::bit_cast<float>(kSignalling[i / 9973 % 2]);
    const View<const X> x = View<const X>(buf.data(), {cols, rows}).transpose(0, 1);  // rows x cols, strides {1, rows}
    // The scalar loop, row-major, once for every target.
    constexpr std::uint64_t kSeed = 9;
    std::vector<Y> want_relu(n), want_add(n), want_scale(n);
    for (std::size_t j = 0; j < cols; ++j)
      for (std::size_t i = 0; i < rows; ++i) {
        const float v = static_cast<float>(buf[j * rows + i]);  // x(i, j)
        want_relu[i * cols + j] = lplab::convert<Y>(std::isnan(v) ? v : std::max(v, 0.0f));
        want_add[i * cols + j] = lplab::convert<Y>(v + v);
        want_scale[i * cols + j] = lplab::convert<Y>(0.3f * v, Round::stochastic, Overflow::ieee, nullptr,
                                                     stochastic_bits(kSeed, i * cols + j));
      }
    // The output `offset` elements past a 64-byte boundary of its buffer
    // (which holds n + 64 elements from that boundary).
    std::vector<Y> store(n + 64 + kPerLine);
    Y* const base = store.data() + (64 - reinterpret_cast<std::uintptr_t>(store.data()) % 64) % 64 / sizeof(Y);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(base) % 64, 0u);
    const std::span<Y> out(base, n + 64);
    const View<Y> y(base + c.offset, {rows, cols});
    const ElementwiseOptions opt{.threads = c.threads};
    // The output against `want`, a float output's NaNs quiet, and nothing
    // outside it written.
    auto expect = [&](const std::vector<Y>& want, const char* what) {
      std::size_t k = 0;
      for (; k < out.size(); ++k) {
        const bool inside = k >= c.offset && k < c.offset + n;
        const Y got = out[k];
        bool right = same_bits(got, inside ? want[k - c.offset] : kUntouched);
        if constexpr (std::is_same_v<Y, float>) right = right && !(std::isnan(got) && (std::bit_cast<std::uint32_t>(got) & 0x400000u) == 0);
        if (!right) break;
      }
      ASSERT_EQ(k, out.size()) << what << ": the first wrong element (the output from " << c.offset << ")";
    };
    // The best target and the one-lane one: what the streamed lines change
    // is the same on every target (the other tests run the transposes of
    // line-wide tiles on each).
    const std::vector<SimdTarget> all = simd_targets();
    for (const SimdTarget& t : {all.front(), all.back()}) {
      ScopedSimdTarget pin(t.id);
      SCOPED_TRACE(t.name);
      std::fill(out.begin(), out.end(), kUntouched);
      relu(x, y, opt);
      expect(want_relu, "relu");
      add(x, x, y, opt);
      expect(want_add, "add");
      if constexpr (!std::is_same_v<Y, float>) {
        ElementwiseOptions sr = opt;
        sr.round = Round::stochastic;
        sr.seed = kSeed;
        scale(x, 0.3f, y, sr);
        expect(want_scale, "stochastic scale");
      }
      if constexpr (std::is_same_v<X, float> && std::is_same_v<Y, float>) {
        map({}, x, y, opt);  // no op: the final rounding alone quiets
        for (std::size_t i = 0; i < n; i += 9973) {
          const std::size_t r = i % rows, col = i / rows;  // buf[i] is x(r, col)
          ASSERT_EQ(std::bit_cast<std::uint32_t>(y(r, col)), kSignalling[i / 9973 % 2] | 0x400000u) << i;
        }
      }
    }
  }
}

TEST(Elementwise, transposed_inputs_into_large_outputs_stream_whole_lines) {
  check_streamed_transposes<float, float>(1021);
  check_streamed_transposes<bfloat16, bfloat16>(2039);
  check_streamed_transposes<float8_e4m3fn, float8_e4m3fn>(4079);
}

// A one-byte input's table (kTableFrom elements or more) is looked up by the
// target's byte shuffles, or, under AVX3 on a CPU with AVX-512 VBMI, by
// vpermi2b (cpu_extensions.cpp): both against the scalar core on every code
// at every position of a 64-byte vector, with a tail, into 1-byte outputs.
TEST(Elementwise, one_byte_tables_with_and_without_extensions) {
  std::vector<float8_e4m3fn> x(64 * 257 + 23);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float8_e4m3fn::from_bits((i + i / 64) % 256);
  std::vector<float8_e4m3fn> y(x.size());
  bool vbmi_ran = false;
  for (bool extensions : {true, false}) {
    force_thread_cpu_extensions(extensions);
    on_every_target([&] {
      const std::vector<std::string> used = cpu_extensions();
      if (!extensions) {
        EXPECT_TRUE(used.empty());
      }
      vbmi_ran |= std::find(used.begin(), used.end(), "AVX512_VBMI") != used.end();
      for (Overflow o : {Overflow::ieee, Overflow::saturate}) {
        scale(View<const float8_e4m3fn>(x.data(), {x.size()}), -1.25f, View<float8_e4m3fn>(y.data(), {y.size()}),
              ElementwiseOptions{.overflow = o});
        for (std::size_t i = 0; i < x.size(); ++i) {
          const float8_e4m3fn want = lplab::convert<float8_e4m3fn>(-1.25f * static_cast<float>(x[i]),
                                                                   Round::nearest_even, o);
          ASSERT_TRUE(same_bits(y[i], want)) << "element " << i << " code " << int(x[i].bits());
        }
      }
    });
  }
  force_thread_cpu_extensions(true);
  if (!vbmi_ran) std::printf("note: this CPU lacks AVX-512 VBMI (or AVX3): the vpermi2b lookup did not run here\n");
}

// fp16 add, mul, square, sqrt and scale by a binary16 factor, fp16 in and
// out, to nearest-even under either overflow policy: by AVX-512 FP16 (vaddph,
// vmulph; cpu_extensions.cpp) where the CPU has it (sqrt, which it declines,
// by the fp32 route either way), and with the extensions forbidden by the
// fp32 route. Each against IEEE's binary16
// result computed in double by the scalar core (a sum or product of two
// binary16 values is exact in double; a square root rounded to double and
// then to binary16 is rounded once: 53 >= 2 x 11 + 2): every code against
// 97 others (specials, subnormals, ties), lengths with tails. A NaN result
// must be a NaN, with the same bits both ways.
TEST(Elementwise, fp16_arithmetic_with_and_without_extensions) {
  const std::size_t n = 65536 + 29;
  std::vector<float16> a(n), b(n);
  std::uint32_t s = 12345;
  auto next = [&s] { return s = s * 1664525u + 1013904223u; };
  const std::uint16_t picks[] = {0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x3C00, 0xBC00, 0x3C01, 0x7BFF, 0xFBFF,
                                 0x7C00, 0xFC00, 0x7C01, 0x7E00, 0xFE55, 0x1400, 0x5BFF, 0x3555, 0x0200, 0x77FF};
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = float16::from_bits(static_cast<std::uint16_t>(i));
    const std::uint32_t r = next();
    // b: a special pick, a near neighbour of a (cancellation), or random.
    b[i] = float16::from_bits(r % 5 == 0   ? picks[(r >> 8) % std::size(picks)]
                              : r % 5 == 1 ? static_cast<std::uint16_t>((i ^ 0x8000) + ((r >> 8) % 5) - 2)
                                           : static_cast<std::uint16_t>(r >> 16));
  }
  struct Case {
    const char* name;
    std::function<void(std::vector<float16>&, const ElementwiseOptions&)> run;
    std::function<double(double, double)> exact;
  };
  const std::vector<Case> cases = {
      {"add", [&](auto& y, const auto& o) { add(View<const float16>(a.data(), {n}), View<const float16>(b.data(), {n}), View<float16>(y.data(), {n}), o); },
       [](double x, double z) { return x + z; }},
      {"mul", [&](auto& y, const auto& o) { mul(View<const float16>(a.data(), {n}), View<const float16>(b.data(), {n}), View<float16>(y.data(), {n}), o); },
       [](double x, double z) { return x * z; }},
      {"square", [&](auto& y, const auto& o) { square(View<const float16>(a.data(), {n}), View<float16>(y.data(), {n}), o); },
       [](double x, double) { return x * x; }},
      {"sqrt", [&](auto& y, const auto& o) { lplab::kernels::sqrt(View<const float16>(a.data(), {n}), View<float16>(y.data(), {n}), o); },
       [](double x, double) { return std::sqrt(x); }},
      {"scale", [&](auto& y, const auto& o) { scale(View<const float16>(a.data(), {n}), -0.375f, View<float16>(y.data(), {n}), o); },
       [](double x, double) { return -0.375 * x; }},
  };
  bool ran = false;
  for (const Case& c : cases)
    for (Overflow ov : {Overflow::ieee, Overflow::saturate}) {
      std::vector<float16> with(n), without(n);
      for (bool extensions : {true, false}) {
        force_thread_cpu_extensions(extensions);
        on_every_target([&] {
          const std::vector<std::string> used = cpu_extensions();
          ran |= std::find(used.begin(), used.end(), "AVX512_FP16") != used.end();
          std::vector<float16>& y = extensions ? with : without;
          c.run(y, ElementwiseOptions{.overflow = ov});
          for (std::size_t i = 0; i < n; ++i) {
            const float16 want = lplab::convert<float16>(c.exact(static_cast<double>(a[i]), static_cast<double>(b[i])),
                                                         Round::nearest_even, ov);
            if (isnan(want)) {
              ASSERT_TRUE(isnan(y[i])) << c.name << " element " << i;
            } else {
              ASSERT_EQ(y[i].bits(), want.bits()) << c.name << (extensions ? "" : " without extensions") << " a "
                                                   << a[i].bits() << " b " << b[i].bits();
            }
          }
        });
      }
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(with[i].bits(), without[i].bits()) << c.name << " element " << i;
    }
  force_thread_cpu_extensions(true);
  if (!ran) std::printf("note: this CPU lacks AVX-512 FP16 (or AVX3): vaddph/vmulph did not run here\n");
}

// Two one-byte inputs of at least 2^19 elements: the op is a 65,536-entry
// table of code pairs (computed by the engine, gathered per element). Every
// pair of codes occurs; one-, two- and four-byte outputs; against a scalar
// loop on every target.
template <class A, class B, class Y>
void check_pair_table() {
  const std::size_t n = (std::size_t{1} << 19) + 37;
  std::vector<A> a(n);
  std::vector<B> b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = A::from_bits(static_cast<std::uint8_t>(i));
    b[i] = B::from_bits(static_cast<std::uint8_t>(i >> 8 ^ i >> 16));
  }
  std::vector<Y> y(n);
  const View<const A> va(a.data(), {n});
  const View<const B> vb(b.data(), {n});
  const View<Y> vy(y.data(), {n});
#if defined(LPLAB_SANITIZED)
  // Under the sanitizers one policy: the table's gather is the same for both.
  const std::pair<Round, Overflow> policies[] = {{Round::nearest_even, Overflow::ieee}};
#else
  const std::pair<Round, Overflow> policies[] = {{Round::nearest_even, Overflow::ieee},
                                                 {Round::upward, Overflow::saturate}};
#endif
  for (const auto& [r, o] : policies)
    on_every_target([&] {
      const ElementwiseOptions opt{.round = r, .overflow = o};
      auto check = [&](const char* what, auto f) {
        for (std::size_t i = 0; i < n; ++i) {
          const Y want = lplab::convert<Y>(f(static_cast<float>(a[i]), static_cast<float>(b[i])), r, o);
          ASSERT_TRUE(same_bits(y[i], want)) << what << " at " << i << ": " << static_cast<float>(a[i]) << ", "
                                             << static_cast<float>(b[i]) << " rounding " << static_cast<int>(r);
        }
      };
      add(va, vb, vy, opt);
      check("add", ops::Add{});
      mul(va, vb, vy, opt);
      check("mul", ops::Mul{});
      axpy(-0.75f, va, vb, vy, opt);
      check("axpy", ops::Axpy{-0.75f});
    });
}

TEST(Elementwise, one_byte_pairs_are_a_table_matching_a_scalar_loop) {
  check_pair_table<float8_e4m3fn, float8_e4m3fn, float8_e4m3fn>();
  check_pair_table<float8_e4m3fn, float8_e5m2, float8_e5m2>();
  check_pair_table<float8_e5m2, float4_e2m1fn, bfloat16>();
  check_pair_table<float8_e4m3fnuz, float8_e4m3fn, float>();
}

// Rank 3, non-contiguous in every way the engine tiles: dims 0 and 2
// swapped (the last dimension steps through memory), a sliced middle
// dimension, an output with gaps; tiles cross matrices and rows of tiles.
TEST(Elementwise, rank3_strided_views_match_contiguous_copies) {
  std::mt19937 rng(4);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float16> buf(5 * 70 * 130);
  for (auto& v : buf) v = float16(normal(rng));
  const View<const float16> base(buf.data(), {5, 70, 130});
  const auto x = base.transpose(0, 2).slice(1, 1, 69, 2);  // 130 x 34 x 5, strides {1, 260, 9100}
  const auto copy = contiguous(x);
  const std::size_t d0 = x.size(0), d1 = x.size(1), d2 = x.size(2);
  std::vector<bfloat16> wide(d0 * d1 * d2 * 3), want(d0 * d1 * d2);
  const View<bfloat16> y = View<bfloat16>(wide.data(), {d0, d1, d2 * 3}).slice(2, 1, d2 * 3, 3);
  const View<bfloat16> yc(want.data(), {d0, d1, d2});
  on_every_target([&] {
    const ElementwiseOptions opt{.compute = Compute::per_op, .round = Round::stochastic, .seed = 8};
    map({Step{Unary::square}, Step{Unary::scale, 0.75f}, Step{Unary::sqrt}}, x, y, opt);
    map({Step{Unary::square}, Step{Unary::scale, 0.75f}, Step{Unary::sqrt}}, copy.view(), yc, opt);
    for (std::size_t i = 0; i < d0; ++i)
      for (std::size_t j = 0; j < d1; ++j)
        for (std::size_t k = 0; k < d2; ++k) ASSERT_TRUE(same_bits(y(i, j, k), yc(i, j, k))) << i << "," << j << "," << k;
    axpy(-1.5f, x, copy.view(), y, {.round = Round::upward});
    axpy(-1.5f, copy.view(), copy.view(), yc, {.round = Round::upward});
    for (std::size_t i = 0; i < d0; ++i)
      for (std::size_t j = 0; j < d1; ++j)
        for (std::size_t k = 0; k < d2; ++k) ASSERT_TRUE(same_bits(y(i, j, k), yc(i, j, k)));
  });
}

// A stride-0 (broadcast) input, an in-place binary op, a broadcast output
// refused, and saturation between per-op steps in float as in bf16.
TEST(Elementwise, broadcast_in_place_and_saturation) {
  std::vector<float> m = {1, 2, 3, 4, 5, 6};
  const std::vector<float> row = {10, 20, 30};
  const std::size_t shape[] = {2, 3};
  const std::ptrdiff_t bcast[] = {0, 1};
  const View<const float> r(row.data(), shape, bcast);  // the row, repeated
  const View<float> vm(m.data(), {2, 3});
  add(vm, r, vm);  // in place
  EXPECT_EQ(m, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  std::vector<float> out(3);
  EXPECT_EQ(error_of([&] { add(vm, vm, View<float>(out.data(), shape, bcast)); }),
            "lplab::kernels::add: the output broadcasts (stride 0) dimension 0 of size 2");
  // 1e30^2 overflows float: per op with saturation the square becomes the
  // largest float, whose root is 2^64 (1.8446743e19), as in bf16.
  const float big[] = {1e30f};
  float y = 0;
  square_sqrt(View<const float>(big, {1}), View<float>(&y, {1}), {.overflow = Overflow::saturate});
  EXPECT_EQ(y, std::sqrt(std::numeric_limits<float>::max()));
  const bfloat16 bigb[] = {bfloat16(1e30f)};
  bfloat16 yb;
  square_sqrt(View<const bfloat16>(bigb, {1}), View<bfloat16>(&yb, {1}), {.overflow = Overflow::saturate});
  EXPECT_EQ(static_cast<float>(yb), static_cast<float>(bfloat16(std::sqrt(static_cast<float>(finfo<bfloat16>::max)))));
  square_sqrt(View<const float>(big, {1}), View<float>(&y, {1}));
  EXPECT_TRUE(std::isinf(y));
}

TEST(Elementwise, triu_matches_torch) {
  std::vector<float16> x(2 * 3 * 4);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float16(static_cast<float>(i + 1));
  const View<const float16> vx(x.data(), {2, 3, 4});
  for (std::ptrdiff_t diag : {-1, 0, 2, 5}) {
    std::vector<float16> y(x.size());
    triu(vx, View<float16>(y.data(), {2, 3, 4}), diag);
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t r = 0; r < 3; ++r)
        for (std::size_t c = 0; c < 4; ++c) {
          const float got = static_cast<float>(y[(b * 3 + r) * 4 + c]);
          const bool keep = static_cast<std::ptrdiff_t>(c) - static_cast<std::ptrdiff_t>(r) >= diag;
          EXPECT_EQ(got, keep ? static_cast<float>((b * 3 + r) * 4 + c + 1) : 0.0f) << diag;
        }
  }
  // torch.triu of a 3x3 ones, diagonal 1: the strict upper triangle.
  std::vector<float> ones(9, 1.0f), up(9);
  triu(View<const float>(ones.data(), {3, 3}), View<float>(up.data(), {3, 3}), 1);
  EXPECT_EQ(up, (std::vector<float>{0, 1, 1, 0, 0, 1, 0, 0, 0}));
  // On a transposed view: the upper triangle of x^T.
  std::vector<float> sq = {1, 2, 3, 4, 5, 6, 7, 8, 9}, tt(9);
  triu(View<const float>(sq.data(), {3, 3}).transpose(0, 1), View<float>(tt.data(), {3, 3}));
  EXPECT_EQ(tt, (std::vector<float>{1, 4, 7, 0, 5, 8, 0, 0, 9}));
}

// ml_dtypes' README: summing 10,000 U(0,1) values in bf16 gives 256 — the
// accumulator's ulp reaches 2 at 256, so every addend below 1 rounds away
// (ties to even) — against about 5000 in fp32.
TEST(Reduction, bf16_sum_of_ten_thousand_uniforms_stagnates_at_256) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<bfloat16> x(10000);
  for (auto& v : x) v = bfloat16(u(rng));
  const View<const bfloat16> vx(x.data(), {x.size()});
  on_every_target([&] {
    EXPECT_EQ(sum(vx, Accumulate::storage), 256.0);
    long double exact = 0;
    for (auto v : x) exact += static_cast<float>(v);
    EXPECT_EQ(sum(vx, Accumulate::fp64), static_cast<double>(exact));  // exact: 8-bit values in [2^-30, 1)
    const double s32 = sum(vx, Accumulate::fp32);
    EXPECT_NEAR(s32, static_cast<double>(exact), 1e-3);
    EXPECT_NEAR(s32, 5000.0, 100.0);
    EXPECT_NEAR(mean(vx, Accumulate::fp64), static_cast<double>(exact) / 10000, 1e-12);
    EXPECT_EQ(mean(vx, Accumulate::storage), static_cast<double>(bfloat16(0.0256f)));
  });
}

TEST(Reduction, storage_sum_rounds_every_add_correctly) {
  // fp16: 2048 + 1 is a tie that rounds to even (2048); 2048 + 3 -> 2052.
  const float16 x[] = {float16(2048.0f), float16(1.0f), float16(1.0f), float16(3.0f)};
  EXPECT_EQ(sum(View<const float16>(x, {4}), Accumulate::storage), 2052.0);
  EXPECT_EQ(sum(View<const float16>(x, {4}), Accumulate::fp32), 2053.0);
  // E4M3 saturates nowhere in IEEE overflow: 448 + 448 is NaN in E4M3 (no infinity).
  const float8_e4m3fn big[] = {float8_e4m3fn(448.0f), float8_e4m3fn(448.0f)};
  EXPECT_TRUE(std::isnan(sum(View<const float8_e4m3fn>(big, {2}), Accumulate::storage)));
  EXPECT_EQ(sum(View<const float8_e4m3fn>(big, {2}), Accumulate::fp32), 896.0);
}

TEST(Reduction, amax_and_empty) {
  const float x[] = {-3.0f, 2.0f, -0.5f};
  EXPECT_EQ(amax(View<const float>(x, {3})), 3.0);
  const float8_e5m2 y[] = {float8_e5m2(-57344.0f), float8_e5m2(1.0f)};
  EXPECT_EQ(amax(View<const float8_e5m2>(y, {2})), 57344.0);
  const float z[] = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_TRUE(std::isnan(amax(View<const float>(z, {2}))));
  const View<const float> empty(nullptr, {0, 5});
  EXPECT_EQ(amax(empty), 0.0);
  EXPECT_EQ(sum(empty), 0.0);
  EXPECT_TRUE(std::isnan(mean(empty)));
}

TEST(Elementwise, bad_input_is_a_clear_error) {
  std::vector<float> a(6), b(6);
  const View<const float> x(a.data(), {2, 3});
  const View<float> y(b.data(), {3, 2});
  EXPECT_EQ(error_of([&] { relu(x, y); }), "lplab::kernels::map: input of shape [2, 3] but output of shape [3, 2]");
  EXPECT_EQ(error_of([&] { add(x, x, y); }), "lplab::kernels::add: input of shape [2, 3] but output of shape [3, 2]");
  const View<float> y23(b.data(), {2, 3});
  EXPECT_EQ(error_of([&] { pow(x, std::nanf(""), y23); }), "lplab::kernels::pow: the parameter is NaN");
  EXPECT_EQ(error_of([&] { axpy(std::nanf(""), x, x, y23); }), "lplab::kernels::axpy: alpha is NaN");
  const std::vector<Step> long_chain(17, Step{Unary::relu});
  EXPECT_EQ(error_of([&] { map(long_chain, x, y23); }), "lplab::kernels::map: a chain of 17 steps; at most 16");
  EXPECT_EQ(error_of([&] { triu(View<const float>(a.data(), {6}), View<float>(b.data(), {6})); }),
            "lplab::kernels::triu: needs at least 2 dimensions, got [6]");
  std::vector<float8_e8m0fnu> e(4);
  EXPECT_EQ(error_of([&] { triu(View<const float8_e8m0fnu>(e.data(), {2, 2}), View<float8_e8m0fnu>(e.data(), {2, 2})); }),
            "lplab::kernels::triu: float8_e8m0fnu has no zero");
  EXPECT_EQ(error_of([&] { map({Step{static_cast<Unary>(99)}}, x, y23); }), "lplab::kernels::map: unknown unary op 99");
  EXPECT_EQ(error_of([&] { relu(x, y23, {.compute = static_cast<Compute>(7)}); }),
            "lplab::kernels::elementwise: unknown compute policy 7");
  EXPECT_EQ(error_of([&] { (void)sum(x, static_cast<Accumulate>(5)); }), "lplab::kernels::sum: unknown accumulation 5");
  EXPECT_EQ(error_of([&] { relu(x, y23, {.round = static_cast<Round>(9)}); }), "lplab::kernels::elementwise: unknown rounding 9");
  EXPECT_EQ(error_of([&] { relu(x, y23, {.overflow = static_cast<Overflow>(9)}); }),
            "lplab::kernels::elementwise: unknown overflow policy 9");
}

}  // namespace
}  // namespace lplab::kernels
