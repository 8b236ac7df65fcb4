// An exact reference for rounding into a format, written independently of the
// library's bit-level converter: it knows a format only as the sorted list of
// the real values its codes decode to (decoded here with std::ldexp from the
// descriptor's fields) and rounds a real number by bracketing it between two
// neighbours and comparing it with their midpoint in exact double arithmetic.
// Ties-to-even is decided on the integral significand value / gap, not on bits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "lplab/formats.h"

namespace lplab::testing {

enum class RefClass { number, nan };

struct RefDecoded {
  RefClass cls;
  double value;  // +-inf for infinities
};

// Decodes a code from the descriptor's fields and the encoding rules as the
// specifications state them (IEEE 754-2019 3.4, OCP OFP8 1.0 table 1, OCP MX
// 1.0 section 5), without the library's decode.
inline RefDecoded ref_decode(const Descriptor& d, std::uint64_t code) {
  const int E = d.exponent_bits, M = d.mantissa_bits;
  const bool neg = d.is_signed && ((code >> (E + M)) & 1) != 0;
  const std::uint64_t ef = (code >> M) & ((std::uint64_t{1} << E) - 1);
  const std::uint64_t mf = code & ((std::uint64_t{1} << M) - 1);
  const bool all_ones_exp = ef == (std::uint64_t{1} << E) - 1;
  const bool all_ones_mant = mf == (std::uint64_t{1} << M) - 1;
  switch (d.encoding) {
    case Encoding::ieee:
      if (all_ones_exp) {
        if (mf != 0) return {RefClass::nan, 0};
        return {RefClass::number, neg ? -INFINITY : INFINITY};
      }
      break;
    case Encoding::fn:
      if (all_ones_exp && all_ones_mant) return {RefClass::nan, 0};
      break;
    case Encoding::fnuz:
      if (neg && ef == 0 && mf == 0) return {RefClass::nan, 0};
      break;
    case Encoding::none: break;
    case Encoding::integer: {  // two's complement (signed) or plain binary
      const int bits = M + (d.is_signed ? 1 : 0);
      const std::uint64_t c = code & ((std::uint64_t{1} << bits) - 1);
      const bool negative = d.is_signed && ((c >> M) & 1) != 0;
      return {RefClass::number, static_cast<double>(c) - (negative ? std::ldexp(1.0, bits) : 0.0)};
    }
  }
  double v;
  if (ef == 0 && d.has_subnormals)
    v = std::ldexp(static_cast<double>(mf), 1 - d.bias - M);
  else
    v = std::ldexp(static_cast<double>(mf + (std::uint64_t{1} << M)),
                   static_cast<int>(ef) - d.bias - M);
  return {RefClass::number, neg ? -v : v};
}

// A real number for the reference: NaN, +-inf, +-0, or a finite nonzero value
// d + sign(d) * epsilon where `sticky` says an infinitesimal remainder lies
// beyond d (d itself exact in double).
struct Real {
  bool nan = false;
  double d = 0;
  bool sticky = false;
};

// What the rounded result must be: NaN, or a number (value and sign of zero).
struct Expect {
  bool nan = false;
  double value = 0;
  std::uint8_t flags = 0;
};

// Rounds real numbers into a format by scaling with the quantum of their
// binade and rounding the integer part exactly (all in double, which holds
// every intermediate exactly for formats of up to 32 bits).
class Reference {
 public:
  explicit Reference(const Descriptor& d) : desc_(d) {
    const int total = (d.is_signed ? 1 : 0) + d.exponent_bits + d.mantissa_bits;
    // Largest finite value and whether infinities/NaN/zero exist, found by
    // decoding codes (from the top of the positive range down).
    const std::uint64_t top = (std::uint64_t{1} << (d.exponent_bits + d.mantissa_bits)) - 1;
    for (std::uint64_t c = top;; --c) {
      const RefDecoded r = ref_decode(d, c);
      if (r.cls == RefClass::nan) {
        has_nan_ = true;
      } else if (std::isinf(r.value)) {
        has_inf_ = true;
      } else {
        max_ = r.value;
        break;
      }
    }
    for (std::uint64_t c = 0; c < (std::uint64_t{1} << total) && total <= 16; ++c)
      if (ref_decode(d, c).cls == RefClass::nan) has_nan_ = true;
    if (total > 16 && d.encoding != Encoding::none) has_nan_ = true;
    has_zero_ = ref_decode(d, 0).cls == RefClass::number && ref_decode(d, 0).value == 0;
    has_neg_zero_ = d.is_signed && ref_decode(d, top + 1).cls == RefClass::number;
    emin_ = (d.has_subnormals ? 1 : 0) - d.bias;
    tiny_ = std::ldexp(1.0, emin_);
    min_value_ = ref_decode(d, d.has_subnormals ? 1 : 0).value;
    if (total <= 16) {  // decoded once, for speed in the sweeps
      table_.resize(std::size_t{1} << total);
      for (std::uint64_t c = 0; c < table_.size(); ++c) table_[c] = ref_decode(d, c);
    }
  }

  double max() const { return max_; }

  // Does `code` of the format hold what e says?
  bool matches(const Expect& e, std::uint64_t code) const {
    const RefDecoded r = code < table_.size() ? table_[code] : ref_decode(desc_, code);
    if (e.nan) return r.cls == RefClass::nan;
    return r.cls == RefClass::number && r.value == e.value &&
           std::signbit(r.value) == std::signbit(e.value);
  }

  // The part of rounding that does not depend on the policies.
  struct Prepared {
    enum class Kind { nan, inf, zero, finite } kind;
    bool neg;
    double a;     // |x|
    double q;     // quantum of a's binade (clamped to the lowest binade)
    double n;     // floor(a / q)
    double frac;  // a / q - n, in [0, 1)
    bool sticky;
  };

  Prepared prepare(const Real& x) const {
    if (x.nan) return {Prepared::Kind::nan, false, 0, 0, 0, 0, false};
    const bool neg = std::signbit(x.d);
    const double a = std::fabs(x.d);
    if (std::isinf(a)) return {Prepared::Kind::inf, neg, a, 0, 0, 0, false};
    if (a == 0 && !x.sticky) return {Prepared::Kind::zero, neg, 0, 0, 0, 0, false};
    const int e = std::max(std::ilogb(a), emin_);
    const double q = std::ldexp(1.0, e - desc_.mantissa_bits);
    const double t = a / q;  // exact: a power-of-two scaling
    const double n = std::floor(t);
    return {Prepared::Kind::finite, neg, a, q, n, t - n, x.sticky};
  }

  Expect round(const Prepared& p, Round r, Overflow o, std::uint32_t random = 0) const {
    Expect res;
    auto raise = [&](Flag f) { res.flags |= static_cast<std::uint8_t>(f); };
    switch (p.kind) {
      case Prepared::Kind::nan:
        if (has_nan_) {
          res.nan = true;
        } else {  // no NaN in the format: +max (documented)
          raise(Flag::invalid);
          res.value = max_;
        }
        return res;
      case Prepared::Kind::inf:
        if (p.neg && !desc_.is_signed) return invalid(res);
        if (o == Overflow::ieee && has_inf_) {
          res.value = p.neg ? -INFINITY : INFINITY;
          return res;
        }
        raise(Flag::overflow);
        raise(Flag::inexact);
        return overflow_result(res, p.neg, false, o);
      case Prepared::Kind::zero:
        if (!has_zero_) return invalid(res);
        res.value = (p.neg && has_neg_zero_) ? -0.0 : 0.0;
        return res;
      case Prepared::Kind::finite: break;
    }
    if (p.neg && !desc_.is_signed) return invalid(res);
    const bool exact = p.frac == 0 && !p.sticky;
    bool up = false;
    if (!exact) {
      raise(Flag::inexact);
      const int vs_half = p.frac > 0.5 ? 1 : p.frac < 0.5 ? -1 : (p.sticky ? 1 : 0);
      const bool n_odd = std::fmod(p.n, 2.0) != 0;
      switch (r) {
        case Round::nearest_even: up = vs_half > 0 || (vs_half == 0 && n_odd); break;
        case Round::nearest_away: up = vs_half >= 0; break;
        case Round::toward_zero: up = false; break;
        case Round::upward: up = !p.neg; break;
        case Round::downward: up = p.neg; break;
        case Round::stochastic: {
          const auto f32 = static_cast<std::uint64_t>(std::ldexp(p.frac, 32));  // floor
          up = f32 + random >= (std::uint64_t{1} << 32);
          break;
        }
      }
    }
    const double v = (p.n + (up ? 1 : 0)) * p.q;
    if (v > max_) {
      raise(Flag::overflow);
      raise(Flag::inexact);
      const bool toward_max = r == Round::toward_zero || (r == Round::upward && p.neg) ||
                              (r == Round::downward && !p.neg);
      return overflow_result(res, p.neg, toward_max, o);
    }
    // Underflow (IEEE 754-2019 7.5, default handling): tiny and inexact.
    // Tiny here: the delivered value v is below the smallest normal, or,
    // without a zero (E8M0), the exact value is below the smallest value.
    if (!exact && (v < tiny_ || (!has_zero_ && p.a < tiny_))) raise(Flag::underflow);
    if (v == 0) {
      if (!has_zero_) {  // E8M0: the smallest value instead of zero
        res.value = min_value_;
        return res;
      }
      res.value = (p.neg && has_neg_zero_) ? -0.0 : 0.0;
      return res;
    }
    if (!has_zero_ && v < min_value_) {
      res.value = min_value_;
      return res;
    }
    res.value = p.neg ? -v : v;
    return res;
  }

  Expect round(const Real& x, Round r, Overflow o, std::uint32_t random = 0) const {
    return round(prepare(x), r, o, random);
  }

 private:
  Expect invalid(Expect res) const {
    res.flags |= static_cast<std::uint8_t>(Flag::invalid);
    if (has_nan_) res.nan = true;
    else res.value = max_;
    return res;
  }

  Expect overflow_result(Expect res, bool neg, bool toward_max, Overflow o) const {
    if (o == Overflow::saturate || toward_max || (!has_inf_ && !has_nan_)) {
      res.value = neg ? -max_ : max_;
      return res;
    }
    if (has_inf_) {
      res.value = neg ? -INFINITY : INFINITY;
      return res;
    }
    return invalid(res);
  }

  Descriptor desc_;
  std::vector<RefDecoded> table_;
  bool has_nan_ = false, has_inf_ = false, has_zero_ = false, has_neg_zero_ = false;
  int emin_ = 0;
  double max_ = 0, tiny_ = 0, min_value_ = 0;
};


// A cheap deterministic per-input random draw for stochastic rounding tests.
inline std::uint32_t mix32(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}

}  // namespace lplab::testing
