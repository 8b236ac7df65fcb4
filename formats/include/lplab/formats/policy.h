// Rounding and overflow policies, and the exception flags an operation may
// raise. Policies are explicit per call; the library never reads or writes the
// floating-point environment of the machine.
#pragma once

#include <cstdint>

#include "lplab/formats/config.h"

namespace lplab {

// Rounding-direction attributes of IEEE 754-2019 section 4.3, plus stochastic
// rounding. `nearest_away` is roundTiesToAway (4.3.1).
enum class Round : std::uint8_t {
  nearest_even,  // roundTiesToEven: the default of IEEE 754, PyTorch and ml_dtypes
  nearest_away,  // roundTiesToAway
  toward_zero,   // roundTowardZero (truncation)
  upward,        // roundTowardPositive
  downward,      // roundTowardNegative
  // Stochastic rounding with caller-supplied random bits R (32 of them): let f
  // in [0, 1) be the discarded fraction of an ulp; the magnitude is rounded
  // away from zero iff floor(f * 2^32) + R >= 2^32. For a uniform R that
  // happens with probability floor(f * 2^32) / 2^32, i.e. f whenever at most 32
  // bits are discarded. The same R always gives the same result.
  stochastic,
};

// What a finite result too large for the format becomes.
enum class Overflow : std::uint8_t {
  // IEEE 754-2019 section 7.4: nearest rounding overflows to infinity; the
  // directed roundings that point back toward zero give the largest finite
  // number. A format without infinity gives NaN instead where it has one
  // (OCP OFP8 E4M3: "no infinities, saturate or NaN"), and saturates where it
  // has neither (OCP MX FP6/FP4). Infinite inputs stay infinite where possible.
  ieee,
  // Saturate to the largest finite magnitude, infinite inputs included: CUDA's
  // __NV_SATFINITE and PTX's .satfinite.
  saturate,
};

// Every policy, in the enums' order: what the tool, specs, baselines and
// tests enumerate. A new rounding is its enumerator, an entry here, its name
// and aliases below, and its increment (round.h; the bulk kernels'
// convert-inl.h).
inline constexpr Round kRounds[] = {Round::nearest_even, Round::nearest_away, Round::toward_zero,
                                    Round::upward,       Round::downward,     Round::stochastic};
inline constexpr Overflow kOverflows[] = {Overflow::ieee, Overflow::saturate};

// The policies' names, as the tool, specs and test messages spell them.
LPLAB_HD constexpr const char* round_name(Round r) noexcept {
  switch (r) {
    case Round::nearest_even: return "nearest_even";
    case Round::nearest_away: return "nearest_away";
    case Round::toward_zero: return "toward_zero";
    case Round::upward: return "upward";
    case Round::downward: return "downward";
    case Round::stochastic: return "stochastic";
  }
  return "?";
}
LPLAB_HD constexpr const char* overflow_name(Overflow o) noexcept {
  return o == Overflow::ieee ? "ieee" : "saturate";
}

// The other spellings the tool and specs accept (nullptr ends the list): the
// short names CUDA's intrinsics use (__float2half_rn, _rz, _ru, _rd), PTX's
// rounding modifiers (.rn, .rna, .rz, .rp, .rm, .rs of the PTX ISA's cvt)
// and CUDA's __NV_SATFINITE.
struct PolicyAliases {
  const char* names[3] = {};
};
constexpr PolicyAliases round_aliases(Round r) noexcept {
  switch (r) {
    case Round::nearest_even: return {{"rne", "rn"}};
    case Round::nearest_away: return {{"rna"}};
    case Round::toward_zero: return {{"rz"}};
    case Round::upward: return {{"ru", "rp"}};
    case Round::downward: return {{"rd", "rm"}};
    case Round::stochastic: return {{"sr", "rs"}};
  }
  return {};
}
constexpr PolicyAliases overflow_aliases(Overflow o) noexcept {
  return o == Overflow::saturate ? PolicyAliases{{"satfinite"}} : PolicyAliases{};
}

// Exception flags, sticky like IEEE 754-2019 section 7 status flags but held
// by the caller instead of global state.
enum class Flag : std::uint8_t {
  inexact = 1u << 0,    // the result differs from the exact value
  underflow = 1u << 1,  // the result is tiny and inexact (IEEE 754-2019 7.5, default
                        // non-trapping handling): the exact value is nonzero, differs from
                        // the result, and the result is subnormal or zero (or, in a format
                        // without subnormals, the exact value lies below its smallest value,
                        // which it rounds or is clamped up to). An exact subnormal result
                        // (2^-24 into float16) raises nothing. Tininess is judged on the
                        // delivered result: a value that rounds up to the smallest normal is
                        // not tiny (IEEE's unbounded-exponent "after rounding" rule also calls
                        // it tiny when that rounding alone stays below, e.g. 2^-14 - 2^-25
                        // into float16: lplab raises inexact only)
  overflow = 1u << 2,   // the exact value exceeded the format's finite range
  invalid = 1u << 3,    // a NaN was produced from non-NaN operands (0/0, inf-inf, sqrt(-1),
                        // e4m3fn overflow, zero or a negative into e8m0), or a NaN had to
                        // become a number (NaN into FP6/FP4, which have no NaN)
};

struct Flags {
  std::uint8_t bits = 0;

  LPLAB_HD constexpr void raise(Flag f) noexcept { bits |= static_cast<std::uint8_t>(f); }
  LPLAB_HD constexpr bool test(Flag f) const noexcept {
    return (bits & static_cast<std::uint8_t>(f)) != 0;
  }
  LPLAB_HD constexpr bool inexact() const noexcept { return test(Flag::inexact); }
  LPLAB_HD constexpr bool underflow() const noexcept { return test(Flag::underflow); }
  LPLAB_HD constexpr bool overflow() const noexcept { return test(Flag::overflow); }
  LPLAB_HD constexpr bool invalid() const noexcept { return test(Flag::invalid); }
  LPLAB_HD constexpr bool any() const noexcept { return bits != 0; }
  LPLAB_HD constexpr void clear() noexcept { bits = 0; }
  friend constexpr bool operator==(Flags, Flags) = default;
};

namespace detail {
LPLAB_HD constexpr void raise(Flags* flags, Flag f) noexcept {
  if (flags != nullptr) flags->raise(f);
}
}  // namespace detail

}  // namespace lplab
