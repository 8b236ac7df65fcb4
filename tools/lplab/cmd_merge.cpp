// lplab merge FILE...: joins the JSON outputs of the shards of one run.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lplab/commands.h"
#include "lplab/experiments/runner.h"

namespace lplab::tool {
namespace {

void run_merge(const std::vector<std::string>& files, Output out, const std::string& out_file) {
  if (!out_file.empty()) check_output_file("--out", out_file);
  std::vector<nlohmann::ordered_json> records;
  for (const std::string& f : files) {
    std::ifstream in(f);
    if (!in) throw UsageError(fmt::format("{}: cannot open it", f));
    std::stringstream ss;
    ss << in.rdbuf();
    try {
      records.push_back(nlohmann::ordered_json::parse(ss.str()));
    } catch (const nlohmann::json::parse_error& e) {
      throw UsageError(fmt::format("{}: not JSON (byte {})", f, e.byte));
    }
  }
  emit(render_record(merge_records(records, files), out), out_file);
}

}  // namespace

LPLAB_COMMAND(Command{"merge",
                      "Join the JSON outputs of the shards of one run",
                      {positional("files", "The shards' JSON files", true, true), output_option(),
                       option("--out", "Write to FILE (atomically) instead of stdout")},
                      [](const Args& a) {
                        const Output out = output_of(a);
                        run_merge(a.values("files"), out, a.value("--out"));
                        return 0;
                      }});

}  // namespace lplab::tool
