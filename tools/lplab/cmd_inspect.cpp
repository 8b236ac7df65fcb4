#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/text.h"

namespace lplab::tool {

void run_inspect(const std::string& value, const std::vector<const FormatEntry*>& fs,
                 const std::string& round, const std::string& overflow, Output out) {
  const double x = parse_number(value);
  const Round r = parse_round(round);
  const Overflow o = parse_overflow(overflow);
  struct Row {
    const FormatEntry* e;
    std::uint64_t code;
    double v;
    Flags flags;
  };
  std::vector<Row> rows;
  for (const FormatEntry* e : fs) {
    Flags f;
    const std::uint64_t code = e->from_double(x, r, o, &f);
    rows.push_back({e, code, e->to_double(code), f});
  }
  auto abs_err = [&](double v) { return v - x; };
  auto rel_err = [&](double v) { return x == 0 ? (v == 0 ? 0.0 : INFINITY) : (v - x) / std::fabs(x); };
  auto hex = [](const Row& w) { return fmt::format("0x{:0{}x}", w.code, (w.e->info.bits + 3) / 4); };
  auto bits = [](const Row& w) {
    return bit_groups(w.code, w.e->info.is_signed, w.e->info.exponent_bits, w.e->info.mantissa_bits);
  };
  if (out == Output::json) {
    nlohmann::ordered_json j;
    j["input"] = value;
    j["value"] = x;
    j["round"] = round;
    j["overflow"] = overflow;
    j["results"] = nlohmann::ordered_json::array();
    for (const Row& w : rows) {
      const bool finite = std::isfinite(w.v);
      j["results"].push_back({{"format", w.e->name}, {"code", hex(w)}, {"bits", bits(w)},
                              {"value", finite ? nlohmann::ordered_json(w.v) : nlohmann::ordered_json(w.e->to_text(w.code))},
                              {"abs_error", finite ? nlohmann::ordered_json(abs_err(w.v)) : nullptr},
                              {"rel_error", finite ? nlohmann::ordered_json(rel_err(w.v)) : nullptr},
                              {"flags", flags_text(w.flags)}});
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }
  std::vector<std::vector<std::string>> table = {
      {"format", "bits (s|e|m)", "code", "value", "abs error", "rel error", "flags"}};
  for (const Row& w : rows) {
    const bool finite = std::isfinite(w.v);
    table.push_back({std::string(w.e->name), bits(w), hex(w), w.e->to_text(w.code),
                     finite ? fmt::format("{:.6g}", abs_err(w.v)) : "-",
                     finite ? fmt::format("{:.6g}", rel_err(w.v)) : "-", flags_text(w.flags)});
  }
  if (out == Output::csv) {
    for (const auto& t : table) fmt::print("{}\n", fmt::join(t, ","));
    return;
  }
  fmt::print("input {} = {} (round {}, overflow {})\n\n", value, shortest(x), round, overflow);
  fmt::print("{}", render_table(table));
}

}  // namespace lplab::tool
