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
// field zero), as IEEE 754-2019 section 3.4.
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
template <Descriptor D>
struct Layout {
  static constexpr int E = D.exponent_bits;
  static constexpr int M = D.mantissa_bits;
  static constexpr int bits = (D.is_signed ? 1 : 0) + E + M;
  using storage = uint_least_t<bits>;

  static constexpr std::uint64_t mag_mask = (std::uint64_t{1} << (E + M)) - 1;
  static constexpr std::uint64_t mant_mask = (std::uint64_t{1} << M) - 1;
  static constexpr std::uint64_t sign_mask = D.is_signed ? std::uint64_t{1} << (E + M) : 0;
  static constexpr std::uint64_t exp_field_max = (std::uint64_t{1} << E) - 1;

  static constexpr bool has_inf = D.encoding == Encoding::ieee;
  static constexpr bool has_nan = D.encoding != Encoding::none;
  static constexpr bool has_zero = D.has_subnormals;
  static constexpr bool has_negative_zero =
      has_zero && D.is_signed && D.encoding != Encoding::fnuz;

  // Largest finite magnitude code. IEEE: 0b1..10'1..1 (below the infinity);
  // fn: the all-ones magnitude minus one (E4M3: 0b1111'110 = 1.75 * 2^8 = 448);
  // fnuz and none: the all-ones magnitude (E4M3FNUZ: 0b1111'111 = 1.875 * 2^7 = 240).
  static constexpr std::uint64_t max_code =
      D.encoding == Encoding::ieee ? (exp_field_max << M) - 1
      : D.encoding == Encoding::fn ? mag_mask - 1
                                   : mag_mask;
  static constexpr std::uint64_t inf_code = exp_field_max << M;  // meaningful if has_inf
  // The quiet NaN this library produces: IEEE, the quiet bit alone (fp16
  // 0x7E00, bf16 0x7FC0, fp32 0x7FC00000, e5m2 0x7E); fn, the all-ones
  // magnitude (0x7F, e8m0 0xFF); fnuz, the sign bit alone (0x80).
  static constexpr std::uint64_t quiet_bit = M > 0 ? std::uint64_t{1} << (M - 1) : 0;
  static constexpr std::uint64_t nan_code =
      D.encoding == Encoding::ieee ? inf_code | quiet_bit
      : D.encoding == Encoding::fn ? mag_mask
      : D.encoding == Encoding::fnuz ? sign_mask
                                     : 0;

  // Exponent of the smallest normal binade, and of the largest finite value.
  static constexpr int emin = (D.has_subnormals ? 1 : 0) - D.bias;
  static constexpr int emax = static_cast<int>(max_code >> M) - D.bias;

  static_assert(E >= 1 && M >= 0 && bits <= 64, "unsupported format width");
  static_assert(D.encoding != Encoding::ieee || M >= 1, "IEEE encoding needs a mantissa for NaN");
  static_assert(D.encoding != Encoding::fnuz || D.is_signed, "fnuz encodes NaN in the sign bit");
  static_assert(D.has_subnormals || !D.is_signed,
                "a format without zero must be unsigned (modelled on OCP MX E8M0)");
  static_assert(emin <= emax, "format has no normal binade");
};

}  // namespace detail
}  // namespace lplab
