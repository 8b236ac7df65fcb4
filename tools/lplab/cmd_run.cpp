// lplab run EXPERIMENT: one experiment's tables, every input checked before
// any work.
#include <fmt/format.h>

#include <charconv>

#include "lplab/commands.h"
#include "lplab/experiments/runner.h"

namespace lplab::tool {

void run_experiment(const RunRequest& request, Output out, const std::string& out_file) {
  const PreparedRun run = prepare(request);  // every check before any work (the output's: output_file)
  Progress::install_interrupt_handler();
  Progress progress(run.experiment->name);
  const RunResult r = execute(run, progress);
  emit(render_record(run_record(r), out), out_file);
}

namespace {

// --threads: a whole number; how many the machine allows is the runner's
// check (prepare).
unsigned parse_threads(const std::string& text) {
  if (text.empty()) throw UsageError("--threads: an empty value is not a number");
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw UsageError(fmt::format("--threads '{}': expected a whole number (0: every core)", text));
  return v;
}

int run_command(const Args& a) {
  const Output out = output_of(a);
  RunRequest request;
  request.experiment = a.value("experiment");
  request.input = a.value("--input");
  request.input_dtype = a.value("--input-dtype");
  request.shard = a.value("--shard", request.shard);
  if (const auto t = a.optional_value("--threads")) request.threads = parse_threads(*t);
  request.params = parse_assignments(a.values("--param"), "--param");
  request.dtypes = split_list(a.values("--dtypes"), "--dtypes");
  run_experiment(request, out, output_file(a, "--out", {request.input}));
  return 0;
}

}  // namespace

LPLAB_COMMAND(Command{
    "run",
    "Run one experiment and print its tables",
    {positional("experiment", "The experiment (see 'lplab list')", true),
     option("--dtypes", "Formats (fp16 bf16 e4m3 ..., comma or space separated)", true),
     option("--param", "NAME=VALUE (repeatable; see 'lplab list EXPERIMENT')", true),
     option("--input", "Your values: a .npy file of float16, float32 or float64, or of raw ml_dtypes data "
                       "with --input-dtype"),
     option("--input-dtype", "The format of an --input file np.save wrote from an ml_dtypes array ('<V2', '|V1'): "
                             "bfloat16, float8_e4m3fn, float4_e2m1fn, ..."),
     option("--shard", "I/N: run part I (from 0) of N of the parameter grid"),
     option("--threads", "Worker threads (0: every core)"),
     output_option("table, csv or json (json is what 'lplab merge' reads)"),
     option("--out", "Write to FILE (atomically; - is stdout) instead of stdout; a .json or .csv name sets --output")},
    run_command});

}  // namespace lplab::tool
