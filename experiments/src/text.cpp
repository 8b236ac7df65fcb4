#include "lplab/experiments/text.h"

#include "lplab/kernels/nearest_names.h"

#include <fmt/format.h>

#include <algorithm>
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

namespace {

// The policy whose name or alias is s, among all of them (policy.h); or, in
// one line, every name that would have been accepted.
template <class Policy, std::size_t N, class Name, class Aliases>
Policy parse_policy(std::string_view s, const Policy (&all)[N], Name name, Aliases aliases, const char* what) {
  std::string accepted;
  for (Policy p : all) {
    if (s == name(p)) return p;
    for (const char* alias : aliases(p).names)
      if (alias != nullptr && s == alias) return p;
    accepted += fmt::format("{}{}", accepted.empty() ? "" : ", ", name(p));
  }
  throw UsageError(fmt::format("unknown {} '{}' ({})", what, s, accepted));
}

}  // namespace

Round parse_round(std::string_view s) {
  return parse_policy(s, kRounds, round_name, round_aliases, "rounding");
}

Overflow parse_overflow(std::string_view s) {
  return parse_policy(s, kOverflows, overflow_name, overflow_aliases, "overflow policy");
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
