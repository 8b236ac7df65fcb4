// The formats known to the tool, type-erased: every entry is generated from
// one lplab type, so the tool can look formats up by name at run time.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lplab/formats.h"

namespace lplab::experiments {

// finfo<T>'s fields, as run-time values.
struct FinfoRecord {
  int bits, exponent_bits, mantissa_bits, bias;
  bool is_signed, has_infinity, has_nan, has_negative_zero, has_subnormals;
  std::string encoding;  // ieee, fn, fnuz, none
  double eps, epsneg, max, min, tiny, smallest_normal, smallest_subnormal;
  double resolution_torch, resolution_numpy;
  int machep, negep, nmant, nexp, iexp, maxexp, minexp, precision, digits10;
  double overflow_threshold;
  bool threshold_tie_overflows;
  std::uint64_t nan_code, inf_code, nan_codes, finite_codes, finite_values;
  int normal_binades, binades;
};

struct FormatEntry {
  std::string_view name;
  std::string_view description;
  FinfoRecord info;
  // Round x into the format; returns the code. `random` is the 32 random bits
  // of Round::stochastic (ignored by the other roundings).
  std::uint64_t (*from_double)(double x, Round r, Overflow o, std::uint32_t random, Flags* flags);
  // Round a number read from text into the format, once (formats/decimal.h).
  std::uint64_t (*from_decimal)(const Decimal& x, Round r, Overflow o, std::uint32_t random, Flags* flags);
  // The exact value of a code (NaN for NaN codes).
  double (*to_double)(std::uint64_t code);
  // Shortest decimal that reads back to the code.
  std::string (*to_text)(std::uint64_t code);
};

std::span<const FormatEntry> formats();
// The entry called `name` (also accepted: fp16, half, bf16, fp32, e4m3, ...).
const FormatEntry* find_format(std::string_view name);
// Every format whose name starts with `name`, or with the family it names
// (fp8 and float8: float8_*; fp6: float6_*): the candidates for an ambiguous name.
std::vector<const FormatEntry*> formats_named_like(std::string_view name);

}  // namespace lplab::experiments

namespace lplab::experiments {

// Calls f(std::type_identity<T>{}) with T the lplab type of a registry entry
// (lplab::float32 for float32): experiments written as templates over the
// format run on the formats a user names at run time.
template <class F>
decltype(auto) visit_format(const FormatEntry& e, F&& f) {
  switch (&e - formats().data()) {
    case 0: return f(std::type_identity<float32>{});
    case 1: return f(std::type_identity<float16>{});
    case 2: return f(std::type_identity<bfloat16>{});
    case 3: return f(std::type_identity<float8_e4m3fn>{});
    case 4: return f(std::type_identity<float8_e5m2>{});
    case 5: return f(std::type_identity<float8_e4m3fnuz>{});
    case 6: return f(std::type_identity<float8_e5m2fnuz>{});
    case 7: return f(std::type_identity<float8_e8m0fnu>{});
    case 8: return f(std::type_identity<float6_e2m3fn>{});
    case 9: return f(std::type_identity<float6_e3m2fn>{});
    default: return f(std::type_identity<float4_e2m1fn>{});
  }
}

}  // namespace lplab::experiments
