// The arguments of one kernel call, as the dispatcher hands them to every
// target's kernel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dispatch.h"  // every user of these arguments dispatches
#include "lplab/kernels/convert.h"

namespace lplab::kernels {

struct EncodeArgs {
  const float* in;
  void* out;  // codes of the target format
  std::size_t n;
  Round round;
  Overflow overflow;
  std::uint64_t seed;
  std::uint64_t first_index;  // index of in[0]; [first, first + n) never crosses a 2^32 boundary
  FlagCounts* stats;          // null: no flags computed
  // Whether MXCSR's DAZ and FTZ bits are clear, so that hardware conversions
  // and float arithmetic treat subnormals exactly (dispatch.cpp).
  bool float_arithmetic_exact;
};

struct DecodeArgs {
  const void* in;  // codes of the source format
  float* out;
  std::size_t n;
  // As EncodeArgs::float_arithmetic_exact: the kernels may decode by
  // multiplying.
  bool float_arithmetic_exact;
};

}  // namespace lplab::kernels
