// What the report shows beyond the experiments' tables: the formats' value
// plots, then each experiment's plots and headline figures, which the
// experiments declare beside their tables (Experiment::plots, ::headlines).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "lplab/lab/experiment.h"
#include "lplab/lab/vocabulary.h"
#include "lplab/report/report.h"
#include "lplab/lab/report_parts.h"

namespace lplab::experiments {
namespace {

// Each format's positive finite values on a log axis, one line per format.
Plot values_plot(bool narrow) {
  Plot p;
  p.id = narrow ? "format_values_narrow" : "format_values";
  p.title = narrow ? "Every positive value of the 4-, 6- and 8-bit element formats"
                   : "Positive finite values of each format";
  p.xlabel = "value (log scale; values have no unit)";
  p.logx = true;
  p.caption = narrow ? "Each dot is one value. E4M3 ends at 448 and E5M2 at 57344; below each format's "
                       "smallest subnormal everything flushes to zero. FP4 (E2M1) has 7 positive values."
                     : "Where each format's values lie (bf16 and fp16: every 64th code). bf16 spans fp32's "
                       "range with 8 significant bits; fp16 ends at 65504; E8M0 (the MX scale) is powers of two only.";
  int row = 0;
  for (const FormatEntry& e : formats()) {
    if (e.info.bits > 16) continue;
    if (narrow && (e.info.bits > 8 || e.info.mantissa_bits == 0)) continue;
    const std::uint64_t codes = std::uint64_t{1} << e.info.bits;
    const std::uint64_t stride = e.info.bits > 8 ? 64 : 1;
    std::set<double> values;
    for (std::uint64_t c = 0; c < codes; c += stride) {
      const double v = e.to_double(c);
      if (std::isfinite(v) && v > 0) values.insert(v);
    }
    Series s{std::string(e.name), {}, narrow ? "points pt 7 ps 0.5" : "points pt 7 ps 0.35"};
    for (double v : values) s.points.emplace_back(v, row);
    p.series.push_back(std::move(s));
    p.yticks.emplace_back(row, std::string(e.name));
    ++row;
  }
  p.extra.push_back("set key off");
  if (narrow) p.extra.push_back("set xrange [1e-9:1e6]");
  return p;
}

}  // namespace

const Table* find_table(const std::vector<Table>& tables, std::string_view id) {
  for (const Table& t : tables)
    if (t.id == id) return &t;
  return nullptr;
}

std::function<bool(const Row&)> where(const Table& t, const Match& match) {
  std::vector<std::pair<std::size_t, std::string>> m;
  for (const auto& [c, v] : match) m.emplace_back(t.column(c), v);
  return [m](const Row& r) {
    return std::all_of(m.begin(), m.end(), [&](const auto& p) { return cell_text(r.cells[p.first]) == p.second; });
  };
}

Cell lookup(const std::vector<Table>& tables, std::string_view id, const Match& match, const std::string& column) {
  const Table* t = find_table(tables, id);
  if (t == nullptr) return std::monostate{};
  try {
    const auto keep = where(*t, match);
    const std::size_t col = t->column(column);
    Cell found = std::monostate{};
    for (const Row& r : t->rows)
      if (keep(r)) found = r.cells[col];
    return found;
  } catch (const std::out_of_range&) {
    return std::monostate{};
  }
}

Cell formatted(const Cell& c, const char* spec) {
  if (c.index() != 1 && c.index() != 2) return c;
  return fmt::format(fmt::runtime(spec), cell_number(c));
}

void add_plot(std::vector<Plot>& plots, Plot p) {
  const bool any = std::any_of(p.series.begin(), p.series.end(), [](const Series& s) { return !s.points.empty(); });
  if (any) plots.push_back(std::move(p));
}

Headlines::Headlines() {
  table_.id = "summary";
  table_.title = "Summary: headline figures (measured figures are this machine's)";
  table_.columns = {{"figure", ""}, {"value", ""}, {"expected", ""}, {"source", ""}};
}

void Headlines::add(const std::string& figure, const Cell& value, const std::string& expected,
                    const std::string& source) {
  table_.add(table_.rows.size(),
             {figure, value.index() == 0 ? Cell(std::string("(not computed)")) : value, expected, source});
}

std::vector<Plot> report_plots(const std::vector<Table>& tables) {
  std::vector<Plot> plots;
  plots.push_back(values_plot(false));
  plots.push_back(values_plot(true));

  for (const Experiment& e : experiments())
    if (e.plots)
      for (Plot& p : e.plots(tables)) plots.push_back(std::move(p));
  // Whatever an experiment drew, no series vanishes under another and no
  // point leaves a log axis unsaid.
  for (Plot& p : plots) make_readable(p);
  return plots;
}

Table report_summary(const std::vector<Table>& tables) {
  Headlines h;
  const FormatEntry* e4m3 = find_format("float8_e4m3fn");
  const FormatEntry* e5m2 = find_format("float8_e5m2");
  h.add("E4M3 max / E5M2 max", fmt::format("{} / {}", e4m3->info.max, e5m2->info.max), "448 / 57344 (lecture)", "finfo");
  for (const Experiment& e : experiments())
    if (e.headlines) e.headlines(tables, h);
  return h.table();
}

}  // namespace lplab::experiments
