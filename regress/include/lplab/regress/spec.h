// A user's precision regression checks, read from a YAML or JSON spec file
// (`lplab regress SPEC`; the schema and every metric are in docs/regress.md).
//
// A check names one computation that yields an `actual` and an `expected`
// array -- a matmul with an emulated accumulator against its fp64 reference,
// a block-scaled round trip or a format conversion of an input against the
// input, or two of the user's .npy files -- and one metric with its limit.
// Parsing validates the whole spec; run_spec reads and validates every input
// before the first check runs, so a bad spec or input never leaves half a
// report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/lab/vocabulary.h"
#include "lplab/formats/enum_table.h"
#include "lplab/formats.h"
#include "lplab/kernels/matmul.h"

namespace lplab::experiments {

// Where a spec element stands in its file, 1-based (yaml-cpp's Mark + 1).
struct SpecPlace {
  int line = 0, column = 0;
};

enum class Distribution { normal, half_normal, lognormal, uniform };

// Seeded samples (sampling.h): normal N(0, sigma^2), half_normal |N(0,
// sigma^2)|, lognormal sigma * exp(shape * Z), uniform between low and high.
struct Generator {
  Distribution distribution = Distribution::normal;
  std::uint64_t n = 0;
  std::uint64_t seed = 0;
  double sigma = 1, shape = 1, low = -1, high = 1;
};

// An array: a .npy file (path resolved against the spec's directory by
// load_spec) or a generator.
struct InputSource {
  std::string path;                   // empty: `generator`
  const FormatEntry* dtype = nullptr;  // the format of raw (ml_dtypes) data in `path`
  Generator generator;
  SpecPlace place;
};

// C = A B with A (m x k) and B (k x n), accumulated by `accumulator` and
// rounded into `output`; expected: the fp64 accumulator's exact sum of the
// same operands. Each operand is drawn like the matmul_error experiment's
// (N(0, 1) or |N(0, 1)| keyed by (seed, k), rounded to nearest-even into
// its format), or read from the user's .npy file (`a_file`, `b_file`: a
// 2-D array whose shape gives m and k, or k and n), whose values are rounded
// to nearest-even into the operand's format: the one named, else the file's
// own (float16, or the raw data's dtype), resolved when the file's header is
// read (run_spec).
struct MatmulCheck {
  const FormatEntry* a = nullptr;  // null only for a file that names no format
  const FormatEntry* b = nullptr;
  InputSource a_file, b_file;  // path empty: drawn
  const FormatEntry* output = nullptr;
  // A preset (kernels::accumulator_presets()) with the spec's own
  // tensor-core parameters; those left 0 take Hopper's for the operands.
  kernels::AccumulatorModel accumulator = kernels::accumulators::fp32;
  std::uint64_t m = 16, n = 16, k = 0, seed = 0;  // from a file's shape where there is one (k = 0 until then)
  Distribution distribution = Distribution::normal;  // normal or half_normal
  Round round = Round::nearest_even;
};

// A scaled round trip of the input (as float32) by one of the schemes of
// experiments' scaled.h (OCP MX v1.0, NVFP4, per-tensor FP8 current or
// delayed scaling, DeepSeek-V3 tiles); expected: the input as float32. The
// input is a matrix of rows of `row_length` values (0: its last dimension;
// a 1-D input is one row): the tiles' geometry and delayed scaling's steps.
struct QuantizeCheck {
  std::string scheme;
  InputSource input;
  std::uint64_t row_length = 0;
};

// Each input value rounded into `format`; expected: the input.
struct ConvertCheck {
  const FormatEntry* format = nullptr;
  Round round = Round::nearest_even;
  Overflow overflow = Overflow::ieee;
  std::uint64_t seed = 0;  // Round::stochastic: element i uses kernels::stochastic_bits(seed, i)
  InputSource input;
};

// The user's own arrays: actual (e.g. a kernel's output) and expected (e.g.
// an fp64 reference), of the same shape.
struct CompareCheck {
  InputSource actual, expected;
};

// A check's metrics, declared once (docs/regress.md states each in full):
// X(spec key, what it measures). Parsing, the spec's known keys and the
// results' names come from this list.
#define LPLAB_METRIC_KINDS(X)                                                                       \
  X(assert_close, "torch.testing.assert_close: |a - e| <= atol + rtol |e| for every element")      \
  X(max_ulp, "the largest distance in codes of a format")                                           \
  X(sqnr_db, "signal-to-quantization-noise ratio in dB (a minimum)")                                \
  X(max_rel_err, "the largest |a - e| / |e|")                                                       \
  X(norm_rel_err, "||a - e|| / ||e||")                                                              \
  X(max_abs_err, "the largest |a - e|")                                                             \
  X(underflow_fraction, "finite nonzero expected values that became zero")                          \
  X(overflow_fraction, "finite expected values that became infinite or NaN")                        \
  X(mismatch_fraction, "elements not equal (NaN equal to NaN)")

enum class MetricKind { LPLAB_METRIC_KINDS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(MetricKind, "metric", LPLAB_METRIC_KINDS)
inline const char* metric_name(MetricKind m) { return enum_name(m); }

struct Metric {
  MetricKind kind = MetricKind::max_rel_err;
  double limit = 0;  // sqnr_db: the minimum; every other metric: the maximum
  // assert_close: the dtype named (float32, float16 or bfloat16) and its
  // tolerances (torch.testing.assert_close's defaults unless overridden).
  std::string dtype;
  double rtol = 0, atol = 0;
  bool equal_nan = false;
  // max_ulp: the format whose codes are counted.
  const FormatEntry* format = nullptr;
  SpecPlace place;
};

struct Check {
  std::string name;
  SpecPlace place;
  std::variant<MatmulCheck, QuantizeCheck, ConvertCheck, CompareCheck> what;
  Metric metric;
};

struct Spec {
  std::string name;  // the file as named to load_spec (or parse_spec), for messages
  std::string stem;  // its file name without directory and extension (JUnit's classname)
  std::vector<Check> checks;
};

// The text of a spec's UsageError: "NAME:LINE:COL: message" on one line
// (line breaks and other control characters in quoted user text are shown
// as \n or \xHH, so that a CI log keeps one error per line).
std::string spec_error(const std::string& name, SpecPlace at, std::string_view message);

// Parses and validates a spec. Any error -- YAML syntax, an unknown key (with
// a suggestion for a near miss), a missing field, a wrong type, a size that is
// zero or too large -- throws UsageError "NAME:LINE:COL: message".
Spec parse_spec(std::string_view text, const std::string& name);
// Reads the file and parses it; relative .npy paths are taken relative to the
// file's directory.
Spec load_spec(const std::string& path);
// Every file a spec's checks read (their .npy inputs, paths as load_spec
// resolved them), each once: what an output of the run must never be.
std::vector<std::string> input_files(const Spec& spec);

// The two arrays a check compares, element by element. (Named apart from
// plot.h's Series: two classes of one name in one namespace broke the
// one-definition rule, and an exception's unwinding ran the other's
// destructor.)
struct ComparedArrays {
  std::vector<double> actual, expected;
  // convert: whether each value's conversion signalled overflow (IEEE
  // 754-2019 section 7.4), which overflow_fraction counts whatever the value
  // became. Empty otherwise.
  std::vector<bool> overflowed;
};

struct Measurement {
  double measured = 0;
  bool passed = false;
  std::string detail;  // e.g. the worst element's index and values
};

// The metric on the arrays (docs/regress.md defines each).
Measurement measure(const Metric& metric, const ComparedArrays& s);

struct CheckResult {
  std::string name;
  std::string metric;
  double measured = 0;
  double limit = 0;
  std::string relation;  // "<=" or ">="
  bool passed = false;
  std::string detail;
  double seconds = 0;
  std::string context;  // what was computed: sizes, inputs
  int line = 0;         // the check's line in the spec
};

// A measured value or a limit as results show it: shortest round-trip
// decimal, "inf", "-inf", and "nan" for every NaN (whatever its sign bit).
std::string result_number(double v);

// The relation as a result line shows it: the limit's own ("<=") when the
// check passed, the one the measured value broke (">", or "is not <=" for a
// NaN) when it failed.
std::string shown_relation(const CheckResult& r);

// Checks every input from its generator or .npy header -- shapes, no empty
// array, memory for the whole run -- then reads them (UsageError for a bad
// one, before any check runs), then runs the checks in order.
// With `progress`, one step per check (and Ctrl-C honoured between checks:
// Interrupted is thrown before the next one, nothing having been written).
std::vector<CheckResult> run_spec(const Spec& spec, Progress* progress = nullptr);

// JUnit XML: <testsuites> holding one <testsuite name=suite_name> with one
// <testcase classname=suite_name> per check, a <failure> for each failed one.
std::string junit_xml(const std::string& suite_name, const std::vector<CheckResult>& results);

}  // namespace lplab::experiments
