#include "lplab/lab/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "lplab/lab/vocabulary.h"

namespace lplab::experiments {

void Table::add(std::uint64_t grid, std::vector<Cell> cells) {
  if (cells.size() != columns.size())
    throw std::logic_error(fmt::format("table {}: a row of {} cells for {} columns", id,
                                       cells.size(), columns.size()));
  rows.push_back({grid, std::move(cells)});
}

std::size_t Table::column(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name) return i;
  throw std::out_of_range(fmt::format("table {} has no column {}", id, name));
}

std::string cell_text(const Cell& c, int digits) {
  switch (c.index()) {
    case 1: return fmt::format("{}", std::get<std::int64_t>(c));
    case 2: {
      const double v = std::get<double>(c);
      if (digits <= 0 || !std::isfinite(v) || v == 0) return shortest(v);
      return fmt::format("{:.{}g}", v, digits);
    }
    case 3: return std::get<std::string>(c);
    default: return "";
  }
}

double cell_number(const Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&c)) return *d;
  return std::nan("");
}

std::string to_text(const Table& t) {
  // Header: name [unit]; reals with 6 significant digits so columns stay
  // narrow (CSV and JSON carry every digit).
  std::vector<std::vector<std::string>> grid;
  std::vector<std::string> header;
  for (const Column& c : t.columns)
    header.push_back(c.unit.empty() ? c.name : fmt::format("{} [{}]", c.name, c.unit));
  grid.push_back(header);
  for (const Row& r : t.rows) {
    std::vector<std::string> line;
    for (const Cell& c : r.cells) line.push_back(cell_text(c, 6));
    grid.push_back(line);
  }
  // Numbers right-aligned, text left-aligned.
  std::vector<bool> right(header.size(), false);
  for (std::size_t i = 0; i < right.size() && !t.rows.empty(); ++i) {
    const Cell& c = t.rows.front().cells[i];
    right[i] = std::holds_alternative<std::int64_t>(c) || std::holds_alternative<double>(c);
  }
  std::string out = fmt::format("## {}\n", t.title.empty() ? t.id : t.title) + aligned_text(grid, right);
  if (t.rows.empty()) out += "(no rows)\n";
  for (const std::string& n : t.notes) out += "note: " + n + "\n";
  return out;
}

namespace {

nlohmann::ordered_json cell_json(const Cell& c) {
  switch (c.index()) {
    case 1: return std::get<std::int64_t>(c);
    case 2: {
      // JSON has no NaN or infinity: they are written as strings.
      const double v = std::get<double>(c);
      if (std::isfinite(v)) return v;
      return shortest(v);
    }
    case 3: return std::get<std::string>(c);
    default: return nullptr;
  }
}

Cell cell_from_json(const nlohmann::ordered_json& j) {
  if (j.is_null()) return std::monostate{};
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan" || s == "-nan" || s == "inf" || s == "-inf") return parse_number(s);
    return s;
  }
  throw std::runtime_error("a cell is neither null, a number nor a string");
}

}  // namespace

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (const std::string& s : fields) {
    if (!out.empty()) out += ',';
    if (s.find_first_of(",\"\n\r") == std::string::npos) {
      out += s;
      continue;
    }
    out += '"';
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    out += '"';
  }
  return out + "\n";
}

std::string aligned_text(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right_aligned,
                         bool rule) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (std::size_t i = 0; i < rows[k].size(); ++i) {
      const bool right = k > 0 && i < right_aligned.size() && right_aligned[i];
      line += right ? fmt::format("{:>{}}", rows[k][i], width[i]) : fmt::format("{:<{}}", rows[k][i], width[i]);
      if (i + 1 < rows[k].size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
    if (k == 0 && rule) {
      std::size_t total = 0;
      for (std::size_t w : width) total += w + 2;
      out += std::string(total - 2, '-') + '\n';
    }
  }
  return out;
}

std::string csv_text(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (const auto& r : rows) out += csv_line(r);
  return out;
}

std::string to_csv(const Table& t) {
  std::vector<std::vector<std::string>> rows(1);
  for (const Column& c : t.columns) rows[0].push_back(c.name);
  for (const Row& r : t.rows) {
    std::vector<std::string>& line = rows.emplace_back();
    for (const Cell& c : r.cells) line.push_back(cell_text(c));
  }
  return csv_text(rows);
}

nlohmann::ordered_json to_json(const Table& t) {
  nlohmann::ordered_json j;
  j["id"] = t.id;
  j["title"] = t.title;
  auto cols = nlohmann::ordered_json::array();
  for (const Column& c : t.columns) cols.push_back({{"name", c.name}, {"unit", c.unit}});
  j["columns"] = cols;
  auto rows = nlohmann::ordered_json::array();
  auto grid = nlohmann::ordered_json::array();
  for (const Row& r : t.rows) {
    auto row = nlohmann::ordered_json::array();
    for (const Cell& c : r.cells) row.push_back(cell_json(c));
    rows.push_back(row);
    grid.push_back(r.grid);
  }
  j["rows"] = rows;
  j["grid"] = grid;
  j["notes"] = t.notes;
  return j;
}

Table table_from_json(const nlohmann::ordered_json& j) {
  try {
    Table t;
    t.id = j.at("id").get<std::string>();
    t.title = j.at("title").get<std::string>();
    for (const auto& c : j.at("columns"))
      t.columns.push_back({c.at("name").get<std::string>(), c.at("unit").get<std::string>()});
    const auto& rows = j.at("rows");
    const auto& grid = j.at("grid");
    if (!rows.is_array() || !grid.is_array() || rows.size() != grid.size())
      throw std::runtime_error("rows and grid differ in length");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::vector<Cell> cells;
      for (const auto& c : rows[i]) cells.push_back(cell_from_json(c));
      t.add(grid[i].get<std::uint64_t>(), std::move(cells));
    }
    for (const auto& n : j.at("notes")) t.notes.push_back(n.get<std::string>());
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(e.what());
  } catch (const std::logic_error& e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace lplab::experiments
