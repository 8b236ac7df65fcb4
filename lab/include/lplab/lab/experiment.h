// The experiment registry: each experiment declares its parameters, runs
// on a validated Context and returns typed tables.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/lab/vocabulary.h"
#include "lplab/lab/plot.h"
#include "lplab/lab/table.h"

namespace lplab::experiments {

class Headlines;  // report_parts.h

// ---------------------------------------------------------------------------
// Parameters.

enum class ParamType { integer, real, text, list };

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::integer;
  std::string default_value;  // as the user would write it
  // integer and real: the valid closed range; list: the range of each item
  // when the items are numbers (items_numeric).
  double min = 0, max = 0;
  std::string help;
  // text and list: the allowed words (empty: anything).
  std::vector<std::string> choices;
  bool items_numeric = false;  // list of numbers ("64,128,4096")
};

// Parsed parameter values. Every name an experiment asks for was declared,
// parsed and range-checked before the run started.
class Params {
 public:
  Params() = default;
  // Validates `given` (name -> text) against `specs`; throws UsageError
  // naming the parameter for an unknown name, a malformed value or one out
  // of range.
  Params(const std::vector<ParamSpec>& specs, const std::map<std::string, std::string>& given,
         std::string_view experiment);

  std::int64_t integer(std::string_view name) const;
  double real(std::string_view name) const;
  const std::string& text(std::string_view name) const;
  std::vector<std::string> list(std::string_view name) const;
  // A numeric list, each item the double nearest it: for quantities that
  // are doubles (sigmas, sizes).
  std::vector<double> numbers(std::string_view name) const;
  // A numeric list, each item exactly as written (parse_value): for values
  // that are rounded into a format, once (a double would round them twice).
  std::vector<Decimal> decimals(std::string_view name) const;
  // name=value for every parameter, in declaration order (for headers and merge).
  const std::vector<std::pair<std::string, std::string>>& all() const { return values_; }

 private:
  const std::string& raw(std::string_view name) const;
  std::vector<std::pair<std::string, std::string>> values_;
};

// ---------------------------------------------------------------------------
// Running.

// Part I of N of a parameter grid (`--shard I/N`, I from 0): grid point g
// belongs to shard g mod N. Shards share nothing; `lplab merge` joins them.
struct Shard {
  std::uint32_t index = 0, count = 1;
  bool owns(std::uint64_t grid) const { return grid % count == index; }
};

// Thrown by Progress when the user interrupted the run (Ctrl-C).
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

// Progress of a long run, on stderr when stderr is a terminal. Also the
// point where a run notices Ctrl-C: step() throws Interrupted.
class Progress {
 public:
  explicit Progress(std::string label = {});
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void set_total(std::uint64_t steps);
  void step(std::uint64_t n = 1);  // may throw Interrupted
  void finish();                   // clears the line
  static void install_interrupt_handler();  // SIGINT sets the flag step() reads
  static bool interrupted();
  // Clears the flag: for a process that goes on after an interrupted run
  // (the Python package, whose next call must not stop at once).
  static void clear_interrupt();
  // Where stderr is not a terminal (a CI log, a pipe), a line every
  // `seconds` on stderr while a Progress lives ("lplab: regress: checks:
  // 40% after 30 s"), so that long work is never silent; 0 (the default:
  // the Python package) prints none. The tool sets it (main.cpp).
  static void set_heartbeat(unsigned seconds);

 private:
  struct Heartbeat;
  std::string label_;
  std::atomic<std::uint64_t> total_{0}, done_{0};
  double last_draw_ = 0;
  bool tty_ = false;
  std::unique_ptr<Heartbeat> heartbeat_;
};

struct Context {
  const Params& params;
  // The dtypes to run (--dtypes, else the experiment's defaults).
  std::vector<const FormatEntry*> dtypes;
  // Values from --input FILE.npy (as double), or empty when none was given.
  std::span<const double> input;
  std::string input_name;  // the file name, for notes
  Shard shard;
  Progress& progress;
  unsigned threads = 0;  // worker threads (0: every core)
};

struct Experiment {
  std::string name;
  std::string summary;  // one line for `lplab list`
  std::vector<ParamSpec> params;
  // Formats run when --dtypes is not given; empty: the experiment takes no dtypes.
  std::vector<std::string> default_dtypes;
  bool takes_input = false;  // accepts --input FILE.npy
  // The parameters `lplab report` uses (name -> value), small enough for the
  // whole report to take under two minutes on two cores.
  std::map<std::string, std::string> report_params;
  std::function<std::vector<Table>(const Context&)> run;
  // Overrides on top of report_params for `lplab report --quick` (the
  // end-to-end test of the report, also run under the sanitizers).
  std::map<std::string, std::string> quick_params;
  // Notes read off several rows of the whole grid (a figure quoted from two
  // rows, say): applied after an unsharded run and after `lplab merge`, never
  // to one shard, so that a merged run says exactly what the whole run says.
  std::function<void(std::vector<Table>&)> summarize = {};
  // Takes formats declared by their layout in --dtypes ("e3m3",
  // "e4m3:bias=11:fnuz"; formats/declared.h): its tables convert through the
  // scalar core where no kernel is compiled for the format.
  bool takes_declared_formats = false;
  // Where `lplab list` and the report show it, ascending (ties by name):
  // what a format is and costs (10s), what it does to values (20s, 30s),
  // to computations (40s, 50s), their cost (60s), speed on this machine (70s, 80s).
  int place = 100;
  // The report's plots of its tables (report_parts.h: add_plot keeps those
  // with points) and its headline figures for the report's summary.
  std::function<std::vector<Plot>(const std::vector<Table>&)> plots = {};
  std::function<void(const std::vector<Table>&, Headlines&)> headlines = {};
  // lplab's own baselines (`lplab regress`, suite "experiments"): a pinned
  // experiment is deterministic and run there at its quick sizes, every cell
  // compared. `tolerance(table id, a row's text cells)` is the relative
  // tolerance of that row's real cells (0: bit for bit) where a result
  // depends on the SIMD target's summation order or vector math, measured
  // across the AVX3, AVX2, SSE4 and scalar targets.
  struct Regression {
    bool pinned = false;
    std::function<double(std::string_view table, const std::vector<std::string>& row)> tolerance = {};
  };
  Regression regression = {};
};

// Every experiment, in the order `lplab list` and the report show them.
const std::vector<Experiment>& experiments();
// nullptr when there is none of that name.
const Experiment* find_experiment(std::string_view name);

// The experiment of every file experiments/each/NAME.cpp (NAME_experiment()),
// in the files' order: a list the build generates from the folder.
std::vector<Experiment> experiment_files();

}  // namespace lplab::experiments
