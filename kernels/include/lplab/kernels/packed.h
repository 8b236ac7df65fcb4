// Packed storage for the sub-byte formats: FP4 and int4/uint4 two codes to a
// byte, FP6 four codes to three bytes, int2/uint2 four and int1/uint1 eight
// codes to a byte.
//
//   lplab::kernels::packed_bytes<T>(n)
//   lplab::kernels::pack(std::span<const T> codes, std::span<std::uint8_t> bytes)
//   lplab::kernels::unpack(std::span<const std::uint8_t> bytes, std::span<T> codes)
//   lplab::kernels::quantize_packed<T>(std::span<const float> x, std::span<std::uint8_t> bytes,
//                                      Round, Overflow)        // or ConvertOptions
//   lplab::kernels::dequantize_packed<T>(std::span<const std::uint8_t> bytes, std::span<float> x)
//
// Layout. OCP MX v1.0 defines the FP6 and FP4 element encodings (section
// 5.3.2, 5.3.3) but leaves their arrangement in memory to the implementation.
// lplab stores a sequence of codes as one little-endian bit stream: element i
// occupies bits [w*i, w*i + w) of it, w the format's width, bit k of the
// stream being bit k % 8 of byte k / 8. For FP4 that is
//
//   byte j = | code 2j+1 | code 2j |      (bits 7..4 | bits 3..0)
//
// CUDA's __nv_fp4x2_e2m1 arrangement (.x, the first element, in the low
// nibble), and for int4 the order of ONNX's INT4 ("the first element is
// stored in the 4 LSB"), CUTLASS's int4b_t arrays (SubbyteReference: element
// i at bit offset 4i) and torchao's CUTLASS int4 layout. (PyTorch's
// _convert_weight_to_int4pack takes the other order, the even element in the
// high nibble; ml_dtypes does not pack: one int4 per byte, its low bits, as
// lplab's unpacked codes.) int2 and int1 continue the stream: element 4j+t
// of int2 at bits 2t..2t+1 of byte j. For FP6 it puts four codes in the 24-bit little-endian word of
// bytes 3j, 3j+1, 3j+2:
//
//   word = b[3j] | b[3j+1] << 8 | b[3j+2] << 16
//        = | code 4j+3 | code 4j+2 | code 4j+1 | code 4j |   (bits 23..18 | 17..12 | 11..6 | 5..0)
//
// A length that is not a multiple of the group (2 codes for FP4, 4 for FP6)
// ends in a partial group stored in the fewest bytes that hold its bits,
// ceil(w * r / 8) for r codes, the unused high bits zero: n codes take exactly
// packed_bytes<T>(n) bytes and nothing before or after them is read or written.
// Unpacking ignores those padding bits.
//
// Errors: a byte span whose size is not packed_bytes<T>(number of codes)
// throws std::invalid_argument before anything is written.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "lplab/formats.h"
#include "lplab/kernels/convert.h"

namespace lplab::kernels {

// True for the formats narrower than a byte that lplab packs: 1, 2, 4 and 6
// bits wide (OCP MX FP4 E2M1, FP6 E2M3 and E3M2, int4 .. uint1, and any user
// format of those widths).
template <class T>
struct is_packed_format : std::false_type {};
template <Descriptor D>
struct is_packed_format<Float<D>>
    : std::bool_constant<lplab::detail::Layout<D>::bits == 1 || lplab::detail::Layout<D>::bits == 2 ||
                         lplab::detail::Layout<D>::bits == 4 || lplab::detail::Layout<D>::bits == 6> {};
template <class T>
inline constexpr bool is_packed_format_v = is_packed_format<T>::value;
template <class T>
concept PackedFormat = is_packed_format_v<T>;

namespace detail {

// The unit of packing: `codes` codes of `width` bits fill `bytes` whole bytes.
template <PackedFormat T>
struct PackGroup {
  static constexpr int width = finfo<T>::bits;
  static constexpr std::size_t codes = width == 6 ? 4 : 8 / width;  // 4 * 6 = 24 bits; 8 bits otherwise
  static constexpr std::size_t bytes = codes * width / 8;
  static constexpr std::uint32_t code_mask = (std::uint32_t{1} << width) - 1;
};

// Bytes that hold r < PackGroup::codes codes of a partial group: ceil(width * r / 8).
template <PackedFormat T>
constexpr std::size_t partial_group_bytes(std::size_t r) noexcept {
  return (r * PackGroup<T>::width + 7) / 8;
}

inline void check_packed_size(const char* what, std::size_t codes, std::size_t expected,
                              std::size_t given) {
  if (expected != given)
    throw std::invalid_argument(std::string("lplab::kernels::") + what + ": " +
                                std::to_string(codes) + " codes need " + std::to_string(expected) +
                                " bytes but the byte span has " + std::to_string(given));
}

// Packs r <= PackGroup::codes codes into the first partial_group_bytes(r)
// bytes at `out`.
template <PackedFormat T>
inline void pack_group(const T* codes, std::size_t r, std::uint8_t* out) noexcept {
  using G = PackGroup<T>;
  std::uint32_t word = 0;
  for (std::size_t t = 0; t < r; ++t)
    word |= (static_cast<std::uint32_t>(codes[t].bits()) & G::code_mask) << (G::width * t);
  const std::size_t nbytes = r == G::codes ? G::bytes : partial_group_bytes<T>(r);
  for (std::size_t b = 0; b < nbytes; ++b) out[b] = static_cast<std::uint8_t>(word >> (8 * b));
}

template <PackedFormat T>
inline void unpack_group(const std::uint8_t* in, std::size_t r, T* codes) noexcept {
  using G = PackGroup<T>;
  const std::size_t nbytes = r == G::codes ? G::bytes : partial_group_bytes<T>(r);
  std::uint32_t word = 0;
  for (std::size_t b = 0; b < nbytes; ++b) word |= static_cast<std::uint32_t>(in[b]) << (8 * b);
  for (std::size_t t = 0; t < r; ++t)
    codes[t] = T::from_bits((word >> (G::width * t)) & G::code_mask);
}

}  // namespace detail

// Bytes that n elements of T occupy: ceil(n / 2) for 4 bits, ceil(3n / 4) for
// FP6, ceil(n / 4) and ceil(n / 8) for 2 and 1 bits, n * sizeof(T) for every
// other type.
template <class T>
constexpr std::size_t packed_bytes(std::size_t n) noexcept {
  if constexpr (is_packed_format_v<T>) {
    using G = detail::PackGroup<T>;
    return n / G::codes * G::bytes + detail::partial_group_bytes<T>(n % G::codes);
  } else {
    return n * sizeof(T);
  }
}

// Packs codes into bytes.size() == packed_bytes<T>(codes.size()) bytes.
template <PackedFormat T>
void pack(std::span<const T> codes, std::span<std::uint8_t> bytes) {
  using G = detail::PackGroup<T>;
  const std::size_t n = codes.size();
  detail::check_packed_size("pack", n, packed_bytes<T>(n), bytes.size());
  const std::size_t full = n / G::codes;
  if constexpr (G::width == 4 && sizeof(T) == 1) {
    // Two nibbles a byte, in a loop the compiler vectorises.
    const auto* c = reinterpret_cast<const std::uint8_t*>(codes.data());
    std::uint8_t* out = bytes.data();
    for (std::size_t j = 0; j < full; ++j)
      out[j] = static_cast<std::uint8_t>((c[2 * j] & 0x0F) | ((c[2 * j + 1] & 0x0F) << 4));
  } else {
    for (std::size_t j = 0; j < full; ++j)
      detail::pack_group(codes.data() + j * G::codes, G::codes, bytes.data() + j * G::bytes);
  }
  if (const std::size_t r = n % G::codes; r != 0)
    detail::pack_group(codes.data() + full * G::codes, r, bytes.data() + full * G::bytes);
}

// Unpacks codes.size() codes from bytes.size() == packed_bytes<T>(codes.size()) bytes.
template <PackedFormat T>
void unpack(std::span<const std::uint8_t> bytes, std::span<T> codes) {
  using G = detail::PackGroup<T>;
  const std::size_t n = codes.size();
  detail::check_packed_size("unpack", n, packed_bytes<T>(n), bytes.size());
  const std::size_t full = n / G::codes;
  if constexpr (G::width == 4 && sizeof(T) == 1) {
    auto* c = reinterpret_cast<std::uint8_t*>(codes.data());
    const std::uint8_t* in = bytes.data();
    for (std::size_t j = 0; j < full; ++j) {
      c[2 * j] = in[j] & 0x0F;
      c[2 * j + 1] = static_cast<std::uint8_t>(in[j] >> 4);
    }
  } else {
    for (std::size_t j = 0; j < full; ++j)
      detail::unpack_group(bytes.data() + j * G::bytes, G::codes, codes.data() + j * G::codes);
  }
  if (const std::size_t r = n % G::codes; r != 0)
    detail::unpack_group(bytes.data() + full * G::bytes, r, codes.data() + full * G::codes);
}

namespace detail {
// Elements converted per step of quantize_packed / dequantize_packed, on the
// stack: a multiple of every group (2, 4 and 8 codes), so only the last step
// can end in a partial group.
inline constexpr std::size_t kPackChunk = 1024;
}  // namespace detail

// Converts floats to T with the bulk kernels (convert.h) and packs them:
// bit-identical to convert(x, codes, options) followed by pack(codes, bytes),
// Round::stochastic included (element i draws stochastic_bits(seed,
// options.first_index + i) however the work is cut into chunks).
template <PackedFormat T>
void quantize_packed(std::span<const float> x, std::span<std::uint8_t> bytes,
                     const ConvertOptions& options) {
  using G = detail::PackGroup<T>;
  const std::size_t n = x.size();
  detail::check_packed_size("quantize_packed", n, packed_bytes<T>(n), bytes.size());
  std::array<T, detail::kPackChunk> codes;
  ConvertOptions chunk_options = options;
  for (std::size_t i = 0; i < n; i += detail::kPackChunk) {
    const std::size_t m = std::min(detail::kPackChunk, n - i);
    chunk_options.first_index = options.first_index + i;
    kernels::convert(x.subspan(i, m), std::span<T>(codes.data(), m), chunk_options);
    pack(std::span<const T>(codes.data(), m),
         bytes.subspan(i / G::codes * G::bytes, packed_bytes<T>(m)));
  }
}

template <PackedFormat T>
void quantize_packed(std::span<const float> x, std::span<std::uint8_t> bytes,
                     Round r = Round::nearest_even, Overflow o = Overflow::ieee,
                     std::uint64_t seed = 0) {
  quantize_packed<T>(x, bytes, ConvertOptions{.round = r, .overflow = o, .seed = seed});
}

// Unpacks and widens to float; exact, since float holds every FP4 and FP6 value.
template <PackedFormat T>
void dequantize_packed(std::span<const std::uint8_t> bytes, std::span<float> x) {
  using G = detail::PackGroup<T>;
  const std::size_t n = x.size();
  detail::check_packed_size("dequantize_packed", n, packed_bytes<T>(n), bytes.size());
  std::array<T, detail::kPackChunk> codes;
  for (std::size_t i = 0; i < n; i += detail::kPackChunk) {
    const std::size_t m = std::min(detail::kPackChunk, n - i);
    unpack(bytes.subspan(i / G::codes * G::bytes, packed_bytes<T>(m)),
           std::span<T>(codes.data(), m));
    kernels::convert(std::span<const T>(codes.data(), m), x.subspan(i, m));
  }
}

}  // namespace lplab::kernels
