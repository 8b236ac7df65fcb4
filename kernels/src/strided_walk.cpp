// The elementwise engine's walk (strided_walk.h): the walker's items, the
// copies of a tile between an operand's memory and a buffer, and an item's
// reading, rounding and writing through the bulk conversion.
#include "strided_walk.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "lplab/kernels/convert.h"


namespace lplab::kernels::detail {

void fail(const std::string& what) { throw std::invalid_argument("lplab::kernels::" + what); }

namespace {

constexpr std::size_t kTileCols = 64;  // a tile's width where the output steps through memory along a row (64 rows tall)
// Tiles per band of a matrix (Walker::item): 1024 columns of 64-wide tiles,
// 256 of line-wide float tiles.
constexpr std::size_t kBand = 16;

// Copies `count` codes of `bytes` bytes each between strided and contiguous
// memory; the element size is a template parameter so that each copy is one
// load and one store.
template <class Code>
void gather_as(const void* base, const std::ptrdiff_t* off, std::size_t count, void* out) {
  const auto* src = static_cast<const Code*>(base);
  auto* dst = static_cast<Code*>(out);
  for (std::size_t i = 0; i < count; ++i) dst[i] = src[off[i]];
}
template <class Code>
void scatter_as(const void* in, const std::ptrdiff_t* off, std::size_t count, void* base) {
  const auto* src = static_cast<const Code*>(in);
  auto* dst = static_cast<Code*>(base);
  for (std::size_t i = 0; i < count; ++i) dst[off[i]] = src[i];
}

}  // namespace

void gather(const void* base, std::size_t bytes, const std::ptrdiff_t* off, std::size_t count, void* out) {
  switch (bytes) {
    case 1: return gather_as<std::uint8_t>(base, off, count, out);
    case 2: return gather_as<std::uint16_t>(base, off, count, out);
    case 4: return gather_as<std::uint32_t>(base, off, count, out);
  }
  fail("elementwise: elements of " + std::to_string(bytes) + " bytes");
}
void scatter(const void* in, std::size_t bytes, const std::ptrdiff_t* off, std::size_t count, void* base) {
  switch (bytes) {
    case 1: return scatter_as<std::uint8_t>(in, off, count, base);
    case 2: return scatter_as<std::uint16_t>(in, off, count, base);
    case 4: return scatter_as<std::uint32_t>(in, off, count, base);
  }
  fail("elementwise: elements of " + std::to_string(bytes) + " bytes");
}

Walker::Walker(std::initializer_list<WalkOperand> operands, std::size_t start, std::size_t chunk)
    : op_(operands), chunk_(chunk) {
  const Layout& y = *op_[0].layout;
  n_ = y.numel();
  linear_ = std::all_of(op_.begin(), op_.end(), [](const WalkOperand& o) { return o.layout->is_contiguous(); });
  start_ = linear_ ? start : 0;
  if (linear_ || n_ == 0) {
    items_ = (n_ - start_ + chunk_ - 1) / chunk_;
    streams_ = n_ * op_[0].bytes >= linear_stream_from();
    return;
  }
  rank_ = y.rank();
  rows_ = rank_ >= 2 ? y.size(rank_ - 2) : 1;
  cols_ = y.size(rank_ - 1);
  auto along_rows = [&](const WalkOperand& o) { return o.layout->stride(rank_ - 1) == 1 || cols_ == 1; };
  if (std::all_of(op_.begin(), op_.end(), along_rows) || rows_ == 1) {
    tile_cols_ = std::min(cols_, chunk_);
  } else if (along_rows(op_[0])) {
    // Line-wide tiles (the class comment). Column 0's place in its line is
    // the same in every row and matrix when every stride of the output is a
    // whole number of lines; otherwise the lines fall where they may.
    const std::size_t bytes = op_[0].bytes;
    tile_cols_ = std::min(cols_, std::max<std::size_t>(1, kLine / bytes));
    const auto at = reinterpret_cast<std::uintptr_t>(op_[0].data);
    bool lined = at % bytes == 0;
    for (std::size_t d = 0; d + 1 < rank_; ++d)
      lined = lined && (static_cast<std::size_t>(y.stride(d)) * bytes) % kLine == 0;
    skew_ = lined && tile_cols_ * bytes == kLine ? at % kLine / bytes : 0;
    line_wide_ = true;
    streams_ = tile_cols_ * bytes == kLine && n_ * bytes >= kStreamFrom;
  } else {
    tile_cols_ = std::min(cols_, kTileCols);
  }
  tile_rows_ = std::max<std::size_t>(1, std::min(rows_, chunk_ / tile_cols_));
  tiles_r_ = (rows_ + tile_rows_ - 1) / tile_rows_;
  tiles_c_ = (skew_ + cols_ + tile_cols_ - 1) / tile_cols_;
  items_ = n_ / (rows_ * cols_) * tiles_r_ * tiles_c_;
}

void Walker::prefetch(const Item& it) const {
  if (it.rows == 1) return;
  for (std::size_t k = 0; k < op_.size(); ++k) {
    const Block& b = it.at[k];
    if (it.dense(k)) continue;
    const std::size_t bytes = op_[k].bytes, step = std::max<std::size_t>(1, kLine / bytes);
    const auto* base = static_cast<const char*>(op_[k].data);
    auto ask = [&](std::size_t r, std::size_t c) {
      __builtin_prefetch(base + (b.base + static_cast<std::ptrdiff_t>(c) * b.cs + static_cast<std::ptrdiff_t>(r) * b.rs) *
                                    static_cast<std::ptrdiff_t>(bytes));
    };
    if (b.cs > b.rs) {  // a transposed view: down each column
      for (std::size_t c = 0; c < it.cols; ++c)
        for (std::size_t r = 0; r < it.rows; r += step) ask(r, c);
    } else if (line_wide_ && k > 0 && b.cs == 1 && it.cols * bytes <= 4 * kLine) {
      // A line-wide tile of a row-major input (its elements up to 4 times
      // the output's): the lines of each row.
      for (std::size_t r = 0; r < it.rows; ++r) {
        for (std::size_t c = 0; c < it.cols; c += step) ask(r, c);
        ask(r, it.cols - 1);
      }
    }
  }
}

void Walker::item(std::size_t t, Item& it) const {
  if (linear_) {
    const std::size_t first = start_ + t * chunk_;
    it.first = first;
    it.rows = 1;
    it.cols = std::min(chunk_, n_ - first);
    it.row_step = it.cols;
    it.stream = streams_;
    for (std::size_t k = 0; k < op_.size(); ++k) it.at[k] = {static_cast<std::ptrdiff_t>(first), 0, 1};
    return;
  }
  const std::size_t per_matrix = tiles_r_ * tiles_c_;
  const std::size_t outer = t / per_matrix;
  // Within a matrix, bands of kBand tile columns (the last band narrower),
  // each walked row of tiles by row of tiles: a band's memory pages stay
  // in the TLB while the rows of tiles go by.
  std::size_t in_matrix = t % per_matrix, tr, tc;
  const std::size_t full_bands = tiles_c_ / kBand, in_full = full_bands * kBand * tiles_r_;
  if (in_matrix < in_full) {
    const std::size_t band = in_matrix / (kBand * tiles_r_);
    in_matrix %= kBand * tiles_r_;
    tr = in_matrix / kBand;
    tc = band * kBand + in_matrix % kBand;
  } else {
    const std::size_t width = tiles_c_ - full_bands * kBand;
    in_matrix -= in_full;
    tr = in_matrix / width;
    tc = full_bands * kBand + in_matrix % width;
  }
  // Tile column tc spans [tc * tile_cols_ - skew_, (tc + 1) * tile_cols_ - skew_) within [0, cols_).
  const std::size_t r0 = tr * tile_rows_, c0 = tc == 0 ? 0 : tc * tile_cols_ - skew_;
  it.rows = std::min(tile_rows_, rows_ - r0);
  it.cols = std::min((tc + 1) * tile_cols_ - skew_, cols_) - c0;
  it.row_step = cols_;
  it.first = (outer * rows_ + r0) * cols_ + c0;
  it.stream = streams_;
  for (std::size_t k = 0; k < op_.size(); ++k) {
    const Layout& l = *op_[k].layout;
    Block& b = it.at[k];
    b.rs = rank_ >= 2 ? l.stride(rank_ - 2) : 0;
    b.cs = l.stride(rank_ - 1);
    b.base = static_cast<std::ptrdiff_t>(r0) * b.rs + static_cast<std::ptrdiff_t>(c0) * b.cs;
    // The outer dimensions, last fastest.
    std::size_t rest = outer;
    for (std::size_t d = rank_ >= 2 ? rank_ - 2 : 0; d-- > 0;) {
      b.base += static_cast<std::ptrdiff_t>(rest % l.size(d)) * l.stride(d);
      rest /= l.size(d);
    }
  }
}

namespace {

// Copies an operand's tile between its memory and a buffer (row by row), in
// the order that walks memory: along a row where its elements are closer
// together than its rows, down the columns otherwise (a transposed view).
template <class Code, bool kToBuffer>
void copy_tile_as(const Block& b, std::size_t rows, std::size_t cols, Code* mem, Code* buf) {
  auto move = [](Code& from_mem, Code& in_buf) {
    if constexpr (kToBuffer) in_buf = from_mem;
    else from_mem = in_buf;
  };
  if (rows == 1 || b.rs == 0 || b.cs <= b.rs) {
    for (std::size_t r = 0; r < rows; ++r) {
      Code* m = mem + b.base + static_cast<std::ptrdiff_t>(r) * b.rs;
      Code* f = buf + r * cols;
      if (b.cs == 1) {
        if constexpr (kToBuffer) std::memcpy(f, m, cols * sizeof(Code));
        else std::memcpy(m, f, cols * sizeof(Code));
      } else {
        for (std::size_t c = 0; c < cols; ++c) move(m[static_cast<std::ptrdiff_t>(c) * b.cs], f[c]);
      }
    }
  } else {
    for (std::size_t c = 0; c < cols; ++c) {
      Code* m = mem + b.base + static_cast<std::ptrdiff_t>(c) * b.cs;
      for (std::size_t r = 0; r < rows; ++r) move(m[static_cast<std::ptrdiff_t>(r) * b.rs], buf[r * cols + c]);
    }
  }
}
template <bool kToBuffer>
void copy_tile(std::size_t bytes, const Block& b, std::size_t rows, std::size_t cols, const void* mem, void* buf) {
  auto* m = const_cast<void*>(mem);  // written only when !kToBuffer (the output)
  if (b.rs == 1 && b.cs > 1 && rows > 1 && (bytes == 1 || bytes == 2 || bytes == 4)) {
    // A transposed tile: memory row c holds the tile's column c.
    auto* at = static_cast<unsigned char*>(m) + b.base * static_cast<std::ptrdiff_t>(bytes);
    const auto width = static_cast<std::ptrdiff_t>(cols);
    if constexpr (kToBuffer) transpose_codes(bytes, at, b.cs, buf, width, cols, rows);
    else transpose_codes(bytes, buf, width, at, b.cs, rows, cols);
    return;
  }
  switch (bytes) {
    case 1: return copy_tile_as<std::uint8_t, kToBuffer>(b, rows, cols, static_cast<std::uint8_t*>(m), static_cast<std::uint8_t*>(buf));
    case 2: return copy_tile_as<std::uint16_t, kToBuffer>(b, rows, cols, static_cast<std::uint16_t*>(m), static_cast<std::uint16_t*>(buf));
    case 4: return copy_tile_as<std::uint32_t, kToBuffer>(b, rows, cols, static_cast<std::uint32_t*>(m), static_cast<std::uint32_t*>(buf));
  }
  fail("elementwise: elements of " + std::to_string(bytes) + " bytes");
}

}  // namespace

// (The item functions' contracts are in strided_walk.h.)
const void* item_codes(FormatId format, const void* data, std::size_t which, const Item& it, void* codes) {
  const std::size_t bytes = element_bytes(format);
  if (it.dense(which)) return static_cast<const unsigned char*>(data) + it.at[which].base * static_cast<std::ptrdiff_t>(bytes);
  copy_tile<true>(bytes, it.at[which], it.rows, it.cols, data, codes);
  return codes;
}
void* item_target(const Output& y, const Item& it, void* codes) {
  if (it.dense(0) && !it.stream)
    return static_cast<unsigned char*>(y.data) + it.at[0].base * static_cast<std::ptrdiff_t>(element_bytes(y.format));
  return codes;
}
void write_codes(const Output& y, const Item& it, const void* codes) {
  if (it.dense(0) && !it.stream) return;
  const std::size_t bytes = element_bytes(y.format);
  const Block& b = it.at[0];
  if (!it.stream || b.cs != 1) {
    copy_tile<false>(bytes, b, it.rows, it.cols, y.data, const_cast<void*>(codes));
    return;
  }
  const std::size_t width = it.cols * bytes;
  for (std::size_t r = 0; r < it.rows; ++r)
    stream_bytes(static_cast<unsigned char*>(y.data) + (b.base + static_cast<std::ptrdiff_t>(r) * b.rs) * static_cast<std::ptrdiff_t>(bytes),
                 static_cast<const unsigned char*>(codes) + r * width, width);
  // (for_items fences a thread's streamed lines once, after its last item.)
}

void read_item(const Operand& x, std::size_t which, const Item& it, float* out, std::vector<unsigned char>& codes) {
  if (x.format == FormatId::float32) {
    const void* in = item_codes(x.format, x.data, which, it, out);
    if (in != out) std::memcpy(out, in, it.count() * sizeof(float));
    return;
  }
  bulk_convert(FormatId::float32, x.format, item_codes(x.format, x.data, which, it, codes.data()), out, it.count(), {});
}

void encode_item(FormatId to, const float* in, void* out, const Item& it, const ElementwiseOptions& o,
                 std::size_t step) {
  ConvertOptions c{.round = o.round, .overflow = o.overflow, .seed = o.seed + step};
  if (o.round != Round::stochastic || it.rows == 1 || it.row_step == it.cols) {
    c.first_index = it.first;
    bulk_convert(to, FormatId::float32, in, out, it.count(), c);
    return;
  }
  const std::size_t bytes = element_bytes(to);
  for (std::size_t r = 0; r < it.rows; ++r) {
    c.first_index = it.first + r * it.row_step;
    bulk_convert(to, FormatId::float32, in + r * it.cols, static_cast<unsigned char*>(out) + r * it.cols * bytes,
                 it.cols, c);
  }
}

void write_item(const Output& y, const Item& it, const float* in, const ElementwiseOptions& o, std::size_t step,
                std::vector<unsigned char>& codes, bool quiet) {
  if (quiet && y.format == FormatId::float32 && o.overflow == Overflow::ieee) {
    // float -> float would change nothing: in is the output's codes.
    void* dst = item_target(y, it, const_cast<float*>(in));
    if (dst != in) std::memcpy(dst, in, it.count() * sizeof(float));
    write_codes(y, it, in);
    return;
  }
  void* dst = item_target(y, it, codes.data());
  encode_item(y.format, in, dst, it, o, step);
  write_codes(y, it, dst);
}
void write_item(const Output& y, const Item& it, const double* in, const ElementwiseOptions& o, std::size_t step,
                std::vector<unsigned char>& codes) {
  void* dst = item_target(y, it, codes.data());
  visit_format(y.format, [&](auto t) {
    using T = typename decltype(t)::type;
    T* out = static_cast<T*>(dst);
    for (std::size_t r = 0, i = 0; r < it.rows; ++r)
      for (std::size_t c = 0; c < it.cols; ++c, ++i) {
        const std::uint64_t index = it.first + r * it.row_step + c;
        const std::uint32_t bits = o.round == Round::stochastic ? stochastic_bits(o.seed + step, index) : 0;
        out[i] = lplab::convert<T>(in[i], o.round, o.overflow, nullptr, bits);
      }
  });
  write_codes(y, it, dst);
}

void round_through(FormatId format, float* x, const Item& it, const ElementwiseOptions& o, std::size_t step,
                   std::vector<unsigned char>& scratch) {
  // float -> float changes nothing under IEEE overflow; under saturate it
  // maps infinities to the largest float, as the final rounding would.
  if (format == FormatId::float32 && o.overflow == Overflow::ieee) return;
  encode_item(format, x, scratch.data(), it, o, step);
  bulk_convert(FormatId::float32, format, scratch.data(), x, it.count(), {});
}

}  // namespace lplab::kernels::detail
