// `lplab regress` without a spec: recomputes lplab's own baselines and prints
// what changed, field by field; `--update` rewrites them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lplab/commands.h"
#include "lplab/experiments/golden.h"

namespace lplab::tool {
namespace {

constexpr std::size_t kShown = 25;  // changes printed per suite; the rest are counted

// Baselines are a few hundred kilobytes; anything past this is not one.
constexpr std::uintmax_t kMaxBaselineBytes = std::uintmax_t{64} << 20;

std::string read_baseline(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw UsageError(fmt::format("{}: no baseline file here (write it with `lplab regress --update`)",
                                 path.string()));
  if (std::filesystem::file_size(path, ec) > kMaxBaselineBytes || ec)
    throw UsageError(fmt::format("{}: not a baseline (larger than 64 MiB, or unreadable)", path.string()));
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in || in.bad()) throw UsageError(fmt::format("{}: cannot read the baseline", path.string()));
  return s.str();
}

std::string count_text(std::size_t changed, std::size_t added, std::size_t removed) {
  std::vector<std::string> parts;
  if (changed) parts.push_back(fmt::format("{} changed", changed));
  if (added) parts.push_back(fmt::format("{} new", added));
  if (removed) parts.push_back(fmt::format("{} no longer computed", removed));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

int run_regress_golden(const std::string& dir, bool update, const std::vector<std::string>& only) {
  const std::vector<std::string>& suites = only.empty() ? golden_suites() : only;
  for (const std::string& s : suites)  // every name is checked before any work
    if (std::find(golden_suites().begin(), golden_suites().end(), s) == golden_suites().end())
      compute_golden(s);  // throws the one-line error naming the known suites
  for (std::size_t i = 0; i < suites.size(); ++i)
    if (std::find(suites.begin(), suites.begin() + i, suites[i]) != suites.begin() + i)
      throw UsageError(fmt::format("--only: {} given twice", suites[i]));
  const std::filesystem::path root(dir);
  std::error_code ec;
  if (!update && !std::filesystem::is_directory(root, ec))
    throw UsageError(fmt::format("{}: no such baseline directory (give --baselines DIR)", dir));

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
    if (std::filesystem::exists(root, ec) && !std::filesystem::is_directory(root, ec))
      throw UsageError(fmt::format("{}: not a directory", dir));
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

  // Read and parse every baseline first: a broken file stops the run before
  // any suite is computed.
  std::vector<GoldenFile> baselines;
  for (const std::string& s : suites) {
    const std::filesystem::path path = root / (s + ".txt");
    baselines.push_back(parse_golden(read_baseline(path), s, path.string()));
    if (baselines.back().entries.empty())
      throw UsageError(fmt::format("{}: the baseline has no entries", path.string()));
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
                                            [](const GoldenChange& c) { return c.old_value.empty(); });
    const std::size_t removed = std::count_if(changes.begin(), changes.end(),
                                              [](const GoldenChange& c) { return c.new_value.empty(); });
    fmt::print("FAIL  {:<12} {} of {} entries ({})\n", suites[i],
               count_text(changes.size() - added - removed, added, removed), now.entries.size(),
               (root / (suites[i] + ".txt")).string());
    for (std::size_t k = 0; k < changes.size() && k < kShown; ++k) {
      const GoldenChange& c = changes[k];
      fmt::print("  {}\n", c.key);
      if (c.old_value.empty()) {
        fmt::print("    new entry: {}\n", c.new_value);
      } else if (c.new_value.empty()) {
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

}  // namespace lplab::tool
