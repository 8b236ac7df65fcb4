#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string_view>
#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/kernels/random.h"
#include "lplab/experiments/text.h"

namespace lplab::tool {
namespace {

constexpr double kTwoTo32 = 4294967296.0;  // 2^32: the count of stochastic random draws

// Stochastic rounding of x into one format, as the conversion itself does it:
// the random bits R in [0, 2^32) round the magnitude away from zero iff
// R >= 2^32 - floor(f * 2^32) (lplab/formats/policy.h), so the result is
// monotone in R. R = 0 gives the lower-magnitude neighbour, R = 2^32 - 1 the
// other, and a binary search over R for the first draw that gives the latter
// counts exactly the draws that do: 32 conversions, no model of the rounding.
struct Outcomes {
  std::uint64_t toward_zero, away;  // the two codes (equal when x is exact)
  std::uint64_t away_draws;         // how many of the 2^32 draws give `away`
};

Outcomes stochastic_outcomes(const FormatEntry& e, const Decimal& x, Overflow o) {
  Outcomes r{e.from_decimal(x, Round::stochastic, o, 0, nullptr),
             e.from_decimal(x, Round::stochastic, o, 0xFFFFFFFFu, nullptr), 0};
  if (r.away == r.toward_zero) return r;
  std::uint64_t lo = 1, hi = 0xFFFFFFFFu;  // the first draw giving `away` is in [lo, hi]
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (e.from_decimal(x, Round::stochastic, o, static_cast<std::uint32_t>(mid), nullptr) == r.away)
      hi = mid;
    else
      lo = mid + 1;
  }
  r.away_draws = (std::uint64_t{1} << 32) - lo;
  return r;
}

// The error v - x of a result v for the input x, known to lie between v -
// x.away_from_zero and v - x.toward_zero (equal when x is a long double). The
// six-digit text is shown when both ends give the same; otherwise only a
// bound on the magnitude is known (an input of more than 64 significant bits
// within 2^-63 of its result).
struct Error {
  bool known;         // both ends print alike
  long double value;  // v - x (the toward-zero end when not known)
  long double bound;  // |v - x| < bound when not known
};

Error error_of(double v, const Decimal& x) {
  const long double a = static_cast<long double>(v) - x.toward_zero;
  const long double b = static_cast<long double>(v) - x.away_from_zero;
  if (fmt::format("{:.6g}", a) == fmt::format("{:.6g}", b)) return {true, a, 0};
  return {false, a, std::fmax(std::fabs(a), std::fabs(b))};
}

std::string error_text(const Error& err) {
  return err.known ? fmt::format("{:.6g}", err.value) : fmt::format("|e|<{:.3g}", err.bound);
}

struct Row {
  const FormatEntry* e;
  std::uint64_t code;
  double v;
  Flags flags;
  std::optional<Outcomes> outcomes;  // stochastic rounding only
};

void run_inspect(const std::string& value, const std::vector<const FormatEntry*>& fs,
                 const std::string& round, const std::string& overflow,
                 std::optional<std::uint64_t> seed, Output out) {
  const Decimal x = parse_value(value);
  const bool x_finite = x.kind == detail::Kind::finite || x.kind == detail::Kind::zero;
  // Whether the input is a double itself (else each format rounds the text).
  const bool is_double = x.toward_zero == x.away_from_zero && static_cast<long double>(x.nearest) == x.toward_zero;
  const Round r = parse_round(round);
  const Overflow o = parse_overflow(overflow);
  const bool stochastic = r == Round::stochastic;
  if (seed && !stochastic) throw UsageError("--seed goes with --round stochastic only");
  // The random bits of element 0 of a bulk conversion with this seed.
  const std::uint32_t random = seed ? kernels::stochastic_bits(*seed, 0) : 0;
  const bool one_result = !stochastic || seed.has_value();

  std::vector<Row> rows;
  for (const FormatEntry* e : fs) {
    Flags f;
    const std::uint64_t code = e->from_decimal(x, r, o, random, &f);
    Row row{e, code, e->to_double(code), f, std::nullopt};
    if (stochastic) row.outcomes = stochastic_outcomes(*e, x, o);
    rows.push_back(row);
  }
  // Relative errors divide by |x|, known to 2^-63: as exact as six digits show.
  auto rel_err = [&](const Error& err) -> Error {
    const long double mag = std::fabs(x.toward_zero) > 0 ? std::fabs(x.toward_zero) : std::fabs(x.away_from_zero);
    return {err.known, err.value / mag, err.bound / mag};
  };
  auto rel_text = [&](double v, const Error& err) {
    if (x.kind == detail::Kind::zero) return std::string(v == 0 ? "0" : "inf");
    return error_text(rel_err(err));
  };
  auto bits = [](const Row& w) {
    return bit_groups(w.code, w.e->info.is_signed, w.e->info.exponent_bits, w.e->info.mantissa_bits);
  };
  // Probabilities are exact: a count of draws over 2^32 is a double exactly.
  auto p_away = [](const Outcomes& c) {
    return c.away == c.toward_zero ? 1.0 : static_cast<double>(c.away_draws) / kTwoTo32;
  };

  if (out == Output::json) {
    nlohmann::ordered_json j;
    j["input"] = value;
    j["value"] = std::isfinite(x.nearest) ? nlohmann::ordered_json(x.nearest) : nlohmann::ordered_json(value);
    j["value_is_exact"] = is_double;
    j["round"] = round_name(r);
    j["overflow"] = overflow_name(o);
    if (seed) {
      j["seed"] = *seed;
      j["random_bits"] = fmt::format("0x{:08x}", random);
    }
    j["results"] = nlohmann::ordered_json::array();
    // An error as a JSON number when it is known and a double, else its text.
    auto error_json = [](const Error& err) {
      const double d = static_cast<double>(err.value);
      if (err.known && std::isfinite(d) && (d != 0 || err.value == 0)) return nlohmann::ordered_json(d);
      return nlohmann::ordered_json(error_text(err));
    };
    for (const Row& w : rows) {
      const bool finite = std::isfinite(w.v) && x_finite;  // else no error to show
      nlohmann::ordered_json res = {{"format", w.e->name}};
      if (one_result) {
        res["code"] = code_hex(w.e, w.code);
        res["bits"] = bits(w);
        res["value"] = value_json(w.e, w.code);
        const Error err = error_of(w.v, x);
        res["abs_error"] = finite ? error_json(err) : nullptr;
        res["rel_error"] = !finite ? nullptr
                           : x.kind == detail::Kind::zero ? nlohmann::ordered_json(w.v == 0 ? 0.0 : INFINITY)
                                                          : error_json(rel_err(err));
        res["flags"] = flags_text(w.flags);
      }
      if (w.outcomes) {
        const Outcomes& c = *w.outcomes;
        res["outcomes"] = nlohmann::ordered_json::array();
        if (c.away == c.toward_zero) {
          res["outcomes"].push_back({{"code", code_hex(w.e, c.away)}, {"value", value_json(w.e, c.away)},
                                     {"probability", 1.0}, {"draws", "4294967296"}});
        } else {
          res["outcomes"].push_back({{"code", code_hex(w.e, c.toward_zero)}, {"value", value_json(w.e, c.toward_zero)},
                                     {"probability", 1.0 - p_away(c)},
                                     {"draws", std::to_string((std::uint64_t{1} << 32) - c.away_draws)}});
          res["outcomes"].push_back({{"code", code_hex(w.e, c.away)}, {"value", value_json(w.e, c.away)},
                                     {"probability", p_away(c)}, {"draws", std::to_string(c.away_draws)}});
        }
      }
      j["results"].push_back(res);
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }

  std::vector<std::string> header = {"format"};
  if (one_result) header.insert(header.end(), {"bits (s|e|m)", "code", "value", "abs error", "rel error", "flags"});
  if (stochastic) header.insert(header.end(), {"rounds to", "with p", "or to", "with p"});
  std::vector<std::vector<std::string>> table = {header};
  for (const Row& w : rows) {
    std::vector<std::string> line = {std::string(w.e->name)};
    if (one_result) {
      const bool finite = std::isfinite(w.v) && x_finite;  // else no error to show
      const Error err = error_of(w.v, x);
      line.insert(line.end(), {bits(w), code_hex(w.e, w.code), w.e->to_text(w.code),
                               finite ? error_text(err) : "-", finite ? rel_text(w.v, err) : "-",
                               flags_text(w.flags)});
    }
    if (w.outcomes) {
      const Outcomes& c = *w.outcomes;
      if (c.away == c.toward_zero) {
        line.insert(line.end(), {w.e->to_text(c.away), "1", "-", "-"});
      } else {
        line.insert(line.end(), {w.e->to_text(c.toward_zero), shortest(1.0 - p_away(c)),
                                 w.e->to_text(c.away), shortest(p_away(c))});
      }
    }
    table.push_back(line);
  }
  if (out == Output::csv) {
    print_stdout(csv_text(table));
    return;
  }
  // The input as a double when it is one; otherwise the text, which each
  // format rounds once.
  const std::string shown = is_double || std::isnan(x.nearest) ? fmt::format("{} = {}", value, shortest(x.nearest)) : value;
  const std::string note = is_double || std::isnan(x.nearest) ? "" : "; no double holds it: each format rounds the decimal once";
  if (seed)
    fmt::print("input {} (round stochastic, seed {}: random bits 0x{:08x}; overflow {}{})\n\n", shown, *seed,
               random, overflow_name(o), note);
  else
    fmt::print("input {} (round {}, overflow {}{})\n\n", shown, round_name(r), overflow_name(o), note);
  fmt::print("{}", render_table(table));
  if (stochastic)
    fmt::print("\np: the exact share of the 2^32 random draws that give each neighbour (it is x's\n"
               "position between them whenever that fraction has at most 32 bits).{}\n",
               seed ? "" : "\nAdd --seed N for the result of one seed's draw.");
}

void run_decode(const std::string& code_text, std::vector<const FormatEntry*> fs, bool named, Output out) {
  // The code: 0x hex, 0b binary or decimal digits, nothing else.
  std::uint64_t code = 0;
  int base = 10;
  std::string_view digits = code_text;
  if (digits.starts_with("0x") || digits.starts_with("0X")) base = 16, digits.remove_prefix(2);
  else if (digits.starts_with("0b") || digits.starts_with("0B")) base = 2, digits.remove_prefix(2);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), code, base);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size())
    throw UsageError(fmt::format("--code: '{}' is not a code (0x7e, 126 or 0b01111110)", code_text));
  // Without --to, the formats the code fits; a named format must fit it.
  const auto too_wide = [&](const FormatEntry* e) { return e->info.bits < 64 && code >> e->info.bits != 0; };
  if (!named) {
    std::erase_if(fs, too_wide);
    if (fs.empty()) throw UsageError(fmt::format("--code: {} is wider than every format (32 bits at most)", code_text));
  }
  for (const FormatEntry* e : fs)
    if (too_wide(e))
      throw UsageError(fmt::format("--code: {} does not fit {}'s {} bits (largest code 0x{:x})", code_text, e->name,
                                   e->info.bits, (std::uint64_t{1} << e->info.bits) - 1));
  std::vector<std::vector<std::string>> table = {{"format", "bits (s|e|m)", "code", "value", "class"}};
  nlohmann::ordered_json j = {{"code", code_text}, {"results", nlohmann::ordered_json::array()}};
  for (const FormatEntry* e : fs) {
    const std::string hex = code_hex(e, code);
    const std::string bits = bit_groups(code, e->info.is_signed, e->info.exponent_bits, e->info.mantissa_bits);
    const std::string cls = code_class(e, code);
    table.push_back({std::string(e->name), bits, hex, e->to_text(code), cls});
    j["results"].push_back({{"format", e->name}, {"code", hex}, {"bits", bits}, {"value", value_json(e, code)},
                            {"class", cls}});
  }
  if (out == Output::json) {
    print_stdout(j.dump(2) + "\n");
  } else if (out == Output::csv) {
    print_stdout(csv_text(table));
  } else {
    print_stdout(fmt::format("code {}\n\n{}", code_text, render_table(table)));
  }
}

// CLI11 takes "-inf" and "-nan" for options (it knows "-3" is a number), and a
// value after "--" goes to the top-level command, not to `inspect`: the value
// is therefore taken out of the arguments before CLI11 sees them.
bool negative_special(std::string_view s) {
  if (s.size() < 4 || s[0] != '-') return false;
  std::string t;
  for (char c : s.substr(1)) t += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return t == "inf" || t == "infinity" || t == "nan" || (t.starts_with("nan(") && t.ends_with(")"));
}

// args[0] is "inspect".
std::vector<std::string> take_values(std::vector<std::string>& args) {
  std::vector<std::string> kept(args.begin(), args.begin() + 1), taken;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string_view a = args[i];
    const std::string_view prev = args[i - 1];
    const bool is_option_value = prev.starts_with("--") && prev.find('=') == std::string_view::npos;
    if (a == "--") {
      taken.insert(taken.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (negative_special(a) && !is_option_value) taken.emplace_back(a);
    else kept.push_back(args[i]);
  }
  args = kept;
  return taken;
}

// A seed: a whole decimal number from 0 to 2^64 - 1, nothing else (CLI11
// clamps a larger one to 2^64 - 1).
std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    throw UsageError(fmt::format("--seed '{}': expected a whole number from 0 to 18446744073709551615", text));
  return v;
}

int inspect_command(const Args& a) {
  const Output out = output_of(a);
  const std::vector<std::string> to = a.values("--to");
  std::vector<std::string> taken = a.taken;
  if (const std::string v = a.value("value"); !v.empty()) taken.insert(taken.begin(), v);
  if (const auto code = a.optional_value("--code")) {
    if (!taken.empty()) throw UsageError("give a value or --code, not both");
    run_decode(*code, resolve_formats(to), !to.empty(), out);
    return 0;
  }
  if (taken.empty()) throw UsageError("value is required (lplab inspect VALUE; -inf and -nan are fine)");
  if (taken.size() > 1) throw UsageError(fmt::format("one value at a time, got {}", fmt::join(taken, " ")));
  std::optional<std::uint64_t> seed;
  if (const auto text = a.optional_value("--seed")) seed = parse_seed(*text);
  run_inspect(taken.front(), resolve_formats(to), a.value("--round", "nearest_even"), a.value("--overflow", "ieee"),
              seed, out);
  return 0;
}

}  // namespace

LPLAB_COMMAND(Command{
    .name = "inspect",
    .help = "Round a value into formats and show the bits and errors",
    .args = {positional("value", "A number: 0.1, -1e-8, 0x1p-3, inf, -inf, nan"),
             option("--code", "Decode this code instead of rounding a value (0x7e, 126, 0b01111110): its bits, "
                              "value and class in each --to format"),
             option("--to", "Formats (default: all)", true),
             option("--round", "nearest_even, nearest_away, toward_zero, upward, downward, stochastic"),
             option("--seed", "With --round stochastic: show the result for this seed's random bits "
                              "(those of element 0 of a bulk conversion with the same seed)"),
             option("--overflow", "ieee or saturate"), output_option()},
    .run = inspect_command,
    .take_values = take_values});

}  // namespace lplab::tool
