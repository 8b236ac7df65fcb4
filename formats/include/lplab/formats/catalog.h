// The formats lplab provides, with the names PyTorch and ml_dtypes use, and
// the catalog that lists them: each format is one descriptor below plus one
// line of LPLAB_FORMAT_CATALOG. Everything else that enumerates formats -- the
// kernels' ids and dispatch tables (and the build's per-format translation
// units, which CMake reads from this macro), the tool's registry and names,
// the typed tests -- is generated from that line. A format of one's own needs
// neither, e.g.
//   using my_e3m3 = lplab::Float<lplab::Descriptor{
//       .name = "my_e3m3", .exponent_bits = 3, .mantissa_bits = 3, .bias = 3,
//       .encoding = lplab::Encoding::fn}>;
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>

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

// ml_dtypes' three further 8-bit formats (ml_dtypes README, "Specifications").
// E3M4: IEEE-like (infinity 0b0'111'0000, NaNs above it), bias 3,
// max 0b0'110'1111 = 1.9375 * 2^3 = 15.5.
using float8_e3m4 = Float<Descriptor{.name = "float8_e3m4", .exponent_bits = 3,
                                     .mantissa_bits = 4, .bias = 3, .encoding = Encoding::ieee}>;
// E4M3 as IEEE would define it (infinity 0b0'1111'000), unlike OFP8's E4M3FN:
// max 0b0'1110'111 = 1.875 * 2^7 = 240.
using float8_e4m3 = Float<Descriptor{.name = "float8_e4m3", .exponent_bits = 4,
                                     .mantissa_bits = 3, .bias = 7, .encoding = Encoding::ieee}>;
// Graphcore's E4M3 with bias 11, fnuz: no -0, NaN = 0x80,
// max 0b0'1111'111 = 1.875 * 2^(15 - 11) = 30, smallest 2^(1 - 11 - 3) = 2^-13.
using float8_e4m3b11fnuz = Float<Descriptor{.name = "float8_e4m3b11fnuz", .exponent_bits = 4,
                                            .mantissa_bits = 3, .bias = 11,
                                            .encoding = Encoding::fnuz}>;

// UE5M3, the block-scale format of NVIDIA's next generation (PTX ISA 13.4
// preview, `.ue5m3`; CUTLASS DSL MxScaleFormat.UE5M3; LLVM APFloat): E4M3's
// layout without the sign, one more exponent bit. Unsigned, bias 15, finite:
// 0xFF alone is NaN, max 0xFE = 0b11111'110 = 1.75 * 2^(31 - 15) = 114688,
// smallest normal 2^(1 - 15) = 2^-14, smallest subnormal 2^(1 - 15 - 3) = 2^-17.
using float8_e5m3fnu = Float<Descriptor{.name = "float8_e5m3fnu", .exponent_bits = 5,
                                        .mantissa_bits = 3, .bias = 15,
                                        .encoding = Encoding::fn, .is_signed = false}>;

// Integers (Encoding::integer): N-bit two's complement (intN: -2^(N-1) ..
// 2^(N-1) - 1) or unsigned (uintN: 0 .. 2^N - 1), the names numpy's (int8,
// uint8) and ml_dtypes' (int4 .. uint1; int1 and uint1 since 0.6.0). A code
// sits in the low bits of its byte, as ml_dtypes stores int4 (intn.h: "the
// upper bits are left unspecified and ignored"); the kernels' pack puts two
// 4-bit codes in a byte, element 0 in the low nibble as ONNX and CUTLASS do.
// A new width is one alias here and its catalog line below.
template <FormatName Name, int Bits, bool Signed>
using Integer = Float<Descriptor{.name = Name, .exponent_bits = 0, .mantissa_bits = Signed ? Bits - 1 : Bits,
                                 .bias = 0, .encoding = Encoding::integer, .is_signed = Signed}>;
using int8 = Integer<"int8", 8, true>;
using uint8 = Integer<"uint8", 8, false>;
using int4 = Integer<"int4", 4, true>;
using uint4 = Integer<"uint4", 4, false>;
using int2 = Integer<"int2", 2, true>;
using uint2 = Integer<"uint2", 2, false>;
using int1 = Integer<"int1", 1, true>;
using uint1 = Integer<"uint1", 1, false>;

// The catalog, in the order every listing shows: X(type, short names, one-line
// description). The short names (space separated) are the PyTorch, ml_dtypes
// and layout spellings the tool also accepts; a layout not listed here
// ("e3m4", "e4m3:ieee") still finds its format by the descriptor. "e4m3" is
// OFP8's E4M3FN, as in PyTorch's float8_e4m3fn; IEEE-style E4M3 is "e4m3:ieee".
#define LPLAB_FLOAT_FORMAT_CATALOG(X)                                                        \
  X(float32, "fp32 float", "IEEE 754 binary32")                                                  \
  X(float16, "fp16 half", "IEEE 754 binary16")                                                   \
  X(bfloat16, "bf16", "bfloat16: binary32's exponent, 7 mantissa bits")                          \
  X(float8_e4m3fn, "e4m3 e4m3fn", "OCP OFP8 E4M3: no inf, NaN = S.1111.111")                     \
  X(float8_e5m2, "e5m2", "OCP OFP8 E5M2: IEEE-style")                                            \
  X(float8_e4m3fnuz, "e4m3fnuz", "E4M3, bias 8, no -0, NaN = 0x80 (Graphcore/AMD)")               \
  X(float8_e5m2fnuz, "e5m2fnuz", "E5M2, bias 16, no -0, NaN = 0x80 (Graphcore/AMD)")              \
  X(float8_e8m0fnu, "e8m0", "OCP MX E8M0 scale: unsigned powers of two, NaN = 0xFF")             \
  X(float6_e2m3fn, "e2m3", "OCP MX FP6 E2M3: no inf, no NaN")                                    \
  X(float6_e3m2fn, "e3m2", "OCP MX FP6 E3M2: no inf, no NaN")                                    \
  X(float4_e2m1fn, "e2m1 fp4 float4", "OCP MX FP4 E2M1: no inf, no NaN")                         \
  X(float8_e3m4, "e3m4", "ml_dtypes E3M4: IEEE-style, bias 3, max 15.5")                         \
  X(float8_e4m3, "", "ml_dtypes E4M3: IEEE-style (inf, NaNs), bias 7, max 240")                  \
  X(float8_e4m3b11fnuz, "e4m3b11fnuz", "E4M3, bias 11, no -0, NaN = 0x80 (Graphcore)")          \
  X(float8_e5m3fnu, "ue5m3 e5m3fnu", "UE5M3 scale: unsigned, bias 15, max 114688, NaN = 0xFF")
#define LPLAB_INTEGER_FORMAT_CATALOG(X)                                                      \
  X(int8, "s8 i8", "8-bit two's complement integer, -128 .. 127 (numpy int8)")                  \
  X(uint8, "u8", "8-bit unsigned integer, 0 .. 255 (numpy uint8)")                              \
  X(int4, "s4 i4", "4-bit two's complement integer, -8 .. 7 (ml_dtypes int4)")                  \
  X(uint4, "u4", "4-bit unsigned integer, 0 .. 15 (ml_dtypes uint4)")                           \
  X(int2, "s2 i2", "2-bit two's complement integer, -2 .. 1 (ml_dtypes int2)")                  \
  X(uint2, "u2", "2-bit unsigned integer, 0 .. 3 (ml_dtypes uint2)")                            \
  X(int1, "s1 i1", "1-bit two's complement integer, -1 .. 0 (ml_dtypes int1)")                  \
  X(uint1, "u1", "1-bit unsigned integer, 0 .. 1 (ml_dtypes uint1)")
// Every format: the floating-point ones, then the integers. (The CUDA
// backend compiles the floating-point list and refuses an integer operand,
// docs/cuda.md; the CPU kernels, the tool and Python take both.)
#define LPLAB_FORMAT_CATALOG(X) LPLAB_FLOAT_FORMAT_CATALOG(X) LPLAB_INTEGER_FORMAT_CATALOG(X)

// Every provided format, in catalog order, for code that iterates over them.
template <class... T>
struct FormatList {
  static constexpr std::size_t size = sizeof...(T);
};
#define LPLAB_CATALOG_TYPE(type, names, description) , type
namespace detail {
template <class Ignored, class... T>
using format_list_tail = FormatList<T...>;
}  // namespace detail
using all_formats = detail::format_list_tail<void LPLAB_FORMAT_CATALOG(LPLAB_CATALOG_TYPE)>;
// The floating-point formats, the catalog's first float_format_count.
using float_formats = detail::format_list_tail<void LPLAB_FLOAT_FORMAT_CATALOG(LPLAB_CATALOG_TYPE)>;
inline constexpr std::size_t float_format_count = float_formats::size;
#undef LPLAB_CATALOG_TYPE

// The same list as a std::tuple, and the catalog's I-th type: CUDA kernels
// take a format by its index, because nvcc's host stub cannot spell a
// class-type template argument.
namespace detail {
template <class L>
struct format_tuple;
template <class... T>
struct format_tuple<FormatList<T...>> {
  using type = std::tuple<T...>;
};
}  // namespace detail
using catalog_tuple = typename detail::format_tuple<all_formats>::type;
template <std::size_t I>
using catalog_format = std::tuple_element_t<I, catalog_tuple>;
// The index of T in the catalog (a compile error for a type not in it).
template <class T, std::size_t I = 0>
constexpr std::size_t catalog_index() {
  if constexpr (std::is_same_v<catalog_format<I>, T>) return I;
  else return catalog_index<T, I + 1>();
}

}  // namespace lplab
