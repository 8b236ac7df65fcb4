// Plots drawn with gnuplot (Debian gnuplot-nox): a plot is data -- series of
// points with axis labels and scales -- and rendering it writes a gnuplot
// script with the data inline, then SVG and PNG from it.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lplab/experiments/table.h"

namespace lplab::experiments {

struct Series {
  std::string name;  // the legend entry
  std::vector<std::pair<double, double>> points;
  std::string style = "linespoints";  // a gnuplot "with" style
};

struct Plot {
  std::string id;  // file stem
  std::string title, xlabel, ylabel;  // labels carry their units
  bool logx = false, logy = false;
  std::vector<Series> series;
  // Bar charts: one bar per category (x = 0, 1, ...), labelled below.
  std::vector<std::string> categories;
  // Tick labels on y at given positions (the value-line plot: one format a line).
  std::vector<std::pair<double, std::string>> yticks;
  std::vector<std::string> extra;  // further gnuplot commands (labels, arrows)
  std::string caption;             // one or two sentences under the plot in the report
};

// The gnuplot script that draws `p` into `output` on `terminal` ("svg" or "png").
std::string gnuplot_script(const Plot& p, const std::string& terminal, const std::string& output);

// Writes dir/<id>.gp and renders dir/<id>.svg and dir/<id>.png. Returns an
// empty string on success, otherwise why not (gnuplot missing or failing).
std::string render_plot(const Plot& p, const std::string& dir);
bool gnuplot_available();

// One series per distinct value of the `group` columns (joined by " "), x and
// y from the named columns, rows kept where `keep` says so; rows with a
// non-finite x or y (or one not positive on a log axis) are left out.
std::vector<Series> series_from_table(const Table& t, const std::string& x, const std::string& y,
                                      const std::vector<std::string>& group,
                                      const std::function<bool(const Row&)>& keep = {},
                                      bool logx = false, bool logy = false);

}  // namespace lplab::experiments
