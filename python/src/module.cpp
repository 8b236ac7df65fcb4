// lplab._lplab: the extension module of the Python package. The Python layer
// (python/lplab/__init__.py) normalises arrays and names its results; every
// computation is here, in the same compiled kernels the C++ API runs.
//
// Errors: a UsageError or std::invalid_argument (a bad name, shape, dtype or
// option) becomes ValueError with the one-line message `lplab` prints after
// "lplab: error: "; an interrupted run becomes KeyboardInterrupt.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/pair.h>

#include <fmt/format.h>

#include "arrays.h"
#include "lplab/lab/experiment.h"
#include "lplab/runtime/text.h"
#include "lplab/kernels/cvt_rs.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/four_over_six.h"
#include "lplab/kernels/integer_scaling.h"
#include "lplab/kernels/scaling.h"
#include "lplab/kernels/targets.h"

namespace lplab::python {

namespace {

std::string finfo_repr(const FinfoValues& r, const std::string& name) {
  return fmt::format("finfo(name={}, bits={}, max={}, min={}, eps={}, smallest_normal={}, smallest_subnormal={}, "
                     "has_infinity={}, has_nan={})",
                     name, r.bits, runtime::py_repr(r.max), runtime::py_repr(r.min),
                     runtime::py_repr(r.eps), runtime::py_repr(r.smallest_normal),
                     runtime::py_repr(r.smallest_subnormal), r.has_infinity ? "True" : "False",
                     r.has_nan ? "True" : "False");
}

// finfo with the format's name attached.
struct Finfo : FinfoValues {
  std::string name;
  std::string description;
};

// One field of finfo as a read-only attribute: its value (an encoding as its
// text, "ieee"; a code as an int).
template <FinfoKind K, class M>
void bind_finfo_field(nb::class_<Finfo>& c, const char* name, M FinfoValues::*member) {
  if constexpr (K == FinfoKind::encoding)
    c.def_prop_ro(name, [member](const Finfo& f) { return std::string(encoding_name(f.*member)); });
  else
    c.def_ro(name, member);
}

}  // namespace

namespace {

template <class E>
std::vector<std::string> names_of() {
  std::vector<std::string> out;
  for (const EnumEntry<E>& e : enum_entries<E>()) out.emplace_back(e.name);
  return out;
}

}  // namespace

void bind_formats(nb::module_& m) {
  // Every enumeration's names from its one declaration (formats/enum_table.h):
  // the package's docstrings list them from here.
  m.def(
      "enum_names",
      [] {
        nb::dict d;
        d["round"] = names_of<Round>();
        d["overflow"] = names_of<Overflow>();
        d["unary"] = names_of<kernels::Unary>();
        d["binary"] = names_of<kernels::Binary>();
        d["compute"] = names_of<kernels::Compute>();
        d["accumulate"] = names_of<kernels::Accumulate>();
        d["rule"] = names_of<kernels::ScaleRule>();
        d["amax"] = names_of<kernels::AmaxSource>();
        d["tile_rule"] = names_of<kernels::TileRule>();
        d["cvt_rs_form"] = names_of<kernels::CvtRsForm>();
        d["rbits_stream"] = names_of<kernels::RbitsStream>();
        d["four_over_six_metric"] = names_of<kernels::FourOverSixMetric>();
        d["four_over_six_order"] = names_of<kernels::FourOverSixOrder>();
        d["integer_rule"] = names_of<kernels::IntegerRule>();
        d["checkpoint"] = names_of<kernels::IntegerCheckpoint>();
        return d;
      },
      "The names of each enumeration the functions take (round, overflow, unary, binary, compute, accumulate, "
      "rule, amax, cvt_rs_form, rbits_stream, four_over_six_metric, four_over_six_order), in declaration order.");
  nb::class_<Finfo> cls(m, "finfo",
                        "Every field of torch.finfo and numpy/ml_dtypes finfo (resolution as resolution_torch and "
                        "resolution_numpy), plus the NaN/Inf codes, the nearest-even overflow threshold, code and "
                        "value counts and binades.");
  cls.def("__init__",
          [](Finfo* self, const std::string& format) {
            const FormatEntry& e = format_named(format);
            new (self) Finfo{e.info, std::string(e.name), std::string(e.description)};
          },
          nb::arg("format"), "The finfo of a format by any name lplab takes (\"bf16\", \"e4m3\", \"e3m3:bias=3\").")
      .def_ro("name", &Finfo::name)
      .def_ro("description", &Finfo::description);
  // Every field of finfo (LPLAB_FINFO_FIELDS, formats/finfo_values.h), in its
  // order: a field added there is an attribute here.
#define LPLAB_BIND_FINFO_FIELD(name, kind, doc) bind_finfo_field<FinfoKind::kind>(cls, #name, &FinfoValues::name);
  LPLAB_FINFO_FIELDS(LPLAB_BIND_FINFO_FIELD)
#undef LPLAB_BIND_FINFO_FIELD
  cls.def("__repr__", [](const Finfo& f) { return finfo_repr(f, f.name); });

  m.def("formats",
        []() {
          std::vector<std::pair<std::string, std::string>> out;
          for (const FormatEntry& e : runtime::formats())
            out.emplace_back(std::string(e.name), std::string(e.description));
          return out;
        },
        "The catalog's formats in order: (name, description) pairs.");
  m.def("format_name", [](const std::string& name) { return std::string(format_named(name).name); },
        nb::arg("name"),
        "The canonical name of a format (\"bf16\" -> \"bfloat16\"; a layout such as \"e3m3:bias=3\" names a "
        "declared format). ValueError for an unknown name, with suggestions.");
  m.def("storage_bits", [](const std::string& name) { return 8 * storage_bytes(format_named(name)); },
        nb::arg("name"), "Bits a code of the format takes in an array (8, 16, 32 or 64).");
  def_public(m, "simd_target", []() { return std::string(kernels::current_simd_target().name); },
        "The SIMD target the kernels run on this CPU (LPLAB_SIMD_TARGET may choose a lower one).");
  def_public(m, "simd_targets",
        []() {
          std::vector<std::string> out;
          for (const kernels::SimdTarget& t : kernels::simd_targets()) out.emplace_back(t.name);
          return out;
        },
        "Every SIMD target this CPU runs, best first.");
  def_public(m, "cpu_extensions", []() { return kernels::cpu_extensions(); },
        "The instructions beyond the SIMD target's own that the kernels use now (\"AVX512_VBMI\", \"AVX512_FP16\", "
        "\"AVX512_BF16\"): none when "
        "LPLAB_CPU_EXTENSIONS=off or the target is forced below their base (docs/kernels.md, \"Beyond Highway's "
        "targets\").");
  def_public(m, "force_simd_target",
        [](const std::string& name) {
          if (name == "auto") return kernels::force_simd_target(0);
          for (const kernels::SimdTarget& t : kernels::simd_targets())
            if (name == t.name) return kernels::force_simd_target(t.id);
          value_error(fmt::format("no SIMD target '{}' on this CPU", name));
        },
        nb::arg("name"), "Runs the kernels on this target from now on (\"auto\": the best again); every target gives the same bits.");
  def_public(m, "cpu_model", &kernels::cpu_model, "The CPU's model name.");
}

}  // namespace lplab::python

NB_MODULE(_lplab, m) {
  namespace nb = nanobind;
  using namespace lplab::python;
  m.doc() = "lplab's compiled kernels and laboratory (use the package lplab, which wraps this module)";
  m.attr("__version__") = LPLAB_VERSION;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const lplab::runtime::UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const lplab::experiments::Interrupted&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
  bind_formats(m);
  bind_convert(m);
  bind_scaling(m);
  bind_integer_scaling(m);
  bind_elementwise(m);
  bind_matmul(m);
  bind_lab(m);
}
