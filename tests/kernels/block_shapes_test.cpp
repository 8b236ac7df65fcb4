// Block shapes (scaling.h): blocks of block_rows x block_size elements of a
// matrix -- NVFP4 training's 16 x 16 weights and any rows x cols pair --
// against the scalar reference (scaling_reference.h) applied to each block's
// elements gathered into one run, a block's scale being the scale of its
// elements taken together; against hand-derived values; and by the
// properties a wrong tiling breaks (transposition, TE's order on tile-major
// runs).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/scaling_reference.h"
#include "lplab/kernels/scaling.h"
#include "lplab/kernels/targets.h"

namespace lplab::kernels {
namespace {

using lplab::testing::ref_dequantize;
using lplab::testing::ref_quantize;

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
// A code as a number in messages (not as a character).
template <class T>
unsigned code(T v) {
  return v.bits();
}

// 16 x 16 NVFP4 blocks: 4 + 8 / 256 bits an element; a 17 x 33 matrix has 2 x 3 blocks.
static_assert(nvfp4_2d.block_rows == 16 && nvfp4_2d.block_size == 16 && nvfp4_2d.tensor_scale);
static_assert(bits_per_element(nvfp4_2d) == 4.03125);
static_assert(scales_needed(nvfp4_2d, 17 * 33, 33) == 6 && scales_needed(nvfp4_2d, 16 * 16, 16) == 1);
static_assert(scales_needed(nvfp4, 3 * 20, 20) == 6);  // 1 x 16 blocks restart on each row: 2 a row
static_assert(storage_bits(nvfp4_2d, 32 * 32, 32) == 32 * 32 * 4 + 4 * 8 + 32);

// Values that hit the rules' decisions (powers of two, max_elem multiples,
// subnormals, zeros of both signs), now and then a NaN or an infinity, with
// a magnitude drawn per row segment so that blocks of several rows mix them.
std::vector<float> matrix(std::size_t rows, std::size_t cols, double max_elem, std::uint32_t seed, bool specials) {
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<float> x(rows * cols);
  int e = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (i % 8 == 0) e = uniform(0, 5) == 0 ? uniform(-140, 120) : uniform(-12, 12);
    const float sign = uniform(0, 1) ? -1.0f : 1.0f;
    double v;
    switch (uniform(0, 9)) {
      case 0: v = 0.0; break;
      case 1: v = std::ldexp(1.0, e - uniform(0, 6)); break;
      case 2: v = std::ldexp(max_elem, std::clamp(e, -149, 119)); break;
      case 3: v = std::bit_cast<float>(static_cast<std::uint32_t>(uniform(1, 0x7FFFFF))); break;
      default: v = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng), e - uniform(0, 6));
    }
    x[i] = sign * static_cast<float>(std::min(v, double{std::numeric_limits<float>::max()}));
    if (specials && uniform(0, 399) == 0)
      x[i] = uniform(0, 1) ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
  }
  return x;
}

// The reference for a matrix of n elements in rows of cols: each block's
// elements gathered into one run (row by row), quantized by the flat
// reference as a single block with the whole matrix's tensor scale, and put
// back. A block past a short last row holds nothing: an all-zero block's scale.
template <class Elem, class Scale>
struct RefMatrix {
  std::vector<Elem> elems;
  std::vector<Scale> scales;
  std::vector<float> y;
  float tensor_scale = 1.0f;
};
template <class Elem, class Scale>
RefMatrix<Elem, Scale> ref_matrix(const BlockScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols) {
  const std::size_t n = x.size(), rows = (n + cols - 1) / cols;
  const auto br = static_cast<std::size_t>(s.block_rows), bc = static_cast<std::size_t>(s.block_size);
  RefMatrix<Elem, Scale> r;
  r.elems.resize(n);
  r.y.resize(n);
  for (std::size_t R = 0; R * br < rows; ++R) {
    for (std::size_t C = 0; C * bc < cols; ++C) {
      std::vector<std::size_t> at;
      for (std::size_t i = R * br; i < std::min(rows, (R + 1) * br); ++i)
        for (std::size_t j = C * bc; j < std::min(cols, (C + 1) * bc); ++j)
          if (i * cols + j < n) at.push_back(i * cols + j);
      std::vector<float> g;
      for (std::size_t i : at) g.push_back(x[i]);
      if (g.empty()) g.push_back(0.0f);  // an empty block: the all-zero block's scale
      BlockScaling<Elem, Scale> one = s;
      one.block_rows = 1;
      one.block_size = static_cast<int>(g.size());
      const auto q = ref_quantize(one, std::span<const float>(g), x);
      const auto y = ref_dequantize(one, std::span<const Elem>(q.elems), std::span<const Scale>(q.scales),
                                    q.tensor_scale);
      r.scales.push_back(q.scales.at(0));
      r.tensor_scale = q.tensor_scale;
      for (std::size_t t = 0; t < at.size(); ++t) r.elems[at[t]] = q.elems[t], r.y[at[t]] = y[t];
    }
  }
  if (n == 0 && s.tensor_scale) r.tensor_scale = 1.0f;
  return r;
}

template <class Elem, class Scale>
void expect_matrix_matches(const BlockScaling<Elem, Scale>& s, const std::vector<float>& x, std::size_t cols,
                           const std::string& what, unsigned threads = 1) {
  const std::size_t n = x.size();
  const auto ref = ref_matrix(s, std::span<const float>(x), cols);
  std::vector<Elem> elems(n, Elem::from_bits(0x55 & ((1u << finfo<Elem>::bits) - 1)));
  std::vector<Scale> scales(scales_needed(s, n, cols));
  ASSERT_EQ(scales.size(), ref.scales.size()) << what;
  float ts = -1.0f;
  quantize(s, std::span<const float>(x), cols, std::span<Elem>(elems), std::span<Scale>(scales), &ts, threads);
  ASSERT_EQ(bits(ts), bits(ref.tensor_scale)) << what;
  for (std::size_t b = 0; b < scales.size(); ++b)
    ASSERT_EQ(code(scales[b]), code(ref.scales[b]))
        << what << ": block (" << b / ((cols + s.block_size - 1) / s.block_size) << ", "
        << b % ((cols + s.block_size - 1) / s.block_size) << ")";
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(code(elems[i]), code(ref.elems[i]))
        << what << ": element [" << i / cols << "][" << i % cols << "] = " << x[i];
  std::vector<float> y(n);
  dequantize(s, std::span<const Elem>(elems), cols, std::span<const Scale>(scales), std::span<float>(y), ts);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(bits(y[i]), bits(ref.y[i])) << what << ": value [" << i / cols << "][" << i % cols << "]";
  if constexpr (PackedFormat<Elem>) {
    std::vector<std::uint8_t> packed(packed_bytes<Elem>(n)), expect(packed_bytes<Elem>(n));
    pack(std::span<const Elem>(ref.elems), std::span<std::uint8_t>(expect));
    std::vector<Scale> packed_scales(scales.size());
    float pts = -1.0f;
    quantize_packed(s, std::span<const float>(x), cols, std::span<std::uint8_t>(packed),
                    std::span<Scale>(packed_scales), &pts, threads);
    ASSERT_EQ(packed, expect) << what << " (packed)";
    ASSERT_EQ(bits(pts), bits(ts)) << what << " (packed)";
    for (std::size_t b = 0; b < scales.size(); ++b) ASSERT_EQ(code(packed_scales[b]), code(scales[b])) << what;
    std::vector<float> py(n);
    dequantize_packed(s, std::span<const std::uint8_t>(packed), cols, std::span<const Scale>(scales),
                      std::span<float>(py), ts);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(bits(py[i]), bits(y[i])) << what << " (packed)";
  }
}

using E8M0 = float8_e8m0fnu;
// Shapes around the blocks: one block, exact tilings, partial block rows and
// columns, a short last row, bands longer than the fast path's chunk.
struct Shape {
  std::size_t rows, cols, n;
};
const Shape kShapes[] = {{1, 1, 1},   {16, 16, 256}, {17, 33, 17 * 33},        {32, 48, 32 * 48},
                         {5, 7, 33},  {1, 40, 40},   {3, 16, 48},              {48, 100, 48 * 100 - 37},
                         {20, 1, 20}, {64, 96, 64 * 96},
                         // Rows a multiple of every block size, the last one short.
                         {3, 160, 2 * 160 + 22}, {40, 64, 39 * 64 + 1}};

template <class Elem, class Scale>
void sweep(const BlockScaling<Elem, Scale>& s, const std::string& name) {
  for (const SimdTarget& target : simd_targets()) {
    ScopedSimdTarget pin(target.id);
    for (std::uint32_t seed = 0; seed < 4; ++seed)
      for (const Shape& sh : kShapes) {
        const std::string what = name + ", " + target.name + ", " + std::to_string(sh.rows) + " x " +
                                 std::to_string(sh.cols) + " (" + std::to_string(sh.n) + "), seed " +
                                 std::to_string(seed);
        auto x = matrix(sh.rows, sh.cols, finfo<Elem>::max, seed * 31 + static_cast<std::uint32_t>(sh.n), seed != 0);
        x.resize(sh.n);
        expect_matrix_matches(s, x, sh.cols, what);
      }
  }
}

TEST(BlockShapes, nvfp4_16x16_matches_the_reference_on_every_target) { sweep(nvfp4_2d, "nvfp4_2d"); }

TEST(BlockShapes, power_of_two_rules_on_other_shapes_match_the_reference) {
  sweep(BlockScaling<float8_e4m3fn, E8M0>{.block_size = 8, .block_rows = 4, .rule = ScaleRule::floor}, "e4m3 4x8 floor");
  sweep(BlockScaling<float4_e2m1fn, E8M0>{.block_size = 5, .block_rows = 3, .rule = ScaleRule::rceil}, "e2m1 3x5 rceil");
  sweep(BlockScaling<float6_e3m2fn, E8M0>{.block_size = 32, .block_rows = 2, .rule = ScaleRule::even}, "e3m2 2x32 even");
  sweep(BlockScaling<float6_e2m3fn, E8M0>{.block_size = 1, .block_rows = 32, .rule = ScaleRule::ceil}, "e2m3 32x1 ceil");
  // One-row blocks with a row length that is not a multiple of the block.
  sweep(BlockScaling<float8_e5m2, E8M0>{.block_size = 32, .rule = ScaleRule::ceil_amax}, "e5m2 1x32 ceil_amax");
}

// 512 x 1040: two shares of 256K elements, a partial block column; the
// threads' bands give the one-thread result (which the sweeps hold to the
// reference), packed too.
template <class Elem, class Scale>
void expect_threads_agree(const BlockScaling<Elem, Scale>& s, const std::vector<float>& x, std::size_t cols,
                          unsigned threads, const std::string& what) {
  std::vector<Elem> one(x.size()), many(x.size());
  std::vector<Scale> s1(scales_needed(s, x.size(), cols)), s2(s1.size());
  float t1 = 0, t2 = 0;
  quantize(s, std::span<const float>(x), cols, std::span<Elem>(one), std::span<Scale>(s1), &t1, 1);
  quantize(s, std::span<const float>(x), cols, std::span<Elem>(many), std::span<Scale>(s2), &t2, threads);
  ASSERT_EQ(bits(t1), bits(t2)) << what;
  for (std::size_t b = 0; b < s1.size(); ++b) ASSERT_EQ(code(s1[b]), code(s2[b])) << what << ", block " << b;
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(code(one[i]), code(many[i])) << what << ", element " << i;
  std::vector<std::uint8_t> packed(packed_bytes<Elem>(x.size())), expect(packed.size());
  pack(std::span<const Elem>(one), std::span<std::uint8_t>(expect));
  quantize_packed(s, std::span<const float>(x), cols, std::span<std::uint8_t>(packed), std::span<Scale>(s2), &t2,
                  threads);
  ASSERT_EQ(packed, expect) << what << " (packed)";
}

TEST(BlockShapes, threads_give_the_one_thread_result) {
  const auto x = matrix(512, 1040, 6.0, 5, true);
  expect_threads_agree(nvfp4_2d, x, 1040, 2, "nvfp4_2d 512 x 1040, 2 threads");
  expect_threads_agree(BlockScaling<float4_e2m1fn, E8M0>{.block_size = 32, .block_rows = 32}, x, 1040, 0,
                       "mxfp4 32 x 32, all threads");
}

// Whole blocks laid out one after another (tile-major) are the flat form's
// runs of block_rows * block_size: the same scales, the same codes and the
// same tensor scale, in lplab's order and in Transformer Engine's.
template <class Elem, class Scale>
void expect_tile_major_runs(const BlockScaling<Elem, Scale>& s, std::size_t rows, std::size_t cols) {
  const auto br = static_cast<std::size_t>(s.block_rows), bc = static_cast<std::size_t>(s.block_size);
  const auto x = matrix(rows, cols, 6.0, 11, false);
  std::vector<float> runs;
  std::vector<std::size_t> from;
  for (std::size_t R = 0; R < rows / br; ++R)
    for (std::size_t C = 0; C < cols / bc; ++C)
      for (std::size_t i = R * br; i < (R + 1) * br; ++i)
        for (std::size_t j = C * bc; j < (C + 1) * bc; ++j) runs.push_back(x[i * cols + j]), from.push_back(i * cols + j);
  BlockScaling<Elem, Scale> flat = s;
  flat.block_rows = 1;
  flat.block_size = static_cast<int>(br * bc);
  std::vector<Elem> e_runs(x.size()), e_tiles(x.size());
  std::vector<Scale> s_runs(scales_needed(flat, x.size())), s_tiles(scales_needed(s, x.size(), cols));
  float t_runs = 0, t_tiles = 0;
  quantize(flat, std::span<const float>(runs), std::span<Elem>(e_runs), std::span<Scale>(s_runs), &t_runs);
  quantize(s, std::span<const float>(x), cols, std::span<Elem>(e_tiles), std::span<Scale>(s_tiles), &t_tiles);
  ASSERT_EQ(bits(t_runs), bits(t_tiles));
  for (std::size_t b = 0; b < s_runs.size(); ++b) ASSERT_EQ(code(s_runs[b]), code(s_tiles[b])) << "block " << b;
  for (std::size_t t = 0; t < runs.size(); ++t)
    ASSERT_EQ(code(e_runs[t]), code(e_tiles[from[t]])) << "element [" << from[t] / cols << "][" << from[t] % cols << "]";
}

TEST(BlockShapes, whole_blocks_are_the_flat_forms_runs) {
  expect_tile_major_runs(nvfp4_2d, 64, 96);
  expect_tile_major_runs(nvfp4_te_2d, 64, 96);
  expect_tile_major_runs(BlockScaling<float8_e4m3fn, E8M0>{.block_size = 32, .block_rows = 4, .rule = ScaleRule::rceil},
                         16, 128);
}

// Quantizing W^T with transposed blocks gives W's codes transposed and the
// block grid transposed (NVFP4 training uses one 2D-quantized weight in the
// forward and the backward GEMM).
TEST(BlockShapes, transposing_the_matrix_transposes_the_blocks) {
  const std::size_t rows = 48, cols = 80;
  const auto w = matrix(rows, cols, 6.0, 3, false);
  std::vector<float> wt(w.size());
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) wt[j * rows + i] = w[i * cols + j];
  for (const auto& s : {nvfp4_2d, nvfp4_te_2d}) {
    std::vector<float4_e2m1fn> q(w.size()), qt(w.size());
    std::vector<float8_e4m3fn> sc(scales_needed(s, w.size(), cols)), sct(scales_needed(s, w.size(), rows));
    float ts = 0, tst = 0;
    quantize(s, std::span<const float>(w), cols, std::span(q), std::span(sc), &ts);
    quantize(s, std::span<const float>(wt), rows, std::span(qt), std::span(sct), &tst);
    ASSERT_EQ(bits(ts), bits(tst));
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j)
        ASSERT_EQ(code(q[i * cols + j]), code(qt[j * rows + i])) << "W[" << i << "][" << j << "]";
    for (std::size_t R = 0; R < rows / 16; ++R)
      for (std::size_t C = 0; C < cols / 16; ++C)
        ASSERT_EQ(code(sc[R * (cols / 16) + C]), code(sct[C * (rows / 16) + R])) << "block (" << R << ", " << C << ")";
  }
}

// Hand-derived: a 16 x 32 matrix of ones with 12 at [7][3] and 3 at [0][20].
// amax_t = 12, s_enc = 2688 / 12 = 224. Block (0, 0): amax 12, 12 / 6 * 224 =
// 448, E4M3 0x7E; k = 224 / 448 = 0.5, so every 1 becomes 0.5 (E2M1 0x1) and
// 12 becomes 6 (0x7). Block (0, 1): amax 3, 0.5 * 224 = 112 (E4M3 0x6E),
// k = 2: 1 -> 2 (0x4), 3 -> 6 (0x7). With 1 x 16 blocks row 0's first block
// would have amax 1 and its ones would be 6 (0x7): the block's rows share row
// 7's scale.
TEST(BlockShapes, nvfp4_16x16_golden) {
  std::vector<float> x(16 * 32, 1.0f);
  x[7 * 32 + 3] = 12.0f;
  x[0 * 32 + 20] = 3.0f;
  std::vector<float4_e2m1fn> q(x.size());
  std::vector<float8_e4m3fn> sc(2);
  float s_enc = 0;
  quantize(nvfp4_2d, std::span<const float>(x), 32, std::span(q), std::span(sc), &s_enc);
  EXPECT_EQ(s_enc, 224.0f);
  EXPECT_EQ(code(sc[0]), 0x7E);
  EXPECT_EQ(code(sc[1]), 0x6E);
  for (std::size_t i = 0; i < 16; ++i)
    for (std::size_t j = 0; j < 32; ++j) {
      const float v = x[i * 32 + j];
      const unsigned want = j < 16 ? (v == 12.0f ? 0x7 : 0x1) : (v == 3.0f ? 0x7 : 0x4);
      ASSERT_EQ(code(q[i * 32 + j]), want) << "[" << i << "][" << j << "]";
    }
  std::vector<float> y(x.size());
  dequantize(nvfp4_2d, std::span<const float4_e2m1fn>(q), 32, std::span<const float8_e4m3fn>(sc), std::span(y), s_enc);
  EXPECT_EQ(y, x);  // every value is exact here
  // Each 1 x 16 slice's scale, as the GEMM reads it: block (0, C) on all 16 rows.
  std::vector<float8_e4m3fn> slices(scales_needed(nvfp4, x.size(), 32));
  row_scales(nvfp4_2d, x.size(), 32, std::span<const float8_e4m3fn>(sc), std::span(slices));
  ASSERT_EQ(slices.size(), 32u);
  for (std::size_t r = 0; r < 16; ++r) {
    EXPECT_EQ(code(slices[2 * r]), 0x7E) << "row " << r;
    EXPECT_EQ(code(slices[2 * r + 1]), 0x6E) << "row " << r;
  }
}

// A NaN in one row poisons its whole block (all 16 rows of it) and no other.
TEST(BlockShapes, a_nonfinite_value_poisons_its_block_across_rows) {
  std::vector<float> x(32 * 16, 1.0f);
  x[20 * 16 + 5] = std::numeric_limits<float>::infinity();
  BlockScaling<float8_e4m3fn, E8M0> s{.block_size = 16, .block_rows = 16};
  std::vector<float8_e4m3fn> q(x.size());
  std::vector<E8M0> sc(2);
  quantize(s, std::span<const float>(x), 16, std::span(q), std::span(sc));
  EXPECT_EQ(code(sc[0]), 0x7F - 8);  // amax 1: 2^(0 - 8)
  EXPECT_EQ(code(sc[1]), 0xFF);      // NaN
  for (std::size_t i = 16 * 16; i < x.size(); ++i) ASSERT_EQ(code(q[i]), 0u) << i;
  std::vector<float> y(x.size());
  dequantize(s, std::span<const float8_e4m3fn>(q), 16, std::span<const E8M0>(sc), std::span(y));
  EXPECT_EQ(y[15 * 16 + 15], 1.0f);
  EXPECT_TRUE(std::isnan(y[16 * 16]));
}

// Errors come before any write, with one line saying what is wrong.
TEST(BlockShapes, bad_calls_throw_before_writing) {
  const std::vector<float> x(16 * 32, 1.0f);
  std::vector<float4_e2m1fn> q(x.size(), float4_e2m1fn::from_bits(0x5));
  std::vector<float8_e4m3fn> sc(2, float8_e4m3fn::from_bits(0x33));
  float ts = 0;
  auto untouched = [&] {
    return std::all_of(q.begin(), q.end(), [](auto v) { return v.bits() == 0x5; }) &&
           std::all_of(sc.begin(), sc.end(), [](auto v) { return v.bits() == 0x33; });
  };
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no exception)");
  };
  // A 16 x 16 scheme in the flat form: it has no rows.
  EXPECT_NE(message([&] { quantize(nvfp4_2d, std::span<const float>(x), std::span(q), std::span(sc), &ts); })
                .find("16 x 16 blocks needs the matrix's row length"),
            std::string::npos);
  EXPECT_NE(message([&] { quantize(nvfp4_2d, std::span<const float>(x), 0, std::span(q), std::span(sc), &ts); })
                .find("cols must be at least 1"),
            std::string::npos);
  // 16 rows of 32 in 16 x 16 blocks: 2 scales.
  std::vector<float8_e4m3fn> one(1, float8_e4m3fn::from_bits(0x33));
  EXPECT_NE(message([&] { quantize(nvfp4_2d, std::span<const float>(x), 32, std::span(q), std::span(one), &ts); })
                .find("scales has 1 elements, expected 2"),
            std::string::npos);
  BlockScaling<float4_e2m1fn, float8_e4m3fn> no_rows = nvfp4_2d;
  no_rows.block_rows = 0;
  EXPECT_NE(message([&] { quantize(no_rows, std::span<const float>(x), 32, std::span(q), std::span(sc), &ts); })
                .find("block_rows must be at least 1"),
            std::string::npos);
  EXPECT_TRUE(untouched());
}

}  // namespace
}  // namespace lplab::kernels

namespace lplab::kernels {
namespace {

// --- Transformer Engine's Float8BlockScaling tiles ------------------------------

// TE's compute_scale_from_amax and blockwise cast, transcribed: the amax
// without NaNs (fmaxf), s = 448 / amax (1 for 0 or inf; FLT_MAX where it
// overflows; mantissa cleared for pow2), elements E4M3(x * s) saturating,
// stored 1 / s.
float te_scale(float amax, bool pow2) {
  float s = 1.0f;
  if (std::isinf(amax) || amax == 0.0f || std::isnan(amax)) return s;
  s = 448.0f / amax;
  if (std::isinf(s)) s = std::numeric_limits<float>::max();
  if (pow2) s = std::bit_cast<float>(std::bit_cast<std::uint32_t>(s) & 0xFF800000u);
  return s;
}

TEST(TeBlockwise, tiles_follow_te_s_formula_at_its_edges) {
  // 4 rows of 256 in 1 x 128 tiles (8 tiles): ordinary data; all zeros; an
  // infinity; a NaN; amax 1e-40 (448 / amax overflows to FLT_MAX); amax 3.
  std::vector<float> x(4 * 256);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 3.0f;
  std::fill_n(x.begin() + 128, 128, 0.0f);
  x[256 + 5] = std::numeric_limits<float>::infinity();
  x[384 + 9] = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t i = 512; i < 640; ++i) x[i] = (i % 2 ? 1e-40f : -1e-40f);
  for (const TileRule rule : {TileRule::te, TileRule::te_pow2}) {
    const TileScaling<float8_e4m3fn> s{.tile_rows = 1, .tile_cols = 128, .amax_floor = 0.0f, .rule = rule};
    std::vector<float8_e4m3fn> q(x.size());
    std::vector<float> sc(tile_scales_needed(s, x.size(), 256));
    quantize(s, std::span<const float>(x), 256, std::span(q), std::span(sc));
    for (std::size_t t = 0; t < sc.size(); ++t) {
      float amax = 0;
      for (std::size_t i = t * 128; i < t * 128 + 128; ++i)
        if (!std::isnan(x[i])) amax = std::max(amax, std::fabs(x[i]));
      const float f = te_scale(amax, rule == TileRule::te_pow2);
      ASSERT_EQ(bits(sc[t]), bits(1.0f / f)) << enum_name(rule) << ", tile " << t;
      for (std::size_t i = t * 128; i < t * 128 + 128; ++i)
        ASSERT_EQ(code(q[i]), code(lplab::convert<float8_e4m3fn>(x[i] * f, Round::nearest_even, Overflow::saturate)))
            << enum_name(rule) << ", element " << i;
    }
    EXPECT_EQ(sc[1], 1.0f);                                   // all zeros: s = 1
    EXPECT_EQ(sc[2], 1.0f);                                   // an infinity: s = 1, the infinity 448
    EXPECT_EQ(static_cast<float>(q[256 + 5]), 448.0f);
    EXPECT_TRUE(std::isnan(static_cast<float>(q[384 + 9])));  // NaN stays; its tile is scaled by the rest
    EXPECT_NE(sc[3], 1.0f);
    // 448 / 1e-40 overflows: FLT_MAX, or 2^127 as a power of two.
    EXPECT_EQ(sc[4], rule == TileRule::te ? 1.0f / std::numeric_limits<float>::max() : 0x1p-127f);
  }
}

// Power-of-two tiles hold the ceil rule's powers of two (E8M0 scales) where
// 448 / amax is a normal float.
TEST(TeBlockwise, power_of_two_tiles_are_ceil_s) {
  const auto x = matrix(256, 256, 448.0, 21, false);
  std::vector<float8_e4m3fn> q(x.size()), qe(x.size());
  std::vector<float> sc(4);
  quantize(te_blockwise_weights, std::span<const float>(x), 256, std::span(q), std::span(sc));
  const BlockScaling<float8_e4m3fn, E8M0> ceil128{.block_size = 128, .block_rows = 128, .rule = ScaleRule::ceil};
  std::vector<E8M0> se(4);
  quantize(ceil128, std::span<const float>(x), 256, std::span(qe), std::span(se));
  for (std::size_t b = 0; b < 4; ++b) EXPECT_EQ(sc[b], static_cast<float>(se[b])) << b;
  EXPECT_EQ(q, qe);
}

// --- fp32 scales: DeepSeek-V3's tiles and TE's Float8BlockScaling as block schemes --

// The four named tile schemes against the TileScaling constants, whose loop
// is a separate scalar implementation of the same formulas (and is checked
// against TE's formula above): codes, scales and dequantized values bit for
// bit, on every SIMD target, with one and two threads, on shapes with partial
// tiles and short last rows, on data with NaNs, infinities, zeros, subnormal
// tiles and whole tiles of NaN.
template <class Elem>
void expect_tile_scheme(const BlockScaling<Elem, float32>& b, const TileScaling<Elem>& t, const std::string& name) {
  const Shape shapes[] = {{1, 128, 128}, {3, 200, 600}, {129, 257, 129 * 257}, {130, 128, 129 * 128 + 5},
                          {2, 1000, 2000}, {256, 256, 256 * 256}};
  for (const SimdTarget& target : simd_targets()) {
    ScopedSimdTarget pin(target.id);
    for (const Shape& sh : shapes) {
      for (std::uint32_t seed = 0; seed < 2; ++seed) {
        auto x = matrix(sh.rows, sh.cols, 448.0, seed * 7 + static_cast<std::uint32_t>(sh.n), true);
        x.resize(sh.n);
        if (seed == 1 && sh.n >= 256) {
          std::fill_n(x.begin(), 128, std::numeric_limits<float>::quiet_NaN());  // a tile of NaNs
          std::fill_n(x.begin() + 128, std::min<std::size_t>(128, sh.n - 128), 1e-41f);  // amax below 1e-4
        }
        const std::string what = name + ", " + target.name + ", " + std::to_string(sh.rows) + " x " +
                                 std::to_string(sh.cols) + ", seed " + std::to_string(seed);
        std::vector<Elem> qt(sh.n);
        std::vector<float> st(tile_scales_needed(t, sh.n, sh.cols));
        quantize(t, std::span<const float>(x), sh.cols, std::span(qt), std::span(st));
        ASSERT_EQ(scales_needed(b, sh.n, sh.cols), st.size()) << what;
        for (unsigned threads : {1u, 2u}) {
          std::vector<Elem> qb(sh.n);
          std::vector<float32> sb(st.size());
          quantize(b, std::span<const float>(x), sh.cols, std::span(qb), std::span(sb), nullptr, threads);
          for (std::size_t k = 0; k < st.size(); ++k)
            ASSERT_EQ(sb[k].bits(), bits(st[k])) << what << ": scale " << k << " is " << static_cast<float>(sb[k])
                                                  << ", TileScaling's " << st[k];
          for (std::size_t i = 0; i < sh.n; ++i)
            ASSERT_EQ(code(qb[i]), code(qt[i])) << what << ": element " << i << " of " << x[i];
          std::vector<float> yb(sh.n), yt(sh.n);
          dequantize(b, std::span<const Elem>(qb), sh.cols, std::span<const float32>(sb), std::span(yb));
          dequantize(t, std::span<const Elem>(qt), sh.cols, std::span<const float>(st), std::span(yt));
          for (std::size_t i = 0; i < sh.n; ++i) ASSERT_EQ(bits(yb[i]), bits(yt[i])) << what << ": y " << i;
        }
      }
    }
  }
}

TEST(Fp32Scales, tile_schemes_equal_tile_scaling_on_every_target) {
  expect_tile_scheme(deepseek_1x128, deepseek_activations, "deepseek_1x128");
  expect_tile_scheme(deepseek_128x128, deepseek_weights, "deepseek_128x128");
  expect_tile_scheme(te_blockwise_1x128, te_blockwise_activations, "te_blockwise_1x128");
  expect_tile_scheme(te_blockwise_128x128, te_blockwise_weights, "te_blockwise_128x128");
  // TE's rule without the power of two, against TileRule::te.
  constexpr BlockScaling<float8_e4m3fn, float32> te_plain{.block_size = 128, .rule = ScaleRule::te_fp32};
  expect_tile_scheme(te_plain, TileScaling<float8_e4m3fn>{.amax_floor = 0.0f, .rule = TileRule::te}, "te_fp32");
}

// Hand-derived: one 1 x 128 tile of amax 3. DeepSeek: scale 3 / 448 in
// float32, elements x * (448 / 3). TE: 448 / 3 = 149.33 cut to 128, scale
// 2^-7, elements x * 128 (3 -> 384, an E4M3 code). An amax of 1e-6 is floored
// to 1e-4 by DeepSeek, not by TE (448 / 1e-6 = 4.48e8, cut to 2^28).
TEST(Fp32Scales, hand_derived_tiles) {
  std::vector<float> x(256, 0.5f);
  x[7] = -3.0f;
  std::fill(x.begin() + 128, x.end(), 1e-6f);
  std::vector<float8_e4m3fn> q(256);
  std::vector<float32> sc(2);
  quantize(deepseek_1x128, std::span<const float>(x), 256, std::span(q), std::span(sc));
  EXPECT_EQ(static_cast<float>(sc[0]), 3.0f / 448.0f);
  EXPECT_EQ(static_cast<float>(sc[1]), 1e-4f / 448.0f);
  EXPECT_EQ(static_cast<float>(q[7]), -448.0f);
  EXPECT_EQ(static_cast<float>(q[0]), static_cast<float>(lplab::convert<float8_e4m3fn>(0.5f * (448.0f / 3.0f))));
  quantize(te_blockwise_1x128, std::span<const float>(x), 256, std::span(q), std::span(sc));
  EXPECT_EQ(static_cast<float>(sc[0]), 0x1p-7f);
  EXPECT_EQ(static_cast<float>(sc[1]), 0x1p-28f);
  EXPECT_EQ(static_cast<float>(q[7]), -384.0f);
  EXPECT_EQ(static_cast<float>(q[0]), 64.0f);
  EXPECT_EQ(static_cast<float>(q[128]), static_cast<float>(lplab::convert<float8_e4m3fn>(1e-6f * 0x1p28f)));
}

TEST(Fp32Scales, the_fp32_rules_need_fp32_scales_and_no_tensor_scale) {
  std::vector<float> x(128, 1.0f);
  std::vector<float8_e4m3fn> q(128, float8_e4m3fn::from_bits(0x11));
  std::vector<E8M0> se(1, E8M0::from_bits(0x22));
  const BlockScaling<float8_e4m3fn, E8M0> wrong{.block_size = 128, .rule = ScaleRule::deepseek};
  try {
    quantize(wrong, std::span<const float>(x), std::span(q), std::span(se));
    FAIL() << "an E8M0 scale under ScaleRule::deepseek was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ScaleRule::deepseek gives float32 scales"), std::string::npos) << e.what();
  }
  EXPECT_EQ(q[0].bits(), 0x11);
  EXPECT_EQ(se[0].bits(), 0x22);
  const BlockScaling<float8_e4m3fn, float32> with_tensor{.block_size = 128, .rule = ScaleRule::te_fp32,
                                                         .tensor_scale = true};
  std::vector<float32> sf(1);
  float ts = 0;
  EXPECT_THROW(quantize(with_tensor, std::span<const float>(x), std::span(q), std::span(sf), &ts),
               std::invalid_argument);
}

// --- stochastic rounding inside block quantization ----------------------------

// The scaled values quantize() rounds, from its scales and tensor scale by
// scaling.h's formulas (written here per rule), then cvt.rs over the whole
// tensor (cvt_rs_bulk, group g = elements [4g, 4g + 4)).
template <class Elem, class Scale>
std::vector<Elem> ref_stochastic(const BlockScaling<Elem, Scale>& s, const std::vector<float>& x, std::size_t cols,
                                 const std::vector<Scale>& scales, float ts, const StochasticElements& r) {
  const std::size_t n = x.size(), across = (cols + s.block_size - 1) / s.block_size;
  constexpr float kMax = std::numeric_limits<float>::max();
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t row = i / cols, col = i % cols;
    const Scale sc = scales[(row / s.block_rows) * across + col / s.block_size];
    const float f = static_cast<float>(sc);
    float k;
    if (std::isnan(f)) {
      k = 0.0f;  // a non-finite block: +0 elements
    } else if (s.rule == ScaleRule::amax_ratio) {
      k = f == 0 ? 0.0f : std::min(ts / f, kMax);
    } else if (s.rule == ScaleRule::amax_ratio_te) {
      // ts is the tensor's amax: s_enc = min(2688 / amax, FLT_MAX), 1 where that is 0.
      float s_enc = ts == 0 ? kMax : std::min(2688.0f / ts, kMax);
      if (s_enc == 0) s_enc = 1.0f;
      k = std::min(1.0f / (f * (1.0f / s_enc)), kMax);
    } else {
      k = std::ldexp(1.0f, -std::ilogb(f));  // 2^-X
    }
    v[i] = x[i] * k;
    if (std::isnan(f) || (s.rule == ScaleRule::amax_ratio_te && (v[i] == 0 || std::isnan(v[i])))) v[i] = 0.0f;
  }
  std::vector<Elem> out(n);
  cvt_rs_bulk<CvtRsFormOf<Elem>::value>(v.data(), n, out.data(), r.stream, r.seed, r.subsequence, *r.layout);
  return out;
}

template <class Elem, class Scale>
void expect_stochastic(const BlockScaling<Elem, Scale>& s, std::size_t rows, std::size_t cols, std::uint32_t seed,
                       const StochasticElements& r, const std::string& what) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(rows * cols);
  for (auto& v : x) v = d(rng) * (rng() % 50 == 0 ? 300.0f : 1.0f);
  if (seed % 2 == 1) x[x.size() / 3] = std::numeric_limits<float>::infinity(), x[7] = -0.0f;
  std::vector<Elem> nearest(x.size()), sr(x.size());
  std::vector<Scale> sn(scales_needed(s, x.size(), cols)), ss(sn.size());
  float tn = -1, tss = -2;
  quantize(s, std::span<const float>(x), cols, std::span<Elem>(nearest), std::span<Scale>(sn), &tn);
  quantize_stochastic(s, std::span<const float>(x), cols, std::span<Elem>(sr), std::span<Scale>(ss), r, &tss);
  ASSERT_EQ(bits(tss), bits(tn)) << what;
  for (std::size_t b = 0; b < sn.size(); ++b) ASSERT_EQ(code(ss[b]), code(sn[b])) << what << ", block " << b;
  const auto want = ref_stochastic(s, x, cols, sn, tn, r);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(code(sr[i]), code(want[i])) << what << ": element " << i << " = " << x[i];
    differ += code(sr[i]) != code(nearest[i]);
  }
  EXPECT_GT(differ, x.size() / 50) << what << ": stochastic rounding should depart from nearest often";
}

TEST(StochasticBlocks, elements_are_cvt_rs_of_the_scaled_values) {
  const StochasticElements philox{.stream = RbitsStream::philox, .seed = 42, .subsequence = 3};
  const StochasticElements own{.stream = RbitsStream::lplab, .seed = 9, .layout = &kRbitsSm103a};
  for (std::uint32_t seed = 0; seed < 4; ++seed) {
    const auto& r = seed % 2 == 0 ? philox : own;
    const std::string tag = ", seed " + std::to_string(seed);
    expect_stochastic(nvfp4, 24, 160, seed, r, "nvfp4" + tag);  // 3840 elements: several of the fast path's chunks
    expect_stochastic(nvfp4_te, 24, 160, seed, r, "nvfp4_te" + tag);
    expect_stochastic(nvfp4_2d, 48, 96, seed, r, "nvfp4_2d" + tag);
    expect_stochastic(mxfp8_e4m3, 8, 256, seed, r, "mxfp8_e4m3" + tag);
    expect_stochastic(mxfp8_e5m2, 8, 256, seed, r, "mxfp8_e5m2" + tag);
    expect_stochastic(BlockScaling<float6_e3m2fn, float8_e8m0fnu>{.rule = ScaleRule::rceil}, 5, 96, seed, r,
                      "mxfp6_e3m2 rceil" + tag);
    expect_stochastic(BlockScaling<float6_e2m3fn, float8_e8m0fnu>{.block_size = 16, .block_rows = 2}, 6, 50, seed,
                      r, "e2m3 2x16, rows of 50" + tag);
  }
}

TEST(StochasticBlocks, threads_and_chunks_do_not_change_the_codes) {
  std::vector<float> x(1 << 19);
  std::mt19937 rng(1);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (auto& v : x) v = d(rng);
  std::vector<float4_e2m1fn> one(x.size()), two(x.size());
  std::vector<float8_e4m3fn> s1(scales_needed(nvfp4, x.size(), 4096)), s2(s1.size());
  float t1 = 0, t2 = 0;
  const StochasticElements r{.seed = 5};
  quantize_stochastic(nvfp4, std::span<const float>(x), 4096, std::span(one), std::span(s1), r, &t1, 1);
  quantize_stochastic(nvfp4, std::span<const float>(x), 4096, std::span(two), std::span(s2), r, &t2, 2);
  ASSERT_EQ(bits(t1), bits(t2));
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(code(one[i]), code(two[i])) << i;
}

// Unbiased where nearest is not: 2.25 in blocks whose amax 6 gives scale 1
// lies between E2M1's 2 and 3; nearest always gives 2, cvt.rs gives 3 with
// probability 1/4 (8 random bits: exactly 64/256).
TEST(StochasticBlocks, the_mean_over_seeds_is_the_value) {
  std::vector<float> x(32 * 64, 2.25f);
  for (std::size_t b = 0; b < 64; ++b) x[b * 32] = 6.0f;
  double sum = 0;
  std::size_t count = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<float4_e2m1fn> q(x.size());
    std::vector<float8_e8m0fnu> sc(64);
    quantize_stochastic(mxfp4, std::span<const float>(x), 32, std::span(q), std::span(sc), {.seed = seed});
    for (std::size_t i = 0; i < x.size(); ++i)
      if (i % 32 != 0) sum += static_cast<double>(q[i]) * static_cast<double>(sc[i / 32]), ++count;
  }
  // 396,800 draws of 2 or 3: the mean's standard deviation is 0.0007.
  EXPECT_NEAR(sum / static_cast<double>(count), 2.25, 0.004);
}

TEST(StochasticBlocks, formats_without_cvt_rs_are_refused) {
  const std::vector<float> x(32, 1.0f);
  std::vector<float8_e4m3fnuz> q(32);
  std::vector<float8_e8m0fnu> sc(1);
  try {
    quantize_stochastic(BlockScaling<float8_e4m3fnuz, float8_e8m0fnu>{}, std::span<const float>(x), 32,
                        std::span(q), std::span(sc), {});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("float8_e4m3fnuz has no cvt.rs form"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lplab::kernels
