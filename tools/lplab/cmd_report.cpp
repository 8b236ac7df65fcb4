// lplab report: the default suite into a report directory.
#include <fmt/format.h>

#include "lplab/commands.h"
#include "lplab/lab/experiment.h"
#include "lplab/lab/files.h"
#include "lplab/report/report.h"
#if defined(LPLAB_HAVE_CUDA)
#include "lplab/cuda/roofline.h"
#endif

namespace lplab::tool {
namespace {

// Where there is a GPU, the report's GPU section measures it. (Outside the
// command's macro: a preprocessor directive inside macro arguments is not
// portable.)
std::function<std::optional<MeasuredGpu>()> gpu_measurement() {
#if defined(LPLAB_HAVE_CUDA)
  return []() -> std::optional<MeasuredGpu> {
    if (cuda::devices().empty()) return std::nullopt;
    const cuda::Roofline r = cuda::measure_roofline();
    MeasuredGpu g;
    g.device = fmt::format("{}, sm_{}{}, {} SMs", r.device.name, r.device.major, r.device.minor,
                           r.device.multiprocessors);
    for (const cuda::MeasuredRoof& roof : r.roofs)
      g.roofs.push_back({roof.dtype, roof.flops, r.copy_bytes_per_s,
                         roof.how + "; bandwidth: a 1 GiB device-to-device copy; CUDA events, median of 5"});
    return g;
  };
#else
  return {};
#endif
}

}  // namespace

LPLAB_COMMAND(Command{
    "report",
    "Run the default suite and write a report directory",
    {option("--out", "The report directory (default: lplab-report)"),
     flag("--quick", "Smaller sizes: a few seconds (the full report takes 8 to 15 s on a 2-core Zen 5)")},
    [](const Args& a) {
      Progress::install_interrupt_handler();
      ReportOptions o;
      o.dir = a.value("--out", "lplab-report");
      // A report is a directory: "" and "-" (standard output elsewhere) name none.
      if (a.given("--out") && (o.dir.empty() || o.dir == kStandardOutput))
        throw UsageError(fmt::format("--out '{}': a report is a directory of files; name the directory", o.dir));
      o.quick = a.given("--quick");
      o.command = "lplab";
      for (const std::string& word : a.command_line) o.command += " " + word;
      o.measure_gpu = gpu_measurement();
      const Table summary = write_report(o);
      fmt::print("{}\nwrote {}/index.html, {}/index.md, the plots and the data\n", to_text(summary), o.dir, o.dir);
      return 0;
    }});

}  // namespace lplab::tool
