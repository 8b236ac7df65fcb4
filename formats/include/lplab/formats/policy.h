// Rounding and overflow policies, and the exception flags an operation may
// raise. Policies are explicit per call; the library never reads or writes the
// floating-point environment of the machine.
#pragma once

#include <cstdint>
#include <string_view>

#include "lplab/formats/config.h"
#include "lplab/formats/enum_table.h"

namespace lplab {

// Rounding-direction attributes of IEEE 754-2019 section 4.3, plus stochastic
// rounding: X(name, meaning, other spellings). The other spellings are the
// short names CUDA's intrinsics use (__float2half_rn, _rz, _ru, _rd) and
// PTX's rounding modifiers (.rn, .rna, .rz, .rp, .rm, .rs of the PTX ISA's
// cvt). A new rounding is its line here and its increment (round.h; the bulk
// kernels' convert-inl.h).
//
// Stochastic rounding takes caller-supplied random bits R (32 of them): let f
// in [0, 1) be the discarded fraction of an ulp; the magnitude is rounded
// away from zero iff floor(f * 2^32) + R >= 2^32. For a uniform R that
// happens with probability floor(f * 2^32) / 2^32, i.e. f whenever at most 32
// bits are discarded. The same R always gives the same result.
#define LPLAB_ROUNDINGS(X)                                                                         \
  X(nearest_even, "roundTiesToEven: the default of IEEE 754, PyTorch and ml_dtypes", "rne", "rn") \
  X(nearest_away, "roundTiesToAway (IEEE 754-2019 4.3.1)", "rna")                                 \
  X(toward_zero, "roundTowardZero (truncation)", "rz")                                            \
  X(upward, "roundTowardPositive", "ru", "rp")                                                    \
  X(downward, "roundTowardNegative", "rd", "rm")                                                  \
  X(stochastic, "away from zero with probability the discarded fraction (32 random bits)", "sr", "rs")

enum class Round : std::uint8_t { LPLAB_ROUNDINGS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(Round, "rounding", LPLAB_ROUNDINGS)

// What a finite result too large for the format becomes.
//   ieee: IEEE 754-2019 section 7.4: nearest rounding overflows to infinity;
//     the directed roundings that point back toward zero give the largest
//     finite number. A format without infinity gives NaN instead where it has
//     one (OCP OFP8 E4M3: "no infinities, saturate or NaN"), and saturates
//     where it has neither (OCP MX FP6/FP4). Infinite inputs stay infinite
//     where possible.
//   saturate: the largest finite magnitude, infinite inputs included: CUDA's
//     __NV_SATFINITE and PTX's .satfinite. Into an integer format, ieee and
//     saturate both clamp to the range (no infinity, no NaN; PTX cvt .sat).
//   wrap: for integer formats, the low bits of the rounded integer, two's
//     complement, as C converts between integer types and ml_dtypes' astype
//     (which truncates: toward_zero + wrap); NaN and infinities give 0,
//     invalid. A floating-point format has no such rule and takes it as
//     ieee (the tool, specs and Python refuse it there).
#define LPLAB_OVERFLOWS(X)                                                                 \
  X(ieee, "infinity (or NaN, or the largest value, as the format allows; IEEE 754-2019 7.4)") \
  X(saturate, "the largest finite magnitude, infinite inputs included", "satfinite")              \
  X(wrap, "integer formats: the rounded integer's low bits, two's complement (NaN, inf -> 0)", "modular")

enum class Overflow : std::uint8_t { LPLAB_OVERFLOWS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(Overflow, "overflow policy", LPLAB_OVERFLOWS)

// Every policy, in the enums' order: what the tool, specs, baselines and
// tests enumerate.
#define LPLAB_POLICY_VALUE(name, ...) Round::name,
inline constexpr Round kRounds[] = {LPLAB_ROUNDINGS(LPLAB_POLICY_VALUE)};
#undef LPLAB_POLICY_VALUE
#define LPLAB_POLICY_VALUE(name, ...) Overflow::name,
inline constexpr Overflow kOverflows[] = {LPLAB_OVERFLOWS(LPLAB_POLICY_VALUE)};
#undef LPLAB_POLICY_VALUE

// The policies' names, as the tool, specs and test messages spell them (on
// the device too).
#define LPLAB_POLICY_CASE(name, ...) \
  case Round::name: return #name;
LPLAB_HD constexpr const char* round_name(Round r) noexcept {
  switch (r) { LPLAB_ROUNDINGS(LPLAB_POLICY_CASE) }
  return "?";
}
#undef LPLAB_POLICY_CASE
#define LPLAB_POLICY_CASE(name, ...) \
  case Overflow::name: return #name;
LPLAB_HD constexpr const char* overflow_name(Overflow o) noexcept {
  switch (o) { LPLAB_OVERFLOWS(LPLAB_POLICY_CASE) }
  return "?";
}
#undef LPLAB_POLICY_CASE

// The other spellings the tool and specs accept (nullptr ends the list).
struct PolicyAliases {
  const char* names[3] = {};
};
template <class Policy>
constexpr PolicyAliases policy_aliases(Policy p) noexcept {
  PolicyAliases a;
  for (const EnumEntry<Policy>& e : enum_entries<Policy>())
    if (e.value == p)
      for (int i = 0; i < 3; ++i) a.names[i] = e.aliases[i];
  return a;
}
constexpr PolicyAliases round_aliases(Round r) noexcept { return policy_aliases(r); }
constexpr PolicyAliases overflow_aliases(Overflow o) noexcept { return policy_aliases(o); }


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
