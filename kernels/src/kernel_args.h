// The arguments of one kernel call, as the dispatcher hands them to every
// target's kernel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dispatch.h"  // every user of these arguments dispatches
#include "lplab/kernels/convert.h"
#include "lplab/kernels/elementwise.h"

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

// A decode into bfloat16 or float16 (Widen16): the bulk conversion takes it
// when the result is the source's value for every code (no rounding, so
// neither the rounding mode nor the stream position matters), no flags are
// asked for, and the overflow policy leaves every value as it is.
struct Widen16Args {
  const void* in;  // codes of the source format
  std::uint16_t* out;
  std::size_t n;
  bool to_float16;  // else bfloat16
  Overflow overflow;
  bool float_arithmetic_exact;  // as EncodeArgs'
};

// One fused elementwise call (fused.cpp): out[i] = op(a[i]) or
// op(a[i], b[i]) for n codes of one format, decoded, computed and rounded to
// nearest-even in registers.
struct FusedArgs {
  bool binary;
  Unary unary;        // when !binary
  Binary binary_op;   // when binary
  float param;        // scale's factor, axpy's alpha
  const void* a;
  const void* b;      // when binary
  void* out;
  std::size_t n;
  Overflow overflow;
  bool float_arithmetic_exact;  // as EncodeArgs'
  // Whether the calling thread uses AVX-512 FP16 (avx512_fp16_active(), read
  // where the call is planned: the workers take the caller's choice).
  bool avx512_fp16 = false;
};

namespace detail {
// Runs a fused call on this thread's target, or by AVX-512 FP16 where
// args.avx512_fp16 and it serves the call; false (nothing done) where
// neither serves the format, op or policy.
bool fused_elementwise(FormatId format, const FusedArgs& args);
// The AVX-512 FP16 kernel (cpu_extensions.cpp): fp16 codes in and out;
// false, nothing done, for an op it does not serve.
bool fused_fp16_avx512fp16(const FusedArgs& args);
}  // namespace detail

}  // namespace lplab::kernels
