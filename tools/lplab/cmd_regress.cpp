// lplab regress: precision regression checks. Without a spec, lplab's own
// baselines are recomputed and what changed is printed field by field
// (`--update` rewrites them); with a spec (docs/regress.md), the user's checks
// run and each prints its measured value beside its limit, optionally as
// JUnit XML.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/regress/golden.h"
#include "lplab/experiments/runner.h"
#include "lplab/regress/spec.h"
#include "lplab/lab/table.h"
#include "lplab/runtime/text.h"

namespace lplab::tool {
namespace {

constexpr std::size_t kShown = 25;  // changes printed per suite; the rest are counted

// lplab's own baselines: share/lplab/regression beside the installed tool
// (bin/../share), which in a build tree is a link to the source tree's
// tests/regression (CMakeLists.txt makes it), so that --update rewrites them
// there. Nothing of the source tree is compiled into the tool.
std::string default_baselines() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "share/lplab/regression";
  return (exe.parent_path().parent_path() / "share" / "lplab" / "regression").string();
}

std::string count_text(std::size_t changed, std::size_t added, std::size_t removed) {
  std::vector<std::string> parts;
  if (changed) parts.push_back(fmt::format("{} changed", changed));
  if (added) parts.push_back(fmt::format("{} new", added));
  if (removed) parts.push_back(fmt::format("{} no longer computed", removed));
  return fmt::format("{}", fmt::join(parts, ", "));
}


int run_regress_golden(const std::string& dir, bool update, const std::vector<std::string>& only) {
  const std::vector<std::string> suites = select_suites(only);  // every name is checked before any work
  const std::filesystem::path root(dir);
  std::error_code ec;
  if (update && std::filesystem::exists(root, ec) && !std::filesystem::is_directory(root, ec))
    throw UsageError(fmt::format("{}: not a directory", dir));
  // Without --update, read and parse every baseline first (read_baselines
  // refuses a missing directory, a broken file, an empty baseline): a bad
  // one stops the run before any suite is computed.
  const std::vector<GoldenFile> baselines = update ? std::vector<GoldenFile>{} : read_baselines(dir, suites);

  // Ctrl-C between suites stops the run ("interrupted: nothing was
  // written"): --update computes every suite before it writes any.
  Progress::install_interrupt_handler();
  Progress progress("regress: suites");
  progress.set_total(suites.size());
  const auto compute = [&progress](const std::string& s) {
    GoldenFile now = compute_golden(s);
    progress.step();  // throws Interrupted after a Ctrl-C
    return now;
  };

  if (update) {
    std::vector<GoldenFile> computed;
    for (const std::string& s : suites) computed.push_back(compute(s));
    progress.finish();
    std::filesystem::create_directories(root, ec);
    if (ec) throw UsageError(fmt::format("{}: cannot create the directory ({})", dir, ec.message()));
    for (std::size_t i = 0; i < suites.size(); ++i) {
      const std::filesystem::path path = root / (suites[i] + ".txt");
      write_file_atomic(path.string(), golden_text(computed[i]));
      fmt::print("wrote {} ({} entries)\n", path.string(), computed[i].entries.size());
    }
    return 0;
  }

  std::size_t changed_suites = 0, changes_total = 0, entries_total = 0;
  for (std::size_t i = 0; i < suites.size(); ++i) {
    const GoldenFile now = compute(suites[i]);
    progress.finish();  // the suite's line replaces the progress line
    const std::vector<GoldenChange> changes = compare_golden(baselines[i], now);
    entries_total += now.entries.size();
    if (changes.empty()) {
      fmt::print("ok    {:<12} {} entries unchanged\n", suites[i], now.entries.size());
      continue;
    }
    ++changed_suites;
    changes_total += changes.size();
    const std::size_t added = std::count_if(changes.begin(), changes.end(),
                                            [](const GoldenChange& c) { return c.kind == GoldenChange::Kind::added; });
    const std::size_t removed = std::count_if(changes.begin(), changes.end(),
                                              [](const GoldenChange& c) { return c.kind == GoldenChange::Kind::removed; });
    fmt::print("FAIL  {:<12} {} of {} entries ({})\n", suites[i],
               count_text(changes.size() - added - removed, added, removed), now.entries.size(),
               (root / (suites[i] + ".txt")).string());
    for (std::size_t k = 0; k < changes.size() && k < kShown; ++k) {
      const GoldenChange& c = changes[k];
      fmt::print("  {}\n", c.key);
      if (c.kind == GoldenChange::Kind::added) {
        fmt::print("    new entry: {}\n", c.new_value);
      } else if (c.kind == GoldenChange::Kind::removed) {
        fmt::print("    no longer computed; baseline: {}\n", c.old_value);
      } else {
        fmt::print("    baseline: {}{}\n", c.old_value,
                   c.tolerance > 0 ? fmt::format("  (relative tolerance {})", c.tolerance) : "");
        fmt::print("    now:      {}\n", c.new_value);
      }
    }
    if (changes.size() > kShown) fmt::print("  ... and {} more\n", changes.size() - kShown);
  }
  if (changed_suites == 0) {
    fmt::print("lplab regress: all {} entries of {} suites match the baselines in {}\n", entries_total,
               suites.size(), dir);
    return 0;
  }
  fmt::print("lplab regress: {} entries differ in {} of {} suites; if the change is intended, "
             "rewrite the baselines with `lplab regress --update` and review the diff\n",
             changes_total, changed_suites, suites.size());
  return 1;
}


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
    // A name is UTF-8 (parse_spec refuses one that is not); a path in the
    // context may hold any bytes: those that are not UTF-8 become U+FFFD,
    // as in the JUnit file, rather than an exception after the checks ran.
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
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


int run_regress_spec(const std::string& spec_path, const Args& a, Output out) {
  // Everything that can be wrong with the request, before any check runs:
  // the spec, the JUnit file (never the spec or one of its inputs), then (in
  // run_spec) every input.
  const Spec spec = load_spec(spec_path);
  std::vector<std::string> inputs = input_files(spec);
  inputs.push_back(spec_path);
  const std::string junit_path = output_file(a, "--junit", inputs);
  Progress::install_interrupt_handler();  // Ctrl-C: "interrupted: nothing was written"
  Progress progress("regress: checks");
  const std::vector<CheckResult> results = run_spec(spec, &progress);
  std::size_t failed = 0;
  for (const CheckResult& r : results) failed += r.passed ? 0 : 1;
  print_stdout(render(results, failed, out));
  if (!junit_path.empty()) write_file_atomic(junit_path, junit_xml(spec.stem, results));
  return failed == 0 ? 0 : 1;
}

int regress_command(const Args& a) {
  const std::string spec = a.value("spec");
  if (spec.empty()) {
    if (a.given("--junit")) throw UsageError("--junit needs a spec: lplab regress SPEC --junit FILE");
    if (a.given("--output")) throw UsageError("--output goes with a spec; lplab's own baselines print a diff");
    return run_regress_golden(a.value("--baselines", default_baselines()), a.given("--update"), a.values("--only"));
  }
  const Output out = output_of(a);
  if (a.given("--update")) throw UsageError("--update rewrites lplab's own baselines; it takes no spec");
  if (a.given("--only")) throw UsageError("--only selects lplab's own suites; it takes no spec");
  if (a.given("--baselines")) throw UsageError("--baselines is for lplab's own suites; it takes no spec");
  return run_regress_spec(spec, a, out);
}

}  // namespace

LPLAB_COMMAND(Command{
    .name = "regress",
    .help = "Precision regression checks: lplab's own baselines, or the checks of a spec file",
    .args = {positional("spec", "A YAML or JSON spec of checks (docs/regress.md); without one, lplab's own "
                                "baselines are recomputed and compared"),
             option("--junit", "With a spec: also write JUnit XML to this file"),
             output_option("With a spec: table, csv or json"),
             flag("--update", "Rewrite lplab's own baselines with what this build computes"),
             option("--baselines", "The baseline directory (default: share/lplab/regression beside the tool; in a build tree, the source tree's tests/regression)"),
             option("--only", fmt::format("Baseline suites to run: {}", fmt::join(golden_suites(), ", ")), true)},
    .run = regress_command,
    // Its 1 means a failed check: a broken tool must not look like one to a CI job.
    .internal_error_status = 3});

}  // namespace lplab::tool
