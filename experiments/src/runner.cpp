#include "lplab/experiments/runner.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "lplab/lab/npy.h"
#include "lplab/kernels/targets.h"

namespace lplab::experiments {

PreparedRun prepare(const RunRequest& request) {
  PreparedRun run;
  run.experiment = find_experiment(request.experiment);
  if (run.experiment == nullptr) {
    std::vector<std::string> names;
    for (const Experiment& e : experiments()) names.push_back(e.name);
    throw UsageError(fmt::format("unknown experiment '{}' (one of: {})", request.experiment,
                                 fmt::join(names, ", ")));
  }
  const Experiment& e = *run.experiment;
  run.params = Params(e.params, request.params, e.name);
  if (e.default_dtypes.empty() && !request.dtypes.empty())
    throw UsageError(fmt::format("{} takes no --dtypes", e.name));
  run.dtypes = resolve_format_list(request.dtypes.empty() ? e.default_dtypes : request.dtypes);
  if (!e.takes_declared_formats) {
    std::vector<std::string> takers;
    for (const Experiment& x : experiments())
      if (x.takes_declared_formats) takers.push_back(x.name);
    const std::string also = fmt::format("the {} experiments", fmt::join(takers, ", "));
    for (const FormatEntry* f : run.dtypes) require_compiled(*f, "run --dtypes", e.name, also);
  }
  if (!e.takes_input && !request.input.empty())
    throw UsageError(fmt::format("{} takes no --input", e.name));
  run.shard = parse_shard(request.shard);
  // The kernels' own cap on worker threads.
  if (request.threads > 1024) throw UsageError(fmt::format("--threads {}: at most 1024", request.threads));
  run.threads = request.threads;
  if (!request.input_dtype.empty() && request.input.empty())
    throw UsageError("--input-dtype names the format of an --input file; there is none");
  const FormatEntry* raw = request.input_dtype.empty() ? nullptr : &resolve_format(request.input_dtype);
  if (!request.input.empty()) {
    // Room for the values as double, the file's words and an experiment's
    // working copies: 48 bytes per element, within three quarters of memory.
    const double memory = static_cast<double>(this_machine().memory_bytes);
    const auto max_elements = static_cast<std::size_t>(
        std::min(static_cast<double>(kNpyMaxElements), memory > 0 ? 0.75 * memory / 48 : 1e8));
    NpyArray a = read_npy(request.input, max_elements, raw);
    if (a.values.empty()) throw UsageError(fmt::format("{}: the array is empty", request.input));
    run.input = std::move(a.values);
    run.input_dtype = a.dtype;
    run.input_name = std::filesystem::path(request.input).filename().string();
    // The input's identity for `lplab merge`: shards of one run read the
    // same values (FNV-1a over the values' bits).
    std::uint64_t h = 0xcbf29ce484222325u;
    for (double v : run.input) {
      std::uint64_t b;
      std::memcpy(&b, &v, sizeof b);
      for (int i = 0; i < 8; ++i) h = (h ^ ((b >> (8 * i)) & 0xFF)) * 0x100000001b3u;
    }
    run.input_hash = fmt::format("{:016x}", h);
  }
  return run;
}

RunResult execute(const PreparedRun& run, Progress& progress) {
  Context ctx{run.params, run.dtypes, run.input, run.input_name, run.shard, progress, run.threads};
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r;
  r.run = &run;
  r.tables = run.experiment->run(ctx);
  if (run.shard.count == 1 && run.experiment->summarize) run.experiment->summarize(r.tables);
  progress.finish();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

nlohmann::ordered_json run_record(const RunResult& r) {
  const PreparedRun& run = *r.run;
  const Machine m = this_machine();
  nlohmann::ordered_json j;
  j["lplab"] = "run";
  j["lplab_version"] = LPLAB_VERSION;
  j["experiment"] = run.experiment->name;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const auto& [k, v] : run.params.all()) params[k] = v;
  j["params"] = params;
  auto dtypes = nlohmann::ordered_json::array();
  for (const FormatEntry* d : run.dtypes) dtypes.push_back(d->name);
  j["dtypes"] = dtypes;
  j["input"] = run.input_name.empty() ? nlohmann::ordered_json("")
                                      : nlohmann::ordered_json{{"file", run.input_name},
                                                               {"dtype", run.input_dtype},
                                                               {"elements", run.input.size()},
                                                               {"fnv1a", run.input_hash}};
  j["shard"] = {{"index", run.shard.index}, {"count", run.shard.count}};
  j["machine"] = {{"cpu_model", m.cpu_model}, {"cores", m.cores}, {"simd_target", m.simd_target},
                  {"threads", run.threads != 0 ? run.threads : m.cores}};
  j["seconds"] = r.seconds;
  auto tables = nlohmann::ordered_json::array();
  for (const Table& t : r.tables) tables.push_back(to_json(t));
  j["tables"] = tables;
  return j;
}

std::vector<Table> tables_of(const nlohmann::ordered_json& record) {
  const auto& tables = record.at("tables");
  // Iterating a JSON number or object would give one table or none.
  if (!tables.is_array()) throw std::runtime_error("'tables' is not a list of tables");
  std::vector<Table> out;
  for (const auto& t : tables) out.push_back(table_from_json(t));
  return out;
}

namespace {

// A shard's index or count as the record holds it: a whole number, >= 0
// (nlohmann would read 1.5 as 1 and -1 as 2^64 - 1).
std::optional<std::uint64_t> whole_number(const nlohmann::ordered_json& shard, const char* key) {
  if (!shard.is_object() || !shard.contains(key)) return std::nullopt;
  const auto& v = shard.at(key);
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  return std::nullopt;
}

// The structure of one shard's record, checked before anything is joined:
// the run's fields, this lplab's version, a whole-number shard, and tables
// that each carry an id, columns, rows and one whole-number grid point a row.
void check_shard_record(const nlohmann::ordered_json& r, const std::string& name) {
  if (!r.is_object() || !r.contains("lplab") || r.at("lplab") != "run")
    throw UsageError(fmt::format("{}: not the JSON output of 'lplab run' (no \"lplab\": \"run\")", name));
  for (const char* key : {"lplab_version", "experiment", "params", "dtypes", "input", "shard", "tables"})
    if (!r.contains(key))
      throw UsageError(fmt::format("{}: not the JSON output of 'lplab run' (no '{}')", name, key));
  const auto& version = r.at("lplab_version");
  if (!version.is_string() || version.get<std::string>() != LPLAB_VERSION)
    throw UsageError(fmt::format("{}: made by lplab {}; this is lplab {}: merge shards with the lplab that ran them",
                                 name, version.is_string() ? version.get<std::string>() : version.dump(),
                                 LPLAB_VERSION));
  const auto& shard = r.at("shard");
  const std::optional<std::uint64_t> index = whole_number(shard, "index"), count = whole_number(shard, "count");
  if (!index || !count || *count < 1 || *count > 100000 || *index >= *count)
    throw UsageError(fmt::format("{}: malformed 'shard' {} (need whole numbers 0 <= index < count <= 100000)", name,
                                 shard.dump()));
  const auto& tables = r.at("tables");
  // Every shard lists all of its run's tables (with its own rows, or none).
  if (!tables.is_array()) throw UsageError(fmt::format("{}: 'tables' is not a list of tables", name));
  if (tables.empty()) throw UsageError(fmt::format("{}: no tables (a shard lists every table of its run)", name));
  std::vector<std::string> ids;
  for (std::size_t k = 0; k < tables.size(); ++k) {
    const auto& t = tables[k];
    const std::string which = t.is_object() && t.contains("id") && t.at("id").is_string()
                                  ? "table " + t.at("id").get<std::string>()
                                  : fmt::format("table #{}", k + 1);
    for (const char* key : {"id", "title", "columns", "rows", "grid", "notes"})
      if (!t.is_object() || !t.contains(key)) throw UsageError(fmt::format("{}: {} has no '{}'", name, which, key));
    if (!t.at("id").is_string()) throw UsageError(fmt::format("{}: {}: its id is not text", name, which));
    const auto& rows = t.at("rows");
    const auto& grid = t.at("grid");
    if (!rows.is_array() || !grid.is_array() || rows.size() != grid.size())
      throw UsageError(fmt::format("{}: {}: 'rows' and 'grid' are not lists of one length", name, which));
    for (const auto& g : grid)
      if (!g.is_number_unsigned())
        throw UsageError(fmt::format("{}: {}: grid point {} is not a whole number >= 0", name, which, g.dump()));
    if (std::find(ids.begin(), ids.end(), which) != ids.end())
      throw UsageError(fmt::format("{}: {} is listed twice", name, which));
    ids.push_back(which);
  }
}

}  // namespace

nlohmann::ordered_json merge_records(const std::vector<nlohmann::ordered_json>& records,
                                     const std::vector<std::string>& names) {
  if (records.empty()) throw UsageError("merge: no files given");
  auto field = [&](std::size_t i, const char* key) -> const nlohmann::ordered_json& { return records[i].at(key); };
  // Every file's structure first, so that a damaged one is named whatever
  // its place in the list.
  for (std::size_t i = 0; i < records.size(); ++i) check_shard_record(records[i], names[i]);
  auto table_ids = [](const nlohmann::ordered_json& r) {
    std::vector<std::string> ids;
    for (const auto& t : r.at("tables")) ids.push_back(t.at("id").get<std::string>());
    return ids;
  };
  const std::vector<std::string> ids0 = table_ids(records[0]);
  std::uint64_t count = 0;
  std::vector<int> seen;
  std::vector<std::uint64_t> shard_index(records.size());
  std::vector<std::vector<Table>> parts(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    // Compared as JSON values: a file rewritten with its keys in another
    // order (jq -S) is the same run.
    for (const char* key : {"experiment", "params", "dtypes", "input"})
      if (nlohmann::json(field(i, key)) != nlohmann::json(field(0, key)))
        throw UsageError(fmt::format("{}: its {} differ from those of {}: shards of different runs", names[i],
                                     key, names[0]));
    // Every shard of a run lists every table of the run (its own rows, or
    // none): a shard without one is damaged, and its rows would be missing.
    if (const std::vector<std::string> ids = table_ids(records[i]); ids != ids0)
      throw UsageError(fmt::format("{}: its tables ({}) are not those of {} ({})", names[i], fmt::join(ids, ", "),
                                   names[0], fmt::join(ids0, ", ")));
    const auto& shard = field(i, "shard");
    const std::uint64_t index = shard.at("index").get<std::uint64_t>();
    const std::uint64_t n = shard.at("count").get<std::uint64_t>();
    if (i == 0) {
      count = n;
      seen.assign(n, -1);
    }
    if (n != count || index >= n)
      throw UsageError(fmt::format("{}: shard {}/{} does not belong with {}'s {} shards", names[i], index, n,
                                   names[0], count));
    if (seen[index] >= 0)
      throw UsageError(fmt::format("{}: shard {}/{} was given twice (also {})", names[i], index, n,
                                   names[static_cast<std::size_t>(seen[index])]));
    seen[index] = static_cast<int>(i);
    shard_index[i] = index;
    try {
      parts[i] = tables_of(records[i]);
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("{}: {}", names[i], e.what()));
    }
  }
  for (std::uint64_t s = 0; s < count; ++s)
    if (seen[s] < 0) throw UsageError(fmt::format("merge: shard {}/{} is missing", s, count));

  // Tables in the order the first shard lists them; rows of every shard,
  // stably sorted by grid point: the order of the unsharded run. Each row is
  // checked against the run's schema as the first shard gives it -- the same
  // columns (names and units), every column holding one kind of cell
  // (numbers or text, or empty), and a grid point that its shard owns and
  // no other row of the table holds -- so a damaged or foreign file is
  // refused with the place named, never merged.
  std::vector<Table> merged = parts[0];
  for (Table& t : merged) t.rows.clear();
  enum class Kind { empty, number, text };
  auto kind_of = [](const Cell& c) {
    if (std::holds_alternative<std::monostate>(c)) return Kind::empty;
    return std::holds_alternative<std::string>(c) ? Kind::text : Kind::number;
  };
  auto column_text = [](const std::vector<Column>& cs) {
    std::string s;
    for (const Column& c : cs) s += (s.empty() ? "" : ", ") + c.name + (c.unit.empty() ? "" : " [" + c.unit + "]");
    return s;
  };
  std::vector<std::vector<Kind>> kinds(merged.size());
  std::vector<std::map<std::uint64_t, std::size_t>> owners(merged.size());  // grid point -> file
  for (std::size_t k = 0; k < merged.size(); ++k) kinds[k].assign(merged[k].columns.size(), Kind::empty);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::uint64_t index = shard_index[i];
    for (const Table& t : parts[i]) {
      auto it = std::find_if(merged.begin(), merged.end(), [&](const Table& m) { return m.id == t.id; });
      if (it == merged.end())
        throw UsageError(fmt::format("{}: table {} is not in {}", names[i], t.id, names[0]));
      const auto k = static_cast<std::size_t>(it - merged.begin());
      const bool same_columns =
          it->columns.size() == t.columns.size() &&
          std::equal(t.columns.begin(), t.columns.end(), it->columns.begin(),
                     [](const Column& a, const Column& b) { return a.name == b.name && a.unit == b.unit; });
      if (!same_columns)
        throw UsageError(fmt::format("{}: table {} has the columns ({}) where {} has ({})", names[i], t.id,
                                     column_text(t.columns), names[0], column_text(it->columns)));
      for (const Row& r : t.rows) {
        if (r.grid % count != index)
          throw UsageError(fmt::format("{}: table {}: a row at grid point {}, which shard {}/{} does not own",
                                       names[i], t.id, r.grid, index, count));
        const auto [at, fresh] = owners[k].emplace(r.grid, i);
        if (!fresh)
          throw UsageError(fmt::format("{}: table {}: grid point {} appears twice (also in {})", names[i], t.id,
                                       r.grid, names[at->second]));
        if (r.cells.size() != t.columns.size())
          throw UsageError(fmt::format("{}: table {}: the row at grid point {} has {} cells for {} columns",
                                       names[i], t.id, r.grid, r.cells.size(), t.columns.size()));
        for (std::size_t c = 0; c < r.cells.size(); ++c) {
          const Kind kd = kind_of(r.cells[c]);
          if (kd == Kind::empty) continue;
          if (kinds[k][c] == Kind::empty) kinds[k][c] = kd;
          if (kd != kinds[k][c])
            throw UsageError(fmt::format("{}: table {}, grid point {}: column {} holds {} where other rows hold {}",
                                         names[i], t.id, r.grid, t.columns[c].name,
                                         kd == Kind::text ? "text" : "a number",
                                         kd == Kind::text ? "numbers" : "text"));
        }
      }
      it->rows.insert(it->rows.end(), t.rows.begin(), t.rows.end());
    }
  }
  for (Table& t : merged)
    std::stable_sort(t.rows.begin(), t.rows.end(), [](const Row& a, const Row& b) { return a.grid < b.grid; });
  const Experiment* e = find_experiment(records[0].value("experiment", ""));
  if (e != nullptr && e->summarize) e->summarize(merged);
  nlohmann::ordered_json out = records[0];
  out["shard"] = {{"index", 0}, {"count", 1}};
  out["merged_from"] = count;
  auto tables = nlohmann::ordered_json::array();
  for (const Table& t : merged) tables.push_back(to_json(t));
  out["tables"] = tables;
  return out;
}

std::string render_text(const std::vector<Table>& tables) {
  std::string out;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (i) out += '\n';
    out += to_text(tables[i]);
  }
  return out;
}

std::string render_csv(const std::vector<Table>& tables) {
  if (tables.size() == 1) return to_csv(tables.front());
  std::string out;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (i) out += '\n';
    out += fmt::format("# {}\n", tables[i].id);
    out += to_csv(tables[i]);
  }
  return out;
}

}  // namespace lplab::experiments
