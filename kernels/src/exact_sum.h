// Sums rounded exactly: a + b kept to 53 bits with round-to-odd, so that one
// later rounding into any format of at most 51 significant bits is the
// correct rounding of the exact sum (Boldo & Melquiond, "Emulation of FMA and
// correctly rounded sums: proved algorithms using rounding to odd", IEEE TC
// 2008). Used by the fp16/bf16 matmul accumulators and by the reductions that
// accumulate in the storage format.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace lplab::kernels::detail {

// x rounded to odd at double's 53 bits, given x = hi + lo exactly with
// hi = fl(x): if lo is nonzero, x lies strictly between hi and its neighbour
// toward lo, and of those two the one with an odd significand is the result.
inline double round_to_odd(double hi, double lo) {
  if (lo == 0 || !std::isfinite(hi)) return hi;
  if ((std::bit_cast<std::uint64_t>(hi) & 1) != 0) return hi;
  return std::nextafter(hi, lo > 0 ? std::numeric_limits<double>::infinity()
                                   : -std::numeric_limits<double>::infinity());
}

// a + b rounded to odd at 53 bits: TwoSum (Knuth) gives the exact error of
// the rounded sum for finite a, b; infinities and NaN follow IEEE.
inline double exact_sum_odd(double a, double b) {
  const double hi = a + b;
  if (!std::isfinite(hi)) return hi;
  const double bb = hi - a;
  const double lo = (a - (hi - bb)) + (b - bb);
  return round_to_odd(hi, lo);
}

}  // namespace lplab::kernels::detail
