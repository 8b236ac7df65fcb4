// What an experiment gives the report beside its tables: plots and headline
// figures, read off its own tables by table id and column name. Declared in
// the experiment's file (Experiment::plots, Experiment::headlines), so the
// report composes them without naming any experiment, and a renamed column
// is mended where it is defined.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lplab/lab/plot.h"
#include "lplab/lab/table.h"

namespace lplab::experiments {

// Column name -> cell text a row must have.
using Match = std::vector<std::pair<std::string, std::string>>;

// The table called `id`, or nullptr.
const Table* find_table(const std::vector<Table>& tables, std::string_view id);
// Whether a row of t matches; std::out_of_range for a column t lacks.
std::function<bool(const Row&)> where(const Table& t, const Match& match);
// The cell of `column` in the last row of table `id` that matches; empty
// when there is none (the summary then says "(not computed)").
Cell lookup(const std::vector<Table>& tables, std::string_view id, const Match& match, const std::string& column);
// A number cell as fmt's `spec` writes it ("{:.3g}"); other cells unchanged.
Cell formatted(const Cell& c, const char* spec);
// Appends p when one of its series has a point.
void add_plot(std::vector<Plot>& plots, Plot p);

// The report's summary table, one row per headline figure.
class Headlines {
 public:
  Headlines();
  // A figure, its value (empty: "(not computed)"), what a source says and
  // the table it is read from.
  void add(const std::string& figure, const Cell& value, const std::string& expected, const std::string& source);
  const Table& table() const { return table_; }

 private:
  Table table_;
};

}  // namespace lplab::experiments
