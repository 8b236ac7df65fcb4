// Float input sets for the conversion sweeps.
#pragma once

#include <cstdint>

#include "support/reference.h"

#ifndef LPLAB_EXHAUSTIVE
#define LPLAB_EXHAUSTIVE 0
#endif

namespace lplab::testing {

// Every float bit pattern: 2^32 inputs.
struct AllFloats {
  static constexpr std::uint64_t count = std::uint64_t{1} << 32;
  static std::uint32_t bits(std::uint64_t i) { return static_cast<std::uint32_t>(i); }
};

// Every value of the top 24 bits (sign, exponent, 15 mantissa bits) with 16
// low bytes: 2^28 inputs. For every format of up to 16 bits the half-ulp bit of
// a float input is bit 12 or higher (fp16 normals: bit 12; bf16: bit 15; fp8,
// fp6, fp4 and subnormal results: higher), so the low byte only ever feeds the
// sticky bit and the low end of the stochastic fraction: this set reaches
// every rounding decision the 2^32 set reaches, at a sixteenth of the cost.
struct DecisionSpaceFloats {
  static constexpr std::uint32_t kLow[] = {0x00, 0x01, 0x02, 0x7F, 0x80, 0x81, 0xFE, 0xFF};
  static constexpr std::uint64_t count = std::uint64_t{1} << 28;
  static std::uint32_t bits(std::uint64_t i) {
    const auto hi = static_cast<std::uint32_t>(i >> 4) << 8;
    const std::uint64_t k = i & 15;
    return hi | (k < 8 ? kLow[k] : (mix32(i) & 0xFF));
  }
};

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

#if LPLAB_EXHAUSTIVE
using OracleInputs = AllFloats;             // CUDA's conversions: all 2^32 inputs
using ReferenceInputs = DecisionSpaceFloats;  // 10 formats x 12 policies: 2^28 inputs
#else
using OracleInputs = QuickFloats;
using ReferenceInputs = QuickFloats;
#endif

}  // namespace lplab::testing
