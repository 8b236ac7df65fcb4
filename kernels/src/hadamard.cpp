// The random Hadamard transform over a matrix's rows (hadamard.h).
#include "lplab/kernels/hadamard.h"

#include <stdexcept>
#include <string>

namespace lplab::kernels {

void hadamard_rows(const float* x, std::size_t rows, std::size_t cols, float* y, std::uint16_t signs,
                   HadamardOutput out, bool inverse) {
  // 1. Checked before anything is written.
  if (cols % kHadamardSize != 0)
    throw std::invalid_argument("hadamard: rows of " + std::to_string(cols) +
                                " values; the transform takes groups of 16 (a multiple of 16)");
  if (rows != 0 && cols > static_cast<std::size_t>(-1) / rows)
    throw std::invalid_argument("hadamard: " + std::to_string(rows) + " x " + std::to_string(cols) +
                                " overflows a size");
  if (rows * cols != 0 && (x == nullptr || y == nullptr))
    throw std::invalid_argument("hadamard: a null input or output");
  // 2. Each group through a copy, so that y may be x.
  float group[kHadamardSize];
  for (std::size_t g = 0; g < rows * cols; g += kHadamardSize) {
    for (int i = 0; i < kHadamardSize; ++i) group[i] = x[g + static_cast<std::size_t>(i)];
    if (inverse) hadamard16_inverse(group, y + g, signs, out);
    else hadamard16(group, y + g, signs, out);
  }
}

}  // namespace lplab::kernels
