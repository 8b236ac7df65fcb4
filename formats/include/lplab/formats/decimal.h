// Numbers written in text, rounded once (host only).
//
// Reading "1.0625000000000000000001" into a double first and converting that
// double to E4M3 rounds twice: the double is 1.0625, a tie, which goes to
// even (1.0625 -> 0x38), while the number itself lies above the tie and
// rounds to 1.125 (0x39). parse_decimal keeps enough of the number for one
// rounding into any format up to binary32, under every policy:
//
//   1. Parse twice with the C library's correctly rounded strtold (80-bit
//      long double: 64 significand bits, exponents down to 2^-16445), once
//      toward zero (t) and once away from zero (u). The number is exact in
//      long double iff t == u; otherwise it lies strictly between them.
//   2. Keep t's top 61 bits and jam everything below -- t's last 3 bits and
//      the inexactness of step 1 -- into the last kept bit (the jammed
//      sticky bit of arith.h's Exact form).
//   3. Round that with round_pack, as arithmetic does. The jammed bit lies
//      60 - 23 = 37 bits below binary32's last bit: the nearest and directed
//      modes need two of them, and stochastic rounding's fraction the 32 bits
//      below the last bit, which truncation (t) gives exactly.
//
// Numbers beyond long double's range (1e5000) are still numbers: the magnitude
// is kept as "above every format's range" or "below every format's smallest
// subnormal" with its sign, and rounds to overflow or underflow under the
// policy, with the flags.
#pragma once

#include <cerrno>
#include <cfenv>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "lplab/formats/arith.h"

namespace lplab {

static_assert(LDBL_MANT_DIG >= 64, "parse_decimal needs a long double of at least 64 significand bits");

// A number read from text: value = (-1)^neg * sig * 2^(e - 60), 2^60 <= sig <
// 2^61, with any nonzero part below sig's last bit jammed into that bit.
struct Decimal {
  ValueKind kind = ValueKind::zero;
  bool neg = false;
  std::uint64_t sig = 0;
  int e = 0;
  // The double nearest the number (round to nearest even): inf or 0 beyond
  // double's range. For display; conversions use the exact form.
  double nearest = 0;
  // The long doubles either side: toward_zero <= number <= away_from_zero,
  // equal iff the number is a long double (beyond long double's range, the
  // largest finite and inf, or 0 and the smallest subnormal).
  long double toward_zero = 0, away_from_zero = 0;
};

namespace detail {

class RoundingModeScope {
 public:
  explicit RoundingModeScope(int mode) : saved_(std::fegetround()) { std::fesetround(mode); }
  ~RoundingModeScope() { std::fesetround(saved_); }
  RoundingModeScope(const RoundingModeScope&) = delete;
  RoundingModeScope& operator=(const RoundingModeScope&) = delete;

 private:
  int saved_;
};

// strtold of the whole text under one rounding mode; nullopt unless every
// character is part of the number.
inline std::optional<long double> strtold_whole(const std::string& s, int mode) {
  const RoundingModeScope scope(mode);
  char* end = nullptr;
  errno = 0;
  const long double v = std::strtold(s.c_str(), &end);
  if (end == s.c_str() || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

}  // namespace detail

// Reads a decimal ("0.1", "-1e-400"), hexadecimal ("0x1p-7"), "inf" or "nan"
// number, the whole text and nothing else; nullopt when the text is not one.
inline std::optional<Decimal> parse_decimal(std::string_view text) {
  const std::string s(text);
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return std::nullopt;
  const std::optional<long double> t = detail::strtold_whole(s, FE_TOWARDZERO);
  if (!t) return std::nullopt;
  Decimal d;
  d.nearest = std::strtod(s.c_str(), nullptr);  // round to nearest even: the default mode
  d.neg = std::signbit(*t);
  if (std::isnan(*t)) {
    d.toward_zero = d.away_from_zero = *t;
    d.kind = detail::Kind::nan;
    return d;
  }
  // Step 1: the other bracket; the text has a sign the parse kept in t.
  const long double u = *detail::strtold_whole(s, d.neg ? FE_DOWNWARD : FE_UPWARD);
  d.toward_zero = *t;
  d.away_from_zero = u;
  const long double mag_t = std::fabs(*t), mag_u = std::fabs(u);
  if (std::isinf(mag_t)) {  // "inf": toward zero, an overflow stays finite
    d.kind = detail::Kind::infinite;
    return d;
  }
  if (mag_u == 0) {  // t == u == 0: an exact zero
    d.kind = detail::Kind::zero;
    return d;
  }
  d.kind = detail::Kind::finite;
  constexpr int kFrac = detail::kFrac;  // 60
  if (std::isinf(mag_u)) {
    // Above LDBL_MAX = 2^16384 (1 - 2^-64): the largest 61-bit significand at
    // an exponent past every format's, jammed (inexact).
    d.sig = (std::uint64_t{1} << (kFrac + 1)) - 1;
    d.e = LDBL_MAX_EXP;
    return d;
  }
  if (mag_t == 0) {
    // Below LDBL_TRUE_MIN = 2^-16445: a jammed nonzero far below every
    // format's smallest subnormal.
    d.sig = (std::uint64_t{1} << kFrac) | 1;
    d.e = LDBL_MIN_EXP - LDBL_MANT_DIG - 2;
    return d;
  }
  // Step 2: t = m * 2^x, 1/2 <= m < 1, m * 2^64 a 64-bit integer.
  int x = 0;
  const long double m = std::frexp(mag_t, &x);
  const auto sig64 = static_cast<std::uint64_t>(std::ldexp(m, 64));
  constexpr int kDrop = 64 - (kFrac + 1);  // 3 bits below the 61 kept
  const bool sticky = (sig64 & ((std::uint64_t{1} << kDrop) - 1)) != 0 || mag_t != mag_u;
  d.sig = (sig64 >> kDrop) | (sticky ? 1 : 0);
  // value = sig64 * 2^(x - 64) = (sig64 >> 3) * 2^(x - 61) = sig * 2^(e - 60).
  d.e = x - 1;
  return d;
}

// Rounds a parsed number into T once, under the given policies (as
// convert<T> does for a double).
template <Convertible T>
T convert(const Decimal& d, Round r = Round::nearest_even, Overflow o = Overflow::ieee,
          Flags* flags = nullptr, std::uint32_t random = 0) {
  constexpr Descriptor D = detail::format_of<T>::value;
  static_assert(detail::Layout<D>::M + 32 + 2 <= detail::kFrac,
                "the jammed bit must lie below stochastic rounding's 32 fraction bits");
  using detail::Kind;
  switch (d.kind) {
    case Kind::nan: return convert<T>(d.neg ? -NAN : NAN, r, o, flags, random);
    case Kind::infinite: return convert<T>(d.neg ? -INFINITY : INFINITY, r, o, flags, random);
    case Kind::zero: return convert<T>(d.neg ? -0.0 : 0.0, r, o, flags, random);
    case Kind::finite: break;
  }
  return detail::from_code<T>(
      detail::round_pack<D, detail::kFrac, std::uint64_t>(d.neg, d.sig, d.e, r, o, random, flags));
}

}  // namespace lplab
