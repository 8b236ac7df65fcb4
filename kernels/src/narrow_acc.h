// Accumulator::fp16 / Accumulator::bf16 (narrow_acc.cpp): the vectorised
// accumulation, described by the accumulator format's parameters.
#pragma once

#include <cstddef>

namespace lplab::kernels::detail {

struct NarrowFormat {
  int precision;  // significant bits p (fp16: 11, bf16: 8)
  int emin;       // exponent of the smallest normal (fp16: -14, bf16: -126)
  int emax;       // exponent of the largest finite (fp16: 15, bf16: 127)
};

// out[m x n] (row-major) = the accumulations of a[m x k] times b[k x n], each
// addition rounded to nearest-even into the format, in order t = 0 .. k-1.
// B is prepared once and shared by `threads` workers (bands of rows; 0: every core).
void narrow_accumulate(const NarrowFormat& f, std::size_t m, std::size_t n, std::size_t k, const float* a,
                       const float* b, double* out, unsigned threads = 1);

}  // namespace lplab::kernels::detail
