// libFuzzer target: the tool's number and parameter parsing (issue 9).
//
// The input is used three ways:
//   1. whole, as a number (parse_number), a rounding name (parse_round), an
//      overflow name (parse_overflow) and a shard I/N (parse_shard);
//   2. line by line, as NAME=VALUE parameters validated against a fixed set
//      of ParamSpecs of every ParamType (the Params constructor, params.cpp).
// Invariants: each call returns or throws UsageError -- any other exception
// escapes to libFuzzer and is reported as a crash; a finite number parsed
// round-trips exactly (bit for bit, zero's sign included) through shortest()
// and parse_number; a name parsed maps back to itself through round_name /
// overflow_name; a shard accepted has 0 <= I < N <= 100000 and is what the
// text says; parameters accepted are in range, whole where declared
// integer, and one of the choices where there are choices.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <algorithm>
#include <bit>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/experiments/runner.h"
#include "lplab/runtime/text.h"

namespace lx = lplab::experiments;

namespace {

[[noreturn]] void violated(const char* what, std::string_view input) {
  std::fprintf(stderr, "fuzz_number: %s (input '%.*s')\n", what, static_cast<int>(input.size()), input.data());
  std::abort();
}

// 1. Numbers and policy names.
void check_number(std::string_view text) {
  double v;
  try {
    v = lplab::runtime::parse_number(text);
  } catch (const lplab::runtime::UsageError&) {
    return;
  }
  const std::string again = lplab::runtime::shortest(v);
  double w;
  try {
    w = lplab::runtime::parse_number(again);
  } catch (const lplab::runtime::UsageError&) {
    violated("shortest() of a parsed number does not parse", again);
  }
  if (std::isnan(v)) {
    if (!std::isnan(w)) violated("nan does not round-trip", text);
  } else if (std::bit_cast<std::uint64_t>(v) != std::bit_cast<std::uint64_t>(w)) {
    violated("number does not round-trip through shortest()", text);
  }
}

void check_policies(std::string_view text) {
  try {
    const lplab::Round r = lplab::runtime::parse_round(text);
    if (lplab::runtime::parse_round(lplab::runtime::round_name(r)) != r) violated("round_name does not parse back", text);
  } catch (const lplab::runtime::UsageError&) {
  }
  try {
    const lplab::Overflow o = lplab::runtime::parse_overflow(text);
    if (lplab::runtime::parse_overflow(lplab::runtime::overflow_name(o)) != o) violated("overflow_name does not parse back", text);
  } catch (const lplab::runtime::UsageError&) {
  }
}

void check_shard(std::string_view text) {
  lx::Shard s;
  try {
    s = lx::parse_shard(std::string(text));
  } catch (const lplab::runtime::UsageError&) {
    return;
  }
  if (!(s.index < s.count && s.count <= 100000)) violated("shard accepted out of range", text);
  if (text != std::to_string(s.index) + "/" + std::to_string(s.count)) {
    // Leading zeros are the only other spelling accepted.
    const std::size_t slash = text.find('/');
    auto value = [](std::string_view d) {
      std::uint64_t v = 0;
      for (char c : d) v = v * 10 + static_cast<std::uint64_t>(c - '0');
      return v;
    };
    if (slash == std::string_view::npos || value(text.substr(0, slash)) != s.index ||
        value(text.substr(slash + 1)) != s.count)
      violated("shard differs from its text", text);
  }
}

// 2. Parameters: one of each kind the experiments declare (experiment.h).
const std::vector<lx::ParamSpec>& specs() {
  static const std::vector<lx::ParamSpec> s = [] {
    std::vector<lx::ParamSpec> v(5);
    v[0] = {.name = "n", .type = lx::ParamType::integer, .default_value = "64", .min = 1, .max = 1 << 20};
    v[1] = {.name = "tol", .type = lx::ParamType::real, .default_value = "1e-3", .min = 0, .max = 1};
    v[2] = {.name = "mode", .type = lx::ParamType::text, .default_value = "fast", .choices = {"fast", "exact"}};
    v[3] = {.name = "sizes", .type = lx::ParamType::list, .default_value = "16,32", .min = 1, .max = 65536,
            .items_numeric = true};
    v[4] = {.name = "ops", .type = lx::ParamType::list, .default_value = "add", .choices = {"add", "mul", "fma"}};
    return v;
  }();
  return s;
}

void check_params(std::string_view input) {
  std::map<std::string, std::string> given;
  std::size_t start = 0;
  while (start <= input.size()) {
    const std::size_t nl = std::min(input.find('\n', start), input.size());
    const std::string_view line = input.substr(start, nl - start);
    const std::size_t eq = line.find('=');
    if (eq != std::string_view::npos) given[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    start = nl + 1;
  }
  const lx::Params p = [&] {
    try {
      return lx::Params(specs(), given, "fuzz");
    } catch (const lplab::runtime::UsageError&) {
      return lx::Params();
    }
  }();
  if (p.all().empty()) return;  // rejected
  const auto& s = specs();
  const double n = static_cast<double>(p.integer("n"));
  if (!(n >= s[0].min && n <= s[0].max)) violated("integer parameter accepted out of range", input);
  if (lplab::runtime::parse_number(p.text("n")) != std::floor(lplab::runtime::parse_number(p.text("n"))))
    violated("integer parameter accepted with a fraction", input);
  const double tol = p.real("tol");
  if (!(tol >= s[1].min && tol <= s[1].max)) violated("real parameter accepted out of range", input);
  if (std::find(s[2].choices.begin(), s[2].choices.end(), p.text("mode")) == s[2].choices.end())
    violated("text parameter accepted outside its choices", input);
  for (double x : p.numbers("sizes"))
    if (!(x >= s[3].min && x <= s[3].max)) violated("numeric list item accepted out of range", input);
  for (const std::string& op : p.list("ops"))
    if (std::find(s[4].choices.begin(), s[4].choices.end(), op) == s[4].choices.end())
      violated("list item accepted outside its choices", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check_number(input);
  check_policies(input);
  check_shard(input);
  check_params(input);
  return 0;
}
