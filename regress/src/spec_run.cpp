// run_spec: the checks of a parsed spec. Step 1 plans every input from its
// generator or .npy header (shapes, sizes, memory for the whole run), then
// reads each once, so that a bad input stops the run before the first check;
// step 2 runs each check -- its computation, then its metric.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "lplab/lab/npy.h"
#include "lplab/experiments/runner.h"
#include "lplab/regress/spec.h"
#include "lplab/lab/vocabulary.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/mma.h"
#include "lplab/kernels/random.h"
#include "lplab/experiments/sampling.h"
#include "lplab/experiments/scaled.h"
#include "spec_limits.h"

namespace lplab::experiments {
namespace {

namespace k = lplab::kernels;

// An input's values and how to describe them.
struct Loaded {
  std::vector<double> values;
  std::vector<std::size_t> shape;
  std::string what;  // "acts.npy (64 x 64)" or "normal n=4096 seed 7"
};

std::string shape_text(const std::vector<std::size_t>& shape) {
  return shape.empty() ? "scalar" : fmt::format("{}", fmt::join(shape, " x "));
}

Loaded generate(const Generator& g) {
  const auto n = static_cast<std::size_t>(g.n);
  Loaded l;
  l.shape = {n};
  switch (g.distribution) {
    case Distribution::normal:
    case Distribution::half_normal:
      l.values = sampling::normal(n, g.sigma, g.seed);
      if (g.distribution == Distribution::half_normal)
        for (double& v : l.values) v = std::abs(v);
      l.what = fmt::format("{} sigma {}", g.distribution == Distribution::normal ? "normal" : "half_normal",
                           shortest(g.sigma));
      break;
    case Distribution::lognormal:
      l.values = sampling::lognormal(n, g.sigma, g.shape, g.seed);
      l.what = fmt::format("lognormal sigma {} shape {}", shortest(g.sigma), shortest(g.shape));
      break;
    case Distribution::uniform:
      l.values = sampling::uniform(n, g.low, g.high, g.seed);
      l.what = fmt::format("uniform between {} and {}", shortest(g.low), shortest(g.high));
      break;
  }
  l.what += fmt::format(", n={}, seed {}", n, g.seed);
  return l;
}

// What step 1 knows of an input before reading it: from the generator, or
// from the .npy file's header.
struct Planned {
  std::vector<std::size_t> shape;
  std::string dtype;  // a file's: "float16", "float32", "float64" or the raw data's format
  std::size_t count = 0;
  double read_bytes = 0;  // held while it is read, beyond its values
};

// Every input of the spec, planned from its header and then read once per
// .npy file (an aliased generator, which shares its place, once too).
class Inputs {
 public:
  explicit Inputs(const Spec& spec) : spec_(spec) {}

  // The input's shape and size, refusing an empty one, without reading it.
  const Planned& plan(const InputSource& s) {
    const std::string k = key(s);
    if (auto it = plans_.find(k); it != plans_.end()) return it->second;
    Planned p;
    if (s.path.empty()) {
      p.count = static_cast<std::size_t>(s.generator.n);
      p.shape = {p.count};
      p.read_bytes = 8.0 * static_cast<double>(p.count);  // the samples before they are kept
    } else {
      NpyHeader h;
      try {
        h = probe_npy(s.path, kNpyMaxElements, s.dtype);
      } catch (const UsageError& e) {
        throw UsageError(spec_error(spec_.name, s.place, e.what()));
      }
      p.shape = h.shape;
      p.dtype = h.dtype;
      p.count = h.count;
      // read_npy holds the file's bytes, their words (and a C-order copy
      // of a Fortran-order array) beside the decoded doubles.
      p.read_bytes = 3.0 * static_cast<double>(h.count * h.width);
      if (p.count == 0)
        throw UsageError(spec_error(spec_.name, s.place,
                                    fmt::format("{}: has no elements (shape {})", s.path, shape_text(p.shape))));
    }
    return plans_.emplace(k, std::move(p)).first->second;
  }

  // What every input planned holds for the whole run (the values as
  // double), and the most reading one of them holds besides.
  double held_bytes() const {
    double total = 0;
    for (const auto& [k, p] : plans_) total += 8.0 * static_cast<double>(p.count);
    return total;
  }
  double read_bytes() const {
    double most = 0;
    for (const auto& [k, p] : plans_) most = std::max(most, p.read_bytes);
    return most;
  }

  const Loaded& get(const InputSource& s) {
    const std::string k = key(s);
    auto it = cache_.find(k);
    if (it != cache_.end()) return it->second;
    Loaded l;
    if (s.path.empty()) {
      l = generate(s.generator);
    } else {
      NpyArray a;
      try {
        a = read_npy(s.path, kNpyMaxElements, s.dtype);
      } catch (const UsageError& e) {
        throw UsageError(spec_error(spec_.name, s.place, e.what()));
      }
      l.values = std::move(a.values);
      l.shape = std::move(a.shape);
      l.what = fmt::format("{} ({}, {})", s.path, shape_text(l.shape), a.dtype);
    }
    return cache_.emplace(k, std::move(l)).first->second;
  }

 private:
  static std::string key(const InputSource& s) {
    if (s.path.empty()) return fmt::format("{}:{}", s.place.line, s.place.column);
    return s.dtype == nullptr ? s.path : s.path + "\n" + std::string(s.dtype->name);
  }

  const Spec& spec_;
  std::map<std::string, Planned> plans_;
  std::map<std::string, Loaded> cache_;
};

// The row length a quantize check reads its input in: row_length, else the
// input's last dimension (a 1-D input is one row).
std::size_t quantize_row(const QuantizeCheck& q, const std::vector<std::size_t>& shape, std::size_t count) {
  if (q.row_length != 0) return static_cast<std::size_t>(q.row_length);
  return shape.size() >= 2 && shape.back() != 0 ? shape.back() : std::max<std::size_t>(count, 1);
}

// A block scheme's block size (kernels/scaling.h), 0 for the other kinds.
int block_size(std::string_view scheme) {
#define LPLAB_SCHEME_BLOCK(s, ...) \
  if (scheme == #s) return k::s.block_size;
  LPLAB_BLOCK_SCHEMES(LPLAB_SCHEME_BLOCK)
#undef LPLAB_SCHEME_BLOCK
  return 0;
}

// How many values a block scheme quantizes once every row of `row` values
// is padded to whole blocks, as run_quantize pads them: the input's count
// where no row is (one row, or rows of whole blocks).
std::size_t padded_count(const QuantizeCheck& q, std::size_t row, std::size_t count) {
  const auto b = static_cast<std::size_t>(block_size(q.scheme));
  if (b == 0 || row >= count || row % b == 0) return count;
  const auto whole = [b](std::size_t n) { return (n + b - 1) / b * b; };
  const std::size_t full_rows = count / row, rest = count % row;
  return full_rows * whole(row) + whole(rest);
}

// A matmul check's operands and sizes as it runs: the files' formats and
// shapes resolved in step 1.
struct MatmulPlan {
  const FormatEntry* a = nullptr;
  const FormatEntry* b = nullptr;
  std::uint64_t m = 0, n = 0, k = 0;
};

// The kernel's options for a matmul check.
k::MatmulOptions matmul_options(const MatmulCheck& c) {
  return {.accumulator = c.accumulator, .round = c.round, .seed = c.seed, .threads = 0};
}

// A matrix-unit instruction reads only values of its operand types
// (mma.h): the kernel refuses any other value it meets, which for a drawn
// operand depends on the seed. So every value of the operand's format --
// at most 2^16 codes (matmul_operand_problem) -- must be one of the type's;
// else the error names the one nearest 1 in magnitude that is not.
std::string instruction_operand_problem(const k::MmaInstruction& i, k::MmaType type, const FormatEntry& f,
                                        std::string_view which) {
  const std::uint64_t codes = std::uint64_t{1} << f.info.bits;
  std::uint64_t example = 0;
  double distance = -1;  // |log2 |v|| of the example; -1: every value is held
  for (std::uint64_t code = 0; code < codes; ++code) {
    const double v = f.to_double(code);
    if (k::mma_holds(type, v)) continue;
    const double d = std::isfinite(v) && v != 0 ? std::abs(std::log2(std::abs(v))) : HUGE_VAL;
    if (distance < 0 || d < distance) example = code, distance = d;
  }
  if (distance < 0) return {};
  const std::string_view same = k::mma_format_name(type);
  return fmt::format("{} takes {} operands, and {} is {}, whose value {} is not one{}", i.name,
                     k::mma_type_info(type).name, which, f.name, f.to_text(example),
                     same.empty() ? "" : fmt::format(" ({} is a format it takes)", same));
}

// The kernels' own check of a matmul check's accumulator for its operands
// (e.g. bf16_dot2 takes only operands exact in bf16), and an instruction's
// operand types, in step 1.
void validate_matmul(const MatmulCheck& c, const MatmulPlan& p) {
  if (const k::AccumulatorProblem e = k::accumulator_problem(c.accumulator, operand_range(*p.a), operand_range(*p.b),
                                                             output_precision(*c.output), c.round))
    throw UsageError("matmul: " + e.message);
  if (c.accumulator.kind == k::Accumulator::instruction) {
    const k::MmaInstruction& i = k::mma_instructions()[static_cast<std::size_t>(c.accumulator.instruction)];
    for (const auto& [type, f, which] : {std::tuple{i.a, p.a, "a"}, std::tuple{i.b, p.b, "b"}})
      if (const std::string e = instruction_operand_problem(i, type, *f, which); !e.empty())
        throw UsageError("matmul: " + e);
  }
}

// An operand file's format: the one the check names, else the file's own
// (float16, or the raw data's dtype). Its shape must be 2-D.
const FormatEntry* file_format(const FormatEntry* named, const InputSource& file, const Planned& p,
                               std::string_view field) {
  if (p.shape.size() != 2)
    throw UsageError(fmt::format("{}: {} is {}, not a matrix (2-D)", field, file.path, shape_text(p.shape)));
  if (named != nullptr) return named;
  if (p.dtype == "float32" || p.dtype == "float64")
    throw UsageError(fmt::format("{}: {} holds {} values; name the format they are rounded into: "
                                 "{}: {{path: {}, format: FORMAT}}",
                                 field, file.path, p.dtype, field, file.path));
  const FormatEntry* found = file.dtype != nullptr ? file.dtype : find_format(p.dtype);
  if (found == nullptr) throw UsageError(fmt::format("{}: {}: unknown dtype {}", field, file.path, p.dtype));
  if (const std::string why = matmul_operand_problem(*found); !why.empty())
    throw UsageError(fmt::format("{}: {} holds {}", field, file.path, why));
  return found;
}

// Step 1 for a matmul check: the operands' formats and the sizes from the
// files' headers (planned by the caller), checked against each other and the
// limits.
MatmulPlan plan_matmul(const MatmulCheck& c, Inputs& inputs) {
  MatmulPlan p{c.a, c.b, c.m, c.n, c.k};
  std::uint64_t a_cols = 0, b_rows = 0;
  if (!c.a_file.path.empty()) {
    const Planned& h = inputs.plan(c.a_file);
    p.a = file_format(c.a, c.a_file, h, "a");
    p.m = h.shape[0], p.k = a_cols = h.shape[1];
  }
  if (!c.b_file.path.empty()) {
    const Planned& h = inputs.plan(c.b_file);
    p.b = file_format(c.b, c.b_file, h, "b");
    p.k = b_rows = h.shape[0], p.n = h.shape[1];
  }
  if (a_cols != 0 && b_rows != 0 && a_cols != b_rows)
    throw UsageError(fmt::format("a is {} x {} and b is {} x {}: A's columns must match B's rows", p.m, a_cols,
                                 b_rows, p.n));
  if (const std::string e = spec_limits::matmul_size_error(p.m, p.n, p.k); !e.empty()) throw UsageError(e);
  validate_matmul(c, p);
  return p;
}

// Step 1 for one check: its inputs planned from their headers and their
// shapes checked; returns the bytes the check itself needs while it runs
// (its arrays beside the inputs, which Inputs counts).
double plan(const Check& c, Inputs& inputs, const Spec& spec, MatmulPlan& matmul) {
  if (const auto* mm = std::get_if<MatmulCheck>(&c.what)) {
    // The files first: a bad file's error names its own place in the spec.
    for (const InputSource* file : {&mm->a_file, &mm->b_file})
      if (!file->path.empty()) inputs.plan(*file);
    try {
      matmul = plan_matmul(*mm, inputs);
    } catch (const UsageError& e) {
      throw UsageError(spec_error(spec.name, c.place, fmt::format("check '{}': {}", c.name, e.what())));
    }
    return spec_limits::matmul_bytes(matmul.m, matmul.n, matmul.k);
  }
  if (const auto* q = std::get_if<QuantizeCheck>(&c.what)) {
    const Planned& in = inputs.plan(q->input);
    const std::size_t row = quantize_row(*q, in.shape, in.count);
    if (scaled::find_scheme(q->scheme)->kind == scaled::Kind::delayed && row >= in.count)
      throw UsageError(spec_error(
          spec.name, c.place,
          fmt::format("check '{}': {} scales each row (a training step) by the amaxes of the rows before it, "
                      "and this input is one row of {}: give a 2-D input (steps x values) or row_length",
                      c.name, q->scheme, in.count)));
    // The input and its round trip as float, their copies as double, and
    // the scheme's elements and scales (at most 8 bytes an element); rows
    // padded to whole blocks, their round trip and elements besides.
    const std::size_t padded = padded_count(*q, row, in.count);
    return 32.0 * static_cast<double>(in.count) + (padded > in.count ? 24.0 * static_cast<double>(padded) : 0.0);
  }
  if (const auto* v = std::get_if<ConvertCheck>(&c.what)) {
    // Actual and expected as double, and an overflow flag per element.
    return 17.0 * static_cast<double>(inputs.plan(v->input).count);
  }
  const auto& v = std::get<CompareCheck>(c.what);
  const Planned& a = inputs.plan(v.actual);
  const Planned& e = inputs.plan(v.expected);
  if (a.shape != e.shape)
    throw UsageError(spec_error(spec.name, c.place,
                                fmt::format("check '{}': actual is {}, expected is {}: the shapes differ", c.name,
                                            shape_text(a.shape), shape_text(e.shape))));
  return 16.0 * static_cast<double>(a.count);  // the copies of both as the ComparedArrays
}

struct Operand {
  std::vector<float> values;
  k::OperandRange range;
  std::string what;  // a file: its name, shape and how many values rounding changed; empty when drawn
};

// Drawn like matmul_error's: N(0, 1) (or its absolute value) from stream
// `stream` of the seed; or the file's values.
Operand matmul_operand(const FormatEntry& f, const InputSource& file, Inputs& inputs, std::size_t count,
                       std::uint64_t seed, std::uint64_t stream, bool positive) {
  const Loaded* loaded = file.path.empty() ? nullptr : &inputs.get(file);
  const std::vector<double> drawn =
      loaded == nullptr ? sampling::matmul_samples(seed, stream, count, positive) : std::vector<double>{};
  std::size_t changed = 0;
  Operand o{matmul_operand_values(f, loaded != nullptr ? loaded->values : drawn, changed), operand_range(f), {}};
  if (loaded != nullptr) o.what = fmt::format("{} ({} changed by rounding into {})", loaded->what, changed, f.name);
  return o;
}

ComparedArrays run_matmul(const MatmulCheck& c, const MatmulPlan& p, Inputs& inputs, std::string& context) {
  const auto m = static_cast<std::size_t>(p.m), n = static_cast<std::size_t>(p.n), kk = static_cast<std::size_t>(p.k);
  const bool positive = c.distribution == Distribution::half_normal;
  // The streams of matmul_error: A from 2k, B from 2k + 1.
  const Operand a = matmul_operand(*p.a, c.a_file, inputs, m * kk, c.seed, 2 * p.k, positive);
  const Operand b = matmul_operand(*p.b, c.b_file, inputs, kk * n, c.seed, 2 * p.k + 1, positive);
  const k::MatmulProblem problem{m, n, kk, a.values.data(), b.values.data(), a.range, b.range};
  const k::MatmulOptions options = matmul_options(c);
  ComparedArrays s;
  s.expected.resize(m * n);
  k::matmul_sums(problem, s.expected.data(), k::MatmulOptions{.accumulator = k::accumulators::fp64, .threads = 0});
  s.actual.resize(m * n);
  if (c.output->declared == nullptr) {
    visit_format(*c.output, [&]<class T>(std::type_identity<T>) {
      std::vector<T> out(m * n);
      k::matmul(problem, out.data(), options);
      for (std::size_t i = 0; i < out.size(); ++i) s.actual[i] = static_cast<double>(out[i]);  // exact
    });
  } else {
    // A declared output has no type to instantiate matmul() for: the sums it
    // would round (scales 1), each rounded into the format as matmul() rounds
    // element i (stochastic_bits(seed, i)).
    std::vector<double> sums(m * n);
    k::matmul_sums(problem, sums.data(), options);
    for_each_rounded(*c.output, sums, k::ConvertOptions{.round = c.round, .seed = c.seed},
                     [&](std::size_t first, std::span<const double> y) {
                       std::copy(y.begin(), y.end(), s.actual.begin() + static_cast<std::ptrdiff_t>(first));
                     });
  }
  const bool drawn = c.a_file.path.empty() || c.b_file.path.empty();
  context = fmt::format("{} x {} -> {}, {}, m={}, n={}, k={}{}{}{}", p.a->name, p.b->name, c.output->name,
                        k::accumulator_label(k::resolve_accumulator(c.accumulator, a.range, b.range)), m, n, kk,
                        drawn ? fmt::format(", seed {}", c.seed) : "", a.what.empty() ? "" : ", a: " + a.what,
                        b.what.empty() ? "" : ", b: " + b.what);
  return s;
}

ComparedArrays run_quantize(const QuantizeCheck& c, const Loaded& in, std::string& context) {
  // The schemes take float32: the input rounded to nearest-even into it.
  const std::vector<float> x = sampling::to_float(in.values);
  const std::size_t row = quantize_row(c, in.shape, x.size());
  ComparedArrays s;
  s.expected.assign(x.begin(), x.end());
  const std::size_t padded = padded_count(c, row, x.size());
  if (padded == x.size()) {
    const scaled::RoundTrip r = scaled::round_trip(c.scheme, x, row);
    s.actual.assign(r.y.begin(), r.y.end());
  } else {
    // Blocks restart at each row, as in a GEMM's K-major operand: a row of L
    // values is ceil(L / B) blocks, the last one short. The kernels block the
    // array they are given, so each row is padded with +0 to whole blocks and
    // the padding dropped after the round trip: a zero changes no block's
    // amax nor the tensor's (NVFP4's second-level scale), so every value is
    // scaled exactly as in its row's own, shorter block.
    const auto b = static_cast<std::size_t>(block_size(c.scheme));
    const std::size_t stride = (row + b - 1) / b * b;
    std::vector<float> xp(padded, 0.0f);
    for (std::size_t first = 0, at = 0; first < x.size(); first += row, at += stride)
      std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(first), std::min(row, x.size() - first),
                  xp.begin() + static_cast<std::ptrdiff_t>(at));
    const scaled::RoundTrip r = scaled::round_trip(c.scheme, xp, stride);
    s.actual.resize(x.size());
    for (std::size_t first = 0, at = 0; first < x.size(); first += row, at += stride)
      std::copy_n(r.y.begin() + static_cast<std::ptrdiff_t>(at), std::min(row, x.size() - first),
                  s.actual.begin() + static_cast<std::ptrdiff_t>(first));
  }
  context = row < x.size() ? fmt::format("{} of {}, rows of {}", c.scheme, in.what, row)
                           : fmt::format("{} of {}", c.scheme, in.what);
  return s;
}

ComparedArrays run_convert(const ConvertCheck& c, const Loaded& in, std::string& context) {
  const FormatEntry& f = *c.format;
  ComparedArrays s;
  s.expected = in.values;
  s.actual.resize(in.values.size());
  s.overflowed.resize(in.values.size());
  for (std::size_t i = 0; i < in.values.size(); ++i) {
    const std::uint32_t random = c.round == Round::stochastic ? k::stochastic_bits(c.seed, i) : 0;
    Flags flags;
    s.actual[i] = f.to_double(f.from_double(in.values[i], c.round, c.overflow, random, &flags));
    // IEEE 754-2019 section 7.4: overflow is signalled whatever the result
    // (infinity, the largest finite value by saturation or by a directed
    // rounding, or a format without infinity's saturation or NaN).
    s.overflowed[i] = flags.overflow();
  }
  context = fmt::format("{} ({}, {}) of {}", f.name, round_name(c.round), overflow_name(c.overflow), in.what);
  return s;
}

}  // namespace

std::vector<CheckResult> run_spec(const Spec& spec, Progress* progress) {
  // Step 1: every input, before any check runs. a. Each check and its
  // inputs' headers: shapes, sizes, the kernel's options.
  Inputs inputs(spec);
  double largest = 0;
  const Check* largest_check = &spec.checks.front();
  std::vector<MatmulPlan> matmuls(spec.checks.size());
  for (std::size_t i = 0; i < spec.checks.size(); ++i) {
    const Check& c = spec.checks[i];
    const double bytes = plan(c, inputs, spec, matmuls[i]);
    if (bytes > largest) largest = bytes, largest_check = &c;
  }
  // b. Memory for the whole run: every distinct input is held until the
  // end, beside the largest of one check's arrays or one input's reading.
  try {
    require_memory(inputs.held_bytes() + std::max(largest, inputs.read_bytes()),
                   "the spec's inputs with its largest check");
  } catch (const UsageError& e) {
    throw UsageError(spec_error(spec.name, largest_check->place, e.what()));
  }
  // c. The inputs read (a .npy file whose contents do not parse stops here).
  for (const Check& c : spec.checks) {
    if (const auto* q = std::get_if<QuantizeCheck>(&c.what)) inputs.get(q->input);
    if (const auto* v = std::get_if<ConvertCheck>(&c.what)) inputs.get(v->input);
    if (const auto* v = std::get_if<CompareCheck>(&c.what)) inputs.get(v->actual), inputs.get(v->expected);
    if (const auto* v = std::get_if<MatmulCheck>(&c.what)) {
      if (!v->a_file.path.empty()) inputs.get(v->a_file);
      if (!v->b_file.path.empty()) inputs.get(v->b_file);
    }
  }

  // Step 2: the checks, in order.
  std::vector<CheckResult> results;
  if (progress != nullptr) progress->set_total(spec.checks.size());
  for (std::size_t i = 0; i < spec.checks.size(); ++i) {
    const Check& c = spec.checks[i];
    if (Progress::interrupted()) throw Interrupted();
    const auto start = std::chrono::steady_clock::now();
    CheckResult r;
    r.name = c.name;
    r.line = c.place.line;
    r.metric = metric_name(c.metric.kind);
    ComparedArrays s;
    if (const auto* mm = std::get_if<MatmulCheck>(&c.what)) s = run_matmul(*mm, matmuls[i], inputs, r.context);
    if (const auto* q = std::get_if<QuantizeCheck>(&c.what)) s = run_quantize(*q, inputs.get(q->input), r.context);
    if (const auto* v = std::get_if<ConvertCheck>(&c.what)) s = run_convert(*v, inputs.get(v->input), r.context);
    if (const auto* v = std::get_if<CompareCheck>(&c.what)) {
      const Loaded& a = inputs.get(v->actual);
      const Loaded& e = inputs.get(v->expected);
      s.actual = a.values;
      s.expected = e.values;
      r.context = fmt::format("{} vs {}", a.what, e.what);
    }
    const Measurement m = measure(c.metric, s);
    r.measured = m.measured;
    r.limit = c.metric.limit;
    r.relation = c.metric.kind == MetricKind::sqnr_db ? ">=" : "<=";
    r.passed = m.passed;
    r.detail = m.detail;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    results.push_back(std::move(r));
    if (progress != nullptr) progress->step();
  }
  if (progress != nullptr) progress->finish();
  return results;
}

}  // namespace lplab::experiments
