// Typed result tables and their writers. An experiment computes tables;
// rendering them (text, CSV, JSON, plots) is separate, so that a new
// experiment is one file in the registry and nothing else changes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace lplab::experiments {

// One value: empty (not applicable), an integer, a real or a text.
using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;

struct Column {
  std::string name;  // snake_case; the CSV header and the JSON key
  std::string unit;  // "bytes", "GB/s", "dB", "" for a count or a name
};

struct Row {
  // The row's place in the experiment's parameter grid: `lplab merge`
  // restores the unsharded order by it.
  std::uint64_t grid = 0;
  std::vector<Cell> cells;
};

struct Table {
  std::string id;     // file stem in a report: "underflow_fractions"
  std::string title;  // one line
  std::vector<Column> columns;
  std::vector<Row> rows;
  // Lines shown under the table: what a number means, where a published
  // figure is wrong and why.
  std::vector<std::string> notes;

  // Appends a row; throws std::logic_error if the cell count is wrong.
  void add(std::uint64_t grid, std::vector<Cell> cells);
  // The index of a column; throws std::out_of_range for an unknown name.
  std::size_t column(std::string_view name) const;
};

// Text of a cell: integers in full, reals with up to `digits` significant
// digits (shortest round trip when digits is 0), "" for empty.
std::string cell_text(const Cell& c, int digits = 0);
double cell_number(const Cell& c);  // NaN for text and empty cells

// One CSV line (RFC 4180: a field with a comma, quote or line break is
// quoted, its quotes doubled), ending in a newline.
std::string csv_line(const std::vector<std::string>& fields);

// Rows of text as aligned columns two spaces apart, each line's trailing
// blanks trimmed; rows may differ in length. The first row is the header,
// left-aligned, with a rule of dashes under it when `rule` is set; below
// it, column i is right-aligned where right_aligned[i] is true.
std::string aligned_text(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right_aligned = {}, bool rule = false);
// Rows of text as CSV, one csv_line each.
std::string csv_text(const std::vector<std::vector<std::string>>& rows);

// Writers. Every one ends with exactly one newline.
std::string to_text(const Table& t);  // aligned columns, units in the header, notes below
std::string to_csv(const Table& t);   // RFC 4180 quoting; reals as shortest round trip
nlohmann::ordered_json to_json(const Table& t);
// The inverse of to_json (for `lplab merge`); throws std::runtime_error with
// the reason when the JSON is not a table.
Table table_from_json(const nlohmann::ordered_json& j);

}  // namespace lplab::experiments
