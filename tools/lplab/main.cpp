// lplab: the low-precision format laboratory's command-line tool.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "lplab/commands.h"
#include "lplab/experiments/golden.h"
#include "lplab/experiments/text.h"
#include "lplab/kernels/targets.h"

namespace {

// The error of a failed write to standard output, where it is known: checked_exit names it.
int g_stdout_errno = 0;

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
  if (std::fputs((text + "\n").c_str(), stdout) == EOF || std::fflush(stdout) != 0) g_stdout_errno = errno;
}

// NAME=VALUE arguments; a name given twice is an error.
std::map<std::string, std::string> parse_assignments(const std::vector<std::string>& args,
                                                     const char* where) {
  std::map<std::string, std::string> out;
  for (const std::string& a : args) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw lplab::experiments::UsageError(fmt::format("{} '{}': expected NAME=VALUE", where, a));
    if (!out.emplace(a.substr(0, eq), a.substr(eq + 1)).second)
      throw lplab::experiments::UsageError(fmt::format("{}: {} given twice", where, a.substr(0, eq)));
  }
  return out;
}

// Comma-separated items of repeated options; an empty item is an error
// (CLI11's own splitting would drop it silently).
std::vector<std::string> split_list(const std::vector<std::string>& args, const char* option) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    std::size_t from = 0;
    while (true) {
      const std::size_t comma = a.find(',', from);
      const std::string item = a.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      if (item.empty()) throw lplab::experiments::UsageError(fmt::format("{}: empty item in '{}'", option, a));
      out.push_back(item);
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
  }
  return out;
}

// A seed: a whole decimal number from 0 to 2^64 - 1, nothing else (CLI11
// clamps a larger one to 2^64 - 1).
std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    throw lplab::experiments::UsageError(
        fmt::format("--seed '{}': expected a whole number from 0 to 18446744073709551615", text));
  return v;
}

// Whatever a command printed must have reached its destination: a full disk
// (ENOSPC, /dev/full) or a closed descriptor is one line and a non-zero exit,
// never a silent 0. (A closed pipe ends the process by SIGPIPE first, as it
// does every command-line tool.) Status 1, or 3 for `lplab regress`, whose 1
// means a failed check.
int checked_exit(int status, bool regress) {
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return status;
  const int err = errno != 0 ? errno : g_stdout_errno;
  std::fprintf(stderr, "lplab: error: cannot write the output to standard output: %s\n",
               err != 0 ? std::strerror(err) : "write error");
  return regress ? 3 : (status == 0 ? 1 : status);
}

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  const bool regress = argc > 1 && std::string_view(argv[1]) == "regress";
  return checked_exit(run(argc, argv), regress);
}

namespace {

int run(int argc, char** argv) {
  using namespace lplab::tool;
  CLI::App app{"lplab: what low-precision number formats do to your numbers"};
  app.require_subcommand(0, 1);  // none only with --version (checked after parsing)
  bool version = false;
  app.add_flag("--version", version, "Print the version, the CPU and the SIMD target in use, and exit");
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
  std::optional<std::string> seed_text;
  inspect_cmd->add_option("value", value, "A number: 0.1, -1e-8, 0x1p-3, inf, -inf, nan");
  std::optional<std::string> code_text;
  inspect_cmd->add_option("--code", code_text,
                          "Decode this code instead of rounding a value (0x7e, 126, 0b01111110): its bits, "
                          "value and class in each --to format");
  inspect_cmd->add_option("--to", to, "Formats (default: all)");
  inspect_cmd->add_option("--round", round,
                          "nearest_even, nearest_away, toward_zero, upward, downward, stochastic");
  inspect_cmd->add_option("--seed", seed_text,
                          "With --round stochastic: show the result for this seed's random bits "
                          "(those of element 0 of a bulk conversion with the same seed)");
  inspect_cmd->add_option("--overflow", overflow, "ieee or saturate");
  inspect_cmd->add_option("--output", output, "table, csv or json");

  std::string values_name, values_order = "code";
  auto* values_cmd = app.add_subcommand("values", "Every code of a format of at most 16 bits: bits, value, class");
  values_cmd->add_option("format", values_name, "The format (fp16, bf16, e4m3, e2m1, ...)")->required();
  values_cmd->add_option("--order", values_order, "code (default) or value (ascending; NaNs last)");
  values_cmd->add_option("--output", output, "table, csv or json");

  std::string list_name;
  auto* list_cmd = app.add_subcommand("list", "The experiments, or one experiment's parameters");
  list_cmd->add_option("experiment", list_name, "An experiment (default: list them all)");
  list_cmd->add_option("--output", output, "table, csv or json");

  RunRequest request;
  std::vector<std::string> param_args;
  std::string out_file;
  auto* run_cmd = app.add_subcommand("run", "Run one experiment and print its tables");
  run_cmd->add_option("experiment", request.experiment, "The experiment (see 'lplab list')")->required();
  std::vector<std::string> dtype_args;  // split below: CLI11's delimiter drops empty items
  run_cmd->add_option("--dtypes", dtype_args, "Formats (fp16 bf16 e4m3 ..., comma or space separated)");
  run_cmd->add_option("--param", param_args, "NAME=VALUE (repeatable; see 'lplab list EXPERIMENT')");
  run_cmd->add_option("--input", request.input,
                      "Your values: a .npy file of float16, float32 or float64, or of raw ml_dtypes data "
                      "with --input-dtype");
  run_cmd->add_option("--input-dtype", request.input_dtype,
                      "The format of an --input file np.save wrote from an ml_dtypes array ('<V2', '|V1'): "
                      "bfloat16, float8_e4m3fn, float4_e2m1fn, ...");
  run_cmd->add_option("--shard", request.shard, "I/N: run part I (from 0) of N of the parameter grid");
  run_cmd->add_option("--threads", request.threads, "Worker threads (0: every core)")
      ->check([](const std::string& v) { return v.empty() ? std::string("an empty value is not a number") : std::string(); });
  run_cmd->add_option("--output", output, "table, csv or json (json is what 'lplab merge' reads)");
  run_cmd->add_option("--out", out_file, "Write to FILE (atomically) instead of stdout");

  std::vector<std::string> merge_files;
  auto* merge_cmd = app.add_subcommand("merge", "Join the JSON outputs of the shards of one run");
  merge_cmd->add_option("files", merge_files, "The shards' JSON files")->required();
  merge_cmd->add_option("--output", output, "table, csv or json");
  merge_cmd->add_option("--out", out_file, "Write to FILE (atomically) instead of stdout");

  std::vector<std::string> account_args;
  auto* account_cmd = app.add_subcommand(
      "account", "FLOPs, MFU and device-days: NAME=VALUE arguments (see 'lplab list accounting')");
  account_cmd->add_option("params", account_args, "NAME=VALUE ...");
  account_cmd->add_option("--output", output, "table, csv or json");

  std::string report_dir = "lplab-report";
  bool report_quick = false;
  auto* report_cmd = app.add_subcommand("report", "Run the default suite and write a report directory");
  report_cmd->add_option("--out", report_dir, "The report directory (default: lplab-report)");
  report_cmd->add_flag("--quick", report_quick, "Smaller sizes: a few seconds (the full report takes 8 to 15 s on a 2-core Zen 5)");

  std::string regress_spec, junit, baselines = LPLAB_REGRESSION_DIR;
  std::vector<std::string> regress_only;
  bool regress_update = false;
  auto* regress_cmd = app.add_subcommand(
      "regress", "Precision regression checks: lplab's own baselines, or the checks of a spec file");
  regress_cmd->add_option("spec", regress_spec,
                          "A YAML or JSON spec of checks (docs/regress.md); without one, lplab's own "
                          "baselines are recomputed and compared");
  regress_cmd->add_option("--junit", junit, "With a spec: also write JUnit XML to this file");
  regress_cmd->add_option("--output", output, "With a spec: table, csv or json");
  regress_cmd->add_flag("--update", regress_update,
                        "Rewrite lplab's own baselines with what this build computes");
  regress_cmd->add_option("--baselines", baselines,
                          "The baseline directory (default: the source tree's tests/regression)");
  regress_cmd->add_option("--only", regress_only,
                          fmt::format("Baseline suites to run: {}", fmt::join(golden_suites(), ", ")));

  const std::string first = argc > 1 ? argv[1] : "";
  // The command names, from the subcommands declared above.
  std::vector<std::string> commands;
  for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(c->get_name());
  if (!first.empty() && first[0] != '-' &&
      std::find(commands.begin(), commands.end(), first) == commands.end()) {
    std::fprintf(stderr, "lplab: error: unknown command '%s' (%s)\n", argv[1],
                 fmt::format("{}", fmt::join(commands, ", ")).c_str());
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
  // LPLAB_SIMD_TARGET is configuration: a bad value is one line and exit 2
  // in every command, whether or not the command reaches a kernel.
  lplab::kernels::SimdTarget target;
  try {
    target = lplab::kernels::current_simd_target();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "lplab: error: %s\n", e.what());
    return 2;
  }
  try {
    if (version) {
      print_stdout(fmt::format("lplab {}\nCPU: {}\nSIMD target: {}\ncores: {}\n", LPLAB_VERSION,
                               lplab::kernels::cpu_model(), target.name, std::thread::hardware_concurrency()));
      return 0;
    }
    if (app.get_subcommands().empty())
      throw UsageError(fmt::format("a command is required ({}; or --version, --help)", fmt::join(commands, ", ")));
    const Output out = parse_output(output);
    if (formats_cmd->parsed()) run_formats(out);
    if (finfo_cmd->parsed()) {
      if (all && !finfo_names.empty()) throw UsageError("give format names or --all, not both");
      run_finfo(resolve_formats(finfo_names), out);
    }
    if (inspect_cmd->parsed()) {
      if (!value.empty()) taken.insert(taken.begin(), value);
      if (code_text) {
        if (!taken.empty()) throw UsageError("give a value or --code, not both");
        run_decode(*code_text, resolve_formats(to), !to.empty(), out);
        return 0;
      }
      if (taken.empty()) throw UsageError("value is required (lplab inspect VALUE; -inf and -nan are fine)");
      if (taken.size() > 1) throw UsageError(fmt::format("one value at a time, got {}", fmt::join(taken, " ")));
      std::optional<std::uint64_t> seed;
      if (seed_text) seed = parse_seed(*seed_text);
      run_inspect(taken.front(), resolve_formats(to), round, overflow, seed, out);
    }
    if (values_cmd->parsed()) run_values(&resolve_format(values_name), values_order, out);
    if (list_cmd->parsed()) run_list(list_name, out);
    if (run_cmd->parsed()) {
      request.params = parse_assignments(param_args, "--param");
      request.dtypes = split_list(dtype_args, "--dtypes");
      run_run(request, out, out_file);
    }
    if (merge_cmd->parsed()) run_merge(merge_files, out, out_file);
    if (account_cmd->parsed()) run_account(parse_assignments(account_args, "account"), out);
    if (report_cmd->parsed()) {
      std::string command = "lplab";
      for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
      run_report(report_dir, report_quick, command);
    }
    if (regress_cmd->parsed()) {
      if (regress_spec.empty()) {
        if (!junit.empty()) throw UsageError("--junit needs a spec: lplab regress SPEC --junit FILE");
        if (regress_cmd->get_option("--output")->count() > 0)
          throw UsageError("--output goes with a spec; lplab's own baselines print a diff");
        return run_regress_golden(baselines, regress_update, regress_only);
      }
      if (regress_update) throw UsageError("--update rewrites lplab's own baselines; it takes no spec");
      if (!regress_only.empty()) throw UsageError("--only selects lplab's own suites; it takes no spec");
      if (regress_cmd->get_option("--baselines")->count() > 0)
        throw UsageError("--baselines is for lplab's own suites; it takes no spec");
      return run_regress_spec(regress_spec, junit, out);
    }
  } catch (const Interrupted&) {
    std::fprintf(stderr, "lplab: interrupted: nothing was written\n");
    return 130;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "lplab: error: %s\n", e.what());
    return 2;
  } catch (const std::system_error& e) {
    // fmt::print throws when standard output takes no more: checked_exit
    // says so in one line.
    if (std::ferror(stdout) != 0) {
      g_stdout_errno = e.code().value();
      return 1;
    }
    std::fprintf(stderr, "lplab: internal error: %s\n", e.what());
    return regress_cmd->parsed() ? 3 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lplab: internal error: %s\n", e.what());
    // `lplab regress` says 1 for a failed check: a broken tool must not look
    // like one to a CI job.
    return regress_cmd->parsed() ? 3 : 1;
  }
  return 0;
}

}  // namespace
