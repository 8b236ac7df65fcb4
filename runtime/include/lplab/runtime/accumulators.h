// Matmul accumulators by name: the presets of kernels/accumulator.h (plain
// accumulators and every matrix-unit instruction of kernels/mma.h) and their
// parameters, as the spec files, the Python bindings and the tool name them.
// One parser, so that every layer refuses a name in the same words.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lplab/kernels/accumulator.h"

namespace lplab::runtime {

// The preset called `name`; UsageError "accumulator: unknown 'x' (did you
// mean ...); known: <plain presets>, or a matrix-unit instruction (lplab mma
// --list)" otherwise.
const kernels::AccumulatorPreset& accumulator_preset(std::string_view name);
// The model parameter called `key` (kernels::accumulator_fields); UsageError
// "unknown accumulator parameter 'x' (<fields>)" otherwise.
const kernels::AccumulatorField& accumulator_field(std::string_view key);
// The preset with `params` set, checked by the kernels' rule
// (kernels::accumulator_problem); UsageError with its message otherwise.
kernels::AccumulatorModel accumulator_model(std::string_view name,
                                            const std::vector<std::pair<std::string, int>>& params = {});

}  // namespace lplab::runtime
