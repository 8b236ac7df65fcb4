// The format descriptor: everything about a binary floating-point format that
// the rest of the library derives its constants from.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lplab/formats/config.h"

namespace lplab {

// How a format spends its special encodings.
enum class Encoding : std::uint8_t {
  // IEEE 754: the all-ones exponent field holds +-inf (mantissa zero) and NaNs.
  ieee,
  // Finite, with NaN: no infinities; the all-ones magnitude (exponent and
  // mantissa) is NaN, one per sign. OCP OFP8 E4M3 and OCP MX E8M0.
  fn,
  // Finite, unsigned zero: no infinities and no negative zero; the code with
  // only the sign bit set (0x80 for 8 bits) is the single NaN. The "fnuz" fp8
  // formats of Graphcore/AMD (ml_dtypes float8_e4m3fnuz, float8_e5m2fnuz).
  fnuz,
  // No NaN and no infinity: every code is a finite number. OCP MX FP6/FP4.
  none,
  // An integer: no exponent field, mantissa_bits value bits (numeric_limits'
  // digits) and, where signed, two's complement (int4: 0b1000 = -8 .. 0b0111
  // = 7); uint4 0 .. 15. No NaN, no infinity, no -0. ml_dtypes' and numpy's
  // intN/uintN, CUTLASS's integer_subbyte, PTX's .s8/.u8/.s4/.u4.
  integer,
};

// A format's name, stored by value so that a Descriptor can be a template
// argument.
struct FormatName {
  char text[32] = {};
  constexpr FormatName() = default;
  template <std::size_t N>
  constexpr FormatName(const char (&s)[N]) {  // NOLINT: implicit from a literal on purpose
    static_assert(N <= sizeof(text), "format name too long");
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
  constexpr const char* c_str() const { return text; }
  friend constexpr bool operator==(const FormatName&, const FormatName&) = default;
};

// A binary floating-point format. Values are (-1)^s * 2^(e - bias) * 1.m for
// normal codes and (-1)^s * 2^(1 - bias) * 0.m for subnormal ones (exponent
// field zero), as IEEE 754-2019 section 3.4. An integer format (Encoding::
// integer) has exponent_bits 0 and bias 0: its codes are integers (the
// subnormal grid of quantum 2^0, without the sign-magnitude split).
struct Descriptor {
  FormatName name;
  int exponent_bits = 0;
  int mantissa_bits = 0;  // stored fraction bits, without the implicit bit
  int bias = 0;
  Encoding encoding = Encoding::ieee;
  bool is_signed = true;
  // Without subnormals the exponent field zero is an ordinary binade with an
  // implicit leading one, and the format has no zero: OCP MX E8M0, whose codes
  // 0..254 are 2^-127..2^127.
  bool has_subnormals = true;

  friend constexpr bool operator==(const Descriptor&, const Descriptor&) = default;
};

namespace detail {

// Every constant of a format, derived from its descriptor. Magnitude codes
// (the bits below the sign) are ordered like the values they encode, which is
// what lets one rounding routine serve every format.
struct LayoutValues {
  int E, M, bits;
  std::uint64_t mag_mask, mant_mask, sign_mask, exp_field_max;
  bool has_inf, has_nan, has_zero, has_negative_zero;
  std::uint64_t max_code, inf_code, quiet_bit, nan_code;
  int emin, emax;
};

LPLAB_HD constexpr LayoutValues layout_of(const Descriptor& D) noexcept {
  LayoutValues L{};
  L.E = D.exponent_bits;
  L.M = D.mantissa_bits;
  L.bits = (D.is_signed ? 1 : 0) + L.E + L.M;
  L.mag_mask = (std::uint64_t{1} << (L.E + L.M)) - 1;
  L.mant_mask = (std::uint64_t{1} << L.M) - 1;
  L.sign_mask = D.is_signed ? std::uint64_t{1} << (L.E + L.M) : 0;
  L.exp_field_max = (std::uint64_t{1} << L.E) - 1;

  const bool integer = D.encoding == Encoding::integer;
  L.has_inf = D.encoding == Encoding::ieee;
  L.has_nan = D.encoding != Encoding::none && !integer;
  L.has_zero = D.has_subnormals;
  L.has_negative_zero = L.has_zero && D.is_signed && D.encoding != Encoding::fnuz && !integer;

  // Largest finite magnitude code. IEEE: 0b1..10'1..1 (below the infinity);
  // fn: the all-ones magnitude minus one (E4M3: 0b1111'110 = 1.75 * 2^8 = 448);
  // fnuz and none: the all-ones magnitude (E4M3FNUZ: 0b1111'111 = 1.875 * 2^7 = 240).
  L.max_code = D.encoding == Encoding::ieee ? (L.exp_field_max << L.M) - 1
               : D.encoding == Encoding::fn ? L.mag_mask - 1
                                            : L.mag_mask;
  L.inf_code = L.exp_field_max << L.M;  // meaningful if has_inf
  // The quiet NaN this library produces: IEEE, the quiet bit alone (fp16
  // 0x7E00, bf16 0x7FC0, fp32 0x7FC00000, e5m2 0x7E); fn, the all-ones
  // magnitude (0x7F, e8m0 0xFF); fnuz, the sign bit alone (0x80).
  L.quiet_bit = L.M > 0 ? std::uint64_t{1} << (L.M - 1) : 0;
  L.nan_code = D.encoding == Encoding::ieee ? L.inf_code | L.quiet_bit
               : D.encoding == Encoding::fn ? L.mag_mask
               : D.encoding == Encoding::fnuz ? L.sign_mask
                                              : 0;

  // Exponent of the smallest normal binade, and of the largest finite value.
  L.emin = (D.has_subnormals ? 1 : 0) - D.bias;
  L.emax = static_cast<int>(L.max_code >> L.M) - D.bias;
  if (integer) {
    // An integer: max_code = 2^M - 1 (int4 7, uint4 15; the signed negative
    // range reaches one further, -2^M, at the code sign_mask). Its values
    // step by 2^0 = 2^(emin - M): emin = M; emax, the exponent of max's top
    // bit, is M - 1 (-1 for int1, whose max is 0).
    L.max_code = L.mag_mask;
    L.nan_code = 0;
    L.inf_code = 0;
    L.quiet_bit = 0;
    L.emin = L.M;
    L.emax = L.M - 1;
  }
  return L;
}

}  // namespace detail

// Why a descriptor describes no format this library can hold, or nullptr: the
// rules every format obeys, checked at compile time for Float<D> and at run
// time for formats declared from text (formats/declared.h).
LPLAB_HD constexpr const char* descriptor_error(const Descriptor& d) noexcept {
  const int bits = (d.is_signed ? 1 : 0) + d.exponent_bits + d.mantissa_bits;
  if (d.encoding == Encoding::integer) {
    if (d.exponent_bits != 0 || d.bias != 0 || !d.has_subnormals)
      return "an integer format has no exponent field: exponent_bits 0, bias 0";
    if (bits < 1 || bits > 32) return "unsupported integer width (1 to 32 bits)";
    return nullptr;
  }
  if (d.exponent_bits < 1 || d.mantissa_bits < 0 || bits > 64 || d.exponent_bits + d.mantissa_bits > 63)
    return "unsupported format width";
  if (d.encoding == Encoding::ieee && d.mantissa_bits < 1) return "IEEE encoding needs a mantissa for NaN";
  if (d.encoding == Encoding::fnuz && !d.is_signed) return "fnuz encodes NaN in the sign bit";
  if (!d.has_subnormals && d.is_signed) return "a format without zero must be unsigned (modelled on OCP MX E8M0)";
  const detail::LayoutValues L = detail::layout_of(d);
  if (L.emin > L.emax) return "format has no normal binade";
  return nullptr;
}

namespace detail {

// The constants of a compiled format, as compile-time members.
template <Descriptor D>
struct Layout {
  static_assert(descriptor_error(D) == nullptr, "unsupported descriptor: see descriptor_error()");
  static constexpr LayoutValues v = layout_of(D);
  static constexpr int E = v.E;
  static constexpr int M = v.M;
  static constexpr int bits = v.bits;
  using storage = uint_least_t<bits>;

  static constexpr std::uint64_t mag_mask = v.mag_mask;
  static constexpr std::uint64_t mant_mask = v.mant_mask;
  static constexpr std::uint64_t sign_mask = v.sign_mask;
  static constexpr std::uint64_t exp_field_max = v.exp_field_max;
  static constexpr bool has_inf = v.has_inf;
  static constexpr bool has_nan = v.has_nan;
  static constexpr bool has_zero = v.has_zero;
  static constexpr bool has_negative_zero = v.has_negative_zero;
  static constexpr std::uint64_t max_code = v.max_code;
  static constexpr std::uint64_t inf_code = v.inf_code;
  static constexpr std::uint64_t quiet_bit = v.quiet_bit;
  static constexpr std::uint64_t nan_code = v.nan_code;
  static constexpr int emin = v.emin;
  static constexpr int emax = v.emax;
};

}  // namespace detail
}  // namespace lplab
