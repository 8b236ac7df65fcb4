// The operand samples of a matmul error measurement, shared by the
// matmul_error experiment and `lplab regress` matmul checks, so that a check
// with the experiment's seed and k draws the experiment's very operands.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

#include "lplab/kernels/random.h"

namespace lplab::experiments {

// A standard normal sample for index i of the stream `stream`: Box-Muller on
// two 53-bit uniforms from splitmix64. Counter-based, so a value depends on
// (seed, stream, i) only, not on the order of the sweep or on the library's
// std::normal_distribution, which the C++ standard leaves unspecified. The
// experiments draw A from stream 2k and B from stream 2k + 1.
inline double gaussian(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  namespace k = lplab::kernels;
  const std::uint64_t key = k::detail::splitmix64(seed ^ k::detail::splitmix64(stream));
  const std::uint64_t r1 = k::detail::splitmix64(key + 2 * i);
  const std::uint64_t r2 = k::detail::splitmix64(key + 2 * i + 1);
  // u1 in (0, 1]: (r >> 11) + 1 over 2^53, so log(u1) is finite.
  const double u1 = (static_cast<double>(r1 >> 11) + 1.0) * 0x1p-53;
  const double u2 = static_cast<double>(r2 >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace lplab::experiments
