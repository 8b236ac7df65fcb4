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

// The suites, declared once in the order `lplab regress` runs them:
// X(name, what it pins down). A suite's body is golden_detail::<name>_suite
// (golden_formats.cpp, golden_kernels.cpp).
#define LPLAB_GOLDEN_SUITES(X)                                                        \
  X(finfo, "every field of finfo for every format")                                   \
  X(values, "every code's value and text, every format")                             \
  X(conversions, "conversions of fixed inputs under every policy")                   \
  X(blocks, "block, tensor and tile scaling of fixed tensors")                       \
  X(kernels, "the kernels' elementwise ops, reductions and matmul accumulators")     \
  X(experiments, "the deterministic experiments' tables on fixed seeds")

// Their names, in that order.
const std::vector<std::string>& golden_suites();
// Computes a suite now; UsageError for an unknown name.
GoldenFile compute_golden(std::string_view suite);
// The suites a command names: every suite when `only` is empty, else each
// named once and known (UsageError naming `option` otherwise, before any work).
std::vector<std::string> select_suites(const std::vector<std::string>& only, std::string_view option = "--only");
// The baselines of `suites` in `dir`, every one read and parsed before any is
// computed; UsageError for a missing directory or file, a file over 64 MiB
// (no baseline is), an unreadable or malformed one, or one with no entries.
std::vector<GoldenFile> read_baselines(const std::string& dir, const std::vector<std::string>& suites);

// A baseline file's text, and back. golden_text throws std::logic_error for
// an entry that would not read back the same; parse_golden throws UsageError
// naming `path` and the line for a malformed line or a key given twice.
std::string golden_text(const GoldenFile& f);
GoldenFile parse_golden(std::string_view text, const std::string& suite, const std::string& path);

struct GoldenChange {
  enum class Kind { changed, added, removed };
  std::string key;
  std::string old_value;  // the baseline's (empty where the entry is new)
  std::string new_value;  // now's (empty where the entry is gone)
  double tolerance = 0;   // the baseline's tolerance, for the message
  // Whether the entry is new or gone: not read off empty values, since an
  // entry's value may itself be empty text (a table's blank cell).
  Kind kind = Kind::changed;
};
// Entries of `now` that differ from `baseline` (beyond now's tolerance, or
// with a tolerance other than now's), in the order of `now`, then the
// baseline's entries that `now` lacks.
std::vector<GoldenChange> compare_golden(const GoldenFile& baseline, const GoldenFile& now);

namespace golden_detail {
// The suites' bodies (golden_formats.cpp, golden_kernels.cpp).
#define LPLAB_GOLDEN_BODY(name, what) GoldenFile name##_suite();
LPLAB_GOLDEN_SUITES(LPLAB_GOLDEN_BODY)
#undef LPLAB_GOLDEN_BODY
}  // namespace golden_detail

}  // namespace lplab::experiments
