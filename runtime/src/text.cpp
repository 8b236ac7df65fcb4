#include "lplab/runtime/text.h"

#include "lplab/kernels/nearest_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace lplab::runtime {

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

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& known) {
  std::string_view best;
  std::size_t best_d = 3;
  for (std::string_view k : known) {
    const std::size_t d = kernels::edit_distance(word, k);
    if (d < best_d && 3 * d <= std::max(word.size(), k.size())) {
      best_d = d;
      best = k;
    }
  }
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& known) {
  return did_you_mean(word, std::vector<std::string_view>(known.begin(), known.end()));
}

std::size_t utf8_sequence(std::string_view s, char32_t& code) {
  if (s.empty()) return 0;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  std::size_t n = 0;
  char32_t lo = 0;
  if (b0 < 0x80) return code = b0, 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) n = 2, code = b0 & 0x1F, lo = 0x80;
  else if (b0 >= 0xE0 && b0 <= 0xEF) n = 3, code = b0 & 0x0F, lo = 0x800;
  else if (b0 >= 0xF0 && b0 <= 0xF4) n = 4, code = b0 & 0x07, lo = 0x10000;
  else return 0;
  if (s.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3F);
  }
  if (code < lo || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

std::size_t first_non_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    char32_t code = 0;
    const std::size_t n = utf8_sequence(s.substr(i), code);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
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
    if (exponent_bits > 0) out += '|';  // (an integer: sign | value bits)
    put(0, mantissa_bits);
  }
  return out;
}

std::string unknown_name(std::string_view noun, std::string_view s, std::string_view known) {
  return fmt::format("unknown {} '{}' ({})", noun, shown(s), known);
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

}  // namespace lplab::runtime
