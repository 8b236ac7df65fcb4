// An oracle for float16 and bfloat16 arithmetic that shares no code with
// lplab: the machine's binary64 arithmetic, rounded to odd, then rounded once
// into the 16-bit format by a routine written here.
//
// Why this is exact. Round-to-odd (round toward zero, and set the last
// significand bit when the result was inexact) at precision q, followed by a
// rounding to precision p in any deterministic mode, equals a direct rounding
// to precision p when q >= 2p + 2 (Boldo & Melquiond, "Emulation of FMA and
// correctly rounded sums: proved algorithms using rounding to odd", IEEE
// Trans. Computers 57(4), 2008, Theorem 1). Here q = 53 and p <= 11:
// 53 >= 2 * 11 + 2 = 24.
//
// No binary64 overflow or underflow occurs for 16-bit operands. bfloat16 has
// the wider range, magnitudes 2^-133 (smallest subnormal) to just below 2^128:
// products lie within 2^(-133 - 133) = 2^-266 .. 2^(128 + 128) = 2^256,
// quotients within 2^(-133 - 128) = 2^-261 .. 2^(128 + 133) = 2^261, sums below
// 2^129, square roots within 2^-66.5 .. 2^64; binary64's normal range is
// 2^-1022 .. 2^1024. The residuals below (a - q*b, a - s*s, the TwoSum error)
// are at least 2^-52 of the smallest result times the smallest operand, about
// 2^(-261 - 52 - 133) = 2^-446, still normal.
//
// Two routes to the round-to-odd result:
//  - ro_fenv: the literal one. Round toward zero through <cfenv> and read the
//    inexact flag after each operation. Its caller is compiled with
//    -frounding-math (arith_oracle_fenv.cpp), and the operands and result
//    pass through volatile objects so that the operation stays between the
//    flag calls.
//  - ro_residual: the fast one used by the sweeps. Round to nearest (the
//    default environment), and learn the exact result's side from an exact
//    residual: the error of a sum (TwoSum, Knuth TAOCP vol. 2, 4.2.2), of a
//    quotient a - q*b and of a square root a - s*s (both exactly representable
//    for a round-to-nearest q or s; Boldo & Daumas, "Representable correcting
//    terms for possibly underflowing floating point operations", ARITH 2003),
//    formed exactly: the quotient's with one fma where the machine has it,
//    else from a split of q (the operands have at most 11 significant bits),
//    the square root's with one fma. Products of 16-bit values are exact in
//    binary64 (at most 11 + 11 = 22 significant bits). The sweeps run it
//    over blocks of operands (arith_oracle_block.h), vectorized. The test
//    residual_sticky_equals_fenv_flags holds the routes equal.
#pragma once

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>

#include "lplab/formats/policy.h"  // lplab::Round: the names of the modes only

namespace lplab::testing::oracle {

// How a format's 16 bits are laid out: IEEE 754-2019 binary16, or the upper
// half of a binary32.
enum class Layout { binary16, bfloat16 };

// The parameters of a binary interchange-style format (IEEE 754-2019 3.3),
// written out here rather than taken from lplab's descriptors; the test file
// cross-checks them against lplab's finfo.
struct Format16 {
  const char* name;
  int precision;  // p, the implicit bit included
  int emin;       // exponent of the smallest normal
  int emax;       // exponent of the largest finite value
  double max;     // (2 - 2^(1-p)) * 2^emax
  Layout layout;
};

inline constexpr Format16 kFloat16{"float16", 11, -14, 15,
                                   (2.0 - 0x1p-10) * 0x1p15,  // 65504
                                   Layout::binary16};
inline constexpr Format16 kBfloat16{"bfloat16", 8, -126, 127,
                                    (2.0 - 0x1p-7) * 0x1p127,  // 0x1.fep127
                                    Layout::bfloat16};

inline constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
inline constexpr std::uint64_t kExpField = std::uint64_t{0x7ff} << 52;
inline constexpr std::uint64_t kFracField = (std::uint64_t{1} << 52) - 1;

[[gnu::always_inline]] inline std::uint64_t bits_of(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

// float16 code -> double: sign | 5 exponent bits (bias 15) | 10 fraction bits.
// Without branches: the sweeps decode lplab's results a block at a time.
// 1. Subnormals and zeros (exponent field 0): frac * 2^(1 - 15 - 10), exact;
//    frac as a double from the pattern of 2^52 + frac (all in one vector
//    lane width, unlike an integer conversion).
// 2. Normals: the exponent rebiased from 15 to 1023, the fraction moved up
//    by 52 - 10 = 42 bits.
// 3. Infinities and NaNs (exponent field 31): binary64's, the fraction moved
//    up likewise (a NaN stays a NaN, its quiet bit on binary64's).
// 4. The sign, bit 15 moved to bit 63.
[[gnu::always_inline]] inline double decode_float16(std::uint16_t code) {
  const std::uint64_t exp = (code >> 10) & 0x1f;
  const std::uint64_t frac = code & 0x3ff;
  const double frac_value = std::bit_cast<double>(bits_of(0x1p52) | frac) - 0x1p52;
  const double tiny = frac_value * 0x1p-24;                                             // 1
  const std::uint64_t normal = (exp + (1023 - 15)) << 52 | frac << 42;                 // 2
  const std::uint64_t special = kExpField | frac << 42;                                // 3
  const std::uint64_t mag =
      exp == 0 ? std::bit_cast<std::uint64_t>(tiny) : exp == 0x1f ? special : normal;
  return std::bit_cast<double>(mag | static_cast<std::uint64_t>(code & 0x8000) << 48);  // 4
}

// bfloat16 code -> double: the upper half of a binary32 (exact, NaNs stay NaN).
[[gnu::always_inline]] inline double decode_bfloat16(std::uint16_t code) {
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(code) << 16));
}

inline double decode(Layout layout, std::uint16_t code) {
  return layout == Layout::binary16 ? decode_float16(code) : decode_bfloat16(code);
}

enum class Op { add, sub, mul, div, sqrt };

inline const char* op_name(Op op) {
  switch (op) {
    case Op::add: return "add";
    case Op::sub: return "sub";
    case Op::mul: return "mul";
    case Op::div: return "div";
    case Op::sqrt: return "sqrt";
  }
  return "?";
}

// x with its last significand bit set (x finite, nonzero).
inline double set_odd(double x) {
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) | 1);
}

// Round-to-odd of a op b through the floating-point environment. The caller
// holds the rounding direction at FE_TOWARDZERO (RoundTowardZero below).
inline double ro_fenv(Op op, double a, double b) {
  volatile double va = a, vb = b;
  std::feclearexcept(FE_INEXACT);
  double r = 0;
  switch (op) {
    case Op::add: r = va + vb; break;
    case Op::sub: r = va - vb; break;
    case Op::mul: r = va * vb; break;
    case Op::div: r = va / vb; break;
    case Op::sqrt: r = std::sqrt(va); break;
  }
  volatile double vr = r;
  const bool inexact = std::fetestexcept(FE_INEXACT) != 0;
  r = vr;
  return inexact ? set_odd(r) : r;
}

// Holds the rounding direction at FE_TOWARDZERO for its lifetime.
class RoundTowardZero {
 public:
  RoundTowardZero() : saved_(std::fegetround()) { std::fesetround(FE_TOWARDZERO); }
  ~RoundTowardZero() { std::fesetround(saved_); }
  RoundTowardZero(const RoundTowardZero&) = delete;
  RoundTowardZero& operator=(const RoundTowardZero&) = delete;

 private:
  int saved_;
};

// The routines from here on are the lanes of the sweeps' block loops
// (arith_oracle_block.cpp): without branches, since the operands' classes and
// the exact results' sides vary from one pair to the next and would defeat
// branch prediction, and always inlined, so that each instruction-set version
// of a block loop carries its own vectorized copy.
// A condition as 0 or 1 in 64 bits. GCC 12 vectorizes a select of integers,
// not a bool widened in the middle of integer arithmetic.
[[gnu::always_inline]] inline std::uint64_t one_if(bool c) { return c ? 1 : 0; }

// Round-to-odd from a round-to-nearest result r and the sign of the exact
// error (exact - r), given as a double whose sign matters (zero: r exact).
// 1. Infinities, NaNs and zeros are kept (a zero quotient or sum is exact;
//    the residual beside them may be NaN, as 0 * inf).
// 2. Exact: r itself.
// 3. The exact value lies beyond r (away from zero): truncation gives r.
// 4. It lies inside: truncation gives r's neighbour toward zero, one less in
//    the magnitude's bit pattern (also across a power of two).
// 5. Inexact: set the last bit.
[[gnu::always_inline]] inline double ro_from_nearest(double r, double error) {
  const std::uint64_t rb = bits_of(r), eb = bits_of(error);
  const std::uint64_t kept = one_if((rb & kExpField) == kExpField) | one_if((rb << 1) == 0);  // 1
  const std::uint64_t inexact = (kept ^ 1) & one_if((eb << 1) != 0);               // 2
  const std::uint64_t inside = inexact & ((eb ^ rb) >> 63);                        // 3, 4
  return std::bit_cast<double>((rb - inside) | inexact);                           // 5
}

// Round-to-odd of a op b from round-to-nearest results and exact residuals.
// kFma: the quotient's residual a - q*b by one fused multiply-add (where the
// machine has one) rather than by the split of q.
template <Op op, bool kFma>
[[gnu::always_inline]] inline double ro_residual(double a, double b) {
  if constexpr (op == Op::sub) {
    return ro_residual<Op::add, kFma>(a, -b);
  } else if constexpr (op == Op::add) {
    const double s = a + b;  // TwoSum: err = (a + b) - s exactly
    const double bv = s - a;
    const double av = s - bv;
    return ro_from_nearest(s, (a - av) + (b - bv));
  } else if constexpr (op == Op::mul) {
    return a * b;  // exact
  } else if constexpr (op == Op::div) {
    // The exact error a/b - q has the sign of (a - q*b) * b.
    const double q = a / b;
    double rem;
    if constexpr (kFma) {
      rem = std::fma(-q, b, a);
    } else {
      // a - q*b in two exact steps, q = q_hi + q_lo with q_lo the low 11 bits
      // of q's significand: q_hi * b and q_lo * b have at most 42 + 11 and
      // 11 + 11 bits; a - q_hi * b is exact by Sterbenz's lemma (q_hi * b =
      // a * (1 +- 2^-40)), and the residual is representable.
      const std::uint64_t low11 = 0x7ff;  // 2^11 - 1
      const double q_hi = std::bit_cast<double>(bits_of(q) & ~low11);
      const double q_lo = q - q_hi;
      rem = (a - q_hi * b) - q_lo * b;
    }
    return ro_from_nearest(q, std::bit_cast<double>(bits_of(rem) ^ (bits_of(b) & kSignBit)));
  } else {
    const double s = std::sqrt(a);
    return ro_from_nearest(s, std::fma(-s, s, a));  // a - s*s, sign of sqrt(a) - s
  }
}

// The same with the op chosen at run time (b unused for sqrt).
inline double ro_residual(Op op, double a, double b) {
  switch (op) {
    case Op::add: return ro_residual<Op::add, false>(a, b);
    case Op::sub: return ro_residual<Op::sub, false>(a, b);
    case Op::mul: return ro_residual<Op::mul, false>(a, b);
    case Op::div: return ro_residual<Op::div, false>(a, b);
    case Op::sqrt: return ro_residual<Op::sqrt, false>(a, b);
  }
  return NAN;
}

// IEEE 754-2019 6.3: an exact zero sum of operands of opposite signs (or
// x - x) is +0 in every mode but roundTowardNegative, where it is -0. Both
// round-to-odd routes compute in another mode, where such a sum is +0 and
// -0 + -0 is -0: rounding downward, every exact zero sum but +0 + +0 is -0.
template <Op op, Round mode>
[[gnu::always_inline]] inline double zero_sum_sign(double a, double b, double ro) {
  if constexpr ((op != Op::add && op != Op::sub) || mode != Round::downward) {
    return ro;
  } else {
    const std::uint64_t rb = bits_of(ro);
    const std::uint64_t b_as_added = bits_of(b) ^ (op == Op::sub ? kSignBit : 0);
    const std::uint64_t negate = one_if((rb << 1) == 0) & one_if((bits_of(a) | b_as_added) != 0);
    return std::bit_cast<double>(rb | negate << 63);
  }
}

// Rounds a double (here a round-to-odd result) into the format in the mode,
// with IEEE overflow (IEEE 754-2019 4.3 and 7.4), in integer arithmetic on
// the bit pattern:
//
//   |x| = sig * 2^(e - 52),  sig = 1ffff...f (53 bits: the implicit 1, 52 stored)
//   quantum 2^qexp,  qexp = max(e, emin) - (p - 1)
//   sig = [ q | g | s...s ],  the low d = qexp - (e - 52) bits [ g | s...s ]
//                             below the quantum: the guard bit g (half a
//                             quantum) and the sticky bits s
//
// d >= 52 - (p - 1), 42 for float16. Past d = 54 the value is below half a
// quantum and q = g = 0, so d is capped at 63, where sig < 2^53 still lies
// in the sticky bits.
// 1. NaN, infinities and zeros are kept (selected at the end; the steps
//    between compute garbage for them, with every shift count in 1..63).
// 2. Split sig at the quantum. Every shift has a variable on both sides:
//    GCC 12 vectorizes no constant shifted by a per-lane count.
// 3. Round the magnitude up? Above half a quantum: g and some s; a tie: g
//    alone. The sign turns upward and downward into "away from zero" or
//    "toward zero".
// 4. The result (q + up) * quantum as a bit pattern. For d <= 52 the
//    quantum is a bit of |x|'s pattern: clear the bits below it and add up
//    there, a carry running on into the exponent field as it should (q + up =
//    2^(53 - d) is the next power of two). For d > 52, |x| is below one
//    quantum, and the result is 0 or the quantum itself.
// 5. Overflow (positive doubles order as their bit patterns): nearest modes
//    and rounding away from zero give infinity, rounding toward zero max.
// 6. The sign of x, also on a zero (a tiny result keeps its sign).
template <Round mode>
[[gnu::always_inline]] inline double round_to(const Format16& f, double x) {
  static_assert(mode != Round::stochastic, "stochastic rounding has no single right answer");
  const std::uint64_t bits = bits_of(x);
  const std::uint64_t neg = bits >> 63;
  const std::uint64_t mag = bits & ~kSignBit;
  const std::uint64_t kept = one_if((mag & kExpField) == kExpField) | one_if(mag == 0);  // 1
  const std::int64_t e = static_cast<std::int64_t>(mag >> 52) - 1023;
  const std::uint64_t sig = (mag & kFracField) | (kFracField + 1);
  const std::int64_t qexp = (e > f.emin ? e : f.emin) - (f.precision - 1);       // 2
  const std::uint64_t d = static_cast<std::uint64_t>(qexp - (e - 52) < 63 ? qexp - (e - 52) : 63);
  const std::uint64_t q = sig >> d;
  const std::uint64_t q_g = sig >> (d - 1);
  const std::uint64_t g = q_g & 1;
  const std::uint64_t s = one_if(q_g << (d - 1) != sig);
  std::uint64_t up = 0;                                                          // 3
  if constexpr (mode == Round::nearest_even) up = g & (s | q);
  if constexpr (mode == Round::nearest_away) up = g;
  if constexpr (mode == Round::upward) up = (neg ^ 1) & (g | s);
  if constexpr (mode == Round::downward) up = neg & (g | s);
  const std::uint64_t above = ((mag >> d) + up) << d;                            // 4
  const std::uint64_t quantum = static_cast<std::uint64_t>(qexp + 1023) << 52;
  const std::uint64_t rb = d <= 52 ? above : (std::uint64_t{0} - up) & quantum;
  std::uint64_t to_max = 0;                                                      // 5
  if constexpr (mode == Round::toward_zero) to_max = 1;
  if constexpr (mode == Round::upward) to_max = neg;
  if constexpr (mode == Round::downward) to_max = neg ^ 1;
  const std::uint64_t max = bits_of(f.max), inf = bits_of(INFINITY);
  const std::uint64_t ob = inf ^ ((inf ^ max) & (std::uint64_t{0} - to_max));
  const std::uint64_t over = std::uint64_t{0} - one_if(rb > max);
  const std::uint64_t rounded = (rb ^ ((rb ^ ob) & over)) | neg << 63;          // 6
  return std::bit_cast<double>(rounded ^ ((rounded ^ bits) & (std::uint64_t{0} - kept)));
}

// round_to<Round::nearest_even> by the machine's own binary64 addition, in
// the default environment (round to nearest, ties to even), for the sweeps'
// block loops: about a third of round_to's instructions. With the quantum
// 2^k as above, sigma = 1.5 * 2^(k + 52) has ulp 2^k, and |x| < 2^(k + p) <=
// 2^(k + 11) keeps sigma + |x| in sigma's binade: the sum is rounded at the
// quantum, to nearest, a tie to the even multiple (sigma is a multiple of
// 2^(k + 51), so the parity is q's); subtracting sigma again is exact
// (Sterbenz). A tie at max + half a quantum goes to 2^(emax + 1) (max is
// odd), which overflows as it should.
// 1. NaN, infinities and zeros are kept (selected at the end).
// 2. sigma from the quantum's biased exponent max(e, emin) - (p - 1).
// 3. Round |x|. 4. Overflow to infinity. 5. The sign of x.
[[gnu::always_inline]] inline double round_nearest_even_by_addition(const Format16& f, double x) {
  const std::uint64_t bits = bits_of(x);
  const std::uint64_t mag = bits & ~kSignBit;
  const std::uint64_t kept = one_if((mag & kExpField) == kExpField) | one_if(mag == 0);  // 1
  const std::uint64_t biased_e = mag >> 52;                                             // 2
  const std::uint64_t biased_emin = static_cast<std::uint64_t>(f.emin + 1023);
  const std::uint64_t biased_k =
      (biased_e > biased_emin ? biased_e : biased_emin) - static_cast<std::uint64_t>(f.precision - 1);
  const double sigma = std::bit_cast<double>((biased_k + 52) << 52 | std::uint64_t{1} << 51);
  const std::uint64_t rb = bits_of((std::bit_cast<double>(mag) + sigma) - sigma);      // 3
  const std::uint64_t inf = bits_of(INFINITY);
  const std::uint64_t over = std::uint64_t{0} - one_if(rb > bits_of(f.max));           // 4
  const std::uint64_t rounded = (rb ^ ((rb ^ inf) & over)) | (bits & kSignBit);        // 5
  return std::bit_cast<double>(rounded ^ ((rounded ^ bits) & (std::uint64_t{0} - kept)));
}

// The oracle's value of a op b (b unused for sqrt) in the format and mode.
template <Op op, Round mode>
inline double expected(const Format16& f, double a, double b) {
  return round_to<mode>(f, zero_sum_sign<op, mode>(a, b, ro_residual<op, false>(a, b)));
}

// The same with the op and mode chosen at run time.
template <Op op>
inline double expected(const Format16& f, Round mode, double a, double b) {
  switch (mode) {
    case Round::nearest_even: return expected<op, Round::nearest_even>(f, a, b);
    case Round::nearest_away: return expected<op, Round::nearest_away>(f, a, b);
    case Round::toward_zero: return expected<op, Round::toward_zero>(f, a, b);
    case Round::upward: return expected<op, Round::upward>(f, a, b);
    case Round::downward: return expected<op, Round::downward>(f, a, b);
    case Round::stochastic: break;  // not deterministic: no single right answer
  }
  return NAN;
}

inline double expected(const Format16& f, Op op, Round mode, double a, double b) {
  switch (op) {
    case Op::add: return expected<Op::add>(f, mode, a, b);
    case Op::sub: return expected<Op::sub>(f, mode, a, b);
    case Op::mul: return expected<Op::mul>(f, mode, a, b);
    case Op::div: return expected<Op::div>(f, mode, a, b);
    case Op::sqrt: return expected<Op::sqrt>(f, mode, a, b);
  }
  return NAN;
}

}  // namespace lplab::testing::oracle
