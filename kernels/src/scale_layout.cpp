// The swizzled scale layout (lplab/kernels/scale_layout.h), a tile at a
// time: each tile's 32-row groups are read as rows of 4 codes and written as
// 4-byte runs, 16 bytes apart per row.
#include "lplab/kernels/scale_layout.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace lplab::kernels {
namespace {

// The grid's code count and its layout's bytes, refused where either
// overflows size_t (a wrapped product could pass the size checks).
struct Sizes {
  std::size_t grid, swizzled;
};
Sizes sizes_of(const char* fn, std::size_t rows, std::size_t cols) {
  std::size_t grid = 0, swizzled = 0;
  const std::size_t tr = (rows + kScaleTileRows - 1) / kScaleTileRows;
  const std::size_t tc = (cols + kScaleTileCols - 1) / kScaleTileCols;
  if (__builtin_mul_overflow(rows, cols, &grid) || __builtin_mul_overflow(tr, tc, &swizzled) ||
      __builtin_mul_overflow(swizzled, kScaleTileBytes, &swizzled))
    throw std::invalid_argument("lplab::kernels::" + std::string(fn) + ": a " + std::to_string(rows) + " x " +
                                std::to_string(cols) + " grid is too large");
  return {grid, swizzled};
}

void check(const char* fn, std::size_t grid, std::size_t swizzled, std::size_t rows, std::size_t cols,
           std::size_t grid_given, std::size_t swizzled_given, const void* a, const void* b) {
  const std::string where = "lplab::kernels::" + std::string(fn) + ": ";
  const std::string shape = std::to_string(rows) + " x " + std::to_string(cols);
  if (grid_given != grid)
    throw std::invalid_argument(where + "the " + shape + " grid needs " + std::to_string(grid) + " codes, given " +
                                std::to_string(grid_given));
  if (swizzled_given != swizzled)
    throw std::invalid_argument(where + "the swizzled layout of a " + shape + " grid is " + std::to_string(swizzled) +
                                " bytes, given " + std::to_string(swizzled_given));
  const auto* pa = static_cast<const std::uint8_t*>(a);
  const auto* pb = static_cast<const std::uint8_t*>(b);
  if (grid != 0 && pa < pb + swizzled && pb < pa + grid)
    throw std::invalid_argument(where + "the grid and the swizzled buffer overlap");
}

}  // namespace

void swizzle_scales(std::span<const std::uint8_t> scales, std::size_t rows, std::size_t cols,
                    std::span<std::uint8_t> out, std::uint8_t pad) {
  const Sizes z = sizes_of("swizzle_scales", rows, cols);
  check("swizzle_scales", z.grid, z.swizzled, rows, cols, scales.size(), out.size(), scales.data(), out.data());
  if (z.grid == 0) {
    std::fill(out.begin(), out.end(), pad);
    return;
  }
  const bool ragged = rows % kScaleTileRows != 0 || cols % kScaleTileCols != 0;
  if (ragged) std::fill(out.begin(), out.end(), pad);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint8_t* row = scales.data() + r * cols;
    std::uint8_t* base = out.data() + swizzled_scale_index(r, 0, cols);
    // Whole groups of 4 columns: one 4-byte run per tile, 512 bytes apart.
    std::size_t c = 0;
    for (; c + kScaleTileCols <= cols; c += kScaleTileCols)
      std::memcpy(base + c / kScaleTileCols * kScaleTileBytes, row + c, kScaleTileCols);
    for (; c < cols; ++c) base[c / kScaleTileCols * kScaleTileBytes + c % kScaleTileCols] = row[c];
  }
}

void unswizzle_scales(std::span<const std::uint8_t> swizzled, std::size_t rows, std::size_t cols,
                      std::span<std::uint8_t> out) {
  const Sizes z = sizes_of("unswizzle_scales", rows, cols);
  check("unswizzle_scales", z.grid, z.swizzled, rows, cols, out.size(), swizzled.size(), out.data(),
        swizzled.data());
  if (z.grid == 0) return;
  for (std::size_t r = 0; r < rows; ++r) {
    std::uint8_t* row = out.data() + r * cols;
    const std::uint8_t* base = swizzled.data() + swizzled_scale_index(r, 0, cols);
    std::size_t c = 0;
    for (; c + kScaleTileCols <= cols; c += kScaleTileCols)
      std::memcpy(row + c, base + c / kScaleTileCols * kScaleTileBytes, kScaleTileCols);
    for (; c < cols; ++c) row[c] = base[c / kScaleTileCols * kScaleTileBytes + c % kScaleTileCols];
  }
}

}  // namespace lplab::kernels
