// The elementwise engine's walk over strided operands (elementwise.cpp's
// steps 1 and 4): the output cut into numbered items -- runs of kChunk
// elements, or tiles of the last two dimensions -- each operand's tile
// gathered into a buffer of codes or exact floats, and the result rounded
// into the output's format and scattered back. The maps (elementwise.cpp)
// and the reductions (reductions.cpp) share it; it is private to the
// kernels (namespace detail).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/view.h"
#include "row_bands.h"
#include "streaming.h"

namespace lplab::kernels::detail {

constexpr std::size_t kChunk = 4096;  // elements per item: 8 KiB of floats, a binary op's three buffers in L1
constexpr std::size_t kPad = 64;      // the SIMD kernels run whole multiples of 64 floats
// Threads only pay off on large arrays: at least 256K elements each (as the conversion).
constexpr std::size_t kPerThread = std::size_t{1} << 18;

// std::invalid_argument("lplab::kernels::" + what).
[[noreturn]] void fail(const std::string& what);

inline std::size_t padded(std::size_t n) { return (n + kPad - 1) / kPad * kPad; }

// The element offsets of a layout in row-major index order, a run at a time
// (an odometer over the shape, as View::for_each).
class Cursor {
 public:
  explicit Cursor(const Layout& l) : l_(l), contiguous_(l.is_contiguous()) {}
  bool contiguous() const { return contiguous_; }
  std::ptrdiff_t position() const { return pos_; }  // row-major index of the next element (contiguous)
  void next(std::size_t count, std::ptrdiff_t* out) {
    if (contiguous_) {
      for (std::size_t i = 0; i < count; ++i) out[i] = pos_ + static_cast<std::ptrdiff_t>(i);
      pos_ += static_cast<std::ptrdiff_t>(count);
      return;
    }
    const std::size_t r = l_.rank();
    for (std::size_t i = 0; i < count; ++i) {
      out[i] = off_;
      for (std::size_t d = r; d-- > 0;) {
        off_ += l_.stride(d);
        if (++idx_[d] < l_.size(d)) break;
        off_ -= l_.stride(d) * static_cast<std::ptrdiff_t>(idx_[d]);
        idx_[d] = 0;
      }
    }
  }
  void skip(std::size_t count) { pos_ += static_cast<std::ptrdiff_t>(count); }

 private:
  const Layout& l_;
  bool contiguous_;
  std::ptrdiff_t pos_ = 0;
  std::ptrdiff_t off_ = 0;
  std::array<std::size_t, kMaxRank> idx_{};
};

// Copies `count` codes of `bytes` bytes (1, 2 or 4) each between strided
// offsets `off` of `base` and contiguous memory.
void gather(const void* base, std::size_t bytes, const std::ptrdiff_t* off, std::size_t count, void* out);
void scatter(const void* in, std::size_t bytes, const std::ptrdiff_t* off, std::size_t count, void* base);

// dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols,
// codes of `bytes` bytes (1, 2 or 4), strides in elements: the SIMD kernel
// TransposeCodes (elementwise-inl.h) on this thread's target, dispatched in
// elementwise.cpp, which compiles the engine's kernels.
void transpose_codes(std::size_t bytes, const void* src, std::ptrdiff_t src_stride, void* dst,
                     std::ptrdiff_t dst_stride, std::size_t rows, std::size_t cols);

// One operand's part of an item: tile element (r, c) is at offset
// base + r * rs + c * cs of the operand's data (in elements).
struct Block {
  std::ptrdiff_t base = 0, rs = 0, cs = 1;
};

// One unit of the engine's work: a tile of rows x cols elements of the
// output (rows x cols <= the walk's chunk), the same tile of every operand, and the
// row-major index of its element (r, c): first + r * row_step + c (what
// stochastic rounding's draws are indexed by). Buffers hold a tile row by row.
struct Item {
  std::uint64_t first = 0, row_step = 0;
  std::size_t rows = 0, cols = 0;
  std::array<Block, 3> at{};  // per layout of the walker: the output's, then the inputs'
  bool stream = false;        // write_codes streams the output's whole lines (line-wide tiles from kStreamFrom,
                              // contiguous walks from linear_stream_from())
  std::size_t count() const { return rows * cols; }
  // Whether operand k's tile lies in memory as the buffer does (no copy).
  bool dense(std::size_t k) const {
    return at[k].cs == 1 && (rows == 1 || at[k].rs == static_cast<std::ptrdiff_t>(cols));
  }
};

// One operand of a walk: its layout, its memory and its element size.
struct WalkOperand {
  const Layout* layout;
  const void* data;
  std::size_t bytes;
};

// Cuts the output into items, numbered so that any thread can take any range.
// When every operand is contiguous: runs of kChunk in row-major order.
// Otherwise tiles of the last two dimensions:
//  - whole rows where every operand runs along them;
//  - where some input steps through memory along a row (a transposed view)
//    and the output runs along its rows: tiles one cache line of the output
//    wide (16 floats, 32 two-byte or 64 one-byte codes) and chunk / that
//    tall, their columns cut at the output's line boundaries, so that each
//    row of a tile fills one line of the output, which write_codes streams
//    past the caches (Item::stream, from kStreamFrom bytes), and each column reads a long run of the
//    transposed input;
//  - otherwise (a transposed output) 64 x 64 tiles,
// so that a tile reads a few lines of every operand instead of a cache line
// and a page per element.
class Walker {
 public:
  // operands[0] is the output; all have its shape. Linear mode starts at
  // row-major index `start`. An item holds at most `chunk` elements.
  Walker(std::initializer_list<WalkOperand> operands, std::size_t start = 0, std::size_t chunk = kChunk);
  std::size_t items() const { return items_; }
  std::size_t chunk() const { return chunk_; }

  // Asks for the cache lines of an item's operands whose lines lie a page or
  // more apart, which the hardware prefetchers do not follow: those that
  // step through memory along its rows (a transposed view), and the
  // row-major inputs of a line-wide tile (a line of each row).
  void prefetch(const Item& it) const;

  // Item number t (t < items()).
  void item(std::size_t t, Item& it) const;

 private:
  std::vector<WalkOperand> op_;
  std::size_t n_ = 0, start_ = 0, items_ = 0, chunk_ = kChunk;
  bool linear_ = true, line_wide_ = false, streams_ = false;
  std::size_t rank_ = 0, rows_ = 1, cols_ = 1, tile_rows_ = 1, tile_cols_ = 1, tiles_r_ = 1, tiles_c_ = 1;
  // Columns of the first tile column short of tile_cols_: column 0 lies
  // that many elements past the start of an output line.
  std::size_t skew_ = 0;
};

// Operand `which` of an item as codes in buffer order: in place where the
// tile is dense, else copied into `codes`.
const void* item_codes(FormatId format, const void* data, std::size_t which, const Item& it, void* codes);
// Where the output's codes of an item go before write_codes: in place where
// the tile is dense, else `codes`.
void* item_target(const Output& y, const Item& it, void* codes);
// Copies the output's codes of an item from item_target's buffer into place
// (nothing where the tile is dense); where it.stream, its whole cache lines
// by streaming stores, past the caches.
void write_codes(const Output& y, const Item& it, const void* codes);

// Reads operand `x` (layout `which` of the walker) of an item as exact floats;
// a float operand's codes as they are, signalling NaNs included (every op
// quiets them, as does write_item's rounding).
void read_item(const Operand& x, std::size_t which, const Item& it, float* out, std::vector<unsigned char>& codes);

// Rounds an item's floats into `to` (stochastic draws by row-major index,
// step `step`), codes out in buffer order.
void encode_item(FormatId to, const float* in, void* out, const Item& it, const ElementwiseOptions& o,
                 std::size_t step);

// Writes an item of the output from floats (rounded by encode_item) or from
// doubles (Compute::fp64: one scalar conversion each). `quiet`: in holds no
// signalling NaN (an op made it), so that a float output under IEEE overflow
// takes in's codes as they are.
void write_item(const Output& y, const Item& it, const float* in, const ElementwiseOptions& o, std::size_t step,
                std::vector<unsigned char>& codes, bool quiet = false);
void write_item(const Output& y, const Item& it, const double* in, const ElementwiseOptions& o, std::size_t step,
                std::vector<unsigned char>& codes);

// Rounds an item's floats into `format` and back, in place (Compute::per_op
// between steps).
void round_through(FormatId format, float* x, const Item& it, const ElementwiseOptions& o, std::size_t step,
                   std::vector<unsigned char>& scratch);

// Runs body(item) over every item of `walk`, on options.threads threads for
// large arrays (each with the caller's SIMD target); body is given
// per-thread state by make_state().
template <class MakeState, class Body>
void for_items(const Walker& walk, std::size_t n, unsigned threads, MakeState make_state, Body body) {
  unsigned t = threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads;
  t = static_cast<unsigned>(std::min<std::size_t>(t, std::max<std::size_t>(1, n / kPerThread)));
  for_row_bands(walk.items(), t, [&](std::size_t first, std::size_t count) {
    auto state = make_state();
    Item it, next;
    if (count > 0) walk.item(first, next);
    for (std::size_t k = first; k < first + count; ++k) {
      it = next;
      if (k + 1 < first + count) {
        walk.item(k + 1, next);
        walk.prefetch(next);
      }
      body(it, state);
    }
    // The streamed lines ordered before any later store, the end of this
    // thread's share among them (its join): one fence for the share, not
    // one per item.
    if (count > 0 && it.stream) fence_streams();
  });
}

// Runs body(first, count) over [0, n) in chunks of kChunk (n a multiple of
// kPad), on threads as for_items.
template <class Body>
void for_chunks(std::size_t n, unsigned threads, Body body) {
  unsigned t = threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads;
  t = static_cast<unsigned>(std::min<std::size_t>(t, std::max<std::size_t>(1, n / kPerThread)));
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  for_row_bands(chunks, t, [&](std::size_t first, std::size_t count) {
    for (std::size_t k = first; k < first + count; ++k) body(k * kChunk, std::min(kChunk, n - k * kChunk));
  });
}

// Elements per item of a walk whose buffers hold codes alone (for_item_codes),
// the widest operand `bytes` wide: the bytes of kChunk floats.
constexpr std::size_t code_chunk(std::size_t bytes) { return kChunk * 4 / bytes; }

// for_items for the paths that work on codes: body(in, out, count) per item,
// in[k] operand k's codes (layout k + 1 of the walker) in buffer order, out
// where the output's codes go; afterwards they are written back where the
// output's tile is not dense.
template <class Body>
void for_item_codes(const Walker& walk, std::size_t n, unsigned threads, const Output& y,
                    std::initializer_list<const Operand*> inputs, Body body) {
  constexpr std::size_t kSlot = kChunk * 4;  // bytes of one operand's codes
  std::size_t widest = element_bytes(y.format);
  for (const Operand* x : inputs) widest = std::max(widest, element_bytes(x->format));
  if (walk.chunk() > code_chunk(widest)) fail("elementwise: items wider than their buffers");
  // (Buffers left uninitialised: a strided operand's item is gathered into
  // its slot before it is read, and a contiguous one never touches it --
  // zeroing 48 KiB cost a 16K-element fp16 add a fifth of its time.)
  using Buffer = std::unique_ptr<unsigned char[]>;
  for_items(walk, n, threads, [&] { return std::make_unique_for_overwrite<unsigned char[]>((inputs.size() + 1) * kSlot); },
            [&](const Item& it, Buffer& codes) {
              std::array<const void*, 2> in{};
              std::size_t k = 0;
              for (const Operand* x : inputs) {
                in[k] = item_codes(x->format, x->data, k + 1, it, codes.get() + k * kSlot);
                ++k;
              }
              void* out = item_target(y, it, codes.get() + k * kSlot);
              body(in, out, it.count());
              write_codes(y, it, out);
            });
}

}  // namespace lplab::kernels::detail
