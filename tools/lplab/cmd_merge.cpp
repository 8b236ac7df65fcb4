// lplab merge FILE...: joins the JSON outputs of the shards of one run.
#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/lab/files.h"
#include "lplab/experiments/runner.h"

namespace lplab::tool {
namespace {

// A shard's JSON is read whole and parsed in memory (several times its size).
constexpr std::uintmax_t kMaxShardBytes = std::uintmax_t{1} << 30;

void run_merge(const std::vector<std::string>& files, Output out, const std::string& out_file) {
  std::vector<nlohmann::ordered_json> records;
  for (const std::string& f : files) {
    // Regular files only, each refused with its real cause (no such file, a
    // directory, a device such as /dev/urandom that would read forever).
    const std::string text = read_input_file(f, "a shard's JSON file", kMaxShardBytes);
    try {
      records.push_back(nlohmann::ordered_json::parse(text));
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
                       option("--out", "Write to FILE (atomically; - is stdout) instead of stdout; a .json or .csv name sets --output")},
                      [](const Args& a) {
                        const Output out = output_of(a);
                        run_merge(a.values("files"), out, output_file(a, "--out", a.values("files")));
                        return 0;
                      }});

}  // namespace lplab::tool
