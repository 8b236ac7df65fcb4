// Plots drawn with gnuplot (Debian gnuplot-nox): a plot is data -- series of
// points with axis labels and scales -- and rendering it writes a gnuplot
// script with the data inline, then SVG and PNG from it.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lplab/lab/table.h"

namespace lplab::experiments {

struct Series {
  std::string name;  // the legend entry
  std::vector<std::pair<double, double>> points;
  // A gnuplot "with" style: "linespoints", "points pt 7 ps 1.2", "lines lw 2
  // dt 2". What it leaves out (colour; dash type and point type where the
  // style draws them) the script fills in so that no two series look alike.
  std::string style = "linespoints";
  // Points a log axis cannot draw (0, a negative or a non-finite value), left
  // out of `points`; make_readable counts them in the caption.
  std::vector<std::pair<double, double>> off_axis = {};
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

// The gnuplot script that draws `p` into `output` on `terminal` ("svg" or
// "png"). Every series gets a colour from an 8-colour palette; beyond it,
// lines take another dash type and points another shape, so a twelfth
// series never looks like the fourth.
std::string gnuplot_script(const Plot& p, const std::string& terminal, const std::string& output);

// Makes what the plot shows match what its data say, before it is drawn:
//   - a point a log axis cannot draw (0, negative, not finite) is moved to
//     its series' off_axis, and the caption lists those left out;
//   - a series that lies on an earlier one at every x (within 2% of the
//     plot's height, a mark's width: the two would be drawn over each
//     other) is drawn as rings around the earlier one's marks (a wide dashed
//     line over a line without marks), its legend entry says on which, and
//     the caption names each such pair.
void make_readable(Plot& p);

// Writes root/folder/<id>.gp and runs it in `root`, which renders
// root/folder/<id>.svg; then root/folder/<id>.png the same way. The script
// names its output relative to `root`, so that `cd root && gnuplot
// folder/<id>.gp` redraws the SVG from the script as it is. Returns an empty
// string on success, otherwise why not (gnuplot missing or failing).
std::string render_plot(const Plot& p, const std::string& root, const std::string& folder);
bool gnuplot_available();

// One series per distinct value of the `group` columns (joined by " "), x and
// y from the named columns, rows kept where `keep` says so. A row without a
// number in x or y (an empty or text cell) is no point; a number that is not
// finite, or not positive on a log axis, goes to the series' off_axis.
std::vector<Series> series_from_table(const Table& t, const std::string& x, const std::string& y,
                                      const std::vector<std::string>& group,
                                      const std::function<bool(const Row&)>& keep = {},
                                      bool logx = false, bool logy = false);

}  // namespace lplab::experiments
