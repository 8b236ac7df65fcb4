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
  auto each = [&](auto f) HWY_ATTR {
    for (std::size_t i = 0; i < n; i += N) hn::StoreU(f(hn::LoadU(d, src + i)), d, dst + i);
  };
  auto quiet = [](auto v) HWY_ATTR { return hn::IfThenElse(hn::IsNaN(v), hn::Add(v, v), v); };
  switch (op) {
    case Unary::identity: each([&](auto v) HWY_ATTR { return quiet(v); }); return;
    case Unary::relu: {
      const auto zero = hn::Zero(d);
      each([&](auto v) HWY_ATTR { return hn::IfThenZeroElse(hn::Lt(v, zero), quiet(v)); });
      return;
    }
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
    case Unary::square: each([&](auto v) HWY_ATTR { return hn::Mul(v, v); }); return;
    case Unary::sqrt: each([&](auto v) HWY_ATTR { return hn::Sqrt(v); }); return;
    case Unary::rsqrt: {
      const auto one = hn::Set(d, 1.0f);
      each([&](auto v) HWY_ATTR { return hn::Div(one, hn::Sqrt(v)); });
      return;
    }
    case Unary::pow: ScalarLoop(ops::Pow{param}, src, dst, n); return;
    case Unary::scale: {
      const auto s = hn::Set(d, param);
      each([&](auto v) HWY_ATTR { return hn::Mul(s, v); });
      return;
    }
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
  (void)al;  // unused where axpy falls back to std::fma
  for (std::size_t i = 0; i < n; i += N) {
    const auto va = hn::LoadU(d, a + i), vb = hn::LoadU(d, b + i);
    switch (op) {
      case Binary::add: hn::StoreU(hn::Add(va, vb), d, out + i); break;
      case Binary::mul: hn::StoreU(hn::Mul(va, vb), d, out + i); break;
      // MulAdd is a fused multiply-add where the target has one
      // (HWY_NATIVE_FMA); elsewhere the functor's std::fma, one rounding too.
      case Binary::axpy:
#if HWY_NATIVE_FMA
        hn::StoreU(hn::MulAdd(al, va, vb), d, out + i);
#else
        for (std::size_t j = 0; j < N; ++j) out[i + j] = ops::Axpy{alpha}(a[i + j], b[i + j]);
#endif
        break;
    }
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
#include <stdexcept>
#include <string>
#include <vector>

#include "lplab/kernels/exact_sum.h"
#include "format_visit.h"

namespace lplab::kernels {

HWY_EXPORT(ApplyUnaryF32);
HWY_EXPORT(ApplyBinaryF32);

const char* unary_name(Unary op) {
  switch (op) {
    case Unary::identity: return "identity";
    case Unary::relu: return "relu";
    case Unary::gelu_tanh: return "gelu_tanh";
    case Unary::gelu_erf: return "gelu_erf";
    case Unary::square: return "square";
    case Unary::sqrt: return "sqrt";
    case Unary::rsqrt: return "rsqrt";
    case Unary::pow: return "pow";
    case Unary::scale: return "scale";
  }
  return "?";
}

const char* binary_name(Binary op) {
  switch (op) {
    case Binary::add: return "add";
    case Binary::mul: return "mul";
    case Binary::axpy: return "axpy";
  }
  return "?";
}

namespace detail {
namespace {

constexpr std::size_t kChunk = 4096;  // elements per pass: 16 KiB of floats, in L1
constexpr std::size_t kPad = 64;      // the SIMD kernels run whole multiples of 64 floats
constexpr std::size_t kMaxSteps = 16;

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

// One unit of the engine's work: at most kChunk elements of the output, as
// runs of consecutive row-major indices (what stochastic rounding's draws are
// indexed by), with every operand's element offsets in the same order — or,
// in linear mode (every operand contiguous), no offsets: one run, and each
// operand's elements are at its pointer + the run's first index.
struct Item {
  std::size_t count = 0;
  std::vector<std::pair<std::uint64_t, std::size_t>> runs;
  std::vector<std::vector<std::ptrdiff_t>> offsets;  // per layout; empty in linear mode
};

// Walks the output's elements. In linear mode in row-major order; otherwise
// in tiles of the last two dimensions (64 columns wide where some operand
// steps through memory along the last dimension, as a transposed view does;
// whole rows where all run along it), so that each tile touches few rows of
// memory of every operand instead of one cache line and one page per element.
class Walker {
 public:
  // layouts[0] is the output's; all have its shape. Linear mode starts at
  // row-major index `first`.
  Walker(std::vector<const Layout*> layouts, std::size_t first = 0) : l_(std::move(layouts)) {
    const Layout& y = *l_[0];
    n_ = y.numel();
    linear_ = std::all_of(l_.begin(), l_.end(), [](const Layout* l) { return l->is_contiguous(); });
    pos_ = linear_ ? first : 0;
    if (linear_ || n_ == 0) return;
    rank_ = y.rank();
    rows_ = rank_ >= 2 ? y.size(rank_ - 2) : 1;
    cols_ = y.size(rank_ - 1);
    const bool all_unit = std::all_of(l_.begin(), l_.end(),
                                      [&](const Layout* l) { return l->stride(rank_ - 1) == 1 || cols_ == 1; });
    tile_cols_ = std::min(cols_, all_unit ? kChunk : std::size_t{64});
    tile_rows_ = std::max<std::size_t>(1, std::min(rows_, kChunk / tile_cols_));
    base_.assign(l_.size(), 0);
  }
  bool linear() const { return linear_; }

  bool next(Item& it) {
    it.runs.clear();
    it.count = 0;
    if (linear_) {
      if (pos_ >= n_) return false;
      it.count = std::min(kChunk, n_ - pos_);
      it.runs.push_back({pos_, it.count});
      it.offsets.clear();
      pos_ += it.count;
      return true;
    }
    if (pos_ >= n_) return false;
    it.offsets.resize(l_.size());
    for (auto& o : it.offsets) o.resize(kChunk);
    // The tile [r0, r0 + tile_rows) x [c0, c0 + tile_cols) of matrix `outer_`.
    const std::size_t r_end = std::min(rows_, r0_ + tile_rows_), c_end = std::min(cols_, c0_ + tile_cols_);
    for (std::size_t r = r0_; r < r_end; ++r) {
      const std::uint64_t first = (outer_ * rows_ + r) * cols_ + c0_;
      if (!it.runs.empty() && it.runs.back().first + it.runs.back().second == first)
        it.runs.back().second += c_end - c0_;  // whole rows: one run
      else
        it.runs.push_back({first, c_end - c0_});
      for (std::size_t k = 0; k < l_.size(); ++k) {
        const std::ptrdiff_t sr = rank_ >= 2 ? l_[k]->stride(rank_ - 2) : 0, sc = l_[k]->stride(rank_ - 1);
        std::ptrdiff_t off = base_[k] + static_cast<std::ptrdiff_t>(r) * sr + static_cast<std::ptrdiff_t>(c0_) * sc;
        std::ptrdiff_t* o = it.offsets[k].data() + it.count;
        for (std::size_t c = c0_; c < c_end; ++c, off += sc) *o++ = off;
      }
      it.count += c_end - c0_;
    }
    pos_ += it.count;
    // The next tile, row of tiles, or matrix (an odometer over the outer dimensions).
    c0_ = c_end;
    if (c0_ == cols_) {
      c0_ = 0;
      r0_ = r_end;
      if (r0_ == rows_) {
        r0_ = 0;
        ++outer_;
        for (std::size_t d = rank_ >= 2 ? rank_ - 2 : 0; d-- > 0;) {
          for (std::size_t k = 0; k < l_.size(); ++k) base_[k] += l_[k]->stride(d);
          if (++idx_[d] < l_[0]->size(d)) break;
          for (std::size_t k = 0; k < l_.size(); ++k)
            base_[k] -= l_[k]->stride(d) * static_cast<std::ptrdiff_t>(idx_[d]);
          idx_[d] = 0;
        }
      }
    }
    return true;
  }

 private:
  std::vector<const Layout*> l_;
  std::size_t n_ = 0, pos_ = 0;
  bool linear_ = true;
  std::size_t rank_ = 0, rows_ = 1, cols_ = 1, tile_rows_ = 1, tile_cols_ = 1;
  std::size_t r0_ = 0, c0_ = 0, outer_ = 0;
  std::array<std::size_t, kMaxRank> idx_{};
  std::vector<std::ptrdiff_t> base_;
};

// Reads operand `x` (layout `which` of the walker) of an item as exact floats.
void read_item(const Operand& x, std::size_t which, const Item& it, float* out, std::vector<unsigned char>& codes) {
  const std::size_t bytes = element_bytes(x.format);
  const void* src;
  if (it.offsets.empty()) {
    src = static_cast<const unsigned char*>(x.data) + static_cast<std::ptrdiff_t>(it.runs[0].first * bytes);
  } else {
    gather(x.data, bytes, it.offsets[which].data(), it.count, codes.data());
    src = codes.data();
  }
  bulk_convert(FormatId::float32, x.format, src, out, it.count, {});
}

// Rounds an item's floats into `to` (stochastic draws by row-major index,
// step `step`), codes out in item order.
void encode_item(FormatId to, const float* in, void* out, const Item& it, const ElementwiseOptions& o,
                 std::size_t step) {
  ConvertOptions c{.round = o.round, .overflow = o.overflow, .seed = o.seed + step};
  if (o.round != Round::stochastic || it.runs.size() == 1) {
    c.first_index = it.runs[0].first;
    bulk_convert(to, FormatId::float32, in, out, it.count, c);
    return;
  }
  const std::size_t bytes = element_bytes(to);
  std::size_t done = 0;
  for (const auto& [first, len] : it.runs) {
    c.first_index = first;
    bulk_convert(to, FormatId::float32, in + done, static_cast<unsigned char*>(out) + done * bytes, len, c);
    done += len;
  }
}

// Writes an item of the output from floats (rounded by encode_item) or from
// doubles (Compute::fp64: one scalar conversion each).
void write_item(const Output& y, const Item& it, const float* in, const ElementwiseOptions& o, std::size_t step,
                std::vector<unsigned char>& codes) {
  const std::size_t bytes = element_bytes(y.format);
  if (it.offsets.empty()) {
    encode_item(y.format, in, static_cast<unsigned char*>(y.data) + static_cast<std::ptrdiff_t>(it.runs[0].first * bytes),
                it, o, step);
    return;
  }
  encode_item(y.format, in, codes.data(), it, o, step);
  scatter(codes.data(), bytes, it.offsets[0].data(), it.count, y.data);
}
void write_item(const Output& y, const Item& it, const double* in, const ElementwiseOptions& o, std::size_t step,
                std::vector<unsigned char>& codes) {
  const std::size_t bytes = element_bytes(y.format);
  void* dst = it.offsets.empty()
                  ? static_cast<unsigned char*>(y.data) + static_cast<std::ptrdiff_t>(it.runs[0].first * bytes)
                  : static_cast<void*>(codes.data());
  visit_format(y.format, [&](auto t) {
    using T = typename decltype(t)::type;
    T* out = static_cast<T*>(dst);
    std::size_t i = 0;
    for (const auto& [first, len] : it.runs)
      for (std::size_t e = 0; e < len; ++e, ++i) {
        const std::uint32_t bits = o.round == Round::stochastic ? stochastic_bits(o.seed + step, first + e) : 0;
        out[i] = lplab::convert<T>(in[i], o.round, o.overflow, nullptr, bits);
      }
  });
  if (!it.offsets.empty()) scatter(codes.data(), bytes, it.offsets[0].data(), it.count, y.data);
}

// Rounds an item's floats into `format` and back, in place (Compute::per_op
// between steps).
void round_through(FormatId format, float* x, const Item& it, const ElementwiseOptions& o, std::size_t step,
                   std::vector<unsigned char>& scratch) {
  // float -> float changes nothing under IEEE overflow; under saturate it
  // maps infinities to the largest float, as the final rounding would.
  if (format == FormatId::float32 && o.overflow == Overflow::ieee) return;
  encode_item(format, x, scratch.data(), it, o, step);
  bulk_convert(FormatId::float32, format, scratch.data(), x, it.count, {});
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

double apply_double(const Step& s, double x) {
  switch (s.op) {
    case Unary::identity: return x;
    case Unary::relu: return ops::Relu{}(x);
    case Unary::gelu_tanh: return ops::GeluTanh{}(x);
    case Unary::gelu_erf: return ops::GeluErf{}(x);
    case Unary::square: return ops::Square{}(x);
    case Unary::sqrt: return ops::Sqrt{}(x);
    case Unary::rsqrt: return ops::Rsqrt{}(x);
    case Unary::pow: return ops::Pow{s.param}(x);
    case Unary::scale: return ops::Scale{s.param}(x);
  }
  return x;
}

double apply_double(Binary op, float alpha, double a, double b) {
  switch (op) {
    case Binary::add: return ops::Add{}(a, b);
    case Binary::mul: return ops::Mul{}(a, b);
    case Binary::axpy: return ops::Axpy{alpha}(a, b);
  }
  return a;
}

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

void map_unary(std::span<const Step> chain, const Operand& x, const Output& y, const ElementwiseOptions& o) {
  check_options(o);
  if (chain.size() > kMaxSteps)
    fail("map: a chain of " + std::to_string(chain.size()) + " steps; at most 16");
  for (const Step& s : chain) check_step(s);
  check_shapes(x.layout, y.layout, "map");
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
    for (std::size_t first = 0; first < done; first += kChunk) {
      const std::size_t count = std::min(kChunk, done - first);
      apply(chain[0].op, chain[0].param, src + first, dst + first, count);
      for (std::size_t s = 1; s < chain.size(); ++s)
        apply(chain[s].op, chain[s].param, dst + first, dst + first, count);
    }
    if (done == n) return;
  }
  Walker walk({&y.layout, &x.layout}, done);
  Item it;
  std::vector<float> buf(padded(kChunk), 0.0f);
  std::vector<double> dbuf(o.compute == Compute::fp64 ? kChunk : 0);
  std::vector<unsigned char> codes(kChunk * 4), scratch(kChunk * 4);
  const std::size_t last = chain.empty() ? 0 : chain.size() - 1;
  while (walk.next(it)) {
    read_item(x, 1, it, buf.data(), codes);
    if (o.compute == Compute::fp64) {
      for (std::size_t i = 0; i < it.count; ++i) {
        double v = buf[i];
        for (const Step& s : chain) v = apply_double(s, v);
        dbuf[i] = v;
      }
      write_item(y, it, dbuf.data(), o, last, codes);
      continue;
    }
    for (std::size_t s = 0; s < chain.size(); ++s) {
      apply(chain[s].op, chain[s].param, buf.data(), buf.data(), padded(it.count));
      if (o.compute == Compute::per_op && s + 1 < chain.size()) round_through(y.format, buf.data(), it, o, s, scratch);
    }
    write_item(y, it, buf.data(), o, last, codes);
  }
}

void map_binary(Binary op, float alpha, const Operand& a, const Operand& b, const Output& y,
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
  const std::size_t n = y.layout.numel();
  const auto apply = LPLAB_DISPATCH(ApplyBinaryF32);
  // All float and contiguous, IEEE overflow: straight from a and b into y (as map_unary).
  std::size_t done = 0;
  if (a.format == FormatId::float32 && b.format == FormatId::float32 && y.format == FormatId::float32 &&
      o.compute != Compute::fp64 && o.overflow == Overflow::ieee && a.layout.is_contiguous() &&
      b.layout.is_contiguous() && y.layout.is_contiguous()) {
    done = n / kPad * kPad;
    apply(op, alpha, static_cast<const float*>(a.data), static_cast<const float*>(b.data),
          static_cast<float*>(y.data), done);
    if (done == n) return;
  }
  Walker walk({&y.layout, &a.layout, &b.layout}, done);
  Item it;
  std::vector<float> fa(padded(kChunk), 0.0f), fb(padded(kChunk), 0.0f), fc(padded(kChunk), 0.0f);
  std::vector<double> dbuf(o.compute == Compute::fp64 ? kChunk : 0);
  std::vector<unsigned char> codes(kChunk * 4);
  while (walk.next(it)) {
    read_item(a, 1, it, fa.data(), codes);
    read_item(b, 2, it, fb.data(), codes);
    if (o.compute == Compute::fp64) {
      for (std::size_t i = 0; i < it.count; ++i) dbuf[i] = apply_double(op, alpha, fa[i], fb[i]);
      write_item(y, it, dbuf.data(), o, 0, codes);
      continue;
    }
    apply(op, alpha, fa.data(), fb.data(), fc.data(), padded(it.count));
    write_item(y, it, fc.data(), o, 0, codes);
  }
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

}  // namespace detail
}  // namespace lplab::kernels
#endif  // HWY_ONCE
