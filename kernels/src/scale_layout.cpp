// The swizzled scale layout (lplab/kernels/scale_layout.h): both directions
// copy the same runs, a row's (at most) 4 codes of each tile.
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

// f(grid offset, swizzled offset, n) for every run of n <= 4 codes that lie
// side by side in both: a row's codes of one tile, 512 bytes apart from the
// next tile's.
template <class F>
void for_each_run(std::size_t rows, std::size_t cols, F&& f) {
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t base = swizzled_scale_index(r, 0, cols);
    for (std::size_t c = 0; c < cols; c += kScaleTileCols)
      f(r * cols + c, base + c / kScaleTileCols * kScaleTileBytes, std::min(kScaleTileCols, cols - c));
  }
}

}  // namespace

void swizzle_scales(std::span<const std::uint8_t> scales, std::size_t rows, std::size_t cols,
                    std::span<std::uint8_t> out, std::uint8_t pad) {
  const Sizes z = sizes_of("swizzle_scales", rows, cols);
  check("swizzle_scales", z.grid, z.swizzled, rows, cols, scales.size(), out.size(), scales.data(), out.data());
  if (z.grid == 0 || rows % kScaleTileRows != 0 || cols % kScaleTileCols != 0)
    std::fill(out.begin(), out.end(), pad);  // the padding
  for_each_run(rows, cols, [&](std::size_t g, std::size_t s, std::size_t n) {
    std::memcpy(out.data() + s, scales.data() + g, n);
  });
}

void unswizzle_scales(std::span<const std::uint8_t> swizzled, std::size_t rows, std::size_t cols,
                      std::span<std::uint8_t> out) {
  const Sizes z = sizes_of("unswizzle_scales", rows, cols);
  check("unswizzle_scales", z.grid, z.swizzled, rows, cols, out.size(), swizzled.size(), out.data(),
        swizzled.data());
  for_each_run(rows, cols, [&](std::size_t g, std::size_t s, std::size_t n) {
    std::memcpy(out.data() + g, swizzled.data() + s, n);
  });
}

}  // namespace lplab::kernels
