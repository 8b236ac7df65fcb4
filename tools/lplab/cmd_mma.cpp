// lplab mma: one matrix-unit instruction (kernels/mma.h) on given operands,
// D beside the exact A B + C, and what decided it -- every fused step's
// alignment exponent, the grid its terms were cut to, how many lost bits,
// the sum kept, where it was rounded and each cut that lost bits -- for
// kernel writers; --list prints every preset.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/lab/table.h"
#include "lplab/runtime/text.h"
#include "lplab/kernels/integer_mma.h"
#include "lplab/kernels/mma.h"

namespace lplab::tool {
namespace {

using namespace lplab::kernels;

std::string join_names(const std::vector<std::string_view>& v) {
  std::string s;
  for (auto n : v) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

const MmaInstruction& preset(const std::string& name) {
  if (const MmaInstruction* i = find_mma_instruction(name)) return *i;
  throw UsageError(fmt::format("unknown matrix-unit preset '{}' (closest: {}; lplab mma --list shows all {})", name,
                               join_names(closest_mma_instructions(name)), mma_instructions().size()));
}

// A code: 0x and hex digits only ("0x3c00"); "0x1p-3" and "0x1.8p1" are hex
// floats, values.
bool is_mma_code(const std::string& text) {
  return text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') &&
         text.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
}

// One operand: a code (0x...) or a value that the type holds exactly --
// a decimal or a hex float, read exactly (parse_value) as inspect reads it,
// so that a decimal no double holds is refused for f64 as for every type.
std::uint64_t parse_code(MmaType t, const std::string& text, const std::string& what) {
  const MmaTypeInfo& info = mma_type_info(t);
  if (is_mma_code(text)) {
    std::uint64_t c = 0;
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data() + 2, end, c, 16);
    if (ec != std::errc() || p != end) throw UsageError(fmt::format("{}: '{}' is not a hex code", what, shown(text)));
    if (info.bits < 64 && (c >> info.bits) != 0)
      throw UsageError(fmt::format("{}: {} is not a code of {} ({} bits)", what, text, info.name, info.bits));
    return c;
  }
  Decimal x;
  try {
    x = parse_value(text);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {} (give a value, e.g. 0.5 or 0x1p-3, or a code: 0x and hex digits)", what,
                                 e.what()));
  }
  // The double that is the number, if one is: the number lies between the
  // long doubles toward_zero and away_from_zero, equal iff it is one.
  const bool is_nan = x.kind == lplab::ValueKind::nan;
  const bool is_double = is_nan || (x.toward_zero == x.away_from_zero &&
                                    static_cast<long double>(static_cast<double>(x.toward_zero)) == x.toward_zero);
  const double v = is_nan ? x.nearest : static_cast<double>(x.toward_zero);
  // The code whose value it is, with its sign (fnuz types have no -0).
  const std::optional<std::uint64_t> code = is_double ? mma_code(t, v) : std::nullopt;
  const bool found = code && (is_nan || std::signbit(mma_decode(t, *code)) == std::signbit(v));
  if (!found)
    throw UsageError(fmt::format("{}: {} is not exactly representable in {} (give a value it holds, or a code 0x...)",
                                 what, shown(text), info.name));
  return *code;
}

std::vector<double> parse_list(MmaType t, const std::vector<std::string>& items, const std::string& what) {
  std::vector<double> out;
  for (const std::string& s : items) out.push_back(mma_decode(t, parse_code(t, s, what)));
  return out;
}

std::string value_text(double v) { return std::isnan(v) ? "nan" : std::isinf(v) ? (v < 0 ? "-inf" : "inf") : shortest(v); }

// A sum of products of doubles kept exactly: a fixed-point number in two's
// complement, kLimbs limbs of 64 bits, bit 0 worth 2^kBase. A product of two
// doubles mx 2^ex my 2^ey (53-bit mx, my; ex, ey >= -1126) lies below
// 2^2048, so f64 operands fit with room for 2^200 of them (mma_step.h's
// WideSum spans the narrow types' products only).
class MmaExactSum {
 public:
  static constexpr int kBase = -2252, kLimbs = 72;  // the sign bit at 2^(4608 - 1 - 2252)

  // + x y, for finite x and y: x = mx 2^ex with mx < 2^53, the product taken
  // in 27-bit halves, each partial product below 2^54.
  void add_product(double x, double y) {
    if (x == 0 || y == 0) return;
    int ex = 0, ey = 0;
    const std::uint64_t mx = significand(x, ex), my = significand(y, ey);
    const bool neg = std::signbit(x) != std::signbit(y);
    constexpr std::uint64_t kLow = (std::uint64_t{1} << 27) - 1;
    const std::uint64_t xh = mx >> 27, xl = mx & kLow, yh = my >> 27, yl = my & kLow;
    add_at(xh * yh, ex + ey + 54, neg);
    add_at(xh * yl, ex + ey + 27, neg);
    add_at(xl * yh, ex + ey + 27, neg);
    add_at(xl * yl, ex + ey, neg);
  }

  // The double nearest the sum (ties to even; an infinity beyond double's
  // range); `exact` says whether it is the sum itself.
  double nearest(bool& exact) const {
    std::array<std::uint64_t, kLimbs> w = limb_;
    const bool neg = (w[kLimbs - 1] >> 63) != 0;
    if (neg) {  // two's complement negation
      std::uint64_t carry = 1;
      for (std::uint64_t& l : w) {
        l = ~l + carry;
        carry = carry && l == 0;
      }
    }
    const auto bit = [&](int i) { return i >= 0 && ((w[static_cast<std::size_t>(i / 64)] >> (i % 64)) & 1) != 0; };
    int top = kLimbs * 64 - 1;
    while (top >= 0 && !bit(top)) --top;
    exact = true;
    if (top < 0) return 0.0;
    const int lsb = std::max(top - 52, -1074 - kBase);  // double's grid at the sum (subnormals' below 2^-1022)
    std::uint64_t mant = 0;
    for (int i = top; i >= lsb; --i) mant = (mant << 1) | static_cast<std::uint64_t>(bit(i));
    bool half = bit(lsb - 1), rest = false;
    for (int i = 0; i < lsb - 1 && !rest; ++i) rest = bit(i);
    exact = !half && !rest;
    if (half && (rest || (mant & 1) != 0)) ++mant;
    const double v = std::ldexp(static_cast<double>(mant), lsb + kBase);  // inf beyond the range
    exact = exact && std::isfinite(v);
    return neg ? -v : v;
  }

 private:
  // |x| = m 2^e with m < 2^53 a whole number.
  static std::uint64_t significand(double x, int& e) {
    const double m = std::frexp(std::fabs(x), &e);
    e -= 53;
    return static_cast<std::uint64_t>(std::ldexp(m, 53));
  }
  // +/- m 2^e: m's bits at position e - kBase, carried through the limbs above.
  void add_at(std::uint64_t m, int e, bool neg) {
    if (m == 0) return;
    const int pos = e - kBase;
    const auto w = static_cast<std::size_t>(pos / 64);
    const int b = pos % 64;
    const std::uint64_t lo = m << b, hi = b == 0 ? 0 : m >> (64 - b);
    std::uint64_t carry = 0;
    for (std::size_t i = w; i < limb_.size(); ++i) {
      const std::uint64_t part = i == w ? lo : i == w + 1 ? hi : 0;
      if (i > w + 1 && carry == 0) break;
      const std::uint64_t old = limb_[i];
      if (!neg) {
        const std::uint64_t s1 = old + part, s2 = s1 + carry;
        carry = (s1 < old) || (s2 < s1);
        limb_[i] = s2;
      } else {
        const std::uint64_t d1 = old - part, d2 = d1 - carry;
        carry = (old < part) || (d1 < carry);
        limb_[i] = d2;
      }
    }
  }
  std::array<std::uint64_t, kLimbs> limb_{};
};

// A double that may stand for a number it is nearest to: "~" before it then.
std::string approx_text(double v, bool exact) { return (exact ? "" : "~") + value_text(v); }

// What lost bits in a step, in the order the model does it ("nothing: exact"
// where no bit was lost).
std::vector<std::string> decided_by(const MmaModel& m, const MmaStepTrace& t) {
  if (t.special) return {"NaN/inf by IEEE"};
  const bool two_stage = m.algorithm == MmaAlgorithm::two_stage || m.algorithm == MmaAlgorithm::two_stage_split;
  std::vector<std::string> out;
  if (t.terms_cut > 0)
    out.push_back(fmt::format("{} {}{} cut at 2^{}", t.terms_cut, two_stage ? "product" : "term",
                              t.terms_cut == 1 ? "" : "s", t.grid));
  if (t.half_cut) out.push_back(fmt::format("smaller half floored at 2^{}", t.grid));
  if (t.dot_cut) out.push_back(fmt::format("products' sum floored at 2^{}", t.common_grid));
  if (t.c_dropped) out.push_back("C dropped (F + 1 binades below)");
  if (t.c_cut) out.push_back(fmt::format("C floored at 2^{}", t.c_grid));
  if (t.sum_cut) out.push_back(fmt::format("sum floored at 2^{} (F2 bits)", t.sum_grid));
  if (t.rounded) out.push_back(std::string("rounded ") + mma_rounding_name(m.rounding));
  if (out.empty()) out.push_back("nothing: exact");
  return out;
}

int list(Output out) {
  std::vector<std::vector<std::string>> rows = {{"preset", "generation", "instruction", "m", "n", "k", "a", "b", "c",
                                                 "d", "scale", "model"}};
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const MmaInstruction& i : mma_instructions()) {
    const auto ty = [](MmaType t) { return std::string(t == MmaType::none ? "-" : mma_type_info(t).name); };
    rows.push_back({i.name, std::string(i.arch), i.isa, std::to_string(i.m), i.n ? std::to_string(i.n) : "N",
                    std::to_string(i.k), ty(i.a), ty(i.b), ty(i.c), ty(i.d), ty(i.scale), mma_parameters(i)});
    const MmaModel& m = i.model;
    j.push_back({{"preset", i.name}, {"generation", i.arch}, {"instruction", i.isa}, {"m", i.m}, {"n", i.n},
                 {"k", i.k}, {"a", ty(i.a)}, {"b", ty(i.b)}, {"c", ty(i.c)}, {"d", ty(i.d)}, {"scale", ty(i.scale)},
                 {"algorithm", mma_algorithm_name(m.algorithm)}, {"rounding", mma_rounding_name(m.rounding)},
                 {"group", m.group}, {"fraction_bits", m.fraction_bits}, {"fraction_bits2", m.fraction_bits2},
                 {"zero_exponent", m.zero_exponent}, {"sum_group", m.sum_group}, {"scale_block", m.scale_block}});
  }
  // The integer units (integer_mma.h): s32 C and D, an exact sum per instruction.
  for (const IntegerMmaInstruction& i : integer_mma_instructions()) {
    const std::string model = std::string("exact integer sum, ") + (i.saturate ? "clamped to int32" : "wrapped mod 2^32") +
                              (i.blocks > 1 ? fmt::format(", {} blocks", i.blocks) : "");
    rows.push_back({i.name, std::string(i.arch), i.isa, std::to_string(i.m), i.n ? std::to_string(i.n) : "N",
                    std::to_string(i.k), std::string(i.a), std::string(i.b), "s32", "s32", "-", model});
    j.push_back({{"preset", i.name}, {"generation", i.arch}, {"instruction", i.isa}, {"m", i.m}, {"n", i.n},
                 {"k", i.k}, {"a", i.a}, {"b", i.b}, {"c", "s32"}, {"d", "s32"}, {"scale", "-"},
                 {"algorithm", "integer"}, {"rounding", i.saturate ? "saturate" : "wrap"}, {"blocks", i.blocks}});
  }
  if (out == Output::json) print_stdout(j.dump(2) + "\n");
  else if (out == Output::csv) print_stdout(csv_text(rows));
  else print_stdout(render_table(rows));
  return 0;
}

// An integer preset on given operands: D, the exact A B + C, and what the
// s32 accumulator did to it.
int evaluate_integer(const IntegerMmaInstruction& i, const Args& a, Output out) {
  if (!a.given("--a") || !a.given("--b"))
    throw UsageError(fmt::format("{} needs --a and --b: k = {} integers each (or more, chained)", i.name, i.k));
  if (a.given("--scale-a") || a.given("--scale-b")) throw UsageError(fmt::format("{} takes no scales", i.name));
  const auto ints = [&](const char* what, std::int64_t lo, std::int64_t hi) {
    std::vector<std::int32_t> v;
    for (const std::string& item : split_list(a.values(what), what)) {
      std::int64_t x = 0;
      std::size_t used = 0;
      try {
        x = std::stoll(item, &used, 0);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size() || item.empty())
        throw UsageError(fmt::format("{}: '{}' is not an integer", what, item));
      if (x < lo || x > hi) throw UsageError(fmt::format("{}: {} lies outside {} .. {}", what, item, lo, hi));
      v.push_back(static_cast<std::int32_t>(x));
    }
    return v;
  };
  const std::vector<std::int32_t> va = ints("--a", i.a_min, i.a_max), vb = ints("--b", i.b_min, i.b_max);
  if (va.size() != vb.size()) throw UsageError(fmt::format("--a has {} values but --b {}", va.size(), vb.size()));
  const std::int32_t c = a.given("--c") ? ints("--c", INT32_MIN, INT32_MAX).at(0) : 0;
  const std::int32_t d = integer_mma_chain(i, va, vb, c);
  std::int64_t exact = c;
  for (std::size_t t = 0; t < va.size(); ++t) exact += std::int64_t{va[t]} * vb[t];
  const bool fits = exact >= INT32_MIN && exact <= INT32_MAX;
  const std::string what = d == exact ? "exact" : i.saturate ? "clamped (once per instruction)" : "wrapped mod 2^32";
  if (out == Output::json) {
    print_stdout(nlohmann::ordered_json({{"preset", i.name}, {"instruction", i.isa}, {"d", d}, {"exact", exact},
                                         {"exact_fits_int32", fits}, {"d_is", what}})
                     .dump(2) +
                 "\n");
    return 0;
  }
  print_stdout(fmt::format("{}  ({}; exact integer sum, {})\nD = {}\nexact A B + C = {}: D is {}\n", i.name, i.isa,
                           i.saturate ? "clamped to int32" : "wrapped mod 2^32", d, exact, what));
  return 0;
}

// A B + C exactly, the scales applied (the number D stands for), and D
// minus it; IEEE's NaN or infinity where one takes part.
struct MmaExact {
  double value = 0;
  bool exact = true;  // value is the sum itself, not its nearest double
  double error = 0;   // D - the sum, to nearest double
  bool error_exact = true;
  bool special = false;
};
MmaExact exact_result(const MmaInstruction& i, const std::vector<double>& a, const std::vector<double>& b, double c,
                      const std::vector<double>& sa, const std::vector<double>& sb, double d) {
  MmaExactSum sum;
  bool nan = false, pos_inf = false, neg_inf = false;
  const auto term = [&](double x, double y) {
    if (std::isfinite(x) && std::isfinite(y)) return sum.add_product(x, y);
    const double p = x * y;  // IEEE's: inf x 0 is NaN
    nan = nan || std::isnan(p);
    pos_inf = pos_inf || p == INFINITY;
    neg_inf = neg_inf || p == -INFINITY;
  };
  term(c, 1.0);
  for (std::size_t t = 0; t < a.size(); ++t) {
    if (sa.empty()) {
      term(a[t], b[t]);
    } else {
      // Exact in double: block-scaled elements and scales have at most 4
      // significant bits and exponents within 2^+-145 together.
      const std::size_t blk = t / static_cast<std::size_t>(i.model.scale_block);
      term(a[t] * b[t] * sa[blk], sb[blk]);
    }
  }
  MmaExact r;
  if (nan || pos_inf || neg_inf) {
    r.special = true;
    r.value = nan || (pos_inf && neg_inf) ? NAN : pos_inf ? INFINITY : -INFINITY;
    return r;
  }
  r.value = sum.nearest(r.exact);
  if (!std::isfinite(d)) {
    r.error = d;
  } else {
    sum.add_product(d, -1.0);  // the sum - D
    r.error = 0.0 - sum.nearest(r.error_exact);  // +0 where D is exact
  }
  return r;
}

int evaluate(const Args& a, Output out) {
  if (const IntegerMmaInstruction* ii = find_integer_mma_instruction(a.value("preset")))
    return evaluate_integer(*ii, a, out);
  const MmaInstruction& i = preset(a.value("preset"));
  if (!a.given("--a") || !a.given("--b"))
    throw UsageError(fmt::format("{} needs --a and --b: k = {} operands each (or a multiple of k, chained)", i.name, i.k));
  const std::vector<double> va = parse_list(i.a, split_list(a.values("--a"), "--a"), "--a");
  const std::vector<double> vb = parse_list(i.b, split_list(a.values("--b"), "--b"), "--b");
  const auto k = static_cast<std::size_t>(i.k);
  if (va.size() % k != 0 || va.empty())
    throw UsageError(fmt::format("--a has {} values; {} takes k = {} per instruction (or a multiple of k, chained)",
                                 va.size(), i.name, i.k));
  if (vb.size() != va.size()) throw UsageError(fmt::format("--a has {} values but --b {}", va.size(), vb.size()));
  const double c = a.given("--c") ? mma_decode(i.c, parse_code(i.c, a.value("--c"), "--c")) : 0.0;
  std::vector<double> sa, sb;
  if (i.scale != MmaType::none) {
    const std::size_t blocks = va.size() / static_cast<std::size_t>(i.model.scale_block);
    if (!a.given("--scale-a") || !a.given("--scale-b"))
      throw UsageError(fmt::format("{} is block-scaled: --scale-a and --scale-b give {} {} scale(s) each (one per {} "
                                   "elements)", i.name, blocks, mma_type_info(i.scale).name, i.model.scale_block));
    sa = parse_list(i.scale, split_list(a.values("--scale-a"), "--scale-a"), "--scale-a");
    sb = parse_list(i.scale, split_list(a.values("--scale-b"), "--scale-b"), "--scale-b");
    if (sa.size() != blocks || sb.size() != blocks)
      throw UsageError(fmt::format("{} takes {} scale(s) for each of A and B here (one per {} elements); --scale-a has "
                                   "{}, --scale-b {}", i.name, blocks, i.model.scale_block, sa.size(), sb.size()));
  } else if (a.given("--scale-a") || a.given("--scale-b")) {
    throw UsageError(fmt::format("{} takes no scales", i.name));
  }
  std::vector<MmaStepTrace> steps;
  const double d = mma_chain(i, va, vb, c, sa, sb, &steps);
  const std::uint64_t code = mma_encode(i.d, d);
  const int dbits = mma_type_info(i.d).bits;
  const MmaExact ex = exact_result(i, va, vb, c, sa, sb, d);
  const auto number = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(value_text(v)); };
  const bool no_grid = i.model.algorithm == MmaAlgorithm::exact;
  if (out == Output::json) {
    nlohmann::ordered_json j = {{"preset", i.name}, {"instruction", i.isa}, {"model", mma_parameters(i)},
                                {"d", number(d)}, {"d_code", code_hex(code, dbits)},
                                {"exact", number(ex.value)}, {"exact_is_double", ex.exact},
                                {"d_minus_exact", ex.special ? nlohmann::ordered_json() : number(ex.error)},
                                {"d_minus_exact_is_double", !ex.special && ex.error_exact},
                                {"steps", nlohmann::ordered_json::array()}};
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const MmaStepTrace& t = steps[s];
      const bool grid = !t.special && !no_grid && !t.products_zero;
      nlohmann::ordered_json step = {
          {"step", s + 1}, {"products", fmt::format("{}..{}", t.first, t.first + t.count - 1)}, {"special", t.special},
          {"alignment_exponent", t.special || no_grid ? nlohmann::ordered_json() : nlohmann::ordered_json(t.exponent)},
          {"grid_exponent", grid ? nlohmann::ordered_json(t.grid) : nlohmann::ordered_json()},
          {"terms_cut", t.special || no_grid ? nlohmann::ordered_json() : nlohmann::ordered_json(t.terms_cut)},
          {"kept", t.special ? nlohmann::ordered_json() : nlohmann::ordered_json(value_text(t.kept))},
          {"kept_exact", t.special ? nlohmann::ordered_json() : nlohmann::ordered_json(!t.kept_inexact)},
          {"result", value_text(t.result)}};
      if (!t.special && (i.model.algorithm == MmaAlgorithm::two_stage ||
                         i.model.algorithm == MmaAlgorithm::two_stage_split)) {
        step["c_grid_exponent"] = t.c_grid;
        step["common_grid_exponent"] = t.common_grid;
        step["sum_grid_exponent"] = t.sum_grid;
      }
      step["decided_by"] = decided_by(i.model, t);
      j["steps"].push_back(step);
    }
    print_stdout(j.dump(2) + "\n");
    return 0;
  }
  std::string text = fmt::format("{}  ({}; {})\nD = {} ({})\n", i.name, i.isa, mma_parameters(i), value_text(d),
                                 code_hex(code, dbits));
  if (ex.special)
    text += fmt::format("exact A B + C = {} (IEEE's: a NaN or an infinity takes part)\n", value_text(ex.value));
  else
    text += fmt::format("exact A B + C = {}; D - exact = {}{}\n", approx_text(ex.value, ex.exact),
                        approx_text(ex.error, ex.error_exact),
                        ex.exact && ex.error_exact ? "" : " (~: the nearest double)");
  if (!steps.empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"step", "products", "E (alignment)", "grid", "terms cut", "sum kept", "rounded to", "decided by"}};
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const MmaStepTrace& t = steps[s];
      std::string decided;
      for (const std::string& why : decided_by(i.model, t)) decided += (decided.empty() ? "" : "; ") + why;
      const std::string range = fmt::format("{}..{}", t.first, t.first + t.count - 1);
      if (t.special) {
        rows.push_back({std::to_string(s + 1), range, "-", "-", "-", "-", value_text(t.result), decided});
      } else {
        const bool grid = !no_grid && !t.products_zero;
        rows.push_back({std::to_string(s + 1), range, no_grid ? "-" : std::to_string(t.exponent),
                        grid ? fmt::format("2^{}", t.grid) : "-", no_grid ? "-" : std::to_string(t.terms_cut),
                        approx_text(t.kept, !t.kept_inexact), value_text(t.result), decided});
      }
    }
    text += "\n" + render_table(rows);
  } else {
    text += fmt::format("(the {} model runs IEEE operations in order: no fused steps to show)\n",
                        mma_algorithm_name(i.model.algorithm));
  }
  print_stdout(text);
  return 0;
}

}  // namespace

LPLAB_COMMAND(Command{
    "mma",
    "One matrix-unit instruction (NVIDIA mma/wgmma/tcgen05, AMD mfma; floating-point and integer) on given "
    "operands, and what decided D",
    {positional("preset", "A preset, e.g. hopper.wgmma.f32.e4m3.e4m3 (--list shows all)"),
     flag("--list", "List every preset with its parameters"),
     option("--a", "A's k operands (a row), comma-separated: values the type holds (0.5, 0x1p-3) or codes "
                   "(0x and hex digits: 0x3c00)", true),
     option("--b", "B's k operands (a column), as --a", true), option("--c", "C (default 0): a value or a code"),
     option("--scale-a", "Block scales of A (block-scaled instructions)", true),
     option("--scale-b", "Block scales of B", true), output_option()},
    [](const Args& a) {
      const Output out = output_of(a);
      if (a.given("--list")) {
        if (a.given("preset")) throw UsageError("give a preset or --list, not both");
        return list(out);
      }
      if (!a.given("preset")) throw UsageError("name a preset (lplab mma --list shows all)");
      return evaluate(a, out);
    }});

}  // namespace lplab::tool
