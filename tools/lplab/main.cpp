// lplab: the low-precision format laboratory's command-line tool.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>

#include "lplab/commands.h"
#include "lplab/text.h"

int main(int argc, char** argv) {
  using namespace lplab::tool;
  CLI::App app{"lplab: what low-precision number formats do to your numbers"};
  app.require_subcommand(1);
  std::string output = "table";

  auto* formats_cmd = app.add_subcommand("formats", "List the known formats");
  formats_cmd->add_option("--output", output, "table, csv or json");

  std::vector<std::string> finfo_names;
  bool all = false;
  auto* finfo_cmd = app.add_subcommand("finfo", "Format constants: torch.finfo, numpy finfo and more");
  finfo_cmd->add_option("formats", finfo_names, "Formats (default: all)");
  finfo_cmd->add_flag("--all", all, "Every format");
  finfo_cmd->add_option("--output", output, "table, csv or json");

  std::string value;
  std::vector<std::string> to;
  std::string round = "nearest_even", overflow = "ieee";
  auto* inspect_cmd = app.add_subcommand("inspect", "Round a value into formats and show the bits and errors");
  inspect_cmd->add_option("value", value, "A number: 0.1, 1e-8, 0x1p-3, inf, nan")->required();
  inspect_cmd->add_option("--to", to, "Formats (default: all)");
  inspect_cmd->add_option("--round", round,
                          "nearest_even, nearest_away, toward_zero, upward, downward");
  inspect_cmd->add_option("--overflow", overflow, "ieee or saturate");
  inspect_cmd->add_option("--output", output, "table, csv or json");

  const std::string first = argc > 1 ? argv[1] : "";
  if (!first.empty() && first[0] != '-' && first != "formats" && first != "finfo" &&
      first != "inspect") {
    std::fprintf(stderr, "lplab: error: unknown command '%s' (formats, finfo, inspect)\n", argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "lplab: error: %s\n", e.what());
    return 2;
  }
  try {
    const Output out = parse_output(output);
    if (formats_cmd->parsed()) run_formats(out);
    if (finfo_cmd->parsed()) {
      if (all && !finfo_names.empty()) throw UsageError("give format names or --all, not both");
      run_finfo(resolve_formats(finfo_names), out);
    }
    if (inspect_cmd->parsed()) run_inspect(value, resolve_formats(to), round, overflow, out);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "lplab: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lplab: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
