// finfo's fields, declared once, and the one function that derives them from
// a format's descriptor and its codes: at compile time for Float<D>
// (finfo<T>::values, finfo.h) and at run time for a format declared from text
// (DeclaredFormat::finfo(), declared.h), so the two cannot drift.
//
//   constexpr lplab::FinfoValues v = lplab::finfo<lplab::float8_e4m3fn>::values;  // v.max == 448
//   lplab::for_each_finfo_field(v, [](const char* name, const auto& value) { ... });
//
// A new field is one line of LPLAB_FINFO_FIELDS and its formula in
// finfo_values(): FinfoValues, finfo<T>'s static members, the field table and
// for_each_finfo_field are generated from that line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "lplab/formats/descriptor.h"
#include "lplab/formats/enum_table.h"

namespace lplab {

// What a field holds, and so how it is shown: X(kind, meaning).
#define LPLAB_FINFO_KINDS(X)                                                                \
  X(integer, "an int")                                                                      \
  X(boolean, "a bool")                                                                      \
  X(real, "a double, exact (NaN only where the field says so)")                             \
  X(code, "a code (std::uint64_t; for_each_finfo_field passes FinfoCode), shown in hex")    \
  X(count, "a number of codes (std::uint64_t)")                                             \
  X(encoding, "an Encoding (encoding_name gives its text)")

enum class FinfoKind : std::uint8_t { LPLAB_FINFO_KINDS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(FinfoKind, "finfo field kind", LPLAB_FINFO_KINDS)

// Every field of finfo, once: X(name, kind, what it is). The order is the
// one the run-time registry (runtime/formats.h), the Python finfo and the
// finfo baselines list: the layout, the torch.finfo and
// numpy/ml_dtypes fields, then what neither reports.
#define LPLAB_FINFO_FIELDS(X)                                                                              \
  X(bits, integer, "bits of a code, the sign bit included")                                                \
  X(exponent_bits, integer, "exponent field width E")                                                      \
  X(mantissa_bits, integer, "stored mantissa bits M, the implicit bit excluded")                           \
  X(bias, integer, "exponent bias: a normal code is 2^(field - bias) * 1.m")                               \
  X(is_signed, boolean, "whether codes have a sign bit")                                                   \
  X(has_infinity, boolean, "whether +-infinity are codes (IEEE encoding)")                                 \
  X(has_nan, boolean, "whether some code is NaN")                                                          \
  X(has_zero, boolean, "whether zero is a value (not in a format without subnormals, OCP MX E8M0)")        \
  X(has_negative_zero, boolean, "whether -0 is a code of its own")                                         \
  X(has_subnormals, boolean, "whether the exponent field zero holds zero and the subnormals")              \
  X(encoding, encoding, "where the special codes are: ieee, fn, fnuz or none (descriptor.h)")              \
  X(eps, real, "1.0 to the next larger value; NaN where 1.0 and a value above it are not both values")     \
  X(epsneg, real, "1.0 to the next smaller value; NaN where eps is")                                       \
  X(max, real, "the largest finite value")                                                                 \
  X(min, real, "the lowest finite value: -max, or an unsigned format's smallest value")                    \
  X(tiny, real, "the smallest positive normal value (numpy's name)")                                       \
  X(smallest_normal, real, "the smallest positive normal value, 2^minexp")                                 \
  X(smallest_subnormal, real, "the smallest positive value")                                               \
  X(resolution_torch, real, "torch.finfo's resolution: 10^-digits10")                                      \
  X(resolution_numpy, real, "numpy/ml_dtypes finfo's resolution: 10^-precision rounded into the format")   \
  X(machep, integer, "eps = 2^machep")                                                                     \
  X(negep, integer, "epsneg = 2^negep; 0 where epsneg is NaN")                                             \
  X(nmant, integer, "numpy's nmant: the mantissa bits")                                                    \
  X(nexp, integer, "numpy's nexp: the exponent bits")                                                      \
  X(iexp, integer, "numpy's iexp: the exponent bits")                                                      \
  X(maxexp, integer, "the smallest power of two that overflows is 2^maxexp")                               \
  X(minexp, integer, "the smallest normal value is 2^minexp")                                              \
  X(precision, integer, "numpy's decimal digits (1 for every 8-bit format, as ml_dtypes)")                 \
  X(digits10, integer, "torch's decimal digits: floor(M * log10(2))")                                      \
  X(overflow_threshold, real, "nearest-even rounds above this midpoint past max (at it: the next field)")  \
  X(threshold_tie_overflows, boolean, "whether overflow_threshold itself overflows")                       \
  X(max_code, code, "the code of max")                                                                     \
  X(nan_code, code, "the quiet NaN this library produces (0 without NaN)")                                 \
  X(inf_code, code, "the code of +infinity (where has_infinity)")                                          \
  X(nan_codes, count, "codes that are NaN")                                                                \
  X(finite_codes, count, "codes that are finite")                                                          \
  X(finite_values, count, "distinct finite values (-0 counted with +0)")                                   \
  X(normal_binades, integer, "binades holding normal values")                                              \
  X(binades, integer, "binades holding nonzero values, from the smallest subnormal to max")

// The C++ type of each kind.
template <FinfoKind K>
struct FinfoFieldType;
template <>
struct FinfoFieldType<FinfoKind::integer> {
  using type = int;
};
template <>
struct FinfoFieldType<FinfoKind::boolean> {
  using type = bool;
};
template <>
struct FinfoFieldType<FinfoKind::real> {
  using type = double;
};
template <>
struct FinfoFieldType<FinfoKind::code> {
  using type = std::uint64_t;
};
template <>
struct FinfoFieldType<FinfoKind::count> {
  using type = std::uint64_t;
};
template <>
struct FinfoFieldType<FinfoKind::encoding> {
  using type = Encoding;
};
template <FinfoKind K>
using finfo_field_t = typename FinfoFieldType<K>::type;

// Every field of finfo<T>, as one value: the same for a compiled format and
// its declared twin (defaulted ==, so NaN fields compare unequal).
struct FinfoValues {
#define LPLAB_FINFO_MEMBER(name, kind, doc) finfo_field_t<FinfoKind::kind> name{};
  LPLAB_FINFO_FIELDS(LPLAB_FINFO_MEMBER)
#undef LPLAB_FINFO_MEMBER
  friend constexpr bool operator==(const FinfoValues&, const FinfoValues&) = default;
};

// One field: its name, kind and one line on what it is, in LPLAB_FINFO_FIELDS
// order -- for help texts, docstrings and stubs.
struct FinfoField {
  const char* name;
  FinfoKind kind;
  const char* doc;
};
inline constexpr FinfoField kFinfoFields[] = {
#define LPLAB_FINFO_FIELD_ENTRY(name, kind, doc) {#name, FinfoKind::kind, doc},
    LPLAB_FINFO_FIELDS(LPLAB_FINFO_FIELD_ENTRY)
#undef LPLAB_FINFO_FIELD_ENTRY
};
inline constexpr std::size_t kFinfoFieldCount = sizeof(kFinfoFields) / sizeof(kFinfoFields[0]);

// A code-kind field as for_each_finfo_field passes it: the code and the
// format's width, so that it can be shown in hex with its digits.
struct FinfoCode {
  std::uint64_t code;
  int bits;
  friend constexpr bool operator==(const FinfoCode&, const FinfoCode&) = default;
};

// The text of an encoding, as a declared format spells it ("ieee", "fn",
// "fnuz", "none").
constexpr const char* encoding_name(Encoding e) {
  switch (e) {
    case Encoding::ieee: return "ieee";
    case Encoding::fn: return "fn";
    case Encoding::fnuz: return "fnuz";
    case Encoding::none: return "none";
    case Encoding::integer: return "integer";
  }
  return "?";
}

namespace detail {

template <FinfoKind K>
constexpr auto finfo_field_value(const finfo_field_t<K>& x, const FinfoValues& v) {
  if constexpr (K == FinfoKind::code) return FinfoCode{x, v.bits};
  else return x;
}

// Largest d with 10^d <= 2^n: floor(n * log10(2)) without floating point.
constexpr int decimal_digits_of_bits(int n) {
  int d = 0;
  for (std::uint64_t p = 10; p <= (std::uint64_t{1} << n); p *= 10) ++d;
  return d;
}

// 10^-d correctly rounded, as Python's 10 ** -d that torch and numpy use.
inline constexpr double kNegativePowersOfTen[] = {1e0,  1e-1, 1e-2,  1e-3,  1e-4,  1e-5,
                                                  1e-6, 1e-7, 1e-8,  1e-9,  1e-10, 1e-11,
                                                  1e-12, 1e-13, 1e-14, 1e-15, 1e-16};

}  // namespace detail

// f(name, value) for every field, in LPLAB_FINFO_FIELDS order: name a const
// char*, value an int, bool, double, Encoding, std::uint64_t (a count) or
// FinfoCode (a code), by the field's kind.
template <class F>
constexpr void for_each_finfo_field(const FinfoValues& v, F&& f) {
#define LPLAB_FINFO_VISIT(name, kind, doc) f(#name, detail::finfo_field_value<FinfoKind::kind>(v.name, v));
  LPLAB_FINFO_FIELDS(LPLAB_FINFO_VISIT)
#undef LPLAB_FINFO_VISIT
}

// The fields of an integer format, its layout fields already in v: every
// value a step of 1 apart (eps, epsneg, tiny), max 2^M - 1, min -2^M or 0
// (ml_dtypes.iinfo: int4 -8 .. 7, uint4 0 .. 15), every code a finite value.
// What a format's values cannot give is NaN: eps where 2 is past max (int2,
// uint1), the smallest positive value of int1 (-1, 0).
constexpr FinfoValues integer_finfo_values(FinfoValues v, const Descriptor& d, const detail::LayoutValues& l) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  v.max = static_cast<double>(l.max_code);
  v.min = d.is_signed ? -static_cast<double>(l.sign_mask) : 0.0;
  v.eps = l.max_code >= 2 ? 1.0 : nan;
  v.epsneg = l.max_code >= 1 ? 1.0 : nan;
  v.tiny = v.smallest_normal = v.smallest_subnormal = l.max_code >= 1 ? 1.0 : nan;
  v.digits10 = detail::decimal_digits_of_bits(l.M);
  v.precision = v.digits10;
  v.resolution_torch = v.resolution_numpy = 1.0;
  v.machep = v.negep = 0;
  v.nmant = l.M;
  v.nexp = v.iexp = 0;
  v.minexp = 0;
  v.maxexp = l.M;  // 2^M is past max
  // Nearest-even takes max + 1/2 to the even one of max and max + 1: past
  // the range where max is odd (every width but int1, whose max is 0).
  v.overflow_threshold = v.max + 0.5;
  v.threshold_tie_overflows = (l.max_code & 1) != 0;
  v.max_code = l.max_code;
  v.nan_code = v.inf_code = 0;
  v.nan_codes = 0;
  v.finite_codes = v.finite_values = std::uint64_t{1} << l.bits;
  v.normal_binades = v.binades = l.M;  // [1, 2) .. [2^(M-1), 2^M)
  return v;
}

// The fields of the format (d, l = layout_of(d)), from its codes:
// to_double(code) is the exact value of a code (NaN for NaN codes) and
// nearest(x) the code of x rounded to nearest even, overflow as IEEE. Exact
// throughout, and a constant expression where the two are (finfo<T>).
template <class Decode, class RoundNearest>
constexpr FinfoValues finfo_values(const Descriptor& d, const detail::LayoutValues& l, Decode to_double,
                                   RoundNearest nearest) {
  FinfoValues v{};
  // --- the layout ---
  v.bits = l.bits;
  v.exponent_bits = l.E;
  v.mantissa_bits = l.M;
  v.bias = d.bias;
  v.is_signed = d.is_signed;
  v.has_infinity = l.has_inf;
  v.has_nan = l.has_nan;
  v.has_zero = l.has_zero;
  v.has_negative_zero = l.has_negative_zero;
  v.has_subnormals = d.has_subnormals;
  v.encoding = d.encoding;
  if (d.encoding == Encoding::integer) return integer_finfo_values(v, d, l);

  // --- torch.finfo ---
  // 1.0 is the code with exponent field `bias` and mantissa zero, a normal
  // code where bias >= 1. eps and epsneg are the spacings either side of it,
  // NaN for a layout whose values miss 1.0 or end there (a declared format
  // may: "e3m4:bias=10"; finfo<T> requires 1.0 of a compiled format).
  const std::uint64_t one = static_cast<std::uint64_t>(d.bias) << l.M;
  const bool has_one = d.bias >= 1 && one < l.max_code;
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  // Distance from 1.0 to the next larger value.
  v.eps = has_one ? to_double(one + 1) - 1.0 : nan;
  v.max = to_double(l.max_code);
  // The lowest finite value: -max, or for an unsigned format its smallest
  // value (ml_dtypes: float8_e8m0fnu min = 2^-127).
  v.min = d.is_signed ? -v.max : to_double(0);
  v.tiny = detail::exp2i(l.emin);
  v.smallest_normal = v.tiny;
  // torch: 10^-digits10, digits10 = floor((p - 1) * log10(2)) (c10
  // numeric_limits), p = M + 1 the precision with the implicit bit.
  v.digits10 = detail::decimal_digits_of_bits(l.M);
  v.resolution_torch = detail::kNegativePowersOfTen[v.digits10];

  // --- numpy / ml_dtypes finfo ---
  // Distance from 1.0 to the next smaller value (a subnormal step where 1.0 is
  // the smallest normal, as in FP6 E2M3 and FP4).
  v.epsneg = has_one ? 1.0 - to_double(one - 1) : nan;
  v.smallest_subnormal = detail::exp2i(l.emin - (d.has_subnormals ? l.M : 0));
  v.nmant = l.M;
  v.nexp = l.E;
  v.iexp = l.E;
  v.machep = -l.M;  // eps = 2^machep
  v.negep = 0;      // epsneg = 2^negep; 0 where epsneg is NaN (the loop stops at once)
  for (double x = 1.0; x > v.epsneg; x /= 2) --v.negep;
  v.minexp = l.emin;      // smallest normal = 2^minexp
  v.maxexp = l.emax + 1;  // smallest power of two that overflows
  // numpy: floor(-log10(eps)); ml_dtypes sets 1 by hand for every 8-bit format
  // (its _finfo.py), which lplab follows so that the two agree.
  v.precision = l.bits == 8 ? 1 : detail::decimal_digits_of_bits(l.M);
  // numpy/ml_dtypes: 10^-precision rounded into the format (e4m3fn: 0.1015625).
  v.resolution_numpy = to_double(nearest(detail::kNegativePowersOfTen[v.precision]));

  // --- beyond both ---
  // Under round-to-nearest-even, values from max up to this midpoint round to
  // max; the midpoint itself is a tie that goes to the even neighbour.
  v.overflow_threshold = v.max + detail::exp2i(l.emax - l.M - 1);
  // Whether that tie overflows: yes when max's integral significand is odd
  // (e5m2 61440, float16 65520, and E8M0 whose significand is always 1), no
  // when even (e4m3fn: 464 rounds to 448).
  v.threshold_tie_overflows = l.M == 0 || (l.max_code & 1) != 0;
  // Codes: the largest finite magnitude, and the canonical quiet NaN and
  // +infinity this library produces.
  v.max_code = l.max_code;
  v.nan_code = l.nan_code;
  v.inf_code = l.inf_code;
  // How many codes are NaN: IEEE, every nonzero mantissa under the all-ones
  // exponent, per sign; fn, the all-ones magnitude per sign; fnuz, the code
  // 0x80 alone.
  const std::uint64_t per_sign = d.encoding == Encoding::ieee ? (std::uint64_t{1} << l.M) - 1
                                 : d.encoding == Encoding::fn ? 1
                                                              : 0;
  v.nan_codes = d.encoding == Encoding::fnuz ? 1 : per_sign * (d.is_signed ? 2 : 1);
  v.finite_codes = (std::uint64_t{1} << l.bits) - v.nan_codes - (l.has_inf ? (d.is_signed ? 2 : 1) : 0);
  v.finite_values = v.finite_codes - (l.has_negative_zero ? 1 : 0);
  // Binades holding normal values, and all nonzero values: from the smallest
  // subnormal 2^(emin - M) to max's binade 2^emax.
  v.normal_binades = l.emax - l.emin + 1;
  v.binades = l.emax - (l.emin - (d.has_subnormals ? l.M : 0)) + 1;
  return v;
}

}  // namespace lplab
