// Named recipes by name (kernels/recipes.h), as the tool, the specs and the
// Python bindings look them up: one lookup, so that every layer refuses an
// unknown name in the same words.
#pragma once

#include <string>
#include <string_view>

#include "lplab/kernels/recipes.h"

namespace lplab::runtime {

// The recipe called `name`; UsageError "unknown recipe 'x' (did you mean
// ...); known: fp32, bf16_amp, ..." otherwise.
const kernels::Recipe& recipe(std::string_view name);

// The recipe as a JSON document (`lplab recipe show NAME --output json`,
// Python's lplab.recipe): name, summary, source; gemms.{fprop,dgrad,wgrad}
// with a and b (format, scaling, block [rows, cols] along M or N and K,
// scale_format, scale_rule, tensor_scale, round, hadamard, four_over_six) and
// accumulation; generations, every one of mma.h's in order, each with
// supported, presets by role where it is, and a note; notes.
std::string recipe_json(const kernels::Recipe& r);

}  // namespace lplab::runtime
