// The swizzled scale layout (scale_layout.h) against torchao's to_blocked
// (torchao/prototype/mx_formats/utils.py, v0.18.0), written here as the
// sequence of tensor operations it performs rather than as the index
// formula: pad to (128 nR) x (4 nC), view (nR, 128, nC, 4), permute to
// (nR, nC, 128, 4), reshape to (nR nC, 4, 32, 4), swap the middle two
// dimensions, flatten.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "lplab/kernels.h"

namespace lplab::testing {
namespace {

using kernels::swizzle_scales;
using kernels::swizzled_scale_bytes;
using kernels::swizzled_scale_index;
using kernels::unswizzle_scales;

std::vector<std::uint8_t> to_blocked(const std::vector<std::uint8_t>& s, std::size_t rows, std::size_t cols,
                                     std::uint8_t pad) {
  const std::size_t nr = (rows + 127) / 128, nc = (cols + 3) / 4;
  auto padded = [&](std::size_t r, std::size_t c) { return r < rows && c < cols ? s[r * cols + c] : pad; };
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < nr; ++i)        // (nR, nC, ...) after the permute
    for (std::size_t j = 0; j < nc; ++j)
      for (std::size_t b = 0; b < 32; ++b)    // the 32 after the swap
        for (std::size_t a = 0; a < 4; ++a)   // the 4 groups of 32 rows
          for (std::size_t c = 0; c < 4; ++c) out.push_back(padded(i * 128 + a * 32 + b, j * 4 + c));
  return out;
}

TEST(ScaleLayout, equals_torchaos_to_blocked_and_inverts) {
  struct Shape {
    std::size_t rows, cols;
  };
  for (const Shape sh : {Shape{1, 1}, {128, 4}, {129, 5}, {300, 7}, {256, 8}, {32, 3}, {1024, 64}, {0, 3}, {5, 0}})
    for (std::uint8_t pad : {std::uint8_t{0}, std::uint8_t{0x7F}}) {
      SCOPED_TRACE(std::to_string(sh.rows) + " x " + std::to_string(sh.cols) + " pad " + std::to_string(pad));
      std::vector<std::uint8_t> s(sh.rows * sh.cols);
      for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::uint8_t>(i * 37 + i / 251);
      const std::vector<std::uint8_t> want = to_blocked(s, sh.rows, sh.cols, pad);
      ASSERT_EQ(swizzled_scale_bytes(sh.rows, sh.cols), want.size());
      std::vector<std::uint8_t> got(want.size(), 0xAA);
      swizzle_scales(s, sh.rows, sh.cols, got, pad);
      ASSERT_EQ(got, want);
      for (std::size_t r = 0; r < sh.rows; ++r)
        for (std::size_t c = 0; c < sh.cols; ++c)
          ASSERT_EQ(want[swizzled_scale_index(r, c, sh.cols)], s[r * sh.cols + c]) << r << ", " << c;
      std::vector<std::uint8_t> back(s.size(), 0xAA);
      unswizzle_scales(got, sh.rows, sh.cols, back);
      ASSERT_EQ(back, s);
    }
  // The layout's first bytes, by hand: (0,0) (0,1) (0,2) (0,3) (32,0) ... (96,3), then row 1.
  EXPECT_EQ(swizzled_scale_index(0, 3, 8), 3u);
  EXPECT_EQ(swizzled_scale_index(32, 0, 8), 4u);
  EXPECT_EQ(swizzled_scale_index(96, 3, 8), 15u);
  EXPECT_EQ(swizzled_scale_index(1, 0, 8), 16u);
  EXPECT_EQ(swizzled_scale_index(0, 4, 8), 512u);   // the next tile along K
  EXPECT_EQ(swizzled_scale_index(128, 0, 8), 1024u);  // the next row of tiles
}

// A wrong size or overlapping buffers: std::invalid_argument before any byte
// is written.
TEST(ScaleLayout, refuses_wrong_sizes_before_writing) {
  std::vector<std::uint8_t> s(130 * 5, 1), out(swizzled_scale_bytes(130, 5), 0xAA);
  const std::vector<std::uint8_t> untouched = out;
  EXPECT_THROW(swizzle_scales(std::span(s).first(10), 130, 5, out), std::invalid_argument);
  EXPECT_THROW(swizzle_scales(s, 130, 5, std::span(out).first(512)), std::invalid_argument);
  EXPECT_EQ(out, untouched);
  std::vector<std::uint8_t> back(130 * 5, 0xAA);
  EXPECT_THROW(unswizzle_scales(std::span(out).first(100), 130, 5, back), std::invalid_argument);
  EXPECT_EQ(back, std::vector<std::uint8_t>(130 * 5, 0xAA));
  std::vector<std::uint8_t> one(swizzled_scale_bytes(4, 4) + 16);
  EXPECT_THROW(swizzle_scales(std::span(one).first(16), 4, 4, std::span(one).subspan(8, 512)), std::invalid_argument);
  // Sizes whose products wrap: refused, nothing read or written.
  const std::size_t huge = std::size_t{1} << 32;
  EXPECT_THROW(unswizzle_scales({}, huge, huge, {}), std::invalid_argument);
  EXPECT_THROW(swizzle_scales({}, huge, huge, {}), std::invalid_argument);
  try {
    swizzle_scales(std::span(s).first(10), 130, 5, out);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "lplab::kernels::swizzle_scales: the 130 x 5 grid needs 650 codes, given 10");
  }
}

// MXFP8 scales of a 130 x 192 operand (6 blocks of 32 per row), swizzled:
// each block's scale is where the layout puts (row, block).
TEST(ScaleLayout, an_mxfp8_operands_scales) {
  const std::size_t rows = 130, k = 192, cols = k / 32;
  std::vector<float> x(rows * k);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i % 97) + 1) * std::ldexp(1.0f, static_cast<int>(i / 32 % 40) - 20);
  std::vector<float8_e4m3fn> q(x.size());
  std::vector<float8_e8m0fnu> sc(kernels::scales_needed(kernels::mxfp8_e4m3, x.size()));
  kernels::quantize(kernels::mxfp8_e4m3, x, q, sc);
  std::vector<std::uint8_t> codes(sc.size());
  for (std::size_t i = 0; i < sc.size(); ++i) codes[i] = sc[i].bits();
  std::vector<std::uint8_t> sw(swizzled_scale_bytes(rows, cols));
  swizzle_scales(codes, rows, cols, sw);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      float amax = 0;
      for (std::size_t t = 0; t < 32; ++t) amax = std::max(amax, std::fabs(x[r * k + c * 32 + t]));
      // floor: 2^(floor(log2 amax) - 8), biased by 127.
      ASSERT_EQ(sw[swizzled_scale_index(r, c, cols)], std::ilogb(amax) - 8 + 127) << r << ", " << c;
    }
}

}  // namespace
}  // namespace lplab::testing
