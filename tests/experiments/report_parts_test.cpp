// The report a reader trusts (issue 42): gnuplot scripts that redraw their
// plot from the report's folder as they are; series that stay apart beyond
// the palette; series that lie on one another said so in the legend and the
// caption; points a log axis cannot draw counted, never dropped in silence;
// the roofline's bf16 line named for what it is; and the folders a killed
// report leaves removed only when provably lplab's. The pages themselves
// (contents, ids, long tables) are checked end to end by
// tests/tool/report_check.cmake.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/lab/plot.h"
#include "lplab/report/report.h"

namespace lx = lplab::experiments;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void put(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

// A fresh, empty folder of this test's own, removed at the end.
class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : path_(fs::temp_directory_path() / ("lplab_report_test_" + std::to_string(getpid()) + "_" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A PID no process has: a child's, once it has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

// The plot command's clauses: (style, title) per drawn series.
std::vector<std::pair<std::string, std::string>> drawn(const std::string& script) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::regex clause(R"re(\$D\d+ using 1:2 with (.*?) title "((?:[^"\\]|\\.)*)")re");
  const std::string plot = script.substr(script.find("\nplot "));
  for (std::sregex_iterator it(plot.begin(), plot.end(), clause), end; it != end; ++it)
    out.emplace_back((*it)[1], (*it)[2]);
  return out;
}

// The value after `key` in a style ("pt 7" -> "7"; "lc rgb '#x'" -> "rgb '#x'"), "" when absent.
std::string option(const std::string& style, const std::string& key) {
  std::istringstream in(style);
  for (std::string w; in >> w;)
    if (w == key) {
      std::string v;
      in >> v;
      if (v == "rgb") {
        std::string c;
        in >> c;
        v += " " + c;
      }
      return v;
    }
  return "";
}

lx::Series line(const std::string& name, const std::vector<double>& xs, const std::vector<double>& ys,
                const std::string& style = "linespoints") {
  lx::Series s{name, {}, style};
  for (std::size_t i = 0; i < xs.size(); ++i) s.points.emplace_back(xs[i], ys[i]);
  return s;
}

TEST(ReportPlot, ScriptRedrawsFromTheReportFolderAsItIs) {
  if (!lx::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  Scratch root("redraw");
  fs::create_directories(root.path() / "plots");
  lx::Plot p;
  p.id = "two_lines";
  p.title = "two lines";
  p.xlabel = "x";
  p.ylabel = "y";
  p.series = {line("a", {1, 2, 3}, {1, 4, 9}), line("b", {1, 2, 3}, {2, 3, 4})};
  ASSERT_EQ(lx::render_plot(p, root.path().string(), "plots"), "");
  const std::string script = slurp(root.path() / "plots/two_lines.gp");
  // The output is named from the report's folder; the folder it was drawn
  // in (a temporary one, in a report) appears nowhere.
  EXPECT_NE(script.find("set output \"plots/two_lines.svg\"\n"), std::string::npos) << script;
  EXPECT_EQ(script.find(root.path().string()), std::string::npos) << script;
  EXPECT_FALSE(fs::exists(root.path() / "plots/two_lines.svg.gp"));
  EXPECT_FALSE(fs::exists(root.path() / "plots/two_lines.png.gp"));
  ASSERT_TRUE(fs::exists(root.path() / "plots/two_lines.png"));

  // The folder moves (a report is renamed into place): the script still runs.
  const fs::path moved = root.path() / "report";
  fs::create_directories(moved);
  fs::rename(root.path() / "plots", moved / "plots");
  const std::string drawn_svg = slurp(moved / "plots/two_lines.svg");
  fs::remove(moved / "plots/two_lines.svg");
  const std::string cmd = "cd '" + moved.string() + "' && gnuplot plots/two_lines.gp 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_EQ(slurp(moved / "plots/two_lines.svg"), drawn_svg);
}

TEST(ReportPlot, SeriesBeyondThePaletteLookDifferent) {
  lx::Plot p;
  p.id = "many";
  std::vector<double> xs = {1, 2, 3};
  // 20 plain series, 12 that all ask for the same filled circle, 10 lines:
  // the palette has 8 colours.
  for (int i = 0; i < 20; ++i) p.series.push_back(line("lp" + std::to_string(i), xs, {1.0 * i, 2.0 * i, 3.0 * i}));
  for (int i = 0; i < 12; ++i)
    p.series.push_back(line("pt" + std::to_string(i), xs, {1.0 + i, 1.0 + i, 1.0 + i}, "points pt 7 ps 1.2"));
  for (int i = 0; i < 10; ++i)
    p.series.push_back(line("ln" + std::to_string(i), xs, {5.0 + i, 4.0 + i, 3.0 + i}, "lines lw 2"));
  const auto clauses = drawn(lx::gnuplot_script(p, "svg", "plots/many.svg"));
  ASSERT_EQ(clauses.size(), p.series.size());
  std::set<std::tuple<std::string, std::string, std::string, std::string>> looks;
  std::set<std::string> colours;
  for (const auto& [style, title] : clauses) {
    const std::string kind = style.substr(0, style.find(' '));
    const std::string lc = option(style, "lc");
    EXPECT_TRUE(lc.starts_with("rgb '#")) << title << ": no colour of its own in '" << style << "'";
    colours.insert(lc);
    const bool points = kind == "points" || kind == "linespoints";
    const bool lines = kind == "lines" || kind == "linespoints";
    const auto look = std::tuple{kind, lc, lines ? option(style, "dt") : "", points ? option(style, "pt") : ""};
    EXPECT_TRUE(looks.insert(look).second) << title << " looks like an earlier series: '" << style << "'";
  }
  EXPECT_EQ(colours.size(), 8u);
  // The 9th plain series: the first's colour, another dash and mark.
  EXPECT_EQ(option(clauses[8].first, "lc"), option(clauses[0].first, "lc"));
  EXPECT_NE(option(clauses[8].first, "dt"), option(clauses[0].first, "dt"));
  EXPECT_NE(option(clauses[8].first, "pt"), option(clauses[0].first, "pt"));
  // A style the series fixed stays where nothing collides: the first circle.
  EXPECT_EQ(option(clauses[20].first, "pt"), "7");
  EXPECT_EQ(option(clauses[20].first, "ps"), "1.2");
}

TEST(ReportPlot, SeriesOnEachOtherAreSaidAndMarked) {
  lx::Plot p;
  p.id = "coinciding";
  p.logx = p.logy = true;
  p.caption = "Errors.";
  const std::vector<double> k = {64, 256, 1024, 4096};
  const std::vector<double> a = {1e-4, 1e-3, 1e-2, 1e-1};
  std::vector<double> near = a, apart = a;
  for (double& v : near) v *= 1.03;  // 0.013 decades, under 2% of the 3 drawn
  for (double& v : apart) v *= 3;    // 0.48 decades: a line of its own
  p.series = {line("A", k, a), line("B", k, near), line("C", k, a), line("D", k, apart)};
  lx::make_readable(p);
  ASSERT_EQ(p.series.size(), 4u);  // nothing merged away: every series keeps its data
  EXPECT_EQ(p.series[0].name, "A");
  EXPECT_EQ(p.series[1].name, "B (on A)");
  EXPECT_EQ(p.series[2].name, "C (on A)");
  EXPECT_EQ(p.series[3].name, "D");
  EXPECT_EQ(p.series[1].points.size(), 4u);
  EXPECT_EQ(p.series[1].points[0].second, near[0]);
  // Rings around A's marks, the second wider than the first.
  EXPECT_TRUE(p.series[1].style.starts_with("points")) << p.series[1].style;
  EXPECT_TRUE(p.series[2].style.starts_with("points")) << p.series[2].style;
  EXPECT_LT(std::stod(option(p.series[1].style, "ps")), std::stod(option(p.series[2].style, "ps")));
  EXPECT_EQ(p.series[3].style, "linespoints");
  EXPECT_NE(p.caption.find("B on A (within a factor of 1.03)"), std::string::npos) << p.caption;
  EXPECT_NE(p.caption.find("C on A (equal values)"), std::string::npos) << p.caption;
  EXPECT_TRUE(p.caption.starts_with("Errors. ")) << p.caption;

  // Lines without marks: the one on top is a wide dashed line.
  lx::Plot q;
  q.series = {line("roof", {1, 2, 4}, {1, 2, 2}, "lines lw 2"), line("same roof", {1, 2, 4}, {1, 2, 2}, "lines lw 2")};
  lx::make_readable(q);
  EXPECT_EQ(q.series[1].name, "same roof (on roof)");
  EXPECT_TRUE(q.series[1].style.starts_with("lines")) << q.series[1].style;
  EXPECT_NE(option(q.series[1].style, "dt"), "");
  EXPECT_GT(std::stod(option(q.series[1].style, "lw")), 2.0);
}

TEST(ReportPlot, ZerosOnALogAxisAreCountedNotDropped) {
  lx::Table t{"t", "t", {{"gen", ""}, {"k", ""}, {"err", ""}}, {}, {}};
  t.add(0, {std::string("A"), std::int64_t{64}, 0.0});
  t.add(1, {std::string("A"), std::int64_t{256}, 1e-6});
  t.add(2, {std::string("B"), std::int64_t{64}, 1e-4});
  t.add(3, {std::string("B"), std::int64_t{256}, 2e-4});
  t.add(4, {std::string("C"), std::int64_t{64}, 0.0});
  t.add(5, {std::string("C"), std::int64_t{256}, 0.0});
  t.add(6, {std::string("B"), std::int64_t{1024}, std::monostate{}});  // no value: no point at all
  lx::Plot p;
  p.id = "zeros";
  p.logx = p.logy = true;
  p.series = lx::series_from_table(t, "k", "err", {"gen"}, {}, true, true);
  ASSERT_EQ(p.series.size(), 3u);  // C, all zeros, is a series still
  EXPECT_EQ(p.series[0].points.size(), 1u);
  ASSERT_EQ(p.series[0].off_axis.size(), 1u);
  EXPECT_EQ(p.series[0].off_axis[0], (std::pair<double, double>{64, 0}));
  EXPECT_EQ(p.series[1].points.size(), 2u);
  EXPECT_TRUE(p.series[1].off_axis.empty());
  EXPECT_EQ(p.series[2].off_axis.size(), 2u);
  // A series built by hand: the zero leaves it the same way.
  p.series.push_back(line("D", {64, 256}, {3e-5, 0}));
  lx::make_readable(p);
  EXPECT_EQ(p.series[3].points.size(), 1u);
  EXPECT_EQ(p.caption,
            "Not drawn (0 on a log axis): A at (64, 0); C at (64, 0), (256, 0); D at (256, 0).");
  // C has nothing to draw: no empty legend entry.
  const auto clauses = drawn(lx::gnuplot_script(p, "svg", "plots/zeros.svg"));
  ASSERT_EQ(clauses.size(), 3u);
  for (const auto& [style, title] : clauses) EXPECT_NE(title, "C");

  // Past three points a series is counted, not listed.
  lx::Plot q;
  q.logy = true;
  q.series = {line("E", {1, 2, 3, 4, 5}, {0, 0, 0, 0, 1})};
  lx::make_readable(q);
  EXPECT_EQ(q.caption, "Not drawn (0 on a log axis): E, 4 points.");
}

TEST(ReportRoofline, TheBf16LineIsLplabsLoopNotThePeak) {
  const lx::Experiment* e = lx::find_experiment("roofline");
  ASSERT_TRUE(e != nullptr && e->plots);
  // A CPU like the issue's: AVX512-BF16 and AMX, its VDPBF16PS loop at half
  // the fp32 FMA rate.
  lx::Table roofs{"roofline_roofs",
                  "roofs",
                  {{"device", ""},
                   {"dtype", ""},
                   {"peak_gflops", "GFLOP/s"},
                   {"bandwidth_gbs", "GB/s"},
                   {"ridge_flop_per_byte", "FLOP/byte"},
                   {"source", ""}},
                  {},
                  {}};
  roofs.add(0, {std::string("this_cpu"), std::string("fp32"), 335.0, 43.5, 335.0 / 43.5,
                std::string("measured, 2 thread(s)")});
  roofs.add(1, {std::string("this_cpu"), std::string("bf16"), 165.8, 43.5, 165.8 / 43.5,
                std::string("measured, 2 thread(s), lplab's VDPBF16PS loop (AVX512-BF16), not this CPU's bf16 peak; "
                            "its AMX-BF16 tiles, which lplab does not use, go further")});
  roofs.add(2, {std::string("h100_sxm"), std::string("bf16"), 989e3, 3350.0, 989e3 / 3350, std::string("datasheet")});
  const std::vector<lx::Plot> plots = e->plots({roofs});
  ASSERT_EQ(plots.size(), 1u);
  const lx::Plot& p = plots[0];
  bool seen = false;
  for (const lx::Series& s : p.series) {
    EXPECT_NE(s.name, "this_cpu bf16 roof");  // a roof is the hardware's; this is a loop's rate
    if (s.name.find("this_cpu bf16") != std::string::npos) {
      seen = true;
      EXPECT_NE(s.name.find("VDPBF16PS loop"), std::string::npos) << s.name;
      EXPECT_NE(s.name.find("not peak"), std::string::npos) << s.name;
    }
  }
  EXPECT_TRUE(seen);
  EXPECT_NE(p.caption.find("lplab's VDPBF16PS loop (AVX512-BF16), not this CPU's bf16 peak: its AMX-BF16 tiles"),
            std::string::npos)
      << p.caption;
}

TEST(ReportFolders, StaleTemporariesGoOnlyWhenProvablyLplabs) {
  Scratch parent("stale");
  const fs::path dir = parent.path() / "rep";
  const std::string marker = "written by lplab report; the files it wrote:\n";
  const auto folder = [&](const std::string& name, const std::string* marker_text) {
    fs::create_directories(parent.path() / name / "plots");
    put(parent.path() / name / "plots/a.svg", "<svg/>");
    if (marker_text != nullptr) put(parent.path() / name / ".lplab-report", *marker_text);
    return parent.path() / name;
  };
  const std::string dead = std::to_string(dead_pid()), dead2 = std::to_string(dead_pid()),
                    dead3 = std::to_string(dead_pid()), dead4 = std::to_string(dead_pid()),
                    dead5 = std::to_string(dead_pid()), dead6 = std::to_string(dead_pid());
  const std::string other_marker = "not lplab's\n";
  const fs::path gone = folder("rep.tmp" + dead, &marker);
  const fs::path unmarked = folder("rep.tmp" + dead2, nullptr);
  const fs::path foreign_marker = folder("rep.tmp" + dead3, &other_marker);
  const fs::path alive = folder("rep.tmp" + std::to_string(getppid()), &marker);
  const fs::path mine = folder("rep.tmp" + std::to_string(getpid()), &marker);
  const fs::path not_a_pid = folder("rep.tmp12x", &marker);
  const fs::path other_name = folder("report.tmp" + dead4, &marker);
  // A link named like a temporary, to a folder lplab made: neither goes.
  const fs::path target = folder("kept", &marker);
  fs::create_directory_symlink(target, parent.path() / ("rep.tmp" + dead5));
  // The previous report, left aside by a run killed between its renames.
  const fs::path aside = folder("rep.old" + dead6, &marker);
  put(aside / "index.md", "previous\n");

  lx::remove_stale_report_folders(dir.string());
  EXPECT_FALSE(fs::exists(gone));
  for (const fs::path& p : {unmarked, foreign_marker, alive, mine, not_a_pid, other_name, target})
    EXPECT_TRUE(fs::exists(p / "plots/a.svg")) << p;
  EXPECT_TRUE(fs::is_symlink(parent.path() / ("rep.tmp" + dead5)));
  // Back in place, whole.
  EXPECT_FALSE(fs::exists(aside));
  EXPECT_EQ(slurp(dir / "index.md"), "previous\n");

  // With a report in place, one left aside is the replaced one: it goes.
  const fs::path replaced = folder("rep.old" + std::to_string(dead_pid()), &marker);
  lx::remove_stale_report_folders(dir.string() + "/");  // a trailing slash names the same report
  EXPECT_FALSE(fs::exists(replaced));
  EXPECT_EQ(slurp(dir / "index.md"), "previous\n");
}

}  // namespace
