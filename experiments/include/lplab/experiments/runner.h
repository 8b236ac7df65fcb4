// Running an experiment from the tool's arguments, and the documents a run
// produces: the run's record (experiment, parameters, dtypes, shard, machine,
// tables) is what `--output json` prints and what `lplab merge` joins.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lplab/lab/experiment.h"
#include "lplab/lab/files.h"

namespace lplab::experiments {

struct RunRequest {
  std::string experiment;
  std::vector<std::string> dtypes;            // empty: the experiment's defaults
  std::map<std::string, std::string> params;  // name -> text
  std::string input;                          // a .npy file, or empty
  std::string input_dtype;                    // the format of raw (ml_dtypes) .npy data, or empty
  std::string shard = "0/1";                  // I/N
  unsigned threads = 0;
};

// The machine a run is on: CPU model, cores, the SIMD target in use.
struct Machine {
  std::string cpu_model;
  unsigned cores = 0;
  std::string simd_target;
  std::uint64_t memory_bytes = 0;
};
Machine this_machine();

// A validated run: everything is checked (experiment, dtypes, parameters,
// shard, input file) before any work; throws UsageError with one line.
struct PreparedRun {
  const Experiment* experiment = nullptr;
  Params params;
  std::vector<const FormatEntry*> dtypes;
  std::vector<double> input;
  std::string input_name;
  std::string input_dtype;  // the file's: float16/32/64 or the raw data's format
  std::string input_hash;  // FNV-1a of the values' bits
  Shard shard;
  unsigned threads = 0;
};
PreparedRun prepare(const RunRequest& request);

struct RunResult {
  const PreparedRun* run = nullptr;
  std::vector<Table> tables;
  double seconds = 0;
};
RunResult execute(const PreparedRun& run, Progress& progress);

// "I/N" with 0 <= I < N <= 100000; throws UsageError.
Shard parse_shard(const std::string& text);

// The run's record, as `--output json` writes it.
nlohmann::ordered_json run_record(const RunResult& r);
// Joins the records of the N shards of one run (each exactly once, same
// experiment, parameters, dtypes and input, the same lplab version, every
// table of the run with its rows, a whole-number shard index and count)
// into the record of the whole run: each table's rows in grid order. Every
// shard is validated before any is joined. Throws UsageError naming the file
// (by its index in `names`) and the mismatch.
nlohmann::ordered_json merge_records(const std::vector<nlohmann::ordered_json>& records,
                                     const std::vector<std::string>& names);
std::vector<Table> tables_of(const nlohmann::ordered_json& record);

// Text: every table, one after another; CSV: each table after a "# id" line
// (pandas: read_csv(..., comment='#') per block), or one table alone when
// there is only one.
std::string render_text(const std::vector<Table>& tables);
std::string render_csv(const std::vector<Table>& tables);

// write_file_atomic and check_output_file: files.h.

// Refuses a run that would need more than the machine's memory.
void require_memory(double bytes, const std::string& what);

}  // namespace lplab::experiments
