// The formats known to the tool, type-erased: every entry is generated from
// one lplab type, so the tool can look formats up by name at run time.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/formats.h"

namespace lplab::tool {

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

}  // namespace lplab::tool
