// lplab mma: one matrix-unit instruction (kernels/mma.h) on given operands,
// D and what decided it -- each fused step's alignment exponent, the grid
// its terms were cut to, how many lost bits, the sum kept and where it was
// rounded -- for kernel writers; --list prints every preset.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <optional>
#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/experiments/text.h"
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

// One operand: a code (0x...) or a value that the type holds exactly.
std::uint64_t parse_code(MmaType t, const std::string& text, const std::string& what) {
  const MmaTypeInfo& info = mma_type_info(t);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    std::uint64_t c = 0;
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data() + 2, end, c, 16);
    if (ec != std::errc() || p != end) throw UsageError(fmt::format("{}: '{}' is not a hex code", what, text));
    if (info.bits < 64 && (c >> info.bits) != 0)
      throw UsageError(fmt::format("{}: {} is not a {} code ({} bits)", what, text, info.name, info.bits));
    return c;
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    throw UsageError(fmt::format("{}: '{}' is neither a value nor a code (0x...)", what, text));
  // The code whose value it is, with its sign (fnuz types have no -0).
  const std::optional<std::uint64_t> code = mma_code(t, v);
  const bool found = code && (std::isnan(v) || std::signbit(mma_decode(t, *code)) == std::signbit(v));
  if (!found) throw UsageError(fmt::format("{}: {} is not exactly representable in {} (give a code, 0x...)", what, text, info.name));
  return *code;
}

std::vector<double> parse_list(MmaType t, const std::vector<std::string>& items, const std::string& what) {
  std::vector<double> out;
  for (const std::string& s : items) out.push_back(mma_decode(t, parse_code(t, s, what)));
  return out;
}

std::string value_text(double v) { return std::isnan(v) ? "nan" : std::isinf(v) ? (v < 0 ? "-inf" : "inf") : shortest(v); }

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
  if (out == Output::json) print_stdout(j.dump(2) + "\n");
  else if (out == Output::csv) print_stdout(csv_text(rows));
  else print_stdout(render_table(rows));
  return 0;
}

int evaluate(const Args& a, Output out) {
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
  MmaTrace trace;
  const double d = mma_chain(i, va, vb, c, sa, sb, &trace);
  const std::uint64_t code = mma_encode(i.d, d);
  const int dbits = mma_type_info(i.d).bits;
  if (out == Output::json) {
    nlohmann::ordered_json j = {{"preset", i.name}, {"instruction", i.isa}, {"model", mma_parameters(i)},
                                {"d", std::isfinite(d) ? nlohmann::ordered_json(d) : nlohmann::ordered_json(value_text(d))},
                                {"d_code", code_hex(code, dbits)}, {"steps", nlohmann::ordered_json::array()}};
    for (int s = 0; s < trace.steps; ++s) {
      const MmaStepTrace& t = trace.step[s];
      j["steps"].push_back({{"products", fmt::format("{}..{}", t.first, t.first + t.count - 1)},
                            {"special", t.special}, {"alignment_exponent", t.exponent}, {"grid_exponent", t.grid},
                            {"terms_cut", t.terms_cut}, {"kept", value_text(t.kept)}, {"result", value_text(t.result)}});
    }
    print_stdout(j.dump(2) + "\n");
    return 0;
  }
  std::string text = fmt::format("{}  ({}; {})\nD = {} ({})\n", i.name, i.isa, mma_parameters(i), value_text(d),
                                 code_hex(code, dbits));
  if (trace.steps > 0) {
    std::vector<std::vector<std::string>> rows = {
        {"step", "products", "E (alignment)", "grid", "terms cut", "sum kept", "rounded to"}};
    for (int s = 0; s < trace.steps; ++s) {
      const MmaStepTrace& t = trace.step[s];
      const std::string range = fmt::format("{}..{}", t.first, t.first + t.count - 1);
      if (t.special) {
        rows.push_back({std::to_string(s + 1), range, "-", "-", "-", "NaN/inf by IEEE", value_text(t.result)});
      } else {
        rows.push_back({std::to_string(s + 1), range, std::to_string(t.exponent), fmt::format("2^{}", t.grid),
                        std::to_string(t.terms_cut), value_text(t.kept), value_text(t.result)});
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
    "One matrix-unit instruction (NVIDIA mma/wgmma/tcgen05, AMD mfma) on given operands, and what decided D",
    {positional("preset", "A preset, e.g. hopper.wgmma.f32.e4m3.e4m3 (--list shows all)"),
     flag("--list", "List every preset with its parameters"),
     option("--a", "A's k operands (a row): values or codes (0x..), comma-separated", true),
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
