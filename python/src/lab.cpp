// The laboratory from Python: the experiments (lplab.run), the report
// (lplab.report) and the regression checks (lplab.regress), each validated
// before any work as the tool validates them, run without the GIL, with
// Ctrl-C stopping them between steps (KeyboardInterrupt; nothing written).
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <csignal>
#include <mutex>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "arrays.h"
#include "lplab/regress/golden.h"
#include "lplab/report/report.h"
#include "lplab/experiments/runner.h"
#include "lplab/regress/spec.h"

namespace lplab::python {

namespace {

using experiments::Progress;

// The experiments' SIGINT handler for the length of a call, then Python's
// again: Ctrl-C sets the flag Progress::step() reads, and the run stops with
// Interrupted (KeyboardInterrupt in Python). Calls may overlap (they release
// the GIL): the first to enter saves Python's handlers and installs lplab's,
// the last to leave restores them and clears the flag.
class InterruptScope {
 public:
  InterruptScope() {
    const std::lock_guard<std::mutex> lock(mutex());
    if (active()++ == 0) {
      sigaction(SIGINT, nullptr, &saved_int());
      sigaction(SIGTERM, nullptr, &saved_term());
      Progress::clear_interrupt();
      Progress::install_interrupt_handler();
    }
  }
  ~InterruptScope() {
    const std::lock_guard<std::mutex> lock(mutex());
    if (--active() == 0) {
      sigaction(SIGINT, &saved_int(), nullptr);
      sigaction(SIGTERM, &saved_term(), nullptr);
      Progress::clear_interrupt();
    }
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& active() {
    static int n = 0;
    return n;
  }
  static struct sigaction& saved_int() {
    static struct sigaction s {};
    return s;
  }
  static struct sigaction& saved_term() {
    static struct sigaction s {};
    return s;
  }
};

nb::object cell_object(const experiments::Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return nb::int_(*i);
  if (const auto* d = std::get_if<double>(&c)) return nb::float_(*d);
  if (const auto* s = std::get_if<std::string>(&c)) return nb::str(s->c_str(), s->size());
  return nb::none();
}

// A table as a dict: id, title, columns [(name, unit)], rows [tuple], notes,
// and its text and CSV as the tool writes them.
nb::dict table_dict(const experiments::Table& t) {
  nb::dict d;
  d["id"] = t.id;
  d["title"] = t.title;
  nb::list columns;
  for (const experiments::Column& c : t.columns) columns.append(nb::make_tuple(c.name, c.unit));
  d["columns"] = columns;
  nb::list rows;
  for (const experiments::Row& r : t.rows) {
    nb::list cells;
    for (const experiments::Cell& c : r.cells) cells.append(cell_object(c));
    rows.append(nb::tuple(cells));
  }
  d["rows"] = rows;
  nb::list notes;
  for (const std::string& n : t.notes) notes.append(n);
  d["notes"] = notes;
  d["text"] = experiments::to_text(t);
  d["csv"] = experiments::to_csv(t);
  return d;
}

nb::list tables_list(const std::vector<experiments::Table>& tables) {
  nb::list out;
  for (const experiments::Table& t : tables) out.append(table_dict(t));
  return out;
}

const char* param_type_name(experiments::ParamType t) {
  switch (t) {
    case experiments::ParamType::integer: return "integer";
    case experiments::ParamType::real: return "real";
    case experiments::ParamType::text: return "text";
    case experiments::ParamType::list: return "list";
  }
  return "?";
}

nb::dict check_dict(const experiments::CheckResult& r) {
  nb::dict d;
  d["name"] = r.name;
  d["line"] = r.line;
  d["passed"] = r.passed;
  d["metric"] = r.metric;
  d["measured"] = r.measured;
  d["relation"] = experiments::shown_relation(r);
  d["limit"] = r.limit;
  d["context"] = r.context;
  d["detail"] = r.detail;
  d["seconds"] = r.seconds;
  return d;
}

void bind_experiments(nb::module_& m) {
  m.def("experiments",
        []() {
          nb::list out;
          for (const experiments::Experiment& e : experiments::experiments()) {
            nb::dict d;
            d["name"] = e.name;
            d["summary"] = e.summary;
            nb::list params;
            for (const experiments::ParamSpec& p : e.params) {
              nb::dict pd;
              pd["name"] = p.name;
              pd["type"] = param_type_name(p.type);
              pd["default"] = p.default_value;
              pd["min"] = p.min;
              pd["max"] = p.max;
              pd["help"] = p.help;
              pd["choices"] = p.choices;
              params.append(pd);
            }
            d["params"] = params;
            d["default_dtypes"] = e.default_dtypes;
            d["takes_input"] = e.takes_input;
            out.append(d);
          }
          return out;
        },
        "Every experiment: name, summary, parameters (name, type, default, range, help, choices), default "
        "dtypes, whether it takes input values.");

  m.def("run",
        [](const std::string& experiment, const std::vector<std::string>& dtypes,
           const std::map<std::string, std::string>& params, const std::string& input_path,
           std::optional<InArray> input, const std::string& input_format, const std::string& input_dtype,
           const std::string& shard, unsigned threads) {
          experiments::RunRequest request;
          request.experiment = experiment;
          request.dtypes = dtypes;
          request.params = params;
          request.input = input_path;
          request.input_dtype = input_dtype;
          request.shard = shard;
          request.threads = threads;
          experiments::PreparedRun run = experiments::prepare(request);  // every check before any work
          if (input) {
            if (!run.experiment->takes_input) value_error(fmt::format("{} takes no input", run.experiment->name));
            const Operand op = operand(*input, input_format, "input");
            if (op.size == 0) value_error("input: the array is empty");
            run.input.resize(op.size);
            if (op.is_double() || op.compiled()) {
              // Exact: every compiled format's values are doubles.
              std::size_t i = 0;
              if (op.is_double()) {
                kernels::View<const double>(static_cast<const double*>(op.data), op.layout()).for_each(
                    [&](const double& v) { run.input[i++] = v; });
              } else {
                std::vector<float> f(op.size);
                convert_into(op, float32_entry(), f.data(), {});
                for (float v : f) run.input[i++] = v;
              }
            } else {
              value_error("input: float64, float32 or a compiled format's values");
            }
            run.input_name = "array";
            run.input_dtype = op.is_double() ? "float64" : std::string(op.format->name);
          }
          experiments::RunResult result;
          {
            InterruptScope interrupts;
            nb::gil_scoped_release release;
            Progress progress(run.experiment->name);
            result = experiments::execute(run, progress);
            progress.finish();
          }
          return tables_list(result.tables);
        },
        nb::arg("experiment"), nb::arg("dtypes"), nb::arg("params"), nb::arg("input_path"), nb::arg("input").none(),
        nb::arg("input_format"), nb::arg("input_dtype"), nb::arg("shard"), nb::arg("threads"),
        "One experiment's tables; input values from a .npy path or an array (float64, float32 or a compiled "
        "format's codes with input_format).");
}

void bind_report(nb::module_& m) {
  m.def("report",
        [](const std::string& dir, bool quick, unsigned threads, bool progress) {
          experiments::check_report_dir(dir);
          experiments::ReportOptions o;
          o.dir = dir;
          o.quick = quick;
          o.threads = threads;
          o.progress = progress;
          o.command = fmt::format("lplab.report(out={:?}, quick={})", dir, quick ? "True" : "False");
          experiments::Table summary;
          {
            InterruptScope interrupts;
            nb::gil_scoped_release release;
            summary = experiments::write_report(o);
          }
          return table_dict(summary);
        },
        nb::arg("dir"), nb::arg("quick"), nb::arg("threads"), nb::arg("progress"),
        "Runs the report suite and writes the report directory; returns its summary table.");
}

void bind_regress(nb::module_& m) {
  m.def("regress_spec",
        [](const std::string& spec_path, const std::string& junit) {
          const experiments::Spec spec = experiments::load_spec(spec_path);
          if (!junit.empty()) {  // never the spec or one of its inputs
            std::vector<std::string> inputs = experiments::input_files(spec);
            inputs.push_back(spec_path);
            experiments::check_output_file("junit", junit, inputs);
          }
          std::vector<experiments::CheckResult> results;
          {
            InterruptScope interrupts;
            nb::gil_scoped_release release;
            Progress progress("regress: checks");
            results = experiments::run_spec(spec, &progress);
            progress.finish();
            if (!junit.empty()) experiments::write_file_atomic(junit, experiments::junit_xml(spec.stem, results));
          }
          nb::list out;
          for (const experiments::CheckResult& r : results) out.append(check_dict(r));
          return out;
        },
        nb::arg("spec"), nb::arg("junit"), "The checks of a spec file (docs/regress.md), each a dict.");

  m.def("regress_baselines",
        [](const std::string& dir, const std::vector<std::string>& only) {
          const std::vector<std::string> suites = experiments::select_suites(only, "only");
          const std::vector<experiments::GoldenFile> baselines = experiments::read_baselines(dir, suites);
          nb::list out;
          for (std::size_t i = 0; i < suites.size(); ++i) {
            experiments::GoldenFile now;
            std::vector<experiments::GoldenChange> changes;
            {
              InterruptScope interrupts;
              nb::gil_scoped_release release;
              now = experiments::compute_golden(suites[i]);
              if (Progress::interrupted()) throw experiments::Interrupted();
              changes = experiments::compare_golden(baselines[i], now);
            }
            nb::list ch;
            for (const experiments::GoldenChange& c : changes) {
              nb::dict d;
              d["key"] = c.key;
              d["baseline"] = c.kind == experiments::GoldenChange::Kind::added ? nb::object(nb::none())
                                                                             : nb::cast(c.old_value);
              d["now"] = c.kind == experiments::GoldenChange::Kind::removed ? nb::object(nb::none())
                                                                            : nb::cast(c.new_value);
              d["tolerance"] = c.tolerance;
              ch.append(d);
            }
            nb::dict d;
            d["suite"] = suites[i];
            d["entries"] = now.entries.size();
            d["changes"] = ch;
            out.append(d);
          }
          return out;
        },
        nb::arg("dir"), nb::arg("only"),
        "lplab's own baselines recomputed and compared: per suite, its entry count and the changed entries.");
}

}  // namespace

// The laboratory: experiments and their runs, the report, regression checks.
void bind_lab(nb::module_& m) {
  bind_experiments(m);
  bind_report(m);
  bind_regress(m);
}

}  // namespace lplab::python
