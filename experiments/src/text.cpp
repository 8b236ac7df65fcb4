#include "lplab/experiments/text.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace lplab::experiments {

Decimal parse_value(std::string_view text) {
  if (text.empty()) throw UsageError("empty number");
  const std::optional<Decimal> d = parse_decimal(text);
  if (!d) throw UsageError(fmt::format("malformed number '{}'", text));
  return *d;
}

double parse_number(std::string_view text) { return parse_value(text).nearest; }

std::string shortest(double v) { return fmt::format("{}", v); }

std::string py_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string shown(std::string_view s) {
  return s.size() <= 60 ? std::string(s) : std::string(s.substr(0, 60)) + "...";
}

std::string bit_groups(std::uint64_t code, bool is_signed, int exponent_bits, int mantissa_bits) {
  std::string out;
  auto put = [&](int from, int count) {
    for (int i = from + count - 1; i >= from; --i) out += ((code >> i) & 1) ? '1' : '0';
  };
  if (is_signed) {
    put(exponent_bits + mantissa_bits, 1);
    out += '|';
  }
  put(mantissa_bits, exponent_bits);
  if (mantissa_bits > 0) {
    out += '|';
    put(0, mantissa_bits);
  }
  return out;
}

Round parse_round(std::string_view s) {
  if (s == "nearest_even" || s == "rne" || s == "rn") return Round::nearest_even;
  if (s == "nearest_away" || s == "rna") return Round::nearest_away;
  if (s == "toward_zero" || s == "rz") return Round::toward_zero;
  if (s == "upward" || s == "ru") return Round::upward;
  if (s == "downward" || s == "rd") return Round::downward;
  if (s == "stochastic" || s == "sr") return Round::stochastic;
  throw UsageError(fmt::format(
      "unknown rounding '{}' (nearest_even, nearest_away, toward_zero, upward, downward, stochastic)", s));
}

Overflow parse_overflow(std::string_view s) {
  if (s == "ieee") return Overflow::ieee;
  if (s == "saturate" || s == "satfinite") return Overflow::saturate;
  throw UsageError(fmt::format("unknown overflow policy '{}' (ieee, saturate)", s));
}

std::string flags_text(Flags f) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ',';
    s += name;
  };
  add(f.inexact(), "inexact");
  add(f.underflow(), "underflow");
  add(f.overflow(), "overflow");
  add(f.invalid(), "invalid");
  return s.empty() ? "-" : s;
}

}  // namespace lplab::experiments
