// Elementwise ops and reductions (lplab/kernels/elementwise.h).
//
// The engine walks the output in row-major order, kChunk elements at a time:
//   1. gather each operand's codes (any strides) into a contiguous buffer;
//   2. decode them to float with the bulk conversion (exact);
//   3. apply the ops to the float buffer with the SIMD kernels
//      (elementwise-inl.h, compiled once per Highway target, the same
//      dispatch point as the conversion), rounding into the output format
//      between steps for Compute::per_op (encode + decode through the bulk
//      conversion);
//   4. encode into the output format with the caller's policy and scatter.
// Compute::fp64 replaces 3-4 by the ops::* functors in double and one
// scalar lplab::convert per element.
//
// This file: the maps and their checks (the steps per item, and the paths
// that skip them: float straight through, the one-byte tables, the fused
// kernels) and triu; it compiles the SIMD kernels (elementwise-inl.h) for
// every target and is their one dispatch point. The walk over strided
// operands and an item's reading and writing are strided_walk.h; the
// reductions are reductions.cpp.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "elementwise.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "elementwise-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "kernel_args.h"
#include "lplab/kernels/elementwise.h"
#include "strided_walk.h"

namespace lplab::kernels {

HWY_EXPORT(ApplyUnaryF32);
HWY_EXPORT(ApplyBinaryF32);
HWY_EXPORT(LookupBytes);
HWY_EXPORT(LookupPairs);
HWY_EXPORT(TransposeCodes);

using namespace detail;  // the kernels' private helpers (strided_walk.h, row_bands.h, fused.cpp, dispatch.cpp)

void detail::transpose_codes(std::size_t bytes, const void* src, std::ptrdiff_t src_stride, void* dst,
                             std::ptrdiff_t dst_stride, std::size_t rows, std::size_t cols) {
  LPLAB_DISPATCH(TransposeCodes)(bytes, src, src_stride, dst, dst_stride, rows, cols);
}

namespace {

constexpr std::size_t kMaxSteps = 16;
// A one-byte input's table (256 computed elements) pays off from this many
// elements, a binary op's on two one-byte inputs (65,536) from kPairTableFrom.
constexpr std::size_t kTableFrom = 4096;
constexpr std::size_t kPairTableFrom = std::size_t{1} << 19;

bool same_shape(const Layout& a, const Layout& b) {
  return std::equal(a.shape().begin(), a.shape().end(), b.shape().begin(), b.shape().end());
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
  if (enum_entry(s.op) == nullptr) fail("map: unknown unary op " + std::to_string(static_cast<int>(s.op)));
  if (takes_param(s.op) && std::isnan(s.param)) fail(std::string(unary_name(s.op)) + ": the parameter is NaN");
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
  const std::size_t out_bytes = element_bytes(y.format);
  // The walk of items of at most `chunk` elements (kChunk where buffers hold
  // floats; code_chunk where they hold codes alone).
  auto walker = [&](std::size_t chunk) {
    return Walker({{&y.layout, y.data, out_bytes}, {&x.layout, x.data, element_bytes(x.format)}}, done, chunk);
  };
  const std::size_t codes_chunk = code_chunk(std::max(out_bytes, element_bytes(x.format)));
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
    // (Chosen on the calling thread, whose target the workers run.)
    const auto lookup = detail::avx512_vbmi_active() ? &detail::lookup_bytes_vbmi : LPLAB_DISPATCH(LookupBytes);
    for_item_codes(walker(codes_chunk), n - done, o.threads, y, {&x}, [&](const auto& in, void* out, std::size_t count) {
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
                .float_arithmetic_exact = float_arithmetic_exact(), .avx512_fp16 = detail::avx512_fp16_active()};
    if (fused_elementwise(y.format, f)) {
      for_item_codes(walker(codes_chunk), n - done, o.threads, y, {&x}, [&](const auto& in, void* out, std::size_t count) {
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
  for_items(walker(kChunk), n - done, o.threads, [] { return State{}; }, [&](const Item& it, State& st) {
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
    write_item(y, it, st.buf.data(), o, last, st.codes, !chain.empty());
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
  const std::size_t out_bytes = element_bytes(y.format);
  // The walk of items of at most `chunk` elements (map_unary's).
  auto walker = [&](std::size_t chunk) {
    return Walker({{&y.layout, y.data, out_bytes},
                   {&a.layout, a.data, element_bytes(a.format)},
                   {&b.layout, b.data, element_bytes(b.format)}},
                  done, chunk);
  };
  const std::size_t codes_chunk =
      code_chunk(std::max({out_bytes, element_bytes(a.format), element_bytes(b.format)}));
  // Two one-byte inputs under a rounding that draws nothing: y is a function
  // of the pair of codes, so the engine below computes all 65,536 pairs once
  // and every element is a lookup (a gather) in that table.
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
    for_item_codes(walker(codes_chunk), n - done, o.threads, y, {&a, &b}, [&](const auto& in, void* out, std::size_t count) {
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
                .float_arithmetic_exact = float_arithmetic_exact(), .avx512_fp16 = detail::avx512_fp16_active()};
    if (fused_elementwise(y.format, f)) {
      for_item_codes(walker(codes_chunk), n - done, o.threads, y, {&a, &b}, [&](const auto& in, void* out, std::size_t count) {
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
  for_items(walker(kChunk), n - done, o.threads, [] { return State{}; }, [&](const Item& it, State& st) {
    read_item(a, 1, it, st.fa.data(), st.codes);
    read_item(b, 2, it, st.fb.data(), st.codes);
    if (o.compute == Compute::fp64) {
      for (std::size_t i = 0; i < it.count(); ++i) st.dbuf[i] = apply_double(op, alpha, st.fa[i], st.fb[i]);
      write_item(y, it, st.dbuf.data(), o, 0, st.codes);
      return;
    }
    apply(op, alpha, st.fa.data(), st.fb.data(), st.fc.data(), padded(it.count()));
    write_item(y, it, st.fc.data(), o, 0, st.codes, true);
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

}  // namespace lplab::kernels
#endif  // HWY_ONCE
