// lplab finfo: each format's constants, as torch.finfo and numpy's finfo name them and more.
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/experiments/text.h"

namespace lplab::tool {
namespace {

struct Field {
  const char* name;
  std::function<nlohmann::ordered_json(const FinfoRecord&)> json;
  std::function<std::string(const FinfoRecord&)> text;
};

const std::vector<Field>& fields() {
  auto num = [](double FinfoRecord::*m) {
    return Field{nullptr, [m](const FinfoRecord& r) { return nlohmann::ordered_json(r.*m); },
                 [m](const FinfoRecord& r) { return shortest(r.*m); }};
  };
  auto integer = [](auto FinfoRecord::*m) {
    return Field{nullptr, [m](const FinfoRecord& r) { return nlohmann::ordered_json(r.*m); },
                 [m](const FinfoRecord& r) { return fmt::format("{}", r.*m); }};
  };
  auto named = [](const char* n, Field f) {
    f.name = n;
    return f;
  };
  static const std::vector<Field> f = {
      named("bits", integer(&FinfoRecord::bits)),
      named("exponent_bits", integer(&FinfoRecord::exponent_bits)),
      named("mantissa_bits", integer(&FinfoRecord::mantissa_bits)),
      named("bias", integer(&FinfoRecord::bias)),
      named("encoding", {nullptr, [](const FinfoRecord& r) { return nlohmann::ordered_json(r.encoding); },
                         [](const FinfoRecord& r) { return r.encoding; }}),
      named("signed", integer(&FinfoRecord::is_signed)),
      named("eps", num(&FinfoRecord::eps)),
      named("epsneg", num(&FinfoRecord::epsneg)),
      named("max", num(&FinfoRecord::max)),
      named("min", num(&FinfoRecord::min)),
      named("tiny", num(&FinfoRecord::tiny)),
      named("smallest_normal", num(&FinfoRecord::smallest_normal)),
      named("smallest_subnormal", num(&FinfoRecord::smallest_subnormal)),
      named("resolution_torch", num(&FinfoRecord::resolution_torch)),
      named("resolution_numpy", num(&FinfoRecord::resolution_numpy)),
      named("machep", integer(&FinfoRecord::machep)),
      named("negep", integer(&FinfoRecord::negep)),
      named("nmant", integer(&FinfoRecord::nmant)),
      named("nexp", integer(&FinfoRecord::nexp)),
      named("iexp", integer(&FinfoRecord::iexp)),
      named("maxexp", integer(&FinfoRecord::maxexp)),
      named("minexp", integer(&FinfoRecord::minexp)),
      named("precision", integer(&FinfoRecord::precision)),
      named("digits10", integer(&FinfoRecord::digits10)),
      named("has_infinity", integer(&FinfoRecord::has_infinity)),
      named("has_nan", integer(&FinfoRecord::has_nan)),
      named("has_negative_zero", integer(&FinfoRecord::has_negative_zero)),
      named("has_subnormals", integer(&FinfoRecord::has_subnormals)),
      named("nan_code", {nullptr, [](const FinfoRecord& r) { return nlohmann::ordered_json(r.has_nan ? nlohmann::ordered_json(code_hex(r.nan_code, r.bits)) : nullptr); },
                         [](const FinfoRecord& r) { return r.has_nan ? code_hex(r.nan_code, r.bits) : std::string("-"); }}),
      named("inf_code", {nullptr, [](const FinfoRecord& r) { return nlohmann::ordered_json(r.has_infinity ? nlohmann::ordered_json(code_hex(r.inf_code, r.bits)) : nullptr); },
                         [](const FinfoRecord& r) { return r.has_infinity ? code_hex(r.inf_code, r.bits) : std::string("-"); }}),
      named("nan_codes", integer(&FinfoRecord::nan_codes)),
      named("overflow_threshold", num(&FinfoRecord::overflow_threshold)),
      named("threshold_tie_overflows", integer(&FinfoRecord::threshold_tie_overflows)),
      named("finite_codes", integer(&FinfoRecord::finite_codes)),
      named("finite_values", integer(&FinfoRecord::finite_values)),
      named("normal_binades", integer(&FinfoRecord::normal_binades)),
      named("binades", integer(&FinfoRecord::binades)),
      named("dynamic_range_log10", {nullptr,
          [](const FinfoRecord& r) { return nlohmann::ordered_json(std::log10(r.max / r.smallest_subnormal)); },
          [](const FinfoRecord& r) { return fmt::format("{:.2f}", std::log10(r.max / r.smallest_subnormal)); }}),
  };
  return f;
}

// torch.finfo's repr, e.g.
// finfo(resolution=1.0, min=-448.0, max=448.0, eps=0.125, smallest_normal=0.015625, tiny=0.015625, dtype=float8_e4m3fn)
std::string torch_repr(const FormatEntry& e) {
  const FinfoRecord& r = e.info;
  return fmt::format(
      "finfo(resolution={}, min={}, max={}, eps={}, smallest_normal={}, tiny={}, dtype={})",
      py_repr(r.resolution_torch), py_repr(r.min), py_repr(r.max), py_repr(r.eps),
      py_repr(r.smallest_normal), py_repr(r.tiny), e.name);
}

void run_finfo(const std::vector<const FormatEntry*>& fs, Output out) {
  if (out == Output::json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const FormatEntry* e : fs) {
      nlohmann::ordered_json o;
      o["name"] = e->name;
      for (const Field& f : fields()) o[f.name] = f.json(e->info);
      o["torch_repr"] = torch_repr(*e);
      j.push_back(o);
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }
  if (out == Output::csv) {
    std::vector<std::vector<std::string>> rows = {{"name"}};
    for (const Field& f : fields()) rows[0].push_back(f.name);
    for (const FormatEntry* e : fs) {
      rows.push_back({std::string(e->name)});
      for (const Field& f : fields()) rows.back().push_back(f.text(e->info));
    }
    print_stdout(csv_text(rows));
    return;
  }
  for (const FormatEntry* e : fs) fmt::print("{}\n", torch_repr(*e));
  fmt::print("\n");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"field"};
  for (const FormatEntry* e : fs) header.emplace_back(e->name);
  rows.push_back(header);
  for (const Field& f : fields()) {
    std::vector<std::string> row = {f.name};
    for (const FormatEntry* e : fs) row.push_back(f.text(e->info));
    rows.push_back(row);
  }
  fmt::print("{}", render_table(rows));
}

}  // namespace

LPLAB_COMMAND(Command{"finfo",
                      "Format constants: torch.finfo, numpy finfo and more",
                      {positional("formats", "Formats (default: all)", false, true), flag("--all", "Every format"),
                       output_option()},
                      [](const Args& a) {
                        const Output out = output_of(a);
                        const std::vector<std::string> names = a.values("formats");
                        if (a.given("--all") && !names.empty()) throw UsageError("give format names or --all, not both");
                        run_finfo(resolve_formats(names), out);
                        return 0;
                      }});

}  // namespace lplab::tool
