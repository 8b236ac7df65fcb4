#include "lplab/experiments/format_registry.h"

#include <array>
#include <utility>

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

std::vector<const FormatEntry*> formats_named_like(std::string_view name) {
  // Family names: fp8 and float8 mean every float8_* format, and so on.
  static constexpr std::pair<std::string_view, std::string_view> families[] = {
      {"fp8", "float8_"}, {"float8", "float8_"}, {"fp6", "float6_"},
      {"float6", "float6_"}};
  std::string prefix(name);
  for (const auto& [family, p] : families)
    if (name == family) prefix = p;
  std::vector<const FormatEntry*> out;
  for (const FormatEntry& e : table())
    if (e.name.starts_with(prefix)) out.push_back(&e);
  return out;
}

const FormatEntry* find_format(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> aliases[] = {
      {"fp32", "float32"},     {"float", "float32"},         {"fp16", "float16"},
      {"half", "float16"},     {"bf16", "bfloat16"},         {"e4m3", "float8_e4m3fn"},
      {"e4m3fn", "float8_e4m3fn"}, {"e5m2", "float8_e5m2"},  {"e4m3fnuz", "float8_e4m3fnuz"},
      {"e5m2fnuz", "float8_e5m2fnuz"}, {"e8m0", "float8_e8m0fnu"}, {"e2m3", "float6_e2m3fn"},
      {"e3m2", "float6_e3m2fn"}, {"e2m1", "float4_e2m1fn"},  {"fp4", "float4_e2m1fn"},
      {"float4", "float4_e2m1fn"}};
  for (const auto& [alias, target] : aliases)
    if (name == alias) name = target;
  for (const FormatEntry& e : table())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace lplab::experiments
