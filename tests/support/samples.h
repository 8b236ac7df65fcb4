// The experiments' documented sample generator, written again for the tests
// that check an experiment's rows against loops of their own: a standard
// normal for index i of stream `stream` of `seed`, by Box-Muller on two
// splitmix64 outputs keyed by (seed, stream) (experiments/src/sampling.h
// documents it; matmul_error and matrix_units draw A from stream 2k and B
// from 2k + 1, training its weights and batches).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

#include "lplab/kernels/random.h"

namespace lplab::testing {

inline double documented_gaussian(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  using kernels::splitmix64;
  const std::uint64_t key = splitmix64(seed ^ splitmix64(stream));
  const double u1 = static_cast<double>((splitmix64(key + 2 * i) >> 11) + 1) / 9007199254740992.0;
  const double u2 = static_cast<double>(splitmix64(key + 2 * i + 1) >> 11) / 9007199254740992.0;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

}  // namespace lplab::testing
