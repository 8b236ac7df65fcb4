// Sums rounded exactly, portable (LPLAB_HD, no libm): a + b kept to 53 bits
// with round-to-odd, so that one later rounding into any format of at most 51
// significant bits is the correct rounding of the exact sum (Boldo &
// Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
// using rounding to odd", IEEE TC 2008). The fp16/bf16 matmul accumulators
// and the reductions that accumulate in the storage format add this way.
#pragma once

#include <cstdint>

#include "lplab/formats/config.h"
#include "lplab/formats/value.h"
#include "lplab/kernels/double_bits.h"

namespace lplab::kernels {

// x rounded to odd at double's 53 bits, given x = hi + lo exactly with
// hi = fl(x): if lo is nonzero, x lies strictly between hi and its neighbour
// toward lo, and of those two the one with an odd significand is the result.
// An even hi's neighbour is one step of its magnitude code: up where lo has
// hi's sign, down otherwise (hi is not zero here: a sum that rounds to zero
// is exact).
LPLAB_HD constexpr double round_to_odd(double hi, double lo) noexcept {
  const std::uint64_t h = double_bits::bits_of(hi);
  if (lo == 0 || !double_bits::is_finite(hi) || (h & 1) != 0) return hi;
  const bool same_sign = (lo > 0) == (hi > 0);
  return lplab::detail::bit_cast<double>(same_sign ? h + 1 : h - 1);
}

// a + b rounded to odd at 53 bits: TwoSum (Knuth) gives the exact error of
// the rounded sum for finite a, b; infinities and NaN follow IEEE.
LPLAB_HD constexpr double exact_sum_odd(double a, double b) noexcept {
  const double hi = a + b;
  if (!double_bits::is_finite(hi)) return hi;
  const double bb = hi - a;
  const double lo = (a - (hi - bb)) + (b - bb);
  return round_to_odd(hi, lo);
}

// One step of a sum kept in format Acc (the fp16/bf16 matmul accumulators,
// reductions in the storage format): acc + x rounded once, to nearest even,
// into Acc. Exact for any acc and x that are doubles: the sum rounded to
// odd at 53 bits, then into Acc's at most 51 bits.
template <class Acc>
LPLAB_HD constexpr double narrow_add(double acc, double x) noexcept {
  return static_cast<double>(convert<Acc>(exact_sum_odd(acc, x), Round::nearest_even, Overflow::ieee));
}

}  // namespace lplab::kernels
