// Regression specs (experiments/spec.h): parsing with its error places, each
// metric on hand-made arrays with known answers, a matmul check against the
// matmul_error experiment's own numbers, and the JUnit XML.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/experiments/runner.h"
#include "lplab/regress/spec.h"
#include "lplab/runtime/text.h"

namespace lplab::experiments {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The UsageError message of f(), or "" when it returns.
template <class F>
std::string error_of_call(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// The UsageError message of parse_spec(text), or "" when it parses.
std::string error_of(const std::string& text) {
  return error_of_call([&] { parse_spec(text, "s.yaml"); });
}

Metric metric_from(const std::string& yaml_metric) {
  const Spec s = parse_spec("checks:\n  - name: c\n    compare: {actual: a.npy, expected: b.npy}\n    " + yaml_metric,
                            "s.yaml");
  return s.checks.at(0).metric;
}

// A whole number as digits (for a spec's text).
std::string fmt_whole(double n) { return std::to_string(static_cast<std::uint64_t>(n)); }

Measurement run_metric(const std::string& yaml_metric, std::vector<double> actual, std::vector<double> expected) {
  return measure(metric_from(yaml_metric), ComparedArrays{std::move(actual), std::move(expected), {}});
}

TEST(Spec, parses_every_computation) {
  const Spec s = parse_spec(R"(checks:
  - name: mm
    matmul: {a: e4m3, accumulator: tensor_core, k: 2^12, seed: 7, promote_every: 128}
    max_rel_err: {max: 2^-7}
  - name: q
    quantize: {scheme: nvfp4, input: {distribution: lognormal, n: 100, seed: 1, shape: 2}}
    sqnr_db: {min: 0x1.4p4}
  - name: cv
    convert: {format: bf16, input: g.npy, round: toward_zero, overflow: saturate}
    overflow_fraction: 1e-3
)",
                            "dir/s.yaml");
  EXPECT_EQ(s.stem, "s");
  ASSERT_EQ(s.checks.size(), 3u);
  const auto& mm = std::get<MatmulCheck>(s.checks[0].what);
  EXPECT_EQ(mm.a->name, "float8_e4m3fn");
  EXPECT_EQ(mm.b, mm.a);  // b defaults to a
  EXPECT_EQ(mm.output->name, "float32");
  EXPECT_EQ(mm.accumulator, kernels::accumulators::tensor_core.promoted_every(128));
  EXPECT_EQ(mm.k, 4096u);
  EXPECT_EQ(mm.m, 16u);
  EXPECT_EQ(s.checks[0].metric.limit, 0x1p-7);
  EXPECT_EQ(s.checks[0].place.line, 2);
  EXPECT_EQ(s.checks[0].place.column, 5);
  const auto& q = std::get<QuantizeCheck>(s.checks[1].what);
  EXPECT_EQ(q.input.generator.distribution, Distribution::lognormal);
  EXPECT_EQ(q.input.generator.shape, 2.0);
  EXPECT_EQ(s.checks[1].metric.kind, MetricKind::sqnr_db);
  EXPECT_EQ(s.checks[1].metric.limit, 20.0);
  const auto& cv = std::get<ConvertCheck>(s.checks[2].what);
  EXPECT_EQ(cv.round, Round::toward_zero);
  EXPECT_EQ(cv.overflow, Overflow::saturate);
  EXPECT_EQ(cv.input.path, "g.npy");
  EXPECT_EQ(s.checks[2].metric.limit, 1e-3);
}

TEST(Spec, json_reads_through_the_same_parser) {
  const Spec s = parse_spec(
      R"({"checks": [{"name": "k", "compare": {"actual": "o.npy", "expected": "r.npy"},
                      "assert_close": {"dtype": "float16", "allowed_mismatch": 0.25}}]})",
      "s.json");
  ASSERT_EQ(s.checks.size(), 1u);
  EXPECT_EQ(s.checks[0].metric.kind, MetricKind::assert_close);
  EXPECT_EQ(s.checks[0].metric.rtol, 1e-3);  // torch's float16 defaults
  EXPECT_EQ(s.checks[0].metric.atol, 1e-5);
  EXPECT_EQ(s.checks[0].metric.limit, 0.25);
  // A JSON error names the place too.
  EXPECT_EQ(error_of("{\"checks\": [{\"name\": \"k\", \"compare\": {\"actual\": \"o.npy\", \"expected\": \"r.npy\"},\n"
                     " \"sqnr_db\": {\"mn\": 3}}]}"),
            "s.yaml:2:14: sqnr_db: unknown key 'mn' (did you mean 'min'?); known: min");
}

TEST(Spec, errors_name_line_and_column) {
  // A typo in a key: the key's place and the near miss.
  EXPECT_EQ(error_of("checks:\n  - name: c\n    compare: {actual: a.npy, expected: b.npy}\n"
                     "    assert_close: {dtype: bf16, rtoll: 1}\n"),
            "s.yaml:4:33: assert_close: unknown key 'rtoll' (did you mean 'rtol'?); known: dtype, rtol, atol, "
            "allowed_mismatch, equal_nan");
  EXPECT_EQ(error_of("checks:\n  - name: c\n    convert: {format: bf16, input: g.npy}\n    overflow_fracton: 0\n"),
            "s.yaml:4:5: check: unknown key 'overflow_fracton' (did you mean 'overflow_fraction'?); known: name, "
            "description, matmul, quantize, convert, compare, assert_close, max_ulp, sqnr_db, max_rel_err, "
            "norm_rel_err, max_abs_err, underflow_fraction, overflow_fraction, mismatch_fraction");
  // A missing field names the field, at the mapping that lacks it.
  EXPECT_EQ(error_of("checks:\n  - name: mm\n    matmul:\n      a: e4m3\n      accumulator: fp32\n      seed: 1\n"
                     "    max_rel_err: 1\n"),
            "s.yaml:4:7: matmul: missing field 'k' (the inner dimension)");
  // Wrong types and values, at the value.
  const std::string mm = "checks:\n  - name: mm\n    max_rel_err: 1\n    matmul: {a: e4m3, accumulator: fp32, ";
  EXPECT_EQ(error_of(mm + "seed: 1, k: abc}\n"), "s.yaml:4:54: k: expected a whole number >= 1, got 'abc'");
  EXPECT_EQ(error_of(mm + "k: 4, seed: -1}\n"), "s.yaml:4:54: seed: expected a whole number >= 0, got '-1'");
  EXPECT_EQ(error_of(mm + "seed: 1, k: 0}\n"), "s.yaml:4:54: k: 0 is outside [1, 2147483648]");
  EXPECT_EQ(error_of(mm + "seed: 1, k: 2^40}\n"), "s.yaml:4:54: k: 1099511627776 is outside [1, 2147483648]");
  EXPECT_EQ(error_of(mm + "seed: 1, k: 2^31}\n"), "s.yaml:4:13: matmul: m = 16, n = 16, k = 2147483648 holds more "
                                                  "than 2^31 elements");
  EXPECT_EQ(error_of(mm + "seed: 1, k: 1, round: nearest}\n").substr(0, 26), "s.yaml:4:64: round: unknow");
  EXPECT_EQ(error_of("checks:\n  - name: c\n    convert: {format: bf16, input: g.npy}\n    underflow_fraction: nan\n"),
            "s.yaml:4:25: underflow_fraction: expected a finite number, got 'nan'");
  EXPECT_EQ(error_of("checks:\n  - name: c\n    convert: {format: bf16, input: g.npy}\n    max_abs_err: -inf\n"),
            "s.yaml:4:18: max_abs_err: expected a finite number, got '-inf'");
  EXPECT_EQ(error_of("checks:\n  - name: c\n    convert: {format: bf17, input: g.npy}\n    max_abs_err: 1\n"),
            "s.yaml:3:23: format: unknown format 'bf17' (did you mean bf16?)");
  // A group where one format is needed: the same words as every command.
  EXPECT_EQ(error_of("checks:\n  - name: c\n    convert: {format: fp6, input: g.npy}\n    max_abs_err: 1\n"),
            "s.yaml:3:23: format: 'fp6' is a group of 2 formats (float6_e2m3fn, float6_e3m2fn); name one");
  EXPECT_EQ(error_of("checks:\n  - name: c\n    convert: {format: bf16, input: g.npy}\n"),
            "s.yaml:2:5: check 'c': missing the metric, one of assert_close, max_ulp, sqnr_db, max_rel_err, "
            "norm_rel_err, max_abs_err, underflow_fraction, overflow_fraction, mismatch_fraction");
  EXPECT_EQ(error_of("checks:\n  - name: c\n    convert: {format: bf16, input: g.npy}\n    max_abs_err: 1\n"
                     "  - name: c\n    convert: {format: bf16, input: g.npy}\n    max_abs_err: 1\n"),
            "s.yaml:5:5: check 'c': name given twice");
  EXPECT_EQ(error_of("checks:\n  - name: c\n    name: d\n"), "s.yaml:3:5: check: key 'name' given twice");
  EXPECT_EQ(error_of(""), "s.yaml:1:1: the spec is empty (expected 'checks:' with a list of checks)");
  EXPECT_EQ(error_of("checks: []\n"), "s.yaml:1:9: checks: expected a non-empty list of checks ('- name: ...' items "
                                      "or [...])");
  EXPECT_EQ(error_of("checks:\n  - name: [c\n"),
            "s.yaml:3:1: not valid YAML or JSON: end of sequence flow not found");
}

TEST(Spec, hostile_documents_are_usage_errors) {
  // Deep nesting: yaml-cpp's depth guard, not a stack overflow.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(error_of(deep).find("s.yaml:1:"), std::string::npos);
  EXPECT_NE(error_of(deep).find(": not valid YAML or JSON: nested too deeply"), std::string::npos) << error_of(deep);
  EXPECT_NE(error_of("checks:\n  - " + std::string(5000, '{') + "\n").find("nested too deeply"), std::string::npos);
  // Aliases share nodes; the reader walks only known keys, so a "billion
  // laughs" document is read in a handful of steps (and refused).
  std::string laughs = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 30; ++i)
    laughs += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + std::string(10, ' ') + "]\n";
  for (int i = 1; i < 30; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    const std::size_t at = laughs.find("&l" + std::to_string(i) + " [") + 4 + std::to_string(i).size();
    laughs.replace(at, 10, prev + ", " + prev + ", " + prev);
  }
  EXPECT_NE(error_of(laughs + "checks: *l29\n").find("s.yaml:1:1: spec: unknown key 'l0'"), std::string::npos);
  EXPECT_NE(error_of("a: &a [x]\nb: &b [*a, *a, *a]\nchecks: *b\n").find("s.yaml:1:1: spec: unknown key 'a'"),
            std::string::npos);
  EXPECT_NE(error_of("checks: &c\n  - *c\n").find("s.yaml:"), std::string::npos);
  EXPECT_NE(error_of(std::string("checks:\n  - name: \"\\xff\0\"\n", 26)).find("s.yaml:"), std::string::npos);
  EXPECT_NE(error_of("\t\x01\x02: :\n").find("s.yaml:"), std::string::npos);
  // One line whatever the user's text holds, and no more than 60 characters of it.
  EXPECT_EQ(error_of("checks:\n  - \"na\\nme\\u0001\": x\n"),
            "s.yaml:2:5: check: unknown key 'na\\nme\\x01' (did you mean 'name'?); known: name, description, matmul, quantize, convert, "
            "compare, assert_close, max_ulp, sqnr_db, max_rel_err, norm_rel_err, max_abs_err, underflow_fraction, "
            "overflow_fraction, mismatch_fraction");
  EXPECT_NE(error_of("checks:\n  - name: c\n    convert: {format: " + std::string(1000, 'x') + ", input: g.npy}\n")
                .find(std::string(60, 'x') + "...'"),
            std::string::npos);
}

TEST(Spec, one_document_only) {
  // Text after the first document is refused, not ignored: a second
  // document after '---' (whose failing check would otherwise never run),
  // '...' and more, two JSON objects back to back.
  const std::string check = "checks:\n  - name: a\n    compare: {actual: a.npy, expected: b.npy}\n    max_abs_err: 1\n";
  EXPECT_EQ(error_of(check + "---\nchecks:\n  - name: b\n").substr(0, 41),
            "s.yaml:5:1: a second YAML document: a spe");  // at its '---'
  // yaml-cpp 0.7's LoadAll never returns on this (a fuzz input): the
  // documents are counted up to two.
  EXPECT_NE(error_of(", maks:\n  - {nameA dup, convert: {oamfrt: bf16, input:x_ulpulpy}, max_ulp: {max: 1}}\n"
                     "  - {name: dup, convert: \x80" "format: bf16nput: a.npy}, max_ulp: {max: 1}}\n"),
            "");
  EXPECT_NE(error_of(check + "...\ngarbage: [\n").find("s.yaml:"), std::string::npos);
  EXPECT_EQ(error_of(check + "...\ngarbage: [\n").find("s.yaml:6:1: "), std::string::npos);  // not silent
  EXPECT_EQ(error_of("{\"checks\": [{\"name\": \"a\", \"compare\": {\"actual\": \"a.npy\", \"expected\": "
                     "\"b.npy\"}, \"max_abs_err\": 1}]}\n{\"checks\": 5}\n")
                .substr(0, 39),
            "s.yaml:2:1: a second YAML document: a s");
  EXPECT_EQ(error_of(check), "");
}

TEST(Spec, parameters_that_do_not_apply_are_refused) {
  const std::string mm = "checks:\n  - name: mm\n    max_rel_err: 1\n    matmul: {a: e4m3, k: 64, seed: 1, ";
  EXPECT_EQ(error_of(mm + "accumulator: fp32, promote_every: 64}\n"),
            "s.yaml:4:58: matmul: 'promote_every' applies to the tensor_core accumulator only, not fp32");
  EXPECT_EQ(error_of(mm + "accumulator: fp16, tc_fraction_bits: 13}\n"),
            "s.yaml:4:58: matmul: 'fraction_bits' applies to the tensor_core accumulator only, not fp16");
  // The kernels' one check of a model (kernels::accumulator_problem), at
  // parse time for what needs no operand.
  EXPECT_EQ(error_of(mm + "accumulator: tensor_core, tc_fraction_bits: 49}\n"),
            "s.yaml:4:65: matmul: fraction_bits 49 is outside [0, 48]");
  EXPECT_EQ(error_of(mm + "accumulator: tensor_core, tc_fraction_bits: 48}\n"), "");
  EXPECT_EQ(error_of(mm + "accumulator: hopper_wgmma_fp8, block: 16, promote_every: 40}\n"),
            "s.yaml:4:81: matmul: promote_every 40 is not a multiple of the 16-product block");
  // At the key of the parameter at fault, whatever else its message names
  // (this one names the block too) and in whichever order the keys come.
  EXPECT_EQ(error_of(mm + "accumulator: hopper_wgmma_fp8, promote_every: 40, block: 16}\n"),
            "s.yaml:4:70: matmul: promote_every 40 is not a multiple of the 16-product block");
  const std::string cv = "checks:\n  - name: c\n    max_abs_err: 1\n    convert: {format: bf16, input: ";
  EXPECT_EQ(error_of(cv + "{distribution: uniform, n: 4, seed: 1, sigma: 2}}\n"),
            "s.yaml:4:75: input: 'sigma' does not apply to the uniform distribution");
  EXPECT_EQ(error_of(cv + "{distribution: normal, n: 4, seed: 1, low: -1e308, high: 1e308}}\n"),
            "s.yaml:4:74: input: 'low' does not apply to the normal distribution");
  EXPECT_EQ(error_of(cv + "{distribution: half_normal, n: 4, seed: 1, shape: 2}}\n"),
            "s.yaml:4:79: input: 'shape' does not apply to the half_normal distribution");
  EXPECT_EQ(error_of(cv + "{distribution: lognormal, n: 4, seed: 1, shape: 2, sigma: 3}}\n"), "");
  EXPECT_EQ(error_of(cv + "g.npy, seed: 3}\n"), "s.yaml:4:43: convert: 'seed' goes with round: stochastic only");
  EXPECT_EQ(error_of(cv + "g.npy, seed: 3, round: stochastic}\n"), "");
}

// A matmul check's model keys are the kernels' table of tensor-core fields
// (kernels::accumulator_fields): every field there is a key, with the value
// it sets, and the bounds are the table's. zero_exponent was missing from the
// spec reader's own copy of the list.
TEST(Spec, model_keys_are_the_kernels_field_table) {
  const std::string mm = "checks:\n  - name: mm\n    max_rel_err: 1\n    matmul: {a: e4m3, k: 64, seed: 1, "
                         "accumulator: tensor_core, ";
  int value = 7;
  for (const kernels::AccumulatorField& f : kernels::accumulator_fields()) {
    SCOPED_TRACE(std::string(f.name));
    // A value inside the field's bounds that the others accept (promotion
    // in whole 32-product blocks, Hopper's block for 8-bit operands).
    const int v = f.name == "zero_exponent" ? -140 : f.name == "promote_every" ? 64 : f.name == "block" ? 32 : value++;
    const Spec spec = parse_spec(mm + std::string(f.name) + ": " + std::to_string(v) + "}\n", "s.yaml");
    const auto& check = std::get<MatmulCheck>(spec.checks.at(0).what);
    EXPECT_EQ(check.accumulator.*f.field, v);
    EXPECT_EQ(error_of(mm + std::string(f.name) + ": " + std::to_string(f.hi + 1) + "}\n"),
              fmt::format("s.yaml:4:65: matmul: {} {} is outside [{}, {}]", f.name, f.hi + 1, f.lo, f.hi));
  }
}

// Every policy of formats/policy.h is read by its name and each alias, and
// nothing else: the tool and specs take their spellings from that one table
// (the parser kept its own list before, which a new rounding would miss).
TEST(Spec, policies_read_by_every_name_of_the_table) {
  std::size_t names = 0;
  for (Round r : kRounds) {
    EXPECT_EQ(parse_round(round_name(r)), r);
    for (const char* alias : round_aliases(r).names) {
      if (alias == nullptr) continue;
      EXPECT_EQ(parse_round(alias), r) << alias;
      ++names;
    }
  }
  for (Overflow o : kOverflows) {
    EXPECT_EQ(parse_overflow(overflow_name(o)), o);
    for (const char* alias : overflow_aliases(o).names) {
      if (alias == nullptr) continue;
      EXPECT_EQ(parse_overflow(alias), o) << alias;
    }
  }
  EXPECT_EQ(names, 10u);  // rne, rn, rna, rz, ru, rp, rd, rm, sr, rs
  EXPECT_EQ(parse_round("rp"), Round::upward) << "PTX's .rp";
  EXPECT_EQ(parse_round("rm"), Round::downward) << "PTX's .rm";
  EXPECT_EQ(parse_round("rs"), Round::stochastic) << "PTX's .rs";
  EXPECT_EQ(error_of_call([] { parse_round("sideways"); }),
            "unknown rounding 'sideways' (nearest_even, nearest_away, toward_zero, upward, downward, stochastic)");
  EXPECT_EQ(error_of_call([] { parse_overflow("clamp"); }), "unknown overflow policy 'clamp' (ieee, saturate, wrap)");
}

TEST(Spec, names_are_one_line) {
  const std::string rest = "\n    compare: {actual: a.npy, expected: b.npy}\n    max_abs_err: 1\n";
  EXPECT_EQ(error_of("checks:\n  - name: \"a\\nb\"" + rest),
            "s.yaml:2:11: name: 'a\\nb' holds a control character (line break, tab, ...)");
  EXPECT_NE(error_of("checks:\n  - name: \"x\\u0000y\"" + rest).find("holds a control character"), std::string::npos);
  EXPECT_NE(error_of("checks:\n  - name: \"x\\ty\"" + rest).find("holds a control character"), std::string::npos);
  EXPECT_EQ(error_of("checks:\n  - name: \"caf\u00e9 <1>\"" + rest), "");
}

// A name goes into JSON and JUnit XML, UTF-8 both: bytes that are not UTF-8
// are refused when the spec is read (`--output json` failed after every
// check had run, with nlohmann's exception as an internal error).
TEST(Spec, names_are_utf8) {
  const std::string rest = "\n    compare: {actual: a.npy, expected: b.npy}\n    max_abs_err: 1\n";
  const std::string why = ", which is not UTF-8 text; a name is written into JSON and JUnit XML, which are UTF-8";
  EXPECT_EQ(error_of("checks:\n  - name: ab\xff" + rest), "s.yaml:2:11: name: byte 3 of the name is 0xff" + why);
  EXPECT_EQ(error_of("checks:\n  - name: x\xc0\xaf" + rest), "s.yaml:2:11: name: byte 2 of the name is 0xc0" + why);
  EXPECT_EQ(error_of("checks:\n  - name: x\xed\xa0\x80" + rest), "s.yaml:2:11: name: byte 2 of the name is 0xed" + why);
  EXPECT_EQ(error_of("checks:\n  - name: caf\xc3" + rest), "s.yaml:2:11: name: byte 4 of the name is 0xc3" + why);
  EXPECT_EQ(error_of("checks:\n  - name: caf\xc3\xa9 \xf0\x9f\x98\x80 \xef\xbf\xbe" + rest), "");
}

TEST(Spec, assert_close_boundary_is_inclusive) {
  // allowance 0.25 + 0.5 * |1| = 0.75 (exact in binary): 1.75 passes, the
  // next double above fails.
  const std::string m = "assert_close: {rtol: 0.5, atol: 0.25}";
  EXPECT_TRUE(run_metric(m, {1.75}, {1.0}).passed);
  const Measurement over = run_metric(m, {1.0, std::nextafter(1.75, 2.0)}, {1.0, 1.0});
  EXPECT_FALSE(over.passed);
  EXPECT_EQ(over.measured, 0.5);
  EXPECT_NE(over.detail.find("worst at index 1"), std::string::npos);
  // torch's bf16 defaults: at expected 0 the allowance is atol = 1e-5.
  EXPECT_TRUE(run_metric("assert_close: {dtype: bf16}", {1e-5}, {0.0}).passed);
  EXPECT_FALSE(run_metric("assert_close: {dtype: bf16}", {std::nextafter(1e-5, 1.0)}, {0.0}).passed);
  // ... and at expected 1, 1e-5 + 1.6e-2.
  EXPECT_TRUE(run_metric("assert_close: {dtype: bf16}", {1.016}, {1.0}).passed);
  EXPECT_FALSE(run_metric("assert_close: {dtype: bf16}", {1.01602}, {1.0}).passed);
  EXPECT_FALSE(run_metric("assert_close: {dtype: float32}", {1.0 + 1.6e-2}, {1.0}).passed);
  // An explicit rtol overrides the dtype's default, in either order.
  EXPECT_TRUE(run_metric("assert_close: {rtol: 0.1, dtype: float32}", {1.05}, {1.0}).passed);
  // allowed_mismatch: 1 of 4 elements off is a fraction 0.25.
  const std::string some = "assert_close: {dtype: fp32, allowed_mismatch: 0.25}";
  EXPECT_TRUE(run_metric(some, {1, 2, 3, 5}, {1, 2, 3, 4}).passed);
  EXPECT_FALSE(run_metric(some, {1, 2, 4, 5}, {1, 2, 3, 4}).passed);
  // NaN: a mismatch unless equal_nan, and then only against NaN; equal
  // infinities match.
  EXPECT_FALSE(run_metric("assert_close: {dtype: fp32}", {kNaN}, {kNaN}).passed);
  EXPECT_TRUE(run_metric("assert_close: {dtype: fp32, equal_nan: true}", {kNaN, kInf}, {kNaN, kInf}).passed);
  EXPECT_FALSE(run_metric("assert_close: {dtype: fp32, equal_nan: true}", {kNaN}, {1.0}).passed);
  EXPECT_FALSE(run_metric("assert_close: {dtype: fp32}", {kInf}, {-kInf}).passed);
}

TEST(Spec, max_ulp_counts_codes) {
  // bf16 around 1: ulp 2^-7 above 1, 2^-8 below.
  EXPECT_EQ(run_metric("max_ulp: {format: bf16, max: 3}", {1.0 + 3 * 0x1p-7}, {1.0}).measured, 3.0);
  EXPECT_EQ(run_metric("max_ulp: {format: bf16, max: 3}", {1.0 - 0x1p-8}, {1.0 + 0x1p-7}).measured, 2.0);
  // Across zero: the smallest subnormals on either side are 2 apart, +0 and -0 are 0 apart.
  EXPECT_EQ(run_metric("max_ulp: {format: bf16, max: 0}", {-0x1p-133}, {0x1p-133}).measured, 2.0);
  EXPECT_TRUE(run_metric("max_ulp: {format: bf16, max: 0}", {-0.0}, {0.0}).passed);
  // Both values are rounded into the format first: within half an ulp is 0.
  EXPECT_EQ(run_metric("max_ulp: {format: bf16, max: 0}", {1.0 + 0x1p-9}, {1.0}).measured, 0.0);
  // E4M3: 448 = 1.75 * 2^8 (0|1111|110) and 320 = 1.25 * 2^8 (0|1111|010), 4 codes apart.
  EXPECT_EQ(run_metric("max_ulp: {format: e4m3, max: 8}", {448.0}, {320.0}).measured, 4.0);
  EXPECT_EQ(run_metric("max_ulp: {format: e4m3, max: 8}", {kNaN}, {1.0}).measured, kInf);
  EXPECT_EQ(run_metric("max_ulp: {format: e4m3, max: 8}", {kNaN}, {kNaN}).measured, 0.0);
  // NaN against a value that the format would round to NaN (E4M3 has no
  // infinity: 1000 overflows to NaN) or saturate (E2M1 has no NaN: NaN
  // would become 6) is still infinitely far.
  EXPECT_EQ(run_metric("max_ulp: {format: e4m3, max: 8}", {kNaN}, {1000.0}).measured, kInf);
  EXPECT_EQ(run_metric("max_ulp: {format: e2m1, max: 8}", {kNaN}, {6.0}).measured, kInf);
  EXPECT_EQ(run_metric("max_ulp: {format: e2m1, max: 8}", {-kNaN}, {kNaN}).measured, 0.0);
  // Two different values that both overflow: infinitely far, though both
  // round to E4M3's NaN code or E5M2's infinity; one overflowing value
  // against one in range, too. Equal values that overflow are 0 apart.
  EXPECT_EQ(run_metric("max_ulp: {format: e4m3, max: 8}", {1e6}, {1e3}).measured, kInf);
  EXPECT_EQ(run_metric("max_ulp: {format: e5m2, max: 8}", {1e6}, {1e7}).measured, kInf);
  EXPECT_EQ(run_metric("max_ulp: {format: fp16, max: 8}", {70000.0}, {kInf}).measured, kInf);
  EXPECT_EQ(run_metric("max_ulp: {format: e4m3, max: 0}", {1e6, kInf}, {1e6, kInf}).measured, 0.0);
  EXPECT_EQ(run_metric("max_ulp: {format: e2m1, max: 0}", {-kInf}, {-kInf}).measured, 0.0);
  // 464 is E4M3's overflow threshold (a tie rounds up past 448); 460 is not.
  EXPECT_EQ(run_metric("max_ulp: {format: e4m3, max: 8}", {460.0}, {448.0}).measured, 0.0);
}

TEST(Spec, norms_neither_overflow_nor_underflow) {
  // Squares of 1e-170 underflow double, squares of 1e200 overflow it: the
  // norms are scaled first. ||(1, 2)|| / ||(1, 1)|| = sqrt(5/2) at any scale.
  EXPECT_DOUBLE_EQ(run_metric("norm_rel_err: 1", {2e-170, 3e-170}, {1e-170, 1e-170}).measured, std::sqrt(2.5));
  EXPECT_DOUBLE_EQ(run_metric("norm_rel_err: 1", {2e200, 3e200}, {1e200, 1e200}).measured, std::sqrt(2.5));
  EXPECT_FALSE(run_metric("norm_rel_err: 1e-6", {2e-170, 3e-170}, {1e-170, 1e-170}).passed);
  // 10 log10(2 / 5) dB, and 10 log10(2 / 0.25) with a difference of 0.5e200.
  EXPECT_NEAR(run_metric("sqnr_db: 0", {2e-170, 3e-170}, {1e-170, 1e-170}).measured, 10 * std::log10(0.4), 1e-12);
  const Measurement big = run_metric("sqnr_db: 1", {1.5e200, 1e200}, {1e200, 1e200});
  EXPECT_NEAR(big.measured, 10 * std::log10(8.0), 1e-12);
  EXPECT_TRUE(big.passed);
  EXPECT_NE(big.detail.find("signal power "), std::string::npos);
  EXPECT_EQ(big.detail.find("inf"), std::string::npos) << big.detail;
  // A difference that overflows double itself: |1.5e308 - -1.5e308| = 3e308.
  EXPECT_DOUBLE_EQ(run_metric("norm_rel_err: 3", {1.5e308}, {-1.5e308}).measured, 2.0);
  EXPECT_NEAR(run_metric("sqnr_db: -10", {1.5e308}, {-1.5e308}).measured, 10 * std::log10(0.25), 1e-12);
  // Ordinary values: the plain formula's result.
  EXPECT_EQ(run_metric("norm_rel_err: 1", {3.0, 5.0}, {3.0, 4.0}).measured, std::sqrt(1.0) / std::sqrt(25.0));
}

TEST(Spec, sqnr_and_relative_errors) {
  // signal 3^2 + 4^2 = 25, noise 0.5^2 = 0.25: 10 log10(100) = 20 dB.
  const Measurement q = run_metric("sqnr_db: {min: 20}", {3.0, 4.5}, {3.0, 4.0});
  EXPECT_DOUBLE_EQ(q.measured, 20.0);
  EXPECT_FALSE(run_metric("sqnr_db: {min: 20.001}", {3.0, 4.5}, {3.0, 4.0}).passed);
  EXPECT_EQ(run_metric("sqnr_db: 20", {3.0}, {3.0}).measured, kInf);
  EXPECT_FALSE(run_metric("sqnr_db: 20", {kNaN}, {3.0}).passed);
  // max_rel_err: |1.5 - 1| / 1 = 0.5 is the worst; a zero reference with a
  // nonzero result is infinitely wrong, with a zero result exact.
  EXPECT_EQ(run_metric("max_rel_err: 0.5", {1.5, 2.5, 0.0}, {1.0, 2.0, 0.0}).measured, 0.5);
  EXPECT_TRUE(run_metric("max_rel_err: 0.5", {1.5, 2.5, 0.0}, {1.0, 2.0, 0.0}).passed);
  EXPECT_EQ(run_metric("max_rel_err: 0.5", {1.0, 1e-300}, {1.0, 0.0}).measured, kInf);
  EXPECT_FALSE(run_metric("max_rel_err: {max: 2^-2}", {1.5}, {1.0}).passed);
  // norm_rel_err: ||(0, 1)|| / ||(3, 4)|| = 1/5.
  EXPECT_DOUBLE_EQ(run_metric("norm_rel_err: 0.2", {3.0, 5.0}, {3.0, 4.0}).measured, 0.2);
  EXPECT_EQ(run_metric("max_abs_err: 0.5", {3.0, 5.0}, {3.0, 4.0}).measured, 1.0);
}

TEST(SpecRun, overflow_counts_the_flag_whatever_the_result) {
  // E2M1 has no infinity or NaN (IEEE overflow saturates to 6), and toward
  // zero an overflow gives the largest finite value: the actual values stay
  // finite, but every conversion of a value from [100, 200] overflowed.
  const Spec spec = parse_spec(R"(checks:
  - name: fp4
    convert: {format: e2m1, input: {distribution: uniform, low: 100, high: 200, n: 8, seed: 1}}
    overflow_fraction: 0
  - name: e5m2_toward_zero
    convert: {format: e5m2, round: toward_zero, input: {distribution: uniform, low: 1e6, high: 2e6, n: 8, seed: 1}}
    overflow_fraction: 0
  - name: fp6_saturate
    convert: {format: e2m3, overflow: saturate, input: {distribution: uniform, low: 8, high: 9, n: 8, seed: 1}}
    overflow_fraction: 0
  - name: bf16_in_range
    convert: {format: bf16, round: toward_zero, input: {distribution: uniform, low: 8, high: 9, n: 8, seed: 1}}
    overflow_fraction: 0
)",
                               "s.yaml");
  const std::vector<CheckResult> r = run_spec(spec);
  ASSERT_EQ(r.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r[i].measured, 1.0) << r[i].name;
    EXPECT_FALSE(r[i].passed) << r[i].name;
  }
  EXPECT_EQ(r[3].measured, 0.0);
  EXPECT_TRUE(r[3].passed);
}

TEST(Spec, fractions) {
  // Underflow: of the 3 finite nonzero expected values, 1 became zero.
  const Measurement u = run_metric("underflow_fraction: 0.34", {0.0, 0.0, 1.0, -0.0, kInf}, {0.0, 1e-9, 1.0, 2.0, kInf});
  EXPECT_DOUBLE_EQ(u.measured, 2.0 / 3.0);
  EXPECT_FALSE(u.passed);
  EXPECT_NE(u.detail.find("2 of 3"), std::string::npos);
  // Overflow: finite expected, non-finite actual.
  EXPECT_EQ(run_metric("overflow_fraction: 0.5", {kInf, 1.0, kNaN, 1.0}, {1e9, 1.0, 1e9, kInf}).measured, 2.0 / 3.0);
  // Mismatch: two NaNs and +0/-0 are equal.
  EXPECT_EQ(run_metric("mismatch_fraction: 0", {kNaN, -0.0, 1.0, 2.0}, {kNaN, 0.0, 1.0, 3.0}).measured, 0.25);
}

// A temporary directory with a spec and .npy files written byte by byte.
class SpecFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lplab_spec_test_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A little-endian .npy of NumPy format version 1.0: float64 values of
  // shape (n,), or the raw bytes of any descriptor and shape.
  void write_npy(const std::string& name, const std::vector<double>& v) {
    write_raw(name, "<f8", std::to_string(v.size()) + ",",
              std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double)));
  }
  void write_raw(const std::string& name, const std::string& descr, const std::string& shape,
                 const std::string& data) {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
    header.append(64 - (10 + header.size() + 1) % 64, ' ');
    header += '\n';
    std::ofstream f(dir_ / name, std::ios::binary);
    f.write("\x93NUMPY\x01\x00", 8);
    const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
    f.write(len, 2);
    f << header << data;
  }
  std::string write_spec(const std::string& text) {
    std::ofstream(dir_ / "spec.yaml") << text;
    return (dir_ / "spec.yaml").string();
  }

  std::filesystem::path dir_;
};

TEST_F(SpecFiles, runs_checks_on_relative_npy_paths) {
  write_npy("x.npy", {1.0, 0x1p-140, 3.0, 70000.0});
  const Spec spec = load_spec(write_spec(R"(checks:
  - name: bf16_underflow
    convert: {format: bf16, input: x.npy}
    underflow_fraction: {max: 0}
  - name: fp16_overflow
    convert: {format: fp16, input: x.npy, overflow: saturate}
    overflow_fraction: {max: 0.25}
  - name: fp16_ulp
    convert: {format: fp16, input: x.npy}
    max_ulp: 0
)"));
  const std::vector<CheckResult> r = run_spec(spec);
  ASSERT_EQ(r.size(), 3u);
  // 2^-140 is below bf16's smallest subnormal 2^-133 (half of it rounds to 0).
  EXPECT_FALSE(r[0].passed);
  EXPECT_EQ(r[0].measured, 0.25);
  EXPECT_EQ(r[0].line, 2);
  // 70000 saturates to fp16's 65504: counted as an overflow (1 of 4).
  EXPECT_TRUE(r[1].passed);
  EXPECT_EQ(r[1].measured, 0.25);
  EXPECT_EQ(r[1].relation, "<=");
  // max_ulp defaults to the converted format: 70000 becomes inf, which the
  // expected value (rounded into fp16) is too.
  EXPECT_EQ(r[2].metric, "max_ulp");
}

TEST_F(SpecFiles, bad_inputs_stop_the_run_before_any_check) {
  write_npy("a.npy", {1.0, 2.0});
  write_npy("b.npy", {1.0, 2.0, 3.0});
  const Spec spec = load_spec(write_spec(R"(checks:
  - name: fine
    convert: {format: bf16, input: a.npy}
    max_abs_err: 1
  - name: shapes
    compare: {actual: a.npy, expected: b.npy}
    max_abs_err: 1
)"));
  try {
    run_spec(spec);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("spec.yaml:5:5: check 'shapes': actual is 2, expected is 3"),
              std::string::npos)
        << e.what();
  }
  const Spec missing = load_spec(write_spec("checks:\n  - name: m\n    convert: {format: bf16, input: nope.npy}\n"
                                            "    max_abs_err: 1\n"));
  try {
    run_spec(missing);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("spec.yaml:3:36: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nope.npy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_spec((dir_ / "absent.yaml").string()), UsageError);
}

TEST_F(SpecFiles, empty_inputs_are_refused) {
  write_npy("e.npy", {});
  write_npy("f.npy", {});
  const Spec spec = load_spec(write_spec("checks:\n  - name: e\n    compare: {actual: e.npy, expected: f.npy}\n"
                                         "    assert_close: {dtype: float32}\n"));
  try {
    run_spec(spec);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("spec.yaml:3:23: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("e.npy: has no elements (shape 0)"), std::string::npos) << e.what();
  }
}

TEST_F(SpecFiles, the_spec_file_is_a_bounded_regular_file) {
  auto message = [](const std::string& path) {
    try {
      load_spec(path);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message(dir_.string()), dir_.string() + ": is a directory, not a YAML or JSON spec file");
  EXPECT_EQ(message("/dev/zero"),
            "/dev/zero: a character device, not a regular file (expected a YAML or JSON spec file)");
  EXPECT_EQ(message((dir_ / "absent.yaml").string()), (dir_ / "absent.yaml").string() + ": no such file");
  // 16 MiB of comment and a check: one byte too many.
  const std::string check = "checks:\n  - name: c\n    compare: {actual: a.npy, expected: b.npy}\n    max_abs_err: 1\n";
  std::string big(std::size_t{16} << 20, '#');
  big.back() = '\n';
  const std::string path = write_spec(big + check);
  EXPECT_EQ(message(path), path + ": larger than 16 MiB, too large for a YAML or JSON spec file");
  EXPECT_EQ(message(write_spec(check)), "");
}

TEST_F(SpecFiles, memory_is_checked_for_the_whole_run) {
  // Each generator alone passes the parser's check (its samples and
  // derived arrays, 32 bytes a sample, are half of the allowance), but the
  // run holds all nine at 8 bytes a sample: 9/8 of the allowance.
  const double allowed = 0.75 * static_cast<double>(this_machine().memory_bytes);
  const double n = std::floor(allowed / 64);
  if (n > 0x1p31 || n < 1) GTEST_SKIP() << "this machine's memory is outside the test's range";
  std::string text = "checks:\n";
  for (int i = 0; i < 9; ++i)
    text += "  - name: c" + std::to_string(i) + "\n    convert: {format: bf16, input: {distribution: normal, n: " +
            fmt_whole(n) + ", seed: " + std::to_string(i) + "}}\n    max_abs_err: 1\n";
  const Spec spec = parse_spec(text, "s.yaml");  // each check alone fits
  try {
    run_spec(spec);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the spec's inputs with its largest check needs"), std::string::npos)
        << e.what();
  }
  // A .npy file's size comes from its header, before it is read: 2^31
  // float16 elements (a sparse 4 GiB file) held as double and compared.
  const std::uint64_t count = std::uint64_t{1} << 31;
  if (allowed >= 8.0 * 6 * static_cast<double>(count)) GTEST_SKIP() << "this machine could read it";
  std::string header = "{'descr': '<f2', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  {
    std::ofstream f(dir_ / "big.npy", std::ios::binary);
    f.write("\x93NUMPY\x01\x00", 8);
    const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
    f.write(len, 2);
    f << header;
  }
  std::filesystem::resize_file(dir_ / "big.npy", 10 + header.size() + 2 * count);
  const Spec files = load_spec(write_spec("checks:\n  - name: big\n    compare: {actual: big.npy, expected: big.npy}\n"
                                          "    max_abs_err: 1\n"));
  try {
    run_spec(files);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("spec.yaml:2:5: the spec's inputs with its largest check needs"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(SpecFiles, matmul_runs_on_the_users_operands) {
  // A (1 x 3, float64) rounded into fp16: 1.0001 becomes 1 (one value
  // changed). B (3 x 1) float16 ones (code 0x3c00). The fp16 accumulator
  // rounds after each add: 2048 + 1 is a tie between 2048 and 2050 (fp16's
  // spacing at 2^11 is 2), to even 2048, and again for the last 1, so C =
  // 2048 where the exact sum is 2050: relative error 2/2050. A wrong kernel
  // (one rounding at the end, or pairwise) gives 2050 and 0.
  const std::vector<double> a = {2048, 1, 1.0001};
  write_raw("a.npy", "<f8", "1, 3", std::string(reinterpret_cast<const char*>(a.data()), 24));
  write_raw("b.npy", "<f2", "3, 1", std::string("\x00\x3c\x00\x3c\x00\x3c", 6));
  // The same B as raw E4M3 bytes (ml_dtypes' '|V1'): 1.0 is code 0x38.
  write_raw("b8.npy", "|V1", "3, 1", "\x38\x38\x38");
  const Spec spec = load_spec(write_spec(R"(checks:
  - name: fp16_acc
    matmul: {a: {path: a.npy, format: fp16}, b: b.npy, accumulator: fp16}
    max_rel_err: 0
  - name: raw_b
    matmul: {a: {path: a.npy, format: fp16}, b: {path: b8.npy, dtype: e4m3}, accumulator: fp32}
    max_rel_err: 0
  - name: drawn_b
    matmul: {a: {path: a.npy, format: bf16}, b: e4m3, n: 2, seed: 3, accumulator: fp64}
    max_rel_err: 0
)"));
  const std::vector<CheckResult> r = run_spec(spec);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_FALSE(r[0].passed);
  EXPECT_EQ(r[0].measured, 2.0 / 2050.0);
  EXPECT_NE(r[0].context.find("float16 x float16 -> float32, fp16, m=1, n=1, k=3, a: "), std::string::npos)
      << r[0].context;
  EXPECT_NE(r[0].context.find("(1 changed by rounding into float16)"), std::string::npos) << r[0].context;
  EXPECT_EQ(r[0].context.find("seed"), std::string::npos) << r[0].context;  // nothing drawn
  EXPECT_TRUE(r[1].passed) << r[1].measured;  // 2050 is exact in fp32
  EXPECT_NE(r[1].context.find("float16 x float8_e4m3fn"), std::string::npos) << r[1].context;
  EXPECT_TRUE(r[2].passed) << r[2].measured;
  EXPECT_NE(r[2].context.find("m=1, n=2, k=3, seed 3"), std::string::npos) << r[2].context;

  auto error = [&](const std::string& check) {
    try {
      run_spec(load_spec(write_spec("checks:\n  - name: c\n    matmul: " + check + "\n    max_rel_err: 0\n")));
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string at = (dir_ / "spec.yaml").string() + ":2:5: check 'c': ";
  EXPECT_EQ(error("{a: a.npy, b: b.npy, accumulator: fp32}"),
            at + "a: " + (dir_ / "a.npy").string() + " holds float64 values; name the format they are rounded "
                 "into: a: {path: " + (dir_ / "a.npy").string() + ", format: FORMAT}");
  EXPECT_EQ(error("{a: {path: a.npy, format: bf16}, b: a.npy, accumulator: fp32}"),
            at + "b: " + (dir_ / "a.npy").string() + " holds float64 values; name the format they are rounded "
                 "into: b: {path: " + (dir_ / "a.npy").string() + ", format: FORMAT}");
  write_raw("b4.npy", "<f2", "4, 1", std::string(8, '\0'));
  EXPECT_EQ(error("{a: {path: a.npy, format: bf16}, b: b4.npy, accumulator: fp32}"),
            at + "a is 1 x 3 and b is 4 x 1: A's columns must match B's rows");
  write_raw("v.npy", "<f2", "3,", std::string(6, '\0'));
  EXPECT_EQ(error("{a: v.npy, b: b.npy, accumulator: fp32}"),
            at + "a: " + (dir_ / "v.npy").string() + " is 3, not a matrix (2-D)");
  EXPECT_NE(error("{a: nope.npy, b: b.npy, accumulator: fp32}").find("nope.npy"), std::string::npos);
  // Sizes the files give, and a drawn operand's fields without one, are refused.
  EXPECT_EQ(error("{a: b.npy, b: b.npy, m: 3, accumulator: fp32}"),
            (dir_ / "spec.yaml").string() + ":3:34: matmul: 'm' comes from the shape of a's file");
  EXPECT_EQ(error("{a: b.npy, b: b.npy, seed: 3, accumulator: fp32}"),
            (dir_ / "spec.yaml").string() + ":3:34: matmul: 'seed' applies to a drawn operand; a and b are both files");
  EXPECT_EQ(error("{a: b.npy, accumulator: fp32}"),
            (dir_ / "spec.yaml").string() + ":3:13: matmul: missing field 'b' (A is a file: B's format or its .npy file)");
}

TEST_F(SpecFiles, matmul_takes_declared_formats) {
  // A = [1, 0.3, 15] rounded into E3M3 (bias 3, IEEE; declared, no compiled
  // twin): 0.3 becomes 0.3125 (spacing 2^-4 in [0.25, 0.5)). B = three ones,
  // raw E3M3 codes 0x18 (exponent 3 - bias 3, mantissa 0). The exact sum
  // 16.3125 rounded to nearest-even into E4M4 (spacing 1 in [16, 32)) is 16:
  // relative error 0.3125 / 16.3125. A float output (no rounding into the
  // declared format) gives 0; E3M3's own max 15.5 would overflow to inf.
  const std::vector<double> a = {1, 0.3, 15};
  write_raw("a.npy", "<f8", "1, 3", std::string(reinterpret_cast<const char*>(a.data()), 24));
  write_raw("b7.npy", "|V1", "3, 1", "\x18\x18\x18");
  const Spec spec = load_spec(write_spec(R"(checks:
  - name: declared_output
    matmul: {a: {path: a.npy, format: e3m3}, b: {path: b7.npy, dtype: e3m3}, output: e4m4, accumulator: fp32}
    max_rel_err: 0
  - name: drawn
    matmul: {a: e3m3, output: e3m3, accumulator: fp64, k: 64, m: 3, n: 5, seed: 4}
    max_ulp: {format: e3m3, max: 0}
  - name: tensor_core
    matmul: {a: e3m3, b: e2m3, accumulator: tensor_core, k: 64, seed: 4}
    max_rel_err: 2^-10
)"));
  const std::vector<CheckResult> r = run_spec(spec);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].measured, 0.3125 / 16.3125);
  EXPECT_NE(r[0].context.find("e3m3:bias=3:ieee x e3m3:bias=3:ieee -> e4m4:bias=7:ieee, fp32, m=1, n=1, k=3"),
            std::string::npos)
      << r[0].context;
  EXPECT_NE(r[0].context.find("(1 changed by rounding into e3m3:bias=3:ieee)"), std::string::npos) << r[0].context;
  // The fp64 sum rounded once into E3M3 is within 0 ULPs of the exact sum
  // rounded into E3M3; a rounding into any other grid is not, somewhere.
  EXPECT_TRUE(r[1].passed) << r[1].measured << " " << r[1].detail;
  EXPECT_TRUE(r[2].passed) << r[2].measured;
  EXPECT_NE(r[2].context.find("e3m3:bias=3:ieee x float6_e2m3fn -> float32, hopper_wgmma_fp8"), std::string::npos)
      << r[2].context;
  // A declared layout whose values are not all floats cannot be an operand.
  try {
    run_spec(load_spec(write_spec("checks:\n  - name: c\n    matmul: {a: e8m7:bias=100, accumulator: fp32}\n"
                                  "    max_rel_err: 0\n")));
    FAIL() << "a declared format beyond float's range was accepted as an operand";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("a: e8m7:bias=100:ieee is not a matmul input format here: its values span 2^-106 to below 2^155"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(SpecFiles, quantize_reads_rows_for_tiles_and_delayed_steps) {
  // Two steps of 128: the first of amax 1 (at TE's initial scale 1, exact
  // for 1 and 0.5), the second of amax 4 scaled by the first step's
  // 448 / 1: 4 * 448 saturates to 448, so 4 comes back as 1.
  std::vector<double> x(256, 0.5);
  x[0] = 1.0;
  x[128] = 4.0;
  write_raw("steps.npy", "<f8", "2, 128", std::string(reinterpret_cast<const char*>(x.data()), 256 * 8));
  write_npy("flat.npy", x);
  const Spec spec = load_spec(write_spec(R"(checks:
  - name: delayed
    quantize: {scheme: fp8_e4m3_delayed, input: steps.npy}
    max_abs_err: 0
  - name: delayed_flat_rows
    quantize: {scheme: fp8_e4m3_delayed, input: flat.npy, row_length: 128}
    max_abs_err: 0
  - name: tiles
    quantize: {scheme: deepseek_1x128, input: steps.npy}
    max_abs_err: 0
  - name: te_tiles
    quantize: {scheme: te_blockwise_128x128, input: steps.npy}
    max_abs_err: 0
)"));
  const std::vector<CheckResult> r = run_spec(spec);
  EXPECT_EQ(r[0].measured, 3.0);  // |1 - 4|
  EXPECT_EQ(r[1].measured, 3.0);
  EXPECT_NE(r[1].context.find("rows of 128"), std::string::npos) << r[1].context;
  // Each 1 x 128 tile has its own scale: 4 and 1 and 0.5 are exact (4 * 112 = 448).
  EXPECT_EQ(r[2].measured, 0.0);
  // TE's one 128 x 128 tile (two rows): 448 / 4 cut to 64, and 0.5, 1, 4 times 64 are E4M3 codes.
  EXPECT_EQ(r[3].measured, 0.0);
  try {
    run_spec(load_spec(write_spec("checks:\n  - name: d\n    quantize: {scheme: fp8_e5m2_delayed, input: flat.npy}\n"
                                  "    max_abs_err: 0\n")));
    FAIL() << "a delayed scheme over one row was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("check 'd': fp8_e5m2_delayed scales each row (a training step) by the "
                                         "amaxes of the rows before it, and this input is one row of 256"),
              std::string::npos)
        << e.what();
  }
}

// A block scheme's blocks restart at each row (a GEMM's K-major operand):
// a row of 40 values is two MXFP8 blocks, of 32 and 8, and a row of 24 two
// NVFP4 blocks, of 16 and 8. Each row's values are exact in its own blocks;
// a block running on into the next row would take that row's amax -- 1024
// or 6 against values of 2^-7 or 1/32 -- and round them away.
TEST_F(SpecFiles, quantize_blocks_do_not_cross_rows) {
  // MXFP8 (E4M3, E8M0 scale 2^(floor(log2 amax) - 8)): rows of 40, the last
  // one short (20 values).
  std::vector<double> mx(100, 1.0);
  mx[32] = 1024.0;  // row 0's second block: scale 2^2, 1 -> 0.25 and 1024 -> 256
  for (std::size_t i = 40; i < 80; ++i) mx[i] = 0x1p-7 * (1 + static_cast<double>(i % 7) / 8);  // 256..448 x 2^-15
  mx[80] = 1024.0;  // the short last row: one block of 20, scale 2^2
  write_npy("mx.npy", mx);
  write_raw("mx2d.npy", "<f8", "2, 40", std::string(reinterpret_cast<const char*>(mx.data()), 80 * 8));
  // NVFP4 (E2M1, E4M3 block scale, tensor amax 6: s_enc 448): rows of 24.
  std::vector<double> nv(48, 3.0);
  nv[0] = nv[16] = 6.0;  // row 0: blocks of amax 6, scale 448
  for (std::size_t i = 24; i < 48; ++i) nv[i] = i == 24 || i == 40 ? 0.375 : 1.0 / 32;  // amax 0.375: scale 28
  write_npy("nv.npy", nv);
  const Spec spec = load_spec(write_spec(R"(checks:
  - name: mxfp8_rows
    quantize: {scheme: mxfp8_e4m3, input: mx.npy, row_length: 40}
    max_abs_err: 0
  - name: mxfp8_2d
    quantize: {scheme: mxfp8_e4m3, input: mx2d.npy}
    max_abs_err: 0
  - name: nvfp4_rows
    quantize: {scheme: nvfp4, input: nv.npy, row_length: 24}
    max_abs_err: 0
  - name: mxfp8_flat
    quantize: {scheme: mxfp8_e4m3, input: mx.npy}
    max_abs_err: 0
  - name: nvfp4_flat
    quantize: {scheme: nvfp4, input: nv.npy}
    max_abs_err: 0
)"));
  const std::vector<CheckResult> r = run_spec(spec);
  EXPECT_EQ(r[0].measured, 0.0) << r[0].detail;
  EXPECT_NE(r[0].context.find("rows of 40"), std::string::npos) << r[0].context;
  EXPECT_EQ(r[1].measured, 0.0) << r[1].detail;
  EXPECT_EQ(r[2].measured, 0.0) << r[2].detail;
  // One row: the blocks run on, and the small values share a block with
  // 1024 (scale 4: 2^-7 x 1.375 / 4 rounds to a multiple of E4M3's 2^-9) or
  // with 6 (scale 1: 0.375 rounds to E2M1's 0.5).
  EXPECT_GT(r[3].measured, 0.0);
  EXPECT_EQ(r[4].measured, 0.125);
}

TEST(SpecRun, matmul_check_reproduces_the_experiment) {
  // bf16 output of the fp64 accumulator is the exact sum rounded once: the
  // relative error is below bf16's unit roundoff 2^-8, and not zero.
  const Spec exact = parse_spec(
      "checks:\n  - name: e\n    matmul: {a: e4m3, output: bf16, accumulator: fp64, k: 256, seed: 7}\n"
      "    max_rel_err: 2^-8\n",
      "s.yaml");
  const CheckResult r = run_spec(exact).at(0);
  EXPECT_TRUE(r.passed) << r.measured;
  EXPECT_GT(r.measured, 0x1p-11);
  // The same check as a row of the matmul_error experiment (same operand
  // streams, same kernel options): the same maximum relative error, to the
  // bit. Without promotion the tensor-core model's truncation loses in the
  // same direction every block of |N(0, 1)| products, well past 2^-7 at
  // k = 4096; promotion every 128 products (DeepSeek-V3 3.3.2) brings it under.
  const Spec tc = parse_spec(R"(checks:
  - name: plain
    matmul: {a: e4m3, accumulator: tensor_core, k: 4096, m: 4, n: 4, seed: 7, distribution: half_normal}
    max_rel_err: 2^-7
  - name: promoted
    matmul: {a: e4m3, accumulator: tensor_core, k: 4096, m: 4, n: 4, seed: 7, distribution: half_normal,
             promote_every: 128}
    max_rel_err: 2^-7
)",
                             "s.yaml");
  const std::vector<CheckResult> t = run_spec(tc);
  EXPECT_FALSE(t[0].passed) << t[0].measured;
  EXPECT_TRUE(t[1].passed) << t[1].measured;
  const Experiment* e = find_experiment("matmul_error");
  ASSERT_NE(e, nullptr);
  Params p(e->params, {{"ks", "4096"}, {"m", "4"}, {"n", "4"}, {"seed", "7"}, {"distributions", "half_normal"}},
           e->name);
  Progress progress;
  const Context ctx{p, {find_format("float8_e4m3fn")}, {}, "", {}, progress, 1};
  const Table table = e->run(ctx).at(0);
  int compared = 0;
  for (const Row& row : table.rows) {
    if (std::get<std::string>(row.cells[table.column("accumulator")]) != "tensor_core") continue;
    const bool promoted = cell_number(row.cells[table.column("promote_every")]) == 128;
    EXPECT_EQ(t[promoted ? 1 : 0].measured, cell_number(row.cells[table.column("rel_err_max")]));
    ++compared;
  }
  EXPECT_EQ(compared, 2);
}

// Accumulators by preset name, each checked by the kernels' rule for its
// operands -- the rules a spec once restated and that had drifted from the
// kernel's: a promotion interval is a multiple of the block of *these*
// operands (16 for bf16, where the spec demanded 32), and stochastic output of
// the fp64 sum is limited by the output's significant bits, not its width.
TEST(SpecRun, accumulators_are_presets_checked_by_the_kernels_rule) {
  auto outcome = [](const std::string& matmul) {
    try {
      const Spec s = parse_spec("checks:\n  - name: m\n    matmul: {" + matmul + "}\n    max_rel_err: 1\n", "s.yaml");
      const std::vector<CheckResult> r = run_spec(s);
      return std::string(r.at(0).passed ? "passed: " : "failed: ") + r.at(0).context;
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
  };
  // The outcome's first want.size() characters (the context goes on with
  // sizes, seed and timing).
  auto starts = [&](const std::string& matmul, const std::string& want) {
    return outcome(matmul).substr(0, want.size());
  };
  const std::string bf16_48 = "passed: bfloat16 x bfloat16 -> float32, hopper_wgmma_bf16 promoted every 48,";
  EXPECT_EQ(starts("a: bf16, accumulator: tensor_core, k: 96, seed: 1, promote_every: 48", bf16_48), bf16_48);
  EXPECT_EQ(outcome("a: e4m3, accumulator: tensor_core, k: 96, seed: 1, promote_every: 48"),
            "s.yaml:2:5: check 'm': matmul: promote_every 48 is not a multiple of the 32-product tensor-core block "
            "of 8-bit operands");
  const std::string deepseek = "passed: float8_e4m3fn x float8_e4m3fn -> float32, deepseek_v3_fp8,";
  EXPECT_EQ(starts("a: e4m3, accumulator: deepseek_v3_fp8, k: 256, seed: 1", deepseek), deepseek);
  const std::string dot2 = "passed: float8_e4m3fn x float8_e4m3fn -> float32, bf16_dot2,";
  EXPECT_EQ(starts("a: e4m3, accumulator: vdpbf16ps, k: 64, seed: 1", dot2), dot2);
  EXPECT_EQ(outcome("a: e4m3, output: float32, accumulator: fp64, round: stochastic, k: 64, seed: 1"),
            "s.yaml:2:5: check 'm': matmul: stochastic rounding of the fp64 sum into a 24-bit output needs more "
            "than the 53 bits it keeps; use an output of at most 21 significant bits");
  EXPECT_EQ(starts("a: e4m3, output: bf16, accumulator: fp64, round: stochastic, k: 64, seed: 1", "passed: "),
            "passed: ");
  const std::string unknown = "s.yaml:3:36: accumulator: unknown 'hopper_wgmm_fp8' (did you mean";
  EXPECT_EQ(starts("a: e4m3, accumulator: hopper_wgmm_fp8, k: 64, seed: 1", unknown), unknown);
}

// A matrix-unit instruction as a spec's accumulator: its operand types and
// its block scales are checked before any check runs (they reached the
// kernel, which threw: "internal error", exit status 3).
TEST(SpecRun, instruction_accumulators_take_their_own_operands) {
  auto outcome = [](const std::string& matmul) {
    try {
      const Spec s = parse_spec("checks:\n  - name: m\n    matmul: {" + matmul + "}\n    max_rel_err: 1\n", "s.yaml");
      const std::vector<CheckResult> r = run_spec(s);
      return std::string(r.at(0).passed ? "passed: " : "failed: ") + r.at(0).context;
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
  };
  const std::string wgmma = "hopper.wgmma.f32.e4m3.e4m3";
  const std::string e4m3 = "passed: float8_e4m3fn x float8_e4m3fn -> float32, " + wgmma + ",";
  EXPECT_EQ(outcome("a: e4m3, accumulator: " + wgmma + ", k: 64, seed: 1").substr(0, e4m3.size()), e4m3);
  // E2M1's values are all E4M3 values: taken.
  EXPECT_EQ(outcome("a: e2m1, b: e4m3, accumulator: " + wgmma + ", k: 64, seed: 1").substr(0, 8), "passed: ");
  // bf16 has values E4M3 lacks; the one nearest 1 is named.
  EXPECT_EQ(outcome("a: bf16, accumulator: " + wgmma + ", k: 64, seed: 1"),
            "s.yaml:2:5: check 'm': matmul: " + wgmma + " takes e4m3 operands, and a is bfloat16, whose value "
            "0.99609375 is not one (float8_e4m3fn is a format it takes)");
  EXPECT_EQ(outcome("a: e4m3, b: e5m2, accumulator: " + wgmma + ", k: 64, seed: 1"),
            "s.yaml:2:5: check 'm': matmul: " + wgmma + " takes e4m3 operands, and b is float8_e5m2, whose value "
            "0.0068359375 is not one (float8_e4m3fn is a format it takes)");  // 7 x 2^-10: E4M3's grid there is 2^-9
  // A block-scaled instruction applies block scales a spec's operands do
  // not have: refused where the accumulator is named.
  const std::string scaled = "rtx_blackwell.mma.m16n8k32.mxf8f6f4.block32.f32.e2m1.e2m1.f32.ue8m0";
  EXPECT_EQ(outcome("a: e2m1, accumulator: " + scaled + ", k: 64, seed: 1"),
            "s.yaml:3:36: accumulator: " + scaled + " is block-scaled: it takes block-scaled operands, whose ue8m0 "
            "scales it applies inside the dot product, and a spec's matmul operands are plain values; name an "
            "instruction without block scales (lplab mma --list)");
}

TEST(Junit, well_formed_and_escaped) {
  std::vector<CheckResult> r(2);
  r[0] = {"ok <1>", "sqnr_db", 31.5, 20, ">=", true, "", 0.0125, "x", 3};
  r[1] = {"a & \"b\"", "max_rel_err", 0.5, 0.25, "<=", false, "worst at index 0: actual 1.5, expected 1", 0.5,
          "c < d", 7};
  const std::string x = junit_xml("my'spec", r);
  EXPECT_NE(x.find("<testsuites name=\"lplab regress\" tests=\"2\" failures=\"1\" errors=\"0\" time=\"0.512\">"),
            std::string::npos);
  EXPECT_NE(x.find("<testsuite name=\"my&apos;spec\" tests=\"2\" failures=\"1\""), std::string::npos);
  EXPECT_NE(x.find("<testcase name=\"ok &lt;1&gt;\" classname=\"my&apos;spec\" time=\"0.013\">"), std::string::npos);
  EXPECT_NE(x.find("<testcase name=\"a &amp; &quot;b&quot;\""), std::string::npos);
  EXPECT_NE(x.find("<failure message=\"measured 0.5 &gt; limit 0.25\""), std::string::npos);
  EXPECT_EQ(x.find("<failure", x.find("ok &lt;1&gt;")), x.find("<failure"));  // one failure only
  // Every '<' opens a tag and every '&' starts an entity: nothing unescaped.
  for (std::size_t i = x.find('&'); i != std::string::npos; i = x.find('&', i + 1)) {
    const std::string rest = x.substr(i, 6);
    EXPECT_TRUE(rest.starts_with("&amp;") || rest.starts_with("&lt;") || rest.starts_with("&gt;") ||
                rest.starts_with("&quot;") || rest.starts_with("&apos;") || rest.starts_with("&#"))
        << rest;
  }
  EXPECT_EQ(x.find("c < d"), std::string::npos);
}

TEST(Junit, utf8_only_and_nan_without_sign) {
  // Bytes that are not UTF-8 (a lone 0xff, an overlong '/', a surrogate)
  // and U+FFFE become U+FFFD; valid UTF-8 passes through.
  std::vector<CheckResult> r(1);
  r[0] = {"caf\xc3\xa9 \xff \xc0\xaf \xed\xa0\x80 \xef\xbf\xbe \xf0\x9f\x98\x80", "sqnr_db",
          -std::numeric_limits<double>::quiet_NaN(), 20, ">=", false, "", 0, "x", 1};
  const std::string x = junit_xml("s", r);
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_NE(x.find("<testcase name=\"caf\xc3\xa9 " + fffd + " " + fffd + fffd + " " + fffd + fffd + fffd + " " + fffd +
                   " \xf0\x9f\x98\x80\""),
            std::string::npos)
      << x;
  // A NaN is "nan" whatever its sign bit.
  EXPECT_EQ(result_number(-std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(result_number(-kInf), "-inf");
  EXPECT_NE(x.find("<failure message=\"measured nan is not &gt;= limit 20\""), std::string::npos) << x;
  EXPECT_EQ(x.find("-nan"), std::string::npos);
}

}  // namespace
}  // namespace lplab::experiments
