// lplab regress SPEC: the user's regression checks (docs/regress.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lplab/commands.h"
#include "lplab/experiments/spec.h"
#include "lplab/experiments/table.h"
#include "lplab/experiments/text.h"

namespace lplab::tool {
namespace {

// Measured values to 6 significant digits (enough to see how near the limit
// they are); limits exactly, as shortest round-trip decimals (2^-7 is 0.0078125).
std::string measured_text(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : result_number(v); }

std::string milliseconds(double s) { return fmt::format("{:.0f} ms", s * 1e3); }

// JSON has no infinity or NaN: those as the strings "inf", "-inf", "nan".
nlohmann::ordered_json json_number(double v) {
  if (std::isfinite(v)) return v;
  return result_number(v);
}

std::string render(const std::vector<CheckResult>& results, std::size_t failed, Output out) {
  if (out == Output::json) {
    auto checks = nlohmann::ordered_json::array();
    for (const CheckResult& r : results)
      checks.push_back({{"name", r.name},
                        {"line", r.line},
                        {"passed", r.passed},
                        {"metric", r.metric},
                        {"measured", json_number(r.measured)},
                        {"relation", r.relation},
                        {"limit", json_number(r.limit)},
                        {"context", r.context},
                        {"detail", r.detail},
                        {"seconds", r.seconds}});
    nlohmann::ordered_json j = {
        {"checks", checks}, {"total", results.size()}, {"passed", results.size() - failed}, {"failed", failed}};
    return j.dump(2) + "\n";
  }
  if (out == Output::csv) {
    std::string s = "name,line,passed,metric,measured,relation,limit,seconds,context,detail\n";
    for (const CheckResult& r : results)
      s += csv_line({r.name, fmt::format("{}", r.line), r.passed ? "true" : "false", r.metric,
                     result_number(r.measured), r.relation, result_number(r.limit), fmt::format("{:.6f}", r.seconds),
                     r.context, r.detail});
    return s;
  }
  // One line per check, the measured value beside the limit, then what was
  // computed and the worst element on an indented line.
  std::vector<std::string> verdicts;
  std::size_t name_width = 0, verdict_width = 0;
  for (const CheckResult& r : results) {
    verdicts.push_back(
        fmt::format("{} {} {} {}", r.metric, measured_text(r.measured), shown_relation(r), result_number(r.limit)));
    name_width = std::max(name_width, r.name.size());
    verdict_width = std::max(verdict_width, verdicts.back().size());
  }
  std::string s;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const CheckResult& r = results[i];
    s += fmt::format("{}  {:<{}}  {:<{}}  ({}, {})\n", r.passed ? "PASS" : "FAIL", r.name, name_width, verdicts[i],
                     verdict_width, r.context, milliseconds(r.seconds));
    if (!r.detail.empty()) s += fmt::format("      {}\n", r.detail);
  }
  s += fmt::format("{} checks: {} passed, {} failed\n", results.size(), results.size() - failed, failed);
  return s;
}

}  // namespace

int run_regress_spec(const std::string& spec_path, const std::string& junit_path, Output out) {
  // Everything that can be wrong with the request, before any check runs:
  // the spec, the JUnit file's directory, then (in run_spec) every input.
  const Spec spec = load_spec(spec_path);
  if (!junit_path.empty()) check_output_file("--junit", junit_path);
  Progress::install_interrupt_handler();  // Ctrl-C: "interrupted: nothing was written"
  Progress progress("regress: checks");
  const std::vector<CheckResult> results = run_spec(spec, &progress);
  std::size_t failed = 0;
  for (const CheckResult& r : results) failed += r.passed ? 0 : 1;
  print_stdout(render(results, failed, out));
  if (!junit_path.empty()) write_file_atomic(junit_path, junit_xml(spec.stem, results));
  return failed == 0 ? 0 : 1;
}

}  // namespace lplab::tool
