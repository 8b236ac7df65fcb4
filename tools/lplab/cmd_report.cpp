// lplab report and lplab account.
#include <fmt/format.h>

#include "lplab/commands.h"
#include "lplab/experiments/report.h"

namespace lplab::tool {

void run_report(const std::string& dir, bool quick, const std::string& command) {
  Progress::install_interrupt_handler();
  ReportOptions o;
  o.dir = dir;
  o.quick = quick;
  o.command = command;
  const Table summary = write_report(o);
  fmt::print("{}\nwrote {}/index.html, {}/index.md, the plots and the data\n", to_text(summary), dir, dir);
}

void run_account(const std::map<std::string, std::string>& params, Output out) {
  RunRequest r;
  r.experiment = "accounting";
  r.params = params;
  run_run(r, out, "");
}

}  // namespace lplab::tool
