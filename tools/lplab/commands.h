// The tool's subcommands. Each writes its result to stdout and throws
// UsageError for bad input.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
// The same rows as CSV (RFC 4180 quoting: csv_line).
std::string render_csv(const std::vector<std::vector<std::string>>& rows);

// Writes `text` to standard output and flushes it; a failed write throws
// std::system_error with its errno (main reports it in one line).
void print_stdout(const std::string& text);

// A code in hex, as many digits as the format's bits need (0x7e, 0x3f80).
std::string code_hex(const FormatEntry* e, std::uint64_t c);
// A code's value for JSON: a number when finite, else its text (inf, nan).
nlohmann::ordered_json value_json(const FormatEntry* e, std::uint64_t c);
// nan, infinity, zero, subnormal or normal.
std::string code_class(const FormatEntry* e, std::uint64_t c);

void run_formats(Output out);
void run_finfo(const std::vector<const FormatEntry*>& fs, Output out);
// inspect --code: the bits, value and class of one code in each format.
// Without formats named (`named` false), the formats the code fits.
void run_decode(const std::string& code, std::vector<const FormatEntry*> fs, bool named, Output out);
// `lplab values FORMAT`: every code of a format of at most 16 bits with its
// bits, value and class, in code order or (order "value") ascending value.
void run_values(const FormatEntry* e, const std::string& order, Output out);
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

// `lplab regress` without a spec: lplab's own golden baselines in `dir`
// (default: the source tree's tests/regression). Prints a readable diff of
// every changed field; with `update`, rewrites the baselines instead. Returns
// the exit status: 0 when nothing changed (or after an update), 1 otherwise.
int run_regress_golden(const std::string& dir, bool update, const std::vector<std::string>& only);
// `lplab regress SPEC`: the user's checks from a YAML or JSON spec. Prints one
// pass/fail line per check (measured value beside the limit); with a non-empty
// `junit_path`, also writes JUnit XML there. Returns 0 when every check passed,
// 1 when one failed; a bad spec or input throws UsageError (exit 2) before any
// check runs.
int run_regress_spec(const std::string& spec_path, const std::string& junit_path, Output out);

}  // namespace lplab::tool
