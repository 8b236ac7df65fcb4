// The tool's commands. Each is one file, cmd_NAME.cpp, that declares the
// command as data -- its name, one line of help, its arguments -- and what it
// does, and registers itself (LPLAB_COMMAND). main.cpp knows no command by
// name: it declares every registered command to CLI11, parses, and runs the
// one named. Adding a command is adding its file (tools/CMakeLists.txt
// compiles every cmd_*.cpp).
//
// Commands write their result to stdout and throw UsageError for bad input
// (one line, exit 2), before any work where the input can be checked first.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lplab/runtime/formats.h"
#include "lplab/runtime/text.h"

namespace lplab::experiments {
struct RunRequest;  // runner.h: what the files that run experiments include
}  // namespace lplab::experiments

namespace lplab::tool {

using namespace lplab::experiments;
using namespace lplab::runtime;

// One argument of a command. CLI11 parses it (main.cpp); the command reads the
// text it was given from Args.
struct Arg {
  enum class Kind {
    positional,  // `name` without dashes: lplab inspect VALUE
    option,      // --name VALUE
    flag,        // --name
  };
  Kind kind;
  std::string name;  // "value", "--to", "--quick"
  std::string help;
  bool required = false;
  bool repeatable = false;  // takes several values (an option given again adds to them)
};
inline Arg positional(std::string name, std::string help, bool required = false, bool repeatable = false) {
  return {Arg::Kind::positional, std::move(name), std::move(help), required, repeatable};
}
inline Arg option(std::string name, std::string help, bool repeatable = false) {
  return {Arg::Kind::option, std::move(name), std::move(help), false, repeatable};
}
inline Arg flag(std::string name, std::string help) {
  return {Arg::Kind::flag, std::move(name), std::move(help), false, false};
}
// --output, which most commands take.
inline Arg output_option(std::string help = "table, csv or json") { return option("--output", std::move(help)); }

// What the command line gave a command.
class Args {
 public:
  // Whether the argument was given (a flag: set).
  bool given(const std::string& name) const { return values_.count(name) != 0; }
  // Its value, or `fallback` when it was not given.
  std::string value(const std::string& name, const std::string& fallback = "") const;
  std::optional<std::string> optional_value(const std::string& name) const;
  // Every value of a repeatable argument (none: empty).
  std::vector<std::string> values(const std::string& name) const;

  void set(const std::string& name, std::vector<std::string> v) { values_[name] = std::move(v); }

  std::vector<std::string> command_line;  // as typed: lplab report records it
  std::vector<std::string> taken;         // values a command's take_values took out (inspect)

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

struct Command {
  std::string name;
  std::string help;
  std::vector<Arg> args;
  std::function<int(const Args&)> run;  // the exit status
  // The exit status of an internal error or a failed write: `lplab regress`
  // says 3, since its 1 means a failed check.
  int internal_error_status = 1;
  // Takes values out of the arguments (from the command's name on) before
  // CLI11 sees them, for values CLI11 would misread (inspect's -inf).
  std::function<std::vector<std::string>(std::vector<std::string>& args)> take_values = {};
};

// Registers a command; returns true (for LPLAB_COMMAND's static initialiser).
bool register_command(Command c);
// Every registered command, by name.
const std::vector<Command>& registered_commands();

#define LPLAB_COMMAND_CONCAT2(a, b) a##b
#define LPLAB_COMMAND_CONCAT(a, b) LPLAB_COMMAND_CONCAT2(a, b)
// At namespace scope in cmd_NAME.cpp: LPLAB_COMMAND(Command{...});
#define LPLAB_COMMAND(...)                                                             \
  [[maybe_unused]] static const bool LPLAB_COMMAND_CONCAT(lplab_command_, __COUNTER__) = \
      ::lplab::tool::register_command(__VA_ARGS__)

// --- Shared by the commands ---

enum class Output { table, csv, json };
// The --output value; without one, the format --out's name asks for (.json,
// .csv), else table. A .json or .csv --out with another --output is refused.
Output output_of(const Args& a);
// The file `option` names ("" when it was not given: standard output; "-"
// is standard output too), checked before any work by check_output_file
// (files.h) against every input of the run. An empty name, and a name that
// says another kind of file (.npy, .yaml; for --junit anything but XML),
// are refused.
std::string output_file(const Args& a, const std::string& option, const std::vector<std::string>& inputs = {});

// Resolves names to formats; an empty list means every format.
std::vector<const FormatEntry*> resolve_formats(const std::vector<std::string>& names);

// Comma-separated items of a repeatable option; an empty item is an error.
std::vector<std::string> split_list(const std::vector<std::string>& args, const char* option);
// NAME=VALUE arguments; a name given twice is an error.
std::map<std::string, std::string> parse_assignments(const std::vector<std::string>& args, const char* where);

// The tool's text tables: left-aligned columns, a rule under the header row
// (experiments::aligned_text, the table writers' aligner). Their CSV is
// experiments::csv_text.
std::string render_table(const std::vector<std::vector<std::string>>& rows);

// Writes `text` to standard output and flushes it; a failed write throws
// std::system_error with its errno (main reports it in one line).
void print_stdout(const std::string& text);
// Prints (or writes to `out_file`, atomically; "-" or "": standard output) the document.
void emit(const std::string& text, const std::string& out_file);

// A code in hex, as many digits as `bits` need (0x7e, 0x3f80).
std::string code_hex(std::uint64_t c, int bits);
std::string code_hex(const FormatEntry* e, std::uint64_t c);
// A code's value for JSON: a number when finite, else its text (inf, nan).
nlohmann::ordered_json value_json(const FormatEntry* e, std::uint64_t c);
// nan, infinity, zero, subnormal or normal.
std::string code_class(const FormatEntry* e, std::uint64_t c);

// A run record (runner.h) as JSON, a text table or CSV.
std::string render_record(const nlohmann::ordered_json& record, Output out);
// `lplab run`'s work, which `lplab account` shares: validates everything,
// runs, then prints (or writes `out_file` atomically) the tables.
void run_experiment(const RunRequest& request, Output out, const std::string& out_file);

}  // namespace lplab::tool
