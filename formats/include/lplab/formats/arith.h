// Correctly rounded arithmetic: each operation forms its exact result (or an
// exact significand plus a sticky bit) in a 64-bit integer and rounds it once
// with round_pack, under the caller's policies.
#pragma once

#include <cstdint>

#include "lplab/formats/value.h"

namespace lplab {
namespace detail {

// Operands of arithmetic, decoded with 64-bit significands.
template <Descriptor D>
using Operand = Decoded<std::uint64_t>;

// The exact result of + - * / sqrt fma is brought to this form before
// rounding: value = (-1)^neg * sig * 2^(e - 60), 2^60 <= sig < 2^61, with any
// nonzero remainder below sig's last bit folded into that bit (a "jammed"
// sticky bit). Significands of at most 25 bits leave 35 guard bits between the
// rounding position and the jammed bit, more than the two that jamming needs.
inline constexpr int kFrac = 60;

struct Exact {
  bool neg;
  std::uint64_t sig;  // 0 for an exact zero
  int e;
};

LPLAB_HD constexpr std::uint64_t shift_right_jam(std::uint64_t x, int n) noexcept {
  if (n <= 0) return x;
  if (n >= 64) return x != 0 ? 1 : 0;
  return (x >> n) | ((x & ((std::uint64_t{1} << n) - 1)) != 0 ? 1 : 0);
}

// Normalizes x * 2^(e - point) (x nonzero) to the Exact form.
LPLAB_HD constexpr Exact normalize(bool neg, std::uint64_t x, int e, int point) noexcept {
  const int top = top_bit(x);
  const std::uint64_t sig = top <= kFrac ? x << (kFrac - top) : shift_right_jam(x, top - kFrac);
  return {neg, sig, e - point + top};
}

// a + b for nonzero magnitudes given as 2^61 <= sig < 2^62 scaled by 2^(e - 61).
LPLAB_HD constexpr Exact add_magnitudes(bool neg_a, std::uint64_t a, int ea, bool neg_b,
                                        std::uint64_t b, int eb) noexcept {
  if (eb > ea || (eb == ea && b > a)) {
    const bool tn = neg_a; neg_a = neg_b; neg_b = tn;
    const std::uint64_t t = a; a = b; b = t;
    const int te = ea; ea = eb; eb = te;
  }
  b = shift_right_jam(b, ea - eb);
  const std::uint64_t s = neg_a == neg_b ? a + b : a - b;
  if (s == 0) return {false, 0, 0};
  return normalize(neg_a, s, ea, 61);
}

template <Descriptor D>
LPLAB_HD constexpr Exact place(const Operand<D>& x) noexcept {  // sig at bit 61
  return {x.neg, x.sig << (61 - Layout<D>::M), x.exp};
}

// 64-bit integer square root: floor(sqrt(n)) and whether it is inexact.
LPLAB_HD constexpr std::uint64_t isqrt(std::uint64_t n, bool& inexact) noexcept {
  std::uint64_t root = 0, rem = n;
  for (std::uint64_t bit = std::uint64_t{1} << 62; bit != 0; bit >>= 2) {
    if (rem >= root + bit) {
      rem -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
  }
  inexact = rem != 0;
  return root;
}

struct Policy {
  Round round;
  Overflow overflow;
  std::uint32_t random;
  Flags* flags;
};

template <Descriptor D>
LPLAB_HD constexpr Float<D> finish(const Exact& x, bool zero_neg, const Policy& p) noexcept {
  if (x.sig == 0) return Float<D>::from_bits(pack_zero<D>(zero_neg, p.flags));
  return Float<D>::from_bits(round_pack<D, kFrac, std::uint64_t>(
      x.neg, x.sig, x.e, p.round, p.overflow, p.random, p.flags));
}

template <Descriptor D>
LPLAB_HD constexpr Float<D> nan_of(const Operand<D>& x, Flags* flags) noexcept {
  return Float<D>::from_bits(pack_nan<D>(x.neg, x.payload, flags));
}

template <Descriptor D>
LPLAB_HD constexpr Float<D> invalid(Flags* flags) noexcept {
  return Float<D>::from_bits(invalid_nan<D>(flags));
}

template <Descriptor D>
LPLAB_HD constexpr Float<D> infinity(bool neg, const Policy& p) noexcept {
  return Float<D>::from_bits(pack_infinity<D>(neg, p.overflow, p.flags));
}

// Sign of an exact zero sum of operands of opposite signs (IEEE 754-2019 6.3):
// +0, except -0 when rounding downward.
LPLAB_HD constexpr bool zero_sum_sign(bool neg_a, bool neg_b, Round r) noexcept {
  return neg_a == neg_b ? neg_a : r == Round::downward;
}

template <Descriptor D>
LPLAB_HD constexpr Float<D> add(const Operand<D>& a, const Operand<D>& b, const Policy& p) noexcept {
  if (a.kind == Kind::nan) return nan_of<D>(a, p.flags);
  if (b.kind == Kind::nan) return nan_of<D>(b, p.flags);
  if (a.kind == Kind::infinite || b.kind == Kind::infinite) {
    if (a.kind == Kind::infinite && b.kind == Kind::infinite && a.neg != b.neg)
      return invalid<D>(p.flags);
    return infinity<D>(a.kind == Kind::infinite ? a.neg : b.neg, p);
  }
  if (a.kind == Kind::zero && b.kind == Kind::zero)
    return finish<D>({false, 0, 0}, zero_sum_sign(a.neg, b.neg, p.round), p);
  if (a.kind == Kind::zero) return finish<D>(normalize(b.neg, b.sig, b.exp, Layout<D>::M), false, p);
  if (b.kind == Kind::zero) return finish<D>(normalize(a.neg, a.sig, a.exp, Layout<D>::M), false, p);
  const Exact pa = place<D>(a), pb = place<D>(b);
  return finish<D>(add_magnitudes(pa.neg, pa.sig, pa.e, pb.neg, pb.sig, pb.e),
                   p.round == Round::downward, p);
}

template <Descriptor D>
LPLAB_HD constexpr Float<D> mul(const Operand<D>& a, const Operand<D>& b, const Policy& p) noexcept {
  if (a.kind == Kind::nan) return nan_of<D>(a, p.flags);
  if (b.kind == Kind::nan) return nan_of<D>(b, p.flags);
  const bool neg = a.neg != b.neg;
  if (a.kind == Kind::infinite || b.kind == Kind::infinite) {
    if (a.kind == Kind::zero || b.kind == Kind::zero) return invalid<D>(p.flags);
    return infinity<D>(neg, p);
  }
  if (a.kind == Kind::zero || b.kind == Kind::zero) return finish<D>({false, 0, 0}, neg, p);
  constexpr int M = Layout<D>::M;
  return finish<D>(normalize(neg, a.sig * b.sig, a.exp + b.exp, 2 * M), neg, p);
}

template <Descriptor D>
LPLAB_HD constexpr Float<D> div(const Operand<D>& a, const Operand<D>& b, const Policy& p) noexcept {
  if (a.kind == Kind::nan) return nan_of<D>(a, p.flags);
  if (b.kind == Kind::nan) return nan_of<D>(b, p.flags);
  const bool neg = a.neg != b.neg;
  if (a.kind == Kind::infinite) {
    if (b.kind == Kind::infinite) return invalid<D>(p.flags);
    return infinity<D>(neg, p);
  }
  if (b.kind == Kind::infinite) return finish<D>({false, 0, 0}, neg, p);
  if (b.kind == Kind::zero) {
    if (a.kind == Kind::zero) return invalid<D>(p.flags);
    return infinity<D>(neg, p);  // division by zero (IEEE 754-2019 7.3)
  }
  if (a.kind == Kind::zero) return finish<D>({false, 0, 0}, neg, p);
  constexpr int M = Layout<D>::M;
  // a/b = (sa / sb) * 2^(ea - eb); the dividend sa * 2^(62 - M) gives a quotient
  // of at least 62 - 2M - 1 >= 12 + M bits, and the remainder becomes the sticky bit.
  const std::uint64_t n = a.sig << (62 - M);
  const std::uint64_t q = n / b.sig;
  const bool rest = n % b.sig != 0;
  Exact x = normalize(neg, q, a.exp - b.exp, 62 - M);
  x.sig |= rest ? 1 : 0;
  return finish<D>(x, neg, p);
}

template <Descriptor D>
LPLAB_HD constexpr Float<D> sqrt(const Operand<D>& a, const Policy& p) noexcept {
  if (a.kind == Kind::nan) return nan_of<D>(a, p.flags);
  if (a.kind == Kind::zero) return finish<D>({false, 0, 0}, a.neg, p);  // sqrt(-0) = -0
  if (a.neg) return invalid<D>(p.flags);
  if (a.kind == Kind::infinite) return infinity<D>(false, p);
  constexpr int M = Layout<D>::M;
  // a = sa * 2^(ea - M). Scale sa by 2^t, t in {61 - M, 62 - M}, so that
  // ea - M - t is even: sqrt(a) = sqrt(sa * 2^t) * 2^((ea - M - t) / 2).
  int t = 62 - M;
  if (((a.exp - M - t) & 1) != 0) --t;
  bool inexact = false;
  const std::uint64_t root = isqrt(a.sig << t, inexact);
  Exact x = normalize(false, root, (a.exp - M - t) / 2, 0);
  x.sig |= inexact ? 1 : 0;
  return finish<D>(x, false, p);
}

template <Descriptor D>
LPLAB_HD constexpr Float<D> fma(const Operand<D>& a, const Operand<D>& b, const Operand<D>& c,
                                const Policy& p) noexcept {
  if (a.kind == Kind::nan) return nan_of<D>(a, p.flags);
  if (b.kind == Kind::nan) return nan_of<D>(b, p.flags);
  const bool pneg = a.neg != b.neg;
  const bool pinf = a.kind == Kind::infinite || b.kind == Kind::infinite;
  const bool pzero = a.kind == Kind::zero || b.kind == Kind::zero;
  if (pinf && pzero) return invalid<D>(p.flags);  // 0 * inf, whatever c is (IEEE 754-2019 7.2)
  if (c.kind == Kind::nan) return nan_of<D>(c, p.flags);
  if (pinf || c.kind == Kind::infinite) {
    if (pinf && c.kind == Kind::infinite && pneg != c.neg) return invalid<D>(p.flags);
    return infinity<D>(pinf ? pneg : c.neg, p);
  }
  constexpr int M = Layout<D>::M;
  if (pzero) {
    if (c.kind == Kind::zero) return finish<D>({false, 0, 0}, zero_sum_sign(pneg, c.neg, p.round), p);
    return finish<D>(normalize(c.neg, c.sig, c.exp, M), false, p);
  }
  const Exact prod = normalize(pneg, a.sig * b.sig, a.exp + b.exp, 2 * M);  // exact: <= 50 bits
  if (c.kind == Kind::zero) return finish<D>(prod, false, p);
  const Exact pc = place<D>(c);
  return finish<D>(add_magnitudes(prod.neg, prod.sig << (61 - kFrac), prod.e, pc.neg, pc.sig, pc.e),
                   p.round == Round::downward, p);
}

template <Descriptor D>
LPLAB_HD constexpr Operand<D> operand(Float<D> x) noexcept {
  return decode<D, std::uint64_t>(x.bits());
}

}  // namespace detail

// The formats the arithmetic takes: significands of at most 25 bits (binary32's
// 24 and less), whose product (fma: 50 bits) is exact in 64 bits and which
// leave kFrac's guard bits. Every operation below is constrained by it, so a
// wider format has no + - * / sqrt fma at all (a requires-expression says
// false) rather than one that fails inside its body.
template <Descriptor D>
concept ArithmeticFormat = detail::Layout<D>::M <= 24;

// Named operations with explicit policies. The operators use nearest-even and
// IEEE overflow.
#define LPLAB_BINARY_OP(name)                                                             \
  template <Descriptor D>                                                                 \
    requires ArithmeticFormat<D>                                                          \
  LPLAB_HD constexpr Float<D> name(Float<D> a, Float<D> b, Round r = Round::nearest_even, \
                                   Overflow o = Overflow::ieee, Flags* flags = nullptr,   \
                                   std::uint32_t random = 0) noexcept {                   \
    return detail::name<D>(detail::operand(a), detail::operand(b), {r, o, random, flags});  \
  }
LPLAB_BINARY_OP(add)
LPLAB_BINARY_OP(mul)
LPLAB_BINARY_OP(div)
#undef LPLAB_BINARY_OP

template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D> sub(Float<D> a, Float<D> b, Round r = Round::nearest_even,
                                Overflow o = Overflow::ieee, Flags* flags = nullptr,
                                std::uint32_t random = 0) noexcept {
  auto nb = detail::operand(b);
  if (nb.kind != detail::Kind::nan) nb.neg = !nb.neg;  // a - b = a + (-b), also for unsigned formats
  return detail::add<D>(detail::operand(a), nb, {r, o, random, flags});
}

template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D> sqrt(Float<D> a, Round r = Round::nearest_even,
                                 Overflow o = Overflow::ieee, Flags* flags = nullptr,
                                 std::uint32_t random = 0) noexcept {
  return detail::sqrt<D>(detail::operand(a), {r, o, random, flags});
}

// a * b + c with a single rounding (IEEE 754-2019 5.4.1 fusedMultiplyAdd).
template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D> fma(Float<D> a, Float<D> b, Float<D> c, Round r = Round::nearest_even,
                                Overflow o = Overflow::ieee, Flags* flags = nullptr,
                                std::uint32_t random = 0) noexcept {
  return detail::fma<D>(detail::operand(a), detail::operand(b), detail::operand(c),
                        {r, o, random, flags});
}

template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D> operator+(Float<D> a, Float<D> b) noexcept { return add(a, b); }
template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D> operator-(Float<D> a, Float<D> b) noexcept { return sub(a, b); }
template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D> operator*(Float<D> a, Float<D> b) noexcept { return mul(a, b); }
template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D> operator/(Float<D> a, Float<D> b) noexcept { return div(a, b); }
template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D>& operator+=(Float<D>& a, Float<D> b) noexcept { return a = a + b; }
template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D>& operator-=(Float<D>& a, Float<D> b) noexcept { return a = a - b; }
template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D>& operator*=(Float<D>& a, Float<D> b) noexcept { return a = a * b; }
template <Descriptor D>
  requires ArithmeticFormat<D>
LPLAB_HD constexpr Float<D>& operator/=(Float<D>& a, Float<D> b) noexcept { return a = a / b; }

}  // namespace lplab
