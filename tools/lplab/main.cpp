// lplab: the low-precision format laboratory's command-line tool.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "lplab/commands.h"
#include "lplab/text.h"

namespace {

// CLI11 takes "-inf" and "-nan" for options (it knows "-3" is a number), and a
// value after "--" goes to the top-level command, not to `inspect`: the value
// of `inspect` is therefore taken out of the arguments before CLI11 sees them.
bool negative_special(std::string_view s) {
  if (s.size() < 4 || s[0] != '-') return false;
  std::string t;
  for (char c : s.substr(1)) t += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return t == "inf" || t == "infinity" || t == "nan" || (t.starts_with("nan(") && t.ends_with(")"));
}

// CLI11's help text ends with a blank line; print it ending with one newline.
void print_help(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::fputs((text + "\n").c_str(), stdout);
}

}  // namespace

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
  std::optional<std::uint64_t> seed;
  inspect_cmd->add_option("value", value, "A number: 0.1, -1e-8, 0x1p-3, inf, -inf, nan");
  inspect_cmd->add_option("--to", to, "Formats (default: all)");
  inspect_cmd->add_option("--round", round,
                          "nearest_even, nearest_away, toward_zero, upward, downward, stochastic");
  inspect_cmd->add_option("--seed", seed,
                          "With --round stochastic: show the result for this seed's random bits "
                          "(those of element 0 of a bulk conversion with the same seed)");
  inspect_cmd->add_option("--overflow", overflow, "ieee or saturate");
  inspect_cmd->add_option("--output", output, "table, csv or json");

  const std::string first = argc > 1 ? argv[1] : "";
  if (!first.empty() && first[0] != '-' && first != "formats" && first != "finfo" &&
      first != "inspect") {
    std::fprintf(stderr, "lplab: error: unknown command '%s' (formats, finfo, inspect)\n", argv[1]);
    return 2;
  }
  // Take the value of `inspect` out when CLI11 would misread it (see above).
  std::vector<char*> args(argv, argv + argc);
  std::vector<std::string> taken;
  if (first == "inspect") {
    std::vector<char*> kept(args.begin(), args.begin() + 2);
    for (std::size_t i = 2; i < args.size(); ++i) {
      const std::string_view a = args[i];
      const std::string_view prev = args[i - 1];
      const bool is_option_value = prev.starts_with("--") && prev.find('=') == std::string_view::npos;
      if (a == "--") {
        for (std::size_t j = i + 1; j < args.size(); ++j) taken.emplace_back(args[j]);
        break;
      }
      if (negative_special(a) && !is_option_value) taken.emplace_back(a);
      else kept.push_back(args[i]);
    }
    args = kept;
  }
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::CallForHelp&) {
    print_help(app.help());  // the selected subcommand's help, if one was named
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    print_help(app.help("", CLI::AppFormatMode::All));
    return 0;
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
    if (inspect_cmd->parsed()) {
      if (!value.empty()) taken.insert(taken.begin(), value);
      if (taken.empty()) throw UsageError("value is required (lplab inspect VALUE; -inf and -nan are fine)");
      if (taken.size() > 1) throw UsageError(fmt::format("one value at a time, got {}", fmt::join(taken, " ")));
      run_inspect(taken.front(), resolve_formats(to), round, overflow, seed, out);
    }
  } catch (const UsageError& e) {
    std::fprintf(stderr, "lplab: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lplab: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
