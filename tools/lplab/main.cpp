// lplab: the low-precision format laboratory's command-line tool. This file
// knows no command by name: each registers itself from its own cmd_NAME.cpp
// (commands.h), and main declares them to CLI11, parses, runs the one named
// and turns what it threw into one line and an exit status.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <new>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "lplab/commands.h"
#include "lplab/lab/experiment.h"
#include "lplab/lab/files.h"
#include "lplab/kernels/targets.h"

namespace {

using lplab::tool::Arg;
using lplab::tool::Args;
using lplab::tool::Command;

// The error of a failed write to standard output, where it is known: checked_exit names it.
int g_stdout_errno = 0;

// CLI11's help text ends with a blank line; print it ending with one newline.
void print_help(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (std::fputs((text + "\n").c_str(), stdout) == EOF || std::fflush(stdout) != 0) g_stdout_errno = errno;
}

// Whatever a command printed must have reached its destination: a full disk
// (ENOSPC, /dev/full) or a closed descriptor is one line and a non-zero exit,
// never a silent 0. (A closed pipe ends the process by SIGPIPE first, as it
// does every command-line tool.) The status is the command's for an internal
// error where it has its own (regress: 3, its 1 means a failed check), else
// 1 -- or the command's own status when that is already an error.
int checked_exit(int status, int internal_error_status) {
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return status;
  const int err = errno != 0 ? errno : g_stdout_errno;
  std::fprintf(stderr, "lplab: error: cannot write the output to standard output: %s\n",
               err != 0 ? std::strerror(err) : "write error");
  if (internal_error_status != 1) return internal_error_status;
  return status == 0 ? 1 : status;
}

// One command's arguments declared to CLI11, and their text read back after
// parsing: each argument binds to its own slot (a flag to a bool, a single
// value to a string, a repeatable one to a list), whose address stays put
// (std::deque) while CLI11 holds it.
class Declared {
 public:
  Declared(CLI::App& app, const Command& c) : command_(c), sub_(app.add_subcommand(c.name, c.help)) {
    for (const Arg& a : c.args) {
      Slot& slot = slots_.emplace_back(Slot{&a});
      if (a.kind == Arg::Kind::flag) slot.option = sub_->add_flag(a.name, slot.flag, a.help);
      else if (a.repeatable) slot.option = sub_->add_option(a.name, slot.values, a.help);
      else slot.option = sub_->add_option(a.name, slot.value, a.help);
      if (a.required) slot.option->required();
    }
  }

  const Command& command() const { return command_; }
  bool parsed() const { return sub_->parsed(); }

  Args args() const {
    Args out;
    for (const Slot& slot : slots_) {
      const Arg& a = *slot.arg;
      if (a.kind == Arg::Kind::flag) {
        if (slot.flag) out.set(a.name, {});
      } else if (slot.option->count() > 0) {
        out.set(a.name, a.repeatable ? slot.values : std::vector<std::string>{slot.value});
      }
    }
    return out;
  }

 private:
  struct Slot {
    const Arg* arg;
    CLI::Option* option = nullptr;
    bool flag = false;
    std::string value;
    std::vector<std::string> values;
  };
  const Command& command_;
  CLI::App* sub_;
  std::deque<Slot> slots_;
};

// The command named by argv[1], if it is one.
const Command* named_command(int argc, char** argv) {
  if (argc < 2) return nullptr;
  for (const Command& c : lplab::tool::registered_commands())
    if (c.name == argv[1]) return &c;
  return nullptr;
}

// The heartbeat of long work where stderr is no terminal (Progress): every
// LPLAB_PROGRESS_SECONDS seconds (default 10; 0: none).
unsigned heartbeat_seconds() {
  const char* env = std::getenv("LPLAB_PROGRESS_SECONDS");
  if (env == nullptr || *env == '\0') return 10;
  const std::string s(env);
  if (s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
    throw lplab::runtime::UsageError(fmt::format("LPLAB_PROGRESS_SECONDS '{}': expected a whole number of seconds (0: no progress lines)",
                                 lplab::runtime::shown(s)));
  return static_cast<unsigned>(std::stoul(s));
}

// What an allocation that failed means to a user: the limit in force, if any.
std::string memory_limit_text() {
  struct rlimit r {};
  if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
    return fmt::format("the address-space limit is {:.3g} GiB (ulimit -v); raise it or ask for less",
                       static_cast<double>(r.rlim_cur) / 1073741824.0);
  if (getrlimit(RLIMIT_DATA, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
    return fmt::format("the data limit is {:.3g} GiB (ulimit -d); raise it or ask for less",
                       static_cast<double>(r.rlim_cur) / 1073741824.0);
  return "the machine has no memory left for it; ask for less";
}

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) makes a write fail with EFBIG, which the
  // writers report in one line and clean up after, instead of killing the
  // process and leaving a temporary behind.
  signal(SIGXFSZ, SIG_IGN);
  const Command* c = named_command(argc, argv);
  return checked_exit(run(argc, argv), c != nullptr ? c->internal_error_status : 1);
}

namespace {

int run(int argc, char** argv) {
  using namespace lplab::tool;
  CLI::App app{"lplab: what low-precision number formats do to your numbers"};
  app.require_subcommand(0, 1);  // none only with --version (checked after parsing)
  bool version = false;
  app.add_flag("--version", version, "Print the version, the CPU and the SIMD target in use, and exit");
  std::deque<Declared> declared;
  std::vector<std::string> names;
  for (const Command& c : registered_commands()) {
    declared.emplace_back(app, c);
    names.push_back(c.name);
  }

  const std::string first = argc > 1 ? argv[1] : "";
  const Command* named = named_command(argc, argv);
  // `lplab` alone and `lplab help [COMMAND]` print help, as --help does.
  if (argc == 1 || first == "help") {
    if (argc > 3) {
      std::fprintf(stderr, "lplab: error: help takes at most one command's name\n");
      return 2;
    }
    if (argc == 3) {
      for (const Declared& d : declared)
        if (d.command().name == argv[2]) {
          print_help(app.get_subcommand(argv[2])->help());
          return 0;
        }
      std::fprintf(stderr, "lplab: error: help: unknown command '%s'%s (%s)\n",
                   lplab::runtime::shown(argv[2]).c_str(), lplab::runtime::did_you_mean(argv[2], names).c_str(),
                   fmt::format("{}", fmt::join(names, ", ")).c_str());
      return 2;
    }
    print_help(app.help());
    return 0;
  }
  if (!first.empty() && first[0] != '-' && named == nullptr) {
    std::fprintf(stderr, "lplab: error: unknown command '%s'%s (%s)\n", lplab::runtime::shown(argv[1]).c_str(),
                 lplab::runtime::did_you_mean(argv[1], names).c_str(),
                 fmt::format("{}", fmt::join(names, ", ")).c_str());
    return 2;
  }
  // The command line from the command's name on; a command may take values
  // out of it that CLI11 would misread (commands.h).
  std::vector<std::string> words(argv, argv + argc);
  std::vector<std::string> command_line(words.begin() + std::min<std::size_t>(words.size(), 1), words.end());
  std::vector<std::string> taken;
  if (named != nullptr && named->take_values) {
    std::vector<std::string> rest = command_line;
    taken = named->take_values(rest);
    words.resize(1);
    words.insert(words.end(), rest.begin(), rest.end());
  }
  std::vector<char*> cargs;
  for (std::string& w : words) cargs.push_back(w.data());
  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
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
    Progress::set_heartbeat(heartbeat_seconds());
  } catch (const UsageError& e) {
    std::fprintf(stderr, "lplab: error: %s\n", e.what());
    return 2;
  }
  const Declared* chosen = nullptr;
  for (const Declared& d : declared)
    if (d.parsed()) chosen = &d;
  const int internal_error = chosen != nullptr ? chosen->command().internal_error_status : 1;
  try {
    if (version) {
      print_stdout(fmt::format("lplab {}\nCPU: {}\nSIMD target: {}\ncores: {}\n", LPLAB_VERSION,
                               lplab::kernels::cpu_model(), target.name, std::thread::hardware_concurrency()));
      return 0;
    }
    if (chosen == nullptr)
      throw UsageError(fmt::format("a command is required ({}; or --version, --help)", fmt::join(names, ", ")));
    Args args = chosen->args();
    args.command_line = command_line;
    args.taken = taken;
    return chosen->command().run(args);
  } catch (const Interrupted&) {
    std::fprintf(stderr, "lplab: interrupted: nothing was written\n");
    return 130;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "lplab: error: %s\n", e.what());
    return 2;
  } catch (const lplab::experiments::WriteError& e) {
    std::fprintf(stderr, "lplab: error: %s\n", e.what());
    return internal_error;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "lplab: error: out of memory: an allocation failed; %s; nothing was written\n",
                 memory_limit_text().c_str());
    return internal_error;
  } catch (const std::system_error& e) {
    // fmt::print throws when standard output takes no more: checked_exit
    // says so in one line.
    if (std::ferror(stdout) != 0) {
      g_stdout_errno = e.code().value();
      return 1;
    }
    std::fprintf(stderr, "lplab: internal error: %s\n", e.what());
    return internal_error;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lplab: internal error: %s\n", e.what());
    return internal_error;
  }
}

}  // namespace
