// libFuzzer target: the user spec parser of `lplab regress` (parse_spec,
// experiments/src/spec_parse.cpp; the schema is docs/regress.md).
//
// Invariants: parse_spec returns or throws UsageError -- a yaml-cpp
// exception or any other escaping is a crash -- and its message is one line
// "fuzz.yaml:LINE:COL: ..." with LINE and COL from 1. A spec accepted is
// complete: at least one check, names present and distinct, every format a
// check needs resolved, matmul sizes from 1, generators of at least one
// element, and max_ulp given the format whose codes it counts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "lplab/regress/spec.h"
#include "lplab/runtime/text.h"

namespace lx = lplab::experiments;

namespace {

[[noreturn]] void violated(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz_spec: %s %.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// "fuzz.yaml:LINE:COL: message", one line.
void check_message(std::string_view m) {
  constexpr std::string_view prefix = "fuzz.yaml:";
  if (!m.starts_with(prefix)) violated("message does not name the file:", m);
  std::size_t i = prefix.size();
  for (int field = 0; field < 2; ++field) {
    const std::size_t start = i;
    while (i < m.size() && m[i] >= '0' && m[i] <= '9') ++i;
    if (i == start || m[start] == '0' || i >= m.size() || m[i] != ':') violated("message has no LINE:COL from 1:", m);
    ++i;
  }
  if (m.find('\n') != std::string_view::npos) violated("message is more than one line:", m);
}

void check_input(const lx::InputSource& s) {
  if (s.path.empty() && s.generator.n == 0) violated("generator of no elements accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  lx::Spec spec;
  try {
    spec = lx::parse_spec(text, "fuzz.yaml");
  } catch (const lplab::runtime::UsageError& e) {
    check_message(e.what());
    return 0;
  }
  if (spec.checks.empty()) violated("spec without checks accepted");
  std::set<std::string> names;
  for (const lx::Check& c : spec.checks) {
    if (c.name.empty() || !names.insert(c.name).second) violated("missing or repeated check name accepted");
    if (c.place.line < 1 || c.place.column < 1) violated("check placed before line 1, column 1");
    if (const auto* m = std::get_if<lx::MatmulCheck>(&c.what)) {
      // A file's format and sizes are resolved from its header when the spec runs.
      const bool a_file = !m->a_file.path.empty(), b_file = !m->b_file.path.empty();
      if ((m->a == nullptr && !a_file) || (m->b == nullptr && !b_file) || m->output == nullptr)
        violated("matmul with an unresolved format");
      if (m->m == 0 || m->n == 0 || (m->k == 0 && !a_file && !b_file)) violated("matmul with a zero size accepted");
    } else if (const auto* q = std::get_if<lx::QuantizeCheck>(&c.what)) {
      if (q->scheme.empty()) violated("quantize without a scheme accepted");
      check_input(q->input);
    } else if (const auto* v = std::get_if<lx::ConvertCheck>(&c.what)) {
      if (v->format == nullptr) violated("convert without a format accepted");
      check_input(v->input);
    } else {
      const auto& p = std::get<lx::CompareCheck>(c.what);
      check_input(p.actual);
      check_input(p.expected);
    }
    if (c.metric.kind == lx::MetricKind::max_ulp && c.metric.format == nullptr) violated("max_ulp without a format");
  }
  return 0;
}
