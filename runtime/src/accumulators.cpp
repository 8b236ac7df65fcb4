#include "lplab/runtime/accumulators.h"

#include <fmt/format.h>

#include "lplab/runtime/text.h"

namespace lplab::runtime {

const kernels::AccumulatorPreset& accumulator_preset(std::string_view name) {
  if (const kernels::AccumulatorPreset* preset = kernels::find_accumulator_preset(name)) return *preset;
  std::vector<std::string_view> all, plain;
  for (const kernels::AccumulatorPreset& a : kernels::accumulator_presets()) all.push_back(a.name);
  for (const kernels::AccumulatorPreset& a : kernels::plain_accumulator_presets()) plain.push_back(a.name);
  throw UsageError(fmt::format("accumulator: unknown '{}'{}; known: {}, or a matrix-unit instruction (lplab mma "
                               "--list)",
                               shown(name), did_you_mean(name, all), fmt::join(plain, ", ")));
}

const kernels::AccumulatorField& accumulator_field(std::string_view key) {
  for (const kernels::AccumulatorField& f : kernels::accumulator_fields())
    if (f.name == key) return f;
  std::vector<std::string_view> names;
  for (const kernels::AccumulatorField& f : kernels::accumulator_fields()) names.push_back(f.name);
  throw UsageError(fmt::format("unknown accumulator parameter '{}'{} ({})", shown(key), did_you_mean(key, names),
                               fmt::join(names, ", ")));
}

kernels::AccumulatorModel accumulator_model(std::string_view name,
                                            const std::vector<std::pair<std::string, int>>& params) {
  kernels::AccumulatorModel model = accumulator_preset(name).model;
  for (const auto& [key, value] : params) model.*(accumulator_field(key).field) = value;
  if (const kernels::AccumulatorProblem e = kernels::accumulator_problem(model)) throw UsageError(e.message);
  return model;
}

}  // namespace lplab::runtime
