// lplab report: the default suite into a report directory.
#include <fmt/format.h>

#include "lplab/commands.h"
#include "lplab/experiments/experiment.h"
#include "lplab/experiments/report.h"

namespace lplab::tool {

LPLAB_COMMAND(Command{
    "report",
    "Run the default suite and write a report directory",
    {option("--out", "The report directory (default: lplab-report)"),
     flag("--quick", "Smaller sizes: a few seconds (the full report takes 8 to 15 s on a 2-core Zen 5)")},
    [](const Args& a) {
      Progress::install_interrupt_handler();
      ReportOptions o;
      o.dir = a.value("--out", "lplab-report");
      o.quick = a.given("--quick");
      o.command = "lplab";
      for (const std::string& word : a.command_line) o.command += " " + word;
      const Table summary = write_report(o);
      fmt::print("{}\nwrote {}/index.html, {}/index.md, the plots and the data\n", to_text(summary), o.dir, o.dir);
      return 0;
    }});

}  // namespace lplab::tool
