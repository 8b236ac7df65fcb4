// `lplab report`: the default suite on this machine, written as a report
// directory -- index.html and index.md (the same content, each with a
// contents list; the plots shown from plots/, tables of more than 40 rows
// summarised and linked), the plots (SVG, PNG and their gnuplot scripts,
// which redraw them when run from the report's folder) and every table as
// CSV and JSON in data/.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lplab/lab/plot.h"
#include "lplab/lab/table.h"

namespace lplab::experiments {

// A GPU's roofs measured in this run (the tool fills it through the CUDA
// backend's measure_roofline where a GPU is present).
struct MeasuredGpu {
  std::string device;  // "NVIDIA H100 80GB HBM3, sm_90, 132 SMs"
  struct Roof {
    std::string dtype;  // "bf16", "fp8 e4m3", "fp32"
    double flops;       // the GEMM's FLOP/s
    double bandwidth;   // a device-to-device copy's bytes/s (read + written)
    std::string how;    // "cuBLASLt 8192^3 GEMM; 1 GiB cudaMemcpy D2D, CUDA events"
  };
  std::vector<Roof> roofs;
};

struct ReportOptions {
  std::string dir = "lplab-report";
  bool quick = false;    // each experiment's quick_params: seconds, for tests
  std::string command;   // the command line, for the header
  unsigned threads = 0;  // 0: every core
  bool progress = true;  // one line per experiment on stderr
  // Measures this machine's GPU, or returns nothing (no GPU, no CUDA backend):
  // the report's GPU section then shows the measured roofs beside the spec sheets.
  std::function<std::optional<MeasuredGpu>()> measure_gpu;
};

// Runs the suite and writes the directory: into a temporary directory beside
// it (DIR.tmpPID, marked as lplab's from the start), renamed into place only
// when complete (an interrupted run leaves the previous report untouched).
// First removes what killed runs left (remove_stale_report_folders). Throws
// UsageError when `dir` exists and is not an lplab report, or cannot be
// written. Returns the summary table.
Table write_report(const ReportOptions& options);

// Clears what runs killed outright (SIGKILL, a power cut) left beside `dir`,
// touching only folders it can prove are a report run's own: named DIR.tmpPID
// or DIR.oldPID, PID no running process, a directory of this user (not a
// symbolic link) holding lplab's marker file. DIR.tmpPID is removed. DIR.oldPID
// is the previous report, moved aside just before the new one took its
// place: it goes back to DIR when DIR is missing (the run died between the
// two renames), and is removed otherwise.
void remove_stale_report_folders(const std::string& dir);

// Checks, before any work, that `dir` can take a report: a new path in a
// writable directory, or a report lplab wrote that holds nothing else (its
// marker lists the files it wrote). Throws UsageError naming what is wrong,
// e.g. the files in it that lplab did not write.
void check_report_dir(const std::string& dir);

// The plots of the report, drawn from the experiments' tables, each through
// make_readable (plot.h): no series hidden under another without a word, no
// point off a log axis uncounted.
std::vector<Plot> report_plots(const std::vector<Table>& tables);
// The report's summary: one row per headline figure, with where it comes from.
Table report_summary(const std::vector<Table>& tables);

}  // namespace lplab::experiments
