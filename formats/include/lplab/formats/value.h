// Float<D>: a value of format D, stored as its code. Trivially copyable, the
// size of its code, usable in host and device code.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "lplab/formats/round.h"

namespace lplab {

namespace detail {
// The formats of the native types, for decoding and encoding them.
inline constexpr Descriptor binary32{.name = "float32", .exponent_bits = 8, .mantissa_bits = 23,
                                     .bias = 127, .encoding = Encoding::ieee};
inline constexpr Descriptor binary64{.name = "float64", .exponent_bits = 11, .mantissa_bits = 52,
                                     .bias = 1023, .encoding = Encoding::ieee};
}  // namespace detail

template <Descriptor D>
class Float;

template <class T>
struct is_float_format : std::false_type {};
template <Descriptor D>
struct is_float_format<Float<D>> : std::true_type {};

// Types the conversions accept: lplab formats and the native float and double.
template <class T>
concept Convertible = is_float_format<T>::value || std::same_as<T, float> || std::same_as<T, double>;

namespace detail {
template <class T>
struct format_of;
template <Descriptor D>
struct format_of<Float<D>> {
  static constexpr Descriptor value = D;
};
template <>
struct format_of<float> {
  static constexpr Descriptor value = binary32;
};
template <>
struct format_of<double> {
  static constexpr Descriptor value = binary64;
};

template <Convertible T>
LPLAB_HD constexpr auto code_of(T x) noexcept {
  if constexpr (std::same_as<T, float>) return bit_cast<std::uint32_t>(x);
  else if constexpr (std::same_as<T, double>) return bit_cast<std::uint64_t>(x);
  else return x.bits();
}

template <Convertible T>
LPLAB_HD constexpr T from_code(code_t<format_of<T>::value> c) noexcept {
  if constexpr (std::same_as<T, float>) return bit_cast<float>(c);
  else if constexpr (std::same_as<T, double>) return bit_cast<double>(c);
  else return T::from_bits(c);
}
}  // namespace detail

// Converts x to type To, rounded once, under the given policies. `random` is
// used by Round::stochastic only; `flags`, when given, collects the exceptions.
template <Convertible To, Convertible From>
LPLAB_HD constexpr To convert(From x, Round r = Round::nearest_even, Overflow o = Overflow::ieee,
                              Flags* flags = nullptr, std::uint32_t random = 0) noexcept {
  constexpr Descriptor TD = detail::format_of<To>::value;
  constexpr Descriptor FD = detail::format_of<From>::value;
  return detail::from_code<To>(
      detail::convert_code<TD, FD>(detail::code_of(x), r, o, random, flags));
}

template <Descriptor D>
class Float {
  using L = detail::Layout<D>;

 public:
  using storage_type = typename L::storage;
  static constexpr Descriptor descriptor = D;

  // Zero bits: +0 (E8M0, which has no zero: 2^-127).
  constexpr Float() noexcept = default;

  // Round to nearest even, overflow as IEEE, like PyTorch and ml_dtypes.
  LPLAB_HD constexpr explicit Float(float x) noexcept : Float(convert<Float>(x)) {}
  LPLAB_HD constexpr explicit Float(double x) noexcept : Float(convert<Float>(x)) {}
  template <std::integral I>
  LPLAB_HD constexpr explicit Float(I n) noexcept : Float(static_cast<double>(n)) {}
  template <Descriptor S>
    requires(!(S == D))
  LPLAB_HD constexpr explicit Float(Float<S> x) noexcept : Float(convert<Float>(x)) {}

  // The code, in the low bits; bits above the format's width are ignored.
  LPLAB_HD static constexpr Float from_bits(std::uint64_t code) noexcept {
    Float f;
    f.bits_ = static_cast<storage_type>(code & (L::sign_mask | L::mag_mask));
    return f;
  }
  LPLAB_HD constexpr storage_type bits() const noexcept { return bits_; }

  // Exact for every format of up to 32 bits narrower than float; rounds to
  // nearest even otherwise.
  LPLAB_HD constexpr explicit operator float() const noexcept { return convert<float>(*this); }
  LPLAB_HD constexpr explicit operator double() const noexcept { return convert<double>(*this); }

 private:
  storage_type bits_ = 0;
};

}  // namespace lplab
