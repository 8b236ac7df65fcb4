// lplab list [EXPERIMENT]: the experiments, or one experiment's parameters.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/lab/table.h"
#include "lplab/experiments/runner.h"
#include "lplab/runtime/text.h"

namespace lplab::tool {
namespace {

const char* type_name(ParamType t) {
  switch (t) {
    case ParamType::integer: return "integer";
    case ParamType::real: return "real";
    case ParamType::text: return "text";
    case ParamType::list: return "list";
  }
  return "?";
}

std::string range_text(const ParamSpec& p) {
  if (p.type == ParamType::integer || p.type == ParamType::real || p.items_numeric)
    return fmt::format("[{}, {}]", shortest(p.min), shortest(p.max));
  if (!p.choices.empty()) return fmt::format("{}", fmt::join(p.choices, "|"));
  return "";
}

void run_list(const std::string& name, Output out) {
  if (!name.empty()) {
    const Experiment* e = find_experiment(name);
    if (e == nullptr) throw UsageError(fmt::format("unknown experiment '{}' (see 'lplab list')", name));
    if (out == Output::json) {
      nlohmann::ordered_json j;
      j["name"] = e->name;
      j["summary"] = e->summary;
      j["takes_input"] = e->takes_input;
      j["default_dtypes"] = e->default_dtypes;
      auto ps = nlohmann::ordered_json::array();
      for (const ParamSpec& p : e->params)
        ps.push_back({{"name", p.name}, {"type", type_name(p.type)}, {"default", p.default_value},
                      {"range", range_text(p)}, {"help", p.help}});
      j["params"] = ps;
      fmt::print("{}\n", j.dump(2));
      return;
    }
    std::vector<std::vector<std::string>> rows = {{"param", "type", "default", "range", "help"}};
    for (const ParamSpec& p : e->params)
      rows.push_back({p.name, type_name(p.type), p.default_value, range_text(p), p.help});
    if (out == Output::csv) {
      print_stdout(csv_text(rows));
      return;
    }
    fmt::print("{}: {}\n", e->name, e->summary);
    fmt::print("dtypes: {}\n", e->default_dtypes.empty() ? std::string("(none)")
                                                          : fmt::format("{}", fmt::join(e->default_dtypes, ", ")));
    fmt::print("input: {}\n\n", e->takes_input ? "--input FILE.npy (float16/32/64)" : "(none)");
    fmt::print("{}", render_table(rows));
    return;
  }
  std::vector<std::vector<std::string>> rows = {{"experiment", "input", "summary"}};
  for (const Experiment& e : lplab::experiments::experiments()) rows.push_back({e.name, e.takes_input ? "npy" : "", e.summary});
  if (out == Output::json) {
    auto j = nlohmann::ordered_json::array();
    for (const Experiment& e : lplab::experiments::experiments())
      j.push_back({{"name", e.name}, {"takes_input", e.takes_input}, {"summary", e.summary}});
    fmt::print("{}\n", j.dump(2));
    return;
  }
  if (out == Output::csv) {
    fmt::print("experiment,input,summary\n");
    for (const Experiment& e : lplab::experiments::experiments())
      fmt::print("{},{},\"{}\"\n", e.name, e.takes_input ? "npy" : "", e.summary);
    return;
  }
  fmt::print("{}", render_table(rows));
}

}  // namespace

LPLAB_COMMAND(Command{"list",
                      "The experiments, or one experiment's parameters",
                      {positional("experiment", "An experiment (default: list them all)"), output_option()},
                      [](const Args& a) {
                        const Output out = output_of(a);
                        run_list(a.value("experiment"), out);
                        return 0;
                      }});

}  // namespace lplab::tool
