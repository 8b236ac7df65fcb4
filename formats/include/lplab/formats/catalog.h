// The formats lplab provides, with the names PyTorch and ml_dtypes use. Each is
// one descriptor; a new format is declared the same way, e.g.
//   using float8_e3m4 = lplab::Float<lplab::Descriptor{
//       .name = "float8_e3m4", .exponent_bits = 3, .mantissa_bits = 4, .bias = 3,
//       .encoding = lplab::Encoding::fn}>;
#pragma once

#include "lplab/formats/value.h"

namespace lplab {

// IEEE 754-2019 binary32, as a software model bit-exact with native float.
using float32 = Float<detail::binary32>;

// IEEE 754-2019 binary16.
using float16 = Float<Descriptor{.name = "float16", .exponent_bits = 5, .mantissa_bits = 10,
                                 .bias = 15, .encoding = Encoding::ieee}>;

// bfloat16: binary32 with the mantissa cut to 7 bits (same exponent range).
using bfloat16 = Float<Descriptor{.name = "bfloat16", .exponent_bits = 8, .mantissa_bits = 7,
                                  .bias = 127, .encoding = Encoding::ieee}>;

// OCP 8-bit Floating Point Specification (OFP8) rev 1.0: E4M3 has no
// infinities and one NaN per sign (S.1111.111), max 0b0'1111'110 = 1.75 * 2^8 = 448.
using float8_e4m3fn = Float<Descriptor{.name = "float8_e4m3fn", .exponent_bits = 4,
                                       .mantissa_bits = 3, .bias = 7, .encoding = Encoding::fn}>;

// OFP8 E5M2: IEEE-style, max 0b0'11110'11 = 1.75 * 2^15 = 57344.
using float8_e5m2 = Float<Descriptor{.name = "float8_e5m2", .exponent_bits = 5,
                                     .mantissa_bits = 2, .bias = 15, .encoding = Encoding::ieee}>;

// The fnuz variants (Graphcore, AMD MI300): bias one larger, no -0, NaN = 0x80.
// E4M3FNUZ max 0b0'1111'111 = 1.875 * 2^7 = 240; E5M2FNUZ max 1.75 * 2^15 = 57344.
using float8_e4m3fnuz = Float<Descriptor{.name = "float8_e4m3fnuz", .exponent_bits = 4,
                                         .mantissa_bits = 3, .bias = 8,
                                         .encoding = Encoding::fnuz}>;
using float8_e5m2fnuz = Float<Descriptor{.name = "float8_e5m2fnuz", .exponent_bits = 5,
                                         .mantissa_bits = 2, .bias = 16,
                                         .encoding = Encoding::fnuz}>;

// OCP Microscaling Formats (MX) v1.0, section 5.4.1: E8M0, the shared scale.
// Unsigned, no zero, no subnormals: codes 0..254 are 2^-127..2^127, 0xFF is NaN.
using float8_e8m0fnu = Float<Descriptor{.name = "float8_e8m0fnu", .exponent_bits = 8,
                                        .mantissa_bits = 0, .bias = 127,
                                        .encoding = Encoding::fn, .is_signed = false,
                                        .has_subnormals = false}>;

// OCP MX v1.0 section 5.3.2/5.3.3: FP6 and FP4 have no NaN and no infinity.
// E2M3 max 0b0'11'111 = 1.875 * 2^2 = 7.5; E3M2 max 0b0'111'11 = 1.75 * 2^4 = 28;
// E2M1 max 0b0'11'1 = 1.5 * 2^2 = 6. Codes sit in the low bits of a byte, as CUDA stores them.
using float6_e2m3fn = Float<Descriptor{.name = "float6_e2m3fn", .exponent_bits = 2,
                                       .mantissa_bits = 3, .bias = 1, .encoding = Encoding::none}>;
using float6_e3m2fn = Float<Descriptor{.name = "float6_e3m2fn", .exponent_bits = 3,
                                       .mantissa_bits = 2, .bias = 3, .encoding = Encoding::none}>;
using float4_e2m1fn = Float<Descriptor{.name = "float4_e2m1fn", .exponent_bits = 2,
                                       .mantissa_bits = 1, .bias = 1, .encoding = Encoding::none}>;

// Every provided format, for code that iterates over them (tests, the tool).
template <class... T>
struct FormatList {};
using all_formats = FormatList<float32, float16, bfloat16, float8_e4m3fn, float8_e5m2,
                               float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu, float6_e2m3fn,
                               float6_e3m2fn, float4_e2m1fn>;

}  // namespace lplab
