// The exact result of an arithmetic operation on format values, computed with
// MPFR (exactly for + - * fma at 1200 bits; for / and sqrt, truncated at 200
// bits with MPFR's ternary value as the sticky bit), and IEEE 754-2019's rules
// for special operands (6.1, 6.3, 7.2, 7.3). Feeds Reference::round.
#pragma once

#include <mpfr.h>

#include <cmath>

#include "support/reference.h"

namespace lplab::testing {

enum class Op { add, sub, mul, div, sqrt, fma };

inline const char* op_name(Op op) {
  switch (op) {
    case Op::add: return "add";
    case Op::sub: return "sub";
    case Op::mul: return "mul";
    case Op::div: return "div";
    case Op::sqrt: return "sqrt";
    case Op::fma: return "fma";
  }
  return "?";
}

struct ExactResult {
  Real real;
  bool invalid = false;  // the operation itself is invalid (NaN from non-NaN operands)
};

class ExactArith {
 public:
  ExactArith() {
    mpfr_inits2(1200, a_, b_, c_, r_, static_cast<mpfr_ptr>(nullptr));
    mpfr_init2(q_, 200);
  }
  ~ExactArith() { mpfr_clears(a_, b_, c_, r_, q_, static_cast<mpfr_ptr>(nullptr)); }
  ExactArith(const ExactArith&) = delete;
  ExactArith& operator=(const ExactArith&) = delete;

  // x, y, z: decoded operands (NaN as RefClass::nan). `r` decides the sign of
  // exact zero sums.
  ExactResult compute(Op op, const RefDecoded& x, const RefDecoded& y, const RefDecoded& z,
                      Round r) {
    const bool any_nan = x.cls == RefClass::nan || (op != Op::sqrt && y.cls == RefClass::nan) ||
                         (op == Op::fma && z.cls == RefClass::nan);
    const double a = x.value, b = op == Op::sub ? -y.value : y.value, c = z.value;
    switch (op) {
      case Op::add:
      case Op::sub: {
        if (any_nan) return nan();
        if (std::isinf(a) && std::isinf(b) && (a > 0) != (b > 0)) return invalid();
        if (std::isinf(a) || std::isinf(b)) return number(std::isinf(a) ? a : b);
        if (a == 0 && b == 0) return number(zero_sum(std::signbit(a), std::signbit(b), r));
        mpfr_set_d(a_, a, MPFR_RNDN);
        mpfr_set_d(b_, b, MPFR_RNDN);
        mpfr_add(r_, a_, b_, MPFR_RNDN);  // exact at 1200 bits
        if (mpfr_zero_p(r_)) return number(r == Round::downward ? -0.0 : 0.0);
        return from(r_, false);
      }
      case Op::mul: {
        if (any_nan) return nan();
        const bool neg = std::signbit(a) != std::signbit(b);
        if ((std::isinf(a) && b == 0) || (std::isinf(b) && a == 0)) return invalid();
        if (std::isinf(a) || std::isinf(b)) return number(neg ? -INFINITY : INFINITY);
        if (a == 0 || b == 0) return number(neg ? -0.0 : 0.0);
        mpfr_set_d(a_, a, MPFR_RNDN);
        mpfr_set_d(b_, b, MPFR_RNDN);
        mpfr_mul(r_, a_, b_, MPFR_RNDN);
        return from(r_, false);
      }
      case Op::div: {
        if (any_nan) return nan();
        const bool neg = std::signbit(a) != std::signbit(b);
        if ((std::isinf(a) && std::isinf(b)) || (a == 0 && b == 0)) return invalid();
        if (std::isinf(a) || b == 0) return number(neg ? -INFINITY : INFINITY);
        if (std::isinf(b) || a == 0) return number(neg ? -0.0 : 0.0);
        mpfr_set_d(a_, a, MPFR_RNDN);
        mpfr_set_d(b_, b, MPFR_RNDN);
        const int t = mpfr_div(q_, a_, b_, MPFR_RNDZ);
        return from(q_, t != 0);
      }
      case Op::sqrt: {
        if (any_nan) return nan();
        if (a == 0) return number(a);  // sqrt(-0) = -0
        if (a < 0) return invalid();
        if (std::isinf(a)) return number(a);
        mpfr_set_d(a_, a, MPFR_RNDN);
        const int t = mpfr_sqrt(q_, a_, MPFR_RNDZ);
        return from(q_, t != 0);
      }
      case Op::fma: {
        if (x.cls == RefClass::nan || y.cls == RefClass::nan) return nan();
        const bool pinf = std::isinf(a) || std::isinf(b);
        const bool pzero = a == 0 || b == 0;
        if (pinf && pzero) return invalid();
        if (z.cls == RefClass::nan) return nan();
        const bool pneg = std::signbit(a) != std::signbit(b);
        if (pinf && std::isinf(c) && pneg != (c < 0)) return invalid();
        if (pinf) return number(pneg ? -INFINITY : INFINITY);
        if (std::isinf(c)) return number(c);
        if (pzero && c == 0) return number(zero_sum(pneg, std::signbit(c), r));
        mpfr_set_d(a_, a, MPFR_RNDN);
        mpfr_set_d(b_, b, MPFR_RNDN);
        mpfr_set_d(c_, c, MPFR_RNDN);
        mpfr_mul(r_, a_, b_, MPFR_RNDN);
        mpfr_add(r_, r_, c_, MPFR_RNDN);
        if (mpfr_zero_p(r_)) return number(r == Round::downward ? -0.0 : 0.0);
        return from(r_, false);
      }
    }
    return nan();
  }

 private:
  static double zero_sum(bool neg_a, bool neg_b, Round r) {
    if (neg_a == neg_b) return neg_a ? -0.0 : 0.0;
    return r == Round::downward ? -0.0 : 0.0;
  }
  static ExactResult nan() { return {Real{true, 0, false}, false}; }
  static ExactResult invalid() { return {Real{true, 0, false}, true}; }
  static ExactResult number(double d) { return {Real{false, d, false}, false}; }
  // t (+ sticky) to double with the remainder folded into the sticky bit.
  static ExactResult from(mpfr_t t, bool sticky) {
    const double d = mpfr_get_d(t, MPFR_RNDZ);
    return {Real{false, d, sticky || mpfr_cmp_d(t, d) != 0}, false};
  }

  mpfr_t a_, b_, c_, r_, q_;
};

}  // namespace lplab::testing
