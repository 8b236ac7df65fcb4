// Typed-test plumbing: the format lists, named after the formats themselves.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "lplab/formats.h"

namespace lplab::testing {

// The stride of the per-code value sweeps under the sanitizers. Those look
// for memory and undefined-behaviour errors, not wrong values (the release
// build checks every code): a 16-bit format's sweep there takes every
// seventh code -- odd, so every low-bit pattern still appears -- and the
// formats' edge codes (zeros, infinities, NaNs, the extremes) always.
#if defined(LPLAB_SANITIZED)
inline constexpr std::uint64_t kSanitizedStride = 7;
#else
inline constexpr std::uint64_t kSanitizedStride = 1;
#endif

// Whether a value sweep visits code c of T: every code of a format of at
// most 8 bits; of a wider one every kSanitizedStride-th and the edge codes.
template <class T>
bool sanitized_sweep_visits(std::uint64_t c) {
  if (finfo<T>::bits <= 8 || c % kSanitizedStride == 0) return true;
  const double v = static_cast<double>(T::from_bits(c)), a = v < 0 ? -v : v;
  return !(a == a) || a == 0 || a > finfo<T>::max || a == finfo<T>::max || a == finfo<T>::smallest_subnormal ||
         a == finfo<T>::smallest_normal;
}

struct FormatNames {
  template <class T>
  static std::string GetName(int) {
    return T::descriptor.name.c_str();
  }
};

// The catalog's formats (lplab::all_formats) as gtest type lists: all of
// them, those of up to 16 bits, and those stored in one byte.
namespace typed_lists {
// filter<List, Keep>::type: the members T of List with Keep<T>::value, in
// order, as ::testing::Types -- one fold, linear in the list's length.
template <class... T>
struct Pack {};
template <class... A, class... B>
Pack<A..., B...> operator+(Pack<A...>, Pack<B...>);
template <class... T>
::testing::Types<T...> as_types(Pack<T...>);
template <class List, template <class> class Keep>
struct filter;
template <class... T, template <class> class Keep>
struct filter<FormatList<T...>, Keep> {
  using type = decltype(as_types((Pack<>{} + ... + std::conditional_t<Keep<T>::value, Pack<T>, Pack<>>{})));
};
// The floating-point formats (every encoding but Encoding::integer), which
// the value, rounding and finfo tests are about; the integers have tests of
// their own (tests/formats/integer_test.cpp, tests/kernels/convert_test.cpp).
template <class T>
constexpr bool is_integer_format = T::descriptor.encoding == Encoding::integer;
template <class T>
struct any_format : std::bool_constant<!is_integer_format<T>> {};
template <class T>
struct small_format : std::bool_constant<!is_integer_format<T> && (finfo<T>::bits <= 16)> {};
template <class T>
struct byte_format : std::bool_constant<!is_integer_format<T> && sizeof(typename T::storage_type) == 1> {};
template <class T>
struct integer_format : std::bool_constant<is_integer_format<T>> {};
}  // namespace typed_lists

// The catalog's floating-point formats, those of up to 16 bits, those of one
// byte; and its integer formats.
using AllFormats = typed_lists::filter<all_formats, typed_lists::any_format>::type;
using SmallFormats = typed_lists::filter<all_formats, typed_lists::small_format>::type;
using ByteFormats = typed_lists::filter<all_formats, typed_lists::byte_format>::type;
using IntegerFormats = typed_lists::filter<all_formats, typed_lists::integer_format>::type;

template <class T>
constexpr std::uint64_t code_count() {
  return std::uint64_t{1} << finfo<T>::bits;
}

}  // namespace lplab::testing
