#include "lplab/experiments/plot.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

namespace lplab::experiments {
namespace {

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

// Runs gnuplot on a script file; returns its exit status (127: not found).
int run_gnuplot(const std::string& script) {
  const std::string cmd = fmt::format("gnuplot {} 2>&1", quoted(script));
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return 127;
  char buf[256];
  std::string out;
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = pclose(p);
  if (!WIFEXITED(status)) return 1;
  const int code = WEXITSTATUS(status);
  if (code != 0 && code != 127) std::fprintf(stderr, "lplab: gnuplot %s: %s", script.c_str(), out.c_str());
  return code;
}

}  // namespace

bool gnuplot_available() {
  static const bool available = std::system("gnuplot --version >/dev/null 2>&1") == 0;
  return available;
}

std::string gnuplot_script(const Plot& p, const std::string& terminal, const std::string& output) {
  std::string s;
  if (terminal == "svg")
    s += "set terminal svg size 800,500 dynamic enhanced font 'sans,12' background rgb 'white'\n";
  else
    s += "set terminal pngcairo size 1000,625 enhanced font 'sans,11' background rgb 'white'\n";
  s += fmt::format("set output {}\n", quoted(output));
  s += fmt::format("set title {} noenhanced\n", quoted(p.title));
  s += fmt::format("set xlabel {} noenhanced\nset ylabel {} noenhanced\n", quoted(p.xlabel), quoted(p.ylabel));
  s += "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\nset key outside right top noenhanced\n";
  if (p.logx) s += "set logscale x\nset format x '10^{%L}'\n";
  if (p.logy) s += "set logscale y\nset format y '10^{%L}'\n";
  if (!p.categories.empty()) {
    s += "set style fill solid 0.8 border -1\nset boxwidth 0.7\nset xtics rotate by -30 noenhanced\n";
    s += fmt::format("set xrange [-0.6:{}]\n", static_cast<double>(p.categories.size()) - 0.4);
    std::string tics;
    for (std::size_t i = 0; i < p.categories.size(); ++i)
      tics += fmt::format("{}{} {}", i ? ", " : "", quoted(p.categories[i]), i);
    s += fmt::format("set xtics ({})\n", tics);
  }
  if (!p.yticks.empty()) {
    std::string tics;
    for (std::size_t i = 0; i < p.yticks.size(); ++i)
      tics += fmt::format("{}{} {}", i ? ", " : "", quoted(p.yticks[i].second), p.yticks[i].first);
    s += fmt::format("set ytics ({}) noenhanced\n", tics);
    s += fmt::format("set yrange [-0.7:{}]\n", static_cast<double>(p.yticks.size()) - 0.3);
  }
  for (const std::string& e : p.extra) s += e + "\n";
  // The data, inline: the script alone redraws the plot.
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    s += fmt::format("$D{} << EOD\n", i);
    for (const auto& [x, y] : p.series[i].points) s += fmt::format("{:.17g} {:.17g}\n", x, y);
    s += "EOD\n";
  }
  std::string plot = "plot ";
  for (std::size_t i = 0; i < p.series.size(); ++i)
    plot += fmt::format("{}$D{} using 1:2 with {} title {}", i ? ", \\\n     " : "", i, p.series[i].style,
                        quoted(p.series[i].name));
  if (p.series.empty()) plot += "NaN notitle";
  return s + plot + "\n";
}

std::string render_plot(const Plot& p, const std::string& dir) {
  if (!gnuplot_available()) return "gnuplot is not installed (Debian: gnuplot-nox)";
  for (const char* term : {"svg", "png"}) {
    const std::string script = fmt::format("{}/{}.{}.gp", dir, p.id, term);
    const std::string out = fmt::format("{}/{}.{}", dir, p.id, term);
    {
      std::ofstream f(script);
      f << gnuplot_script(p, term, out);
    }
    if (run_gnuplot(script) != 0) return fmt::format("gnuplot failed on {}", script);
    std::error_code ec;
    if (std::filesystem::file_size(out, ec) == 0 || ec) return fmt::format("gnuplot wrote no {}", out);
    // Keep one script, the SVG one, as the plot's source.
    if (std::string(term) == "png") std::filesystem::remove(script, ec);
    else std::filesystem::rename(script, fmt::format("{}/{}.gp", dir, p.id), ec);
  }
  return {};
}

std::vector<Series> series_from_table(const Table& t, const std::string& x, const std::string& y,
                                      const std::vector<std::string>& group,
                                      const std::function<bool(const Row&)>& keep, bool logx, bool logy) {
  const std::size_t xi = t.column(x), yi = t.column(y);
  std::vector<std::size_t> gi;
  for (const std::string& g : group) gi.push_back(t.column(g));
  std::vector<Series> out;
  std::map<std::string, std::size_t> index;
  for (const Row& r : t.rows) {
    if (keep && !keep(r)) continue;
    const double xv = cell_number(r.cells[xi]), yv = cell_number(r.cells[yi]);
    if (!std::isfinite(xv) || !std::isfinite(yv) || (logx && xv <= 0) || (logy && yv <= 0)) continue;
    std::string name;
    for (std::size_t g : gi) {
      if (!name.empty()) name += ' ';
      name += cell_text(r.cells[g]);
    }
    auto [it, fresh] = index.emplace(name, out.size());
    if (fresh) out.push_back(Series{name, {}, "linespoints"});
    out[it->second].points.emplace_back(xv, yv);
  }
  return out;
}

}  // namespace lplab::experiments
