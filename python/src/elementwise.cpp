// Elementwise ops and reductions (kernels/elementwise.h) on arrays of any
// strides, binary ops with numpy's broadcasting (a stride-0 view, no copy).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "arrays.h"
#include "lplab/runtime/text.h"
#include "lplab/kernels/elementwise.h"

namespace lplab::python {

namespace {

// The kernels' operand of a compiled format (float64 and declared formats
// are refused with the reason).
kernels::Operand kernel_operand(const Operand& op, const char* what) {
  if (op.is_double())
    value_error(fmt::format("{}: the elementwise kernels take float32 or an lplab format, not float64 (round it "
                            "first: lplab.convert(x, \"float32\"))",
                            what));
  if (!op.compiled())
    value_error(fmt::format("{}: {} is a declared format; the elementwise kernels are compiled per catalog format",
                            what, op.format->name));
  return {op.id(), op.data, op.layout()};
}

const FormatEntry& output_format(const Operand& in, const std::string& out) {
  const FormatEntry& f = out.empty() ? *in.format : format_named(out);
  if (f.declared != nullptr)
    value_error(fmt::format("out_format {} is a declared format; the elementwise kernels are compiled per "
                            "catalog format",
                            f.name));
  return f;
}

kernels::ElementwiseOptions options(kernels::Compute compute, const std::string& round, const std::string& overflow,
                                    std::uint64_t seed, unsigned threads) {
  return {.compute = compute, .round = round_named(round), .overflow = overflow_named(overflow), .seed = seed,
          .threads = threads};
}

// numpy's broadcast of two shapes; ValueError where they do not broadcast.
std::vector<std::size_t> broadcast_shape(const Operand& a, const Operand& b) {
  const std::size_t r = std::max(a.shape.size(), b.shape.size());
  std::vector<std::size_t> out(r);
  for (std::size_t i = 0; i < r; ++i) {
    const std::size_t da = i < r - a.shape.size() ? 1 : a.shape[i - (r - a.shape.size())];
    const std::size_t db = i < r - b.shape.size() ? 1 : b.shape[i - (r - b.shape.size())];
    if (da != db && da != 1 && db != 1)
      value_error(fmt::format("a and b do not broadcast: shapes {} and {}",
                              kernels::shape_text(a.shape), kernels::shape_text(b.shape)));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// The operand seen with `shape` (stride 0 along broadcast dimensions).
kernels::Layout broadcast_layout(const Operand& op, const std::vector<std::size_t>& shape) {
  const std::size_t lead = shape.size() - op.shape.size();
  std::vector<std::ptrdiff_t> strides(shape.size(), 0);
  for (std::size_t i = 0; i < op.shape.size(); ++i)
    strides[lead + i] = op.shape[i] == 1 && shape[lead + i] != 1 ? 0 : op.strides[i];
  return kernels::Layout(shape, strides);
}

}  // namespace

void bind_elementwise(nb::module_& m) {
  m.def("map_unary",
        [](const InArray& x, const std::string& x_format, const std::vector<std::pair<std::string, float>>& chain,
           const std::string& out_format, const std::string& compute, const std::string& round,
           const std::string& overflow, std::uint64_t seed, unsigned threads) {
          const Operand in = operand(x, x_format, "x");
          const kernels::Operand k = kernel_operand(in, "x");
          std::vector<kernels::Step> steps;
          for (const auto& [name, param] : chain) steps.push_back({runtime::parse<kernels::Unary>(name), param});
          if (steps.empty()) value_error("chain: at least one op");
          const FormatEntry& of = output_format(in, out_format);
          const kernels::ElementwiseOptions o =
              options(runtime::parse<kernels::Compute>(compute), round, overflow, seed, threads);
          OutArray y = new_codes(of, in.shape);
          const kernels::Output out{format_id(of), y.data(), kernels::Layout(in.shape)};
          {
            nb::gil_scoped_release release;
            kernels::map_unary(steps, k, out, o);
          }
          return y;
        },
        nb::arg("x"), nb::arg("x_format"), nb::arg("chain"), nb::arg("out_format"), nb::arg("compute"),
        nb::arg("round"), nb::arg("overflow"), nb::arg("seed"), nb::arg("threads"),
        "A chain of unary ops [(op, param), ...] on every element, rounded into out_format.");

  m.def("map_binary",
        [](const std::string& op, float alpha, const InArray& a, const std::string& a_format, const InArray& b,
           const std::string& b_format, const std::string& out_format, const std::string& round,
           const std::string& overflow, std::uint64_t seed, unsigned threads) {
          const kernels::Binary bop = runtime::parse<kernels::Binary>(op);
          const Operand oa = operand(a, a_format, "a"), ob = operand(b, b_format, "b");
          kernel_operand(oa, "a");
          kernel_operand(ob, "b");
          const std::vector<std::size_t> shape = broadcast_shape(oa, ob);
          const FormatEntry& of = output_format(oa, out_format);
          const kernels::ElementwiseOptions o = options(kernels::Compute::per_op, round, overflow, seed, threads);
          OutArray y = new_codes(of, shape);
          const kernels::Operand ka{oa.id(), oa.data, broadcast_layout(oa, shape)};
          const kernels::Operand kb{ob.id(), ob.data, broadcast_layout(ob, shape)};
          const kernels::Output out{format_id(of), y.data(), kernels::Layout(shape)};
          {
            nb::gil_scoped_release release;
            kernels::map_binary(bop, alpha, ka, kb, out, o);
          }
          return y;
        },
        nb::arg("op"), nb::arg("alpha"), nb::arg("a"), nb::arg("a_format"), nb::arg("b"), nb::arg("b_format"),
        nb::arg("out_format"), nb::arg("round"), nb::arg("overflow"), nb::arg("seed"), nb::arg("threads"),
        "add (a + b), mul (a * b) or axpy (alpha * a + b, one rounding), broadcast as numpy does.");

  m.def("triu",
        [](const InArray& x, const std::string& x_format, std::ptrdiff_t diagonal) {
          const Operand in = operand(x, x_format, "x");
          const kernels::Operand k = kernel_operand(in, "x");
          if (in.shape.size() < 2) value_error("x: triu takes at least 2 dimensions");
          OutArray y = new_codes(*in.format, in.shape);
          const kernels::Output out{in.id(), y.data(), kernels::Layout(in.shape)};
          {
            nb::gil_scoped_release release;
            kernels::triu(k, out, diagonal);
          }
          return y;
        },
        nb::arg("x"), nb::arg("x_format"), nb::arg("diagonal"),
        "The upper triangle of the last two dimensions (zeros of the format below it).");

  m.def("reduce",
        [](const std::string& what, const InArray& x, const std::string& x_format, const std::string& accumulate) {
          const Operand in = operand(x, x_format, "x");
          const kernels::Operand k = kernel_operand(in, "x");
          if (what == "amax") {
            nb::gil_scoped_release release;
            return kernels::reduce_amax(k);
          }
          if (what != "sum" && what != "mean") value_error(fmt::format("unknown reduction '{}'", what));
          const kernels::Accumulate acc = runtime::parse<kernels::Accumulate>(accumulate);
          double s;
          {
            nb::gil_scoped_release release;
            s = kernels::reduce_sum(k, acc);
          }
          if (what == "sum") return s;
          // mean: as kernels::mean divides, in the accumulation's precision.
          const double n = static_cast<double>(in.size);
          if (acc == kernels::Accumulate::fp64) return s / n;
          if (acc == kernels::Accumulate::fp32) return static_cast<double>(static_cast<float>(s) / static_cast<float>(n));
          return kernels::round_to(in.id(), s / n);
        },
        nb::arg("what"), nb::arg("x"), nb::arg("x_format"), nb::arg("accumulate"),
        "sum, mean or amax of every element, accumulated as asked (amax ignores it).");
}

}  // namespace lplab::python
