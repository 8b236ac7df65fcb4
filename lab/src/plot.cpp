#include "lplab/lab/plot.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

extern char** environ;

namespace lplab::experiments {
namespace {

// Okabe and Ito's colour-blind-safe palette (yellow, pale on white, left
// out) with black and gnuplot's violet: 8 colours.
constexpr const char* kPalette[] = {"#0072b2", "#e69f00", "#009e73", "#d55e00",
                                    "#cc79a7", "#56b4e9", "#000000", "#9400d3"};
constexpr std::size_t kColours = std::size(kPalette);
// gnuplot's point types, filled shapes first: circle, square, triangle up,
// triangle down, diamond, pentagon, then their outlines, then + x *.
constexpr int kPointTypes[] = {7, 5, 9, 11, 13, 15, 6, 4, 8, 10, 12, 14, 1, 2, 3};
// Legend entries longer than this go below the plot: beside it, 30
// characters of 12-point text take a third of the 800-pixel SVG.
constexpr std::size_t kLongLegendEntry = 30;
// Outlines for rings drawn around another series' marks (make_readable).
constexpr int kRings[] = {6, 4, 12, 8};

// A series' "with" style as gnuplot reads it: the kind ("linespoints"), then
// its words in order. The options that tell series apart are a key and its
// value ("lw 2", "lc rgb '#0072b2'"), long names taken as their short ones;
// any other word is kept as it is, with no value.
struct Style {
  std::string kind;
  std::vector<std::pair<std::string, std::string>> options;

  static Style parse(const std::string& text) {
    static const std::map<std::string, std::string> kShort = {
        {"linewidth", "lw"}, {"linecolor", "lc"}, {"dashtype", "dt"}, {"pointtype", "pt"}, {"pointsize", "ps"},
        {"lw", "lw"},        {"lc", "lc"},        {"dt", "dt"},       {"pt", "pt"},        {"ps", "ps"}};
    std::istringstream in(text);
    Style s;
    in >> s.kind;
    for (std::string key, value; in >> key; value.clear()) {
      if (auto it = kShort.find(key); it != kShort.end()) {
        key = it->second;
        in >> value;
        if (key == "lc" && value == "rgb") {  // a colour is two words: rgb '#0072b2'
          std::string colour;
          in >> colour;
          value += " " + colour;
        }
      }
      s.options.emplace_back(key, value);
    }
    return s;
  }
  const std::string* get(const std::string& key) const {
    for (const auto& [k, v] : options)
      if (k == key) return &v;
    return nullptr;
  }
  void set(const std::string& key, const std::string& value) {
    for (auto& [k, v] : options)
      if (k == key) {
        v = value;
        return;
      }
    options.emplace_back(key, value);
  }
  bool draws_lines() const {
    return kind == "lines" || kind == "linespoints" || kind.find("steps") != std::string::npos || kind == "impulses";
  }
  bool draws_points() const { return kind == "points" || kind == "linespoints"; }
  std::string text() const {
    std::string t = kind;
    for (const auto& [k, v] : options) t += v.empty() ? " " + k : " " + k + " " + v;
    return t;
  }
};

// The styles of a plot's series: each as its series gave it, with what it
// leaves out filled in so that no two series share colour, dash type and
// point type. A colour from the palette by position; past the palette's
// end, lines a further dash type (points already differ by shape). A series
// that fixes its own point type or dash ("points pt 7", "dt 2") keeps it
// unless an earlier series looks the same, in which case the next shape or
// dash tells them apart.
std::vector<std::string> distinct_styles(const std::vector<Series>& series) {
  std::vector<std::string> out;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (std::size_t i = 0; i < series.size(); ++i) {
    Style s = Style::parse(series[i].style);
    if (s.get("lc") == nullptr) s.set("lc", fmt::format("rgb '{}'", kPalette[i % kColours]));
    if (s.draws_points() && s.get("pt") == nullptr)
      s.set("pt", std::to_string(kPointTypes[i % std::size(kPointTypes)]));
    if (s.draws_lines() && s.get("dt") == nullptr) s.set("dt", std::to_string(1 + i / kColours));
    const auto look = [&s] {
      const std::string* pt = s.get("pt");
      const std::string* dt = s.get("dt");
      const std::string* fs = s.get("fs");
      return std::tuple{*s.get("lc"), s.draws_lines() && dt ? *dt : std::string(),
                        (s.draws_points() && pt ? *pt : std::string()) + (fs ? *fs : std::string())};
    };
    for (int k = 1; seen.contains(look()) && k <= 64; ++k) {
      if (s.draws_points()) {
        s.set("pt", std::to_string(kPointTypes[(i + k) % std::size(kPointTypes)]));
      } else if (s.draws_lines()) {
        s.set("dt", std::to_string(1 + k + i / kColours));
      } else if (s.get("fs") == nullptr || s.get("fs")->starts_with("pattern")) {  // bars: a fill pattern
        s.set("fs", fmt::format("pattern {}", k));
      }
    }
    seen.insert(look());
    out.push_back(s.text());
  }
  return out;
}

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

// Runs `gnuplot script` with `dir` as its working directory, so that the
// script's relative output path lands in dir; returns gnuplot's exit status
// (127: not found). Spawned without a shell: a report's path may hold any
// character. gnuplot stays in lplab's process group, so Ctrl-C stops it too.
int run_gnuplot(const std::string& dir, const std::string& script) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return 127;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::string program = "gnuplot", argument = script;
  char* argv[] = {program.data(), argument.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; spawned == 0 && ((n = read(pipe_fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR));)
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
  close(pipe_fds[0]);
  if (spawned != 0) return 127;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return 1;
  const int code = WEXITSTATUS(status);
  if (code != 0 && code != 127)
    std::fprintf(stderr, "lplab: gnuplot %s/%s: %s", dir.c_str(), script.c_str(), out.c_str());
  return code;
}

// A number in a caption: up to 4 significant digits.
std::string short_number(double v) { return fmt::format("{:.4g}", v); }

// Where value v sits on an axis, in the axis' own measure: decades on a log
// axis, units on a linear one.
double axis_position(double v, bool log) { return log ? std::log10(v) : v; }

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
  // The legend beside the plot, unless an entry is long (one drawn on
  // another names both): then below it, in columns, so that the plot keeps
  // its width and its title stays whole.
  std::size_t longest = 0;
  for (const Series& series : p.series)
    if (!series.points.empty()) longest = std::max(longest, series.name.size());
  s += "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n";
  s += longest > kLongLegendEntry ? "set key below maxrows 4 noenhanced\n" : "set key outside right top noenhanced\n";
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
  // A series with nothing to draw gets no legend entry (the caption says
  // why: make_readable); the others keep the look their place gives them.
  const std::vector<std::string> styles = distinct_styles(p.series);
  std::string plot = "plot ";
  bool any = false;
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    if (p.series[i].points.empty()) continue;
    plot += fmt::format("{}$D{} using 1:2 with {} title {}", any ? ", \\\n     " : "", i, styles[i],
                        quoted(p.series[i].name));
    any = true;
  }
  if (!any) plot += "NaN notitle";
  return s + plot + "\n";
}

void make_readable(Plot& p) {
  // 1. Points a log axis cannot draw leave the series, to be counted.
  for (Series& s : p.series) {
    std::vector<std::pair<double, double>> kept;
    for (const auto& point : s.points) {
      const auto [x, y] = point;
      const bool off = !std::isfinite(x) || !std::isfinite(y) || (p.logx && x <= 0) || (p.logy && y <= 0);
      (off ? s.off_axis : kept).push_back(point);
    }
    s.points = std::move(kept);
  }
  std::vector<std::string> sentences;
  std::vector<std::string> left_out;
  bool zeros = true;  // every point left out is a 0 on a log axis
  for (const Series& s : p.series) {
    for (const auto& [x, y] : s.off_axis) zeros = zeros && ((p.logx && x == 0) || (p.logy && y == 0));
    if (s.off_axis.empty()) continue;
    std::vector<std::string> where;
    for (const auto& [x, y] : s.off_axis) where.push_back(fmt::format("({}, {})", short_number(x), short_number(y)));
    left_out.push_back(s.off_axis.size() <= 3
                           ? fmt::format("{} at {}", s.name, fmt::join(where, ", "))
                           : fmt::format("{}, {} points", s.name, s.off_axis.size()));
  }
  if (!left_out.empty())
    sentences.push_back(fmt::format("Not drawn ({}): {}.",
                                    zeros                    ? "0 on a log axis"
                                    : p.logx || p.logy ? "0, negative or not finite on a log axis"
                                                       : "not finite",
                                    fmt::join(left_out, "; ")));

  // 2. Series that would hide one another. The plot's height in the y axis'
  // own measure sets what "on top of each other" means: 2% of it is about
  // 8 pixels of the 500-pixel SVG, the width of a mark, so closer marks
  // cover each other.
  double lo = INFINITY, hi = -INFINITY;
  for (const Series& s : p.series)
    for (const auto& [x, y] : s.points) {
      lo = std::min(lo, axis_position(y, p.logy));
      hi = std::max(hi, axis_position(y, p.logy));
    }
  const double tolerance = 0.02 * (hi - lo);
  const auto draws_lines = [](const Series& s) { return Style::parse(s.style).draws_lines(); };
  const auto draws_points = [](const Series& s) { return Style::parse(s.style).draws_points(); };
  std::vector<std::string> hidden;
  std::vector<int> rings(p.series.size(), 0);  // per series drawn over: how many are drawn on it
  std::vector<std::string> names;
  for (const Series& s : p.series) names.push_back(s.name);
  std::vector<bool> follower(p.series.size(), false);
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    Series& f = p.series[i];
    if (f.points.empty() || (!draws_lines(f) && !draws_points(f))) continue;  // bars: one per category
    for (std::size_t j = 0; j < i; ++j) {
      const Series& l = p.series[j];
      if (follower[j] || l.points.size() != f.points.size()) continue;
      double apart = 0;
      bool same_x = true;
      for (std::size_t k = 0; k < f.points.size() && same_x; ++k) {
        same_x = f.points[k].first == l.points[k].first;
        apart = std::max(apart, std::abs(axis_position(f.points[k].second, p.logy) -
                                         axis_position(l.points[k].second, p.logy)));
      }
      if (!same_x || apart > tolerance) continue;
      follower[i] = true;
      const int nth = ++rings[j];
      if (draws_points(l)) {  // rings around the marks it would hide, wider for each
        f.style = fmt::format("points pt {} ps {:.1f}", kRings[(nth - 1) % std::size(kRings)], 1.2 + 0.6 * nth);
      } else {  // a line of no marks: a wide dashed one, the other showing through its gaps
        Style st = Style::parse(l.style);
        st.set("dt", std::to_string(1 + nth));
        st.set("lw", std::to_string(2 + nth));
        const auto colour = [](const auto& o) { return o.first == "lc"; };  // its own, from its place
        st.options.erase(std::remove_if(st.options.begin(), st.options.end(), colour), st.options.end());
        f.style = st.text();
      }
      f.name = fmt::format("{} (on {})", names[i], names[j]);
      const std::string how = apart == 0 ? "equal values"
                              : p.logy   ? fmt::format("within a factor of {:.3g}", std::pow(10.0, apart))
                                         : fmt::format("at most {} apart", short_number(apart));
      hidden.push_back(fmt::format("{} on {} ({})", names[i], names[j], how));
      break;
    }
  }
  if (!hidden.empty())
    sentences.push_back(fmt::format(
        "Series that lie on another at every point are drawn over it, as rings or a wide dashed line in their own "
        "colour: {}.",
        fmt::join(hidden, "; ")));
  for (const std::string& s : sentences) p.caption += (p.caption.empty() ? "" : " ") + s;
}

std::string render_plot(const Plot& p, const std::string& root, const std::string& folder) {
  if (!gnuplot_available()) return "gnuplot is not installed (Debian: gnuplot-nox)";
  namespace fs = std::filesystem;
  const std::string kept = fmt::format("{}/{}.gp", folder, p.id);
  for (const std::string term : {"svg", "png"}) {
    // Paths relative to root, where gnuplot runs: the script is written as
    // it is kept, and redraws its plot from the report's folder.
    const std::string script = fmt::format("{}/{}.{}.gp", folder, p.id, term);
    const std::string out = fmt::format("{}/{}.{}", folder, p.id, term);
    {
      std::ofstream f(fs::path(root) / script);
      if (term == "svg")
        f << fmt::format("# {}\n# Redraws {} when run from the report's folder: gnuplot {}\n", p.title, out, kept);
      f << gnuplot_script(p, term, out);
      f.flush();
      if (!f) return fmt::format("cannot write {}/{}", root, script);
    }
    if (run_gnuplot(root, script) != 0) return fmt::format("gnuplot failed on {}/{}", root, script);
    std::error_code ec;
    if (fs::file_size(fs::path(root) / out, ec) == 0 || ec) return fmt::format("gnuplot wrote no {}/{}", root, out);
    // Keep one script, the SVG one, as the plot's source.
    if (term == "png") fs::remove(fs::path(root) / script, ec);
    else fs::rename(fs::path(root) / script, fs::path(root) / kept, ec);
    if (ec) return fmt::format("cannot keep {}/{}: {}", root, kept, ec.message());
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
    const auto is_number = [](const Cell& c) { return c.index() == 1 || c.index() == 2; };
    if (!is_number(r.cells[xi]) || !is_number(r.cells[yi])) continue;
    const double xv = cell_number(r.cells[xi]), yv = cell_number(r.cells[yi]);
    std::string name;
    for (std::size_t g : gi) {
      if (!name.empty()) name += ' ';
      name += cell_text(r.cells[g]);
    }
    auto [it, fresh] = index.emplace(name, out.size());
    if (fresh) out.push_back(Series{name, {}, "linespoints"});
    const bool off = !std::isfinite(xv) || !std::isfinite(yv) || (logx && xv <= 0) || (logy && yv <= 0);
    (off ? out[it->second].off_axis : out[it->second].points).emplace_back(xv, yv);
  }
  return out;
}

}  // namespace lplab::experiments
