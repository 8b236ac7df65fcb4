// The command registry and what the commands share: arguments, output
// formats, tables, codes.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <system_error>

#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/lab/files.h"
#include "lplab/experiments/runner.h"
#include "lplab/lab/table.h"
#include "lplab/runtime/text.h"

namespace lplab::tool {

namespace {
// A function-local static: the commands register from their files' static
// initialisers, in whatever order the linker gives them.
std::vector<Command>& registry() {
  static std::vector<Command> r;
  return r;
}
}  // namespace

bool register_command(Command c) {
  std::vector<Command>& r = registry();
  if (std::any_of(r.begin(), r.end(), [&](const Command& x) { return x.name == c.name; }))
    throw std::logic_error("lplab: command '" + c.name + "' registered twice");
  const auto at = std::lower_bound(r.begin(), r.end(), c.name,
                                   [](const Command& x, const std::string& n) { return x.name < n; });
  r.insert(at, std::move(c));
  return true;
}

const std::vector<Command>& registered_commands() { return registry(); }

std::string Args::value(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() || it->second.empty() ? fallback : it->second.back();
}

std::optional<std::string> Args::optional_value(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::values(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

namespace {
const char* output_name(Output o) { return o == Output::json ? "json" : o == Output::csv ? "csv" : "table"; }
}  // namespace

Output output_of(const Args& a) {
  // A file named .json or .csv asks for that format; --output may say so
  // too, but never the other.
  const std::string by_name = extension_format(a.value("--out"));
  const std::optional<std::string> given = a.optional_value("--output");
  if (!given) return by_name == "json" ? Output::json : by_name == "csv" ? Output::csv : Output::table;
  Output o;
  if (*given == "table") o = Output::table;
  else if (*given == "csv") o = Output::csv;
  else if (*given == "json") o = Output::json;
  else throw UsageError(fmt::format("unknown output '{}' (table, csv, json)", shown(*given)));
  if (!by_name.empty() && by_name != output_name(o))
    throw UsageError(fmt::format("--out {}: a .{} name, but --output {}; give --output {} or name the file .{}",
                                 a.value("--out"), by_name, output_name(o), by_name,
                                 o == Output::table ? "txt" : output_name(o)));
  return o;
}

std::string output_file(const Args& a, const std::string& option, const std::vector<std::string>& inputs) {
  if (!a.given(option)) return "";
  const std::string path = a.value(option);
  if (path.empty()) throw UsageError(fmt::format("{} is empty: give a file name, or - for standard output", option));
  // An input's identity first (the most important refusal), then names that
  // say "data another program reads": lplab's text would hide in them
  // (numpy's .npy, a spec's .yaml). JUnit is XML.
  check_output_file(option, path, inputs);
  const std::string ext = extension_of(path);
  const bool junit = option == "--junit";
  if (ext == ".npy" || ext == ".npz" || ext == ".yaml" || ext == ".yml" ||
      (junit && (ext == ".json" || ext == ".csv")) || (!junit && ext == ".xml"))
    throw UsageError(fmt::format("{} {}: a {} name, but lplab writes {} here; name the file .{}", option, path,
                                 ext, junit ? "JUnit XML" : "text, CSV or JSON", junit ? "xml" : "txt, .csv or .json"));
  return path;
}

std::vector<const FormatEntry*> resolve_formats(const std::vector<std::string>& names) {
  if (names.empty()) {
    std::vector<const FormatEntry*> out;
    for (const FormatEntry& e : formats()) out.push_back(&e);
    return out;
  }
  return resolve_format_list(names);
}

// CLI11's own splitting would drop an empty item silently.
std::vector<std::string> split_list(const std::vector<std::string>& args, const char* option) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    std::size_t from = 0;
    while (true) {
      const std::size_t comma = a.find(',', from);
      const std::string item = a.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      if (item.empty()) throw UsageError(fmt::format("{}: empty item in '{}'", option, a));
      out.push_back(item);
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
  }
  return out;
}

std::map<std::string, std::string> parse_assignments(const std::vector<std::string>& args, const char* where) {
  std::map<std::string, std::string> out;
  for (const std::string& a : args) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("{} '{}': expected NAME=VALUE", where, a));
    if (!out.emplace(a.substr(0, eq), a.substr(eq + 1)).second)
      throw UsageError(fmt::format("{}: {} given twice", where, a.substr(0, eq)));
  }
  return out;
}

std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  return experiments::aligned_text(rows, {}, /*rule=*/true);
}

void print_stdout(const std::string& text) {
  if (std::fputs(text.c_str(), stdout) == EOF || std::fflush(stdout) != 0)
    throw std::system_error(errno, std::generic_category(), "standard output");
}

void emit(const std::string& text, const std::string& out_file) {
  if (out_file.empty()) print_stdout(text);
  else write_file_atomic(out_file, text);
}

std::string code_hex(std::uint64_t c, int bits) { return fmt::format("0x{:0{}x}", c, (bits + 3) / 4); }
std::string code_hex(const FormatEntry* e, std::uint64_t c) { return code_hex(c, e->info.bits); }

nlohmann::ordered_json value_json(const FormatEntry* e, std::uint64_t c) {
  const double v = e->to_double(c);
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(e->to_text(c));
}

std::string code_class(const FormatEntry* e, std::uint64_t c) {
  const double v = e->to_double(c);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return "infinity";
  if (v == 0) return "zero";
  if (e->info.encoding == Encoding::integer) return "integer";
  if (std::fabs(v) < e->info.smallest_normal) return "subnormal";
  return "normal";
}

std::string render_record(const nlohmann::ordered_json& record, Output out) {
  if (out == Output::json) return record.dump(2) + "\n";
  const std::vector<Table> tables = tables_of(record);
  return out == Output::csv ? render_csv(tables) : render_text(tables);
}

}  // namespace lplab::tool
