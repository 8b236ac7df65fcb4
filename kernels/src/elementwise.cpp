// Elementwise ops and reductions (lplab/kernels/elementwise.h).
//
// The engine walks the output in row-major order, kChunk elements at a time:
//   1. gather each operand's codes (any strides) into a contiguous buffer;
//   2. decode them to float with the bulk conversion (exact);
//   3. apply the ops to the float buffer with the SIMD kernels below
//      (compiled once per Highway target, the same dispatch point as the
//      conversion), rounding into the output format between steps for
//      Compute::per_op (encode + decode through the bulk conversion);
//   4. encode into the output format with the caller's policy and scatter.
// Compute::fp64 replaces 3-4 by the ops::* functors in double and one
// scalar lplab::convert per element.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "elementwise.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernel_args.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/ops.h"
#include "ops-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// dst[i] = op(src[i]) for i in [0, n); dst may be src. n is a multiple of 64
// floats (the engine pads its buffers), so every target runs whole vectors
// and a tail is treated as the body is. Every op quiets a signalling NaN, as
// the conversions do (relu and identity by v + v on NaN lanes only, so that
// no other value passes through arithmetic a DAZ mode could flush).
template <class Op>
HWY_ATTR void ScalarLoop(Op op, const float* src, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = op(src[i]);
}

HWY_ATTR void ApplyUnaryF32(Unary op, float param, const float* src, float* dst, std::size_t n) {
  const hn::ScalableTag<float> d;
  const std::size_t N = hn::Lanes(d);
  HWY_ASSERT(64 % N == 0);  // vectors of at most 64 floats (SVE/RVV beyond that: not supported)
  const auto p = hn::Set(d, param);
  // (Pointers captured by value: a closure's references are reloaded after
  // every store that might alias them.)
  auto each = [d, N, src, dst, n](auto f) HWY_ATTR {
    for (std::size_t i = 0; i < n; i += N) hn::StoreU(f(hn::LoadU(d, src + i)), d, dst + i);
  };
  switch (op) {
    case Unary::identity: each([&](auto v) HWY_ATTR { return UnaryVector<Unary::identity>(d, v, p); }); return;
    case Unary::relu: each([&](auto v) HWY_ATTR { return UnaryVector<Unary::relu>(d, v, p); }); return;
    case Unary::gelu_tanh: {
      // ops::GeluTanh, operation for operation, with Highway's Tanh.
      const auto k0 = hn::Set(d, 0.79788456080286535587989211986876f);
      const auto k1 = hn::Set(d, 0.044715f);
      const auto half = hn::Set(d, 0.5f), one = hn::Set(d, 1.0f);
      each([&](auto v) HWY_ATTR {
        const auto u = hn::Mul(k0, hn::Add(v, hn::Mul(k1, hn::Mul(hn::Mul(v, v), v))));
        return hn::Mul(hn::Mul(half, v), hn::Add(one, hn::Tanh(d, u)));
      });
      return;
    }
    case Unary::gelu_erf: ScalarLoop(ops::GeluErf{}, src, dst, n); return;  // erff: no vector erf in Highway
    case Unary::square: each([&](auto v) HWY_ATTR { return UnaryVector<Unary::square>(d, v, p); }); return;
    case Unary::sqrt: each([&](auto v) HWY_ATTR { return UnaryVector<Unary::sqrt>(d, v, p); }); return;
    case Unary::rsqrt: each([&](auto v) HWY_ATTR { return UnaryVector<Unary::rsqrt>(d, v, p); }); return;
    case Unary::pow: ScalarLoop(ops::Pow{param}, src, dst, n); return;
    case Unary::scale: each([&](auto v) HWY_ATTR { return UnaryVector<Unary::scale>(d, v, p); }); return;
  }
}

// out = a op b on float buffers, n a multiple of 64.
// out may be a or b (an in-place add).
HWY_ATTR void ApplyBinaryF32(Binary op, float alpha, const float* a, const float* b, float* out,
                             std::size_t n) {
  const hn::ScalableTag<float> d;
  const std::size_t N = hn::Lanes(d);
  HWY_ASSERT(64 % N == 0);
  const auto al = hn::Set(d, alpha);
  auto each = [d, N, a, b, out, n](auto f) HWY_ATTR {
    for (std::size_t i = 0; i < n; i += N) hn::StoreU(f(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  };
  switch (op) {
    case Binary::add: each([&](auto va, auto vb) HWY_ATTR { return BinaryVector<Binary::add>(va, vb, al); }); return;
    case Binary::mul: each([&](auto va, auto vb) HWY_ATTR { return BinaryVector<Binary::mul>(va, vb, al); }); return;
    case Binary::axpy:
      // One rounding: a fused multiply-add where the target has one
      // (HWY_NATIVE_FMA); elsewhere the functor's std::fma.
      if constexpr (kVectorAxpy) {
        each([&](auto va, auto vb) HWY_ATTR { return BinaryVector<Binary::axpy>(va, vb, al); });
      } else {
        for (std::size_t i = 0; i < n; ++i) out[i] = ops::Axpy{alpha}(a[i], b[i]);
      }
      return;
  }
}

// out[i] = table[in[i]] for n bytes (in may be out): a 256-entry byte table
// as sixteen 16-entry tables, one byte shuffle each (pshufb on SSSE3/AVX2,
// vpshufb on AVX-512), kept where the code's high nibble selects it.
HWY_ATTR void LookupBytes(const std::uint8_t* HWY_RESTRICT table, const std::uint8_t* in, std::uint8_t* out,
                          std::size_t n) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t N = hn::Lanes(d);
  const auto low = hn::Set(d, 0x0F), high = hn::Set(d, 0xF0);
  for (; i + N <= n; i += N) {
    const auto x = hn::LoadU(d, in + i);
    const auto lo = hn::And(x, low), hi = hn::And(x, high);
    auto r = hn::TableLookupBytes(hn::LoadDup128(d, table), lo);
    for (unsigned k = 1; k < 16; ++k) {
      const auto part = hn::TableLookupBytes(hn::LoadDup128(d, table + 16 * k), lo);
      r = hn::IfThenElse(hn::Eq(hi, hn::Set(d, static_cast<std::uint8_t>(k << 4))), part, r);
    }
    hn::StoreU(r, d, out + i);
  }
#endif
  for (; i < n; ++i) out[i] = table[in[i]];
}

// out[i] = table[a[i] | b[i] << 8] for n bytes: a binary op on two one-byte
// operands as its 65,536-entry table (entries zero-extended to 32 bits,
// for the gather: vpgatherdd on AVX2 and AVX-512).
HWY_ATTR void LookupPairs(const std::uint32_t* HWY_RESTRICT table, const std::uint8_t* a, const std::uint8_t* b,
                          std::uint8_t* out, std::size_t n) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<std::int32_t> di;
  const hn::Rebind<std::uint8_t, decltype(di)> d8;
  const std::size_t N = hn::Lanes(di);
  const auto* t = reinterpret_cast<const std::int32_t*>(table);
  for (; i + N <= n; i += N) {
    const auto idx = hn::Or(hn::PromoteTo(di, hn::LoadU(d8, a + i)), hn::ShiftLeft<8>(hn::PromoteTo(di, hn::LoadU(d8, b + i))));
    hn::StoreU(hn::DemoteTo(d8, hn::GatherIndex(di, t, idx)), d8, out + i);
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<std::uint8_t>(table[a[i] | b[i] << 8]);
}

// dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols
// (strides in elements): a transposing copy, in blocks of 16 bytes by as many
// rows, each transposed in registers by log2(rows) rounds of interleaving
// row i with row i + L/2 (a perfect shuffle: each round rotates the bits of
// (row, column) by one, so that log2(L) rounds swap them).
template <class T>
HWY_ATTR void TransposeAs(const T* src, std::ptrdiff_t src_stride, T* dst, std::ptrdiff_t dst_stride,
                          std::size_t rows, std::size_t cols) {
  auto one = [&](std::size_t i, std::size_t j) { dst[static_cast<std::ptrdiff_t>(j) * dst_stride + static_cast<std::ptrdiff_t>(i)] = src[static_cast<std::ptrdiff_t>(i) * src_stride + static_cast<std::ptrdiff_t>(j)]; };
  std::size_t i0 = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::Full128<T> d;
  constexpr std::size_t L = 16 / sizeof(T);
  using V = hn::Vec<decltype(d)>;
  for (; i0 + L <= rows; i0 += L) {
    std::size_t j0 = 0;
    for (; j0 + L <= cols; j0 += L) {
      V v[L], t[L];
      for (std::size_t k = 0; k < L; ++k) v[k] = hn::LoadU(d, src + static_cast<std::ptrdiff_t>(i0 + k) * src_stride + static_cast<std::ptrdiff_t>(j0));
      for (std::size_t round = 1; round < L; round *= 2) {
        for (std::size_t k = 0; k < L / 2; ++k) {
          t[2 * k] = hn::InterleaveLower(d, v[k], v[k + L / 2]);
          t[2 * k + 1] = hn::InterleaveUpper(d, v[k], v[k + L / 2]);
        }
        for (std::size_t k = 0; k < L; ++k) v[k] = t[k];
      }
      for (std::size_t k = 0; k < L; ++k) hn::StoreU(v[k], d, dst + static_cast<std::ptrdiff_t>(j0 + k) * dst_stride + static_cast<std::ptrdiff_t>(i0));
    }
    for (std::size_t i = i0; i < i0 + L; ++i)
      for (std::size_t j = j0; j < cols; ++j) one(i, j);
  }
#endif
  for (std::size_t i = i0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) one(i, j);
}

HWY_ATTR void TransposeCodes(std::size_t bytes, const void* src, std::ptrdiff_t src_stride, void* dst,
                             std::ptrdiff_t dst_stride, std::size_t rows, std::size_t cols) {
  switch (bytes) {
    case 1: return TransposeAs(static_cast<const std::uint8_t*>(src), src_stride, static_cast<std::uint8_t*>(dst), dst_stride, rows, cols);
    case 2: return TransposeAs(static_cast<const std::uint16_t*>(src), src_stride, static_cast<std::uint16_t*>(dst), dst_stride, rows, cols);
    default: return TransposeAs(static_cast<const std::uint32_t*>(src), src_stride, static_cast<std::uint32_t*>(dst), dst_stride, rows, cols);
  }
}

}  // namespace lplab::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

#include "lplab/kernels/exact_sum.h"
#include "row_bands.h"

namespace lplab::kernels {

HWY_EXPORT(ApplyUnaryF32);
HWY_EXPORT(ApplyBinaryF32);
HWY_EXPORT(LookupBytes);
HWY_EXPORT(LookupPairs);
HWY_EXPORT(TransposeCodes);

using namespace detail;  // the kernels' private helpers (row_bands.h, fused.cpp, dispatch.cpp)

namespace {

constexpr std::size_t kChunk = 4096;  // elements per item: 8 KiB of floats, a binary op's three buffers in L1
constexpr std::size_t kPad = 64;      // the SIMD kernels run whole multiples of 64 floats
constexpr std::size_t kMaxSteps = 16;
constexpr std::size_t kTileCols = 64;  // a tile's width where an operand steps through memory along a row (64 rows tall)
// Tiles per band of a matrix (Walker::item): 1024 columns of 64-wide tiles.
constexpr std::size_t kBand = 16;
// Threads only pay off on large arrays: at least 256K elements each (as the conversion).
constexpr std::size_t kPerThread = std::size_t{1} << 18;
// A one-byte input's table (256 computed elements) pays off from this many
// elements, a binary op's on two one-byte inputs (65,536) from kPairTableFrom.
constexpr std::size_t kTableFrom = 4096;
constexpr std::size_t kPairTableFrom = std::size_t{1} << 19;

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("lplab::kernels::" + what); }

std::size_t padded(std::size_t n) { return (n + kPad - 1) / kPad * kPad; }

bool same_shape(const Layout& a, const Layout& b) {
  return std::equal(a.shape().begin(), a.shape().end(), b.shape().begin(), b.shape().end());
}

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

// One operand's part of an item: tile element (r, c) is at offset
// base + r * rs + c * cs of the operand's data (in elements).
struct Block {
  std::ptrdiff_t base = 0, rs = 0, cs = 1;
};

// One unit of the engine's work: a tile of rows x cols elements of the
// output (rows x cols <= kChunk), the same tile of every operand, and the
// row-major index of its element (r, c): first + r * row_step + c (what
// stochastic rounding's draws are indexed by). Buffers hold a tile row by row.
struct Item {
  std::uint64_t first = 0, row_step = 0;
  std::size_t rows = 0, cols = 0;
  std::array<Block, 3> at{};  // per layout of the walker: the output's, then the inputs'
  std::size_t count() const { return rows * cols; }
  // Whether operand k's tile lies in memory as the buffer does (no copy).
  bool dense(std::size_t k) const {
    return at[k].cs == 1 && (rows == 1 || at[k].rs == static_cast<std::ptrdiff_t>(cols));
  }
};

// Cuts the output into items, numbered so that any thread can take any range.
// When every operand is contiguous: runs of kChunk in row-major order.
// Otherwise tiles of the last two dimensions: 64 columns wide where some
// operand steps through memory along a row (a transposed view), so that a
// tile reads a few lines of every operand instead of a cache line and a page
// per element; whole rows where every operand runs along them.
class Walker {
 public:
  // layouts[0] is the output's; all have its shape. Linear mode starts at
  // row-major index `start`.
  Walker(std::initializer_list<const Layout*> layouts, std::size_t start = 0) : l_(layouts) {
    const Layout& y = *l_[0];
    n_ = y.numel();
    linear_ = std::all_of(l_.begin(), l_.end(), [](const Layout* l) { return l->is_contiguous(); });
    start_ = linear_ ? start : 0;
    if (linear_ || n_ == 0) {
      items_ = (n_ - start_ + kChunk - 1) / kChunk;
      return;
    }
    rank_ = y.rank();
    rows_ = rank_ >= 2 ? y.size(rank_ - 2) : 1;
    cols_ = y.size(rank_ - 1);
    const bool along_rows = std::all_of(l_.begin(), l_.end(), [&](const Layout* l) {
      return l->stride(rank_ - 1) == 1 || cols_ == 1;
    });
    tile_cols_ = std::min(cols_, along_rows || rows_ == 1 ? kChunk : kTileCols);
    tile_rows_ = std::max<std::size_t>(1, std::min(rows_, kChunk / tile_cols_));
    tiles_r_ = (rows_ + tile_rows_ - 1) / tile_rows_;
    tiles_c_ = (cols_ + tile_cols_ - 1) / tile_cols_;
    items_ = n_ / (rows_ * cols_) * tiles_r_ * tiles_c_;
  }
  std::size_t items() const { return items_; }

  // Asks for the cache lines of an item's operands that step through memory
  // along its rows (a transposed view): the hardware prefetchers follow the
  // others, not these, whose lines are a page apart.
  void prefetch(const Item& it) const {
    for (std::size_t k = 0; k < l_.size(); ++k) {
      const Block& b = it.at[k];
      if (it.dense(k) || b.cs <= b.rs || it.rows == 1) continue;
      const std::size_t step = std::max<std::size_t>(1, 64 / bytes_[k]);
      const auto* base = static_cast<const char*>(data_[k]);
      for (std::size_t c = 0; c < it.cols; ++c)
        for (std::size_t r = 0; r < it.rows; r += step)
          __builtin_prefetch(base + (b.base + static_cast<std::ptrdiff_t>(c) * b.cs +
                                     static_cast<std::ptrdiff_t>(r) * b.rs) * static_cast<std::ptrdiff_t>(bytes_[k]));
    }
  }
  // The operands' memory, for prefetch (layouts' order).
  void set_data(std::initializer_list<std::pair<const void*, std::size_t>> data) {
    std::size_t k = 0;
    for (const auto& [p, bytes] : data) {
      data_[k] = p;
      bytes_[k++] = bytes;
    }
  }

  void item(std::size_t t, Item& it) const {
    if (linear_) {
      const std::size_t first = start_ + t * kChunk;
      it.first = first;
      it.rows = 1;
      it.cols = std::min(kChunk, n_ - first);
      it.row_step = it.cols;
      for (std::size_t k = 0; k < l_.size(); ++k) it.at[k] = {static_cast<std::ptrdiff_t>(first), 0, 1};
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
    const std::size_t r0 = tr * tile_rows_, c0 = tc * tile_cols_;
    it.rows = std::min(tile_rows_, rows_ - r0);
    it.cols = std::min(tile_cols_, cols_ - c0);
    it.row_step = cols_;
    it.first = (outer * rows_ + r0) * cols_ + c0;
    for (std::size_t k = 0; k < l_.size(); ++k) {
      const Layout& l = *l_[k];
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

 private:
  std::vector<const Layout*> l_;
  std::size_t n_ = 0, start_ = 0, items_ = 0;
  bool linear_ = true;
  std::size_t rank_ = 0, rows_ = 1, cols_ = 1, tile_rows_ = 1, tile_cols_ = 1, tiles_r_ = 1, tiles_c_ = 1;
  std::array<const void*, 3> data_{};
  std::array<std::size_t, 3> bytes_{1, 1, 1};
};

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
    const auto transpose = LPLAB_DISPATCH(TransposeCodes);
    const auto width = static_cast<std::ptrdiff_t>(cols);
    if constexpr (kToBuffer) transpose(bytes, at, b.cs, buf, width, cols, rows);
    else transpose(bytes, buf, width, at, b.cs, rows, cols);
    return;
  }
  switch (bytes) {
    case 1: return copy_tile_as<std::uint8_t, kToBuffer>(b, rows, cols, static_cast<std::uint8_t*>(m), static_cast<std::uint8_t*>(buf));
    case 2: return copy_tile_as<std::uint16_t, kToBuffer>(b, rows, cols, static_cast<std::uint16_t*>(m), static_cast<std::uint16_t*>(buf));
    case 4: return copy_tile_as<std::uint32_t, kToBuffer>(b, rows, cols, static_cast<std::uint32_t*>(m), static_cast<std::uint32_t*>(buf));
  }
  fail("elementwise: elements of " + std::to_string(bytes) + " bytes");
}

// Operand `which` of an item as codes in buffer order: in place where the
// tile is dense, else copied into `codes`.
const void* item_codes(FormatId format, const void* data, std::size_t which, const Item& it, void* codes) {
  const std::size_t bytes = element_bytes(format);
  if (it.dense(which)) return static_cast<const unsigned char*>(data) + it.at[which].base * static_cast<std::ptrdiff_t>(bytes);
  copy_tile<true>(bytes, it.at[which], it.rows, it.cols, data, codes);
  return codes;
}
// Where the output's codes of an item go before write_codes: in place where
// the tile is dense, else `codes`.
void* item_target(const Output& y, const Item& it, void* codes) {
  if (it.dense(0)) return static_cast<unsigned char*>(y.data) + it.at[0].base * static_cast<std::ptrdiff_t>(element_bytes(y.format));
  return codes;
}
void write_codes(const Output& y, const Item& it, const void* codes) {
  if (!it.dense(0)) copy_tile<false>(element_bytes(y.format), it.at[0], it.rows, it.cols, y.data, const_cast<void*>(codes));
}

// Reads operand `x` (layout `which` of the walker) of an item as exact floats.
void read_item(const Operand& x, std::size_t which, const Item& it, float* out, std::vector<unsigned char>& codes) {
  bulk_convert(FormatId::float32, x.format, item_codes(x.format, x.data, which, it, codes.data()), out, it.count(), {});
}

// Rounds an item's floats into `to` (stochastic draws by row-major index,
// step `step`), codes out in buffer order.
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

// Writes an item of the output from floats (rounded by encode_item) or from
// doubles (Compute::fp64: one scalar conversion each).
void write_item(const Output& y, const Item& it, const float* in, const ElementwiseOptions& o, std::size_t step,
                std::vector<unsigned char>& codes) {
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

// Rounds an item's floats into `format` and back, in place (Compute::per_op
// between steps).
void round_through(FormatId format, float* x, const Item& it, const ElementwiseOptions& o, std::size_t step,
                   std::vector<unsigned char>& scratch) {
  // float -> float changes nothing under IEEE overflow; under saturate it
  // maps infinities to the largest float, as the final rounding would.
  if (format == FormatId::float32 && o.overflow == Overflow::ieee) return;
  encode_item(format, x, scratch.data(), it, o, step);
  bulk_convert(FormatId::float32, format, scratch.data(), x, it.count(), {});
}

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

// for_items for the paths that work on codes: body(in, out, count) per item,
// in[k] operand k's codes (layout k + 1 of the walker) in buffer order, out
// where the output's codes go; afterwards they are written back where the
// output's tile is not dense.
template <class Body>
void for_item_codes(const Walker& walk, std::size_t n, unsigned threads, const Output& y,
                    std::initializer_list<const Operand*> inputs, Body body) {
  constexpr std::size_t kSlot = kChunk * 4;  // bytes of one operand's codes
  for_items(walk, n, threads, [&] { return std::vector<unsigned char>((inputs.size() + 1) * kSlot); },
            [&](const Item& it, std::vector<unsigned char>& codes) {
              std::array<const void*, 2> in{};
              std::size_t k = 0;
              for (const Operand* x : inputs) {
                in[k] = item_codes(x->format, x->data, k + 1, it, codes.data() + k * kSlot);
                ++k;
              }
              void* out = item_target(y, it, codes.data() + k * kSlot);
              body(in, out, it.count());
              write_codes(y, it, out);
            });
}

// out[i] = table[a[i] | b[i] << 8] for codes of 2 or 4 bytes.
template <class Code>
void lookup_pairs_wide(const unsigned char* table, const std::uint8_t* a, const std::uint8_t* b, void* out,
                       std::size_t n) {
  const auto* t = reinterpret_cast<const Code*>(table);
  auto* o = static_cast<Code*>(out);
  for (std::size_t i = 0; i < n; ++i) o[i] = t[a[i] | b[i] << 8];
}

// out[i] = table[in[i]] for codes of 2 or 4 bytes.
template <class Code>
void lookup_wide(const unsigned char* table, const std::uint8_t* in, void* out, std::size_t n) {
  const auto* t = reinterpret_cast<const Code*>(table);
  auto* o = static_cast<Code*>(out);
  for (std::size_t i = 0; i < n; ++i) o[i] = t[in[i]];
}


// One strided operand read in row-major order, a chunk at a time (the
// reductions, whose fp32 and storage sums are defined in that order).
class Reader {
 public:
  explicit Reader(const Operand& x)
      : x_(x), bytes_(element_bytes(x.format)), cursor_(x.layout), codes_(kChunk * bytes_) {}
  void read(std::size_t count, float* out) {
    const void* codes;
    if (cursor_.contiguous()) {
      codes = static_cast<const unsigned char*>(x_.data) + cursor_.position() * static_cast<std::ptrdiff_t>(bytes_);
      cursor_.skip(count);
    } else {
      cursor_.next(count, offsets_.data());
      gather(x_.data, bytes_, offsets_.data(), count, codes_.data());
      codes = codes_.data();
    }
    bulk_convert(FormatId::float32, x_.format, codes, out, count, {});
  }

 private:
  const Operand& x_;
  std::size_t bytes_;
  Cursor cursor_;
  std::vector<unsigned char> codes_;
  std::array<std::ptrdiff_t, kChunk> offsets_{};
};

double apply_double(const Step& s, double x) { return apply_step(s.op, s.param, x); }
double apply_double(Binary op, float alpha, double a, double b) { return apply_binary(op, alpha, a, b); }

void check_options(const ElementwiseOptions& o) {
  switch (o.compute) {
    case Compute::per_op:
    case Compute::fused:
    case Compute::fp64: break;
    default: fail("elementwise: unknown compute policy " + std::to_string(static_cast<int>(o.compute)));
  }
  if (static_cast<unsigned>(o.round) > static_cast<unsigned>(Round::stochastic))
    fail("elementwise: unknown rounding " + std::to_string(static_cast<int>(o.round)));
  if (o.overflow != Overflow::ieee && o.overflow != Overflow::saturate)
    fail("elementwise: unknown overflow policy " + std::to_string(static_cast<int>(o.overflow)));
}

void check_step(const Step& s) {
  switch (s.op) {
    case Unary::identity:
    case Unary::relu:
    case Unary::gelu_tanh:
    case Unary::gelu_erf:
    case Unary::square:
    case Unary::sqrt:
    case Unary::rsqrt: return;
    case Unary::pow:
    case Unary::scale:
      if (std::isnan(s.param)) fail(std::string(unary_name(s.op)) + ": the parameter is NaN");
      return;
  }
  fail("map: unknown unary op " + std::to_string(static_cast<int>(s.op)));
}

void check_shapes(const Layout& x, const Layout& y, const char* what) {
  if (!same_shape(x, y))
    fail(std::string(what) + ": input of shape " + shape_text(x.shape()) + " but output of shape " +
         shape_text(y.shape()));
  // An output element written twice would leave the result to the visiting
  // order (torch refuses such outputs too).
  for (std::size_t d = 0; d < y.rank(); ++d)
    if (y.stride(d) == 0 && y.size(d) > 1)
      fail(std::string(what) + ": the output broadcasts (stride 0) dimension " + std::to_string(d) + " of size " +
           std::to_string(y.size(d)));
}

}  // namespace

void check_map_unary(std::span<const Step> chain, const Operand& x, const Output& y, const ElementwiseOptions& o) {
  check_options(o);
  if (chain.size() > kMaxSteps)
    fail("map: a chain of " + std::to_string(chain.size()) + " steps; at most 16");
  for (const Step& s : chain) check_step(s);
  check_shapes(x.layout, y.layout, "map");
}

void map_unary(std::span<const Step> chain, const Operand& x, const Output& y, const ElementwiseOptions& o) {
  check_map_unary(chain, x, y, o);
  const std::size_t n = y.layout.numel();
  const auto apply = LPLAB_DISPATCH(ApplyUnaryF32);
  // float in, float out, both contiguous, IEEE overflow (under which the
  // output conversion float -> float changes nothing but a signalling NaN,
  // which every op quiets): the ops read x and write y directly, whole
  // multiples of 64 elements; the rest goes through the engine below.
  std::size_t done = 0;
  if (x.format == FormatId::float32 && y.format == FormatId::float32 && o.compute != Compute::fp64 &&
      o.overflow == Overflow::ieee &&
      !chain.empty() && x.layout.is_contiguous() && y.layout.is_contiguous()) {
    const auto* src = static_cast<const float*>(x.data);
    auto* dst = static_cast<float*>(y.data);
    done = n / kPad * kPad;
    for_chunks(done, o.threads, [&](std::size_t first, std::size_t count) {
      apply(chain[0].op, chain[0].param, src + first, dst + first, count);
      for (std::size_t s = 1; s < chain.size(); ++s)
        apply(chain[s].op, chain[s].param, dst + first, dst + first, count);
    });
    if (done == n) return;
  }
  Walker walk({&y.layout, &x.layout}, done);
  walk.set_data({{y.data, element_bytes(y.format)}, {x.data, element_bytes(x.format)}});
  const std::size_t out_bytes = element_bytes(y.format);
  // A one-byte input under a rounding that draws nothing: y is a function of
  // x's code alone, so the engine below computes it once for each of the 256
  // codes and every element is a lookup in that table.
  if (element_bytes(x.format) == 1 && o.round != Round::stochastic && n - done >= kTableFrom) {
    std::array<std::uint8_t, 256> every_code;
    std::iota(every_code.begin(), every_code.end(), 0);
    std::vector<unsigned char> table(256 * out_bytes);
    const Layout all({std::size_t{256}});
    ElementwiseOptions one = o;
    one.threads = 1;
    map_unary(chain, {x.format, every_code.data(), all}, {y.format, table.data(), all}, one);
    const auto lookup = LPLAB_DISPATCH(LookupBytes);
    for_item_codes(walk, n - done, o.threads, y, {&x}, [&](const auto& in, void* out, std::size_t count) {
      const auto* codes = static_cast<const std::uint8_t*>(in[0]);
      switch (out_bytes) {
        case 1: lookup(table.data(), codes, static_cast<std::uint8_t*>(out), count); break;
        case 2: lookup_wide<std::uint16_t>(table.data(), codes, out, count); break;
        default: lookup_wide<std::uint32_t>(table.data(), codes, out, count); break;
      }
    });
    return;
  }
  // One correctly rounded step in bf16, fp16, E4M3 or E5M2, in and out, to
  // nearest-even: the fused kernels (fused.cpp), when they serve it.
  if (chain.size() == 1 && x.format == y.format && o.round == Round::nearest_even && o.compute != Compute::fp64) {
    FusedArgs f{.binary = false, .unary = chain[0].op, .binary_op = Binary::add, .param = chain[0].param,
                .a = nullptr, .b = nullptr, .out = nullptr, .n = 0, .overflow = o.overflow,
                .float_arithmetic_exact = float_arithmetic_exact()};
    if (fused_elementwise(y.format, f)) {
      for_item_codes(walk, n - done, o.threads, y, {&x}, [&](const auto& in, void* out, std::size_t count) {
        FusedArgs g = f;
        g.a = in[0];
        g.out = out;
        g.n = count;
        fused_elementwise(y.format, g);
      });
      return;
    }
  }
  struct State {
    std::vector<float> buf = std::vector<float>(padded(kChunk), 0.0f);
    std::vector<double> dbuf = std::vector<double>(kChunk);
    std::vector<unsigned char> codes = std::vector<unsigned char>(kChunk * 4), scratch = codes;
  };
  const std::size_t last = chain.empty() ? 0 : chain.size() - 1;
  for_items(walk, n - done, o.threads, [] { return State{}; }, [&](const Item& it, State& st) {
    read_item(x, 1, it, st.buf.data(), st.codes);
    if (o.compute == Compute::fp64) {
      for (std::size_t i = 0; i < it.count(); ++i) {
        double v = st.buf[i];
        for (const Step& s : chain) v = apply_double(s, v);
        st.dbuf[i] = v;
      }
      write_item(y, it, st.dbuf.data(), o, last, st.codes);
      return;
    }
    for (std::size_t s = 0; s < chain.size(); ++s) {
      apply(chain[s].op, chain[s].param, st.buf.data(), st.buf.data(), padded(it.count()));
      if (o.compute == Compute::per_op && s + 1 < chain.size())
        round_through(y.format, st.buf.data(), it, o, s, st.scratch);
    }
    write_item(y, it, st.buf.data(), o, last, st.codes);
  });
}

void check_map_binary(Binary op, float alpha, const Operand& a, const Operand& b, const Output& y,
                      const ElementwiseOptions& o) {
  check_options(o);
  switch (op) {
    case Binary::add:
    case Binary::mul: break;
    case Binary::axpy:
      if (std::isnan(alpha)) fail("axpy: alpha is NaN");
      break;
    default: fail("unknown binary op " + std::to_string(static_cast<int>(op)));
  }
  check_shapes(a.layout, y.layout, binary_name(op));
  check_shapes(b.layout, y.layout, binary_name(op));
}

void map_binary(Binary op, float alpha, const Operand& a, const Operand& b, const Output& y,
                const ElementwiseOptions& o) {
  check_map_binary(op, alpha, a, b, y, o);
  const std::size_t n = y.layout.numel();
  const auto apply = LPLAB_DISPATCH(ApplyBinaryF32);
  // All float and contiguous, IEEE overflow: straight from a and b into y (as map_unary).
  std::size_t done = 0;
  if (a.format == FormatId::float32 && b.format == FormatId::float32 && y.format == FormatId::float32 &&
      o.compute != Compute::fp64 && o.overflow == Overflow::ieee && a.layout.is_contiguous() &&
      b.layout.is_contiguous() && y.layout.is_contiguous()) {
    done = n / kPad * kPad;
    for_chunks(done, o.threads, [&](std::size_t first, std::size_t count) {
      apply(op, alpha, static_cast<const float*>(a.data) + first, static_cast<const float*>(b.data) + first,
            static_cast<float*>(y.data) + first, count);
    });
    if (done == n) return;
  }
  Walker walk({&y.layout, &a.layout, &b.layout}, done);
  walk.set_data({{y.data, element_bytes(y.format)}, {a.data, element_bytes(a.format)}, {b.data, element_bytes(b.format)}});
  // Two one-byte inputs under a rounding that draws nothing: y is a function
  // of the pair of codes, so the engine below computes all 65,536 pairs once
  // and every element is a lookup (a gather) in that table.
  const std::size_t out_bytes = element_bytes(y.format);
  if (element_bytes(a.format) == 1 && element_bytes(b.format) == 1 && o.round != Round::stochastic &&
      n - done >= kPairTableFrom) {
    std::vector<std::uint8_t> first(65536), second(65536);
    for (std::size_t i = 0; i < 65536; ++i) {
      first[i] = static_cast<std::uint8_t>(i);
      second[i] = static_cast<std::uint8_t>(i >> 8);
    }
    std::vector<unsigned char> table(65536 * out_bytes);
    const Layout all({std::size_t{65536}});
    ElementwiseOptions one = o;
    one.threads = 1;
    map_binary(op, alpha, {a.format, first.data(), all}, {b.format, second.data(), all}, {y.format, table.data(), all},
               one);
    std::vector<std::uint32_t> wide(out_bytes == 1 ? 65536 : 0);
    std::copy(table.begin(), table.begin() + static_cast<std::ptrdiff_t>(wide.size()), wide.begin());
    const auto lookup = LPLAB_DISPATCH(LookupPairs);
    for_item_codes(walk, n - done, o.threads, y, {&a, &b}, [&](const auto& in, void* out, std::size_t count) {
      const auto* ca = static_cast<const std::uint8_t*>(in[0]);
      const auto* cb = static_cast<const std::uint8_t*>(in[1]);
      switch (out_bytes) {
        case 1: lookup(wide.data(), ca, cb, static_cast<std::uint8_t*>(out), count); break;
        case 2: lookup_pairs_wide<std::uint16_t>(table.data(), ca, cb, out, count); break;
        default: lookup_pairs_wide<std::uint32_t>(table.data(), ca, cb, out, count); break;
      }
    });
    return;
  }
  // bf16, fp16, E4M3 or E5M2 throughout, to nearest-even: the fused kernels.
  if (a.format == y.format && b.format == y.format && o.round == Round::nearest_even && o.compute != Compute::fp64) {
    FusedArgs f{.binary = true, .unary = Unary::identity, .binary_op = op, .param = alpha, .a = nullptr,
                .b = nullptr, .out = nullptr, .n = 0, .overflow = o.overflow,
                .float_arithmetic_exact = float_arithmetic_exact()};
    if (fused_elementwise(y.format, f)) {
      for_item_codes(walk, n - done, o.threads, y, {&a, &b}, [&](const auto& in, void* out, std::size_t count) {
        FusedArgs g = f;
        g.a = in[0];
        g.b = in[1];
        g.out = out;
        g.n = count;
        fused_elementwise(y.format, g);
      });
      return;
    }
  }
  struct State {
    std::vector<float> fa = std::vector<float>(padded(kChunk), 0.0f), fb = fa, fc = fa;
    std::vector<double> dbuf = std::vector<double>(kChunk);
    std::vector<unsigned char> codes = std::vector<unsigned char>(kChunk * 4);
  };
  for_items(walk, n - done, o.threads, [] { return State{}; }, [&](const Item& it, State& st) {
    read_item(a, 1, it, st.fa.data(), st.codes);
    read_item(b, 2, it, st.fb.data(), st.codes);
    if (o.compute == Compute::fp64) {
      for (std::size_t i = 0; i < it.count(); ++i) st.dbuf[i] = apply_double(op, alpha, st.fa[i], st.fb[i]);
      write_item(y, it, st.dbuf.data(), o, 0, st.codes);
      return;
    }
    apply(op, alpha, st.fa.data(), st.fb.data(), st.fc.data(), padded(it.count()));
    write_item(y, it, st.fc.data(), o, 0, st.codes);
  });
}

void triu(const Operand& x, const Output& y, std::ptrdiff_t diagonal) {
  check_shapes(x.layout, y.layout, "triu");
  if (x.format != y.format) fail("triu: input and output formats differ");
  if (y.layout.rank() < 2) fail("triu: needs at least 2 dimensions, got " + shape_text(y.layout.shape()));
  if (y.format == FormatId::float8_e8m0fnu) fail("triu: float8_e8m0fnu has no zero");
  const std::size_t bytes = element_bytes(y.format);
  const std::size_t r = y.layout.rank();
  const std::size_t rows = y.layout.size(r - 2), cols = y.layout.size(r - 1);
  const std::size_t n = y.layout.numel();
  Cursor cx(x.layout), cy(y.layout);
  std::vector<std::ptrdiff_t> ox(kChunk), oy(kChunk);
  std::vector<unsigned char> codes(kChunk * bytes);
  const auto* src = static_cast<const unsigned char*>(x.data);
  auto* dst = static_cast<unsigned char*>(y.data);
  for (std::size_t first = 0; first < n; first += kChunk) {
    const std::size_t count = std::min(kChunk, n - first);
    cx.next(count, ox.data());
    cy.next(count, oy.data());
    // Gather all of the chunk first, so that y may be x itself.
    gather(src, bytes, ox.data(), count, codes.data());
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t e = first + i;
      const auto col = static_cast<std::ptrdiff_t>(e % cols);
      const auto row = static_cast<std::ptrdiff_t>(e / cols % rows);
      if (col - row < diagonal) std::memset(codes.data() + i * bytes, 0, bytes);  // +0 is code 0 in every format with a zero
    }
    scatter(codes.data(), bytes, oy.data(), count, dst);
  }
}

double reduce_sum(const Operand& x, Accumulate acc) {
  if (acc != Accumulate::fp64 && acc != Accumulate::fp32 && acc != Accumulate::storage)
    fail("sum: unknown accumulation " + std::to_string(static_cast<int>(acc)));
  const std::size_t n = x.layout.numel();
  Reader in(x);
  std::vector<float> buf(kChunk);
  double s64 = 0;
  float s32 = 0;
  double sst = 0;  // a value of the format
  const FormatId f = x.format;
  for (std::size_t first = 0; first < n; first += kChunk) {
    const std::size_t count = std::min(kChunk, n - first);
    in.read(count, buf.data());
    switch (acc) {
      case Accumulate::fp64:
        for (std::size_t i = 0; i < count; ++i) s64 += buf[i];
        break;
      case Accumulate::fp32:
        for (std::size_t i = 0; i < count; ++i) s32 += buf[i];
        break;
      case Accumulate::storage:
        visit_format(f, [&](auto t) {
          using T = typename decltype(t)::type;
          for (std::size_t i = 0; i < count; ++i)
            sst = narrow_add<T>(sst, buf[i]);
        });
        break;
    }
  }
  switch (acc) {
    case Accumulate::fp64: return s64;
    case Accumulate::fp32: return s32;
    case Accumulate::storage:
      // An empty sum is +0, which E8M0 cannot hold: its nearest-even rounding is NaN.
      return n == 0 ? round_to(f, 0.0) : sst;
  }
  fail("sum: unknown accumulation " + std::to_string(static_cast<int>(acc)));
}

double reduce_amax(const Operand& x) {
  const std::size_t n = x.layout.numel();
  Reader in(x);
  std::vector<float> buf(kChunk);
  float m = 0;
  bool nan = false;
  for (std::size_t first = 0; first < n; first += kChunk) {
    const std::size_t count = std::min(kChunk, n - first);
    in.read(count, buf.data());
    for (std::size_t i = 0; i < count; ++i) {
      nan |= std::isnan(buf[i]);
      m = std::max(m, std::fabs(buf[i]));
    }
  }
  return nan ? std::numeric_limits<double>::quiet_NaN() : m;
}

double round_to(FormatId format, double v) {
  return visit_format(format, [&](auto t) {
    using T = typename decltype(t)::type;
    return static_cast<double>(lplab::convert<T>(v, Round::nearest_even, Overflow::ieee));
  });
}

}  // namespace lplab::kernels
#endif  // HWY_ONCE
