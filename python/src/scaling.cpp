// Scaling (kernels/scaling.h): block schemes (MX, NVFP4, any element/scale
// pair the library compiles), per-tensor FP8 scaling and DeepSeek-V3 tiles.
// Inputs are float32; blocks are runs of block_size consecutive elements in
// row-major order, as the C++ API takes a span.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <fmt/format.h>

#include "arrays.h"
#include "lplab/runtime/recipes.h"
#include "lplab/runtime/text.h"
#include "lplab/kernels/cvt_rs.h"
#include "lplab/kernels/four_over_six.h"
#include "lplab/kernels/hadamard.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/recipes.h"
#include "lplab/kernels/scale_layout.h"
#include "lplab/kernels/scaling.h"

namespace lplab::python {

namespace {

// f(type_identity<Elem>, type_identity<Scale>) for a compiled pair.
template <class F>
nb::object visit_block(const std::string& elem, const std::string& scale, F&& f) {
  const FormatEntry& e = format_named(elem);
  const FormatEntry& s = format_named(scale);
  if (e.declared != nullptr || s.declared != nullptr)
    value_error("block scaling takes compiled formats (not declared layouts)");
  return runtime::visit_format(e, [&]<class E>(std::type_identity<E>) -> nb::object {
    return runtime::visit_format(s, [&]<class S>(std::type_identity<S>) -> nb::object {
      if constexpr (kernels::BlockPair<E, S>) {
        return f(std::type_identity<E>{}, std::type_identity<S>{});
      } else {
        value_error(fmt::format("no block scaling of {} elements with {} scales: the pairs are {}", e.name, s.name,
                                kernels::block_pairs_text()));
      }
    });
  });
}

template <class F>
nb::object visit_element(const std::string& elem, F&& f) {
  const FormatEntry& e = format_named(elem);
  if (e.declared != nullptr) value_error("scaling takes compiled formats (not declared layouts)");
  return runtime::visit_format(e, [&]<class E>(std::type_identity<E>) -> nb::object {
    if constexpr (kernels::BlockElement<E>) {
      return f(std::type_identity<E>{});
    } else {
      value_error(fmt::format("{} is not an element format of scaling ({})", e.name,
                              kernels::scaling_elements_text()));
    }
  });
}

template <class E, class S>
kernels::BlockScaling<E, S> scheme(int block_size, const std::string& rule, bool tensor_scale, int block_rows = 1) {
  if (block_size < 1) value_error(fmt::format("block_size {}: must be at least 1", block_size));
  if (block_rows < 1) value_error(fmt::format("block_rows {}: must be at least 1", block_rows));
  return {.block_size = block_size,
          .block_rows = block_rows,
          .rule = runtime::parse<kernels::ScaleRule>(rule),
          .tensor_scale = tensor_scale};
}

// The row length of a matrix call (0: the flat form): the last dimension of
// the shape where blocks span rows or where asked for.
std::size_t matrix_cols(const std::vector<std::size_t>& shape, int block_rows, bool rows) {
  if (block_rows == 1 && !rows) return 0;
  if (shape.size() < 2)
    value_error(fmt::format("blocks of {} rows need a matrix (2 or more dimensions; the last is a row), not {}",
                            block_rows, shape.size()));
  return shape.back();
}

}  // namespace

ScaledOperand scaled_operand(const InArray& elems, const InArray& scales, const std::string& elem,
                             const std::string& scale, int block_size, const std::string& rule, bool tensor_scale,
                             float tensor_scale_value, const char* what, int block_rows) {
  ScaledOperand out;
  visit_block(elem, scale, [&]<class E, class S>(std::type_identity<E>, std::type_identity<S>) {
    const auto s = scheme<E, S>(block_size, rule, tensor_scale, block_rows);
    const Operand e = operand(elems, name_of<E>(), what);
    if (e.shape.size() != 2)
      value_error(fmt::format("{}: a block-scaled matrix (2 dimensions: rows x k, K-major), not {}", what,
                              e.shape.size()));
    out.rows = e.shape[0];
    out.k = e.shape[1];
    const std::span<const E> q = codes_input<E>(elems, what, e.size);
    // One scale per block of block_rows x block_size, row-major over blocks
    // (k a multiple of the block size; check_block_scaled says so otherwise).
    const std::size_t blocks = block_size > 0 && out.k % static_cast<std::size_t>(block_size) == 0
                                   ? kernels::scales_needed(s, e.size, out.k)
                                   : kernels::scales_needed(s, e.size);
    const std::span<const S> sc = codes_input<S>(scales, what, blocks);
    kernels::check_block_scaled(out.rows, out.k, block_size, q.data(), sc.data(), tensor_scale_value, what,
                                s.rule == kernels::ScaleRule::amax_ratio_te, block_rows);
    const kernels::BlockScaledOperand<E, S> op{s, q.data(), sc.data(), tensor_scale_value};
    out.elems = kernels::decode_operand(q.data(), q.size());
    // Each row's 1 x block_size slices' scales, as the instruction reads them.
    const std::vector<S> slices = kernels::slice_scales(op, out.rows, out.k);
    out.scales = kernels::decode_operand(slices.data(), slices.size());
    out.values = kernels::dequantize_operand(op, out.rows, out.k);
    out.elem_range = kernels::operand_range<E>();
    out.scaled_range = kernels::scaled_range<E>();
    out.block_size = block_size;
    out.scale_format = S::descriptor.name.c_str();
    out.te = s.rule == kernels::ScaleRule::amax_ratio_te;
    out.encode_numerator = static_cast<double>(kernels::scale_rules::Constants<E, S>::encode_numerator);
    out.tensor_scale = tensor_scale_value;
    return nb::object();
  });
  return out;
}

namespace {

// The rbits layout called `name` (cvt_rs.h), or ValueError naming the known ones.
const kernels::RbitsLayout& rbits_layout(const std::string& name) {
  const kernels::RbitsLayout* l = kernels::rbits_layout_named(name);
  if (l == nullptr) {
    std::string known;
    for (const kernels::RbitsLayout* k : kernels::kRbitsLayouts) known.append(known.empty() ? "" : ", ").append(k->name);
    value_error(fmt::format("layout: one of {}, not '{}'", known, name));
  }
  return *l;
}

void bind_block_scaling(nb::module_& m) {
  m.def("block_schemes",
        []() {
          nb::dict d;
#define LPLAB_PY_SCHEME(name, ...)                                                                                 \
  {                                                                                                            \
    using S = std::remove_cvref_t<decltype(kernels::name)>;                                                    \
    d[#name] = nb::make_tuple(name_of<typename S::element_type>(), name_of<typename S::scale_type>(),          \
                              kernels::name.block_size, enum_name(kernels::name.rule), kernels::name.tensor_scale, \
                              kernels::name.block_rows);                                                       \
  }
          LPLAB_BLOCK_SCHEMES(LPLAB_PY_SCHEME)
          LPLAB_MATRIX_BLOCK_SCHEMES(LPLAB_PY_SCHEME)
#undef LPLAB_PY_SCHEME
          return d;
        },
        "The named block schemes: name -> (element, scale, block_size, rule, tensor_scale, block_rows).");

  m.def("quantize_blocks",
        [](const InArray& x, const std::string& elem, const std::string& scale, int block_size,
           const std::string& rule, bool tensor_scale, bool packed, unsigned threads, int block_rows, bool rows,
           bool stochastic, std::uint64_t seed, std::uint64_t subsequence, const std::string& stream,
           const std::string& layout) {
          const FloatInput in = float_input(x, "x");
          const kernels::StochasticElements sr{.stream = runtime::parse<kernels::RbitsStream>(stream),
                                               .seed = seed,
                                               .subsequence = subsequence,
                                               .layout = &rbits_layout(layout)};
          return visit_block(elem, scale, [&]<class E, class S>(std::type_identity<E>, std::type_identity<S>) {
            const auto s = scheme<E, S>(block_size, rule, tensor_scale, block_rows);
            if (stochastic && !kernels::CvtRsDestination<E>)
              value_error(fmt::format("rounding='cvt_rs': {} has no cvt.rs form", name_of<E>()));
            // Stochastic rounding takes the matrix form: the flat form is one row of them all.
            const std::size_t matrix = matrix_cols(in.op.shape, block_rows, rows);
            const std::size_t cols = stochastic && matrix == 0 ? std::max<std::size_t>(1, in.values().size()) : matrix;
            const std::span<const float> v = in.values();
            const FormatEntry& ef = format_named(elem);
            const std::size_t count = cols == 0 ? kernels::scales_needed(s, v.size()) : kernels::scales_needed(s, v.size(), cols);
            OutArray scales = new_codes(format_named(scale), {count});
            const std::span<S> sc(static_cast<S*>(scales.data()), count);
            float ts = 1.0f;
            OutArray elems;
            if (packed) {
              if constexpr (kernels::PackedFormat<E>) {
                elems = new_array(nb::dtype<std::uint8_t>(), {kernels::packed_bytes<E>(v.size())});
                const std::span<std::uint8_t> b(static_cast<std::uint8_t*>(elems.data()),
                                                kernels::packed_bytes<E>(v.size()));
                nb::gil_scoped_release release;
                if (stochastic) {
                  std::vector<E> codes(v.size());
                  kernels::quantize_stochastic(s, v, cols, std::span<E>(codes), sc, sr, &ts, threads);
                  kernels::pack(std::span<const E>(codes), b);
                } else if (cols == 0) {
                  kernels::quantize_packed(s, v, b, sc, &ts, threads);
                } else {
                  kernels::quantize_packed(s, v, cols, b, sc, &ts, threads);
                }
              } else {
                value_error(fmt::format("packed=True: {} is not a packed format (FP4, FP6)", ef.name));
              }
            } else {
              elems = new_codes(ef, in.op.shape);
              const std::span<E> q(static_cast<E*>(elems.data()), v.size());
              nb::gil_scoped_release release;
              if (stochastic)
                kernels::quantize_stochastic(s, v, cols, q, sc, sr, &ts, threads);
              else if (cols == 0)
                kernels::quantize(s, v, q, sc, &ts, threads);
              else
                kernels::quantize(s, v, cols, q, sc, &ts, threads);
            }
            return nb::object(nb::make_tuple(elems, scales, ts));
          });
        },
        nb::arg("x"), nb::arg("elem"), nb::arg("scale"), nb::arg("block_size"), nb::arg("rule"),
        nb::arg("tensor_scale"), nb::arg("packed"), nb::arg("threads"), nb::arg("block_rows") = 1,
        nb::arg("rows") = false, nb::arg("stochastic") = false, nb::arg("seed") = 0, nb::arg("subsequence") = 0,
        nb::arg("stream") = "philox", nb::arg("layout") = "sm_100a",
        "Block-scaled quantization: (element codes or packed bytes, scale codes, tensor scale).");

  m.def("dequantize_blocks",
        [](const InArray& elems, const InArray& scales, const std::string& elem, const std::string& scale,
           int block_size, const std::string& rule, bool tensor_scale, float tensor_scale_value, bool packed,
           std::vector<std::size_t> shape, int block_rows, bool rows) {
          const std::size_t n = element_count(shape);
          return visit_block(elem, scale, [&]<class E, class S>(std::type_identity<E>, std::type_identity<S>) {
            const auto s = scheme<E, S>(block_size, rule, tensor_scale, block_rows);
            const std::size_t cols = matrix_cols(shape, block_rows, rows);
            const std::span<const S> sc = codes_input<S>(
                scales, "scales", cols == 0 ? kernels::scales_needed(s, n) : kernels::scales_needed(s, n, cols));
            OutArray y = new_array(nb::dtype<float>(), shape);
            const std::span<float> out(static_cast<float*>(y.data()), n);
            if (packed) {
              if constexpr (kernels::PackedFormat<E>) {
                const std::size_t bytes = kernels::packed_bytes<E>(n);
                if (elems.dtype() != nb::dtype<std::uint8_t>() || elems.ndim() != 1 || elems.shape(0) != bytes ||
                    (bytes > 1 && elems.stride(0) != 1))
                  value_error(fmt::format("elems: {} packed elements of {} are {} contiguous bytes (1-D uint8)", n,
                                          name_of<E>(), bytes));
                const std::span<const std::uint8_t> packed_bytes(static_cast<const std::uint8_t*>(elems.data()), bytes);
                nb::gil_scoped_release release;
                if (cols == 0)
                  kernels::dequantize_packed(s, packed_bytes, sc, out, tensor_scale_value);
                else
                  kernels::dequantize_packed(s, packed_bytes, cols, sc, out, tensor_scale_value);
              } else {
                value_error(fmt::format("packed=True: {} is not a packed format (FP4, FP6)", name_of<E>()));
              }
            } else {
              const std::span<const E> q = codes_input<E>(elems, "elems", n);
              nb::gil_scoped_release release;
              if (cols == 0)
                kernels::dequantize(s, q, sc, out, tensor_scale_value);
              else
                kernels::dequantize(s, q, cols, sc, out, tensor_scale_value);
            }
            return nb::cast(y);
          });
        },
        nb::arg("elems"), nb::arg("scales"), nb::arg("elem"), nb::arg("scale"), nb::arg("block_size"),
        nb::arg("rule"), nb::arg("tensor_scale"), nb::arg("tensor_scale_value"), nb::arg("packed"),
        nb::arg("shape"), nb::arg("block_rows") = 1, nb::arg("rows") = false,
        "The float32 values of block-scaled data.");
}

void bind_tensor_scaling(nb::module_& m) {
  m.def("quantize_tensor",
        [](const InArray& x, const std::string& elem, int margin, const std::string& amax,
           std::optional<InArray> history) {
          const FloatInput in = float_input(x, "x");
          std::optional<FloatInput> h;
          if (history) h = float_input(*history, "history");
          return visit_element(elem, [&]<class E>(std::type_identity<E>) {
            const kernels::TensorScaling<E> s{.margin = margin, .amax = runtime::parse<kernels::AmaxSource>(amax)};
            OutArray q = new_codes(format_named(elem), in.op.shape);
            kernels::TensorScaleResult r;
            {
              nb::gil_scoped_release release;
              r = kernels::quantize(s, in.values(), std::span<E>(static_cast<E*>(q.data()), in.op.size),
                                    h ? h->values() : std::span<const float>{});
            }
            return nb::object(nb::make_tuple(q, r.scale, r.amax));
          });
        },
        nb::arg("x"), nb::arg("elem"), nb::arg("margin"), nb::arg("amax"), nb::arg("history").none(),
        "Per-tensor FP8 scaling (Transformer Engine's formula): (codes, scale, amax).");

  m.def("dequantize_tensor",
        [](const InArray& codes, const std::string& elem, float scale) {
          return visit_element(elem, [&]<class E>(std::type_identity<E>) {
            const Operand op = operand(codes, name_of<E>(), "codes");
            const std::span<const E> q = codes_input<E>(codes, "codes", op.size);
            OutArray y = new_array(nb::dtype<float>(), op.shape);
            {
              nb::gil_scoped_release release;
              kernels::dequantize(kernels::TensorScaling<E>{}, q, scale,
                                  std::span<float>(static_cast<float*>(y.data()), op.size));
            }
            return nb::cast(y);
          });
        },
        nb::arg("codes"), nb::arg("elem"), nb::arg("scale"), "x = float(code) / scale for per-tensor scaled codes.");
}

void bind_tile_scaling(nb::module_& m) {
  m.def("quantize_tiles",
        [](const InArray& x, const std::string& elem, int tile_rows, int tile_cols, float amax_floor,
           const std::string& rule) {
          const FloatInput in = float_input(x, "x");
          if (in.op.shape.size() != 2) value_error("x: tile scaling takes a 2-D matrix");
          const std::size_t rows = in.op.shape[0], cols = in.op.shape[1];
          if (tile_rows < 1 || tile_cols < 1) value_error("tiles must be at least 1 x 1");
          const auto r = runtime::parse<kernels::TileRule>(rule);
          return visit_element(elem, [&]<class E>(std::type_identity<E>) {
            const kernels::TileScaling<E> s{
                .tile_rows = tile_rows, .tile_cols = tile_cols, .amax_floor = amax_floor, .rule = r};
            OutArray q = new_codes(format_named(elem), in.op.shape);
            const std::size_t tr = (rows + tile_rows - 1) / tile_rows, tc = (cols + tile_cols - 1) / tile_cols;
            OutArray scales = new_array(nb::dtype<float>(), {rows == 0 || cols == 0 ? 0 : tr, cols == 0 ? 0 : tc});
            if (cols != 0 && rows != 0) {
              nb::gil_scoped_release release;
              kernels::quantize(s, in.values(), cols, std::span<E>(static_cast<E*>(q.data()), in.op.size),
                                std::span<float>(static_cast<float*>(scales.data()), tr * tc));
            }
            return nb::object(nb::make_tuple(q, scales));
          });
        },
        nb::arg("x"), nb::arg("elem"), nb::arg("tile_rows"), nb::arg("tile_cols"), nb::arg("amax_floor"),
        nb::arg("rule") = "deepseek",
        "Fine-grained scaling of a matrix (DeepSeek-V3, TE Float8BlockScaling): (codes, float32 scales per tile).");

  m.def("dequantize_tiles",
        [](const InArray& codes, const InArray& scales, const std::string& elem, int tile_rows, int tile_cols) {
          return visit_element(elem, [&]<class E>(std::type_identity<E>) {
            const Operand op = operand(codes, name_of<E>(), "codes");
            if (op.shape.size() != 2) value_error("codes: tile scaling takes a 2-D matrix");
            const std::size_t rows = op.shape[0], cols = op.shape[1];
            const kernels::TileScaling<E> s{.tile_rows = tile_rows, .tile_cols = tile_cols};
            const std::span<const E> q = codes_input<E>(codes, "codes", op.size);
            const FloatInput sc = float_input(scales, "scales");
            OutArray y = new_array(nb::dtype<float>(), op.shape);
            if (rows != 0 && cols != 0) {
              nb::gil_scoped_release release;
              kernels::dequantize(s, q, cols, sc.values(), std::span<float>(static_cast<float*>(y.data()), op.size));
            }
            return nb::cast(y);
          });
        },
        nb::arg("codes"), nb::arg("scales"), nb::arg("elem"), nb::arg("tile_rows"), nb::arg("tile_cols"),
        "The float32 values of tile-scaled codes.");
}

void bind_amax(nb::module_& m) {
  m.def("amax",
        [](const InArray& x) {
          const FloatInput in = float_input(x, "x");
          return kernels::amax(in.values());
        },
        nb::arg("x"), "The largest |x| of a float32 array (NaN if any element is NaN).");
}

// The swizzled scale layout (scale_layout.h): a 2-D uint8 grid of codes in,
// the 1-D swizzled bytes out, and back.
const std::uint8_t* byte_grid(const InArray& a, const char* what, std::size_t ndim) {
  if (a.dtype() != nb::dtype<std::uint8_t>() || a.ndim() != ndim)
    value_error(fmt::format("{}: a {}-D uint8 array of scale codes", what, ndim));
  std::vector<std::size_t> shape;
  std::vector<std::ptrdiff_t> strides;
  for (std::size_t d = 0; d < ndim; ++d) shape.push_back(a.shape(d)), strides.push_back(a.stride(d));
  if (!kernels::Layout(shape, strides).is_contiguous()) value_error(fmt::format("{}: a C-contiguous array", what));
  return static_cast<const std::uint8_t*>(a.data());
}

void bind_scale_layout(nb::module_& m) {
  m.def("swizzle_scales",
        [](const InArray& grid, unsigned pad) {
          const std::uint8_t* p = byte_grid(grid, "scales", 2);
          if (pad > 255) value_error("pad: a byte, 0 to 255");
          const std::size_t rows = grid.shape(0), cols = grid.shape(1);
          OutArray y = new_array(nb::dtype<std::uint8_t>(), {kernels::swizzled_scale_bytes(rows, cols)});
          kernels::swizzle_scales({p, rows * cols}, rows, cols,
                                  {static_cast<std::uint8_t*>(y.data()), y.shape(0)}, static_cast<std::uint8_t>(pad));
          return y;
        },
        nb::arg("scales"), nb::arg("pad") = 0,
        "A rows x cols grid of scale codes in the swizzled layout GEMMs read (cuBLAS 128x4, SWIZZLE_32_4_4).");
  m.def("unswizzle_scales",
        [](const InArray& bytes, std::size_t rows, std::size_t cols) {
          const std::uint8_t* p = byte_grid(bytes, "swizzled", 1);
          if (bytes.shape(0) != kernels::swizzled_scale_bytes(rows, cols))
            value_error(fmt::format("swizzled: a {} x {} grid's layout is {} bytes, not {}", rows, cols,
                                    kernels::swizzled_scale_bytes(rows, cols), bytes.shape(0)));
          OutArray y = new_array(nb::dtype<std::uint8_t>(), {rows, cols});
          kernels::unswizzle_scales({p, bytes.shape(0)}, rows, cols, {static_cast<std::uint8_t*>(y.data()), rows * cols});
          return y;
        },
        nb::arg("swizzled"), nb::arg("rows"), nb::arg("cols"), "The rows x cols grid out of a swizzled layout.");
}

// The pieces of the training recipes (docs/recipes.md): cvt.rs, the
// random Hadamard transform, Four Over Six.
void bind_recipe_parts(nb::module_& m) {
  m.def("cvt_rs",
        [](const InArray& x, const std::string& form, std::uint64_t seed, std::uint64_t subsequence,
           const std::string& stream, const std::string& layout, bool relu, bool satfinite) {
          const FloatInput in = float_input(x, "x");
          const auto f = runtime::parse<kernels::CvtRsForm>(form);
          const auto st = runtime::parse<kernels::RbitsStream>(stream);
          const kernels::RbitsLayout* l = &rbits_layout(layout);
          if (!satfinite && f != kernels::CvtRsForm::f16x2 && f != kernels::CvtRsForm::bf16x2)
            value_error(fmt::format("satfinite: {} has .satfinite always (the PTX ISA); only f16x2 and bf16x2 "
                                    "may leave it off", form));
          nb::object out;
          switch (f) {
#define LPLAB_PY_CVT_RS(name, T, K, lanes, doc)                                                         \
  case kernels::CvtRsForm::name: {                                                                  \
    OutArray codes = new_codes(format_named(#T), in.op.shape);                                      \
    const std::span<const float> v = in.values();                                                   \
    T* q = static_cast<T*>(codes.data());                                                           \
    {                                                                                               \
      nb::gil_scoped_release release;                                                               \
      kernels::cvt_rs_bulk<kernels::CvtRsForm::name>(v.data(), v.size(), q, st, seed, subsequence, *l, \
                                                     relu, satfinite);                              \
    }                                                                                               \
    out = nb::make_tuple(codes, std::string(#T));                                                   \
    break;                                                                                          \
  }
            LPLAB_CVT_RS_FORMS(LPLAB_PY_CVT_RS)
#undef LPLAB_PY_CVT_RS
          }
          return out;
        },
        nb::arg("x"), nb::arg("form"), nb::arg("seed"), nb::arg("subsequence"), nb::arg("stream"),
        nb::arg("layout"), nb::arg("relu"), nb::arg("satfinite"),
        "PTX cvt.rs over x in instruction groups: (codes, format name).");
  m.def("hadamard",
        [](const InArray& x, unsigned signs, bool inverse, bool bf16) {
          const FloatInput in = float_input(x, "x");
          if (signs > 0xFFFF) value_error("signs: a 16-bit mask (bit i set where sign i is -1)");
          const std::size_t cols = in.op.shape.empty() ? in.op.size : in.op.shape.back();
          if (cols % kernels::kHadamardSize != 0)
            value_error(fmt::format("x: the last dimension ({}) must be a multiple of 16", cols));
          OutArray y = new_array(nb::dtype<float>(), in.op.shape);
          const std::span<const float> v = in.values();
          float* out = static_cast<float*>(y.data());
          nb::gil_scoped_release release;
          kernels::hadamard_rows(v.data(), cols == 0 ? 0 : v.size() / cols, cols, out,
                                 static_cast<std::uint16_t>(signs),
                                 bf16 ? kernels::HadamardOutput::bfloat16 : kernels::HadamardOutput::float32, inverse);
          return y;
        },
        nb::arg("x"), nb::arg("signs"), nb::arg("inverse"), nb::arg("bf16"),
        "The random Hadamard transform along the last dimension, in groups of 16.");
  m.def("quantize_four_over_six",
        [](const InArray& x, const std::string& metric, float e4m3_max, const std::string& order, int block_rows) {
          const FloatInput in = float_input(x, "x");
          const kernels::FourOverSix p{runtime::parse<kernels::FourOverSixMetric>(metric), e4m3_max,
                                       runtime::parse<kernels::FourOverSixOrder>(order)};
          const std::span<const float> v = in.values();
          if (!in.op.shape.empty() && in.op.shape.back() % 16 != 0)
            value_error(fmt::format("x: the last dimension ({}) must be a multiple of 16 (1 x 16 blocks)",
                                    in.op.shape.back()));
          if (block_rows != 1 && block_rows != 16) value_error(fmt::format("block_rows: 1 or 16, not {}", block_rows));
          if (block_rows == 16 && in.op.shape.size() < 2)
            value_error("block_rows=16: x must be a matrix (the last dimension a row)");
          if (block_rows == 16 && p.order != kernels::FourOverSixOrder::te)
            value_error("block_rows=16: 16 x 16 blocks are Transformer Engine's (order='te')");
          const std::size_t cols = block_rows == 16 ? in.op.shape.back() : 0;
          const std::size_t rows = cols == 0 ? 0 : v.size() / cols;
          const std::size_t blocks = cols == 0 ? (v.size() + 15) / 16 : (rows + 15) / 16 * (cols / 16);
          OutArray codes = new_codes(format_named("float4_e2m1fn"), in.op.shape);
          OutArray scales = new_codes(format_named("float8_e4m3fn"), {blocks});
          float amax = 0;
          std::size_t fours = 0;
          const std::span<float4_e2m1fn> q(static_cast<float4_e2m1fn*>(codes.data()), v.size());
          const std::span<float8_e4m3fn> sc(static_cast<float8_e4m3fn*>(scales.data()), blocks);
          {
            nb::gil_scoped_release release;
            if (cols == 0)
              kernels::quantize_four_over_six(p, v, q, sc, &amax, &fours);
            else
              kernels::quantize_four_over_six(p, v, cols, 16, q, sc, &amax, &fours);
          }
          return nb::make_tuple(codes, scales, amax, fours);
        },
        nb::arg("x"), nb::arg("metric"), nb::arg("e4m3_max"), nb::arg("order"), nb::arg("block_rows") = 1,
        "Four Over Six: (E2M1 codes, E4M3 scales, amax, blocks that kept 4).");
  m.def("dequantize_four_over_six",
        [](const InArray& codes, const InArray& scales, float amax, float e4m3_max, int block_rows) {
          const Operand c = operand(codes, "float4_e2m1fn", "codes");
          if (!c.contiguous()) value_error("codes: must be contiguous");
          if (block_rows != 1 && block_rows != 16) value_error(fmt::format("block_rows: 1 or 16, not {}", block_rows));
          if (block_rows == 16 && (c.shape.size() < 2 || c.shape.back() % 16 != 0))
            value_error("block_rows=16: codes must be a matrix with rows of a multiple of 16");
          const std::size_t cols = block_rows == 16 ? c.shape.back() : 0;
          const std::size_t blocks = cols == 0 ? (c.size + 15) / 16 : (c.size / cols + 15) / 16 * (cols / 16);
          const std::span<const float8_e4m3fn> s = codes_input<float8_e4m3fn>(scales, "scales", blocks);
          OutArray y = new_array(nb::dtype<float>(), c.shape);
          const std::span<float> out(static_cast<float*>(y.data()), c.size);
          const std::span<const float4_e2m1fn> q(static_cast<const float4_e2m1fn*>(c.data), c.size);
          nb::gil_scoped_release release;
          const kernels::FourOverSix p{.e4m3_max = e4m3_max, .order = kernels::FourOverSixOrder::te};
          if (cols == 0)
            kernels::dequantize_four_over_six(p, q, s, amax, out);
          else
            kernels::dequantize_four_over_six(p, q, cols, 16, s, amax, out);
          return y;
        },
        nb::arg("codes"), nb::arg("scales"), nb::arg("amax"), nb::arg("e4m3_max"), nb::arg("block_rows") = 1,
        "((q * s) * amax) / (6 * e4m3_max), element by element.");
  m.def("recipes",
        []() {
          std::vector<std::tuple<std::string, std::string, std::string>> out;
          for (const kernels::Recipe& r : kernels::recipes())
            out.emplace_back(std::string(r.name), std::string(r.summary), std::string(r.source));
          return out;
        },
        "Every named recipe: (name, summary, source).");
  m.def("recipe_json", [](const std::string& name) { return runtime::recipe_json(runtime::recipe(name)); },
        nb::arg("name"), "The recipe called `name` as JSON (lplab recipe show NAME --output json).");
}

}  // namespace

// Block scaling (MX, NVFP4), per-tensor scaling (current and delayed) and
// tile scaling (DeepSeek-V3), each quantizing and dequantizing.
void bind_scaling(nb::module_& m) {
  bind_block_scaling(m);
  bind_tensor_scaling(m);
  bind_tile_scaling(m);
  bind_amax(m);
  bind_scale_layout(m);
  bind_recipe_parts(m);
}

}  // namespace lplab::python
