// The formats known to the tool, type-erased: every entry is generated from
// one lplab type, so the tool can look formats up by name at run time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lplab/formats.h"
#include "lplab/formats/declared.h"
#include "lplab/kernels/accumulator.h"
#include "lplab/kernels/convert.h"

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
  friend bool operator==(const FinfoRecord&, const FinfoRecord&) = default;
};

struct FormatEntry {
  std::string_view name;
  std::string_view description;
  FinfoRecord info;
  // Set for a format declared by its layout ("e3m4:bias=3:ieee",
  // formats/declared.h) rather than compiled: it converts and decodes like
  // the others, but the experiments and kernels, which are compiled per
  // format, do not take it.
  const DeclaredFormat* declared = nullptr;

  // Round x into the format; returns the code. `random` is the 32 random bits
  // of Round::stochastic (ignored by the other roundings).
  std::uint64_t from_double(double x, Round r, Overflow o, std::uint32_t random, Flags* flags) const {
    return declared ? declared->from_double(x, r, o, random, flags) : compiled.from_double(x, r, o, random, flags);
  }
  // Round a number read from text into the format, once (formats/decimal.h).
  std::uint64_t from_decimal(const Decimal& x, Round r, Overflow o, std::uint32_t random, Flags* flags) const {
    return declared ? declared->from_decimal(x, r, o, random, flags) : compiled.from_decimal(x, r, o, random, flags);
  }
  // The exact value of a code (NaN for NaN codes).
  double to_double(std::uint64_t code) const {
    return declared ? declared->to_double(code) : compiled.to_double(code);
  }
  // Shortest decimal that reads back to the code.
  std::string to_text(std::uint64_t code) const { return declared ? declared->to_text(code) : compiled.to_text(code); }

  // A compiled format's conversions, generated from its lplab type.
  struct Compiled {
    std::uint64_t (*from_double)(double x, Round r, Overflow o, std::uint32_t random, Flags* flags);
    std::uint64_t (*from_decimal)(const Decimal& x, Round r, Overflow o, std::uint32_t random, Flags* flags);
    double (*to_double)(std::uint64_t code);
    std::string (*to_text)(std::uint64_t code);
  } compiled{};
};

// finfo's fields for a declared format, from its codes: what finfo<T> gives
// for the compiled twin (tests/formats check every compiled format).
FinfoRecord finfo_record(const DeclaredFormat& f);

// The catalog's formats (lplab/formats/catalog.h), in its order.
std::span<const FormatEntry> formats();
// Their names.
std::vector<std::string> format_names();
// The entry called `name` (also accepted: fp16, half, bf16, fp32, e4m3, ...).
const FormatEntry* find_format(std::string_view name);
// The members of a group name, empty for any other name. Groups: fp8 and
// float8 (every float8_* format: E4M3, E5M2, their fnuz variants and the E8M0
// scale), fp6 and float6 (E2M3, E3M2).
std::vector<const FormatEntry*> format_group(std::string_view name);

// The one rule for names, in every command and spec:
// - where a list of formats is accepted (inspect --to, finfo, run --dtypes),
//   a group name stands for its members;
// - where one format is needed (values, a spec's format fields), a group
//   name is an error that lists its members;
// - a layout, "e<E>m<M>[:bias=<b>][:ieee|fn|fnuz|none][:unsigned]"
//   (formats/declared.h), names a declared format, or the compiled format of
//   that layout where there is one ("e5m2:bias=15" is float8_e5m2); a bad
//   layout is an error saying why;
// - any other unknown name is an error, with the formats it is a prefix of
//   or one edit away from as suggestions.
// Errors are UsageError, worded "unknown format 'x' ..." or "'fp8' is a group
// of 5 formats (...); name one".
const FormatEntry& resolve_format(std::string_view name);
// Every name resolved in order (groups expanded), each format once.
std::vector<const FormatEntry*> resolve_format_list(const std::vector<std::string>& names);
// UsageError for a declared format where `where` (e.g. "run --dtypes") needs
// a compiled one; `who` names what takes only compiled formats (an
// experiment), `also` what else takes declared ones (the experiments that do).
void require_compiled(const FormatEntry& e, std::string_view where, std::string_view who = "it",
                      std::string_view also = "");
// Rounds every x[i] into format e once, as the bulk conversion does (element
// i takes stochastic_bits(options.seed, options.first_index + i); flags go
// to options.stats), and hands the values back as doubles a chunk at a time:
// visit(first, y), y[j] being x[first + j] rounded. A compiled format runs
// the kernels, a declared one the scalar core, element by element.
void for_each_rounded(const FormatEntry& e, std::span<const double> x, const kernels::ConvertOptions& options,
                      const std::function<void(std::size_t first, std::span<const double> y)>& visit);
// What the matmul accumulators need to know of a format, compiled or
// declared (kernels::operand_range of its finfo fields), and the significant
// bits of an output in it (kernels::output_precision).
kernels::OperandRange operand_range(const FormatEntry& e);
int output_precision(const FormatEntry& e);
// Why e cannot be a matmul operand, or empty. The kernels take formats of 16
// bits or fewer with a mantissa, decoded to float: every value of e must be
// a float (exponents within float's, the smallest value at least 2^-149).
std::string matmul_operand_problem(const FormatEntry& e);
// x rounded to nearest-even (IEEE overflow) into e, as matmul operands: the
// values as floats (exact, where matmul_operand_problem(e) is empty), and in
// `changed` how many differ from x (NaN equals NaN).
std::vector<float> matmul_operand_values(const FormatEntry& e, std::span<const double> x, std::size_t& changed);

}  // namespace lplab::experiments

namespace lplab::experiments {

// Calls f(std::type_identity<T>{}) with T the lplab type of a registry entry
// (lplab::float32 for float32): experiments written as templates over the
// format run on the formats a user names at run time.
// A declared format has no type: callers refuse it first (require_compiled).
template <class F>
decltype(auto) visit_format(const FormatEntry& e, F&& f) {
  if (e.declared != nullptr) throw std::logic_error("visit_format: " + std::string(e.name) + " is not compiled");
  // formats() lists the catalog in its order (format_registry.cpp).
  std::size_t i = static_cast<std::size_t>(&e - formats().data());
#define LPLAB_VISIT(type, names, description) \
  if (i-- == 0) return f(std::type_identity<type>{});
  LPLAB_FORMAT_CATALOG(LPLAB_VISIT)
#undef LPLAB_VISIT
  throw std::logic_error("visit_format: " + std::string(e.name) + " is not in formats()");
}

}  // namespace lplab::experiments
