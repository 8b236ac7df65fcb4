// Block and tensor scaling (scaling.h): the fast path. Per block, one pass for
// amax, one that scales the block into a float buffer, and the bulk SIMD
// conversion (convert.h) for whole buffers at a time.
#include "lplab/kernels/scaling.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "block_ops.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/cvt_rs.h"
#include "lplab/kernels/packed.h"
#include "lplab/kernels/plans.h"
#include "row_bands.h"

namespace lplab::kernels {
namespace {

using scale_rules::is_nonfinite;
using scale_rules::kFloatMax;
using scale_rules::kInfBits;

// Floats per conversion call: 4 KiB on the stack, and a multiple of every
// packing group so that packed chunks start on a byte boundary.
constexpr std::size_t kChunk = 1024;
// Threads only pay off on large tensors: at least 256K elements each (as the conversion).
constexpr std::size_t kPerThread = std::size_t{1} << 18;

// Largest |x| as bits (the vector kernel of block_ops.cpp; NaN bits where x
// holds a NaN, 0 for an empty x).
std::uint32_t abs_max_bits(const float* x, std::size_t n) noexcept {
  if (n == 0) return 0;
  std::uint32_t m;
  detail::block_abs_max_bits(x, n, n, &m);
  return m;
}

void fail(const std::string& what) { throw std::invalid_argument("lplab::kernels::" + what); }

// The powers of two of a pair's scale format, planned once: for each X in
// [x_min, x_max] the scale 2^X and the factor 2^-X (scale_rules.h).
template <class Elem, class Scale>
struct Pow2Table {
  using C = scale_rules::Constants<Elem, Scale>;
  struct Entry {
    Scale scale;
    float factor;
  };
  static constexpr auto table = [] {
    std::array<Entry, C::x_max - C::x_min + 1> t{};
    for (int x = C::x_min; x <= C::x_max; ++x) {
      Entry& e = t[static_cast<std::size_t>(x - C::x_min)];
      scale_rules::power_of_two_scale<Elem, Scale>(x, e.scale, e.factor);
    }
    return t;
  }();
};

// One block's scale and factor (scale_rules::block_scale), the power-of-two
// rules read from the table. Written through references: a small struct
// returned here was assembled byte by byte on the stack and read back whole,
// a store-forwarding stall per block that cost more than the block's
// conversion.
template <class Elem, class Scale>
void plan_block(const BlockScaling<Elem, Scale>& s, std::uint32_t amax_bits, float s_enc,
                Scale& scale, float& factor) noexcept {
  using T = Pow2Table<Elem, Scale>;
  if (!scale_rules::is_power_of_two_rule(s.rule) || is_nonfinite(amax_bits)) {
    scale_rules::block_scale<Elem, Scale>(s.rule, amax_bits, s_enc, scale, factor);
    return;
  }
  const int x = scale_rules::power_of_two_exponent<Elem, Scale>(s.rule, amax_bits);
  const auto& p = T::table[static_cast<std::size_t>(x - T::C::x_min)];
  scale = p.scale;
  factor = p.factor;
}

// The amax of len values as |x|'s bits, NaNs left out (CUDA's fmaxf, as
// TE's Float8BlockScaling reads it): the rules that keep non-finite elements
// (scale_rules::keeps_nonfinite) take it where the vector amax found a NaN.
std::uint32_t abs_max_bits_without_nan(const float* x, std::size_t len) noexcept {
  std::uint32_t m = 0;
  for (std::size_t i = 0; i < len; ++i) {
    const std::uint32_t a = std::bit_cast<std::uint32_t>(x[i]) & scale_rules::kMagMask;
    if (a <= scale_rules::kInfBits && a > m) m = a;
  }
  return m;
}

// Where quantize_runs and quantize_tiles hand their scaled values,
// `emit(values, first_index)`: called once a group or band (about kChunk
// values), so a call through a pointer costs nothing measurable, and the two
// bodies are compiled once a pair instead of once an emitter (converting,
// packing, stochastic rounding). Refers to an emitter the caller keeps alive.
class Emit {
 public:
  template <class F>
  Emit(F& f)  // NOLINT: an emitter converts implicitly, as a function_ref
      : context_(&f), call_([](void* c, std::span<const float> v, std::size_t first) {
          (*static_cast<F*>(c))(v, first);
        }) {}
  void operator()(std::span<const float> v, std::size_t first) const { call_(context_, v, first); }

 private:
  void* context_;
  void (*call_)(void*, std::span<const float>, std::size_t);
};

// The common body of quantize and quantize_packed, on a checked plan of the
// flat form's runs
// (plans.h): computes the scales and hands the scaled floats to
// `emit(values, first_index)`, a group of whole blocks at a time (about
// kChunk values; a multiple of 4 values, the largest packing group, except
// for the last group). Per group, one vector pass finds every block's amax,
// the scales are planned block by block, and one vector pass multiplies each
// block by its factor.
template <class Elem, class Scale>
void quantize_runs(const BlockPlan& p, const BlockScaling<Elem, Scale>& s, std::span<const float> x,
                   std::span<Scale> scales, float* tensor_scale, unsigned threads, Emit emit) {
  const std::size_t n = p.n, bs = p.block_size, blocks = p.blocks;
  const bool te = p.te(), keeps = scale_rules::keeps_nonfinite(p.rule);
  const TensorEncoding enc = tensor_encoding<Elem, Scale>(p, p.tensor_scale ? abs_max_bits(x.data(), n) : 0);
  const float s_enc = enc.s_enc;
  if (tensor_scale != nullptr) *tensor_scale = enc.stored;

  // Blocks per group: about kChunk values, rounded up so that a group holds a
  // multiple of 4 values (bs * group % 4 == 0).
  std::size_t group = std::max<std::size_t>(1, kChunk / bs);
  while ((group * bs) % 4 != 0) ++group;
  // Groups are independent: threads take bands of them (each with its own
  // buffers), for tensors of at least kPerThread elements a thread.
  const std::size_t groups = (blocks + group - 1) / group;
  unsigned t = threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads;
  t = static_cast<unsigned>(std::min<std::size_t>(t, std::max<std::size_t>(1, n / kPerThread)));
  detail::for_row_bands(groups, t, [&](std::size_t first_group, std::size_t count) {
    std::vector<std::uint32_t> amax(group);
    std::vector<float> factors(group);
    std::vector<float> buf(group * bs);
    for (std::size_t b0 = first_group * group; b0 < std::min(blocks, (first_group + count) * group); b0 += group) {
      const std::size_t nb = std::min(group, blocks - b0);
      const std::size_t first = b0 * bs;
      const std::size_t len = std::min(nb * bs, n - first);
      detail::block_abs_max_bits(x.data() + first, len, bs, amax.data());
      bool any_zero = false;
      for (std::size_t k = 0; k < nb; ++k) {
        if (keeps && amax[k] > scale_rules::kInfBits)
          amax[k] = abs_max_bits_without_nan(x.data() + first + k * bs, std::min(bs, len - k * bs));
        plan_block(s, amax[k], s_enc, scales[b0 + k], factors[k]);
        any_zero |= !keeps && is_nonfinite(amax[k]);
      }
      detail::scale_blocks(x.data() + first, len, bs, factors.data(), buf.data());
      if (te) {
        // TE's E2M1 table: a NaN (a poisoned tensor's every element) and -0
        // give the +0 code; an infinity saturates with the other elements.
        for (std::size_t i = 0; i < len; ++i)
          if (buf[i] == 0.0f || buf[i] != buf[i]) buf[i] = 0.0f;
      } else if (any_zero) {
        // A block with a NaN or an infinity: +0 elements (scaling.h).
        for (std::size_t k = 0; k < nb; ++k) {
          if (!is_nonfinite(amax[k])) continue;
          std::fill_n(buf.data() + k * bs, std::min(bs, len - k * bs), 0.0f);
        }
      }
      emit(std::span<const float>(buf.data(), len), first);
    }
  });
}

// The same for blocks of a matrix (plan.flat() false: blocks of several rows,
// or rows that end inside a block), a band of whole block rows at a time:
// 1. each block's amax, the largest of its row segments' (as bits, so that
//    NaN and infinity stay above every finite value);
// 2. its scale and factor, planned as quantize_runs plans a run's;
// 3. each row scaled by its blocks' factors into the band's buffer, the
//    non-finite blocks' elements made +0 (TE's order: -0 and NaN too);
// 4. the band handed to emit. A band holds g block rows with g * block_rows
//    * cols a multiple of 4, so that packed bands start on a byte boundary.
template <class Elem, class Scale>
void quantize_tiles(const BlockPlan& p, const BlockScaling<Elem, Scale>& s, std::span<const float> x,
                    std::span<Scale> scales, float* tensor_scale, unsigned threads, Emit emit) {
  const std::size_t n = p.n, cols = p.cols, bs = p.block_size, br = p.block_rows;
  const std::size_t across = p.across(), block_rows = p.blocks / across;
  const bool keeps = scale_rules::keeps_nonfinite(p.rule);
  const TensorEncoding enc = tensor_encoding<Elem, Scale>(p, p.tensor_scale ? abs_max_bits(x.data(), n) : 0);
  const float s_enc = enc.s_enc;
  if (tensor_scale != nullptr) *tensor_scale = enc.stored;
  const std::size_t band_len = br * cols;  // elements of one block row
  std::size_t g = std::max<std::size_t>(1, kChunk / band_len);
  while ((g * band_len) % 4 != 0) ++g;
  const std::size_t bands = (block_rows + g - 1) / g;
  unsigned t = threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads;
  t = static_cast<unsigned>(std::min<std::size_t>(t, std::max<std::size_t>(1, n / kPerThread)));
  auto row_len = [&](std::size_t r) { return std::min(cols, n - r * cols); };
  detail::for_row_bands(bands, t, [&](std::size_t first_band, std::size_t count) {
    std::vector<std::uint32_t> amax(across), segment(across);
    std::vector<float> factors(across);
    std::vector<float> buf(std::min(n, g * band_len));
    for (std::size_t band = first_band; band < first_band + count; ++band) {
      const std::size_t first = band * g * band_len, len = std::min(g * band_len, n - first);
      for (std::size_t R = band * g; R < std::min(block_rows, (band + 1) * g); ++R) {
        const std::size_t r0 = R * br, r1 = std::min(p.rows, r0 + br);
        // 1. The blocks' amaxes over their rows.
        std::fill(amax.begin(), amax.end(), 0u);
        for (std::size_t r = r0; r < r1; ++r) {
          const std::size_t m = row_len(r);
          const float* row = x.data() + r * cols;
          detail::block_abs_max_bits(row, m, bs, segment.data());
          for (std::size_t c = 0; c < (m + bs - 1) / bs; ++c) {
            if (keeps && segment[c] > scale_rules::kInfBits)
              segment[c] = abs_max_bits_without_nan(row + c * bs, std::min(bs, m - c * bs));
            amax[c] = std::max(amax[c], segment[c]);
          }
        }
        // 2. Scales and factors.
        bool any_nonfinite = false;
        for (std::size_t c = 0; c < across; ++c) {
          plan_block(s, amax[c], s_enc, scales[R * across + c], factors[c]);
          any_nonfinite |= !keeps && is_nonfinite(amax[c]);
        }
        // 3. The rows, scaled.
        for (std::size_t r = r0; r < r1; ++r) {
          const std::size_t m = row_len(r);
          float* out = buf.data() + (r * cols - first);
          detail::scale_blocks(x.data() + r * cols, m, bs, factors.data(), out);
          if (p.te()) {
            for (std::size_t i = 0; i < m; ++i)
              if (out[i] == 0.0f || out[i] != out[i]) out[i] = 0.0f;
          } else if (any_nonfinite) {
            for (std::size_t c = 0; c < across; ++c)
              if (is_nonfinite(amax[c]) && c * bs < m) std::fill_n(out + c * bs, std::min(bs, m - c * bs), 0.0f);
          }
        }
      }
      // 4. The band's values.
      emit(std::span<const float>(buf.data(), len), first);
    }
  });
}

// quantize_runs or quantize_tiles, as the plan's blocks lie.
template <class Elem, class Scale>
void quantize_plan(const BlockPlan& p, const BlockScaling<Elem, Scale>& s, std::span<const float> x,
                   std::span<Scale> scales, float* tensor_scale, unsigned threads, Emit emit) {
  if (p.flat())
    quantize_runs(p, s, x, scales, tensor_scale, threads, emit);
  else
    quantize_tiles(p, s, x, scales, tensor_scale, threads, emit);
}

// Multiplies each block of y (the widened elements) by its scale and divides
// by the tensor scale.
template <class Elem, class Scale>
void scale_blocks(const BlockScaling<Elem, Scale>& s, std::span<const Scale> scales,
                  std::span<float> y, float tensor_scale) {
  const std::size_t n = y.size();
  const auto bs = static_cast<std::size_t>(s.block_size);
  for (std::size_t b = 0; b < scales.size(); ++b) {
    float* block = y.data() + b * bs;
    const std::size_t len = std::min(bs, n - b * bs);
    const float sf = static_cast<float>(scales[b]);
    if (std::isnan(sf)) {
      std::fill_n(block, len, std::numeric_limits<float>::quiet_NaN());
    } else if (s.rule == ScaleRule::amax_ratio_te) {
      // TE's dequantization: (scale * amax) * (1 / (max_elem * max_scale)).
      // (TE's constant is 1.0 / (6.0 * 448.0) in double, rounded to float.)
      constexpr auto inverse =
          static_cast<float>(1.0 / static_cast<double>(scale_rules::Constants<Elem, Scale>::encode_numerator));
      const float final_scale = sf * tensor_scale * inverse;
      for (std::size_t i = 0; i < len; ++i) block[i] = block[i] * final_scale;
    } else if (s.tensor_scale) {
      for (std::size_t i = 0; i < len; ++i) block[i] = block[i] * sf / tensor_scale;
    } else {
      for (std::size_t i = 0; i < len; ++i) block[i] *= sf;
    }
  }
}

// The same for a matrix's blocks: row r's blocks are those of block row
// r / block_rows.
template <class Elem, class Scale>
void scale_matrix_blocks(const BlockPlan& p, const BlockScaling<Elem, Scale>& s, std::span<const Scale> scales,
                         std::span<float> y, float tensor_scale) {
  if (p.flat()) {
    scale_blocks(s, scales, y, tensor_scale);
    return;
  }
  const std::size_t across = p.across();
  for (std::size_t r = 0; r < p.rows; ++r) {
    const std::size_t m = std::min(p.cols, p.n - r * p.cols);
    scale_blocks(s, scales.subspan((r / p.block_rows) * across, (m + p.block_size - 1) / p.block_size),
                 y.subspan(r * p.cols, m), tensor_scale);
  }
}

void check_cols(const char* fn, std::size_t cols) {
  if (cols == 0) fail(std::string(fn) + ": cols must be at least 1");
}

// The elements' emitters of quantize and quantize_packed.
template <class Elem>
auto convert_into(std::span<Elem> elems) {
  return [elems](std::span<const float> v, std::size_t first) {
    kernels::convert(v, elems.subspan(first, v.size()), Round::nearest_even, Overflow::saturate);
  };
}
template <class Elem>
auto pack_into(std::span<std::uint8_t> bytes) {
  return [bytes](std::span<const float> v, std::size_t first) {
    thread_local std::vector<Elem> codes;  // one per worker
    codes.resize(v.size());
    const std::span<Elem> c(codes.data(), v.size());
    kernels::convert(v, c, Round::nearest_even, Overflow::saturate);
    // first is a multiple of 4, hence of the packing group.
    pack(std::span<const Elem>(c), bytes.subspan(packed_bytes<Elem>(first), packed_bytes<Elem>(v.size())));
  };
}

// Stochastic rounding's emitter: first is a multiple of 4, so the values'
// groups are the tensor's groups first / 4, first / 4 + 1, ...
template <class Elem>
auto round_stochastically_into(std::span<Elem> elems, const StochasticElements& r) {
  return [elems, r](std::span<const float> v, std::size_t first) {
    constexpr CvtRsForm form = CvtRsFormOf<Elem>::value;
    cvt_rs_bulk<form>(v.data(), v.size(), elems.data() + first, r.stream, r.seed, r.subsequence, *r.layout, false,
                      true, first / CvtRsFormTraits<form>::lanes);
  };
}

}  // namespace

template <BlockElement Elem, BlockScale Scale>
void quantize_stochastic(const BlockScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
                         std::span<std::type_identity_t<Elem>> elems, std::span<std::type_identity_t<Scale>> scales,
                         const StochasticElements& rounding, float* tensor_scale, unsigned threads) {
  check_cols("quantize_stochastic", cols);
  if (rounding.layout == nullptr) fail("quantize_stochastic: no rbits layout");
  if constexpr (CvtRsDestination<Elem>) {
    const BlockPlan p = detail::make_block_plan("quantize_stochastic", detail::shape_rule(s), x.size(), cols,
                                                {"elems", x.size(), elems.size()}, scales.size(), true,
                                                tensor_scale != nullptr);
    auto emit = round_stochastically_into<Elem>(elems, rounding);
    quantize_plan(p, s, x, scales, tensor_scale, threads, emit);
  } else {
    fail("quantize_stochastic: " + std::string(finfo<Elem>::name) + " has no cvt.rs form");
  }
}

template <BlockElement Elem, BlockScale Scale>
void quantize(const BlockScaling<Elem, Scale>& s, std::span<const float> x,
              std::span<std::type_identity_t<Elem>> elems,
              std::span<std::type_identity_t<Scale>> scales, float* tensor_scale, unsigned threads) {
  const BlockPlan p = plan_block_quantize(s, x.size(), elems.size(), scales.size(), tensor_scale);
  auto emit = convert_into<Elem>(elems);
  quantize_plan(p, s, x, scales, tensor_scale, threads, emit);
}

template <BlockElement Elem, BlockScale Scale>
void quantize(const BlockScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
              std::span<std::type_identity_t<Elem>> elems, std::span<std::type_identity_t<Scale>> scales,
              float* tensor_scale, unsigned threads) {
  check_cols("quantize", cols);
  const BlockPlan p = plan_block_quantize(s, x.size(), elems.size(), scales.size(), tensor_scale, cols);
  auto emit = convert_into<Elem>(elems);
  quantize_plan(p, s, x, scales, tensor_scale, threads, emit);
}

template <BlockElement Elem, BlockScale Scale>
void dequantize(const BlockScaling<Elem, Scale>& s,
                std::span<const std::type_identity_t<Elem>> elems,
                std::span<const std::type_identity_t<Scale>> scales, std::span<float> y,
                float tensor_scale) {
  plan_block_dequantize(s, elems.size(), scales.size(), y.size());
  kernels::convert(elems, y);
  scale_blocks(s, scales, y, tensor_scale);
}

template <BlockElement Elem, BlockScale Scale>
void dequantize(const BlockScaling<Elem, Scale>& s, std::span<const std::type_identity_t<Elem>> elems,
                std::size_t cols, std::span<const std::type_identity_t<Scale>> scales, std::span<float> y,
                float tensor_scale) {
  check_cols("dequantize", cols);
  const BlockPlan p = plan_block_dequantize(s, elems.size(), scales.size(), y.size(), cols);
  kernels::convert(elems, y);
  scale_matrix_blocks(p, s, scales, y, tensor_scale);
}

template <BlockElement Elem, BlockScale Scale>
  requires PackedFormat<Elem>
void quantize_packed(const BlockScaling<Elem, Scale>& s, std::span<const float> x,
                     std::span<std::uint8_t> bytes, std::span<std::type_identity_t<Scale>> scales,
                     float* tensor_scale, unsigned threads) {
  const BlockPlan p = plan_block_quantize_packed(s, x.size(), bytes.size(), scales.size(), tensor_scale);
  auto emit = pack_into<Elem>(bytes);
  quantize_plan(p, s, x, scales, tensor_scale, threads, emit);
}

template <BlockElement Elem, BlockScale Scale>
  requires PackedFormat<Elem>
void quantize_packed(const BlockScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
                     std::span<std::uint8_t> bytes, std::span<std::type_identity_t<Scale>> scales,
                     float* tensor_scale, unsigned threads) {
  check_cols("quantize_packed", cols);
  const BlockPlan p = plan_block_quantize_packed(s, x.size(), bytes.size(), scales.size(), tensor_scale, cols);
  auto emit = pack_into<Elem>(bytes);
  quantize_plan(p, s, x, scales, tensor_scale, threads, emit);
}

template <BlockElement Elem, BlockScale Scale>
  requires PackedFormat<Elem>
void dequantize_packed(const BlockScaling<Elem, Scale>& s, std::span<const std::uint8_t> bytes,
                       std::span<const std::type_identity_t<Scale>> scales, std::span<float> y,
                       float tensor_scale) {
  plan_block_dequantize_packed(s, y.size(), scales.size());
  kernels::dequantize_packed<Elem>(bytes, y);
  scale_blocks(s, scales, y, tensor_scale);
}

template <BlockElement Elem, BlockScale Scale>
  requires PackedFormat<Elem>
void dequantize_packed(const BlockScaling<Elem, Scale>& s, std::span<const std::uint8_t> bytes, std::size_t cols,
                       std::span<const std::type_identity_t<Scale>> scales, std::span<float> y,
                       float tensor_scale) {
  check_cols("dequantize_packed", cols);
  const BlockPlan p = plan_block_dequantize_packed(s, y.size(), scales.size(), cols);
  kernels::dequantize_packed<Elem>(bytes, y);
  scale_matrix_blocks(p, s, scales, y, tensor_scale);
}

template <BlockElement Elem, BlockScale Scale>
void row_scales(const BlockScaling<Elem, Scale>& s, std::size_t n, std::size_t cols,
                std::span<const std::type_identity_t<Scale>> scales, std::span<std::type_identity_t<Scale>> out) {
  check_cols("row_scales", cols);
  BlockScaling<Elem, Scale> one_row = s;
  one_row.block_rows = 1;
  const BlockPlan p = detail::make_block_plan("row_scales", detail::shape_rule(s), n, cols, {nullptr, 0, 0},
                                              scales.size(), false, false);
  const BlockPlan q = detail::make_block_plan("row_scales", detail::shape_rule(one_row), n, cols,
                                              {nullptr, 0, 0}, out.size(), false, false);
  const std::size_t across = p.across();
  for (std::size_t r = 0; r < q.rows; ++r)
    for (std::size_t c = 0; c < across; ++c) out[r * across + c] = scales[(r / p.block_rows) * across + c];
}

// ---------------------------------------------------------------------------
// Per-tensor scaling.

namespace {

// elem_i = convert<Elem>(x_i * scale, nearest_even, saturate), a chunk at a time.
template <class Elem>
void scale_and_convert(std::span<const float> x, std::span<Elem> out, float scale) {
  std::array<float, kChunk> buf;
  for (std::size_t i = 0; i < x.size(); i += kChunk) {
    const std::size_t m = std::min(kChunk, x.size() - i);
    for (std::size_t j = 0; j < m; ++j) buf[j] = x[i + j] * scale;
    kernels::convert(std::span<const float>(buf.data(), m), out.subspan(i, m), Round::nearest_even,
                     Overflow::saturate);
  }
}

}  // namespace

float amax(std::span<const float> x) noexcept {
  const std::uint32_t m = abs_max_bits(x.data(), x.size());
  return m > kInfBits ? std::numeric_limits<float>::quiet_NaN() : std::bit_cast<float>(m);
}

template <BlockElement Elem>
float tensor_scale_for(const TensorScaling<Elem>& s, float amax) noexcept {
  return scale_rules::tensor_scale<Elem>(amax, s.margin);
}

template <BlockElement Elem>
TensorScaleResult quantize(const TensorScaling<Elem>& s, std::span<const float> x,
                           std::span<std::type_identity_t<Elem>> out,
                           std::span<const float> history) {
  const TensorPlan p = plan_tensor_quantize(s, x.size(), out.size(), history);
  const float current = amax(x);
  const float scale = tensor_scale_for(s, p.amax(current));
  scale_and_convert(x, out, scale);
  return {scale, current};
}

template <BlockElement Elem>
float quantize_with_scale(std::span<const float> x, std::span<std::type_identity_t<Elem>> out, float scale) {
  detail::check_extent("quantize_with_scale", {"out", x.size(), out.size()});
  scale_and_convert(x, out, scale);
  return amax(x);
}

template <BlockElement Elem>
void dequantize(const TensorScaling<Elem>&, std::span<const std::type_identity_t<Elem>> elems,
                float scale, std::span<float> y) {
  plan_tensor_dequantize(elems.size(), y.size());
  kernels::convert(elems, y);
  for (float& v : y) v = v / scale;
}

// ---------------------------------------------------------------------------
// Delayed scaling.

template <BlockElement Elem>
DelayedScaler<Elem>::DelayedScaler(const DelayedScaling<Elem>& recipe) : recipe_(recipe) {
  if (recipe.history_len < 1) fail("DelayedScaler: history_len must be at least 1");
  if (recipe.amax == AmaxSource::current)
    fail("DelayedScaler: the amax comes from the history (history_max or history_most_recent)");
  history_.assign(static_cast<std::size_t>(recipe.history_len), 0.0f);
}

template <BlockElement Elem>
TensorScaleResult DelayedScaler<Elem>::step(std::span<const float> x, std::span<std::type_identity_t<Elem>> out) {
  const float used = scale_;
  const float current = quantize_with_scale<Elem>(x, out, used);
  history_[next_] = current;
  next_ = (next_ + 1) % history_.size();
  const float a = recipe_.amax == AmaxSource::history_max ? amax(history_) : current;
  // TE's _default_sf_compute: the new scale where a > 0 and finite, else the old one.
  if (a > 0.0f && std::isfinite(a)) scale_ = tensor_scale_for(TensorScaling<Elem>{.margin = recipe_.margin}, a);
  return {used, current};
}

// ---------------------------------------------------------------------------
// Fine-grained tile scaling.

namespace {

template <class Elem>
void check_tiles(const char* fn, const TileScaling<Elem>& s, std::size_t n, std::size_t cols, std::size_t elems,
                 std::size_t scales) {
  if (s.tile_rows < 1 || s.tile_cols < 1) fail(std::string(fn) + ": tiles must be at least 1 x 1");
  if (cols == 0) fail(std::string(fn) + ": cols must be at least 1");
  if (!(s.amax_floor >= 0.0f) || !std::isfinite(s.amax_floor))
    fail(std::string(fn) + ": amax_floor must be finite and not negative");
  detail::check_extent(fn, {"elems", n, elems});
  detail::check_extent(fn, {"scales", tile_scales_needed(s, n, cols), scales});
}

// Calls f(first, count) for each row segment of tile (R, C) of a matrix of
// n elements in rows of `cols`.
template <class F>
void for_tile_segments(std::size_t n, std::size_t cols, std::size_t r0, std::size_t r1, std::size_t c0,
                       std::size_t c1, F&& f) {
  for (std::size_t r = r0; r < r1; ++r) {
    const std::size_t first = r * cols + c0;
    if (first >= n) break;
    f(first, std::min(r * cols + c1, n) - first);
  }
}

}  // namespace

template <BlockElement Elem>
void quantize(const TileScaling<Elem>& s, std::span<const float> x, std::size_t cols,
              std::span<std::type_identity_t<Elem>> elems, std::span<float> scales) {
  const std::size_t n = x.size();
  check_tiles("quantize", s, n, cols, elems.size(), scales.size());
  if (n == 0) return;
  const std::size_t rows = (n + cols - 1) / cols;
  const auto tr = static_cast<std::size_t>(s.tile_rows), tc = static_cast<std::size_t>(s.tile_cols);
  const std::size_t tiles_across = (cols + tc - 1) / tc;
  constexpr float max_elem = static_cast<float>(finfo<Elem>::max);
  for (std::size_t tr0 = 0, R = 0; tr0 < rows; tr0 += tr, ++R) {
    for (std::size_t tc0 = 0, C = 0; tc0 < cols; tc0 += tc, ++C) {
      const std::size_t r1 = std::min(tr0 + tr, rows), c1 = std::min(tc0 + tc, cols);
      const auto each_segment = [&](auto&& f) { for_tile_segments(n, cols, tr0, r1, tc0, c1, f); };
      float& scale = scales[R * tiles_across + C];
      float factor;
      if (s.rule == TileRule::deepseek) {
        // 1. The tile's amax (as bits: NaN and infinity above every finite value).
        std::uint32_t amax_bits = 0;
        each_segment([&](std::size_t first, std::size_t count) {
          amax_bits = std::max(amax_bits, abs_max_bits(x.data() + first, count));
        });
        // 2. A tile with a NaN or an infinity: NaN scale, +0 elements.
        if (is_nonfinite(amax_bits)) {
          scale = std::numeric_limits<float>::quiet_NaN();
          each_segment([&](std::size_t first, std::size_t count) {
            std::fill_n(elems.begin() + static_cast<std::ptrdiff_t>(first), count, Elem::from_bits(0));
          });
          continue;
        }
        // 3. The floored amax, the factor and the scale, in float32.
        const float a = std::max(std::bit_cast<float>(amax_bits), s.amax_floor);
        factor = max_elem / a;
        scale = a / max_elem;
      } else {
        // TE: 1'. the amax without NaNs (fmaxf), floored; 3'. s and its inverse.
        float a = 0.0f;
        each_segment([&](std::size_t first, std::size_t count) {
          for (std::size_t i = first; i < first + count; ++i)
            if (!std::isnan(x[i])) a = std::max(a, std::fabs(x[i]));
        });
        if (a < s.amax_floor) a = s.amax_floor;
        factor = 1.0f;
        if (!(std::isinf(a) || a == 0.0f)) {
          factor = max_elem / a;
          if (std::isinf(factor)) factor = std::numeric_limits<float>::max();
          if (s.rule == TileRule::te_pow2)
            factor = std::bit_cast<float>(std::bit_cast<std::uint32_t>(factor) & 0xFF800000u);
        }
        scale = 1.0f / factor;
      }
      // 4. The elements: x * factor rounded by the bulk conversion.
      each_segment([&](std::size_t first, std::size_t count) {
        scale_and_convert(x.subspan(first, count), elems.subspan(first, count), factor);
      });
    }
  }
}

template <BlockElement Elem>
void dequantize(const TileScaling<Elem>& s, std::span<const std::type_identity_t<Elem>> elems, std::size_t cols,
                std::span<const float> scales, std::span<float> y) {
  const std::size_t n = elems.size();
  check_tiles("dequantize", s, n, cols, y.size(), scales.size());
  if (n == 0) return;
  kernels::convert(elems, y);
  const std::size_t rows = (n + cols - 1) / cols;
  const auto tr = static_cast<std::size_t>(s.tile_rows), tc = static_cast<std::size_t>(s.tile_cols);
  const std::size_t tiles_across = (cols + tc - 1) / tc;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols && r * cols + c < n; ++c)
      y[r * cols + c] *= scales[(r / tr) * tiles_across + c / tc];
}

// ---------------------------------------------------------------------------
// The library's instantiations, from the lists of scaling_formats.h: every
// pair of LPLAB_BLOCK_PAIRS (and its packed forms where its elements are
// packed), every element of LPLAB_SCALING_ELEMENTS.

#define LPLAB_SCALING_PAIR(E, S, storage)                                                                        \
  template void quantize(const BlockScaling<E, S>&, std::span<const float>, std::span<E>, std::span<S>, float*,  \
                         unsigned);                                                                              \
  template void quantize(const BlockScaling<E, S>&, std::span<const float>, std::size_t, std::span<E>,           \
                         std::span<S>, float*, unsigned);                                                        \
  template void dequantize(const BlockScaling<E, S>&, std::span<const E>, std::span<const S>, std::span<float>,  \
                           float);                                                                               \
  template void dequantize(const BlockScaling<E, S>&, std::span<const E>, std::size_t, std::span<const S>,       \
                           std::span<float>, float);                                                             \
  template void row_scales(const BlockScaling<E, S>&, std::size_t, std::size_t, std::span<const S>, std::span<S>); \
  template void quantize_stochastic(const BlockScaling<E, S>&, std::span<const float>, std::size_t, std::span<E>,  \
                                    std::span<S>, const StochasticElements&, float*, unsigned);                    \
  LPLAB_SCALING_PAIR_##storage(E, S)
#define LPLAB_SCALING_PAIR_bytes(E, S)
#define LPLAB_SCALING_PAIR_packed(E, S)                                                                          \
  template void quantize_packed(const BlockScaling<E, S>&, std::span<const float>, std::span<std::uint8_t>,      \
                                std::span<S>, float*, unsigned);                                                 \
  template void quantize_packed(const BlockScaling<E, S>&, std::span<const float>, std::size_t,                  \
                                std::span<std::uint8_t>, std::span<S>, float*, unsigned);                        \
  template void dequantize_packed(const BlockScaling<E, S>&, std::span<const std::uint8_t>, std::span<const S>,  \
                                  std::span<float>, float);                                                      \
  template void dequantize_packed(const BlockScaling<E, S>&, std::span<const std::uint8_t>, std::size_t,         \
                                  std::span<const S>, std::span<float>, float);
#define LPLAB_SCALING_ELEMENT(E)                                                                          \
  template float tensor_scale_for(const TensorScaling<E>&, float) noexcept;                               \
  template TensorScaleResult quantize(const TensorScaling<E>&, std::span<const float>,                    \
                                      std::span<E>, std::span<const float>);                              \
  template void dequantize(const TensorScaling<E>&, std::span<const E>, float, std::span<float>);         \
  template float quantize_with_scale<E>(std::span<const float>, std::span<E>, float);                     \
  template class DelayedScaler<E>;                                                                        \
  template void quantize(const TileScaling<E>&, std::span<const float>, std::size_t, std::span<E>,        \
                         std::span<float>);                                                               \
  template void dequantize(const TileScaling<E>&, std::span<const E>, std::size_t, std::span<const float>, \
                           std::span<float>);

LPLAB_BLOCK_PAIRS(LPLAB_SCALING_PAIR)
LPLAB_SCALING_ELEMENTS(LPLAB_SCALING_ELEMENT)

#undef LPLAB_SCALING_ELEMENT
#undef LPLAB_SCALING_PAIR_packed
#undef LPLAB_SCALING_PAIR_bytes
#undef LPLAB_SCALING_PAIR

}  // namespace lplab::kernels
