// The baseline files of `lplab regress`: their text form, parsing and
// comparison. The suites themselves are in golden_formats.cpp and
// golden_kernels.cpp.
#include "lplab/regress/golden.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "lplab/lab/vocabulary.h"

namespace lplab::experiments {

const std::vector<std::string>& golden_suites() {
#define LPLAB_GOLDEN_NAME(name, what) #name,
  static const std::vector<std::string> names = {LPLAB_GOLDEN_SUITES(LPLAB_GOLDEN_NAME)};
#undef LPLAB_GOLDEN_NAME
  return names;
}

GoldenFile compute_golden(std::string_view suite) {
#define LPLAB_GOLDEN_CALL(name, what) \
  if (suite == #name) return golden_detail::name##_suite();
  LPLAB_GOLDEN_SUITES(LPLAB_GOLDEN_CALL)
#undef LPLAB_GOLDEN_CALL
  std::string known;
  for (const std::string& s : golden_suites()) known += (known.empty() ? "" : ", ") + s;
  throw UsageError(fmt::format("unknown regression suite '{}' (known: {})", shown(suite), known));
}

std::vector<std::string> select_suites(const std::vector<std::string>& only, std::string_view option) {
  if (only.empty()) return golden_suites();
  for (std::size_t i = 0; i < only.size(); ++i) {
    if (std::find(golden_suites().begin(), golden_suites().end(), only[i]) == golden_suites().end())
      compute_golden(only[i]);  // throws the one-line error naming the known suites
    if (std::find(only.begin(), only.begin() + i, only[i]) != only.begin() + i)
      throw UsageError(fmt::format("{}: {} given twice", option, only[i]));
  }
  return only;
}

namespace {

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

}  // namespace

std::vector<GoldenFile> read_baselines(const std::string& dir, const std::vector<std::string>& suites) {
  const std::filesystem::path root(dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec))
    throw UsageError(fmt::format("{}: no such baseline directory (give --baselines DIR)", dir));
  std::vector<GoldenFile> baselines;
  for (const std::string& s : suites) {
    const std::filesystem::path path = root / (s + ".txt");
    baselines.push_back(parse_golden(read_baseline(path), s, path.string()));
    if (baselines.back().entries.empty())
      throw UsageError(fmt::format("{}: the baseline has no entries", path.string()));
  }
  return baselines;
}

namespace {

constexpr std::string_view kSeparator = " = ";
constexpr std::string_view kTolerance = " ~ ";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Within a relative tolerance: |a - b| <= tol * max(|a|, |b|); equal texts
// (infinities, NaN) always match.
bool close(const std::string& a, const std::string& b, double tol) {
  if (a == b) return true;
  if (tol <= 0) return false;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double x = std::strtod(a.c_str(), &end_a);
  const double y = std::strtod(b.c_str(), &end_b);
  if (*end_a != '\0' || *end_b != '\0' || !std::isfinite(x) || !std::isfinite(y)) return false;
  return std::fabs(x - y) <= tol * std::fmax(std::fabs(x), std::fabs(y));
}

}  // namespace

std::string golden_text(const GoldenFile& f) {
  std::string out = fmt::format("# lplab regression baseline: {} -- {}\n", f.suite, f.title);
  for (const std::string& n : f.notes) out += "# " + n + "\n";
  out += "# Written by `lplab regress --update`; `lplab regress` compares against it.\n";
  for (const GoldenEntry& e : f.entries) {
    // An entry that would not read back the same is a bug of its suite: a
    // baseline written from it would fail forever.
    const bool key_ok = !e.key.empty() && e.key.find(kSeparator) == std::string::npos &&
                        e.key.find('\n') == std::string::npos && trim(e.key) == e.key &&
                        e.key.front() != '#';
    const bool value_ok = e.value.find(kTolerance) == std::string::npos &&
                          e.value.find('\n') == std::string::npos && trim(e.value) == e.value;
    if (!key_ok || !value_ok)
      throw std::logic_error(fmt::format("regress suite {}: entry '{} = {}' cannot be written as text",
                                         f.suite, e.key, e.value));
    out += e.key;
    out += kSeparator;
    out += e.value;
    if (e.tolerance > 0) out += fmt::format("{}{}", kTolerance, e.tolerance);
    out += '\n';
  }
  return out;
}

GoldenFile parse_golden(std::string_view text, const std::string& suite, const std::string& path) {
  GoldenFile f;
  f.suite = suite;
  std::unordered_map<std::string, int> seen;
  int line_no = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view raw = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    // "KEY = VALUE", or "KEY =" for an empty value (the line's trailing
    // space is trimmed).
    auto sep = line.find(kSeparator);
    if (sep == std::string_view::npos && line.ends_with(" =")) sep = line.size() - 2;
    if (sep == std::string_view::npos || sep == 0)
      throw UsageError(fmt::format("{}:{}: expected 'KEY = VALUE'", path, line_no));
    GoldenEntry e;
    e.key = std::string(trim(line.substr(0, sep)));
    std::string_view value = line.substr(std::min(line.size(), sep + kSeparator.size()));
    if (const auto t = value.rfind(kTolerance); t != std::string_view::npos) {
      const std::string tol(trim(value.substr(t + kTolerance.size())));
      try {
        e.tolerance = parse_number(tol);
      } catch (const UsageError&) {
        throw UsageError(fmt::format("{}:{}: tolerance '{}' is not a number", path, line_no, tol));
      }
      if (!(e.tolerance > 0 && e.tolerance < 1))
        throw UsageError(fmt::format("{}:{}: tolerance {} is not in (0, 1)", path, line_no, tol));
      value = value.substr(0, t);
    }
    e.value = std::string(trim(value));
    if (const auto [it, fresh] = seen.emplace(e.key, line_no); !fresh)
      throw UsageError(fmt::format("{}:{}: key '{}' given twice (first on line {})", path, line_no,
                                   e.key, it->second));
    f.entries.push_back(std::move(e));
  }
  return f;
}

std::vector<GoldenChange> compare_golden(const GoldenFile& baseline, const GoldenFile& now) {
  std::unordered_map<std::string_view, const GoldenEntry*> old;
  for (const GoldenEntry& e : baseline.entries) old.emplace(e.key, &e);
  std::vector<GoldenChange> changes;
  std::unordered_map<std::string_view, bool> present;
  for (const GoldenEntry& e : now.entries) {
    present.emplace(e.key, true);
    const auto it = old.find(e.key);
    if (it == old.end()) {
      changes.push_back({e.key, "", e.value, 0, GoldenChange::Kind::added});
    } else if (it->second->tolerance != e.tolerance) {
      // The tolerance is the code's, not the file's: a baseline cannot widen
      // it, and a change of it in the code is a change to review.
      auto with_tol = [](const GoldenEntry& g) {
        return g.tolerance > 0 ? fmt::format("{}{}{}", g.value, kTolerance, g.tolerance)
                               : g.value + " (exact)";
      };
      changes.push_back({e.key, with_tol(*it->second), with_tol(e), 0});
    } else if (!close(it->second->value, e.value, e.tolerance)) {
      changes.push_back({e.key, it->second->value, e.value, e.tolerance});
    }
  }
  for (const GoldenEntry& e : baseline.entries)
    if (!present.contains(e.key)) changes.push_back({e.key, e.value, "", e.tolerance, GoldenChange::Kind::removed});
  return changes;
}

}  // namespace lplab::experiments
