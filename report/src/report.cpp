#include "lplab/report/report.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include "lplab/lab/device_peaks.h"
#include "lplab/lab/files.h"
#include "report_document.h"
#include "report_page.h"
#include "lplab/experiments/runner.h"

namespace lplab::experiments {
namespace fs = std::filesystem;
namespace {

constexpr const char* kMarker = ".lplab-report";  // marks a directory this command wrote
// The marker's first line; every following line names a file the report
// wrote, relative to its directory. A report's temporary folder holds the
// first line from the moment it is made, so that one a killed run left
// behind can be told from anything else of that name.
constexpr const char* kMarkerHeader = "written by lplab report; the files it wrote:";

struct Section {
  const Experiment* experiment;
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<Table> tables;
  double seconds = 0;
};

// Writes a whole file or throws WriteError with the cause (a full disk must
// not leave a truncated table in a report that then looks complete): the
// lab's one writer (files.h), into the report's temporary folder.
void write(const std::string& path, const std::string& content) { write_file_atomic(path, content); }

// `dir` without trailing slashes: "out/" names the report out, whose
// parent is the current directory and whose temporary folder is out.tmpPID
// beside it (not out/.tmpPID inside it).
std::string report_path(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

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
  const fs::path p(report_path(dir));
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

// The PID in `entry` when it is `name` + infix + digits ("lplab-report.tmp4711"), else 0.
pid_t pid_in_name(const std::string& entry, const std::string& name, std::string_view infix) {
  const std::size_t head = name.size() + infix.size();
  if (!entry.starts_with(name) || entry.compare(name.size(), infix.size(), infix) != 0 || entry.size() <= head ||
      entry.size() > head + 9)
    return 0;
  pid_t pid = 0;
  for (std::size_t i = head; i < entry.size(); ++i) {
    if (entry[i] < '0' || entry[i] > '9') return 0;
    pid = pid * 10 + (entry[i] - '0');
  }
  return pid;
}

// Whether `path` is provably a folder lplab report made and a run that no
// longer exists left: its PID is no running process (kill(2) says ESRCH;
// EPERM means a process of another user runs under it), it is a directory
// of this user and not a symbolic link, and it holds lplab's marker, a
// regular file that begins with the marker's line.
bool left_by_dead_report(const fs::path& path, pid_t pid) {
  if (pid <= 0 || pid == getpid()) return false;
  if (kill(pid, 0) == 0 || errno != ESRCH) return false;
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) return false;
  const fs::path marker = path / kMarker;
  if (lstat(marker.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream f(marker);
  std::string first;
  std::getline(f, first);
  return first == kMarkerHeader;
}

}  // namespace

void remove_stale_report_folders(const std::string& dir) {
  const fs::path target(report_path(dir));
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") return;
  std::vector<fs::path> building, aside;  // DIR.tmpPID, DIR.oldPID
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    if (const pid_t pid = pid_in_name(entry, name, ".tmp"); left_by_dead_report(it->path(), pid))
      building.push_back(it->path());
    else if (const pid_t old = pid_in_name(entry, name, ".old"); left_by_dead_report(it->path(), old))
      aside.push_back(it->path());
  }
  // A run killed between its two renames left the previous report aside and
  // none in its place: that report goes back, as an interrupted run
  // promises. Otherwise the new report replaced it, and the run's removal is
  // finished here.
  for (const fs::path& p : aside) {
    std::error_code e;
    if (!fs::exists(fs::symlink_status(target, e))) {
      fs::rename(p, target, e);
      if (!e) continue;
    }
    fs::remove_all(p, e);
  }
  for (const fs::path& p : building) {
    std::error_code e;
    fs::remove_all(p, e);
  }
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
img{max-width:100%;height:auto}code{background:#f3f3f3;padding:0 3px}
.gpu{background:#fff7e0;padding:.5em 1em;border:1px solid #e0c060}
.cols{font-size:13px;color:#444;margin:.2em 0}details{margin:.4em 0}summary{cursor:pointer;font-size:13px;color:#444}
nav ul{margin:.2em 0}nav li{margin:.1em 0})";

}  // namespace

namespace {

// A table's two data files, data/ID.csv and data/ID.json.
void write_data(const std::string& tmp, const Table& t) {
  write(fmt::format("{}/data/{}.csv", tmp, t.id), to_csv(t));
  write(fmt::format("{}/data/{}.json", tmp, t.id), to_json(t).dump(1) + "\n");
}

// 1. Every experiment's parameters, validated before any work.
std::vector<PreparedRun> prepare_runs(const ReportOptions& options) {
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
  return runs;
}

// 2. The experiments, each table written as data as it comes.
struct Ran {
  std::vector<Section> sections;
  std::vector<Table> all;
  double seconds = 0;
};
Ran run_experiments(const std::vector<PreparedRun>& runs, const std::string& tmp, bool show_progress) {
  Ran out;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const PreparedRun& run = runs[i];
    if (show_progress) std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, runs.size(), run.experiment->name.c_str());
    Progress progress(run.experiment->name);
    RunResult r = execute(run, progress);
    for (const Table& t : r.tables) {
      write_data(tmp, t);
      out.all.push_back(t);
    }
    write(fmt::format("{}/data/run_{}.json", tmp, run.experiment->name), run_record(r).dump(1) + "\n");
    out.sections.push_back({run.experiment, run.params.all(), std::move(r.tables), r.seconds});
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

// 3. The plots: each plot, and why it was not drawn ("" when it was).
std::vector<std::pair<Plot, std::string>> draw_plots(const std::vector<Table>& all, const std::string& tmp) {
  std::vector<std::pair<Plot, std::string>> plots;
  for (Plot& p : report_plots(all)) {
    // Ctrl-C also reaches gnuplot, which then fails: say interrupted, not "not drawn".
    if (Progress::interrupted()) throw Interrupted();
    std::string err = render_plot(p, tmp, "plots");
    if (Progress::interrupted()) throw Interrupted();
    if (!err.empty()) std::fprintf(stderr, "lplab: report: plot %s not drawn: %s\n", p.id.c_str(), err.c_str());
    plots.emplace_back(std::move(p), std::move(err));
  }
  return plots;
}

// The GPU section: what ran where, the GPU measured in this run (where there
// is one) and the spec sheets' roofs (device_peaks.h), as the roofline
// experiment lists them beside this machine's.
struct GpuSection {
  std::string text;
  std::optional<Table> measured;
  Table spec_sheets;
};
GpuSection gpu_section(const ReportOptions& options, const std::string& tmp) {
  GpuSection g{
      .text = "No GPU kernels ran: this report was made on a CPU, and every measured figure in it is this CPU's. "
              "The GPU figures below (H100, A100, H200, B200) are the vendors' promised dense peaks from their spec "
              "sheets, used for arithmetic intensity and for placing operations on a GPU's roofline; lplab's CUDA "
              "code (the formats compiled with nvcc) did not run here.",
      .measured = std::nullopt,
      .spec_sheets = {"gpu_spec_sheets",
                      "Accelerators' promised peaks (spec sheets, dense)",
                      roof_columns(),
                      {},
                      {"ridge_flop_per_byte = peak / bandwidth: operations of lower arithmetic intensity are "
                       "memory-bound on that device (roofline_ops says which)."}}};
  if (const std::optional<MeasuredGpu> m = options.measure_gpu ? options.measure_gpu() : std::nullopt) {
    g.text = fmt::format(
        "Measured on this machine's GPU, {}, by lplab's CUDA backend: its roofline (cuBLASLt's GEMM, a "
        "device-to-device copy) in the first table. The CPU figures elsewhere in the report are the CPU's. The "
        "second table is the vendors' promised dense peaks from their spec sheets.",
        m->device);
    Table t{"gpu_measured", "This machine's GPU, measured (CUDA events)", roof_columns(), {},
            {"peak_gflops: cuBLASLt's GEMM at the stated size; bandwidth_gbs: a device-to-device copy, "
             "bytes read plus written; ridge_flop_per_byte = peak / bandwidth."}};
    for (const MeasuredGpu::Roof& r : m->roofs)
      t.add(t.rows.size(), roof_cells(m->device, r.dtype, r.flops, r.bandwidth, r.how));
    write_data(tmp, t);
    g.measured = std::move(t);
  }
  for (const DeviceRoof& d : device_roofs())
    g.spec_sheets.add(g.spec_sheets.rows.size(), roof_cells(std::string(d.device), std::string(d.dtype), d.peak,
                                                            d.bandwidth, std::string(d.source)));
  write_data(tmp, g.spec_sheets);
  return g;
}

// 4. What the pages say, once: the summary, the GPU section, the plots and
//    every experiment's tables, under headings the contents list is made of.
page::Document report_document(const ReportOptions& options, const Ran& ran, const Table& summary,
                               const GpuSection& gpu, const std::vector<std::pair<Plot, std::string>>& plots) {
  const Machine machine = this_machine();
  page::Document doc;
  doc.header = {.cpu_model = machine.cpu_model,
                .simd_target = machine.simd_target,
                .version = LPLAB_VERSION,
                .sizes = options.quick ? "quick sizes" : "report sizes",
                .when = utc_now(),
                .command = options.command,
                .cores = machine.cores,
                .memory_gib = static_cast<double>(machine.memory_bytes) / 1073741824.0,
                .seconds = ran.seconds};
  page::Anchors anchors;
  doc.contents_id = anchors.take("", "contents");
  doc.heading(0, "Summary", anchors.take("", "summary"));
  doc.table(summary);
  doc.heading(0, "GPU", anchors.take("", "gpu"));
  doc.paragraph(gpu.text, "gpu");
  for (const Table* t : {gpu.measured ? &*gpu.measured : nullptr, &gpu.spec_sheets}) {
    if (t == nullptr) continue;
    doc.heading(1, t->title, anchors.take("table-", t->id));
    doc.table(*t);
  }
  doc.heading(0, "Plots", anchors.take("", "plots"));
  for (const auto& [p, err] : plots) {
    doc.heading(1, p.title, anchors.take("plot-", p.id));
    doc.figure(p, err);
  }
  for (const Section& s : ran.sections) {
    std::vector<std::string> ps;
    for (const auto& [k, v] : s.params) ps.push_back(fmt::format("{}={}", k, v));
    doc.heading(0, s.experiment->name, anchors.take("experiment-", s.experiment->name));
    doc.parameters(s.experiment->summary, fmt::format("{}", fmt::join(ps, " ")), s.seconds);
    for (const Table& t : s.tables) {
      doc.heading(1, t.title, anchors.take("table-", t.id));
      doc.table(t);
    }
  }
  return doc;
}

// 5. Into place: the old report (if any) goes only once the new one is whole.
void install_report(const std::string& tmp, const std::string& dir) {
  std::error_code ec;
  const std::string old = fmt::format("{}.old{}", dir, getpid());
  const bool had_old = fs::exists(dir, ec);
  if (had_old) {
    fs::rename(dir, old, ec);
    if (ec) throw UsageError(fmt::format("report: cannot move the previous {} aside: {}", dir, ec.message()));
  }
  fs::rename(tmp, dir, ec);
  if (ec) {
    std::error_code back;
    if (had_old) fs::rename(old, dir, back);  // the previous report stays where it was
    throw UsageError(fmt::format("report: cannot move {} to {}: {}", tmp, dir, ec.message()));
  }
  fs::remove_all(old, ec);
}

}  // namespace

Table write_report(const ReportOptions& options) {
  if (!options.dir.empty()) remove_stale_report_folders(options.dir);
  check_report_dir(options.dir);
  const std::vector<PreparedRun> runs = prepare_runs(options);
  const std::string dir = report_path(options.dir);
  const std::string tmp = fmt::format("{}.tmp{}", dir, getpid());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(fs::path(tmp) / "data", ec);
  fs::create_directories(fs::path(tmp) / "plots", ec);
  if (ec) throw UsageError(fmt::format("report: cannot create {}: {}", tmp, ec.message()));
  try {
    // Marked as lplab's from the start: a run killed before the end leaves a
    // folder the next run can prove is its own (remove_stale_report_folders).
    write((fs::path(tmp) / kMarker).string(), std::string(kMarkerHeader) + "\n");
    const Ran ran = run_experiments(runs, tmp, options.progress);
    const std::vector<std::pair<Plot, std::string>> plots = draw_plots(ran.all, tmp);
    const Table summary = report_summary(ran.all);
    write_data(tmp, summary);
    const GpuSection gpu = gpu_section(options, tmp);
    const page::Document doc = report_document(options, ran, summary, gpu, plots);
    write(tmp + "/index.md", page::markdown(doc));
    write(tmp + "/index.html", page::html(doc, kCss));
    std::string manifest = std::string(kMarkerHeader) + "\n";
    for (const std::string& f : files_under(tmp))
      if (f != kMarker) manifest += f + "\n";
    write((fs::path(tmp) / kMarker).string(), manifest);
    install_report(tmp, dir);
    return summary;
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace lplab::experiments
