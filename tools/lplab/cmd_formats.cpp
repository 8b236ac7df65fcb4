#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/experiments/table.h"
#include "lplab/experiments/text.h"

namespace lplab::tool {

void print_stdout(const std::string& text) {
  if (std::fputs(text.c_str(), stdout) == EOF || std::fflush(stdout) != 0)
    throw std::system_error(errno, std::generic_category(), "standard output");
}

Output parse_output(const std::string& s) {
  if (s == "table") return Output::table;
  if (s == "csv") return Output::csv;
  if (s == "json") return Output::json;
  throw UsageError(fmt::format("unknown output '{}' (table, csv, json)", s));
}

std::vector<const FormatEntry*> resolve_formats(const std::vector<std::string>& names) {
  if (names.empty()) {
    std::vector<const FormatEntry*> out;
    for (const FormatEntry& e : formats()) out.push_back(&e);
    return out;
  }
  return resolve_format_list(names);
}

std::string render_csv(const std::vector<std::vector<std::string>>& rows) {
  std::string s;
  for (const auto& r : rows) s += csv_line(r);
  return s;
}

std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (std::size_t i = 0; i < rows[k].size(); ++i)
      line += fmt::format("{:<{}}", rows[k][i], i + 1 < rows[k].size() ? width[i] + 2 : 0);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
    if (k == 0) {
      std::size_t total = 0;
      for (std::size_t w : width) total += w + 2;
      out += std::string(total - 2, '-') + '\n';
    }
  }
  return out;
}

void run_formats(Output out) {
  if (out == Output::json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const FormatEntry& e : formats())
      j.push_back({{"name", e.name}, {"bits", e.info.bits}, {"exponent_bits", e.info.exponent_bits},
                   {"mantissa_bits", e.info.mantissa_bits}, {"bias", e.info.bias},
                   {"encoding", e.info.encoding}, {"signed", e.info.is_signed},
                   {"description", e.description}});
    fmt::print("{}\n", j.dump(2));
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"name", "bits", "layout", "bias", "encoding", "max", "description"}};
  for (const FormatEntry& e : formats()) {
    const auto& i = e.info;
    rows.push_back({std::string(e.name), std::to_string(i.bits),
                    fmt::format("{}E{}M{}", i.is_signed ? "S" : "U", i.exponent_bits, i.mantissa_bits),
                    std::to_string(i.bias), i.encoding, shortest(i.max), std::string(e.description)});
  }
  if (out == Output::csv) {
    print_stdout(render_csv(rows));
    return;
  }
  fmt::print("{}", render_table(rows));
}

}  // namespace lplab::tool
