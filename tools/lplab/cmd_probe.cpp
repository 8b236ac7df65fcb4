// lplab probe: the matrix-unit instructions of the GPU in hand against
// lplab's models of them, bit for bit (lplab/cuda/probe.h) -- prints the
// GPU, each instruction tried with its counts, and every differing case in
// full (up to --examples per instruction). Exit 0 when every D matched, 1
// when any differed or no GPU was found, 2 for bad arguments.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/lab/table.h"
#if defined(LPLAB_HAVE_CUDA)
#include "lplab/cuda/probe.h"
#endif

namespace lplab::tool {
namespace {

std::size_t count_option(const Args& a, const char* name, std::size_t fallback, std::size_t most) {
  const std::optional<std::string> v = a.optional_value(name);
  if (!v) return fallback;
  std::size_t n = 0;
  const auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || p != v->data() + v->size() || n < 1 || n > most)
    throw UsageError(fmt::format("{} takes a whole number from 1 to {}, not '{}'", name, most, *v));
  return n;
}

int probe(const Args& a) {
  const Output out = output_of(a);
  const std::size_t tiles = count_option(a, "--tiles", 1024, std::size_t{1} << 20);
  const std::size_t examples = count_option(a, "--examples", 3, 1000);
  const std::size_t seed = count_option(a, "--seed", 1, ~std::size_t{0});
  const std::vector<std::string> only = split_list(a.values("--only"), "--only");
#if !defined(LPLAB_HAVE_CUDA)
  (void)out, (void)tiles, (void)examples, (void)seed, (void)only;
  std::fprintf(stderr, "lplab: error: this lplab was built without the CUDA backend (no nvcc at build time): "
                       "the probe needs it\n");
  return 1;
#else
  cuda::ProbeOptions o{.tiles = tiles, .seed = seed, .only = only, .max_examples = examples};
  // Names are checked against the presets before any device work.
  for (const std::string& n : only)
    if (kernels::find_mma_instruction(n) == nullptr)
      throw UsageError(fmt::format("--only: unknown matrix-unit preset '{}' (lplab mma --list shows all)", n));
  std::string why;
  if (cuda::devices(&why).empty()) {
    std::fprintf(stderr, "lplab: error: no CUDA device: %s\n", why.c_str());
    return 1;
  }
  const cuda::ProbeReport r = cuda::probe(o);
  std::size_t differ = 0;
  for (const cuda::ProbeCase& c : r.cases) differ += c.differ;
  if (out == Output::json) {
    nlohmann::ordered_json j;
    j["gpu"] = r.device.name;
    j["compute_capability"] = fmt::format("{}.{}", r.device.major, r.device.minor);
    j["arch"] = r.arch;
    j["tiles"] = tiles;
    j["seed"] = seed;
    for (const cuda::ProbeCase& c : r.cases)
      j["instructions"].push_back({{"name", c.instruction}, {"isa", c.isa}, {"outputs", c.outputs},
                                   {"differ", c.differ}, {"nan_payload", c.nan_payload}, {"examples", c.examples}});
    j["not_run"] = r.not_run;
    print_stdout(j.dump(2) + "\n");
    return differ == 0 ? 0 : 1;
  }
  std::vector<std::vector<std::string>> rows = {{"instruction", "outputs", "differ", "NaN payloads"}};
  for (const cuda::ProbeCase& c : r.cases)
    rows.push_back({c.instruction, std::to_string(c.outputs), std::to_string(c.differ), std::to_string(c.nan_payload)});
  std::string text = fmt::format("GPU: {} (sm_{}{}, {} SMs): lplab's {} models against the instructions, {} tiles "
                                 "each, seed {}\n\n",
                                 r.device.name, r.device.major, r.device.minor, r.device.multiprocessors, r.arch,
                                 tiles, seed);
  if (out == Output::csv) text = csv_text(rows);
  else text += render_table(rows);
  if (out == Output::table) {
    for (const cuda::ProbeCase& c : r.cases)
      for (const std::string& e : c.examples) text += fmt::format("\n{}: {}\n", c.instruction, e);
    if (!r.not_run.empty())
      text += fmt::format("\nNot run ({} presets of {} without a probe kernel): {}\n", r.not_run.size(), r.arch,
                          fmt::join(r.not_run, ", "));
    text += differ == 0 ? "\nEvery D matched the model bit for bit.\n"
                        : fmt::format("\n{} outputs differ from the model.\n", differ);
  }
  print_stdout(text);
  return differ == 0 ? 0 : 1;
#endif
}

}  // namespace

LPLAB_COMMAND(Command{
    "probe",
    "Run the GPU's matrix-unit instructions (mma, wgmma) and compare every D bit for bit with lplab's models",
    {option("--tiles", "Instruction executions per instruction (default 1024)"),
     option("--seed", "Seed of the generated operands (default 1)"),
     option("--only", "Only these presets (comma-separated, e.g. hopper.wgmma.f32.e4m3.e4m3)", true),
     option("--examples", "Differing outputs printed per instruction (default 3)"), output_option()},
    probe});

}  // namespace lplab::tool
