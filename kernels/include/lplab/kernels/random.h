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

// Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as
// easy as 1, 2, 3", SC'11; the Random123 library's philox4x32 with 10
// rounds): four 32-bit words from a 128-bit counter and a 64-bit key. Each
// round multiplies two counter words by M0 and M1 into 64-bit products and
// crosses their halves with the other two words and the key; the key is
// bumped by the Weyl constants W0, W1 between rounds. curand's
// Philox4_32_10 and PyTorch's CUDA generator are this function.
struct Philox4x32 {
  std::uint32_t v[4];
};
LPLAB_HD constexpr Philox4x32 philox4x32_10(Philox4x32 ctr, std::uint32_t key0, std::uint32_t key1) noexcept {
  constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // the round multipliers
  constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // 2^32 / golden ratio, 2^32 * (sqrt(3) - 1)
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kW0;
      key1 += kW1;
    }
    const std::uint64_t p0 = static_cast<std::uint64_t>(kM0) * ctr.v[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(kM1) * ctr.v[2];
    ctr = {{static_cast<std::uint32_t>(p1 >> 32) ^ ctr.v[1] ^ key0, static_cast<std::uint32_t>(p1),
            static_cast<std::uint32_t>(p0 >> 32) ^ ctr.v[3] ^ key1, static_cast<std::uint32_t>(p0)}};
  }
  return ctr;
}

// The index-th 32-bit output of the Philox stream (seed, subsequence), in
// curand's layout: curand_init(seed, subsequence, 0, &state) keys with the
// seed's two halves and puts the subsequence in counter words 2-3; the
// index-th curand(&state) is word index % 4 of the block with counter
// index / 4 in words 0-1.
LPLAB_HD constexpr std::uint32_t philox_bits(std::uint64_t seed, std::uint64_t subsequence,
                                             std::uint64_t index) noexcept {
  const std::uint64_t block = index / 4;
  const Philox4x32 out = philox4x32_10(
      {{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
        static_cast<std::uint32_t>(subsequence), static_cast<std::uint32_t>(subsequence >> 32)}},
      static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  return out.v[index % 4];
}

}  // namespace lplab::kernels
