// Counter-based random bits for stochastic rounding. Element i of a call made
// with seed s gets stochastic_bits(s, i): a pure function of (seed, index), so
// a result never depends on the thread count, the SIMD width or how the array
// was cut into chunks, and the scalar reference can be fed the very same bits.
#pragma once

#include <cstdint>

#include "lplab/formats/config.h"

namespace lplab::kernels {

// SplitMix64's output function (Steele, Lea & Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014): a 64-bit bijection with full
// avalanche. splitmix64(s) is the generator's next output from state s (whose
// next state is s + 0x9E3779B97F4A7C15); here it also turns (seed, high half
// of the index) into a key, and the experiments' samples are drawn from it.
LPLAB_HD constexpr std::uint64_t splitmix64(std::uint64_t z) noexcept {
  z += 0x9E3779B97F4A7C15u;  // 2^64 / golden ratio
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

namespace detail {

// A 32-bit integer hash with two multiplies (the "lowbias32" shape; constants
// 0x21F0AAAD, 0x735A2D97 from C. Wellons' hash-prospector search, bias about
// 0.107). Only 32-bit multiplies, so every SIMD target computes it per lane.
LPLAB_HD constexpr std::uint32_t hash32(std::uint32_t x) noexcept {
  x ^= x >> 16;
  x *= 0x21F0AAADu;
  x ^= x >> 15;
  x *= 0x735A2D97u;
  x ^= x >> 15;
  return x;
}

// The key for indices [hi * 2^32, (hi + 1) * 2^32).
struct StochasticKey {
  std::uint32_t k0, k1;
};
LPLAB_HD constexpr StochasticKey stochastic_key(std::uint64_t seed, std::uint64_t index) noexcept {
  const std::uint64_t k = splitmix64(seed ^ ((index >> 32) * 0xD1B54A32D192ED03u));
  return {static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32)};
}

// The bits of one element given its key: two rounds of the hash, keyed twice.
LPLAB_HD constexpr std::uint32_t stochastic_bits_keyed(StochasticKey key,
                                                       std::uint32_t index_low) noexcept {
  return hash32(hash32(index_low ^ key.k0) + key.k1);
}

}  // namespace detail

// The 32 random bits that Round::stochastic uses for element `index` of a bulk
// conversion seeded with `seed`.
LPLAB_HD constexpr std::uint32_t stochastic_bits(std::uint64_t seed, std::uint64_t index) noexcept {
  return detail::stochastic_bits_keyed(detail::stochastic_key(seed, index),
                                       static_cast<std::uint32_t>(index));
}

}  // namespace lplab::kernels
