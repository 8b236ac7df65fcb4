// lplab.matmul (kernels/matmul.h): C = scale_a scale_b A B with an emulated
// accumulator, any operand formats, C in any compiled format.
//
// The operands are decoded to float32 (exact for every compiled format, in
// any layout) and the product runs as kernels::matmul(MatmulProblem, ...)
// with the operands' ranges: what kernels::matmul(m, n, k, a, b, c) does
// after its own decode. Rows of C are computed in bands without the GIL, with
// Ctrl-C noticed between bands (one band under stochastic rounding, whose
// random bits follow the element's index in the whole of C).
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>

#include <fmt/format.h>

#include "arrays.h"
#include "lplab/runtime/accumulators.h"
#include "lplab/runtime/text.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/mma.h"

namespace lplab::python {

namespace {

struct Decoded {
  std::vector<float> values;
  kernels::OperandRange range;
  std::size_t rows = 0, cols = 0;
};

Decoded decode_matrix(const InArray& x, const std::string& format, const char* what) {
  const Operand op = operand(x, format, what);
  if (op.is_double())
    value_error(fmt::format("{}: matmul operands are float32 or an lplab format, not float64 (round first: "
                            "lplab.convert({}, \"float32\"))",
                            what, what));
  if (!op.compiled())
    value_error(fmt::format("{}: {} is a declared format; matmul takes the catalog's formats", what, op.format->name));
  if (op.shape.size() != 2) value_error(fmt::format("{}: a matrix (2 dimensions), not {}", what, op.shape.size()));
  Decoded d;
  d.rows = op.shape[0];
  d.cols = op.shape[1];
  d.values.resize(op.size);
  convert_into(op, float32_entry(), d.values.data(), {});
  d.range = op.id() == FormatId::float32 ? kernels::operand_range<float>() : runtime::operand_range(*op.format);
  return d;
}

kernels::AccumulatorModel accumulator_model(const std::string& name, const std::map<std::string, int>& params) {
  return runtime::accumulator_model(name, {params.begin(), params.end()});
}

// C's format: a compiled one.
const FormatEntry& output_format(const std::string& name) {
  const FormatEntry& f = format_named(name);
  if (f.declared != nullptr) value_error(fmt::format("out_format {} is a declared format", f.name));
  return f;
}

kernels::MatmulOptions options(const std::string& accumulator, const std::map<std::string, int>& params,
                               float scale_a, float scale_b, const std::string& round, const std::string& overflow,
                               std::uint64_t seed, unsigned threads) {
  kernels::MatmulOptions o;
  o.accumulator = accumulator_model(accumulator, params);
  o.scale_a = scale_a;
  o.scale_b = scale_b;
  o.round = round_named(round);
  o.overflow = overflow_named(overflow);
  o.seed = seed;
  o.threads = threads;
  return o;
}

}  // namespace

void bind_matmul(nb::module_& m) {
  m.def("matmul",
        [](const InArray& a, const std::string& a_format, const InArray& b, const std::string& b_format,
           const std::string& out_format, const std::string& accumulator, const std::map<std::string, int>& params,
           float scale_a, float scale_b, const std::string& round, const std::string& overflow, std::uint64_t seed,
           unsigned threads, std::optional<InArray> c) {
          const Decoded da = decode_matrix(a, a_format, "a");
          const Decoded db = decode_matrix(b, b_format, "b");
          if (da.cols != db.rows)
            value_error(fmt::format("a is {} x {} and b is {} x {}: the inner dimensions differ", da.rows, da.cols,
                                    db.rows, db.cols));
          const std::size_t mm = da.rows, nn = db.cols, kk = da.cols;
          const FormatEntry& of = output_format(out_format);
          const kernels::MatmulOptions o =
              options(accumulator, params, scale_a, scale_b, round, overflow, seed, threads);
          std::vector<double> c_values;
          if (c) {
            const Operand oc = operand(*c, "", "c");
            if (!oc.is_double() || oc.shape != std::vector<std::size_t>{mm, nn})
              value_error(fmt::format("c: a float64 matrix of {} x {}", mm, nn));
            c_values.resize(oc.size);
            kernels::View<const double>(static_cast<const double*>(oc.data), oc.layout()).for_each(
                [&, i = std::size_t{0}](const double& v) mutable { c_values[i++] = v; });
          }
          OutArray y = new_codes(of, {mm, nn});
          const std::size_t item = storage_bytes(of);
          // Rows per band: about 2^26 multiply-adds, and at least 64 rows, so
          // that every worker thread has rows of each band. One band (the
          // whole product) where the result depends on how C is cut: the
          // fp32 GEMM (Eigen sums a band of one row as a GEMV, in another
          // order) and stochastic rounding (bits by C's element index).
          const std::size_t per_row = std::max<std::size_t>(1, nn * std::max<std::size_t>(kk, 1));
          const bool whole = o.round == Round::stochastic || o.accumulator.kind == kernels::Accumulator::fp32;
          const std::size_t band = whole ? std::max<std::size_t>(mm, 1)
                                         : std::max<std::size_t>(64, (std::size_t{1} << 26) / per_row);
          runtime::visit_format(of, [&]<class T>(std::type_identity<T>) {
            using TC = std::conditional_t<std::is_same_v<T, lplab::float32>, float, T>;
            // Every check (sizes, the model against the operands and the output) before any band.
            kernels::check_matmul(mm, nn, kk, da.values.data(), db.values.data(), y.data(), o, da.range,
                                          db.range, kernels::output_precision<TC>());
            without_gil(mm, [&](std::size_t r0, std::size_t r1) {
              kernels::MatmulOptions ob = o;
              if (!c_values.empty()) ob.c_input = c_values.data() + r0 * nn;
              const kernels::MatmulProblem p{r1 - r0, nn, kk, da.values.data() + r0 * kk, db.values.data(),
                                             da.range, db.range};
              kernels::matmul(p, reinterpret_cast<TC*>(static_cast<std::uint8_t*>(y.data()) + r0 * nn * item), ob);
            }, band);
          });
          return y;
        },
        nb::arg("a"), nb::arg("a_format"), nb::arg("b"), nb::arg("b_format"), nb::arg("out_format"),
        nb::arg("accumulator"), nb::arg("params"), nb::arg("scale_a"), nb::arg("scale_b"), nb::arg("round"),
        nb::arg("overflow"), nb::arg("seed"), nb::arg("threads"), nb::arg("c").none(),
        "C = scale_a scale_b A B, summed by the accumulator and rounded into out_format.");

  m.def("matmul_blocks",
        [](const InArray& a_elems, const InArray& a_scales, const std::string& a_elem, const std::string& a_scale,
           int a_block, const std::string& a_rule, bool a_tensor, float a_ts, int a_rows, const InArray& b_elems,
           const InArray& b_scales, const std::string& b_elem, const std::string& b_scale, int b_block,
           const std::string& b_rule, bool b_tensor, float b_ts, int b_rows, const std::string& out_format,
           const std::string& accumulator, const std::map<std::string, int>& params, float scale_a, float scale_b,
           const std::string& round, const std::string& overflow, std::uint64_t seed, unsigned threads) {
          // kernels::matmul(m, n, k, BlockScaledOperand a, BlockScaledOperand b_transposed, c, options), with
          // the operands' formats chosen at run time: the same steps on the same decoded values.
          const ScaledOperand a =
              scaled_operand(a_elems, a_scales, a_elem, a_scale, a_block, a_rule, a_tensor, a_ts, "a", a_rows);
          const ScaledOperand b =
              scaled_operand(b_elems, b_scales, b_elem, b_scale, b_block, b_rule, b_tensor, b_ts, "b_t", b_rows);
          if (a.k != b.k)
            value_error(fmt::format("a is {} x {} and b_t (B transposed) is {} x {}: k differs", a.rows, a.k, b.rows,
                                    b.k));
          const std::size_t mm = a.rows, nn = b.rows, kk = a.k;
          const FormatEntry& of = output_format(out_format);
          const kernels::MatmulOptions o =
              options(accumulator, params, scale_a, scale_b, round, overflow, seed, threads);
          OutArray y = new_codes(of, {mm, nn});
          runtime::visit_format(of, [&]<class T>(std::type_identity<T>) {
            using TC = std::conditional_t<std::is_same_v<T, lplab::float32>, float, T>;
            const float dummy = 0;
            kernels::check_matmul(mm, nn, kk, &dummy, &dummy, y.data(), o, a.scaled_range, b.scaled_range,
                                          kernels::output_precision<TC>());
            if (mm == 0 || nn == 0) return;
            TC* c = static_cast<TC*>(y.data());
            const bool instruction = o.accumulator.kind == kernels::Accumulator::instruction;
            // B (k x n) from B transposed: the instruction takes elements, the
            // other accumulators the dequantized values.
            const std::vector<float>& bt = instruction ? b.elems : b.values;
            std::vector<float> bk(kk * nn);
            for (std::size_t j = 0; j < nn; ++j)
              for (std::size_t t = 0; t < kk; ++t) bk[t * nn + j] = bt[j * kk + t];
            nb::gil_scoped_release release;
            if (instruction) {
              std::vector<double> sum(mm * nn);
              kernels::matmul_block_scaled_instruction(
                  {mm, nn, kk, a.elems.data(), bk.data(), a.elem_range, b.elem_range}, a.scales.data(),
                  b.scales.data(), a.block_size, b.block_size, a.scale_format, b.scale_format, o, sum.data());
              const double scale = static_cast<double>(o.scale_a) * static_cast<double>(o.scale_b) *
                                   kernels::tensor_scale_factor(a.te, a.encode_numerator, a.tensor_scale, b.te,
                                                                        b.encode_numerator, b.tensor_scale);
              kernels::round_sums(sum.data(), c, mm * nn, scale, o);
            } else {
              kernels::matmul_decoded({mm, nn, kk, a.values.data(), bk.data(), a.scaled_range, b.scaled_range},
                                              c, o);
            }
          });
          return y;
        },
        nb::arg("a_elems"), nb::arg("a_scales"), nb::arg("a_elem"), nb::arg("a_scale"), nb::arg("a_block"),
        nb::arg("a_rule"), nb::arg("a_tensor"), nb::arg("a_ts"), nb::arg("a_rows"), nb::arg("b_elems"),
        nb::arg("b_scales"), nb::arg("b_elem"), nb::arg("b_scale"), nb::arg("b_block"), nb::arg("b_rule"),
        nb::arg("b_tensor"), nb::arg("b_ts"), nb::arg("b_rows"), nb::arg("out_format"), nb::arg("accumulator"), nb::arg("params"), nb::arg("scale_a"),
        nb::arg("scale_b"), nb::arg("round"), nb::arg("overflow"), nb::arg("seed"), nb::arg("threads"),
        "C = A B for block-scaled A (m x k) and B transposed (n x k), K-major as block-scaled GEMMs take them.");

  m.def("accumulators",
        []() {
          std::vector<std::tuple<std::string, std::string, std::string>> out;
          for (const kernels::AccumulatorPreset& a : kernels::accumulator_presets())
            out.emplace_back(std::string(a.name), std::string(a.aliases), std::string(a.description));
          return out;
        },
        "Every accumulator preset: (name, aliases, description); the matrix-unit instructions last.");
  m.def("accumulator_parameters",
        []() {
          std::vector<std::string> out;
          for (const kernels::AccumulatorField& f : kernels::accumulator_fields()) out.emplace_back(f.name);
          return out;
        },
        "The names of the tensor-core model's parameters a preset's values can be replaced with.");
  m.def("accumulator_label",
        [](const std::string& name, const std::map<std::string, int>& params) {
          return kernels::accumulator_label(accumulator_model(name, params));
        },
        nb::arg("name"), nb::arg("params"), "The label lplab's tables give the model.");
}

}  // namespace lplab::python
