// Four Over Six over a tensor (four_over_six.h).
#include "lplab/kernels/four_over_six.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "lplab/kernels/scaling.h"

namespace lplab::kernels {

namespace {
std::size_t blocks_for(std::size_t n) { return n / kFourOverSixBlock + (n % kFourOverSixBlock != 0 ? 1 : 0); }

void check_sizes(const FourOverSix& p, std::size_t n, std::size_t elems, std::size_t scales) {
  if (elems != n)
    throw std::invalid_argument("four_over_six: " + std::to_string(n) + " values but " + std::to_string(elems) +
                                " codes");
  if (scales != blocks_for(n))
    throw std::invalid_argument("four_over_six: " + std::to_string(n) + " values need " +
                                std::to_string(blocks_for(n)) + " scales (one per 16), not " +
                                std::to_string(scales));
  if (!(p.e4m3_max > 0.0f && p.e4m3_max <= 448.0f))
    throw std::invalid_argument("four_over_six: e4m3_max must lie in (0, 448]");
}
}  // namespace

void quantize_four_over_six(const FourOverSix& p, std::span<const float> x, std::span<float4_e2m1fn> elems,
                            std::span<float8_e4m3fn> scales, float* amax, std::size_t* blocks_of_four) {
  // 1. Checked before anything is written.
  check_sizes(p, x.size(), elems.size(), scales.size());
  if (amax == nullptr) throw std::invalid_argument("four_over_six: the amax output is required");
  // 2. The tensor's amax (a NaN anywhere makes it NaN).
  const float a = lplab::kernels::amax(x);  // scaling.h, the SIMD reduction
  // 3. Each block.
  std::size_t fours = 0;
  for (std::size_t b = 0; b < scales.size(); ++b) {
    const std::size_t first = b * kFourOverSixBlock;
    const int n = static_cast<int>(std::min<std::size_t>(kFourOverSixBlock, x.size() - first));
    const FourOverSixBlock r = four_over_six_block(p, x.data() + first, n, a);
    for (int i = 0; i < n; ++i) elems[first + static_cast<std::size_t>(i)] = r.codes[i];
    scales[b] = r.scale;
    fours += r.four;
  }
  *amax = a;
  if (blocks_of_four != nullptr) *blocks_of_four = fours;
}

void dequantize_four_over_six(const FourOverSix& p, std::span<const float4_e2m1fn> elems,
                              std::span<const float8_e4m3fn> scales, float amax, std::span<float> y) {
  check_sizes(p, y.size(), elems.size(), scales.size());
  const float numerator = 6.0f * p.e4m3_max;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float s = static_cast<float>(scales[i / kFourOverSixBlock]);
    y[i] = ((static_cast<float>(elems[i]) * s) * amax) / numerator;
  }
}

namespace {

struct MatrixBlocks {
  std::size_t rows, across, block_rows;
};

MatrixBlocks check_matrix(const FourOverSix& p, std::size_t n, std::size_t cols, int block_rows, std::size_t elems,
                          std::size_t scales) {
  if (block_rows != 1 && block_rows != 16)
    throw std::invalid_argument("four_over_six: blocks of 1 or 16 rows, not " + std::to_string(block_rows));
  if (block_rows == 16 && p.order != FourOverSixOrder::te)
    throw std::invalid_argument("four_over_six: 16 x 16 blocks are Transformer Engine's (order te)");
  if (cols == 0) throw std::invalid_argument("four_over_six: cols must be at least 1");
  if (!(p.e4m3_max > 0.0f && p.e4m3_max <= 448.0f))
    throw std::invalid_argument("four_over_six: e4m3_max must lie in (0, 448]");
  const std::size_t rows = n / cols + (n % cols != 0 ? 1 : 0), br = static_cast<std::size_t>(block_rows);
  const MatrixBlocks m{rows, blocks_for(cols), br};
  const std::size_t want = (rows / br + (rows % br != 0 ? 1 : 0)) * m.across;
  if (elems != n)
    throw std::invalid_argument("four_over_six: " + std::to_string(n) + " values but " + std::to_string(elems) +
                                " codes");
  if (scales != want)
    throw std::invalid_argument("four_over_six: " + std::to_string(n) + " values in rows of " + std::to_string(cols) +
                                " need " + std::to_string(want) + " scales, not " + std::to_string(scales));
  return m;
}

}  // namespace

void quantize_four_over_six(const FourOverSix& p, std::span<const float> x, std::size_t cols, int block_rows,
                            std::span<float4_e2m1fn> elems, std::span<float8_e4m3fn> scales, float* amax,
                            std::size_t* blocks_of_four) {
  namespace d = four_over_six_detail;
  // 1. Checked before anything is written.
  const MatrixBlocks m = check_matrix(p, x.size(), cols, block_rows, elems.size(), scales.size());
  if (amax == nullptr) throw std::invalid_argument("four_over_six: the amax output is required");
  // 2. The tensor's amax and encode scale.
  const float a = lplab::kernels::amax(x);
  const float enc = four_over_six_encode(p, a);
  std::size_t fours = 0;
  const std::size_t n = x.size();
  auto row_len = [&](std::size_t r, std::size_t c0) {
    return static_cast<int>(std::min<std::size_t>(kFourOverSixBlock, std::min(cols, n - r * cols) - c0));
  };
  for (std::size_t R = 0; R * m.block_rows < m.rows; ++R) {
    const std::size_t r0 = R * m.block_rows, r1 = std::min(m.rows, r0 + m.block_rows);
    for (std::size_t C = 0; C < m.across; ++C) {
      const std::size_t c0 = C * kFourOverSixBlock;
      float8_e4m3fn& scale = scales[R * m.across + C];
      // 3. The block's largest magnitude, over its rows.
      float bmax = 0.0f;
      bool any = false;
      for (std::size_t r = r0; r < r1; ++r) {
        if (r * cols + c0 >= n) continue;
        any = true;
        for (int i = 0; i < row_len(r, c0); ++i) bmax = std::max(bmax, d::abs_of(x[r * cols + c0 + i]));
      }
      if (!any) {  // past a short last row: an all-zero block's scale
        scale = four_over_six_scales(p, 0.0f, enc).six;
        continue;
      }
      if (p.order == FourOverSixOrder::fouroversix && a == 0.0f) {
        scale = float8_e4m3fn::from_bits(0);
        for (std::size_t r = r0; r < r1 && r * cols + c0 < n; ++r)
          std::fill_n(elems.begin() + static_cast<std::ptrdiff_t>(r * cols + c0), row_len(r, c0),
                      float4_e2m1fn::from_bits(0));
        continue;
      }
      const auto [s6, s4] = four_over_six_scales(p, bmax, enc);
      // 4. Each row's slice with each candidate, its error over its elements.
      float err6[16] = {}, err4[16] = {};
      float4_e2m1fn q6[16][kFourOverSixBlock], q4[16][kFourOverSixBlock];
      for (std::size_t r = r0; r < r1; ++r) {
        if (r * cols + c0 >= n) continue;
        const float* row = x.data() + r * cols + c0;
        err6[r - r0] = d::candidate(p, row, row_len(r, c0), a, enc, s6, q6[r - r0]);
        err4[r - r0] = d::candidate(p, row, row_len(r, c0), a, enc, s4, q4[r - r0]);
      }
      // 5. The rows' errors summed in TE's tree order (16 rows), or the row's own.
      auto tree = [&](float* e) {
        if (m.block_rows == 1) return e[0];
        for (int width = 8; width >= 1; width /= 2)
          for (int i = 0; i < width; ++i) e[i] = e[i] + e[i + width];
        return e[0];
      };
      const bool four = tree(err4) < tree(err6);
      scale = four ? s4 : s6;
      fours += four;
      for (std::size_t r = r0; r < r1; ++r) {
        if (r * cols + c0 >= n) continue;
        for (int i = 0; i < row_len(r, c0); ++i) elems[r * cols + c0 + i] = four ? q4[r - r0][i] : q6[r - r0][i];
      }
    }
  }
  *amax = a;
  if (blocks_of_four != nullptr) *blocks_of_four = fours;
}

void dequantize_four_over_six(const FourOverSix& p, std::span<const float4_e2m1fn> elems, std::size_t cols,
                              int block_rows, std::span<const float8_e4m3fn> scales, float amax, std::span<float> y) {
  const MatrixBlocks m = check_matrix(p, y.size(), cols, block_rows, elems.size(), scales.size());
  const float numerator = 6.0f * p.e4m3_max;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::size_t r = i / cols, c = i % cols;
    const float s = static_cast<float>(scales[(r / m.block_rows) * m.across + c / kFourOverSixBlock]);
    y[i] = ((static_cast<float>(elems[i]) * s) * amax) / numerator;
  }
}

}  // namespace lplab::kernels
