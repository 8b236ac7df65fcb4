// Host/device portability for the format library: one macro for function
// qualifiers and a few constexpr bit helpers that work in both worlds.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define LPLAB_HD __host__ __device__
#else
#define LPLAB_HD
#endif

namespace lplab::detail {

// std::bit_cast is not a __device__ function; the builtin behind it is usable
// by both g++ and nvcc and stays constexpr.
template <class To, class From>
LPLAB_HD constexpr To bit_cast(const From& from) noexcept {
  static_assert(sizeof(To) == sizeof(From));
  return __builtin_bit_cast(To, from);
}

// Count of leading zero bits of a nonzero unsigned integer.
template <class U>
LPLAB_HD constexpr int countl_zero(U x) noexcept {
  static_assert(std::is_unsigned_v<U>);
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) {
    if constexpr (sizeof(U) == 8) return __clzll(static_cast<unsigned long long>(x));
    else return __clz(static_cast<unsigned>(x)) - (32 - static_cast<int>(sizeof(U) * 8));
  }
  int n = 0;
  for (U bit = U(1) << (sizeof(U) * 8 - 1); bit != 0 && (x & bit) == 0; bit >>= 1) ++n;
  return n;
#else
  return std::countl_zero(x);
#endif
}

// Index of the most significant set bit of a nonzero integer.
template <class U>
LPLAB_HD constexpr int top_bit(U x) noexcept {
  return static_cast<int>(sizeof(U) * 8) - 1 - countl_zero(x);
}

// The smallest unsigned type with at least `bits` bits.
template <int bits>
using uint_least_t = std::conditional_t<
    (bits <= 8), std::uint8_t,
    std::conditional_t<(bits <= 16), std::uint16_t,
                       std::conditional_t<(bits <= 32), std::uint32_t, std::uint64_t>>>;

// 2^e as a double, exact for -1074 <= e <= 1023, usable in constant expressions.
LPLAB_HD constexpr double exp2i(int e) noexcept {
  double r = 1.0;
  for (; e > 0; --e) r *= 2.0;
  for (; e < 0; ++e) r *= 0.5;
  return r;
}

}  // namespace lplab::detail
