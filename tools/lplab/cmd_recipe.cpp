// lplab recipe: the named recipes (kernels/recipes.h). --list names them;
// `show NAME` prints one: each GEMM's operands (format, scaling, block,
// scale format and rule, rounding, Hadamard, Four Over Six), how it
// accumulates, and the matrix-unit preset of each GPU generation.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/kernels/recipes.h"
#include "lplab/runtime/recipes.h"

namespace lplab::tool {

namespace {

using kernels::GemmRole;
using kernels::OperandScaling;
using kernels::Recipe;
using kernels::RecipeOperand;

// What the scale rule is: a block rule's name (with NVFP4's tensor scale),
// else the scaling's own.
std::string rule_text(const RecipeOperand& o) {
  switch (o.scaling) {
    case OperandScaling::none: return "-";
    case OperandScaling::block:
      return std::string(o.four_over_six ? "four_over_six (te, E4M3 bound 256)" : enum_name(o.rule)) +
             (o.tensor_scale ? " + fp32 tensor scale" : "");
    default: return enum_name(o.scaling);
  }
}

// The operand's letter and the tensor it is, by role.
std::string operand_name(GemmRole role, bool a) {
  switch (role) {
    case GemmRole::fprop: return a ? "A = X" : "B = W";
    case GemmRole::dgrad: return a ? "A = dY" : "B = W";
    case GemmRole::wgrad: return a ? "A = dY^T" : "B = X";
  }
  return "?";
}

// One preset when the three GEMMs share it, else each by role ("-": the GEMM
// is not run in the recipe's formats there).
std::string presets_text(const kernels::RecipeUnits& u) {
  if (u.preset[0] == u.preset[1] && u.preset[1] == u.preset[2]) return std::string(u.preset[0]);
  std::string text;
  for (const auto& e : enum_entries<GemmRole>()) {
    const std::string_view p = u.preset[static_cast<std::size_t>(e.value)];
    text += fmt::format("{}{}: {}", text.empty() ? "" : "; ", e.name, p.empty() ? "-" : p);
  }
  return text;
}

int list_recipes(Output out) {
  std::vector<std::vector<std::string>> rows = {{"recipe", "summary", "source"}};
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const Recipe& r : kernels::recipes()) {
    rows.push_back({std::string(r.name), std::string(r.summary), std::string(r.source)});
    j.push_back({{"name", r.name}, {"summary", r.summary}, {"source", r.source}});
  }
  if (out == Output::json) print_stdout(j.dump(2) + "\n");
  else if (out == Output::csv) print_stdout(csv_text(rows));
  else print_stdout(render_table(rows));
  return 0;
}

int show_recipe(const Recipe& r, Output out) {
  const std::vector<kernels::GpuGeneration> gens = kernels::gpu_generations();
  std::vector<std::vector<std::string>> operands = {
      {"gemm", "operand", "format", "scaling", "block (MxK)", "scale format", "scale rule", "rounding", "hadamard",
       "4/6"}};
  std::vector<std::vector<std::string>> units = {{"generation", "arch", "matrix unit (fprop, dgrad, wgrad)", "note"}};
  std::string accumulation;
  for (const auto& e : enum_entries<GemmRole>()) {
    const kernels::RecipeGemm& g = r.gemm[static_cast<std::size_t>(e.value)];
    for (const bool a : {true, false}) {
      const RecipeOperand& o = a ? g.a : g.b;
      operands.push_back({e.name, operand_name(e.value, a), std::string(o.format), enum_name(o.scaling),
                          kernels::block_text(o), o.scale_format.empty() ? "-" : std::string(o.scale_format),
                          rule_text(o), enum_name(o.round), o.hadamard ? "yes" : "no", o.four_over_six ? "yes" : "no"});
    }
    accumulation += fmt::format("  {}: {}\n", e.name, g.accumulation);
  }
  for (const kernels::GpuGeneration& gen : gens) {
    const kernels::RecipeUnits* u = kernels::recipe_units(r, gen.name);
    if (u == nullptr) {
      units.push_back({std::string(gen.name), std::string(gen.arch), "not supported", std::string(r.unsupported)});
    } else {
      units.push_back({std::string(gen.name), std::string(gen.arch), presets_text(*u), std::string(u->note)});
    }
  }
  if (out == Output::json) {
    print_stdout(runtime::recipe_json(r) + "\n");
  } else if (out == Output::csv) {
    print_stdout(csv_text(operands) + "\n" + csv_text(units));
  } else {
    print_stdout(fmt::format("{}: {}\nsource: {}\n\n{}\naccumulation:\n{}\n{}\nnotes: {}\n", r.name, r.summary,
                             r.source, render_table(operands), accumulation, render_table(units), r.notes));
  }
  return 0;
}

}  // namespace

LPLAB_COMMAND(Command{
    "recipe",
    "Named training recipes: each GEMM's formats, blocks, scale rules and rounding, and each GPU's matrix units",
    {positional("action", "show"), positional("name", "A recipe (--list shows all), e.g. nvfp4_training"),
     flag("--list", "List every recipe"), output_option()},
    [](const Args& a) {
      const Output out = output_of(a);
      if (a.given("--list")) {
        if (a.given("action")) throw UsageError("give --list or show NAME, not both");
        return list_recipes(out);
      }
      if (!a.given("action")) throw UsageError("lplab recipe --list, or lplab recipe show NAME");
      if (a.value("action") != "show")
        throw UsageError(fmt::format("unknown recipe action '{}' (show)", shown(a.value("action"))));
      if (!a.given("name")) throw UsageError("name a recipe: lplab recipe show NAME (lplab recipe --list shows all)");
      return show_recipe(runtime::recipe(a.value("name")), out);
    }});

}  // namespace lplab::tool
