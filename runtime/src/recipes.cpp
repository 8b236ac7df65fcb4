#include "lplab/runtime/recipes.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lplab/runtime/text.h"

namespace lplab::runtime {

const kernels::Recipe& recipe(std::string_view name) {
  if (const kernels::Recipe* r = kernels::find_recipe(name)) return *r;
  std::vector<std::string_view> names;
  for (const kernels::Recipe& r : kernels::recipes()) names.push_back(r.name);
  throw UsageError(fmt::format("unknown recipe '{}'{}; known: {}", shown(name), did_you_mean(name, names),
                               fmt::join(names, ", ")));
}

namespace {

nlohmann::ordered_json operand_json(const kernels::RecipeOperand& o) {
  nlohmann::ordered_json j = {{"format", o.format}, {"scaling", enum_name(o.scaling)}};
  if (o.block != kernels::BlockShape{}) j["block"] = {o.block.rows, o.block.cols};
  if (!o.scale_format.empty()) j["scale_format"] = o.scale_format;
  if (o.scaling == kernels::OperandScaling::block) j["scale_rule"] = o.four_over_six ? "four_over_six" : enum_name(o.rule);
  j["tensor_scale"] = o.tensor_scale;
  j["round"] = enum_name(o.round);
  j["hadamard"] = o.hadamard;
  j["four_over_six"] = o.four_over_six;
  return j;
}

}  // namespace

std::string recipe_json(const kernels::Recipe& r) {
  nlohmann::ordered_json j = {{"name", r.name}, {"summary", r.summary}, {"source", r.source},
                              {"gemms", nlohmann::ordered_json::object()},
                              {"generations", nlohmann::ordered_json::array()}, {"notes", r.notes}};
  for (const auto& e : enum_entries<kernels::GemmRole>()) {
    const kernels::RecipeGemm& g = r.gemm[static_cast<std::size_t>(e.value)];
    j["gemms"][e.name] = {{"a", operand_json(g.a)}, {"b", operand_json(g.b)}, {"accumulation", g.accumulation}};
  }
  for (const kernels::GpuGeneration& gen : kernels::gpu_generations()) {
    const kernels::RecipeUnits* u = kernels::recipe_units(r, gen.name);
    nlohmann::ordered_json gj = {{"generation", gen.name}, {"arch", gen.arch}, {"supported", u != nullptr}};
    if (u != nullptr) {
      gj["presets"] = nlohmann::ordered_json::object();
      for (const auto& e : enum_entries<kernels::GemmRole>()) {
        const std::string_view p = u->preset[static_cast<std::size_t>(e.value)];
        gj["presets"][e.name] = p.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(p);
      }
    }
    gj["note"] = u != nullptr ? u->note : r.unsupported;
    j["generations"].push_back(gj);
  }
  return j.dump(2);
}

}  // namespace lplab::runtime
