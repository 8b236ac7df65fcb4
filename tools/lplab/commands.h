// The tool's subcommands. Each writes its result to stdout and throws
// UsageError for bad input.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lplab/experiments/format_registry.h"
#include "lplab/experiments/runner.h"

namespace lplab::tool {

using namespace lplab::experiments;

enum class Output { table, csv, json };
Output parse_output(const std::string& s);

// Resolves names to formats; an empty list means every format.
std::vector<const FormatEntry*> resolve_formats(const std::vector<std::string>& names);

// Left-aligned text table with a header row.
std::string render_table(const std::vector<std::vector<std::string>>& rows);

void run_formats(Output out);
void run_finfo(const std::vector<const FormatEntry*>& fs, Output out);
void run_inspect(const std::string& value, const std::vector<const FormatEntry*>& fs,
                 const std::string& round, const std::string& overflow,
                 std::optional<std::uint64_t> seed, Output out);

// `lplab list [EXPERIMENT]`: the experiments, or one experiment's parameters.
void run_list(const std::string& name, Output out);
// `lplab run`: validates everything, runs, then prints (or writes --out
// atomically) the tables.
void run_run(const RunRequest& request, Output out, const std::string& out_file);
// `lplab merge FILE...`: joins the JSON outputs of the shards of one run.
void run_merge(const std::vector<std::string>& files, Output out, const std::string& out_file);
// `lplab account`: the accounting experiment with its parameters given as options.
void run_account(const std::map<std::string, std::string>& params, Output out);
// `lplab report`: the default suite into a report directory.
void run_report(const std::string& dir, bool quick, const std::string& command);

}  // namespace lplab::tool
