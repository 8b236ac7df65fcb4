// Float input sets for the conversion sweeps, and the extent a sweep runs at.
//
// One sweep program serves both labels (tests/CMakeLists.txt): the quick
// suite runs it on the quick sets, the exhaustive suite with LPLAB_SWEEP=full
// on all 2^32 float inputs and the decision-covering set. docs/testing.md
// gives the argument that the decision-covering set reaches every rounding
// decision.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "support/reference.h"

namespace lplab::testing {

// Every float bit pattern: 2^32 inputs.
struct AllFloats {
  static constexpr std::uint64_t count = std::uint64_t{1} << 32;
  static std::uint32_t bits(std::uint64_t i) { return static_cast<std::uint32_t>(i); }
};

// Every value of the top 20 bits (sign, exponent, 11 mantissa bits) with 16
// low 12-bit patterns: 2^24 inputs.
//
//   bit  31  30 ........ 23  22 ............ 12  11 ............. 0
//        S   exponent        mantissa, top 11    low 12: kLow12[i % 16]
//
// For every format of up to 16 bits (mantissa of at most 10 bits) a float's
// lowest kept bit is bit 13 or higher and its half-ulp (round) bit is bit 12
// or higher, so bits 0..11 enter a deterministic rounding only through the
// sticky bit (any of them set). The set holds, for each of the 2^20 values of
// the bits that can decide, the sticky bit clear (0x000) and set in fifteen
// ways: each of the twelve bits alone -- so a sticky mask that misses one bit
// is caught on every exponent -- and 0x7FF, 0x801, 0xFFF. It therefore reaches
// every rounding decision that the 2^32 set reaches, for every format and
// deterministic policy. Stochastic rounding, whose decision also reads the low
// bits against a random draw, is sampled on both sets alike.
struct DecisionFloats {
  static constexpr std::uint32_t kLow12[16] = {0x000, 0x001, 0x002, 0x004, 0x008, 0x010,
                                               0x020, 0x040, 0x080, 0x100, 0x200, 0x400,
                                               0x800, 0x7FF, 0x801, 0xFFF};
  static constexpr int kDecidingBits = 20;
  static constexpr std::uint64_t count = std::uint64_t{1} << (kDecidingBits + 4);
  static std::uint32_t bits(std::uint64_t i) {
    return static_cast<std::uint32_t>(i >> 4) << 12 | kLow12[i & 15];
  }
  // The decision inputs that lie in the chunk [begin, begin + n) of AllFloats
  // (begin and n multiples of 2^12) are the indices [first, first + n / 256):
  // 16 patterns for each of the chunk's n / 2^12 values of the top 20 bits.
  static constexpr std::uint64_t first_in_chunk(std::uint64_t begin) { return begin >> 8; }
  static constexpr std::uint64_t count_in_chunk(std::uint64_t n) { return n >> 8; }
};
static_assert(DecisionFloats::count == AllFloats::count >> 8);

// The quick set: every value of the top 16 bits (sign, exponent, 7 mantissa
// bits) with ten low halves that land on, just below and just above the ties
// of fp16 (bit 12) and bf16 (bit 15), plus one scrambled low half.
struct QuickFloats {
  static constexpr std::uint32_t kLow[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001,
                                           0x7FFF, 0x8000, 0x8001, 0xFFFF};
  static constexpr std::uint64_t kPer = sizeof(kLow) / sizeof(kLow[0]) + 1;
  static constexpr std::uint64_t count = kPer << 16;
  static std::uint32_t bits(std::uint64_t i) {
    const auto hi = static_cast<std::uint32_t>(i / kPer) << 16;
    const std::uint64_t k = i % kPer;
    return hi | (k < kPer - 1 ? kLow[k] : (mix32(i) & 0xFFFF));
  }
};

// What a sweep covers: the range inputs (every conversion CUDA offers, and the
// bulk kernels on the native SIMD target under the range policies) and the
// decision inputs (the independent reference under every policy, and every
// SIMD target). Full: AllFloats and DecisionFloats, the decision inputs of a
// chunk inside it. Quick: QuickFloats for both.
struct SweepExtent {
  bool full;

  // LPLAB_SWEEP=full selects the full extent (the exhaustive label sets it).
  static SweepExtent from_environment() {
    const char* v = std::getenv("LPLAB_SWEEP");
    return {v != nullptr && std::strcmp(v, "full") == 0};
  }
  std::uint64_t range_count() const { return full ? AllFloats::count : QuickFloats::count; }
  std::uint32_t range_bits(std::uint64_t i) const {
    return full ? AllFloats::bits(i) : QuickFloats::bits(i);
  }
  std::uint64_t decision_count() const { return full ? DecisionFloats::count : QuickFloats::count; }
  std::uint32_t decision_bits(std::uint64_t k) const {
    return full ? DecisionFloats::bits(k) : QuickFloats::bits(k);
  }
  // The decision indices handled with the range chunk [begin, begin + n).
  std::uint64_t decision_first(std::uint64_t begin) const {
    return full ? DecisionFloats::first_in_chunk(begin) : begin;
  }
  std::uint64_t decision_count_in(std::uint64_t n) const {
    return full ? DecisionFloats::count_in_chunk(n) : n;
  }
  const char* name() const { return full ? "full" : "quick"; }
};

}  // namespace lplab::testing
