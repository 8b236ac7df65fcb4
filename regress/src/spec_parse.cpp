// parse_spec and load_spec: a regression spec from YAML 1.2 (JSON, a subset of
// YAML 1.2's flow style, reads through the same parser) into a validated Spec.
//
// The reader walks only the keys the schema knows, at a fixed depth, so that
// neither a deep document nor aliases that share nodes make it recurse or
// loop; yaml-cpp itself refuses nesting deeper than its DepthGuard allows
// (YAML::DeepRecursion, a YAML::Exception) and every YAML::Exception becomes a
// UsageError with the place it names.
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lplab/experiments/runner.h"
#include "lplab/regress/spec.h"
#include "lplab/runtime/accumulators.h"
#include "lplab/lab/files.h"
#include "lplab/lab/vocabulary.h"
#include "lplab/kernels/mma.h"
#include "lplab/kernels/nearest_names.h"
#include "lplab/experiments/scaled.h"
#include "spec_limits.h"

namespace lplab::experiments {
namespace {

// Counts the documents of a YAML stream that hold anything but a null (what
// LoadAll keeps), and where the second one starts.
struct DocumentCounter : YAML::EventHandler {
  int documents_with_content = 0;
  bool content = false;
  YAML::Mark start, second_start;
  void OnDocumentStart(const YAML::Mark& mark) override {
    content = false;
    start = mark;
  }
  void OnDocumentEnd() override {
    if (!content) return;
    if (++documents_with_content == 2) second_start = start;
  }
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { content = true; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {
    content = true;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    content = true;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    content = true;
  }
  void OnMapEnd() override {}
};

}  // namespace

namespace {

using spec_limits::kMaxElements;
using spec_limits::matmul_bytes;
using spec_limits::matmul_size_error;
// A spec file larger than this is refused before it is parsed.
constexpr std::size_t kMaxSpecBytes = std::size_t{16} << 20;  // 16 MiB


std::string join(const std::vector<std::string_view>& words) {
  return fmt::format("{}", fmt::join(words, ", "));
}

// The walk over the document, with the file's name for every message.
class Reader {
 public:
  explicit Reader(std::string name) : name_(std::move(name)) {}

  SpecPlace place(const YAML::Node& node, SpecPlace fallback) const {
    const YAML::Mark m = node.Mark();
    if (m.is_null() || m.line < 0 || m.column < 0) return fallback;
    return {m.line + 1, m.column + 1};
  }

  [[noreturn]] void fail(SpecPlace at, const std::string& message) const {
    throw UsageError(spec_error(name_, at, message));
  }

  // A map's entries by key, refusing duplicates and keys outside `known`.
  struct Entry {
    YAML::Node value;
    SpecPlace key_place;
  };
  std::vector<std::pair<std::string, Entry>> entries(const YAML::Node& map, SpecPlace at, std::string_view what,
                                                      const std::vector<std::string_view>& known) const {
    if (!map.IsMap()) fail(at, fmt::format("{} must be a mapping (KEY: VALUE lines or {{...}})", what));
    std::vector<std::pair<std::string, Entry>> out;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const SpecPlace kp = place(it->first, at);
      if (!it->first.IsScalar()) fail(kp, fmt::format("{}: a key must be a plain word", what));
      const std::string key = it->first.Scalar();
      if (std::find(known.begin(), known.end(), key) == known.end())
        fail(kp, fmt::format("{}: unknown key '{}'{}; known: {}", what, shown(key), did_you_mean(key, known), join(known)));
      for (const auto& e : out)
        if (e.first == key) fail(kp, fmt::format("{}: key '{}' given twice", what, shown(key)));
      out.push_back({key, Entry{it->second, kp}});
    }
    return out;
  }

  std::string text(const YAML::Node& node, SpecPlace at, std::string_view field) const {
    if (!node.IsScalar()) fail(at, fmt::format("{}: expected a single value", field));
    return node.Scalar();
  }

  // A number: decimal, hex float (0x1p-7), or a power of two 2^N.
  double number(const YAML::Node& node, SpecPlace at, std::string_view field) const {
    const std::string s = text(node, at, field);
    double v = 0;
    if (s.starts_with("2^")) {
      const std::string e = s.substr(2);
      int exponent = 0;
      const char* first = e.data() + (e.starts_with('+') ? 1 : 0);
      const auto [end, ec] = std::from_chars(first, e.data() + e.size(), exponent);
      if (e.empty() || ec != std::errc{} || end != e.data() + e.size() || exponent < -1074 || exponent > 1023)
        fail(at, fmt::format("{}: '{}' is not a power of two 2^N with a whole N in [-1074, 1023]", field, shown(s)));
      v = std::ldexp(1.0, exponent);
    } else {
      Decimal d;
      try {
        d = parse_value(s);
      } catch (const UsageError&) {
        fail(at, fmt::format("{}: '{}' is not a number (e.g. 0.01, 1e-3, 0x1p-7, 2^-7)", field, shown(s)));
      }
      // The double nearest the number: inf beyond double's range.
      v = d.nearest;
      if (d.kind == ValueKind::finite && !std::isfinite(v))
        fail(at, fmt::format("{}: '{}' is beyond double's range (its magnitude must be below 1.8e308)", field, shown(s)));
    }
    if (!std::isfinite(v)) fail(at, fmt::format("{}: expected a finite number, got '{}'", field, shown(s)));
    return v;
  }

  double nonnegative(const YAML::Node& node, SpecPlace at, std::string_view field) const {
    const double v = number(node, at, field);
    if (v < 0) fail(at, fmt::format("{}: expected a number >= 0, got {}", field, shortest(v)));
    return v;
  }

  // An integer in [lo, hi], written as digits with an optional '-'.
  std::int64_t integer(const YAML::Node& node, SpecPlace at, std::string_view field, std::int64_t lo,
                       std::int64_t hi) const {
    const std::string s = text(node, at, field);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size())
      fail(at, fmt::format("{}: expected a whole number, got '{}'", field, shown(s)));
    if (v < lo || v > hi) fail(at, fmt::format("{}: {} is outside [{}, {}]", field, v, lo, hi));
    return v;
  }

  // A whole number in [lo, hi], written as digits (or 2^N).
  std::uint64_t whole(const YAML::Node& node, SpecPlace at, std::string_view field, std::uint64_t lo,
                      std::uint64_t hi) const {
    const std::string s = text(node, at, field);
    std::uint64_t v = 0;
    if (s.starts_with("2^")) {
      const double d = number(node, at, field);
      if (d < 1 || d > 0x1p63) fail(at, fmt::format("{}: expected a whole number, got '{}'", field, shown(s)));
      v = static_cast<std::uint64_t>(d);
    } else {
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (s.empty() || ec != std::errc{} || end != s.data() + s.size())
        fail(at, fmt::format("{}: expected a whole number >= {}, got '{}'", field, lo, shown(s)));
    }
    if (v < lo || v > hi) fail(at, fmt::format("{}: {} is outside [{}, {}]", field, v, lo, hi));
    return v;
  }

  bool boolean(const YAML::Node& node, SpecPlace at, std::string_view field) const {
    const std::string s = text(node, at, field);
    if (s == "true") return true;
    if (s == "false") return false;
    fail(at, fmt::format("{}: expected true or false, got '{}'", field, shown(s)));
  }

  // A format field: a compiled format or a declared layout.
  const FormatEntry* format(const YAML::Node& node, SpecPlace at, std::string_view field) const {
    const std::string s = text(node, at, field);
    try {
      return &resolve_format(s);
    } catch (const UsageError& e) {
      fail(at, fmt::format("{}: {}", field, e.what()));
    }
  }

  template <class F>
  auto policy(const YAML::Node& node, SpecPlace at, std::string_view field, F parse) const {
    const std::string s = text(node, at, field);
    try {
      return parse(s);
    } catch (const UsageError& e) {
      fail(at, fmt::format("{}: {}", field, e.what()));
    }
  }

  // require_memory's refusal, at a place.
  void require(double bytes, SpecPlace at, std::string_view what) const {
    try {
      require_memory(bytes, std::string(what));
    } catch (const UsageError& e) {
      fail(at, e.what());
    }
  }

 private:
  std::string name_;
};

const char* distribution_name(Distribution d) {
  switch (d) {
    case Distribution::normal: return "normal";
    case Distribution::half_normal: return "half_normal";
    case Distribution::lognormal: return "lognormal";
    case Distribution::uniform: return "uniform";
  }
  return "?";
}

Distribution parse_distribution(const Reader& r, const YAML::Node& node, SpecPlace at,
                                const std::vector<std::string_view>& allowed) {
  const std::string s = r.text(node, at, "distribution");
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    r.fail(at, fmt::format("distribution: unknown '{}'{}; known: {}", shown(s), did_you_mean(s, allowed), join(allowed)));
  if (s == "half_normal") return Distribution::half_normal;
  if (s == "lognormal") return Distribution::lognormal;
  if (s == "uniform") return Distribution::uniform;
  return Distribution::normal;
}

// An input: a .npy path (a string) or a generator mapping.
InputSource parse_input(const Reader& r, const YAML::Node& node, SpecPlace at, std::string_view field) {
  InputSource in;
  in.place = r.place(node, at);
  if (node.IsScalar()) {
    in.path = node.Scalar();
    if (in.path.empty()) r.fail(in.place, fmt::format("{}: empty file name", field));
    return in;
  }
  if (!node.IsMap()) r.fail(in.place, fmt::format("{}: expected a .npy file name or a generator mapping", field));
  // {path: FILE.npy, dtype: FORMAT}: a file of raw (ml_dtypes) data.
  if (node["path"]) {
    bool has_dtype = false;
    for (const auto& [key, e] : r.entries(node, in.place, field, {"path", "dtype"})) {
      const SpecPlace vp = r.place(e.value, e.key_place);
      if (key == "path") {
        in.path = r.text(e.value, vp, "path");
        if (in.path.empty()) r.fail(vp, fmt::format("{}: empty file name", field));
      } else {
        in.dtype = r.format(e.value, vp, "dtype");
        has_dtype = true;
      }
    }
    if (!has_dtype)
      r.fail(in.place,
             fmt::format("{}: a path mapping names the raw data's format: {{path: FILE, dtype: FORMAT}}", field));
    return in;
  }
  const auto entries = r.entries(node, in.place, field, {"distribution", "n", "seed", "sigma", "shape", "low", "high"});
  bool has_n = false, has_seed = false, has_distribution = false;
  Generator& g = in.generator;
  for (const auto& [key, e] : entries) {
    const SpecPlace vp = r.place(e.value, e.key_place);
    if (key == "distribution") {
      g.distribution = parse_distribution(r, e.value, vp, {"normal", "half_normal", "lognormal", "uniform"});
      has_distribution = true;
    } else if (key == "n") {
      g.n = r.whole(e.value, vp, "n", 1, static_cast<std::uint64_t>(kMaxElements));
      has_n = true;
    } else if (key == "seed") {
      g.seed = r.whole(e.value, vp, "seed", 0, UINT64_MAX);
      has_seed = true;
    } else if (key == "sigma") {
      g.sigma = r.number(e.value, vp, "sigma");
      if (!(g.sigma > 0)) r.fail(vp, "sigma: expected a number > 0");
    } else if (key == "shape") {
      g.shape = r.nonnegative(e.value, vp, "shape");
    } else if (key == "low") {
      g.low = r.number(e.value, vp, "low");
    } else {
      g.high = r.number(e.value, vp, "high");
    }
  }
  if (!has_distribution) r.fail(in.place, fmt::format("{}: missing field 'distribution'", field));
  // A parameter of another distribution is refused rather than ignored:
  // sigma for normal, half_normal and lognormal, shape for lognormal, low and
  // high for uniform.
  for (const auto& [key, e] : entries) {
    const bool applies = key == "sigma"               ? g.distribution != Distribution::uniform
                         : key == "shape"             ? g.distribution == Distribution::lognormal
                         : key == "low" || key == "high" ? g.distribution == Distribution::uniform
                                                         : true;
    if (!applies)
      r.fail(e.key_place, fmt::format("{}: '{}' does not apply to the {} distribution", field, key,
                                      distribution_name(g.distribution)));
  }
  if (!has_n) r.fail(in.place, fmt::format("{}: missing field 'n' (the number of samples)", field));
  if (!has_seed) r.fail(in.place, fmt::format("{}: missing field 'seed'", field));
  if (g.distribution == Distribution::uniform && !(g.low < g.high))
    r.fail(in.place, fmt::format("{}: uniform needs low < high", field));
  if (!std::isfinite(g.high - g.low)) r.fail(in.place, fmt::format("{}: uniform's high - low overflows", field));
  // The samples as double, and the arrays each check derives from them.
  r.require(static_cast<double>(g.n) * 8 * 4, in.place, field);
  return in;
}

// Whether a matmul operand's text names a .npy file rather than a format
// (a format's name holds neither a '/' nor a '.').
bool names_file(std::string_view s) { return s.find('/') != std::string_view::npos || s.find('.') != std::string_view::npos; }

// A matmul operand's format (matmul_operand_problem).
const FormatEntry* operand_format(const Reader& r, const YAML::Node& node, SpecPlace at, std::string_view field) {
  const FormatEntry* f = r.format(node, at, field);
  if (const std::string why = matmul_operand_problem(*f); !why.empty()) r.fail(at, fmt::format("{}: {}", field, why));
  return f;
}

// A matmul operand: a format (drawn), a .npy file name, or
// {path: FILE, dtype: RAW_FORMAT, format: FORMAT} (dtype: the raw data's
// format; format: the one the values are rounded into).
void parse_operand(const Reader& r, const YAML::Node& node, SpecPlace at, std::string_view field,
                   const FormatEntry*& format, InputSource& file) {
  if (node.IsScalar() && !names_file(node.Scalar())) {
    format = operand_format(r, node, at, field);
    return;
  }
  file.place = at;
  if (node.IsScalar()) {
    file.path = node.Scalar();
    return;
  }
  if (!node.IsMap())
    r.fail(at, fmt::format("{}: expected a format, a .npy file name or {{path: FILE, format: FORMAT}}", field));
  for (const auto& [key, e] : r.entries(node, at, field, {"path", "dtype", "format"})) {
    const SpecPlace vp = r.place(e.value, e.key_place);
    if (key == "path") file.path = r.text(e.value, vp, "path");
    else if (key == "dtype") file.dtype = r.format(e.value, vp, "dtype");
    else format = operand_format(r, e.value, vp, "format");
  }
  if (file.path.empty()) r.fail(at, fmt::format("{}: missing field 'path' (the operand's .npy file)", field));
}

// The tensor-core fields a matmul check may set: the kernels' own table
// (accumulator_fields), and tc_fraction_bits, an older name of fraction_bits.
const kernels::AccumulatorField* model_field(std::string_view key) {
  if (key == "tc_fraction_bits") key = "fraction_bits";
  for (const kernels::AccumulatorField& f : kernels::accumulator_fields())
    if (f.name == key) return &f;
  return nullptr;
}

MatmulCheck parse_matmul(const Reader& r, const YAML::Node& node, SpecPlace at) {
  MatmulCheck c;
  std::vector<std::string_view> keys{"a", "b", "output", "accumulator", "m", "n", "k", "seed", "distribution"};
  for (const kernels::AccumulatorField& f : kernels::accumulator_fields()) keys.push_back(f.name);
  keys.insert(keys.end(), {"tc_fraction_bits", "round"});
  const auto entries = r.entries(node, at, "matmul", keys);
  bool has_a = false, has_b = false, has_acc = false;
  kernels::AccumulatorModel model;
  struct SetParam {
    const kernels::AccumulatorField* param;
    int value;
    SpecPlace place;
  };
  std::vector<SetParam> params;
  for (const auto& [key, e] : entries) {
    const SpecPlace vp = r.place(e.value, e.key_place);
    if (key == "a" || key == "b") {
      parse_operand(r, e.value, vp, key, key == "a" ? c.a : c.b, key == "a" ? c.a_file : c.b_file);
      (key == "a" ? has_a : has_b) = true;
    } else if (key == "output") {
      c.output = r.format(e.value, vp, key);
    } else if (key == "accumulator") {
      const std::string s = r.text(e.value, vp, key);
      const kernels::AccumulatorPreset* preset = nullptr;
      try {
        preset = &accumulator_preset(s);
      } catch (const UsageError& e) {
        r.fail(vp, e.what());
      }
      // A block-scaled instruction applies its operands' block scales inside
      // the dot product (matmul.h's BlockScaledOperand); a spec's operands
      // are plain values with no scales to give it.
      if (preset->model.kind == kernels::Accumulator::instruction) {
        const kernels::MmaInstruction& i =
            kernels::mma_instructions()[static_cast<std::size_t>(preset->model.instruction)];
        if (i.scale != kernels::MmaType::none)
          r.fail(vp, fmt::format("accumulator: {} is block-scaled: it takes block-scaled operands, whose {} scales "
                                 "it applies inside the dot product, and a spec's matmul operands are plain "
                                 "values; name an instruction without block scales (lplab mma --list)",
                                 i.name, kernels::mma_type_info(i.scale).name));
      }
      model = preset->model;
      has_acc = true;
    } else if (key == "m" || key == "n" || key == "k") {
      const std::uint64_t v = r.whole(e.value, vp, key, 1, static_cast<std::uint64_t>(kMaxElements));
      (key == "m" ? c.m : key == "n" ? c.n : c.k) = v;
    } else if (key == "seed") {
      c.seed = r.whole(e.value, vp, key, 0, UINT64_MAX);
    } else if (key == "distribution") {
      c.distribution = parse_distribution(r, e.value, vp, {"normal", "half_normal"});
    } else if (const kernels::AccumulatorField* param = model_field(key)) {
      // The preset's value is replaced below (the accumulator may come later);
      // its bounds are the kernels' check's (accumulator_problem, below).
      using Limits = std::numeric_limits<int>;
      const std::int64_t value = r.integer(e.value, vp, key, Limits::min(), Limits::max());
      params.push_back({param, static_cast<int>(value), e.key_place});
    } else {
      c.round = r.policy(e.value, vp, key, parse_round);
    }
  }
  const bool a_file = !c.a_file.path.empty(), b_file = !c.b_file.path.empty();
  if (!has_a) r.fail(at, "matmul: missing field 'a' (the input format of A, or its .npy file)");
  if (a_file && !has_b) r.fail(at, "matmul: missing field 'b' (A is a file: B's format or its .npy file)");
  if (!a_file && !b_file && c.k == 0) r.fail(at, "matmul: missing field 'k' (the inner dimension)");
  if (!has_acc) r.fail(at, "matmul: missing field 'accumulator'");
  // The preset with the spec's parameters, checked by the kernels' own rule
  // (the checks that need the operands run when the plan knows them).
  for (const SetParam& p : params) model.*(p.param->field) = p.value;
  if (const kernels::AccumulatorProblem e = kernels::accumulator_problem(model)) {
    // At the key that set the parameter at fault, else at the check.
    SpecPlace where = at;
    for (const SetParam& p : params)
      if (e.field != nullptr && p.param->field == e.field) where = p.place;
    r.fail(where, "matmul: " + e.message);
  }
  c.accumulator = model;
  // A size the files' shapes give, or a generator's field without a drawn
  // operand, would be ignored: refused instead.
  for (const auto& [key, e] : entries) {
    const bool from_file = (key == "m" && a_file) || (key == "n" && b_file) || (key == "k" && (a_file || b_file));
    if (from_file)
      r.fail(e.key_place, fmt::format("matmul: '{}' comes from the shape of {}'s file", key,
                                      key == "m" || (key == "k" && a_file) ? "a" : "b"));
    if ((key == "seed" || key == "distribution") && a_file && b_file)
      r.fail(e.key_place, fmt::format("matmul: '{}' applies to a drawn operand; a and b are both files", key));
  }
  if ((!a_file || !b_file) && !node["seed"]) r.fail(at, "matmul: missing field 'seed' (of the drawn operands)");
  if (!has_b) c.b = c.a;
  if (c.output == nullptr) c.output = find_format("float32");
  // With a file, the sizes are checked when its header is read (run_spec).
  if (!a_file && !b_file) if (const std::string e = matmul_size_error(c.m, c.n, c.k); !e.empty()) r.fail(at, e);
  r.require(matmul_bytes(c.m, c.n, c.k), at, "matmul");
  return c;
}

Metric parse_metric(const Reader& r, std::string_view key, const YAML::Node& node, SpecPlace at) {
  Metric m;
  m.place = at;
  if (key == "assert_close") {
    m.kind = MetricKind::assert_close;
    const auto entries = r.entries(node, at, key, {"dtype", "rtol", "atol", "allowed_mismatch", "equal_nan"});
    bool has_rtol = false, has_atol = false;
    for (const auto& [k, e] : entries) {
      const SpecPlace vp = r.place(e.value, e.key_place);
      if (k == "dtype") {
        const FormatEntry* f = r.format(e.value, vp, "dtype");
        m.dtype = f->name;
        // torch.testing.assert_close's defaults (PyTorch documentation,
        // torch.testing.assert_close: rtol and atol "based on the dtype").
        if (m.dtype == "float32") m.rtol = 1.3e-6, m.atol = 1e-5;
        else if (m.dtype == "float16") m.rtol = 1e-3, m.atol = 1e-5;
        else if (m.dtype == "bfloat16") m.rtol = 1.6e-2, m.atol = 1e-5;
        else
          r.fail(vp, fmt::format("dtype: torch's defaults are for float32, float16 and bfloat16, not {}; give rtol "
                                 "and atol instead",
                                 m.dtype));
      } else if (k == "rtol") {
        has_rtol = true;
      } else if (k == "atol") {
        has_atol = true;
      } else if (k == "allowed_mismatch") {
        m.limit = r.nonnegative(e.value, vp, k);
        if (m.limit > 1) r.fail(vp, "allowed_mismatch: a fraction of the elements, in [0, 1]");
      } else {
        m.equal_nan = r.boolean(e.value, vp, k);
      }
    }
    if (m.dtype.empty() && !(has_rtol && has_atol))
      r.fail(at, "assert_close: give dtype (float32, float16 or bfloat16: torch's defaults) or both rtol and atol");
    // The overrides, after the dtype's defaults whatever their order.
    for (const auto& [k, e] : entries) {
      const SpecPlace vp = r.place(e.value, e.key_place);
      if (k == "rtol") m.rtol = r.nonnegative(e.value, vp, k);
      if (k == "atol") m.atol = r.nonnegative(e.value, vp, k);
    }
    return m;
  }
  if (const std::optional<MetricKind> kind = enum_parse<MetricKind>(key)) m.kind = *kind;
  const std::string_view bound = m.kind == MetricKind::sqnr_db ? "min" : "max";
  std::vector<std::string_view> known = {bound};
  if (m.kind == MetricKind::max_ulp) known.push_back("format");
  // `max_rel_err: 2^-7` is short for `max_rel_err: {max: 2^-7}`.
  bool has_bound = false;
  if (node.IsScalar()) {
    m.limit = r.number(node, at, key);
    has_bound = true;
  } else {
    for (const auto& [k, e] : r.entries(node, at, key, known)) {
      const SpecPlace vp = r.place(e.value, e.key_place);
      if (k == "format") {
        m.format = r.format(e.value, vp, "format");
      } else {
        m.limit = r.number(e.value, vp, fmt::format("{}.{}", key, k));
        has_bound = true;
      }
    }
  }
  if (!has_bound) r.fail(at, fmt::format("{}: missing field '{}'", key, bound));
  if (m.kind != MetricKind::sqnr_db && m.limit < 0)
    r.fail(at, fmt::format("{}: the limit must be >= 0, got {}", key, shortest(m.limit)));
  const bool fraction = m.kind == MetricKind::underflow_fraction || m.kind == MetricKind::overflow_fraction ||
                        m.kind == MetricKind::mismatch_fraction;
  if (fraction && m.limit > 1) r.fail(at, fmt::format("{}: a fraction of the elements, in [0, 1]", key));
  return m;
}

constexpr std::string_view kKinds[] = {"matmul", "quantize", "convert", "compare"};

Check parse_check(const Reader& r, const YAML::Node& node, SpecPlace at) {
  Check c;
  c.place = at;
  std::vector<std::string_view> known = {"name", "description"};
  known.insert(known.end(), std::begin(kKinds), std::end(kKinds));
  for (const EnumEntry<MetricKind>& metric : enum_entries<MetricKind>()) known.push_back(metric.name);
  const auto entries = r.entries(node, at, "check", known);
  int kinds = 0, metrics = 0;
  for (const auto& [key, e] : entries) {
    const SpecPlace vp = r.place(e.value, e.key_place);
    if (key == "name") {
      c.name = r.text(e.value, vp, "name");
      if (c.name.empty()) r.fail(vp, "name: must not be empty");
      // A name is one line of a report and an XML attribute: no line breaks
      // or other control characters (XML 1.0 section 2.2 allows few of them).
      for (const char ch : c.name)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
          r.fail(vp, fmt::format("name: '{}' holds a control character (line break, tab, ...)", shown(c.name)));
      // Nor bytes that are not UTF-8: the name goes into JSON and JUnit XML,
      // both UTF-8 text (the message shows the byte, not the text around it).
      if (const std::size_t at = first_non_utf8(c.name); at != std::string::npos)
        r.fail(vp, fmt::format("name: byte {} of the name is 0x{:02x}, which is not UTF-8 text; a name is written "
                               "into JSON and JUnit XML, which are UTF-8",
                               at + 1, static_cast<unsigned char>(c.name[at])));
    } else if (key == "description") {
      r.text(e.value, vp, "description");
    } else if (enum_parse<MetricKind>(key)) {
      if (++metrics > 1) r.fail(e.key_place, fmt::format("check: one metric per check, '{}' is a second", key));
      c.metric = parse_metric(r, key, e.value, vp);
    } else {
      if (++kinds > 1) r.fail(e.key_place, fmt::format("check: one computation per check, '{}' is a second", key));
      if (key == "matmul") {
        c.what = parse_matmul(r, e.value, vp);
      } else if (key == "quantize") {
        QuantizeCheck q;
        bool has_scheme = false, has_input = false;
        for (const auto& [k, qe] : r.entries(e.value, vp, key, {"scheme", "input", "row_length"})) {
          const SpecPlace qp = r.place(qe.value, qe.key_place);
          if (k == "scheme") {
            q.scheme = r.text(qe.value, qp, k);
            const std::vector<std::string_view> names = scaled::scheme_names();
            if (std::find(names.begin(), names.end(), q.scheme) == names.end())
              r.fail(qp, fmt::format("scheme: unknown '{}'{}; known: {}", shown(q.scheme), did_you_mean(q.scheme, names),
                                     join(names)));
            has_scheme = true;
          } else if (k == "row_length") {
            q.row_length = r.whole(qe.value, qp, k, 1, static_cast<std::uint64_t>(kMaxElements));
          } else {
            q.input = parse_input(r, qe.value, qp, "input");
            has_input = true;
          }
        }
        if (!has_scheme) r.fail(vp, "quantize: missing field 'scheme'");
        if (!has_input) r.fail(vp, "quantize: missing field 'input'");
        c.what = q;
      } else if (key == "convert") {
        ConvertCheck v;
        bool has_format = false, has_input = false;
        for (const auto& [k, ve] : r.entries(e.value, vp, key, {"format", "input", "round", "overflow", "seed"})) {
          const SpecPlace cp = r.place(ve.value, ve.key_place);
          if (k == "format") v.format = r.format(ve.value, cp, k), has_format = true;
          else if (k == "input") v.input = parse_input(r, ve.value, cp, k), has_input = true;
          else if (k == "round") v.round = r.policy(ve.value, cp, k, parse_round);
          else if (k == "overflow") v.overflow = r.policy(ve.value, cp, k, parse_overflow);
          else v.seed = r.whole(ve.value, cp, k, 0, UINT64_MAX);
        }
        if (!has_format) r.fail(vp, "convert: missing field 'format'");
        if (!has_input) r.fail(vp, "convert: missing field 'input'");
        for (const auto& [k, ve] : r.entries(e.value, vp, key, {"format", "input", "round", "overflow", "seed"}))
          if (k == "seed" && v.round != Round::stochastic)
            r.fail(ve.key_place, "convert: 'seed' goes with round: stochastic only");
        c.what = v;
      } else {
        CompareCheck v;
        bool has_actual = false, has_expected = false;
        for (const auto& [k, ve] : r.entries(e.value, vp, key, {"actual", "expected"})) {
          const SpecPlace cp = r.place(ve.value, ve.key_place);
          (k == "actual" ? v.actual : v.expected) = parse_input(r, ve.value, cp, k);
          (k == "actual" ? has_actual : has_expected) = true;
        }
        if (!has_actual) r.fail(vp, "compare: missing field 'actual'");
        if (!has_expected) r.fail(vp, "compare: missing field 'expected'");
        c.what = v;
      }
    }
  }
  if (c.name.empty()) r.fail(at, "check: missing field 'name'");
  if (kinds == 0) r.fail(at, fmt::format("check '{}': missing the computation, one of {}", shown(c.name),
                                         join({std::begin(kKinds), std::end(kKinds)})));
  if (metrics == 0) r.fail(at, fmt::format("check '{}': missing the metric, one of {}", shown(c.name),
                                           enum_names_text<MetricKind>()));
  // max_ulp counts codes of a format: the one named, or the check's own.
  if (c.metric.kind == MetricKind::max_ulp && c.metric.format == nullptr) {
    if (const auto* v = std::get_if<ConvertCheck>(&c.what)) c.metric.format = v->format;
    else if (const auto* mm = std::get_if<MatmulCheck>(&c.what)) c.metric.format = mm->output;
    else r.fail(c.metric.place, "max_ulp: missing field 'format' (the format whose codes are counted)");
  }
  return c;
}

// yaml-cpp's 0-based mark as a place (1, 1 where it has none).
SpecPlace mark_place(const YAML::Mark& m) {
  if (m.is_null() || m.line < 0 || m.column < 0) return {1, 1};
  return {m.line + 1, m.column + 1};
}

}  // namespace

namespace spec_limits {

std::string matmul_size_error(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  const double dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  if (dm * dk + dk * dn + dm * dn > kMaxElements)
    return fmt::format("matmul: m = {}, n = {}, k = {} holds more than 2^31 elements", m, n, k);
  if (dm * dn * dk > kMaxMultiplyAdds)
    return fmt::format("matmul: m * n * k = {} is more than 2^36 multiply-adds", shortest(dm * dn * dk));
  return {};
}

double matmul_bytes(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  // Operands drawn as double and kept as float (12 bytes each), the output,
  // the result and the reference as double.
  const double dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  return (dm + dn) * dk * 12 + dm * dn * 24;
}

}  // namespace spec_limits

std::string spec_error(const std::string& name, SpecPlace at, std::string_view message) {
  std::string text = fmt::format("{}:{}:{}: ", name, std::max(at.line, 1), std::max(at.column, 1));
  text += message;
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (u < 0x20 || u == 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out;
}

Spec parse_spec(std::string_view text, const std::string& name) {
  const Reader r(name);
  Spec spec;
  spec.name = name;
  spec.stem = std::filesystem::path(name).stem().string();
  // A spec is one document: text after the first (a '---', a '...' and more,
  // a second JSON object) is refused rather than silently ignored. The
  // documents are counted by a parser pass that stops at the second one:
  // yaml-cpp 0.7's LoadAll loops forever on some malformed input (it kept
  // making documents without consuming any: a fuzz input, now in
  // fuzz/regressions/fuzz_spec).
  std::vector<YAML::Node> documents;
  try {
    documents.push_back(YAML::Load(std::string(text)));
    std::istringstream stream{std::string(text)};
    YAML::Parser parser(stream);
    DocumentCounter counter;
    for (int n = 0; n < 2 && parser.HandleNextDocument(counter); ++n) {
    }
    if (counter.documents_with_content > 1)
      r.fail(mark_place(counter.second_start),
             "a second YAML document: a spec is one document (no '---' or '...' followed by more, "
             "one JSON object)");
  } catch (const YAML::DeepRecursion& e) {
    r.fail(mark_place(e.mark), "not valid YAML or JSON: nested too deeply");
  } catch (const YAML::Exception& e) {
    // e.msg is the message without yaml-cpp's own "yaml-cpp: error at line"
    // prefix; e.mark its 0-based place.
    r.fail(mark_place(e.mark), "not valid YAML or JSON: " + e.msg);
  }
  const YAML::Node root = documents.empty() ? YAML::Node() : documents[0];
  const SpecPlace top{1, 1};
  try {
    if (!root.IsDefined() || root.IsNull()) r.fail(top, "the spec is empty (expected 'checks:' with a list of checks)");
    YAML::Node checks;
    SpecPlace checks_place = top;
    for (const auto& [key, e] : r.entries(root, r.place(root, top), "spec", {"checks"})) {
      checks = e.value;
      checks_place = r.place(e.value, e.key_place);
    }
    if (!checks.IsDefined()) r.fail(top, "spec: missing field 'checks'");
    if (!checks.IsSequence() || checks.size() == 0)
      r.fail(checks_place, "checks: expected a non-empty list of checks ('- name: ...' items or [...])");
    std::set<std::string> names;
    for (const YAML::Node& item : checks) {
      Check c = parse_check(r, item, r.place(item, checks_place));
      if (!names.insert(c.name).second) r.fail(c.place, fmt::format("check '{}': name given twice", shown(c.name)));
      spec.checks.push_back(std::move(c));
    }
  } catch (const YAML::Exception& e) {
    r.fail(mark_place(e.mark), e.msg);
  }
  return spec;
}

Spec load_spec(const std::string& path) {
  // A regular file of at most kMaxSpecBytes: not a directory, and not a
  // device or pipe that never ends (/dev/zero).
  const std::string text = read_input_file(path, "a YAML or JSON spec file", kMaxSpecBytes);
  Spec spec = parse_spec(text, path);
  // Relative .npy paths: relative to the spec's directory, as a user reads them.
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  auto resolve = [&](InputSource& s) {
    if (!s.path.empty() && std::filesystem::path(s.path).is_relative()) s.path = (dir / s.path).string();
  };
  for (Check& c : spec.checks) {
    if (auto* q = std::get_if<QuantizeCheck>(&c.what)) resolve(q->input);
    if (auto* v = std::get_if<ConvertCheck>(&c.what)) resolve(v->input);
    if (auto* v = std::get_if<CompareCheck>(&c.what)) resolve(v->actual), resolve(v->expected);
    if (auto* v = std::get_if<MatmulCheck>(&c.what)) resolve(v->a_file), resolve(v->b_file);
  }
  return spec;
}

std::vector<std::string> input_files(const Spec& spec) {
  std::vector<std::string> out;
  auto add = [&](const InputSource& s) {
    if (!s.path.empty() && std::find(out.begin(), out.end(), s.path) == out.end()) out.push_back(s.path);
  };
  for (const Check& c : spec.checks) {
    if (const auto* q = std::get_if<QuantizeCheck>(&c.what)) add(q->input);
    if (const auto* v = std::get_if<ConvertCheck>(&c.what)) add(v->input);
    if (const auto* v = std::get_if<CompareCheck>(&c.what)) add(v->actual), add(v->expected);
    if (const auto* v = std::get_if<MatmulCheck>(&c.what)) add(v->a_file), add(v->b_file);
  }
  return out;
}

}  // namespace lplab::experiments
