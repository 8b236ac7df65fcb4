#include "lplab/experiments/format_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "lplab/experiments/text.h"

namespace lplab::experiments {
namespace {

const char* encoding_name(Encoding e) {
  switch (e) {
    case Encoding::ieee: return "ieee";
    case Encoding::fn: return "fn";
    case Encoding::fnuz: return "fnuz";
    case Encoding::none: return "none";
  }
  return "?";
}

template <class T>
FormatEntry entry(std::string_view description) {
  using F = finfo<T>;
  FinfoRecord r{F::bits, F::exponent_bits, F::mantissa_bits, F::bias, F::is_signed,
                F::has_infinity, F::has_nan, F::has_negative_zero, F::has_subnormals,
                encoding_name(F::encoding), F::eps, F::epsneg, F::max, F::min, F::tiny,
                F::smallest_normal, F::smallest_subnormal, F::resolution_torch,
                F::resolution_numpy, F::machep, F::negep, F::nmant, F::nexp, F::iexp, F::maxexp,
                F::minexp, F::precision, F::digits10, F::overflow_threshold,
                F::threshold_tie_overflows, F::nan_code, F::inf_code, F::nan_codes,
                F::finite_codes, F::finite_values, F::normal_binades, F::binades};
  return FormatEntry{
      T::descriptor.name.c_str(), description, r,
      [](double x, Round rd, Overflow o, std::uint32_t random, Flags* f) -> std::uint64_t {
        return convert<T>(x, rd, o, f, random).bits();
      },
      [](const Decimal& x, Round rd, Overflow o, std::uint32_t random, Flags* f) -> std::uint64_t {
        return convert<T>(x, rd, o, f, random).bits();
      },
      [](std::uint64_t c) { return static_cast<double>(T::from_bits(c)); },
      [](std::uint64_t c) { return to_string(T::from_bits(c)); }};
}

const std::array<FormatEntry, 11>& table() {
  static const std::array<FormatEntry, 11> t = {
      entry<float32>("IEEE 754 binary32"),
      entry<float16>("IEEE 754 binary16"),
      entry<bfloat16>("bfloat16: binary32's exponent, 7 mantissa bits"),
      entry<float8_e4m3fn>("OCP OFP8 E4M3: no inf, NaN = S.1111.111"),
      entry<float8_e5m2>("OCP OFP8 E5M2: IEEE-style"),
      entry<float8_e4m3fnuz>("E4M3, bias 8, no -0, NaN = 0x80 (Graphcore/AMD)"),
      entry<float8_e5m2fnuz>("E5M2, bias 16, no -0, NaN = 0x80 (Graphcore/AMD)"),
      entry<float8_e8m0fnu>("OCP MX E8M0 scale: unsigned powers of two, NaN = 0xFF"),
      entry<float6_e2m3fn>("OCP MX FP6 E2M3: no inf, no NaN"),
      entry<float6_e3m2fn>("OCP MX FP6 E3M2: no inf, no NaN"),
      entry<float4_e2m1fn>("OCP MX FP4 E2M1: no inf, no NaN"),
  };
  return t;
}

}  // namespace

std::span<const FormatEntry> formats() { return table(); }

std::vector<const FormatEntry*> format_group(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> groups[] = {
      {"fp8", "float8_"}, {"float8", "float8_"}, {"fp6", "float6_"}, {"float6", "float6_"}};
  std::vector<const FormatEntry*> out;
  for (const auto& [group, prefix] : groups)
    if (name == group)
      for (const FormatEntry& e : table())
        if (e.name.starts_with(prefix)) out.push_back(&e);
  return out;
}

namespace {

// Short names: PyTorch's and ml_dtypes' spellings, and the element layouts.
constexpr std::pair<std::string_view, std::string_view> aliases[] = {
    {"fp32", "float32"},     {"float", "float32"},         {"fp16", "float16"},
    {"half", "float16"},     {"bf16", "bfloat16"},         {"e4m3", "float8_e4m3fn"},
    {"e4m3fn", "float8_e4m3fn"}, {"e5m2", "float8_e5m2"},  {"e4m3fnuz", "float8_e4m3fnuz"},
    {"e5m2fnuz", "float8_e5m2fnuz"}, {"e8m0", "float8_e8m0fnu"}, {"e2m3", "float6_e2m3fn"},
    {"e3m2", "float6_e3m2fn"}, {"e2m1", "float4_e2m1fn"},  {"fp4", "float4_e2m1fn"},
    {"float4", "float4_e2m1fn"}};

std::string names_of(const std::vector<const FormatEntry*>& fs) {
  std::string s;
  for (const FormatEntry* e : fs) s += (s.empty() ? "" : ", ") + std::string(e->name);
  return s;
}

// One edit (insert, delete or replace a character) turns a into b.
bool one_edit_apart(std::string_view a, std::string_view b) {
  if (a.size() > b.size()) std::swap(a, b);
  if (b.size() - a.size() > 1) return false;
  std::size_t i = 0;
  while (i < a.size() && a[i] == b[i]) ++i;
  const std::size_t skip_b = i + 1, skip_a = a.size() == b.size() ? i + 1 : i;
  return a.substr(std::min(skip_a, a.size())) == b.substr(std::min(skip_b, b.size()));
}

[[noreturn]] void unknown(std::string_view name) {
  std::vector<std::string_view> near;
  if (!name.empty()) {
    for (const FormatEntry& e : table())
      if (e.name.starts_with(name) || one_edit_apart(name, e.name)) near.push_back(e.name);
    for (const auto& [alias, target] : aliases)
      if (one_edit_apart(name, alias)) near.push_back(alias);
  }
  throw UsageError(near.empty() ? fmt::format("unknown format '{}' (see 'lplab formats')", shown(name))
                                : fmt::format("unknown format '{}' (did you mean {}?)", shown(name), fmt::join(near, ", ")));
}

}  // namespace

const FormatEntry& resolve_format(std::string_view name) {
  if (const FormatEntry* e = find_format(name)) return *e;
  if (const auto members = format_group(name); !members.empty())
    throw UsageError(fmt::format("'{}' is a group of {} formats ({}); name one", name, members.size(),
                                 names_of(members)));
  unknown(name);
}

std::vector<const FormatEntry*> resolve_format_list(const std::vector<std::string>& names) {
  std::vector<const FormatEntry*> out;
  const auto add = [&out](const FormatEntry* e) {
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  };
  for (const std::string& n : names) {
    if (const FormatEntry* e = find_format(n)) {
      add(e);
    } else if (const auto members = format_group(n); !members.empty()) {
      for (const FormatEntry* m : members) add(m);
    } else {
      unknown(n);
    }
  }
  return out;
}

const FormatEntry* find_format(std::string_view name) {
  for (const auto& [alias, target] : aliases)
    if (name == alias) name = target;
  for (const FormatEntry& e : table())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace lplab::experiments
