// The elementwise engine's walk (kernels/src/strided_walk.h, private to the
// kernels) on its own: for every shape of walk -- contiguous runs, whole
// rows, line-wide tiles of a transposed input, 64 x 64 tiles of a
// transposed output -- each element of the output is in exactly one item,
// at the row-major index the item says (what stochastic rounding's draws
// are indexed by), with every operand's offset the one its layout gives;
// no item is larger than the walk's chunk; a line-wide walk's tiles after
// the first of a row of tiles begin on a cache line of the output wherever
// its rows are a whole number of lines apart, and it streams exactly when
// the output is a line-wide walk of kStreamFrom bytes or more, or a
// contiguous walk of linear_stream_from() bytes or more.
#include "strided_walk.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/targets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace lplab::kernels::detail {
namespace {

// A walk's output (operand 0) and one input, their layouts and data.
struct Walk {
  Layout out, in;
  std::uintptr_t out_at;  // the output's address (never dereferenced)
  std::size_t bytes;      // both operands' element size
  std::size_t chunk = kChunk;
};

// The offset of row-major element `index` of `l`.
std::ptrdiff_t offset_of(const Layout& l, std::uint64_t index) {
  std::ptrdiff_t off = 0;
  for (std::size_t d = l.rank(); d-- > 0;) {
    off += static_cast<std::ptrdiff_t>(index % l.size(d)) * l.stride(d);
    index /= l.size(d);
  }
  return off;
}

// Checks every item of the walk (and, with `elements`, every element of
// each); `items` (if given) is how many items it had.
void check_walk(const Walk& w, const std::string& what, bool elements = true, std::size_t* items = nullptr) {
  SCOPED_TRACE(what);
  const std::size_t n = w.out.numel(), rank = w.out.rank();
  const std::size_t cols = w.out.size(rank - 1);
  const Walker walk({{&w.out, reinterpret_cast<const void*>(w.out_at), w.bytes},
                     {&w.in, reinterpret_cast<const void*>(std::uintptr_t{4096}), w.bytes}},
                    0, w.chunk);
  // Line-wide tiles: the input transposed (steps through memory along a
  // row), the output along its rows.
  const bool line_wide = rank >= 2 && w.in.stride(rank - 1) != 1 && cols > 1 && w.out.stride(rank - 1) == 1 &&
                         w.out.size(rank - 2) > 1;
  const std::size_t per_line = kLine / w.bytes;
  bool lined = w.out_at % w.bytes == 0;
  for (std::size_t d = 0; d + 1 < rank; ++d)
    lined = lined && static_cast<std::size_t>(w.out.stride(d)) * w.bytes % kLine == 0;
  const bool full_lines = line_wide && cols >= per_line;
  const bool linear = w.out.is_contiguous() && w.in.is_contiguous();
  const bool want_stream = linear ? n * w.bytes >= linear_stream_from() : full_lines && n * w.bytes >= kStreamFrom;
  std::vector<unsigned char> seen(n, 0);
  Item it;
  for (std::size_t t = 0; t < walk.items(); ++t) {
    walk.item(t, it);
    EXPECT_LE(it.count(), walk.chunk()) << "item " << t;
    EXPECT_GT(it.count(), 0u) << "item " << t;
    EXPECT_EQ(it.stream, want_stream) << "item " << t;
    if (line_wide) {
      EXPECT_LE(it.cols, per_line) << "item " << t;
      EXPECT_EQ(it.at[0].cs, 1);
      // Where the rows are a whole number of lines apart, a tile that does
      // not start a row starts a line, and every tile ends at a line or at
      // the row's end.
      const std::uintptr_t begin = w.out_at + static_cast<std::uintptr_t>(it.at[0].base) * w.bytes;
      const std::size_t c0 = it.first % cols;
      if (lined && full_lines) {
        if (c0 != 0) {
          EXPECT_EQ(begin % kLine, 0u) << "item " << t << " (column " << c0 << ")";
        } else {
          EXPECT_EQ(it.cols, std::min(cols, per_line - w.out_at % kLine / w.bytes)) << "item " << t;
        }
        if (c0 + it.cols != cols) {
          EXPECT_EQ((begin + it.cols * w.bytes) % kLine, 0u) << "item " << t;
        }
      }
    }
    for (std::size_t r = 0; r < it.rows && elements; ++r)
      for (std::size_t c = 0; c < it.cols; ++c) {
        const std::uint64_t index = it.first + r * it.row_step + c;
        ASSERT_LT(index, n) << "item " << t;
        ASSERT_EQ(seen[index], 0) << "element " << index << " again in item " << t;
        seen[index] = 1;
        const auto rr = static_cast<std::ptrdiff_t>(r), cc = static_cast<std::ptrdiff_t>(c);
        ASSERT_EQ(it.at[0].base + rr * it.at[0].rs + cc * it.at[0].cs, offset_of(w.out, index)) << "item " << t;
        ASSERT_EQ(it.at[1].base + rr * it.at[1].rs + cc * it.at[1].cs, offset_of(w.in, index)) << "item " << t;
      }
  }
  std::size_t covered = 0;
  for (unsigned char s : seen) covered += s;
  if (elements) {
    EXPECT_EQ(covered, n);
  }
  if (items != nullptr) *items = walk.items();
}

// Row-major strides of `shape`, the last dimension's rows `pad` elements
// longer than they are wide.
Layout padded_rows(std::vector<std::size_t> shape, std::size_t pad) {
  std::vector<std::ptrdiff_t> strides(shape.size());
  std::ptrdiff_t s = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= static_cast<std::ptrdiff_t>(shape[d] + (d + 1 == shape.size() ? pad : 0));
  }
  return Layout(shape, strides);
}

// The transpose of a row-major cols x rows array: a rows x cols view.
Layout transposed(std::size_t rows, std::size_t cols) { return Layout({cols, rows}).transpose(0, 1); }

TEST(StridedWalk, contiguous_walks_are_runs_of_a_chunk) {
  const Layout a({3, 5000});
  std::size_t items = 0;
  check_walk({a, a, 0, 4}, "contiguous", true, &items);
  EXPECT_EQ(items, 4u);  // 15,000 in runs of 4096
  check_walk({a, a, 0, 1, 1000}, "contiguous, chunk 1000", true, &items);
  EXPECT_EQ(items, 15u);
}

TEST(StridedWalk, contiguous_walks_stream_from_the_threshold) {
  // The machine's threshold: at least kStreamFrom.
  EXPECT_GE(linear_stream_from(), kStreamFrom);
  // Lowered on this thread: a contiguous output of that many bytes streams,
  // one element less does not (check_walk's want_stream).
  const ScopedLinearStreamFrom lowered(std::size_t{1} << 20);
  EXPECT_EQ(linear_stream_from(), std::size_t{1} << 20);
  for (std::size_t bytes : {1, 2, 4}) {
    const std::size_t n = (std::size_t{1} << 20) / bytes;
    const Layout at({n}), below({n - 1});
    check_walk({at, at, 64, bytes}, std::to_string(bytes) + " bytes, streamed");
    check_walk({below, below, 64, bytes}, std::to_string(bytes) + " bytes, not streamed");
  }
}

TEST(StridedWalk, every_element_once_in_every_shape_of_walk) {
  for (std::size_t bytes : {1, 2, 4}) {
    const std::size_t T = kLine / bytes;
    const std::string b = std::to_string(bytes) + " bytes: ";
    for (std::uintptr_t at : {std::uintptr_t{1} << 20, (std::uintptr_t{1} << 20) + bytes,
                              (std::uintptr_t{1} << 20) + (T - 1) * bytes}) {
      const std::string a = b + "output at " + std::to_string(at % kLine) + ": ";
      // Line-wide tiles: rows a whole number of lines apart (the cut applies)
      // or not; a padded output; exactly one line, less than a line.
      check_walk({Layout({300, 8 * T}), transposed(300, 8 * T), at, bytes}, a + "lined rows");
      check_walk({Layout({301, 8 * T + 3}), transposed(301, 8 * T + 3), at, bytes}, a + "rows off the lines");
      check_walk({padded_rows({257, 5 * T + 1}, T - 1), transposed(257, 5 * T + 1), at, bytes},
                 a + "padded rows, lined");
      check_walk({Layout({130, T}), transposed(130, T), at, bytes}, a + "one line wide");
      check_walk({Layout({130, T / 2 + 1}), transposed(130, T / 2 + 1), at, bytes}, a + "narrower than a line");
      // Rank 3: the last two dimensions swapped in the input, matrices of
      // whole lines (lined) and not; a sliced middle dimension.
      check_walk({Layout({3, 70, 2 * T}), Layout({3, 2 * T, 70}).transpose(1, 2), at, bytes}, a + "rank 3, lined");
      check_walk({Layout({3, 70, 2 * T + 5}), Layout({3, 2 * T + 5, 70}).transpose(1, 2), at, bytes},
                 a + "rank 3, off the lines");
      check_walk({Layout({4, 33, 2 * T}), Layout({2 * T, 70, 4}).transpose(0, 2).slice(1, 1, 67, 2), at, bytes},
                 a + "rank 3, dims 0 and 2 swapped, sliced");
      // A small chunk: tiles of a few rows.
      check_walk({Layout({100, 3 * T}), transposed(100, 3 * T), at, bytes, 4 * T}, a + "chunk of 4 lines");
      // Streamed: an output of kStreamFrom bytes or more, lined and not
      // (its items alone: the elements of such walks are the cases above).
      const std::size_t big_rows = kStreamFrom / (16 * T * bytes) + 3;
      check_walk({Layout({big_rows, 16 * T}), transposed(big_rows, 16 * T), at, bytes}, a + "streamed, lined", false);
      check_walk({Layout({big_rows, 16 * T + 1}), transposed(big_rows, 16 * T + 1), at, bytes},
                 a + "streamed, off the lines", false);
      // Just below kStreamFrom: not streamed.
      check_walk({Layout({big_rows - 4, 16 * T}), transposed(big_rows - 4, 16 * T), at, bytes}, a + "not streamed",
                 false);
    }
    // Whole rows (every operand along its rows, the output padded) and
    // 64 x 64 tiles (the output transposed).
    check_walk({padded_rows({50, 1000}, 24), Layout({50, 1000}), 0, bytes}, b + "whole rows");
    check_walk({transposed(200, 150), Layout({200, 150}), 0, bytes}, b + "transposed output");
  }
}

// Streamed contiguous outputs through the engine's paths, the threshold
// lowered to 1 MiB on this thread: a one-byte input's table (relu on E4M3),
// the fused kernels (scale on bfloat16 and add on float16), the pair table
// (add on E4M3) and the general path (E4M3 -> bf16 cast with stochastic
// rounding), every output 0, 1 and 63 bytes past a 64-byte boundary, on
// one thread and two, on every target: each element as the scalar core
// gives it, and nothing outside the output written. (Under the sanitizers,
// which look for memory errors: the best target, offset 1, two threads.)
template <class X, class Y, class Op, class Want>
void check_streamed_contiguous(const char* what, Op op, Want want) {
  SCOPED_TRACE(what);
  const ScopedLinearStreamFrom lowered(std::size_t{1} << 20);
  const std::size_t n = (std::size_t{3} << 19) / sizeof(Y) + 77;  // 1.5 MiB and a tail
  std::vector<X> a(n), b(n);
  std::uint32_t s = 5;
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    a[i] = X(static_cast<float>(static_cast<int>(s >> 20) - 2048) / 64.0f);
    b[i] = X(static_cast<float>(static_cast<int>((s >> 8) & 4095) - 2048) / 128.0f);
  }
  std::vector<Y> expect(n);
  for (std::size_t i = 0; i < n; ++i) expect[i] = want(a[i], b[i], i);
#if defined(LPLAB_SANITIZED)
  const std::vector<SimdTarget> targets{simd_targets().front()};
  const std::vector<std::size_t> offsets{1};
  const std::vector<unsigned> thread_counts{2};
#else
  const std::vector<SimdTarget> targets = simd_targets();
  const std::vector<std::size_t> offsets{0, 1, 63};
  const std::vector<unsigned> thread_counts{1, 2};
#endif
  for (const SimdTarget& t : targets) {
    ScopedSimdTarget pin(t.id);
    for (std::size_t offset : offsets)
      for (unsigned threads : thread_counts) {
        std::vector<unsigned char> store(n * sizeof(Y) + 192, 0xA5);
        const std::size_t lead = (64 - reinterpret_cast<std::uintptr_t>(store.data()) % 64) % 64 + offset * sizeof(Y);
        Y* y = reinterpret_cast<Y*>(store.data() + lead);
        op(View<const X>(a.data(), {n}), View<const X>(b.data(), {n}), View<Y>(y, {n}),
           ElementwiseOptions{.threads = threads});
        for (std::size_t i = 0; i < n; ++i) {
          Y got;
          std::memcpy(&got, store.data() + lead + i * sizeof(Y), sizeof(Y));
          ASSERT_EQ(got.bits(), expect[i].bits()) << t.name << " offset " << offset << " threads " << threads
                                                  << " element " << i;
        }
        for (std::size_t i = 0; i < lead; ++i) ASSERT_EQ(store[i], 0xA5) << "byte " << i << " before the output";
        for (std::size_t i = lead + n * sizeof(Y); i < store.size(); ++i)
          ASSERT_EQ(store[i], 0xA5) << "byte " << i << " after the output";
      }
  }
}

TEST(StridedWalk, streamed_contiguous_outputs_equal_the_scalar_core) {
  using E4 = float8_e4m3fn;
  check_streamed_contiguous<E4, E4>(
      "relu, E4M3", [](auto x, auto, auto y, auto o) { relu(x, y, o); },
      [](E4 x, E4, std::size_t) { return lplab::convert<E4>(std::isnan(float(x)) ? float(x) : std::max(float(x), 0.0f)); });
  check_streamed_contiguous<bfloat16, bfloat16>(
      "scale, bf16", [](auto x, auto, auto y, auto o) { scale(x, -0.75f, y, o); },
      [](bfloat16 x, bfloat16, std::size_t) { return lplab::convert<bfloat16>(-0.75 * double(x)); });
  check_streamed_contiguous<float16, float16>(
      "add, fp16", [](auto x, auto z, auto y, auto o) { add(x, z, y, o); },
      [](float16 x, float16 z, std::size_t) { return lplab::convert<float16>(double(x) + double(z)); });
  check_streamed_contiguous<E4, E4>(
      "add, E4M3", [](auto x, auto z, auto y, auto o) { add(x, z, y, o); },
      [](E4 x, E4 z, std::size_t) { return lplab::convert<E4>(double(x) + double(z)); });
  check_streamed_contiguous<E4, bfloat16>(
      "cast E4M3 -> bf16, stochastic",
      [](auto x, auto, auto y, auto o) {
        o.round = Round::stochastic;
        o.seed = 3;
        cast(x, y, o);
      },
      [](E4 x, E4, std::size_t) { return lplab::convert<bfloat16>(float(x)); });
}

// Bulk conversions whose output reaches the threshold stream it
// (dispatch.cpp: a slice at a time through a buffer): with the threshold
// lowered to 1 MiB, each equals the same call unstreamed (the threshold out
// of reach) bit for bit, flag counts included, for float -> E4M3 with
// stochastic rounding and flags, E4M3 -> float, float -> bf16, bf16 -> float
// and E2M1 -> fp16 (the widening path), outputs 0, 1 and 63 elements past a
// 64-byte boundary, one thread and two; nothing outside the output written.
template <class X, class Y>
void check_streamed_bulk(const char* what, const ConvertOptions& base, bool flags) {
  SCOPED_TRACE(what);
  // 1.5 MiB of output and a tail past a slice, and at least 2^19 values, so
  // that two threads each take a share (bulk_convert: 2^18 values a thread).
  const std::size_t n = std::max((std::size_t{3} << 19) / sizeof(Y), std::size_t{1} << 19) + 4099;
  std::vector<X> in(n);
  std::uint32_t s = 11;
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    if constexpr (std::is_same_v<X, float>) in[i] = std::ldexp(static_cast<float>(static_cast<int>(s >> 8) - (1 << 23)), -22 - static_cast<int>(s % 13));
    else in[i] = X::from_bits(static_cast<typename X::storage_type>(s >> 16));
  }
  for (std::size_t offset : {0, 1, 63})
    for (unsigned threads : {1u, 2u}) {
      ConvertOptions o = base;
      o.threads = threads;
      std::vector<unsigned char> got(n * sizeof(Y) + 64 * sizeof(Y) + 128, 0xA5), want = got;
      const std::size_t lead = (64 - reinterpret_cast<std::uintptr_t>(got.data()) % 64) % 64 + offset * sizeof(Y);
      const std::size_t lead_w = (64 - reinterpret_cast<std::uintptr_t>(want.data()) % 64) % 64 + offset * sizeof(Y);
      FlagCounts fg, fw;
      {
        const ScopedLinearStreamFrom lowered(std::size_t{1} << 20);
        o.stats = flags ? &fg : nullptr;
        bulk_convert(lplab::kernels::format_id<Y>, lplab::kernels::format_id<X>, in.data(), got.data() + lead, n, o);
      }
      {
        const ScopedLinearStreamFrom never(~std::size_t{0});
        o.stats = flags ? &fw : nullptr;
        bulk_convert(lplab::kernels::format_id<Y>, lplab::kernels::format_id<X>, in.data(), want.data() + lead_w, n, o);
      }
      ASSERT_EQ(std::memcmp(got.data() + lead, want.data() + lead_w, n * sizeof(Y)), 0)
          << "offset " << offset << " threads " << threads;
      EXPECT_EQ(fg.inexact, fw.inexact);
      EXPECT_EQ(fg.overflow, fw.overflow);
      EXPECT_EQ(fg.underflow, fw.underflow);
      for (std::size_t i = 0; i < lead; ++i) ASSERT_EQ(got[i], 0xA5) << "byte " << i << " before the output";
      for (std::size_t i = lead + n * sizeof(Y); i < got.size(); ++i) ASSERT_EQ(got[i], 0xA5) << "byte " << i << " after";
    }
}

TEST(StridedWalk, streamed_bulk_conversions_equal_the_unstreamed) {
  const ConvertOptions rne{};
  check_streamed_bulk<float, float8_e4m3fn>("float -> E4M3, stochastic, flags",
                                            ConvertOptions{.round = Round::stochastic, .seed = 4}, true);
  check_streamed_bulk<float8_e4m3fn, float>("E4M3 -> float", rne, false);
  check_streamed_bulk<float, bfloat16>("float -> bf16 (AVX-512 BF16 where the CPU has it)", rne, false);
  check_streamed_bulk<bfloat16, float>("bf16 -> float", rne, false);
  check_streamed_bulk<float4_e2m1fn, float16>("E2M1 -> fp16", rne, false);
}

}  // namespace
}  // namespace lplab::kernels::detail
