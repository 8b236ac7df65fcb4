#include "lplab/experiments/report.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "device_peaks.h"
#include "lplab/experiments/runner.h"

namespace lplab::experiments {
namespace fs = std::filesystem;
namespace {

constexpr const char* kMarker = ".lplab-report";  // marks a directory this command wrote
// A table of more rows than this is shown as sections, one per value of its
// first column, each a collapsible <details> block (the first one open):
// every row is in the page, none hidden behind a cut.
constexpr std::size_t kOpenRows = 40;

struct Section {
  const Experiment* experiment;
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<Table> tables;
  double seconds = 0;
};

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else o += c;
  }
  return o;
}

std::string header_cell(const Column& c) { return c.unit.empty() ? c.name : fmt::format("{} [{}]", c.name, c.unit); }

// The rows of a table in sections: one section of every row when it is
// short, else one per value of the first column, in order of appearance.
struct RowGroup {
  std::string label;  // empty: the whole table, shown open
  std::vector<std::size_t> rows;
};

std::vector<RowGroup> row_groups(const Table& t) {
  std::vector<RowGroup> g;
  if (t.rows.size() <= kOpenRows || t.columns.empty()) {
    g.push_back({"", {}});
    for (std::size_t i = 0; i < t.rows.size(); ++i) g[0].rows.push_back(i);
    return g;
  }
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const std::string key = fmt::format("{} = {}", t.columns[0].name, cell_text(t.rows[i].cells[0], 6));
    auto it = std::find_if(g.begin(), g.end(), [&](const RowGroup& r) { return r.label == key; });
    if (it == g.end()) {
      g.push_back({key, {}});
      it = g.end() - 1;
    }
    it->rows.push_back(i);
  }
  return g;
}

std::string group_summary(const RowGroup& g, std::size_t total) {
  return fmt::format("{} ({} of {} rows)", g.label, g.rows.size(), total);
}

std::string md_table(const Table& t, const std::string& csv_link) {
  std::vector<std::string> h;
  for (const Column& c : t.columns) h.push_back(md_escape(header_cell(c)));
  std::string head = fmt::format("| {} |\n|", fmt::join(h, " | "));
  for (std::size_t i = 0; i < h.size(); ++i) head += " --- |";
  head += "\n";
  std::string s;
  const std::vector<RowGroup> groups = row_groups(t);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const RowGroup& g = groups[k];
    if (!g.label.empty())
      s += fmt::format("<details{}><summary>{}</summary>\n\n", k == 0 ? " open" : "",
                       html_escape(group_summary(g, t.rows.size())));
    s += head;
    for (std::size_t i : g.rows) {
      std::vector<std::string> cells;
      for (const Cell& c : t.rows[i].cells) cells.push_back(md_escape(cell_text(c, 6)));
      s += fmt::format("| {} |\n", fmt::join(cells, " | "));
    }
    if (!g.label.empty()) s += "\n</details>\n\n";
  }
  if (groups.size() > 1) s += fmt::format("\nEvery row, full precision: [{}]({}).\n", csv_link, csv_link);
  for (const std::string& n : t.notes) s += fmt::format("\n> {}\n", n);
  return s;
}

std::string html_table(const Table& t, const std::string& csv_link) {
  std::string head = "<tr>";
  for (const Column& c : t.columns) head += fmt::format("<th>{}</th>", html_escape(header_cell(c)));
  head += "</tr>\n";
  std::string s;
  const std::vector<RowGroup> groups = row_groups(t);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const RowGroup& g = groups[k];
    if (!g.label.empty())
      s += fmt::format("<details{}><summary>{}</summary>\n", k == 0 ? " open" : "",
                       html_escape(group_summary(g, t.rows.size())));
    s += "<div class=\"scroll\"><table>\n" + head;
    for (std::size_t i : g.rows) {
      s += "<tr>";
      for (const Cell& c : t.rows[i].cells) {
        const bool num = c.index() == 1 || c.index() == 2;
        s += fmt::format("<td{}>{}</td>", num ? " class=\"n\"" : "", html_escape(cell_text(c, 6)));
      }
      s += "</tr>\n";
    }
    s += "</table></div>\n";
    if (!g.label.empty()) s += "</details>\n";
  }
  if (groups.size() > 1)
    s += fmt::format("<p class=\"more\">Every row, full precision: <a href=\"{}\">{}</a>.</p>\n", csv_link, csv_link);
  for (const std::string& n : t.notes) s += fmt::format("<p class=\"note\">{}</p>\n", html_escape(n));
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The SVG for inlining: without the XML prolog and doctype.
std::string inline_svg(const std::string& path) {
  std::string svg = read_file(path);
  const auto start = svg.find("<svg");
  return start == std::string::npos ? std::string() : svg.substr(start);
}

// Writes a whole file or throws (a full disk must not leave a truncated
// table in a report that then looks complete).
void write(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << content;
  f.flush();
  if (!f) throw UsageError(fmt::format("report: cannot write {} (disk full?)", path));
}

// The marker's first line; every following line names a file the report
// wrote, relative to its directory.
constexpr const char* kMarkerHeader = "written by lplab report; the files it wrote:";

std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!it->is_directory(ec)) out.push_back(fs::relative(it->path(), dir, ec).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void check_report_dir(const std::string& dir) {
  if (dir.empty()) throw UsageError("report: --out is empty");
  std::error_code ec;
  const fs::path p(dir);
  if (fs::exists(fs::symlink_status(p, ec))) {
    if (!fs::is_directory(p, ec) || !fs::exists(p / kMarker, ec))
      throw UsageError(fmt::format("report: {} exists and is not an lplab report: choose another --out", dir));
    // Replacing a report removes it whole: only if it holds nothing but what
    // lplab wrote there (the marker's list).
    std::ifstream marker(p / kMarker);
    std::set<std::string> written;
    for (std::string line; std::getline(marker, line);) written.insert(line);
    std::vector<std::string> foreign;
    for (const std::string& f : files_under(p))
      if (f != kMarker && !written.contains(f)) foreign.push_back(f);
    if (!foreign.empty()) {
      const std::size_t shown = std::min<std::size_t>(foreign.size(), 5);
      throw UsageError(fmt::format(
          "report: {} holds {} file{} that lplab did not write ({}{}): move {} or choose another --out", dir,
          foreign.size(), foreign.size() == 1 ? "" : "s",
          fmt::join(foreign.begin(), foreign.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
          foreign.size() > shown ? ", ..." : "", foreign.size() == 1 ? "it" : "them"));
    }
  }
  const fs::path parent = fs::absolute(p, ec).parent_path();
  if (!fs::is_directory(parent, ec))
    throw UsageError(fmt::format("report: the directory {} does not exist", parent.string()));
  if (access(parent.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("report: cannot write in {}", parent.string()));
}

namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", tm);
}

const char* kCss = R"(body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:13px;margin:.5em 0}th,td{border:1px solid #ccc;padding:2px 6px}
th{background:#f3f3f3;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto}.note{color:#444;border-left:3px solid #999;padding-left:.6em;font-size:14px}
.more{font-size:13px;color:#666}figure{margin:1em 0}figcaption{font-size:14px;color:#444}
svg{max-width:100%;height:auto}code{background:#f3f3f3;padding:0 3px}.gpu{background:#fff7e0;padding:.5em 1em;border:1px solid #e0c060})";

}  // namespace

Table write_report(const ReportOptions& options) {
  check_report_dir(options.dir);
  // 1. Every experiment's parameters, validated before any work.
  std::vector<PreparedRun> runs;
  for (const Experiment& e : experiments()) {
    RunRequest r;
    r.experiment = e.name;
    r.params = e.report_params;
    if (options.quick)
      for (const auto& [k, v] : e.quick_params) r.params[k] = v;
    r.threads = options.threads;
    runs.push_back(prepare(r));
  }
  const Machine machine = this_machine();
  const std::string tmp = fmt::format("{}.tmp{}", options.dir, getpid());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(fs::path(tmp) / "data", ec);
  fs::create_directories(fs::path(tmp) / "plots", ec);
  if (ec) throw UsageError(fmt::format("report: cannot create {}: {}", tmp, ec.message()));
  try {
    // 2. The experiments.
    std::vector<Section> sections;
    std::vector<Table> all;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const PreparedRun& run = runs[i];
      if (options.progress)
        std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, runs.size(), run.experiment->name.c_str());
      Progress progress(run.experiment->name);
      RunResult r = execute(run, progress);
      for (const Table& t : r.tables) {
        write(fmt::format("{}/data/{}.csv", tmp, t.id), to_csv(t));
        write(fmt::format("{}/data/{}.json", tmp, t.id), to_json(t).dump(1) + "\n");
        all.push_back(t);
      }
      write(fmt::format("{}/data/run_{}.json", tmp, run.experiment->name), run_record(r).dump(1) + "\n");
      sections.push_back({run.experiment, run.params.all(), std::move(r.tables), r.seconds});
    }
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // 3. Plots.
    std::vector<std::pair<Plot, std::string>> plots;  // plot, error ("" when drawn)
    for (Plot& p : report_plots(all)) {
      // Ctrl-C also reaches gnuplot, which then fails: say interrupted, not "not drawn".
      if (Progress::interrupted()) throw Interrupted();
      std::string err = render_plot(p, tmp + "/plots");
      if (Progress::interrupted()) throw Interrupted();
      if (!err.empty()) std::fprintf(stderr, "lplab: report: plot %s not drawn: %s\n", p.id.c_str(), err.c_str());
      plots.emplace_back(std::move(p), std::move(err));
    }
    const Table summary = report_summary(all);
    write(fmt::format("{}/data/{}.csv", tmp, summary.id), to_csv(summary));
    write(fmt::format("{}/data/{}.json", tmp, summary.id), to_json(summary).dump(1) + "\n");

    // 4. The pages.
    const std::string when = utc_now();
    const std::string head_md = fmt::format(
        "# lplab report\n\n"
        "- machine: **{}**, {} cores, SIMD target {}, {:.1f} GiB memory\n"
        "- lplab {} ({}), {}\n- command: `{}`\n- experiments took {:.1f} s\n",
        machine.cpu_model, machine.cores, machine.simd_target, static_cast<double>(machine.memory_bytes) / 1073741824.0,
        LPLAB_VERSION, options.quick ? "quick sizes" : "report sizes", when, options.command, total);
    // The GPU measured in this run, where there is one.
    const std::optional<MeasuredGpu> measured = options.measure_gpu ? options.measure_gpu() : std::nullopt;
    std::string gpu_text =
        "No GPU kernels ran: this report was made on a CPU, and every measured figure in it is this CPU's. "
        "The GPU figures below (H100, A100, H200, B200) are the vendors' promised dense peaks from their spec "
        "sheets, used for arithmetic intensity and for placing operations on a GPU's roofline; lplab's CUDA "
        "code (the formats compiled with nvcc) did not run here.";
    Table measured_gpu{"gpu_measured", "This machine's GPU, measured (CUDA events)", roof_columns(), {},
                       {"peak_gflops: cuBLASLt's GEMM at the stated size; bandwidth_gbs: a device-to-device copy, "
                        "bytes read plus written; ridge_flop_per_byte = peak / bandwidth."}};
    if (measured) {
      gpu_text = fmt::format(
          "Measured on this machine's GPU, {}, by lplab's CUDA backend: its roofline (cuBLASLt's GEMM, a "
          "device-to-device copy) in the first table. The CPU figures elsewhere in the report are the CPU's. The "
          "second table is the vendors' promised dense peaks from their spec sheets.",
          measured->device);
      for (const MeasuredGpu::Roof& r : measured->roofs)
        measured_gpu.add(measured_gpu.rows.size(), roof_cells(measured->device, r.dtype, r.flops, r.bandwidth, r.how));
      write(fmt::format("{}/data/{}.csv", tmp, measured_gpu.id), to_csv(measured_gpu));
      write(fmt::format("{}/data/{}.json", tmp, measured_gpu.id), to_json(measured_gpu).dump(1) + "\n");
    }
    // The spec-sheet table: the devices' roofs (device_peaks.h), as the
    // roofline experiment lists them beside this machine's.
    Table gpu{"gpu_spec_sheets",
              "Accelerators' promised peaks (spec sheets, dense)",
              roof_columns(),
              {},
              {"ridge_flop_per_byte = peak / bandwidth: operations of lower arithmetic intensity are "
               "memory-bound on that device (roofline_ops says which)."}};
    for (const DeviceRoof& d : device_roofs())
      gpu.add(gpu.rows.size(), roof_cells(std::string(d.device), std::string(d.dtype), d.peak, d.bandwidth,
                                          std::string(d.source)));
    write(fmt::format("{}/data/{}.csv", tmp, gpu.id), to_csv(gpu));
    write(fmt::format("{}/data/{}.json", tmp, gpu.id), to_json(gpu).dump(1) + "\n");

    std::string md = head_md + "\n## Summary\n\n" + md_table(summary, "data/" + summary.id + ".csv") + "\n";
    md += "## GPU\n\n" + gpu_text + "\n\n";
    if (measured) md += md_table(measured_gpu, "data/" + measured_gpu.id + ".csv") + "\n";
    md += md_table(gpu, "data/" + gpu.id + ".csv") + "\n";
    std::string html = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lplab report — {}</title>"
        "<style>{}</style></head><body>\n<h1>lplab report</h1>\n<ul><li>machine: <b>{}</b>, {} cores, SIMD target {}, "
        "{:.1f} GiB memory</li><li>lplab {} ({}), {}</li><li>command: <code>{}</code></li><li>experiments took "
        "{:.1f} s</li></ul>\n<h2>Summary</h2>\n{}<h2>GPU</h2>\n<p class=\"gpu\">{}</p>\n{}",
        html_escape(machine.cpu_model), kCss, html_escape(machine.cpu_model), machine.cores, machine.simd_target,
        static_cast<double>(machine.memory_bytes) / 1073741824.0, LPLAB_VERSION,
        options.quick ? "quick sizes" : "report sizes", when, html_escape(options.command), total,
        html_table(summary, "data/" + summary.id + ".csv"), html_escape(gpu_text),
        (measured ? html_table(measured_gpu, "data/" + measured_gpu.id + ".csv") : std::string()) +
            html_table(gpu, "data/" + gpu.id + ".csv"));

    std::string plots_md = "## Plots\n\n", plots_html = "<h2>Plots</h2>\n";
    for (const auto& [p, err] : plots) {
      if (!err.empty()) {
        plots_md += fmt::format("- {}: not drawn ({})\n", p.title, err);
        plots_html += fmt::format("<p class=\"note\">{}: not drawn ({})</p>\n", html_escape(p.title), html_escape(err));
        continue;
      }
      plots_md += fmt::format("### {}\n\n![{}](plots/{}.png)\n\n{} ([SVG](plots/{}.svg), [gnuplot](plots/{}.gp))\n\n",
                              p.title, p.title, p.id, p.caption, p.id, p.id);
      plots_html += fmt::format("<figure id=\"{}\">{}<figcaption>{} (<a href=\"plots/{}.svg\">SVG</a>, "
                                "<a href=\"plots/{}.png\">PNG</a>, <a href=\"plots/{}.gp\">gnuplot</a>)</figcaption></figure>\n",
                                p.id, inline_svg(fmt::format("{}/plots/{}.svg", tmp, p.id)), html_escape(p.caption),
                                p.id, p.id, p.id);
    }
    md += plots_md;
    html += plots_html;

    for (const Section& s : sections) {
      std::vector<std::string> ps;
      for (const auto& [k, v] : s.params) ps.push_back(fmt::format("{}={}", k, v));
      md += fmt::format("## {}\n\n{}\n\nParameters: `{}` ({:.2f} s)\n\n", s.experiment->name, s.experiment->summary,
                        fmt::join(ps, " "), s.seconds);
      html += fmt::format("<h2 id=\"{}\">{}</h2>\n<p>{}</p>\n<p>Parameters: <code>{}</code> ({:.2f} s)</p>\n",
                          s.experiment->name, s.experiment->name, html_escape(s.experiment->summary),
                          html_escape(fmt::format("{}", fmt::join(ps, " "))), s.seconds);
      for (const Table& t : s.tables) {
        const std::string link = fmt::format("data/{}.csv", t.id);
        md += fmt::format("### {}\n\n{}\n", t.title, md_table(t, link));
        html += fmt::format("<h3 id=\"{}\">{}</h3>\n{}", t.id, html_escape(t.title), html_table(t, link));
      }
    }
    html += "</body></html>\n";
    write(tmp + "/index.md", md);
    write(tmp + "/index.html", html);
    std::string manifest = std::string(kMarkerHeader) + "\n";
    for (const std::string& f : files_under(tmp)) manifest += f + "\n";
    write((fs::path(tmp) / kMarker).string(), manifest);

    // 5. Into place: the old report (if any) goes only once the new one is whole.
    const std::string old = fmt::format("{}.old{}", options.dir, getpid());
    const bool had_old = fs::exists(options.dir, ec);
    if (had_old) {
      fs::rename(options.dir, old, ec);
      if (ec) throw UsageError(fmt::format("report: cannot move the previous {} aside: {}", options.dir, ec.message()));
    }
    fs::rename(tmp, options.dir, ec);
    if (ec) {
      std::error_code back;
      if (had_old) fs::rename(old, options.dir, back);  // the previous report stays where it was
      throw UsageError(fmt::format("report: cannot move {} to {}: {}", tmp, options.dir, ec.message()));
    }
    fs::remove_all(old, ec);
    return summary;
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace lplab::experiments
