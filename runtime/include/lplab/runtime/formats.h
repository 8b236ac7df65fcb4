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
#include "lplab/formats/finfo_values.h"
#include "lplab/kernels/accumulator.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/format_id.h"

namespace lplab::runtime {

// A format's finfo fields are FinfoValues (formats/finfo_values.h): one
// struct, generated from the one list LPLAB_FINFO_FIELDS, and derived by one
// function for compiled (finfo<T>::values) and declared (DeclaredFormat::
// finfo()) formats alike.

// Fields by name, for a presentation that lists them in an order of its own
// (`lplab finfo`, the finfo baselines): f(value) for the field called `name`,
// value typed as for_each_finfo_field passes it; false where no field is
// called so.
template <class F>
constexpr bool visit_finfo_field(const FinfoValues& v, std::string_view name, F&& f) {
  bool found = false;
  for_each_finfo_field(v, [&](const char* n, const auto& value) {
    if (!found && name == n) {
      found = true;
      f(value);
    }
  });
  return found;
}

// Whether `shown` (a presentation's fields, in its order) and `omitted` (the
// fields it leaves out) name every field of LPLAB_FINFO_FIELDS exactly once
// between them, and nothing else. A presentation checks its lists with it in
// a static_assert, so that a field added to the list is placed (or left out)
// on purpose rather than missed.
constexpr bool finfo_fields_placed(std::span<const std::string_view> shown,
                                   std::span<const std::string_view> omitted) {
  const auto count = [&](std::string_view name) {
    std::size_t n = 0;
    for (std::string_view s : shown) n += s == name;
    for (std::string_view s : omitted) n += s == name;
    return n;
  };
  for (const FinfoField& f : kFinfoFields)
    if (count(f.name) != 1) return false;
  return shown.size() + omitted.size() == kFinfoFieldCount;
}

struct FormatEntry {
  std::string_view name;
  std::string_view description;
  FinfoValues info;
  // Set for a format declared by its layout ("e3m4:bias=3:ieee",
  // formats/declared.h) rather than compiled: it converts and decodes like
  // the others, but the experiments and kernels, which are compiled per
  // format, do not take it.
  const DeclaredFormat* declared = nullptr;
  // The kernels' id of a compiled format (kernels/format_id.h);
  // FormatId::none for a declared one.
  kernels::FormatId id = kernels::FormatId::none;

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
// UsageError where overflow policy o does not apply to format e: wrap-around
// (Overflow::wrap) keeps an integer's low bits, and a floating-point format
// has none to keep. Every layer that takes a policy by name checks it here.
void check_overflow(const FormatEntry& e, Overflow o);

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

}  // namespace lplab::runtime

namespace lplab::runtime {

// Calls f(std::type_identity<T>{}) with T the lplab type of a registry entry
// (lplab::float32 for float32): experiments written as templates over the
// format run on the formats a user names at run time. The kernels' visitor
// (kernels::visit_format) is the one map from ids to types.
// A declared format has no type: callers refuse it first (require_compiled).
template <class F>
decltype(auto) visit_format(const FormatEntry& e, F&& f) {
  if (e.declared != nullptr) throw std::logic_error("visit_format: " + std::string(e.name) + " is not compiled");
  return kernels::visit_format(e.id, [&]<class T>(std::type_identity<T>) -> decltype(auto) {
    if constexpr (std::is_same_v<T, float>)
      return f(std::type_identity<lplab::float32>{});
    else
      return f(std::type_identity<T>{});
  });
}

}  // namespace lplab::runtime
