// lplab's own regression baselines (`lplab regress`): what the formats, the
// kernels and the experiments compute on fixed inputs, recomputed and compared
// with text files under tests/regression that were written deliberately by
// `lplab regress --update`.
//
// A baseline file is a list of entries, one per line, `KEY = VALUE`, in the
// order they are computed, with `#` comments above them. A value is compared
// as text (bit for bit: codes in hex, reals as shortest round-trip decimals),
// or, where summation order may vary between machines, as a real within a
// relative tolerance written after it: `KEY = VALUE ~ 1e-09`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lplab::experiments {

struct GoldenEntry {
  std::string key;    // names the format, policy, input and field
  std::string value;
  double tolerance = 0;  // relative; 0: the text must match exactly
};

struct GoldenFile {
  std::string suite;    // the file's stem: "finfo", "values", ...
  std::string title;    // one line: what the file pins down
  std::vector<std::string> notes;  // further comment lines
  std::vector<GoldenEntry> entries;
};

// The suites, in the order `lplab regress` runs them.
const std::vector<std::string>& golden_suites();
// Computes a suite now; UsageError for an unknown name.
GoldenFile compute_golden(std::string_view suite);

// A baseline file's text, and back. golden_text throws std::logic_error for
// an entry that would not read back the same; parse_golden throws UsageError
// naming `path` and the line for a malformed line or a key given twice.
std::string golden_text(const GoldenFile& f);
GoldenFile parse_golden(std::string_view text, const std::string& suite, const std::string& path);

struct GoldenChange {
  std::string key;
  std::string old_value;  // empty: the entry is new
  std::string new_value;  // empty: the entry is gone
  double tolerance = 0;   // the baseline's tolerance, for the message
};
// Entries of `now` that differ from `baseline` (beyond now's tolerance, or
// with a tolerance other than now's), in the order of `now`, then the
// baseline's entries that `now` lacks.
std::vector<GoldenChange> compare_golden(const GoldenFile& baseline, const GoldenFile& now);

namespace golden_detail {
// The suites' bodies (golden_formats.cpp, golden_kernels.cpp).
GoldenFile finfo_suite();
GoldenFile values_suite();
GoldenFile conversions_suite();
GoldenFile blocks_suite();
GoldenFile kernels_suite();
GoldenFile experiments_suite();
}  // namespace golden_detail

}  // namespace lplab::experiments
