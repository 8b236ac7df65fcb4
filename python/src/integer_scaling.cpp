// Integer scaling (kernels/integer_scaling.h): quantize and dequantize with a
// named rule and groups along the last dimension, and the GPTQ / AWQ
// checkpoint layouts; and the integer matrix units (kernels/integer_mma.h).
// Python's lplab.quantize_integer and lplab.integer_matmul wrap these.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "arrays.h"
#include "lplab/kernels/integer_mma.h"
#include "lplab/kernels/integer_scaling.h"
#include "lplab/runtime/text.h"

namespace lplab::python {
namespace {

std::string list_text(std::initializer_list<std::string_view> names) {
  std::string s;
  for (std::string_view n : names) s.append(s.empty() ? "" : ", ").append(n);
  return s;
}
#define LPLAB_PY_NAME(T, ...) #T,
const std::string kElements = list_text({LPLAB_INTEGER_SCALING_ELEMENTS(LPLAB_PY_NAME)});
const std::string kScales = list_text({LPLAB_INTEGER_SCALING_SCALES(LPLAB_PY_NAME)});
#undef LPLAB_PY_NAME

// f(type_identity<Elem>, type_identity<Scale>) for a compiled pair.
template <class F>
nb::object visit_integer(const std::string& elem, const std::string& scale, F&& f) {
  const FormatEntry& e = format_named(elem);
  const FormatEntry& s = format_named(scale);
  if (e.declared != nullptr || s.declared != nullptr) value_error("integer scaling takes compiled formats");
  return runtime::visit_format(e, [&]<class E>(std::type_identity<E>) -> nb::object {
    if constexpr (!kernels::IntegerElement<E>) {
      value_error(fmt::format("integer scaling's elements are {}, not {}", kElements, e.name));
    } else {
      return runtime::visit_format(s, [&]<class S>(std::type_identity<S>) -> nb::object {
        if constexpr (!kernels::IntegerScale<S>)
          value_error(fmt::format("integer scaling's scales are {}, not {}", kScales, s.name));
        else
          return f(std::type_identity<E>{}, std::type_identity<S>{});
      });
    }
  });
}

template <class E, class S>
kernels::IntegerScaling<E, S> scheme(const std::string& rule, int group_size, bool per_tensor) {
  return {.rule = runtime::parse<kernels::IntegerRule>(rule), .group_size = group_size, .per_tensor = per_tensor};
}

// The row length: the last dimension (a 0-D array is one row of 1).
std::size_t row_of(const std::vector<std::size_t>& shape) { return shape.empty() ? 1 : shape.back(); }

// int32 words as a 2-D numpy array.
nb::object words(const std::vector<std::int32_t>& v, std::size_t rows, std::size_t cols) {
  OutArray a = new_array(nb::dtype<std::int32_t>(), {rows, cols});
  std::copy(v.begin(), v.end(), static_cast<std::int32_t*>(a.data()));
  return nb::cast(a);
}

}  // namespace

void bind_integer_scaling(nb::module_& m) {
  m.def("integer_schemes",
        []() {
          nb::dict d;
#define LPLAB_PY_SCHEME(name, ...)                                                                          \
  {                                                                                                     \
    using S = std::remove_cvref_t<decltype(kernels::name)>;                                             \
    d[#name] = nb::make_tuple(name_of<typename S::element_type>(), name_of<typename S::scale_type>(),   \
                              enum_name(kernels::name.rule), kernels::name.group_size, kernels::name.per_tensor); \
  }
          LPLAB_INTEGER_SCHEMES(LPLAB_PY_SCHEME)
#undef LPLAB_PY_SCHEME
          return d;
        },
        "The named integer schemes: name -> (element, scale, rule, group_size, per_tensor).");

  m.def("integer_rule_zero",
        [](const std::string& rule) {
          const kernels::ZeroPoint z = kernels::integer_rule_spec(runtime::parse<kernels::IntegerRule>(rule)).zero;
          return std::string(z == kernels::ZeroPoint::none ? "none" : z == kernels::ZeroPoint::integer ? "integer" : "floating");
        },
        nb::arg("rule"), "How the rule stores its zero point: 'none', 'integer' or 'floating'.");

  m.def("quantize_integer",
        [](const InArray& x, const std::string& elem, const std::string& scale, const std::string& rule,
           int group_size, bool per_tensor) {
          const FloatInput fx = float_input(x, "x");
          const Operand& in = fx.op;
          return visit_integer(elem, scale, [&]<class E, class S>(std::type_identity<E>, std::type_identity<S>) {
            const auto s = scheme<E, S>(rule, group_size, per_tensor);
            const std::span<const float> v = fx.values();
            const std::size_t cols = row_of(in.shape), groups = kernels::groups_needed(s, in.size, cols);
            OutArray q = new_codes(format_named(elem), in.shape);
            OutArray sc = new_codes(format_named(scale), {groups});
            const kernels::ZeroPoint kind = kernels::integer_rule_spec(s.rule).zero;
            nb::object zeros = nb::none();
            const std::span<E> qs(static_cast<E*>(q.data()), in.size);
            const std::span<S> ss(static_cast<S*>(sc.data()), groups);
            if (kind == kernels::ZeroPoint::none) {
              kernels::quantize(s, v, cols, qs, ss);
            } else if (kind == kernels::ZeroPoint::integer) {
              OutArray z = new_codes(format_named(elem), {groups});
              kernels::quantize(s, v, cols, qs, ss, std::span<E>(static_cast<E*>(z.data()), groups));
              zeros = nb::cast(z);
            } else {
              OutArray z = new_codes(format_named(scale), {groups});
              kernels::quantize(s, v, cols, qs, ss, std::span<S>(static_cast<S*>(z.data()), groups));
              zeros = nb::cast(z);
            }
            return nb::object(nb::make_tuple(q, sc, zeros));
          });
        },
        nb::arg("x"), nb::arg("elem"), nb::arg("scale"), nb::arg("rule"), nb::arg("group_size"),
        nb::arg("per_tensor"), "Integer scaling along the last dimension: (codes, scales, zero points or None).");

  m.def("dequantize_integer",
        [](const InArray& codes, const InArray& scales, std::optional<InArray> zeros, const std::string& elem,
           const std::string& scale, const std::string& rule, int group_size, bool per_tensor,
           std::vector<std::size_t> shape) {
          const std::size_t n = element_count(shape), cols = row_of(shape);
          return visit_integer(elem, scale, [&]<class E, class S>(std::type_identity<E>, std::type_identity<S>) {
            const auto s = scheme<E, S>(rule, group_size, per_tensor);
            const std::size_t groups = kernels::groups_needed(s, n, cols);
            const std::span<const E> q = codes_input<E>(codes, "codes", n);
            const std::span<const S> sc = codes_input<S>(scales, "scales", groups);
            OutArray y = new_array(nb::dtype<float>(), shape);
            const std::span<float> out(static_cast<float*>(y.data()), n);
            const kernels::ZeroPoint kind = kernels::integer_rule_spec(s.rule).zero;
            if (kind != kernels::ZeroPoint::none && !zeros) value_error(fmt::format("{} needs its zero points", rule));
            if (kind == kernels::ZeroPoint::none)
              kernels::dequantize(s, q, cols, sc, out);
            else if (kind == kernels::ZeroPoint::integer)
              kernels::dequantize(s, q, cols, sc, codes_input<E>(*zeros, "zeros", groups), out);
            else
              kernels::dequantize(s, q, cols, sc, codes_input<S>(*zeros, "zeros", groups), out);
            return nb::cast(y);
          });
        },
        nb::arg("codes"), nb::arg("scales"), nb::arg("zeros").none(), nb::arg("elem"), nb::arg("scale"),
        nb::arg("rule"), nb::arg("group_size"), nb::arg("per_tensor"), nb::arg("shape"),
        "The float32 values of integer-scaled codes.");

  m.def("to_checkpoint",
        [](const InArray& codes, const InArray& scales, const InArray& zeros, const std::string& elem,
           const std::string& scale, const std::string& rule, int group_size, const std::string& layout) {
          const Operand c = operand(codes, elem, "codes");
          if (c.shape.size() != 2) value_error("codes: a weight of N x K (2 dimensions)");
          return visit_integer(elem, scale, [&]<class E, class S>(std::type_identity<E>, std::type_identity<S>) {
            const auto s = scheme<E, S>(rule, group_size, false);
            const std::size_t n = c.size, k = c.shape[1], groups = kernels::groups_needed(s, n, k);
            kernels::CheckpointTensors<S> t = kernels::to_checkpoint(
                runtime::parse<kernels::IntegerCheckpoint>(layout), s, k, codes_input<E>(codes, "codes", n),
                codes_input<S>(scales, "scales", groups), codes_input<E>(zeros, "zeros", groups));
            OutArray sc = new_codes(format_named(scale), {t.groups, t.n});
            std::copy(t.scales.begin(), t.scales.end(), static_cast<S*>(sc.data()));
            return nb::object(nb::make_tuple(words(t.qweight, t.qweight_rows, t.qweight_cols),
                                             words(t.qzeros, t.qzeros_rows, t.qzeros_cols), sc));
          });
        },
        nb::arg("codes"), nb::arg("scales"), nb::arg("zeros"), nb::arg("elem"), nb::arg("scale"), nb::arg("rule"),
        nb::arg("group_size"), nb::arg("layout"), "(qweight, qzeros, scales) of a GPTQ or AWQ checkpoint.");

  m.def("integer_mma_instructions",
        []() {
          nb::dict d;
          for (const kernels::IntegerMmaInstruction& i : kernels::integer_mma_instructions())
            d[i.name.c_str()] = nb::make_tuple(std::string(i.arch), i.isa, i.m, i.n, i.k, i.blocks,
                                               std::string(i.a), std::string(i.b), i.saturate);
          return d;
        },
        "The integer matrix-unit presets: name -> (arch, isa, m, n, k, blocks, a, b, saturate).");

  m.def("integer_matmul",
        [](const nb::ndarray<const std::int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>& a,
           const nb::ndarray<const std::int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>& b_t,
           std::optional<nb::ndarray<const std::int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>> c,
           const std::string& instruction) {
          const kernels::IntegerMmaInstruction* i = kernels::find_integer_mma_instruction(instruction);
          if (i == nullptr) value_error(fmt::format("unknown integer matrix-unit preset '{}'", instruction));
          const std::size_t m = a.shape(0), k = a.shape(1), n = b_t.shape(0);
          if (b_t.shape(1) != k) value_error(fmt::format("integer_matmul: A is {} x {}, B {} x {}", m, k, k, n));
          if (c && (c->shape(0) != m || c->shape(1) != n))
            value_error(fmt::format("integer_matmul: C must be {} x {}", m, n));
          OutArray d = new_array(nb::dtype<std::int32_t>(), {m, n});
          kernels::integer_matmul(*i, m, n, k, {a.data(), m * k}, {b_t.data(), n * k},
                                  c ? std::span<const std::int32_t>(c->data(), m * n) : std::span<const std::int32_t>{},
                                  {static_cast<std::int32_t*>(d.data()), m * n});
          return d;
        },
        nb::arg("a"), nb::arg("b_t"), nb::arg("c").none(), nb::arg("instruction"),
        "D = A B + C through an integer matrix-unit preset (B transposed: n x k), int32.");

  m.def("smoothquant",
        [](const InArray& x, const InArray& w, double alpha, std::optional<InArray> act_amax) {
          const FloatInput fx = float_input(x, "x"), fw = float_input(w, "w");
          const Operand &xo = fx.op, &wo = fw.op;
          if (xo.shape.size() != 2 || wo.shape.size() != 2)
            value_error("smoothquant: x (tokens x K) and w (N x K) are 2-D float32 matrices");
          const std::size_t k = xo.shape[1];
          if (wo.shape[1] != k) value_error(fmt::format("smoothquant: x has {} channels, w {}", k, wo.shape[1]));
          std::vector<float> a(k), wa(k), sc(k);
          const std::span<const float> xs = fx.values(), ws = fw.values();
          if (act_amax) {
            const FloatInput fa = float_input(*act_amax, "act_amax");
            if (fa.op.size != k) value_error(fmt::format("act_amax: {} values, one per channel", k));
            std::copy_n(fa.values().begin(), k, a.begin());
          } else {
            kernels::column_amax(xs, k, a);
          }
          kernels::column_amax(ws, k, wa);
          kernels::smoothquant_scales(a, wa, alpha, sc);
          OutArray xs_out = new_array(nb::dtype<float>(), xo.shape), ws_out = new_array(nb::dtype<float>(), wo.shape),
                   s_out = new_array(nb::dtype<float>(), {k});
          const std::span<float> xd(static_cast<float*>(xs_out.data()), xo.size),
              wd(static_cast<float*>(ws_out.data()), wo.size);
          std::copy(xs.begin(), xs.end(), xd.begin());
          std::copy(ws.begin(), ws.end(), wd.begin());
          kernels::smooth_columns(xd, k, sc, true);
          kernels::smooth_columns(wd, k, sc, false);
          std::copy(sc.begin(), sc.end(), static_cast<float*>(s_out.data()));
          return nb::make_tuple(xs_out, ws_out, s_out);
        },
        nb::arg("x"), nb::arg("w"), nb::arg("alpha"), nb::arg("act_amax").none(),
        "SmoothQuant's smoothing: (x / s, w * s, s).");

  m.def("from_checkpoint",
        [](const nb::ndarray<const std::int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>& qweight,
           const nb::ndarray<const std::int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>& qzeros,
           const InArray& scales, const std::string& elem, const std::string& scale, const std::string& rule,
           int group_size, const std::string& layout) {
          const Operand sc = operand(scales, scale, "scales");
          if (sc.shape.size() != 2) value_error("scales: a checkpoint's scales are K/G x N (2 dimensions)");
          return visit_integer(elem, scale, [&]<class E, class S>(std::type_identity<E>, std::type_identity<S>) {
            const auto s = scheme<E, S>(rule, group_size, false);
            kernels::CheckpointTensors<S> t;
            t.qweight.assign(qweight.data(), qweight.data() + qweight.size());
            t.qzeros.assign(qzeros.data(), qzeros.data() + qzeros.size());
            t.qweight_rows = qweight.shape(0), t.qweight_cols = qweight.shape(1);
            t.qzeros_rows = qzeros.shape(0), t.qzeros_cols = qzeros.shape(1);
            t.groups = sc.shape[0], t.n = sc.shape[1];
            const std::span<const S> sv = codes_input<S>(scales, "scales", sc.size);
            t.scales.assign(sv.begin(), sv.end());
            const kernels::IntegerCheckpoint l = runtime::parse<kernels::IntegerCheckpoint>(layout);
            const std::size_t k = l == kernels::IntegerCheckpoint::awq ? t.qweight_rows
                                                                       : t.qweight_rows * (32 / finfo<E>::bits);
            OutArray q = new_codes(format_named(elem), {t.n, k});
            OutArray s_out = new_codes(format_named(scale), {t.n * t.groups});
            OutArray z = new_codes(format_named(elem), {t.n * t.groups});
            kernels::from_checkpoint(l, s, t, std::span<E>(static_cast<E*>(q.data()), t.n * k),
                                     std::span<S>(static_cast<S*>(s_out.data()), t.n * t.groups),
                                     std::span<E>(static_cast<E*>(z.data()), t.n * t.groups));
            return nb::object(nb::make_tuple(q, s_out, z));
          });
        },
        nb::arg("qweight"), nb::arg("qzeros"), nb::arg("scales"), nb::arg("elem"), nb::arg("scale"), nb::arg("rule"),
        nb::arg("group_size"), nb::arg("layout"), "(codes N x K, scales, zero points) from a GPTQ or AWQ checkpoint.");
}

}  // namespace lplab::python
