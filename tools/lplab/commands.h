// The tool's subcommands. Each writes its result to stdout and throws
// UsageError for bad input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lplab/registry.h"

namespace lplab::tool {

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

}  // namespace lplab::tool
