// The scale-factor layout block-scaled GEMMs read. A block-scaled operand's
// scales form a grid of rows x cols one-byte codes (E8M0 or E4M3): row r of
// the operand, block c along K (cols = ceil(K / block_size)), row-major as
// quantize writes them. NVIDIA's GEMMs read them swizzled:
//
//   cuBLAS's "128x4 blocked" layout for MXFP8/MXFP4/NVFP4 (cuBLAS docs, 1D
//   block scaling factors layout) = PyTorch's SwizzleType::SWIZZLE_32_4_4
//   (torch._scaled_mm) = CUTLASS's Sm1xxBlockScaledBasicChunk::SfKMajorAtom
//   ((32, 4), (sf_vec, 4)) : ((16, 4), (0, 1)) read by tcgen05.mma
//   .block_scale = Transformer Engine's gemm_swizzled_scale_idx = torchao's
//   to_blocked -- one layout under five names.
//
// The grid is padded to whole tiles of 128 rows by 4 columns; tiles are
// stored row of tiles by row of tiles, 512 bytes each, and inside a tile the
// byte of (r, c) sits at (r % 32) * 16 + (r % 128 / 32) * 4 + c % 4:
//
//   index(r, c) = ((r / 128) * ceil(cols / 4) + c / 4) * 512
//               + (r % 32) * 16 + (r % 128 / 32) * 4 + c % 4
//
// Padding holds the byte `pad` (0 by default, as torchao pads: E8M0 2^-127,
// E4M3 +0). A padding row's products land in output rows that are cut off;
// a padding column is a block past K, whose elements must be zeros (or which
// the GEMM does not read) -- a NaN pad (E8M0 0xFF) would poison them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace lplab::kernels {

inline constexpr std::size_t kScaleTileRows = 128;  // 4 groups of 32 rows
inline constexpr std::size_t kScaleTileCols = 4;
inline constexpr std::size_t kScaleTileBytes = kScaleTileRows * kScaleTileCols;  // 512

// Bytes of the swizzled layout of a rows x cols grid: both padded up to
// whole tiles (0 x anything: 0).
constexpr std::size_t swizzled_scale_bytes(std::size_t rows, std::size_t cols) noexcept {
  const std::size_t tr = (rows + kScaleTileRows - 1) / kScaleTileRows;
  const std::size_t tc = (cols + kScaleTileCols - 1) / kScaleTileCols;
  return tr * tc * kScaleTileBytes;
}

// Where the scale of (r, c) of a grid `cols` wide lies in the swizzled layout.
constexpr std::size_t swizzled_scale_index(std::size_t r, std::size_t c, std::size_t cols) noexcept {
  const std::size_t tiles_per_row = (cols + kScaleTileCols - 1) / kScaleTileCols;
  return ((r / kScaleTileRows) * tiles_per_row + c / kScaleTileCols) * kScaleTileBytes + (r % 32) * 16 +
         (r % kScaleTileRows / 32) * 4 + c % kScaleTileCols;
}

// scales (rows x cols, row-major) into `out` (swizzled_scale_bytes(rows, cols)
// bytes), padding with `pad`. std::invalid_argument, before anything is
// written, where a span's size is not the grid's (or a size overflows);
// out may not overlap scales.
void swizzle_scales(std::span<const std::uint8_t> scales, std::size_t rows, std::size_t cols,
                    std::span<std::uint8_t> out, std::uint8_t pad = 0);

// The inverse: the grid's rows x cols codes out of a swizzled buffer (its
// padding ignored).
void unswizzle_scales(std::span<const std::uint8_t> swizzled, std::size_t rows, std::size_t cols,
                      std::span<std::uint8_t> out);

}  // namespace lplab::kernels
