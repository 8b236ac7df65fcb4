// lplab finfo: each format's constants, as torch.finfo and numpy's finfo name them and more.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <functional>
#include <string_view>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/lab/table.h"
#include "lplab/runtime/text.h"

namespace lplab::tool {
namespace {

// What `lplab finfo` shows, in its order: finfo's fields by name
// (LPLAB_FINFO_FIELDS, formats/finfo_values.h), each shown by its kind, some
// under a label of their own, and a code only where the format has one.
struct FinfoShown {
  std::string_view field;
  std::string_view label = {};           // the field's name where empty
  bool FinfoValues::*only_if = nullptr;  // "-" (JSON null) where this is false
};
constexpr FinfoShown kFinfoShown[] = {
    {"bits"}, {"exponent_bits"}, {"mantissa_bits"}, {"bias"}, {"encoding"}, {"is_signed", "signed"},
    {"eps"}, {"epsneg"}, {"max"}, {"min"}, {"tiny"}, {"smallest_normal"}, {"smallest_subnormal"},
    {"resolution_torch"}, {"resolution_numpy"}, {"machep"}, {"negep"}, {"nmant"}, {"nexp"}, {"iexp"},
    {"maxexp"}, {"minexp"}, {"precision"}, {"digits10"}, {"has_infinity"}, {"has_nan"}, {"has_negative_zero"},
    {"has_subnormals"}, {"nan_code", {}, &FinfoValues::has_nan}, {"inf_code", {}, &FinfoValues::has_infinity},
    {"nan_codes"}, {"overflow_threshold"}, {"threshold_tie_overflows"}, {"finite_codes"}, {"finite_values"},
    {"normal_binades"}, {"binades"}};
// The fields not shown: showing one changes every output format of the
// command and its baselines (tests/cli), so each is added on purpose.
constexpr std::string_view kFinfoOmitted[] = {"has_zero", "max_code"};
static_assert(finfo_fields_placed(
                  [] {
                    std::array<std::string_view, std::size(kFinfoShown)> names{};
                    for (std::size_t i = 0; i < names.size(); ++i) names[i] = kFinfoShown[i].field;
                    return names;
                  }(),
                  kFinfoOmitted),
              "every finfo field (LPLAB_FINFO_FIELDS) is placed once, in kFinfoShown or kFinfoOmitted: place a new one");

// A field's value as text (the table and CSV) and as JSON, by its kind.
template <class V>
std::string finfo_text(const V& v) {
  if constexpr (std::is_same_v<V, double>) return shortest(v);
  else if constexpr (std::is_same_v<V, Encoding>) return encoding_name(v);
  else if constexpr (std::is_same_v<V, FinfoCode>) return code_hex(v.code, v.bits);
  else return fmt::format("{}", v);  // int, bool (true/false), a count
}
template <class V>
nlohmann::ordered_json finfo_json(const V& v) {
  if constexpr (std::is_same_v<V, Encoding> || std::is_same_v<V, FinfoCode>) return finfo_text(v);
  else return v;
}

struct Field {
  std::string name;
  std::function<nlohmann::ordered_json(const FinfoValues&)> json;
  std::function<std::string(const FinfoValues&)> text;
};

// kFinfoShown, then what is computed from the fields.
const std::vector<Field>& fields() {
  static const std::vector<Field> f = [] {
    std::vector<Field> out;
    for (const FinfoShown& s : kFinfoShown)
      out.push_back({std::string(s.label.empty() ? s.field : s.label),
                     [s](const FinfoValues& v) {
                       nlohmann::ordered_json j;  // null
                       if (s.only_if == nullptr || v.*s.only_if)
                         visit_finfo_field(v, s.field, [&](const auto& x) { j = finfo_json(x); });
                       return j;
                     },
                     [s](const FinfoValues& v) {
                       std::string t = "-";
                       if (s.only_if == nullptr || v.*s.only_if)
                         visit_finfo_field(v, s.field, [&](const auto& x) { t = finfo_text(x); });
                       return t;
                     }});
    out.push_back({"dynamic_range_log10",
                   [](const FinfoValues& r) { return nlohmann::ordered_json(std::log10(r.max / r.smallest_subnormal)); },
                   [](const FinfoValues& r) { return fmt::format("{:.2f}", std::log10(r.max / r.smallest_subnormal)); }});
    return out;
  }();
  return f;
}

// torch.finfo's repr, e.g.
// finfo(resolution=1.0, min=-448.0, max=448.0, eps=0.125, smallest_normal=0.015625, tiny=0.015625, dtype=float8_e4m3fn)
std::string torch_repr(const FormatEntry& e) {
  const FinfoValues& r = e.info;
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
