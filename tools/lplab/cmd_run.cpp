// lplab list, lplab run, lplab merge.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lplab/commands.h"
#include "lplab/experiments/runner.h"

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

// Prints (or writes to `out_file`, atomically) the document.
void emit(const std::string& text, const std::string& out_file) {
  if (out_file.empty()) {
    print_stdout(text);
  } else {
    write_file_atomic(out_file, text);
  }
}

std::string render(const nlohmann::ordered_json& record, Output out) {
  if (out == Output::json) return record.dump(2) + "\n";
  const std::vector<Table> tables = tables_of(record);
  return out == Output::csv ? render_csv(tables) : render_text(tables);
}

}  // namespace

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
      print_stdout(render_csv(rows));
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

void run_run(const RunRequest& request, Output out, const std::string& out_file) {
  const PreparedRun run = prepare(request);  // every check before any work
  if (!out_file.empty()) check_output_file("--out", out_file);
  Progress::install_interrupt_handler();
  Progress progress(run.experiment->name);
  const RunResult r = execute(run, progress);
  emit(render(run_record(r), out), out_file);
}

void run_merge(const std::vector<std::string>& files, Output out, const std::string& out_file) {
  if (!out_file.empty()) check_output_file("--out", out_file);
  std::vector<nlohmann::ordered_json> records;
  for (const std::string& f : files) {
    std::ifstream in(f);
    if (!in) throw UsageError(fmt::format("{}: cannot open it", f));
    std::stringstream ss;
    ss << in.rdbuf();
    try {
      records.push_back(nlohmann::ordered_json::parse(ss.str()));
    } catch (const nlohmann::json::parse_error& e) {
      throw UsageError(fmt::format("{}: not JSON (byte {})", f, e.byte));
    }
  }
  emit(render(merge_records(records, files), out), out_file);
}

}  // namespace lplab::tool
