#include <fmt/format.h>

#include <cfloat>
#include <charconv>
#include <cmath>
#include <string_view>
#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/exact.h"
#include "lplab/kernels/random.h"
#include "lplab/lab/table.h"
#include "lplab/runtime/text.h"

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

// The error columns. The input x is exact as typed and a format's value v is
// a double, so the absolute error v - x and the relative error (v - x) / x
// (v = x (1 + rel)) are exact rationals (exact.h), shown as:
//   - their decimal in full when it ends within 40 digits (0.1 into bf16:
//     9.765625e-05, exactly; a result of 0: a relative error of -1);
//   - "~" and 17 significant digits when it does not (0.3 into e4m3, a
//     quotient by 3), or six from logarithms for a number too long to write
//     out (the error of 2^-99999999999);
//   - "|e|<b" (or "|e|>b") only where no more is known: an input past what
//     inspect expands (an exponent beyond 10^18), bracketed by its long
//     doubles.
// JSON carries the double nearest each error (always a number; null only
// beyond double's range) and whether that double is the error itself.
constexpr std::size_t kExactDigits = 40;  // a decimal written out in full
constexpr std::size_t kShownDigits = 17;  // an approximation's digits

struct ErrorCell {
  std::string text;
  double value;  // the double nearest the error
  bool exact;    // value is the error itself
};

ErrorCell cell_of(const exact::Digits& d) {
  const double nearest = exact::nearest_double(d);
  if (d.sticky) return {"~" + exact::text_of(exact::rounded(d, kShownDigits)), nearest, false};
  bool is_double = d.d.empty();
  if (!is_double && std::isfinite(nearest) && nearest != 0) {
    const exact::Exact n = exact::of_double(nearest);
    const auto back = exact::digits_of(n.neg, n.n, exact::BigNat(1), n.p2, n.p5, kExactDigits);
    is_double = back && !back->sticky && back->d == d.d && back->point == d.point;
  }
  return {exact::text_of(d), nearest, is_double};
}

// a / b * 2^p2 * 5^p5 written out, or its leading digits from logarithms.
exact::Digits digits_or_log(bool neg, const exact::BigNat& a, const exact::BigNat& b, std::int64_t p2, std::int64_t p5) {
  if (auto d = exact::digits_of(neg, a, b, p2, p5, kExactDigits)) return *d;
  return exact::digits_from_log(neg, a, b, p2, p5);
}
exact::Digits digits_or_log(const exact::Exact& e) { return digits_or_log(e.neg, e.n, exact::BigNat(1), e.p2, e.p5); }

// "|e|<b" with b rounded up to three digits, or "|e|>b" rounded down: still
// bounds (the margin covers the rounding of the scaling).
std::string bound_text(char relation, long double b) {
  if (!std::isfinite(b) || b == 0) return fmt::format("|e|{}{}", relation, static_cast<double>(b));
  const int e = static_cast<int>(std::floor(std::log10(b))) - 2;
  const long double m = b / std::pow(10.0L, e);
  const long double r = relation == '<' ? std::ceil(m * (1 + 1e-15L)) : std::floor(m * (1 - 1e-15L));
  return fmt::format("|e|{}{:.3g}", relation, r * std::pow(10.0L, e));
}

// An error known between a and b (the input's long double brackets): the
// double both round to, else a bound on its magnitude.
ErrorCell bracketed(long double a, long double b) {
  const double da = static_cast<double>(a), db = static_cast<double>(b);
  if (da == db && std::isfinite(da)) return {"~" + shortest(da), da, false};
  const long double hi = std::fmax(std::fabs(a), std::fabs(b));
  if (std::isfinite(hi)) return {bound_text('<', hi), da, false};
  // Both ends past long double's range: so is the error.
  const long double lo = std::fmin(std::fabs(a), std::fabs(b));
  return {bound_text('>', std::isfinite(lo) ? lo : LDBL_MAX), da, false};
}

// The errors of one result v for the input `text` (x; xe its exact value
// when inspect can expand it).
struct Errors {
  ErrorCell abs, rel;
};

Errors errors_of(double v, const std::string& text, const Decimal& x, const std::optional<exact::Exact>& xe) {
  // A result of 0 is off by exactly -x: the input's own text, negated, for
  // an x whose decimal is too long to write out (0x1p-99999999999).
  const auto minus_x = [&]() -> std::optional<ErrorCell> {
    if (v != 0 || text.size() > kExactDigits) return std::nullopt;
    const bool signed_text = text.starts_with('+') || text.starts_with('-');
    return ErrorCell{(text.starts_with('-') ? "" : "-") + text.substr(signed_text ? 1 : 0), -x.nearest, false};
  };
  const exact::Exact ve = exact::of_double(v);
  const std::optional<exact::Exact> err = xe ? exact::difference(ve, *xe) : std::nullopt;
  // How far apart v and x are, in decades, when v - x is too long to expand:
  // then one of them dwarfs the other.
  const double gap = xe && !err && v != 0 ? ve.log10_mag() - xe->log10_mag() : 0;
  Errors r;
  // v - x.
  if (err) {
    const std::optional<exact::Digits> d =
        exact::digits_of(err->neg, err->n, exact::BigNat(1), err->p2, err->p5, kExactDigits);
    const std::optional<ErrorCell> literal = d ? std::nullopt : minus_x();
    r.abs = literal ? *literal : cell_of(d ? *d : digits_or_log(*err));
  } else if (gap > 30 || gap < -30) {
    exact::Digits d = gap > 0 ? digits_or_log(ve) : digits_or_log(!xe->neg, xe->n, exact::BigNat(1), xe->p2, xe->p5);
    d.sticky = true;  // the other term is left out
    r.abs = cell_of(d);
  } else if (const std::optional<ErrorCell> literal = minus_x()) {
    r.abs = *literal;
  } else {
    r.abs = bracketed(static_cast<long double>(v) - x.toward_zero, static_cast<long double>(v) - x.away_from_zero);
  }
  // (v - x) / x.
  if (x.kind == ValueKind::zero) {
    r.rel = v == 0 ? ErrorCell{"0", 0.0, true} : ErrorCell{"inf", INFINITY, true};
  } else if (v == 0) {
    r.rel = {"-1", -1.0, true};
  } else if (err) {
    const std::optional<exact::Exact> q = exact::exact_quotient(*err, *xe);
    r.rel = cell_of(q ? digits_or_log(*q)
                    : digits_or_log(err->neg != xe->neg, err->n, xe->n, err->p2 - xe->p2, err->p5 - xe->p5));
  } else if (gap < -30) {
    r.rel = {"~-1", -1.0, false};
  } else if (gap > 30) {
    exact::Digits d = digits_or_log(ve.neg != xe->neg, ve.n, xe->n, ve.p2 - xe->p2, ve.p5 - xe->p5);
    d.sticky = true;  // v / x, less 1
    r.rel = cell_of(d);
  } else {
    // (v - x) / x is monotone in x between the brackets.
    const long double lv = v;
    const auto rel_at = [&](long double t) { return (lv - t) / t; };
    r.rel = bracketed(rel_at(x.toward_zero), rel_at(x.away_from_zero));
  }
  return r;
}

struct Row {
  const FormatEntry* e;
  std::uint64_t code;
  double v;
  Flags flags;
  std::optional<Errors> errors;      // a finite result of a finite input
  std::optional<Outcomes> outcomes;  // stochastic rounding only
};

void run_inspect(const std::string& value, const std::vector<const FormatEntry*>& fs,
                 const std::string& round, const std::string& overflow,
                 std::optional<std::uint64_t> seed, Output out) {
  const Decimal x = parse_value(value);
  const bool x_finite = x.kind == ValueKind::finite || x.kind == ValueKind::zero;
  // Whether the input is a double itself (else each format rounds the text).
  const bool is_double = x.toward_zero == x.away_from_zero && static_cast<long double>(x.nearest) == x.toward_zero;
  const Round r = parse_round(round);
  const Overflow o = parse_overflow(overflow);
  for (const FormatEntry* e : fs) check_overflow(*e, o);
  const bool stochastic = r == Round::stochastic;
  if (seed && !stochastic) throw UsageError("--seed goes with --round stochastic only");
  // The random bits of element 0 of a bulk conversion with this seed.
  const std::uint32_t random = seed ? kernels::stochastic_bits(*seed, 0) : 0;
  const bool one_result = !stochastic || seed.has_value();

  // The input's exact value, when it is finite and short enough to expand.
  const std::optional<exact::Exact> xe = x.kind == ValueKind::finite ? exact::parse_exact(value)
                                         : x.kind == ValueKind::zero ? std::optional<exact::Exact>(exact::Exact{})
                                                                        : std::nullopt;
  std::vector<Row> rows;
  for (const FormatEntry* e : fs) {
    Flags f;
    const std::uint64_t code = e->from_decimal(x, r, o, random, &f);
    Row row{e, code, e->to_double(code), f, std::nullopt, std::nullopt};
    if (one_result && std::isfinite(row.v) && x_finite) row.errors = errors_of(row.v, value, x, xe);
    if (stochastic) row.outcomes = stochastic_outcomes(*e, x, o);
    rows.push_back(row);
  }
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
    // An error as the double nearest it (null beyond double's range).
    auto error_json = [](const ErrorCell& c) {
      return std::isfinite(c.value) ? nlohmann::ordered_json(c.value) : nlohmann::ordered_json(nullptr);
    };
    for (const Row& w : rows) {
      nlohmann::ordered_json res = {{"format", w.e->name}};
      if (one_result) {
        res["code"] = code_hex(w.e, w.code);
        res["bits"] = bits(w);
        res["value"] = value_json(w.e, w.code);
        res["abs_error"] = w.errors ? error_json(w.errors->abs) : nullptr;
        res["abs_error_is_exact"] = w.errors && w.errors->abs.exact;
        res["rel_error"] = w.errors ? error_json(w.errors->rel) : nullptr;
        res["rel_error_is_exact"] = w.errors && w.errors->rel.exact;
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
      line.insert(line.end(), {bits(w), code_hex(w.e, w.code), w.e->to_text(w.code),
                               w.errors ? w.errors->abs.text : "-", w.errors ? w.errors->rel.text : "-",
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
  if (one_result)
    fmt::print("\nabs error: v - x, the value minus the input; rel error: (v - x) / x, so that v = x (1 + rel error).\n"
               "Both are exact as written; ~ marks one rounded (its decimal does not end within {} digits),\n"
               "|e|< or |e|> a bound (an input past what inspect expands: an exponent beyond 10^18).\n",
               kExactDigits);
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
  // --to fp16,bf16 and --to fp16 --to bf16 alike, as run --dtypes.
  const std::vector<std::string> to = split_list(a.values("--to"), "--to");
  std::vector<std::string> taken = a.taken;
  if (const std::string v = a.value("value"); !v.empty()) taken.insert(taken.begin(), v);
  if (const auto code = a.optional_value("--code")) {
    if (!taken.empty()) throw UsageError("give a value or --code, not both");
    // A code is decoded, not rounded: a rounding option would be ignored.
    for (const char* o : {"--round", "--seed", "--overflow"})
      if (a.given(o)) throw UsageError(fmt::format("{} goes with a value to round; --code decodes a code as it is", o));
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
    .help = "Round a value into formats and show the bits and the exact errors (v - x and (v - x) / x)",
    .args = {positional("value", "A number: 0.1, -1e-8, 0x1p-3, inf, -inf, nan"),
             option("--code", "Decode this code instead of rounding a value (0x7e, 126, 0b01111110): its bits, "
                              "value and class in each --to format"),
             option("--to", "Formats, one or a comma list (fp16,bf16), the option repeated or not (default: all)",
                    true),
             option("--round", enum_names_text<Round>()),
             option("--seed", "With --round stochastic: show the result for this seed's random bits "
                              "(those of element 0 of a bulk conversion with the same seed)"),
             option("--overflow", enum_names_text<Overflow>()), output_option()},
    .run = inspect_command,
    .take_values = take_values});

}  // namespace lplab::tool
