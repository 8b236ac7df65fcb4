// Formats declared at run time (host only): a descriptor built by a program or
// read from text ("e3m4:bias=3:ieee"), rounded by the same algorithm as the
// compiled formats.
//
//   std::string why;
//   auto f = lplab::DeclaredFormat::parse("e3m4:bias=3:ieee", &why);
//   std::uint64_t code = f->from_double(0.3, lplab::Round::nearest_even, lplab::Overflow::ieee);
//
// How the compiled algorithm serves a format it was not compiled for: the
// rounding of a finite value depends on the format only through M, the
// smallest normal exponent emin and, after rounding, the largest finite code.
// A "wide" format with the same M, 15 exponent bits, bias 2^14 - 1 and no
// specials is compiled for each M; the value 2^e * 1.f is handed to it as 2^(e + bias -
// 2^14 + 1) * 1.f, which puts the declared exponent field and the wide one on
// the same number: both formats' emin meet, and the wide format's magnitude
// code is the declared format's for every value up to its largest (the wide
// range holds every declared binade, E <= 14). A larger code is the declared
// format's overflow, decided here as round.h's step 5; NaN, infinity, zero and
// the sign follow round.h's pack_* rules for the declared encoding.
#pragma once

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "lplab/formats/decimal.h"
#include "lplab/formats/finfo_values.h"
#include "lplab/formats/io.h"

namespace lplab {

// What a declared format may be, beyond the rules of every format
// (descriptor_error): at most 14 exponent bits (the wide format's 2^15 - 2
// normal fields hold its binades and one past them), at most 23 mantissa bits
// (binary32's: Decimal's jammed bit then lies 34 bits below the last kept
// bit, as decimal.h needs), subnormals (a zero), and values that are doubles
// (largest below 2^1024, smallest subnormal at least 2^-1074), as the tool
// prints them.
inline constexpr int kDeclaredMaxExponentBits = 14;
inline constexpr int kDeclaredMaxMantissaBits = 23;

namespace detail {

inline constexpr int kWideExponentBits = kDeclaredMaxExponentBits + 1;
inline constexpr int kWideBias = (1 << (kWideExponentBits - 1)) - 1;  // 16383

template <int M>
inline constexpr Descriptor wide_format{.name = "wide", .exponent_bits = kWideExponentBits,
                                        .mantissa_bits = M, .bias = kWideBias,
                                        .encoding = Encoding::none};

// The magnitude code of (-1)^neg * sig * 2^(e - kFrac) in wide_format<M>.
using WideRound = std::uint64_t (*)(bool neg, std::uint64_t sig, int e, Round r,
                                    std::uint32_t random, Flags* flags);
template <int M>
std::uint64_t wide_round(bool neg, std::uint64_t sig, int e, Round r, std::uint32_t random,
                         Flags* flags) {
  constexpr Descriptor W = wide_format<M>;
  return round_pack<W, kFrac, std::uint64_t>(neg, sig, e, r, Overflow::ieee, random, flags) &
         Layout<W>::mag_mask;
}
template <std::size_t... M>
constexpr std::array<WideRound, sizeof...(M)> wide_rounds(std::index_sequence<M...>) {
  return {&wide_round<static_cast<int>(M)>...};
}
inline constexpr std::array<WideRound, kDeclaredMaxMantissaBits + 1> kWideRounds =
    wide_rounds(std::make_index_sequence<kDeclaredMaxMantissaBits + 1>{});

// encoding_name (finfo_values.h), by its former name.
inline const char* encoding_text(Encoding e) { return encoding_name(e); }

}  // namespace detail

class DeclaredFormat {
 public:
  // The format of a descriptor, or nullopt with the reason in *why.
  static std::optional<DeclaredFormat> make(const Descriptor& d, std::string* why = nullptr) {
    const auto fail = [&](std::string reason) {
      if (why != nullptr) *why = std::move(reason);
      return std::nullopt;
    };
    if (d.exponent_bits < 1 || d.exponent_bits > kDeclaredMaxExponentBits)
      return fail("exponent bits must be 1 to " + std::to_string(kDeclaredMaxExponentBits));
    if (d.mantissa_bits < 0 || d.mantissa_bits > kDeclaredMaxMantissaBits)
      return fail("mantissa bits must be 0 to " + std::to_string(kDeclaredMaxMantissaBits));
    if (!d.has_subnormals) return fail("a declared format has subnormals (a zero)");
    if (const char* e = descriptor_error(d)) return fail(e);
    const detail::LayoutValues l = detail::layout_of(d);
    if (l.emax > 1023 || l.emin - l.M < -1074)
      return fail("its values must be doubles: largest 2^" + std::to_string(l.emax) +
                  ", smallest subnormal 2^" + std::to_string(l.emin - l.M) +
                  " (doubles: below 2^1024, down to 2^-1074)");
    return DeclaredFormat(d, l);
  }

  // "e<E>m<M>", then options separated by ':' -- bias=<integer> (default
  // 2^(E-1) - 1, IEEE's), one encoding of ieee (default), fn, fnuz, none
  // (formats/descriptor.h), and unsigned. "e3m4:bias=3:ieee" is ml_dtypes'
  // float8_e3m4, "e4m3:fn" OCP's E4M3.
  static std::optional<DeclaredFormat> parse(std::string_view text, std::string* why = nullptr) {
    const auto fail = [&](std::string reason) {
      if (why != nullptr) *why = std::move(reason);
      return std::nullopt;
    };
    const std::size_t colon = text.find(':');
    const std::string_view head = text.substr(0, colon);
    Descriptor d;
    const auto number = [](std::string_view s, int& out) {
      const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
      return ec == std::errc() && p == s.data() + s.size() && !s.empty();
    };
    const std::size_t m = head.find('m');
    if (head.size() < 4 || head[0] != 'e' || m == std::string_view::npos ||
        !number(head.substr(1, m - 1), d.exponent_bits) || !number(head.substr(m + 1), d.mantissa_bits))
      return fail("a declared format starts e<exponent bits>m<mantissa bits>, e.g. e3m4");
    bool has_bias = false, has_encoding = false;
    for (std::string_view rest = colon == std::string_view::npos ? "" : text.substr(colon + 1);
         colon != std::string_view::npos;) {
      const std::size_t next = rest.find(':');
      const std::string_view opt = rest.substr(0, next);
      if (opt.starts_with("bias=")) {
        if (has_bias || !number(opt.substr(5), d.bias) || d.bias < -100000 || d.bias > 100000)
          return fail("bias=<integer> once, e.g. bias=3");
        has_bias = true;
      } else if (opt == "ieee" || opt == "fn" || opt == "fnuz" || opt == "none") {
        if (has_encoding) return fail("one encoding: ieee, fn, fnuz or none");
        d.encoding = opt == "ieee" ? Encoding::ieee
                     : opt == "fn" ? Encoding::fn
                     : opt == "fnuz" ? Encoding::fnuz
                                     : Encoding::none;
        has_encoding = true;
      } else if (opt == "unsigned") {
        d.is_signed = false;
      } else {
        return fail("unknown option '" + std::string(opt) +
                    "' (options: bias=<integer>, ieee, fn, fnuz, none, unsigned)");
      }
      if (next == std::string_view::npos) break;
      rest = rest.substr(next + 1);
    }
    // IEEE's bias, for the widths make() accepts (it refuses the others).
    if (!has_bias && d.exponent_bits >= 1 && d.exponent_bits <= kDeclaredMaxExponentBits)
      d.bias = (1 << (d.exponent_bits - 1)) - 1;
    return make(d, why);
  }

  const Descriptor& descriptor() const { return d_; }
  const detail::LayoutValues& layout() const { return l_; }
  // The canonical text: "e3m4:bias=3:ieee", plus ":unsigned".
  const std::string& name() const { return name_; }

  // x rounded once into the format: the code, as convert() gives for a
  // compiled format.
  std::uint64_t from_double(double x, Round r = Round::nearest_even, Overflow o = Overflow::ieee,
                            std::uint32_t random = 0, Flags* flags = nullptr) const {
    const bool neg = std::signbit(x);
    if (std::isnan(x)) {
      const auto bits = std::bit_cast<std::uint64_t>(x);
      return pack_nan(neg, (bits & ((std::uint64_t{1} << 52) - 1)) << 12, flags);
    }
    if (std::isinf(x)) return pack_infinity(neg, o, flags);
    if (x == 0) return pack_zero(neg, flags);
    // |x| = m * 2^ex, 1/2 <= m < 1: sig = m * 2^61 holds m's 53 bits exactly.
    int ex = 0;
    const double m = std::frexp(std::fabs(x), &ex);
    return round_finite(neg, static_cast<std::uint64_t>(std::ldexp(m, detail::kFrac + 1)), ex - 1, r, o,
                        random, flags);
  }

  // A number read from text (parse_decimal), rounded once.
  std::uint64_t from_decimal(const Decimal& x, Round r = Round::nearest_even, Overflow o = Overflow::ieee,
                             std::uint32_t random = 0, Flags* flags = nullptr) const {
    switch (x.kind) {
      case ValueKind::nan: return from_double(x.neg ? -NAN : NAN, r, o, random, flags);
      case ValueKind::infinite: return from_double(x.neg ? -INFINITY : INFINITY, r, o, random, flags);
      case ValueKind::zero: return from_double(x.neg ? -0.0 : 0.0, r, o, random, flags);
      case ValueKind::finite: break;
    }
    return round_finite(x.neg, x.sig, x.e, r, o, random, flags);
  }

  // The value of a code (NaN for NaN codes, keeping the sign).
  double to_double(std::uint64_t code) const {
    const bool neg = (code & l_.sign_mask) != 0;
    const std::uint64_t mag = code & l_.mag_mask;
    const double sign = neg ? -1.0 : 1.0;
    if ((d_.encoding == Encoding::ieee && mag > l_.inf_code) ||
        (d_.encoding == Encoding::fn && mag == l_.mag_mask) ||
        (d_.encoding == Encoding::fnuz && code == l_.sign_mask))
      return std::copysign(NAN, sign);
    if (d_.encoding == Encoding::ieee && mag == l_.inf_code) return sign * INFINITY;
    const std::uint64_t field = mag >> l_.M;
    const auto mant = static_cast<double>(mag & l_.mant_mask);
    if (field == 0) return sign * std::ldexp(mant, l_.emin - l_.M);
    return sign * std::ldexp(mant + std::ldexp(1.0, l_.M), static_cast<int>(field) - d_.bias - l_.M);
  }

  // finfo's fields, by the function that gives finfo<T>::values for a
  // compiled format (finfo_values.h): the compiled twin's values, field by
  // field (tests/formats/declared_test.cpp checks every compiled format).
  FinfoValues finfo() const {
    return finfo_values(d_, l_, [this](std::uint64_t code) { return to_double(code); },
                        [this](double x) { return from_double(x, Round::nearest_even, Overflow::ieee); });
  }

  // The value's text, as to_string gives for a compiled format.
  std::string to_text(std::uint64_t code) const {
    const double v = to_double(code);
    if (std::isnan(v)) return std::signbit(v) && d_.encoding != Encoding::fnuz ? "-nan" : "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    return shortest_text(v);
  }

 private:
  DeclaredFormat(const Descriptor& d, const detail::LayoutValues& l) : d_(d), l_(l) {
    // Appended, not a chain of "text" + string (GCC 12 misreads that: -Wrestrict).
    name_.append("e").append(std::to_string(l.E)).append("m").append(std::to_string(l.M));
    name_.append(":bias=").append(std::to_string(d.bias)).append(":").append(encoding_name(d.encoding));
    if (!d.is_signed) name_ += ":unsigned";
  }

  std::uint64_t with_sign(bool neg, std::uint64_t mag) const { return neg ? (mag | l_.sign_mask) : mag; }

  // round.h's pack_nan, pack_overflow, pack_infinity and pack_zero for this
  // format's encoding.
  std::uint64_t pack_nan(bool neg, std::uint64_t payload, Flags* flags) const {
    switch (d_.encoding) {
      case Encoding::ieee: return with_sign(neg, l_.inf_code | l_.quiet_bit | (payload >> (64 - l_.M)));
      case Encoding::fn: return with_sign(neg, l_.nan_code);
      case Encoding::fnuz: return l_.nan_code;
      case Encoding::none:
      case Encoding::integer: break;  // (a declared format is never an integer: parse() gives none)
    }
    detail::raise(flags, Flag::invalid);
    return l_.max_code;
  }
  std::uint64_t invalid_nan(Flags* flags) const {
    detail::raise(flags, Flag::invalid);
    return pack_nan(false, 0, flags);
  }
  std::uint64_t pack_overflow(bool neg, bool toward_max, Overflow o, Flags* flags) const {
    if (o == Overflow::saturate || toward_max) return with_sign(neg, l_.max_code);
    if (l_.has_inf) return with_sign(neg, l_.inf_code);
    if (l_.has_nan) {
      detail::raise(flags, Flag::invalid);
      return pack_nan(neg, 0, flags);
    }
    return with_sign(neg, l_.max_code);
  }
  std::uint64_t pack_infinity(bool neg, Overflow o, Flags* flags) const {
    if (neg && !d_.is_signed) return invalid_nan(flags);
    if (l_.has_inf && o != Overflow::saturate) return with_sign(neg, l_.inf_code);  // (wrap is ieee here)
    detail::raise(flags, Flag::overflow);
    detail::raise(flags, Flag::inexact);
    return pack_overflow(neg, false, o, flags);
  }
  std::uint64_t pack_zero(bool neg, Flags*) const { return with_sign(neg && l_.has_negative_zero, 0); }

  // (-1)^neg * sig * 2^(e - kFrac), 2^kFrac <= sig < 2^(kFrac+1), rounded.
  std::uint64_t round_finite(bool neg, std::uint64_t sig, int e, Round r, Overflow o, std::uint32_t random,
                             Flags* flags) const {
    // round.h step 1.
    if (neg && !d_.is_signed) return invalid_nan(flags);
    // Exponents far outside the format (Decimal keeps 1e5000 as 2^16384) are
    // brought nearer without changing the result: everything from two
    // binades above the largest overflows alike, and everything more than
    // 100 binades below the smallest subnormal rounds alike, stochastic
    // rounding's fraction included (round.h: zero past 96 dropped bits).
    const int hi = l_.emax + 2, lo = l_.emin - l_.M - 100;
    e = e > hi ? hi : e < lo ? lo : e;
    const std::uint64_t mag = detail::kWideRounds[static_cast<std::size_t>(l_.M)](
        neg, sig, e + d_.bias - detail::kWideBias, r, random, flags);
    // round.h step 5: overflow, decided after rounding.
    if (mag > l_.max_code) {
      detail::raise(flags, Flag::overflow);
      detail::raise(flags, Flag::inexact);
      const bool toward_max = r == Round::toward_zero || (r == Round::upward && neg) ||
                              (r == Round::downward && !neg);
      return pack_overflow(neg, toward_max, o, flags);
    }
    if (mag == 0) return pack_zero(neg, flags);
    return with_sign(neg, mag);
  }

  Descriptor d_;
  detail::LayoutValues l_;
  std::string name_;
};

}  // namespace lplab
