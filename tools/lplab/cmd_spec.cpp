// lplab regress SPEC: the user's regression checks (docs/regress.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <unistd.h>

#include "lplab/commands.h"
#include "lplab/experiments/spec.h"
#include "lplab/experiments/text.h"

namespace lplab::tool {
namespace {

// Measured values to 6 significant digits (enough to see how near the limit
// they are); limits exactly, as shortest round-trip decimals (2^-7 is 0.0078125).
std::string measured_text(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : result_number(v); }

std::string milliseconds(double s) { return fmt::format("{:.0f} ms", s * 1e3); }

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

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
      s += fmt::format("{},{},{},{},{},{},{},{:.6f},{},{}\n", csv_field(r.name), r.line, r.passed ? "true" : "false",
                       r.metric, result_number(r.measured), r.relation, result_number(r.limit), r.seconds,
                       csv_field(r.context), csv_field(r.detail));
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

// The JUnit file can be written, checked before any check runs: not a
// directory (nor a name ending in '/'), in a directory that exists and where
// a file can be created -- write_file_atomic's temporary file beside it,
// created and removed here (a read-only place such as /proc fails).
void check_junit_path(const std::string& path) {
  std::error_code ec;
  if (path.ends_with('/') || std::filesystem::is_directory(path, ec))
    throw UsageError(fmt::format("--junit {}: is a directory; give a file name", path));
  const std::filesystem::path dir = std::filesystem::absolute(path).parent_path();
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError(fmt::format("--junit {}: the directory {} does not exist", path, dir.string()));
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec)) &&
      !std::filesystem::is_regular_file(path, ec))
    throw UsageError(fmt::format("--junit {}: exists and is not a regular file", path));
  std::string probe = (dir / ".lplab-junit-XXXXXX").string();
  const int fd = mkstemp(probe.data());
  if (fd < 0)
    throw UsageError(fmt::format("--junit {}: cannot create a file in {} ({})", path, dir.string(),
                                 std::strerror(errno)));
  close(fd);
  std::remove(probe.c_str());
}

}  // namespace

int run_regress_spec(const std::string& spec_path, const std::string& junit_path, Output out) {
  // Everything that can be wrong with the request, before any check runs:
  // the spec, the JUnit file's directory, then (in run_spec) every input.
  const Spec spec = load_spec(spec_path);
  if (!junit_path.empty()) check_junit_path(junit_path);
  const std::vector<CheckResult> results = run_spec(spec);
  std::size_t failed = 0;
  for (const CheckResult& r : results) failed += r.passed ? 0 : 1;
  std::fputs(render(results, failed, out).c_str(), stdout);
  std::fflush(stdout);
  if (!junit_path.empty()) write_file_atomic(junit_path, junit_xml(spec.stem, results));
  return failed == 0 ? 0 : 1;
}

}  // namespace lplab::tool
