// Exact arithmetic for `lplab inspect`'s error columns.
//
// A number a user types (decimal or hex) and a format's value are both
// terminating: the first is n * 10^e or n * 2^e, the second a double, n * 2^e.
// So the error of a rounding, v - x, is exactly ±n * 2^p2 * 5^p5 for a
// natural number n, and its decimal terminates; the relative error (v - x)/x
// is a rational that terminates when x's part prime to 10 divides the
// error's. Exact holds such a number; BigNat is the natural number, as
// little-endian 32-bit words with schoolbook operations. kMaxBits keeps every
// operation small; past it the caller falls back to logarithms or a bound.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lplab::tool::exact {

// The most bits any number of a computation may have: enough for every
// number a command line can hold (Linux takes 131,072 bytes an argument,
// 436,000 bits of decimal digits) and for long double's whole range (5^16445
// has 38,000 bits); a few hundred milliseconds at the most.
inline constexpr std::size_t kMaxBits = std::size_t{1} << 19;

class BigNat {
 public:
  BigNat() = default;
  explicit BigNat(std::uint64_t v) {
    if (v) w_.push_back(static_cast<std::uint32_t>(v));
    if (v >> 32) w_.push_back(static_cast<std::uint32_t>(v >> 32));
  }
  bool zero() const { return w_.empty(); }
  std::size_t bits() const {
    return w_.empty() ? 0 : 32 * (w_.size() - 1) + (32 - static_cast<std::size_t>(__builtin_clz(w_.back())));
  }
  bool bit(std::size_t i) const { return i / 32 < w_.size() && ((w_[i / 32] >> (i % 32)) & 1) != 0; }
  std::uint64_t low64() const {
    return (w_.empty() ? 0 : w_[0]) | (w_.size() > 1 ? std::uint64_t{w_[1]} << 32 : 0);
  }

  void mul_small(std::uint32_t m) {
    std::uint64_t carry = 0;
    for (std::uint32_t& x : w_) {
      const std::uint64_t t = std::uint64_t{x} * m + carry;
      x = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
    if (carry) w_.push_back(static_cast<std::uint32_t>(carry));
    trim();
  }
  void add_small(std::uint32_t a) {
    std::uint64_t carry = a;
    for (std::size_t i = 0; carry && i < w_.size(); ++i) {
      const std::uint64_t t = std::uint64_t{w_[i]} + carry;
      w_[i] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
    if (carry) w_.push_back(static_cast<std::uint32_t>(carry));
  }
  // this /= d; returns the remainder.
  std::uint32_t div_small(std::uint32_t d) {
    std::uint64_t r = 0;
    for (std::size_t i = w_.size(); i-- > 0;) {
      const std::uint64_t t = (r << 32) | w_[i];
      w_[i] = static_cast<std::uint32_t>(t / d);
      r = t % d;
    }
    trim();
    return static_cast<std::uint32_t>(r);
  }
  void shift_left(std::size_t n) {
    if (w_.empty() || n == 0) return;
    const std::size_t words = n / 32, b = n % 32;
    std::vector<std::uint32_t> out(words, 0);
    std::uint32_t carry = 0;
    for (std::uint32_t x : w_) {
      out.push_back(b ? (x << b) | carry : x);
      carry = b ? x >> (32 - b) : 0;
    }
    if (carry) out.push_back(carry);
    w_ = std::move(out);
  }
  void shift_right(std::size_t n) {
    const std::size_t words = n / 32, b = n % 32;
    if (words >= w_.size()) {
      w_.clear();
      return;
    }
    w_.erase(w_.begin(), w_.begin() + static_cast<std::ptrdiff_t>(words));
    if (b) {
      for (std::size_t i = 0; i < w_.size(); ++i)
        w_[i] = (w_[i] >> b) | (i + 1 < w_.size() ? w_[i + 1] << (32 - b) : 0);
    }
    trim();
  }
  std::size_t trailing_zero_bits() const {
    std::size_t i = 0;
    while (i < w_.size() && w_[i] == 0) ++i;
    return i == w_.size() ? 0 : 32 * i + static_cast<std::size_t>(__builtin_ctz(w_[i]));
  }

  friend int compare(const BigNat& a, const BigNat& b) {
    if (a.w_.size() != b.w_.size()) return a.w_.size() < b.w_.size() ? -1 : 1;
    for (std::size_t i = a.w_.size(); i-- > 0;)
      if (a.w_[i] != b.w_[i]) return a.w_[i] < b.w_[i] ? -1 : 1;
    return 0;
  }
  // a - b, for a >= b.
  friend BigNat minus(const BigNat& a, const BigNat& b) {
    BigNat r = a;
    std::int64_t borrow = 0;
    for (std::size_t i = 0; i < r.w_.size(); ++i) {
      std::int64_t t = std::int64_t{r.w_[i]} - (i < b.w_.size() ? std::int64_t{b.w_[i]} : 0) - borrow;
      borrow = t < 0;
      r.w_[i] = static_cast<std::uint32_t>(t + (borrow ? (std::int64_t{1} << 32) : 0));
    }
    r.trim();
    return r;
  }
  friend BigNat plus(const BigNat& a, const BigNat& b) {
    BigNat r = a.w_.size() >= b.w_.size() ? a : b;
    const BigNat& s = a.w_.size() >= b.w_.size() ? b : a;
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < r.w_.size(); ++i) {
      const std::uint64_t t = std::uint64_t{r.w_[i]} + (i < s.w_.size() ? s.w_[i] : 0) + carry;
      r.w_[i] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
    if (carry) r.w_.push_back(static_cast<std::uint32_t>(carry));
    return r;
  }
  friend BigNat times(const BigNat& a, const BigNat& b) {
    BigNat r;
    if (a.zero() || b.zero()) return r;
    r.w_.assign(a.w_.size() + b.w_.size(), 0);
    for (std::size_t i = 0; i < a.w_.size(); ++i) {
      std::uint64_t carry = 0;
      for (std::size_t j = 0; j < b.w_.size(); ++j) {
        const std::uint64_t t = std::uint64_t{a.w_[i]} * b.w_[j] + r.w_[i + j] + carry;
        r.w_[i + j] = static_cast<std::uint32_t>(t);
        carry = t >> 32;
      }
      r.w_[i + b.w_.size()] = static_cast<std::uint32_t>(carry);
    }
    r.trim();
    return r;
  }
  // {a / b, a % b} by shift and subtract: one step a quotient bit, so for
  // quotients of a few hundred bits (the callers check).
  friend std::pair<BigNat, BigNat> divide(BigNat a, const BigNat& b) {
    BigNat q;
    if (compare(a, b) < 0) return {q, a};
    const std::size_t shift = a.bits() - b.bits();
    BigNat d = b;
    d.shift_left(shift);
    q.w_.assign(shift / 32 + 1, 0);
    for (std::size_t s = shift + 1; s-- > 0;) {
      if (compare(a, d) >= 0) {
        a = minus(a, d);
        q.w_[s / 32] |= std::uint32_t{1} << (s % 32);
      }
      d.shift_right(1);
    }
    q.trim();
    return {q, a};
  }

  // The decimal digits ("0" for zero).
  std::string decimal() const {
    if (w_.empty()) return "0";
    BigNat t = *this;
    std::string out;
    while (!t.zero()) {
      std::uint32_t chunk = t.div_small(1000000000u);
      for (int i = 0; i < 9; ++i, chunk /= 10) out.push_back(static_cast<char>('0' + chunk % 10));
    }
    while (out.size() > 1 && out.back() == '0') out.pop_back();
    return {out.rbegin(), out.rend()};
  }

 private:
  void trim() {
    while (!w_.empty() && w_.back() == 0) w_.pop_back();
  }
  std::vector<std::uint32_t> w_;
};

// 5^k, or nullopt beyond kMaxBits.
inline std::optional<BigNat> pow5(std::uint64_t k) {
  if (static_cast<double>(k) * 2.3219280948873623 > kMaxBits) return std::nullopt;
  BigNat r(1), base(5);
  for (; k; k >>= 1) {
    if (k & 1) r = times(r, base);
    if (k > 1) base = times(base, base);
  }
  return r;
}

// n * 2^a * 5^b, or nullopt when it would pass kMaxBits (a, b >= 0).
inline std::optional<BigNat> scaled(BigNat n, std::int64_t a, std::int64_t b) {
  if (n.zero()) return n;
  if (static_cast<double>(n.bits()) + static_cast<double>(a) + 2.3219280948873623 * static_cast<double>(b) >
      static_cast<double>(kMaxBits))
    return std::nullopt;
  if (b > 0) {
    const std::optional<BigNat> f = pow5(static_cast<std::uint64_t>(b));
    if (!f) return std::nullopt;
    n = times(n, *f);
  }
  n.shift_left(static_cast<std::size_t>(a));
  return n;
}

// (-1)^neg * n * 2^p2 * 5^p5, with n free of the factors 2 and 5 (normal()).
struct Exact {
  bool neg = false;
  BigNat n;
  std::int64_t p2 = 0, p5 = 0;

  bool zero() const { return n.zero(); }
  void normal() {
    if (n.zero()) {
      neg = false, p2 = p5 = 0;
      return;
    }
    const std::size_t z = n.trailing_zero_bits();
    n.shift_right(z);
    p2 += static_cast<std::int64_t>(z);
    for (;;) {  // 5^13 = 1220703125 < 2^32 at a time, then single fives
      BigNat t = n;
      if (t.div_small(1220703125u) != 0) break;
      n = std::move(t), p5 += 13;
    }
    for (;;) {
      BigNat t = n;
      if (t.div_small(5) != 0) break;
      n = std::move(t), ++p5;
    }
  }
  // log10 of the magnitude, roughly (for choosing scales).
  double log10_mag() const {
    return static_cast<double>(n.bits()) * 0.30102999566398120 + static_cast<double>(p2) * 0.30102999566398120 +
           static_cast<double>(p5) * 0.69897000433601880;
  }
};

// A double, exactly.
inline Exact of_double(double v) {
  Exact e;
  if (v == 0 || !std::isfinite(v)) return e;
  int x = 0;
  const double m = std::frexp(std::fabs(v), &x);
  e.neg = v < 0;
  e.n = BigNat(static_cast<std::uint64_t>(std::ldexp(m, 53)));
  e.p2 = x - 53;
  e.normal();
  return e;
}

// The exact value of a finite number's text as strtold reads it ("-0.1",
// "1e-400", "0x1.8p-3", ".5", "0x1"); nullopt for "inf"/"nan", or when it
// does not fit kMaxBits or its exponent passes 10^15 (the caller bounds it).
inline std::optional<Exact> parse_exact(std::string_view s) {
  Exact e;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) e.neg = s[i++] == '-';
  const bool hex = s.size() >= i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
  if (hex) i += 2;
  const auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (hex && c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (hex && c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  // The significant digits, then the number from them, nine decimal (seven
  // hex) digits at a time.
  std::string digits;
  std::int64_t fraction_digits = 0;
  bool point = false, any = false;
  for (; i < s.size(); ++i) {
    if (s[i] == '.' && !point) {
      point = true;
      continue;
    }
    const int d = digit(s[i]);
    if (d < 0) break;
    any = true;
    if (point) ++fraction_digits;
    if (digits.empty() && d == 0) continue;  // a leading zero adds no bits
    digits.push_back(static_cast<char>(d));
    if (static_cast<double>(digits.size()) * (hex ? 4 : 3.33) > kMaxBits) return std::nullopt;
  }
  const std::size_t chunk = hex ? 7 : 9;
  for (std::size_t at = 0; at < digits.size(); at += chunk) {
    const std::size_t len = std::min(chunk, digits.size() - at);
    std::uint32_t value = 0, scale = 1;
    for (std::size_t j = 0; j < len; ++j) value = value * (hex ? 16 : 10) + static_cast<std::uint32_t>(digits[at + j]);
    for (std::size_t j = 0; j < len; ++j) scale *= hex ? 16 : 10;
    e.n.mul_small(scale);
    e.n.add_small(value);
  }
  if (!any) return std::nullopt;
  std::int64_t exponent = 0;
  if (i < s.size()) {
    const char c = s[i];
    if (hex ? (c != 'p' && c != 'P') : (c != 'e' && c != 'E')) return std::nullopt;
    ++i;
    bool neg_exp = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg_exp = s[i++] == '-';
    if (i == s.size()) return std::nullopt;
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      if (exponent > 1'000'000'000'000'000) return std::nullopt;
      exponent = exponent * 10 + (s[i] - '0');
    }
    if (neg_exp) exponent = -exponent;
  }
  if (hex) {
    e.p2 = exponent - 4 * fraction_digits;
  } else {
    e.p2 = e.p5 = exponent - fraction_digits;
  }
  e.normal();
  return e;
}

// a - b, or nullopt beyond kMaxBits.
inline std::optional<Exact> difference(const Exact& a, const Exact& b) {
  if (b.zero()) return a;
  Exact r;
  if (a.zero()) {
    r = b;
    r.neg = !b.neg;
    return r;
  }
  const std::int64_t q2 = std::min(a.p2, b.p2), q5 = std::min(a.p5, b.p5);
  const std::optional<BigNat> x = scaled(a.n, a.p2 - q2, a.p5 - q5);
  const std::optional<BigNat> y = x ? scaled(b.n, b.p2 - q2, b.p5 - q5) : std::nullopt;
  if (!y) return std::nullopt;
  r.p2 = q2, r.p5 = q5;
  if (a.neg != b.neg) {
    r.n = plus(*x, *y), r.neg = a.neg;
  } else if (compare(*x, *y) >= 0) {
    r.n = minus(*x, *y), r.neg = a.neg;
  } else {
    r.n = minus(*y, *x), r.neg = !a.neg;
  }
  r.normal();
  return r;
}

// a / b when it terminates (b's part prime to 10 divides a's); nullopt
// otherwise, or when the quotient would be long (it is then shown rounded).
inline std::optional<Exact> exact_quotient(const Exact& a, const Exact& b) {
  if (b.zero()) return std::nullopt;
  Exact r;
  r.neg = a.neg != b.neg;
  r.p2 = a.p2 - b.p2, r.p5 = a.p5 - b.p5;
  if (a.zero()) return Exact{};
  if (b.n.bits() == 1) {  // b's part prime to 10 is 1
    r.n = a.n;
    return r;
  }
  if (compare(a.n, b.n) < 0 || a.n.bits() - b.n.bits() > 512) return std::nullopt;
  auto [q, rem] = divide(a.n, b.n);
  if (!rem.zero()) return std::nullopt;
  r.n = std::move(q);
  r.normal();
  return r;
}

// A number's digits: value = 0.d1d2d3... * 10^point, d1 != 0, with `sticky`
// when nonzero digits follow those given.
struct Digits {
  bool neg = false;
  std::string d;
  std::int64_t point = 0;
  bool sticky = false;
};

// The decimal digits of a / b * 2^p2 * 5^p5 (b odd and prime to 5 or 1):
// all of them when they end within `max_digits`, else the first max_digits
// with the sticky flag. nullopt beyond kMaxBits.
inline std::optional<Digits> digits_of(bool neg, const BigNat& a, const BigNat& b, std::int64_t p2, std::int64_t p5,
                                       std::size_t max_digits) {
  Digits out;
  out.neg = neg;
  if (a.zero()) return out;
  // a * 2^p2 * 5^p5 = (a * 2^(p2-k) * 5^(p5-k)) * 10^k with k = min(p2, p5).
  const std::int64_t k = std::min(p2, p5);
  std::optional<BigNat> num = scaled(a, p2 - k, p5 - k);
  if (!num) return std::nullopt;
  BigNat den = b;
  // Scale by 10^s so that num / den has max_digits + 2 digits or more.
  const double lg = (static_cast<double>(num->bits()) - static_cast<double>(den.bits())) * 0.30102999566398120;
  const auto s = static_cast<std::int64_t>(std::ceil(static_cast<double>(max_digits) + 3 - lg));
  const bool exact_integer = den.bits() == 1;  // b == 1: digits straight from num when they are few
  std::int64_t exp10 = k;
  if (!exact_integer || s < 0) {
    if (s > 0) {
      num = scaled(*num, s, s);
      if (!num) return std::nullopt;
      exp10 -= s;
    } else if (s < 0) {
      const std::optional<BigNat> d = scaled(den, -s, -s);
      if (!d) return std::nullopt;
      den = *d;
      exp10 -= s;
    }
  }
  auto [q, rem] = divide(*num, den);
  std::string d = q.decimal();
  bool sticky = !rem.zero();
  // Trailing zeros are not digits of the value; past max_digits, what is
  // cut is folded into sticky.
  std::int64_t point = exp10 + static_cast<std::int64_t>(d.size());
  if (d.size() > max_digits) {
    sticky = sticky || d.find_first_not_of('0', max_digits) != std::string::npos;
    d.resize(max_digits);
  }
  while (d.size() > 1 && d.back() == '0') d.pop_back();
  out.d = d;
  out.point = point;
  out.sticky = sticky;
  return out;
}

// The digits rounded to `n` significant digits (to nearest, ties to even;
// sticky breaks a tie upward).
inline Digits rounded(Digits x, std::size_t n) {
  if (x.d.size() <= n) {
    if (!x.sticky) return x;
    x.sticky = false;  // nothing at digit n + 1 would round; the value is below a half
    return x;
  }
  const char next = x.d[n];
  const bool rest = x.sticky || x.d.find_first_not_of('0', n + 1) != std::string::npos;
  const bool up = next > '5' || (next == '5' && (rest || ((x.d[n - 1] - '0') & 1) != 0));
  x.d.resize(n);
  x.sticky = false;
  if (up) {
    std::size_t i = n;
    while (i > 0 && x.d[i - 1] == '9') x.d[--i] = '0';
    if (i == 0) {
      x.d.insert(x.d.begin(), '1');
      x.d.pop_back();
      ++x.point;
    } else {
      ++x.d[i - 1];
    }
  }
  while (x.d.size() > 1 && x.d.back() == '0') x.d.pop_back();
  return x;
}

// As fmt and Python print a double: positional from 1e-4 to below 1e16,
// else d.ddde-XX.
inline std::string text_of(const Digits& x) {
  if (x.d.empty()) return "0";
  std::string s = x.neg ? "-" : "";
  const std::int64_t e = x.point - 1;  // the exponent of the first digit
  if (e >= -4 && e < 16) {
    if (x.point <= 0) {
      s += "0." + std::string(static_cast<std::size_t>(-x.point), '0') + x.d;
    } else if (static_cast<std::size_t>(x.point) >= x.d.size()) {
      s += x.d + std::string(static_cast<std::size_t>(x.point) - x.d.size(), '0');
    } else {
      s += x.d.substr(0, static_cast<std::size_t>(x.point)) + "." + x.d.substr(static_cast<std::size_t>(x.point));
    }
    return s;
  }
  s += x.d.substr(0, 1);
  if (x.d.size() > 1) s += "." + x.d.substr(1);
  s += e < 0 ? "e-" : "e+";
  const std::string ex = std::to_string(e < 0 ? -e : e);
  return s + (ex.size() < 2 ? "0" : "") + ex;
}

// The leading digits of |a / b| * 2^p2 * 5^p5 from logarithms, for numbers
// too long to write out (2^-99999999999): about eight digits are right, and
// six are given.
inline Digits digits_from_log(bool neg, const BigNat& a, const BigNat& b, std::int64_t p2, std::int64_t p5) {
  const auto log10_of = [](const BigNat& n) {
    const std::size_t bits = n.bits();
    BigNat top = n;
    if (bits > 64) top.shift_right(bits - 64);
    return std::log10(static_cast<long double>(top.low64())) +
           static_cast<long double>(bits > 64 ? bits - 64 : 0) * 0.301029995663981195213738894724493027L;
  };
  const long double l = log10_of(a) - log10_of(b) + static_cast<long double>(p2) * 0.301029995663981195213738894724493027L +
                        static_cast<long double>(p5) * 0.698970004336018804786261105275506973L;
  const long double whole = std::floor(l);
  // 1 <= m < 10, as six digits.
  auto m = static_cast<std::int64_t>(std::llround(std::pow(10.0L, l - whole) * 100000.0L));
  std::int64_t point = static_cast<std::int64_t>(whole) + 1;
  if (m >= 1000000) m /= 10, ++point;
  Digits out;
  out.neg = neg;
  out.d = std::to_string(m);
  while (out.d.size() > 1 && out.d.back() == '0') out.d.pop_back();
  out.point = point;
  out.sticky = true;
  return out;
}

// The double nearest the digits (inf or 0 beyond double's range): the
// sticky digit after enough digits leaves strtod on the right side of every
// halfway point but those within the cut (the caller marks it approximate).
inline double nearest_double(const Digits& x) {
  if (x.d.empty()) return x.neg ? -0.0 : 0.0;
  const std::string s = (x.neg ? "-0." : "0.") + x.d + (x.sticky ? "1" : "") + "e" + std::to_string(x.point);
  return std::strtod(s.c_str(), nullptr);
}

}  // namespace lplab::tool::exact
